//! Stress: several producers and one consumer hammer one slot while a sampler reads its snapshot
//! and counters. At the end nothing is lost or duplicated, per-producer FIFO held, counts
//! returned to zero and match what the harness saw; during the run no drain saw more than the
//! limits allow, drains' positions followed each other, config changes resolved by their
//! tickets, and no sample reported more than the harness knows can be queued or counted, nor
//! fewer queued proposals than it knows are queued.
//!
//! Every test runs against `SlotAdmission` under each decision strategy (the degraded ones force
//! the slow paths) and against `MutexSlot`, the reference.

#![allow(clippy::disallowed_types)] // the harness's own atomics; the code under test uses the shim

use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;

use wkcore::admission::{
    Admission, AdmissionCounts, AdmissionError, AdmissionResult, BatchAdmission, ConfigChangeError,
    ConfigChangeTicket, Control, ControlKind, Drained, FailFirstCas, Production, ProposalClass,
    RefreshEveryAdmission, Rejected, SlotAdmission, SlotLimits, SlotSnapshot, SlotStrategy,
    StaleStateWord, POSITION_MODULUS,
};
use wkcore_references::admission::MutexSlot;

/// Stress tests must not overlap: they size themselves for the whole machine.
static SERIAL: Mutex<()> = Mutex::new(());

const PRODUCERS: u64 = 4;
const TOTAL_LIMIT: u32 = 1000;
const BACKGROUND_LIMIT: u32 = 300;

const FG: ProposalClass = ProposalClass::Foreground;
const BG: ProposalClass = ProposalClass::Background;

fn items_per_producer() -> u64 {
    if cfg!(debug_assertions) {
        20_000
    } else {
        400_000
    }
}

/// The operations the harness needs, implemented by both slots.
trait Slot: Sync {
    /// The snapshot counts a drained item out only when its drain releases it, after the
    /// callbacks (the lock-free slot); the reference counts a batch out when it takes it, before.
    const RELEASED_AFTER_CALLBACKS: bool;
    fn admit(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        item: u64,
    ) -> Result<Admission, Rejected<u64>>;
    fn admit_batch(&self, class: ProposalClass, items: &[u64]) -> BatchAdmission;
    fn drain_with(&self, f: &mut dyn FnMut(Control<u64>)) -> Drained;
    fn resolve(&self, ticket: ConfigChangeTicket) -> Result<(), ConfigChangeError>;
    fn snapshot(&self) -> SlotSnapshot;
    fn counters(&self) -> AdmissionCounts;
}

macro_rules! impl_slot {
    ([$($generics:tt)*] $t:ty, $released_after_callbacks:expr) => {
        impl<$($generics)*> Slot for $t {
            const RELEASED_AFTER_CALLBACKS: bool = $released_after_callbacks;
            fn admit(
                &self,
                kind: ControlKind,
                class: ProposalClass,
                item: u64,
            ) -> Result<Admission, Rejected<u64>> {
                <$t>::admit(self, kind, class, item)
            }
            fn admit_batch(&self, class: ProposalClass, items: &[u64]) -> BatchAdmission {
                <$t>::admit_batch_copied(self, ControlKind::Propose, class, items)
            }
            fn drain_with(&self, f: &mut dyn FnMut(Control<u64>)) -> Drained {
                <$t>::drain_with(self, usize::MAX, f)
            }
            fn resolve(&self, ticket: ConfigChangeTicket) -> Result<(), ConfigChangeError> {
                <$t>::resolve_config_change(self, ticket)
            }
            fn snapshot(&self) -> SlotSnapshot {
                <$t>::snapshot(self)
            }
            fn counters(&self) -> AdmissionCounts {
                <$t>::counters(self)
            }
        }
    };
}
impl_slot!([S: SlotStrategy] SlotAdmission<u64, S>, true);
impl_slot!([] MutexSlot<u64>, false);

fn class_of(seq: u64) -> ProposalClass {
    // Deterministic mix: about 40 % background.
    if seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 < 3 {
        BG
    } else {
        FG
    }
}

/// The lanes the harness counts admissions in.
const LANE_FG: usize = 0;
const LANE_BG: usize = 1;
const LANE_OTHER: usize = 2;

