//! loom models of `wkcore::owner`: the lock-free begin/done on the owner state word against the
//! cold transitions (fence, renew and lease expiry, mark-uncertain, stop), quiesce's coalesced
//! close attempts, the `COMPLETE` bit that makes retirement happen exactly once, and the
//! `WAITING` bit that tells a done to wake an operation's cancellation waiters.
//!
//! Under `--cfg wkcore_loom` the owner word, the lease word, the stage counts, the operation
//! gauge, the registry and event locks, the condition variable, the map (a loom `Mutex` around
//! a `HashMap`) and the [`ManualClock`] are loom's, so these models check the shipped code.
//! Waits use [`Budget::unbounded`] (loom has no clock): a lost wake-up shows up as a deadlock.
//! Each registry counts in its own metrics [`Registry`], kept alive for the whole model.
//!
//! A scope's "work" is a write to a loom `UnsafeCell` inside the scope that the quiescer reads
//! after quiesce returns `Ok`: loom reports a causality violation if a quiesce can return before
//! an admitted scope's done (or without synchronizing with it).
#![cfg(wkcore_loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::owner::{
    Budget, Cancellation, Claim, CloseError, CloseTransport, OwnerError, OwnerHandle, OwnerKey,
    OwnerOptions, OwnerRegistry, OwnerSnapshot, Stage,
};

/// The registry clock's reading when the owner is reserved and activated.
const START: u64 = 1_000;
/// The activation's lease end.
const LEASE: u64 = START + 100;
/// A renewal's lease end (well after every clock reading of the models).
const RENEWED: u64 = LEASE + 100;

/// A registry on a manual clock reading [`START`], with its own metrics registry.
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

    /// Reserves an owner with `close` and activates it (revision 1, lease until [`LEASE`]).
    fn active(&self, close: impl CloseTransport) -> OwnerHandle {
        let claim = Claim {
            key: OwnerKey::new("ns", "client"),
            uid: "uid".into(),
            session_generation: 1,
            owner_generation: 1,
        };
        let h = self.registry.reserve(&claim, close).unwrap();
        h.activate(1, LEASE).unwrap();
        h
    }

    fn snapshot(&self) -> OwnerSnapshot {
        self.registry.snapshot()
    }

    /// Asserts the owner retired: nothing held, counted or scheduled, and it is complete.
    fn assert_retired(&self, h: &OwnerHandle) {
        let s = self.snapshot();
        assert_eq!(
            (
                s.held,
                s.pending,
                s.active,
                s.closing,
                s.operations,
                s.deadlines
            ),
            (0, 0, 0, 0, 0, 0),
            "{s:?}"
        );
        assert!(h.is_complete());
        assert_eq!(
            self.registry.resolve(h.owner()).map(|o| o.is_some()),
            Ok(false),
            "a retired owner is still in the map"
        );
    }
}

/// A close callback that counts its calls and answers `result`.
fn counting_close(result: Result<(), CloseError>) -> (Arc<AtomicUsize>, impl CloseTransport) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let close = move |_: &Budget| {
        counter.fetch_add(1, Ordering::Relaxed);
        result
    };
    (calls, close)
}

/// A scope's work: written inside the scope, read by whoever proved the owner quiescent.
struct Work(UnsafeCell<u32>);

// SAFETY: the models' protocol (quiesce happens after every admitted scope's done) is what
// orders the accesses; loom checks it and reports any unordered pair.
unsafe impl Sync for Work {}

impl Work {
    fn new() -> Arc<Self> {
        Arc::new(Self(UnsafeCell::new(0)))
    }

    fn write(&self, v: u32) {
        // SAFETY: see `impl Sync`; loom flags a concurrent access.
        self.0.with_mut(|p| unsafe { *p = v });
    }

    fn read(&self) -> u32 {
        // SAFETY: as in `write`.
        self.0.with(|p| unsafe { *p })
    }
}

