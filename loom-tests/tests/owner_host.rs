//! loom models of the owner's inline protocol (`wkcore::owner::host`) as a host runs it: begin
//! and done as the host's own atomic operations on the owner's state word (loads, a CAS, the
//! gauge row's add), the library's calls only on the slow path (`begin_detached` to answer a
//! refusal, `try_end_detached` for an end that would retire the owner), racing the library's
//! fence, quiesce, stop and close.
//!
//! The host's atomics are modelled with the same loom atomics the library's words are (the
//! words `state_word`, `lease_word`, `stopped_word` and `host_gauge_rows` hand out), with the
//! orderings the protocol requires of a host (`Acquire` loads, `AcqRel` CASes); a Go host's are
//! sequentially consistent, which is stronger. Waits use [`Budget::unbounded`]: a lost wake-up
//! shows up as a deadlock. A scope's "work" is a write to a loom `UnsafeCell` that whoever
//! proved the owner quiescent reads afterwards: loom reports a causality violation if a quiesce
//! (or a close) can return before an admitted scope's done.
#![cfg(wkcore_loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::clock::{Clock, ManualClock};
use wkcore::metrics::Registry;
use wkcore::owner::host::{OPS_MASK, RETIRE_MASK, RETIRE_VALUE, STAGE_ACTIVE, STAGE_MASK};
use wkcore::owner::{
    Budget, Claim, CloseError, OwnerError, OwnerHandle, OwnerKey, OwnerOptions, OwnerRegistry,
};

/// The clock's reading; the lease ends at [`LEASE`].
const START: u64 = 1_000;
const LEASE: u64 = START + 100;

struct Fixture {
    registry: Arc<OwnerRegistry>,
    clock: std::sync::Arc<ManualClock>,
    _metrics: Registry,
}

impl Fixture {
    fn new(max_operations: u32) -> Self {
        let metrics = Registry::new();
        let clock = std::sync::Arc::new(ManualClock::new(START));
        let options = OwnerOptions {
            node_id: 1,
            boot_id: "boot".into(),
            capacity: 4,
            max_operations,
            pending_timeout: std::time::Duration::from_secs(5),
            max_lease: std::time::Duration::from_secs(60),
            close_retry: std::time::Duration::from_millis(250),
            clock: clock.clone(),
        };
        let registry = OwnerRegistry::with_metrics(options, &metrics).unwrap();
        Self {
            registry: Arc::new(registry),
            clock,
            _metrics: metrics,
        }
    }

    /// An active owner whose close succeeds.
    fn active(&self) -> OwnerHandle {
        let claim = Claim {
            key: OwnerKey::new("ns", "client"),
            uid: "uid".into(),
            session_generation: 1,
            owner_generation: 1,
        };
        let close = |_: &Budget| -> Result<(), CloseError> { Ok(()) };
        let h = self.registry.reserve(&claim, close).unwrap();
        h.activate(1, LEASE).unwrap();
        h
    }
}

/// The host's inline begin (`host.rs`, "Begin (inline)"): `false` is "take the slow path".
fn host_begin(r: &OwnerRegistry, h: &OwnerHandle, clock: &ManualClock) -> bool {
    if h.stopped_word().load(Ordering::Acquire) != 0 {
        return false;
    }
    let s = h.state_word();
    let mut w = s.load(Ordering::Acquire);
    loop {
        if w & STAGE_MASK != STAGE_ACTIVE {
            return false;
        }
        if clock.now_nanos() >= h.lease_word().load(Ordering::Acquire) {
            return false;
        }
        if w & OPS_MASK >= h.max_operations() {
            return false;
        }
        match s.compare_exchange(w, w + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(actual) => w = actual,
        }
    }
    r.host_gauge_rows()[0].begun.fetch_add(1, Ordering::Relaxed);
    true
}

/// The host's begin with its slow path: the library answers every refusal.
fn begin(r: &OwnerRegistry, h: &OwnerHandle, clock: &ManualClock) -> Result<(), OwnerError> {
    if host_begin(r, h, clock) {
        return Ok(());
    }
    h.begin_detached()
}