fn lane(kind: ControlKind, class: ProposalClass) -> usize {
    match (kind, class) {
        (ControlKind::Propose, ProposalClass::Background) => LANE_BG,
        (ControlKind::Propose, _) => LANE_FG,
        _ => LANE_OTHER,
    }
}

/// What the harness knows, in counters of its own beside the slot's.
#[derive(Default)]
struct Tally {
    /// Items admitted or being admitted, per lane: raised before each call, lowered after it by
    /// what it refused. So it is never below what the slot has admitted.
    admitting: [AtomicU64; 3],
    /// Items the consumer took, raised after each drain returned: total, background proposals,
    /// proposals. So it is never above what the slot has released.
    drained: [AtomicU64; 3],
    /// Items admitted, per lane: raised after each call returned. So it is never above what the
    /// slot has admitted.
    admitted: [AtomicU64; 3],
    /// Proposals handed to the consumer's callback, raised in the callback, before the drain
    /// releases them. So it is never below what the slot has released.
    taking_proposals: AtomicU64,
    /// Items of other kinds handed to the consumer's callback, likewise.
    taking_other: AtomicU64,
}

impl Tally {
    /// Announces `n` items of `lane` about to be offered.
    fn announce(&self, lane: usize, n: u64) {
        self.admitting[lane].fetch_add(n, Ordering::Relaxed);
        // Orders the announcement before the slot's admission CAS: a sampler whose Acquire load
        // of the state word reads that CAS (or any later RMW of the word) sees the announcement.
        // (The mutex reference's lock orders it too.)
        fence(Ordering::Release);
    }

    /// Takes back the refused part of an announcement.
    fn refused(&self, lane: usize, n: u64) {
        self.admitting[lane].fetch_sub(n, Ordering::Relaxed);
    }

    /// Counts `n` items of `lane` the slot admitted (the call returned): a sampler that reads
    /// this (Acquire) before a snapshot sees a state word that counts them.
    fn admitted(&self, lane: usize, n: u64) {
        self.admitted[lane].fetch_add(n, Ordering::Release);
    }

    /// Counts a drain that returned: a sampler that reads these (Acquire) then snapshots sees
    /// released counters at least as high (the drain stored them before returning).
    fn drained(&self, total: u64, background: u64, proposals: u64) {
        self.drained[0].fetch_add(total, Ordering::Release);
        self.drained[1].fetch_add(background, Ordering::Release);
        self.drained[2].fetch_add(proposals, Ordering::Release);
    }
}