/// Begin races fence-then-quiesce on an active owner. T1 begins and, if admitted, works and
/// is done; T2 fences, then quiesces (the close succeeds).
///
/// Proves: a begin that starts after the fence is seen (T2 publishes "fenced" after `fence`
/// returns; T1 reads it before begin) is refused `Fenced`; a begin that returns `Ok` is waited
/// for — quiesce returns only after T1's done and sees its work (the `Work` cell: no race, and
/// the quiescer reads 1 exactly when T1 was admitted); retirement happens once: the close ran
/// once, nothing is held or counted, the owner is complete and gone from the map, and a later
/// begin is `Fenced`.
#[test]
fn owner_begin_vs_fence_then_quiesce() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let work = Work::new();
        let fenced = Arc::new(AtomicBool::new(false));
        let t1 = {
            let (h, work, fenced) = (h.clone(), work.clone(), fenced.clone());
            thread::spawn(move || {
                let after_fence = fenced.load(Ordering::Acquire);
                match h.begin() {
                    Ok(op) => {
                        assert!(!after_fence, "a begin after the fence was admitted");
                        work.write(1);
                        op.done();
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
                assert_eq!(h.stage(), Stage::Closing);
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
        assert_eq!(closes.load(Ordering::Relaxed), 1);
        f.assert_retired(&h);
        assert!(matches!(h.begin(), Err(OwnerError::Fenced)));
    });
}

/// Done races quiesce: an active owner with one admitted scope; T1 works and is done, T2
/// quiesces (the close succeeds).
///
/// Proves: retirement happens exactly once, by whichever of the two comes last (the done that
/// drops the last scope or the quiesce that records the close): quiesce returns `Ok` after the
/// scope's work, the close ran once, and afterwards nothing is held, closing or scheduled (a
/// second retirement would wrap the gauges).
#[test]
fn owner_done_vs_quiesce() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let op = f.registry.begin(h.owner()).unwrap();
        let work = Work::new();
        let t1 = {
            let work = work.clone();
            thread::spawn(move || {
                work.write(1);
                op.done();
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
        assert_eq!(closes.load(Ordering::Relaxed), 1);
        f.assert_retired(&h);
    });
}

/// Begin races lease expiry and a renewal. The owner's lease ends at `L` ([`LEASE`]); the clock
/// reads `L − 1`; main advances it to `L + 1` while T1 begins (and is done at once) and T2 renews
/// (revision 2, until [`RENEWED`]). Renew publishes the lease, then bumps the lease sequence
/// in the state word; a begin that finds the lease expired fences under the registry lock only
/// if the sequence it saw is still current; a renewal at or past the deadline fences.
///
/// Invariant checked: a renewal that returns `Ok` is never undone — then nobody fenced, the
/// owner ends active, T1's begin was admitted (before the renewal on the old lease, or after it
/// on the new one) and a fresh begin at `L + 1` is admitted on the renewed lease. Conversely a
/// renewal that returns `Fenced` leaves the owner closing (fenced by the expired begin or by
/// the renewal itself), and a begin that starts after T2 saw that (T2 publishes it, T1 reads it
/// before begin) is refused. A refused begin means the owner is closing; the owner is held
/// and scheduled once either way, and no scope is left counted.
#[test]
fn owner_begin_vs_expiry_vs_renew() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        f.clock.set(LEASE - 1);
        let renew_fenced = Arc::new(AtomicBool::new(false));
        let t1 = {
            let (h, renew_fenced) = (h.clone(), renew_fenced.clone());
            thread::spawn(move || {
                let after_fence = renew_fenced.load(Ordering::Acquire);
                let begun = h.begin().map(|op| op.done());
                if after_fence {
                    assert_eq!(begun, Err(OwnerError::Fenced), "admitted after the fence");
                }
                begun
            })
        };
        let t2 = {
            let (h, renew_fenced) = (h.clone(), renew_fenced.clone());
            thread::spawn(move || {
                let renewed = h.renew(2, RENEWED);
                if renewed.is_err() {
                    renew_fenced.store(true, Ordering::Release);
                }
                renewed
            })
        };
        f.clock.set(LEASE + 1);
        let begun = t1.join().unwrap();
        let renewed = t2.join().unwrap();
        assert!(
            matches!(begun, Ok(()) | Err(OwnerError::Fenced)),
            "{begun:?}"
        );
        let s = f.snapshot();
        match renewed {
            Ok(()) => {
                assert_eq!(begun, Ok(()), "a renewal won, yet the begin fenced");
                assert_eq!(h.stage(), Stage::Active, "a renewed lease was undone");
                assert_eq!((s.active, s.closing), (1, 0), "{s:?}");
                let again = h.begin().map(|op| op.done());
                assert_eq!(again, Ok(()), "the renewed lease is not what begin reads");
            }
            Err(e) => {
                assert_eq!(e, OwnerError::Fenced);
                assert_eq!(h.stage(), Stage::Closing);
                assert_eq!((s.active, s.closing), (0, 1), "{s:?}");
            }
        }
        if begun.is_err() {
            assert_eq!(h.stage(), Stage::Closing);
        }
        assert_eq!((s.held, s.deadlines, s.operations), (1, 1, 0), "{s:?}");
    });
}

