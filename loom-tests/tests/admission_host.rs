//! loom models of the hosted slot's protocol as a host runs it inline (`admission/host.rs`): the
//! host's own admission (its loads and CAS on the slot's words, its value cells and release
//! stores) and its consumer, racing each other and the library's calls on the same words
//! (`demote`, `snapshot`, `counters`, `resolve_config_change`).
//!
//! [`Host`] is the Go host's transitions (go/multiraft/engine.go) written over loom atomics, with
//! the orderings the host provides at least (its loads acquire, its CAS acquire-release, its
//! publishing stores release), and its value cells as loom `UnsafeCell`s, so loom checks that
//! every plain access to a value is ordered by the words. The capacity of the host's cells is the
//! limit here (the Go host grows its cells under a lock, which the Go stress tests cover).
#![cfg(wkcore_loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::admission::{
    host_layout as layout, AdmissionResult, ConfigChangeTicket, HostWords, ProposalClass,
    SlotAdmission, SlotLimits,
};

const MASK: u64 = layout::COUNT_MASK;
const READY: u64 = 1 << 63;

/// Why the host refused an admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    NotLeader,
    Busy,
    ConfigChangePending,
}

struct Cell {
    tag: AtomicU64,
    value: UnsafeCell<u64>,
}

/// A host over a hosted slot: its transitions and its value cells (one per place).
struct Host {
    slot: SlotAdmission<u64>,
    cells: Vec<Cell>,
    limit: u64,
}

// SAFETY: the cells' values are written only by the producer that won their position and read
// only by the one consumer after the tag that publishes them (what the models check).
unsafe impl Sync for Host {}
// SAFETY: as above.
unsafe impl Send for Host {}

impl Host {
    fn new(limit: u32) -> Arc<Self> {
        let slot = SlotAdmission::builder(SlotLimits::new(limit, limit))
            .without_metrics()
            .hosted()
            .build()
            .unwrap();
        let cells = (0..limit)
            .map(|_| Cell {
                tag: AtomicU64::new(0),
                value: UnsafeCell::new(0),
            })
            .collect();
        Arc::new(Host {
            slot,
            cells,
            limit: u64::from(limit),
        })
    }

    fn words(&self) -> HostWords<'_> {
        self.slot.host_words().expect("hosted")
    }

    fn cell(&self, pos: u64) -> &Cell {
        &self.cells[(pos % self.limit) as usize]
    }

    /// One foreground item of `kind` (a proposal, or a config change), the host's general path:
    /// checks, view, refresh, CAS; then the value and its tag. Returns the position (and the
    /// ticket of a config change).
    fn admit(&self, config_change: bool, v: u64) -> Result<(u64, u64), Refusal> {
        let w = self.words();
        if config_change {
            w.admitted_other.fetch_add(1, Ordering::Relaxed);
        }
        let decided = self.decide(config_change);
        let Ok(pos) = decided else {
            if config_change {
                w.admitted_other.fetch_sub(1, Ordering::Relaxed);
            } else if let Err(r) = decided {
                let result = if r == Refusal::Busy { 1 } else { 3 };
                w.outcomes[0][result].fetch_add(1, Ordering::Relaxed);
            }
            return decided.map(|p| (p, 0));
        };
        let ticket = if config_change {
            let t = w.config_serial.fetch_add(1, Ordering::Release) + 1;
            w.committed_other.fetch_add(1, Ordering::Release);
            t
        } else {
            0
        };
        let c = self.cell(pos);
        // SAFETY: the CAS handed this thread the position; its previous value was read before
        // the release that made the room (what loom checks).
        c.value.with_mut(|p| unsafe { *p = v });
        c.tag.store(READY | pos, Ordering::Release);
        Ok((pos, ticket))
    }

    fn decide(&self, config_change: bool) -> Result<u64, Refusal> {
        let w = self.words();
        let mut cur = w.state.load(Ordering::Acquire);
        let mut view = w.released_view.load(Ordering::Acquire);
        let mut refreshed = false;
        loop {
            if cur & layout::LEADER == 0 {
                return Err(Refusal::NotLeader);
            }
            if config_change && cur & layout::CONFIG_CHANGE_PENDING != 0 {
                return Err(Refusal::ConfigChangePending);
            }
            let queued = (cur.wrapping_sub(view)) & MASK;
            if queued > self.limit {
                cur = w.state.load(Ordering::Acquire);
                view = w.released_view.load(Ordering::Acquire);
                continue;
            }
            if queued == self.limit {
                if refreshed {
                    return Err(Refusal::Busy);
                }
                let released = w.released.load(Ordering::Acquire);
                view = w
                    .released_view
                    .fetch_max(released, Ordering::AcqRel)
                    .max(released);
                refreshed = true;
                continue;
            }
            let mut next = cur & !MASK | (cur + 1) & MASK;
            if config_change {
                next |= layout::CONFIG_CHANGE_PENDING;
            }
            match w
                .state
                .compare_exchange(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(cur & MASK),
                Err(actual) => {
                    cur = actual;
                    view = w.released_view.load(Ordering::Acquire);
                    refreshed = false;
                }
            }
        }
    }

    /// The host's consumer: takes what is published from `next` on (one thread only), then
    /// releases it with the library's release stores.
    fn take(&self, next: &mut u64, other: &mut u64, out: &mut Vec<u64>) {
        let w = self.words();
        let start = *next;
        loop {
            let c = self.cell(*next);
            let tag = c.tag.load(Ordering::Acquire);
            if tag != READY | (*next & MASK) {
                break;
            }
            // SAFETY: the tag published the value (Acquire above pairs with its Release store).
            out.push(c.value.with(|p| unsafe { *p }));
            *next += 1;
        }
        if *next != start {
            w.released_other.store(*other, Ordering::Release);
            w.released.store(*next, Ordering::Release);
        }
    }

    /// The host's resolve of a config change ticket.
    fn resolve(&self, ticket: u64) -> bool {
        let w = self.words();
        if w.config_serial
            .compare_exchange(ticket, ticket + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        w.state
            .fetch_and(!layout::CONFIG_CHANGE_PENDING, Ordering::AcqRel);
        true
    }
}