/// Reads the slot's snapshot and counters between reads of the harness's counters and checks
/// their raw values: nothing above what the harness knows can be queued or counted, counters
/// never going back. Returns the counters.
fn sample<S: Slot>(slot: &S, tally: &Tally, prev: &AdmissionCounts) -> AdmissionCounts {
    let drained = tally.drained[0].load(Ordering::Acquire);
    let drained_bg = tally.drained[1].load(Ordering::Acquire);
    let drained_proposals = tally.drained[2].load(Ordering::Acquire);
    let [admitted_fg, admitted_bg, admitted_other] =
        [LANE_FG, LANE_BG, LANE_OTHER].map(|lane| tally.admitted[lane].load(Ordering::Acquire));
    let admitted_proposals = admitted_fg + admitted_bg;
    let s = slot.snapshot();
    // Ordering: Relaxed; every callback counted in the released counters the snapshot loaded
    // (Acquire) happened before these loads.
    let taking = tally.taking_proposals.load(Ordering::Relaxed);
    // Ordering: Relaxed; as above.
    let taking_other = tally.taking_other.load(Ordering::Relaxed);
    let c = slot.counters();
    let [fg, bg, other] =
        [LANE_FG, LANE_BG, LANE_OTHER].map(|lane| tally.admitting[lane].load(Ordering::Acquire));
    let queued = u64::from(s.queued);
    let queued_bg = u64::from(s.queued_background);
    assert!(
        queued <= (fg + bg + other).saturating_sub(drained),
        "queued {queued} above admitted-or-admitting {} minus drained {drained}",
        fg + bg + other
    );
    assert!(
        queued_bg <= bg.saturating_sub(drained_bg),
        "queued_background {queued_bg} above admitted-or-admitting {bg} minus drained {drained_bg}"
    );
    assert!(
        queued <= u64::from(TOTAL_LIMIT),
        "queued {queued} above the limit"
    );
    assert!(
        queued_bg <= u64::from(BACKGROUND_LIMIT),
        "queued_background {queued_bg} above the limit"
    );
    assert!(
        queued_bg <= queued,
        "queued_background {queued_bg} above queued {queued}"
    );
    let queued_proposals = u64::from(s.queued_proposals);
    assert!(
        queued_proposals <= queued,
        "queued_proposals {queued_proposals} above queued {queued}"
    );
    // An other-kind admission in flight (in the state word, not yet counted after its CAS)
    // makes the snapshot report high, by at most what was in flight; so does a drain caught
    // between its stores, by at most the other-kind items it took.
    let other_in_flight = other.saturating_sub(admitted_other);
    let drain_in_flight = taking_other.saturating_sub(drained.saturating_sub(drained_proposals));
    assert!(
        queued_proposals
            <= (fg + bg + other_in_flight + drain_in_flight).saturating_sub(drained_proposals),
        "queued_proposals {queued_proposals} above proposals admitted-or-admitting {} plus other \
         kinds in flight {other_in_flight} (admitting) and {drain_in_flight} (draining) minus \
         drained {drained_proposals}",
        fg + bg
    );
    if S::RELEASED_AFTER_CALLBACKS {
        assert!(
            queued_proposals >= admitted_proposals.saturating_sub(taking),
            "queued_proposals {queued_proposals} below proposals admitted {admitted_proposals} \
             minus taken {taking}"
        );
    }
    let ok_fg = c.get(FG, AdmissionResult::Ok);
    let ok_bg = c.get(BG, AdmissionResult::Ok);
    assert!(
        ok_fg <= fg,
        "foreground ok {ok_fg} above admitted-or-admitting {fg}"
    );
    assert!(
        ok_bg <= bg,
        "background ok {ok_bg} above admitted-or-admitting {bg}"
    );
    assert_monotonic(prev, &c);
    c
}

fn assert_monotonic(before: &AdmissionCounts, after: &AdmissionCounts) {
    for class in ProposalClass::ALL {
        for result in AdmissionResult::ALL {
            let (b, a) = (before.get(class, result), after.get(class, result));
            assert!(a >= b, "{class:?} {result:?} went back from {b} to {a}");
        }
    }
}

/// A producer's own record, summed at the end.
#[derive(Default)]
struct Produced {
    /// Proposals admitted per class.
    ok: [u64; 2],
    /// Proposals refused per class: busy, throttled.
    refused: [[u64; 2]; 2],
    /// Items admitted, all kinds.
    items: u64,
}

impl Produced {
    /// Records `n` refusals (only backpressure can happen here) and backs off.
    fn refused(&mut self, kind: ControlKind, class: ProposalClass, error: AdmissionError, n: u64) {
        assert!(error.is_backpressure(), "{error:?}");
        if kind == ControlKind::Propose {
            let r = usize::from(error == AdmissionError::Throttled);
            self.refused[class.index()][r] += n;
        }
        thread::yield_now();
    }
}