/// Two quiescers of one active owner, the close succeeding: the attempts coalesce — the close
/// callback runs exactly once, both callers return `Ok`, and the owner retires.
#[test]
fn owner_two_quiescers_one_close() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let t1 = {
            let h = h.clone();
            thread::spawn(move || h.quiesce(&Budget::unbounded()))
        };
        let mine = h.quiesce(&Budget::unbounded());
        let theirs = t1.join().unwrap();
        assert_eq!((mine, theirs), (Ok(()), Ok(())));
        assert_eq!(closes.load(Ordering::Relaxed), 1);
        f.assert_retired(&h);
    });
}

/// Two quiescers of one active owner, the close failing: both return `Close` (a caller that
/// joined an attempt in flight gets its error; one that came after it runs its own), the
/// callback ran once per attempt (1 or 2 times), and the owner stays closing, held, scheduled
/// and incomplete.
#[test]
fn owner_two_quiescers_failing_close() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Err(CloseError::Failed));
        let h = f.active(close);
        let t1 = {
            let h = h.clone();
            thread::spawn(move || h.quiesce(&Budget::unbounded()))
        };
        let mine = h.quiesce(&Budget::unbounded());
        let theirs = t1.join().unwrap();
        assert_eq!(
            (mine, theirs),
            (Err(OwnerError::Close), Err(OwnerError::Close))
        );
        let calls = closes.load(Ordering::Relaxed);
        assert!((1..=2).contains(&calls), "{calls} close calls");
        assert_eq!(h.stage(), Stage::Closing);
        assert!(!h.is_complete());
        let s = f.snapshot();
        assert_eq!((s.held, s.closing, s.deadlines), (1, 1, 1), "{s:?}");
    });
}