fn leader(limit: u32) -> Arc<Host> {
    let host = Host::new(limit);
    host.slot.set_leader();
    host
}

const FG: ProposalClass = ProposalClass::Foreground;

/// Two host producers race for the last place: exactly one wins, and the library's snapshot and
/// counters read one queued proposal, one `ok` and one `busy`.
#[test]
fn host_admit_vs_host_admit_at_the_limit() {
    loom::model(|| {
        let host = leader(1);
        let other = host.clone();
        let t = thread::spawn(move || other.admit(false, 1));
        let mine = host.admit(false, 2);
        let theirs = t.join().unwrap();
        assert!(mine.is_ok() ^ theirs.is_ok(), "{mine:?} {theirs:?}");
        assert!(mine == Err(Refusal::Busy) || theirs == Err(Refusal::Busy));
        let s = host.slot.snapshot();
        assert_eq!((s.queued, s.queued_proposals), (1, 1));
        let c = host.slot.counters();
        assert_eq!(c.get(FG, AdmissionResult::Ok), 1);
        assert_eq!(c.get(FG, AdmissionResult::Busy), 1);
    });
}

/// The library demotes while the host admits: the admission either came first (and is queued)
/// or is refused; once the demotion returned, the host's next admission is refused.
#[test]
fn host_admit_vs_library_demote() {
    loom::model(|| {
        let host = leader(2);
        let other = host.clone();
        let t = thread::spawn(move || other.slot.demote());
        let first = host.admit(false, 1);
        t.join().unwrap();
        let second = host.admit(false, 2);
        assert_eq!(second, Err(Refusal::NotLeader));
        let s = host.slot.snapshot();
        assert_eq!(u32::from(first.is_ok()), s.queued);
        assert!(!s.leader);
        let c = host.slot.counters();
        assert_eq!(c.get(FG, AdmissionResult::Ok), u64::from(first.is_ok()));
        assert_eq!(
            c.get(FG, AdmissionResult::NotLeader),
            1 + u64::from(first.is_err())
        );
    });
}

/// A host producer admits twice through one place while the host consumer takes: the place is
/// written again only after its value was read (loom checks the cell), nothing is lost or taken
/// twice, and a library snapshot read meanwhile never exceeds the limit.
#[test]
fn host_pipeline_reuses_its_place_and_the_library_reads_it() {
    loom::model(|| {
        let host = leader(1);
        let producer = host.clone();
        let p = thread::spawn(move || {
            let a = producer.admit(false, 10).is_ok();
            let b = producer.admit(false, 11).is_ok();
            (a, b)
        });
        let reader = host.clone();
        let r = thread::spawn(move || {
            let s = reader.slot.snapshot();
            assert!(s.queued <= 1 && s.queued_proposals <= s.queued, "{s:?}");
        });
        let (mut next, mut other, mut out) = (0, 0, Vec::new());
        host.take(&mut next, &mut other, &mut out);
        let (a, b) = p.join().unwrap();
        r.join().unwrap();
        host.take(&mut next, &mut other, &mut out);
        let admitted: Vec<u64> = [(a, 10), (b, 11)]
            .iter()
            .filter(|(ok, _)| *ok)
            .map(|&(_, v)| v)
            .collect();
        assert_eq!(out, admitted, "FIFO, nothing lost or doubled");
        assert!(a, "the first admission always finds the place free");
        assert_eq!(host.slot.snapshot().queued, 0);
        let c = host.slot.counters();
        assert_eq!(c.get(FG, AdmissionResult::Ok), admitted.len() as u64);
    });
}

/// The library resolves the host's config change while the host admits the next one: the second
/// is admitted only after the first was resolved, and its ticket then resolves it (the host's
/// resolve), leaving nothing pending.
#[test]
fn host_config_change_vs_library_resolve() {
    loom::model(|| {
        let host = leader(3);
        let (_, first) = host.admit(true, 1).unwrap();
        assert_eq!(first, 1);
        let other = host.clone();
        let t = thread::spawn(move || {
            let ticket = ConfigChangeTicket::from_raw(first).unwrap();
            other.slot.resolve_config_change(ticket).is_ok()
        });
        let second = host.admit(true, 2);
        assert!(t.join().unwrap(), "the first ticket resolves once");
        match second {
            Ok((_, ticket)) => {
                assert_eq!(ticket, 3);
                assert!(host.slot.snapshot().config_change_pending);
                assert!(host.resolve(ticket));
            }
            Err(e) => assert_eq!(e, Refusal::ConfigChangePending),
        }
        assert!(!host.slot.snapshot().config_change_pending);
        assert!(!host.resolve(first), "a resolved ticket is stale");
    });
}