fn produce<S: Slot>(slot: &S, tally: &Tally, p: u64, per_producer: u64) -> Produced {
    let mut out = Produced::default();
    let mut seq = 0u64;
    // Producer 1's last resolved config change ticket.
    let mut resolved: Option<ConfigChangeTicket> = None;
    while seq < per_producer {
        let class = class_of(seq);
        let id = (p << 40) | seq;
        if seq % 7 == 0 {
            // A batch of up to 16 proposals of one class.
            let n = (per_producer - seq).min(16);
            let items: Vec<u64> = (0..n).map(|i| id + i).collect();
            tally.announce(lane(ControlKind::Propose, class), n);
            let r = slot.admit_batch(class, &items);
            let admitted = r.admitted as u64;
            tally.refused(lane(ControlKind::Propose, class), n - admitted);
            tally.admitted(lane(ControlKind::Propose, class), admitted);
            out.ok[class.index()] += admitted;
            out.items += admitted;
            seq += admitted;
            if let Some(error) = r.refused {
                out.refused(ControlKind::Propose, class, error, n - admitted);
            }
        } else {
            // Producer 0 mixes in other kinds: they count toward the total limit and are counted
            // apart from proposals. Producer 1 admits config changes and resolves each by its
            // ticket (it is the only one, so none is refused as pending).
            let kind = if p == 0 && seq % 11 == 3 {
                ControlKind::CompactLog
            } else if p == 1 && seq % 13 == 5 {
                ControlKind::ConfigChange
            } else {
                ControlKind::Propose
            };
            let class = if kind == ControlKind::Propose {
                class
            } else {
                FG
            };
            tally.announce(lane(kind, class), 1);
            match slot.admit(kind, class, id) {
                Ok(admission) => {
                    tally.admitted(lane(kind, class), 1);
                    if kind == ControlKind::Propose {
                        out.ok[class.index()] += 1;
                    }
                    if let Some(ticket) = admission.config_change {
                        assert_eq!(kind, ControlKind::ConfigChange);
                        if let Some(old) = resolved {
                            assert!(ticket > old);
                            assert_eq!(slot.resolve(old), Err(ConfigChangeError::Stale));
                        }
                        assert_eq!(slot.resolve(ticket), Ok(()));
                        assert_eq!(slot.resolve(ticket), Err(ConfigChangeError::Stale));
                        resolved = Some(ticket);
                    } else {
                        assert_ne!(kind, ControlKind::ConfigChange);
                    }
                    out.items += 1;
                    seq += 1;
                }
                Err(r) => {
                    tally.refused(lane(kind, class), 1);
                    out.refused(kind, class, r.error, 1);
                }
            }
        }
    }
    out
}

fn run<S: Slot>(slot: &S) {
    let per_producer = items_per_producer();
    let barrier = Barrier::new(PRODUCERS as usize + 2);
    let finished = AtomicU64::new(0);
    let tally = Tally::default();
    let (produced, drained, last_sample) = thread::scope(|s| {
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let (barrier, finished, tally) = (&barrier, &finished, &tally);
                s.spawn(move || {
                    barrier.wait();
                    let out = produce(slot, tally, p, per_producer);
                    finished.fetch_add(1, Ordering::Release);
                    out
                })
            })
            .collect();
        let consumer = s.spawn(|| {
            barrier.wait();
            let mut next_seq = vec![0u64; PRODUCERS as usize];
            let mut drained = 0u64;
            loop {
                let done = finished.load(Ordering::Acquire) == PRODUCERS;
                let (mut total, mut background, mut proposals) = (0u32, 0u32, 0u32);
                let taken = slot.drain_with(&mut |c: Control<u64>| {
                    let (p, seq) = ((c.item >> 40) as usize, c.item & ((1 << 40) - 1));
                    assert_eq!(seq, next_seq[p], "producer {p}: FIFO broken or item lost");
                    next_seq[p] += 1;
                    total += 1;
                    if c.kind == ControlKind::Propose {
                        // Ordering: Relaxed; published by the drain's own Release stores.
                        tally.taking_proposals.fetch_add(1, Ordering::Relaxed);
                        proposals += 1;
                        if c.class == BG {
                            background += 1;
                        }
                    } else {
                        // Ordering: Relaxed; as above.
                        tally.taking_other.fetch_add(1, Ordering::Relaxed);
                    }
                });
                assert_eq!(taken.count, total as usize);
                assert_eq!(
                    taken.first_position,
                    drained % POSITION_MODULUS,
                    "drains' positions follow each other"
                );
                tally.drained(
                    u64::from(total),
                    u64::from(background),
                    u64::from(proposals),
                );
                // Room freed by this drain is published only when it returns, so one drain can
                // never see more than the limits allow.
                assert!(total <= TOTAL_LIMIT, "total limit exceeded: {total}");
                assert!(
                    background <= BACKGROUND_LIMIT,
                    "background limit exceeded: {background}"
                );
                drained += u64::from(total);
                if done && total == 0 {
                    break;
                }
                if total == 0 {
                    thread::yield_now();
                }
            }
            assert!(next_seq.iter().all(|&n| n == per_producer));
            drained
        });
        let sampler = s.spawn(|| {
            barrier.wait();
            let mut last = AdmissionCounts::default();
            while finished.load(Ordering::Acquire) < PRODUCERS {
                last = sample(slot, &tally, &last);
            }
            last
        });
        let produced: Vec<Produced> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        (produced, consumer.join().unwrap(), sampler.join().unwrap())
    });
    let items: u64 = produced.iter().map(|p| p.items).sum();
    assert_eq!(items, PRODUCERS * per_producer);
    assert_eq!(drained, items, "every admitted item drained exactly once");
    let s = slot.snapshot();
    assert_eq!(
        (s.queued, s.queued_background, s.queued_proposals),
        (0, 0, 0),
        "counts return to zero"
    );
    assert!(!s.config_change_pending, "every config change was resolved");
    let counts = slot.counters();
    assert_monotonic(&last_sample, &counts);
    for class in ProposalClass::ALL {
        let c = class.index();
        let sum = |f: &dyn Fn(&Produced) -> u64| produced.iter().map(f).sum::<u64>();
        assert_eq!(
            counts.get(class, AdmissionResult::Ok),
            sum(&|p| p.ok[c]),
            "{class:?} ok"
        );
        assert_eq!(
            counts.get(class, AdmissionResult::Busy),
            sum(&|p| p.refused[c][0]),
            "{class:?} busy"
        );
        assert_eq!(
            counts.get(class, AdmissionResult::Throttled),
            sum(&|p| p.refused[c][1]),
            "{class:?} throttled"
        );
        assert_eq!(counts.get(class, AdmissionResult::NotLeader), 0);
    }
    assert_eq!(counts.get(FG, AdmissionResult::Throttled), 0);
}