/// Mark-uncertain races done on the same operation while main quiesces the owner. A Rust
/// `Operation` is not `Sync`, so the race is the C ABI's: a detached scope whose done flag is the
/// host's atomic word (as `wk_owner_op_done` CASes it), marked from one thread and ended from
/// another.
///
/// Proves: either the mark returned `Fenced` (the operation was done first, or the owner had
/// retired) and the owner is not uncertain, quiesce returned `Ok` and it retired; or the mark
/// returned `Ok`, the owner is uncertain, quiesce returned `Unknown` and the owner is still held
/// (an uncertain owner is never retired). No scope is left counted.
#[test]
fn owner_mark_uncertain_vs_done() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        h.begin_detached().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let t1 = {
            let (h, done) = (h.clone(), done.clone());
            thread::spawn(move || h.mark_uncertain_detached(done.load(Ordering::Acquire)))
        };
        let t2 = {
            let (h, done) = (h.clone(), done.clone());
            thread::spawn(move || {
                if !done.swap(true, Ordering::AcqRel) {
                    h.end_detached();
                }
            })
        };
        let quiesced = h.quiesce(&Budget::unbounded());
        let marked = t1.join().unwrap();
        t2.join().unwrap();
        match marked {
            Err(e) => {
                assert_eq!(e, OwnerError::Fenced);
                assert!(!h.is_uncertain());
                assert_eq!(quiesced, Ok(()));
                f.assert_retired(&h);
            }
            Ok(()) => {
                assert!(h.is_uncertain());
                assert_eq!(quiesced, Err(OwnerError::Unknown));
                let s = f.snapshot();
                assert_eq!(
                    (s.held, s.closing, s.uncertain, s.deadlines, s.operations),
                    (1, 1, 1, 1, 0),
                    "{s:?}"
                );
                assert!(f.registry.resolve(h.owner()).unwrap().is_some());
            }
        }
    });
}

/// Two operations: T1 marks A uncertain and then is done with it, T2 is done with B, main
/// quiesces. A is not done when it is marked, so the mark is `Ok`; the owner reaches its final
/// barrier (complete) but never retires: quiesce returns `Unknown`, the owner stays held,
/// closing and scheduled, and no scope is left counted.
#[test]
fn owner_mark_uncertain_vs_other_done_and_quiesce() {
    loom::model(|| {
        let f = Fixture::new(2);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let a = f.registry.begin(h.owner()).unwrap();
        let b = f.registry.begin(h.owner()).unwrap();
        let t1 = thread::spawn(move || {
            let marked = a.mark_uncertain();
            a.done();
            marked
        });
        let t2 = thread::spawn(move || b.done());
        let quiesced = h.quiesce(&Budget::unbounded());
        assert_eq!(t1.join().unwrap(), Ok(()));
        t2.join().unwrap();
        assert_eq!(quiesced, Err(OwnerError::Unknown));
        assert!(h.is_uncertain() && h.is_complete());
        assert_eq!(closes.load(Ordering::Relaxed), 1);
        let s = f.snapshot();
        assert_eq!(
            (s.held, s.closing, s.uncertain, s.deadlines, s.operations),
            (1, 1, 1, 1, 0),
            "{s:?}"
        );
        assert!(f.registry.resolve(h.owner()).unwrap().is_some());
    });
}

/// Two begins race for the owner's last place: `max_operations` places with `max_operations −
/// 1` already admitted. Exactly one is admitted, the other is refused `Limit` at once, and
/// after the scopes are done none is counted.
fn begin_at_the_limit(max_operations: u32) {
    loom::model(move || {
        let f = Fixture::new(max_operations);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let held: Vec<_> = (1..max_operations)
            .map(|_| f.registry.begin(h.owner()).unwrap())
            .collect();
        let t1 = {
            let (registry, owner) = (f.registry.clone(), h.owner().clone());
            thread::spawn(move || registry.begin(&owner))
        };
        let mine = f.registry.begin(h.owner());
        let theirs = t1.join().unwrap();
        let outcomes = [mine.is_ok(), theirs.is_ok()];
        assert_eq!(outcomes.iter().filter(|&&ok| ok).count(), 1, "{outcomes:?}");
        for r in [&mine, &theirs] {
            if let Err(e) = r {
                assert_eq!(*e, OwnerError::Limit);
            }
        }
        assert_eq!(f.snapshot().operations, u64::from(max_operations));
        drop((mine, theirs, held));
        assert_eq!(f.snapshot().operations, 0);
    });
}

/// [`begin_at_the_limit`] with `max_operations = 1`.
#[test]
fn owner_two_begins_at_max_one() {
    begin_at_the_limit(1);
}

/// [`begin_at_the_limit`] with `max_operations = 2` and one scope already admitted.
#[test]
fn owner_two_begins_at_max_two_with_one_admitted() {
    begin_at_the_limit(2);
}