/// The host's done (`host.rs`, "Done (inline)"), with its slow path.
fn done(r: &OwnerRegistry, h: &OwnerHandle) {
    let s = h.state_word();
    let mut w = s.load(Ordering::Acquire);
    loop {
        if w & OPS_MASK == 0 || (w - 1) & RETIRE_MASK == RETIRE_VALUE {
            assert!(h.try_end_detached(), "an admitted scope had no count");
            return;
        }
        match s.compare_exchange(w, w - 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(actual) => w = actual,
        }
    }
    r.host_gauge_rows()[0].ended.fetch_add(1, Ordering::Relaxed);
}

/// A scope's work, read by whoever proved the owner quiescent.
struct Work(UnsafeCell<u32>);

// SAFETY: the protocol (a quiesce returns after every admitted scope's done) orders the
// accesses; loom checks it and reports any unordered pair.
unsafe impl Sync for Work {}

impl Work {
    fn new() -> Arc<Self> {
        Arc::new(Self(UnsafeCell::new(0)))
    }
    fn write(&self, v: u32) {
        // SAFETY: see `impl Sync`.
        self.0.with_mut(|p| unsafe { *p = v });
    }
    fn read(&self) -> u32 {
        // SAFETY: see `impl Sync`.
        self.0.with(|p| unsafe { *p })
    }
}

/// The host's begin races the library's fence-then-quiesce. T1 begins (inline, the library
/// answering a refusal) and, if admitted, works and is done (inline, or the library's end if it
/// retires the owner); T2 fences, then quiesces.
///
/// Proves: no begin that starts after the fence is admitted (T2 publishes "fenced" after
/// `fence` returns, T1 reads it first); an admitted scope is waited for — quiesce returns `Ok`
/// only after T1's done and sees its work; no wake-up is lost (the model never deadlocks);
/// the owner retires once and every count returns to zero, the host's gauge rows included.
#[test]
fn host_begin_vs_fence_then_quiesce() {
    loom::model(|| {
        let f = Fixture::new(1);
        let h = f.active();
        let work = Work::new();
        let fenced = Arc::new(AtomicBool::new(false));
        let t1 = {
            let (r, h, clock, work, fenced) = (
                f.registry.clone(),
                h.clone(),
                f.clock.clone(),
                work.clone(),
                fenced.clone(),
            );
            thread::spawn(move || {
                let after_fence = fenced.load(Ordering::Acquire);
                match begin(&r, &h, &clock) {
                    Ok(()) => {
                        assert!(!after_fence, "a begin after the fence was admitted");
                        work.write(1);
                        done(&r, &h);
                        true
                    }
                    Err(e) => {
                        assert_eq!(e, OwnerError::Fenced);
                        false
                    }
                }
            })
        };
        let t2 = {
            let (h, work, fenced) = (h.clone(), work.clone(), fenced.clone());
            thread::spawn(move || {
                h.fence();
                fenced.store(true, Ordering::Release);
                let quiesced = h.quiesce(&Budget::unbounded());
                let seen = if quiesced.is_ok() { work.read() } else { 0 };
                (quiesced, seen)
            })
        };
        let admitted = t1.join().unwrap();
        let (quiesced, seen) = t2.join().unwrap();
        assert_eq!(quiesced, Ok(()));
        assert_eq!(
            seen,
            u32::from(admitted),
            "quiesce missed an admitted scope"
        );
        let s = f.registry.snapshot();
        assert_eq!((s.held, s.closing, s.operations), (0, 0, 0), "{s:?}");
        assert!(h.is_complete());
        assert!(!host_begin(&f.registry, &h, &f.clock));
    });
}