fn limits() -> SlotLimits {
    SlotLimits::new(TOTAL_LIMIT, BACKGROUND_LIMIT)
}

fn lock_free<S: SlotStrategy>(limits: SlotLimits) -> SlotAdmission<u64, S> {
    let slot = SlotAdmission::builder(limits)
        .without_metrics()
        .build()
        .unwrap()
        .with_strategy::<S>();
    slot.set_leader();
    slot
}

fn reference(limits: SlotLimits) -> MutexSlot<u64> {
    let slot = MutexSlot::new(limits).unwrap();
    slot.set_leader();
    slot
}

/// The queue depth the producer of [`bounded_queue`] never exceeds.
const DEPTH: u64 = 8;

/// One producer keeps at most [`DEPTH`] items queued, one consumer drains, and a sampler reads
/// the snapshot throughout: it must never report more than `DEPTH` queued, whatever the limit.
/// (A snapshot that read the released counters after the state word reported the limit here.)
fn bounded_queue<S: Slot>(slot: &S) {
    let items: u64 = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let drained = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let samples = thread::scope(|s| {
        s.spawn(|| {
            let mut admitted = 0u64;
            while admitted < items {
                // `drained` counts drains that returned, so the real queue is at most this.
                let queued = admitted - drained.load(Ordering::Acquire);
                let room = DEPTH - queued;
                if room == 0 {
                    thread::yield_now();
                    continue;
                }
                let class = class_of(admitted);
                if admitted % 5 == 0 {
                    let n = room.min(3).min(items - admitted);
                    let batch: Vec<u64> = (admitted..admitted + n).collect();
                    let r = slot.admit_batch(class, &batch);
                    assert_eq!((r.admitted as u64, r.refused), (n, None));
                    admitted += n;
                } else {
                    slot.admit(ControlKind::Propose, class, admitted).unwrap();
                    admitted += 1;
                }
            }
            done.store(true, Ordering::Release);
        });
        s.spawn(|| {
            let mut expect = 0u64;
            loop {
                let finished = done.load(Ordering::Acquire);
                let n = slot
                    .drain_with(&mut |c: Control<u64>| {
                        assert_eq!(c.item, expect, "FIFO broken or item lost");
                        expect += 1;
                    })
                    .count;
                drained.fetch_add(n as u64, Ordering::Release);
                if finished && n == 0 {
                    break;
                }
                if n == 0 {
                    thread::yield_now();
                }
            }
            assert_eq!(expect, items);
        });
        let sampler = s.spawn(|| {
            let mut samples = 0u64;
            while !done.load(Ordering::Acquire) {
                let s = slot.snapshot();
                assert!(
                    u64::from(s.queued) <= DEPTH && u64::from(s.queued_background) <= DEPTH,
                    "sample {samples}: queued {} (background {}) above {DEPTH}",
                    s.queued,
                    s.queued_background
                );
                // Only proposals here: nothing else to subtract.
                assert_eq!(s.queued_proposals, s.queued, "sample {samples}");
                samples += 1;
            }
            samples
        });
        sampler.join().unwrap()
    });
    assert!(samples > 0);
    let s = slot.snapshot();
    assert_eq!((s.queued, s.queued_background), (0, 0));
}