/// Begin races the registry's close (stop admission, then quiesce every owner). T1 begins and,
/// if admitted, works and is done; T2 closes the registry, then begins again.
///
/// Proves: a begin that returns `Ok` is counted — close waits for its done and sees its work —
/// and a refused one is `Stopped` (or `Fenced`, if it read the flag before the stop but the
/// close fenced first); after close returns, begins are `Stopped`; nothing is held and the
/// boot's retirement proof can be minted.
#[test]
fn owner_stop_admission_vs_begin() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let work = Work::new();
        let t1 = {
            let (h, work) = (h.clone(), work.clone());
            thread::spawn(move || match h.begin() {
                Ok(op) => {
                    work.write(1);
                    op.done();
                    true
                }
                Err(e) => {
                    assert!(
                        matches!(e, OwnerError::Stopped | OwnerError::Fenced),
                        "{e:?}"
                    );
                    false
                }
            })
        };
        let t2 = {
            let (registry, h, work) = (f.registry.clone(), h.clone(), work.clone());
            thread::spawn(move || {
                let closed = registry.close(&Budget::unbounded());
                let seen = if closed.is_ok() { work.read() } else { 0 };
                assert!(matches!(h.begin(), Err(OwnerError::Stopped)));
                (closed, seen)
            })
        };
        let admitted = t1.join().unwrap();
        let (closed, seen) = t2.join().unwrap();
        assert_eq!(closed, Ok(()));
        assert_eq!(seen, u32::from(admitted), "close missed an admitted scope");
        assert_eq!(closes.load(Ordering::Relaxed), 1);
        let s = f.snapshot();
        assert!(s.stopped);
        f.assert_retired(&h);
        assert_eq!(f.registry.retirement().unwrap().last_connection_id, 1);
    });
}

/// An operation's cancellation wait races a fence: T1 waits (unbounded) on its operation's
/// cancellation; main fences the owner. T1 always wakes (a lost notification would be a loom
/// deadlock) and is told `Fenced`.
#[test]
fn owner_wait_cancelled_vs_fence() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let op = f.registry.begin(h.owner()).unwrap();
        let t1 = thread::spawn(move || {
            let woke = op.wait_cancelled(&Budget::unbounded());
            op.done();
            woke
        });
        h.fence();
        assert_eq!(t1.join().unwrap(), Ok(Cancellation::Fenced));
        let s = f.snapshot();
        assert_eq!((s.closing, s.operations), (1, 0), "{s:?}");
    });
}

/// An owner's cancellation wait races the registry's stop: T1 waits on the owner, main stops
/// admission. T1 always wakes (a lost notification would deadlock the model), told `Stopped`.
/// (An operation is not `Sync`: its own done is never concurrent with a wait on it, so only
/// fences and stops wake waiters.)
#[test]
fn owner_wait_cancelled_vs_stop() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let t1 = {
            let h = h.clone();
            thread::spawn(move || h.wait_cancelled(&Budget::unbounded()))
        };
        f.registry.stop_admission();
        assert_eq!(t1.join().unwrap(), Ok(Cancellation::Stopped));
    });
}

/// Two waiters on one owner race a fence: both always wake, told `Fenced`.
#[test]
fn owner_two_waiters_one_fence() {
    loom::model(|| {
        let f = Fixture::new(2);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let waiter = || {
            let h = h.clone();
            thread::spawn(move || h.wait_cancelled(&Budget::unbounded()))
        };
        let (t1, t2) = (waiter(), waiter());
        h.fence();
        assert_eq!(t1.join().unwrap(), Ok(Cancellation::Fenced));
        assert_eq!(t2.join().unwrap(), Ok(Cancellation::Fenced));
    });
}