/// The host's done races the library's quiesce: one scope admitted inline; T1 works and is done
/// (inline unless its end retires the owner), T2 quiesces.
///
/// Proves: whichever comes last retires the owner, exactly once — an inline end never sets
/// `COMPLETE` (it hands the retiring end to the library), so the quiesce is always woken (no
/// deadlock in any interleaving) and returns after the work; nothing is left counted.
#[test]
fn host_done_vs_quiesce() {
    loom::model(|| {
        let f = Fixture::new(2);
        let h = f.active();
        assert!(host_begin(&f.registry, &h, &f.clock));
        let work = Work::new();
        let t1 = {
            let (r, h, work) = (f.registry.clone(), h.clone(), work.clone());
            thread::spawn(move || {
                work.write(1);
                done(&r, &h);
            })
        };
        let t2 = {
            let (h, work) = (h.clone(), work.clone());
            thread::spawn(move || {
                let quiesced = h.quiesce(&Budget::unbounded());
                let seen = if quiesced.is_ok() { work.read() } else { 0 };
                (quiesced, seen)
            })
        };
        t1.join().unwrap();
        let (quiesced, seen) = t2.join().unwrap();
        assert_eq!(quiesced, Ok(()));
        assert_eq!(seen, 1);
        let s = f.registry.snapshot();
        assert_eq!((s.held, s.closing, s.operations), (0, 0, 0), "{s:?}");
        assert!(h.is_complete());
    });
}

/// Two scopes, one ended by the host inline and one by the library's call, race a quiesce
/// (three threads: the two ends and the quiescer).
///
/// Proves: the two paths' ends compose on one word — exactly one of them is the retiring end
/// (if it is the host's, it goes to the library), the quiesce returns after both works, and the
/// gauge (the host's rows and the library's) ends at zero.
#[test]
fn host_and_library_ends_vs_quiesce() {
    let mut builder = loom::model::Builder::new();
    // Three threads on one word and the event lock: bounded for the run time.
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let f = Fixture::new(2);
        let h = f.active();
        assert!(host_begin(&f.registry, &h, &f.clock));
        h.begin_detached().unwrap();
        let (w1, w2) = (Work::new(), Work::new());
        let t1 = {
            let (r, h, w1) = (f.registry.clone(), h.clone(), w1.clone());
            thread::spawn(move || {
                w1.write(1);
                done(&r, &h);
            })
        };
        let t2 = {
            let (h, w2) = (h.clone(), w2.clone());
            thread::spawn(move || {
                w2.write(1);
                assert!(h.try_end_detached());
            })
        };
        let quiesced = h.quiesce(&Budget::unbounded());
        assert_eq!(quiesced, Ok(()));
        assert_eq!((w1.read(), w2.read()), (1, 1));
        t1.join().unwrap();
        t2.join().unwrap();
        let s = f.registry.snapshot();
        assert_eq!((s.held, s.operations), (0, 0), "{s:?}");
    });
}

/// The host's begin races stop-then-close: T1 begins (the library answering a refusal) and, if
/// admitted, works and is done; T2 stops admission, then closes the registry.
///
/// Proves: a begin that starts after the stop is refused `Stopped` (never admitted), and close
/// returns `Ok` only after an admitted scope's done and work.
#[test]
fn host_begin_vs_stop_then_close() {
    loom::model(|| {
        let f = Fixture::new(1);
        let h = f.active();
        let work = Work::new();
        let stopped = Arc::new(AtomicBool::new(false));
        let t1 = {
            let (r, h, clock, work, stopped) = (
                f.registry.clone(),
                h.clone(),
                f.clock.clone(),
                work.clone(),
                stopped.clone(),
            );
            thread::spawn(move || {
                let after_stop = stopped.load(Ordering::Acquire);
                match begin(&r, &h, &clock) {
                    Ok(()) => {
                        assert!(!after_stop, "a begin after the stop was admitted");
                        work.write(1);
                        done(&r, &h);
                        true
                    }
                    Err(e) => {
                        assert!(
                            e == OwnerError::Stopped || (!after_stop && e == OwnerError::Fenced),
                            "{e:?}"
                        );
                        false
                    }
                }
            })
        };
        let t2 = {
            let (r, work, stopped) = (f.registry.clone(), work.clone(), stopped.clone());
            thread::spawn(move || {
                r.stop_admission();
                stopped.store(true, Ordering::Release);
                let closed = r.close(&Budget::unbounded());
                let seen = if closed.is_ok() { work.read() } else { 0 };
                (closed, seen)
            })
        };
        let admitted = t1.join().unwrap();
        let (closed, seen) = t2.join().unwrap();
        assert_eq!(closed, Ok(()));
        assert_eq!(seen, u32::from(admitted));
        let s = f.registry.snapshot();
        assert_eq!((s.held, s.operations), (0, 0), "{s:?}");
    });
}