/// The bounded-queue scenario's limits: far above [`DEPTH`].
fn wide_limits() -> SlotLimits {
    SlotLimits::new(1024, 0)
}

/// Pushes more than 2^27 items (the state word's counter modulus) through a small slot, so the
/// modular counters, the ring's tickets and the positions wrap: FIFO, positions and accounting
/// stay exact.
fn counters_wrap<S: SlotStrategy>() {
    let slot = lock_free::<S>(SlotLimits::new(5, 3));
    let target = POSITION_MODULUS + 4099;
    let mut next = 0u64;
    // Most of the way in full batches taken unread (positions checked), the rest item by item.
    while next < POSITION_MODULUS - (1 << 20) {
        let r = slot.admit_batch_repeat(ControlKind::Propose, FG, 5, 0);
        assert_eq!((r.admitted, r.first_position), (5, next % POSITION_MODULUS));
        let taken = slot.take(5);
        assert_eq!(
            (taken.count, taken.first_position),
            (5, next % POSITION_MODULUS)
        );
        next += 5;
    }
    let mut expect = next;
    let mut round = 0u64;
    while expect < target {
        round += 1;
        if round % 2 == 0 {
            let items = [next, next + 1, next + 2];
            let r = slot.admit_batch_copied(ControlKind::Propose, class_of(round), &items);
            if r.admitted > 0 {
                assert_eq!(r.first_position, next % POSITION_MODULUS);
            }
            next += r.admitted as u64;
        } else if round % 5 == 0 {
            // Every so often another kind (a batch of one without a token of its own).
            let r = slot.admit_batch_repeat(ControlKind::CompactLog, FG, 1, next);
            if r.admitted > 0 {
                assert_eq!(r.first_position, next % POSITION_MODULUS);
            }
            next += r.admitted as u64;
        } else if let Ok(a) = slot.admit(ControlKind::Propose, class_of(round), next) {
            assert_eq!(a.position, next % POSITION_MODULUS);
            next += 1;
        }
        let first = expect;
        let max = (round % 4) as usize + 1;
        let drained = if round % 3 == 0 {
            // Taken without reading them.
            let taken = slot.take(max);
            expect += taken.count as u64;
            taken
        } else {
            slot.drain_with(max, |c| {
                assert_eq!(c.item, expect);
                expect += 1;
            })
        };
        assert_eq!(drained.first_position, first % POSITION_MODULUS);
    }
    slot.drain_with(usize::MAX, |c| {
        assert_eq!(c.item, expect);
        expect += 1;
    });
    assert_eq!(expect, next);
    let s = slot.snapshot();
    assert_eq!(
        (s.queued, s.queued_background, s.queued_proposals),
        (0, 0, 0)
    );
}

/// Instantiates the generic scenarios for one strategy.
macro_rules! per_strategy {
    ($($module:ident: $strategy:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn stress() {
                let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
                run(&lock_free::<$strategy>(limits()));
            }

            #[test]
            fn bounded_queue_sampler() {
                let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
                bounded_queue(&lock_free::<$strategy>(wide_limits()));
            }

            #[test]
            #[cfg_attr(
                debug_assertions,
                ignore = "2^27 items: scripts/test runs this file in release"
            )]
            fn counters_wrap_past_the_modulus() {
                let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
                counters_wrap::<$strategy>();
            }
        }
    )*};
}
per_strategy!(
    production: Production,
    refresh_every_admission: RefreshEveryAdmission,
    stale_state_word: StaleStateWord,
    fail_first_cas: FailFirstCas,
);

mod mutex_reference {
    use super::*;

    #[test]
    fn stress() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        run(&reference(limits()));
    }

    #[test]
    fn bounded_queue_sampler() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        bounded_queue(&reference(wide_limits()));
    }
}