/// An operation's check races lease expiry and a renewal, as [`owner_begin_vs_expiry_vs_renew`]
/// does for begin: one scope admitted while the lease (until `L`) holds, the clock at `L − 1`;
/// main advances it to `L + 1` while T1 checks the operation and T2 renews (revision 2).
///
/// Invariant checked: a renewal that returns `Ok` is never undone by the check's expiry path —
/// the check is then `Ok` and the owner ends active; a failed check (`Fenced` by expiry, or
/// `Canceled` because the owner was already closing) means the owner is closing and the renewal
/// was `Fenced`. The scope stays counted until done.
#[test]
fn owner_check_vs_expiry_vs_renew() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (_closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        let op = f.registry.begin(h.owner()).unwrap();
        f.clock.set(LEASE - 1);
        let t1 = thread::spawn(move || {
            let checked = op.check();
            drop(op);
            checked
        });
        let t2 = {
            let h = h.clone();
            thread::spawn(move || h.renew(2, RENEWED))
        };
        f.clock.set(LEASE + 1);
        let checked = t1.join().unwrap();
        let renewed = t2.join().unwrap();
        assert!(
            matches!(
                checked,
                Ok(()) | Err(OwnerError::Fenced) | Err(OwnerError::Canceled)
            ),
            "{checked:?}"
        );
        match renewed {
            Ok(()) => {
                assert_eq!(checked, Ok(()), "a renewal won, yet the check fenced");
                assert_eq!(h.stage(), Stage::Active, "a renewed lease was undone");
            }
            Err(e) => {
                assert_eq!(e, OwnerError::Fenced);
                assert_eq!(h.stage(), Stage::Closing);
            }
        }
        if checked.is_err() {
            assert_eq!(renewed, Err(OwnerError::Fenced));
        }
        let s = f.snapshot();
        assert_eq!((s.held, s.deadlines, s.operations), (1, 1, 0), "{s:?}");
    });
}

/// A sweep races a renewal at the lease's end: the lease ends at `L`, the clock reads `L − 1`;
/// main advances it to `L + 1` while T1 sweeps (one owner at most; the close succeeds) and T2
/// renews (revision 2). Both decide under the registry lock, on the deadline index.
///
/// Proves: a renewal that returns `Ok` moved the deadline before the sweep looked, so the sweep
/// visited nothing and the owner ends active, held and scheduled at the renewed lease; a sweep
/// that visited the owner fenced it first, so the renewal was `Fenced`, and its quiesce retired
/// the owner (close ran once, nothing held). Otherwise (nothing visited, renewal refused) the
/// owner is closing and held.
#[test]
fn owner_sweep_vs_renew_at_the_deadline() {
    loom::model(|| {
        let f = Fixture::new(1);
        let (closes, close) = counting_close(Ok(()));
        let h = f.active(close);
        f.clock.set(LEASE - 1);
        let t1 = {
            let registry = f.registry.clone();
            thread::spawn(move || registry.sweep(1, &Budget::unbounded()))
        };
        let t2 = {
            let h = h.clone();
            thread::spawn(move || h.renew(2, RENEWED))
        };
        f.clock.set(LEASE + 1);
        let visited = t1.join().unwrap().unwrap();
        let renewed = t2.join().unwrap();
        let s = f.snapshot();
        match (renewed, visited) {
            (Ok(()), 0) => {
                assert_eq!(h.stage(), Stage::Active);
                assert_eq!((s.held, s.active, s.deadlines), (1, 1, 1), "{s:?}");
                assert_eq!(closes.load(Ordering::Relaxed), 0);
            }
            (Err(OwnerError::Fenced), 1) => {
                assert_eq!(closes.load(Ordering::Relaxed), 1);
                f.assert_retired(&h);
            }
            (Err(OwnerError::Fenced), 0) => {
                assert_eq!(h.stage(), Stage::Closing);
                assert_eq!((s.held, s.closing, s.deadlines), (1, 1, 1), "{s:?}");
            }
            outcome => panic!("{outcome:?}"),
        }
    });
}
