//! Stress: several producers and one consumer hammer one slot; at the end nothing is lost or
//! duplicated, per-producer FIFO held, counts returned to zero, and no drain ever saw more than
//! the limits allow. The same harness runs against `MutexSlot`, the reference.

#![allow(clippy::disallowed_types)] // the harness's own flag; the code under test uses the shim

use std::sync::{Barrier, Mutex};
use std::thread;

use wkcore::admission::reference::MutexSlot;
use wkcore::admission::AdmissionCounts;
use wkcore::admission::{
    AdmissionResult, BatchAdmission, Control, ControlKind, ProposalClass, Rejected, SlotAdmission,
    SlotLimits, SlotSnapshot,
};

/// Stress tests must not overlap: they size themselves for the whole machine.
static SERIAL: Mutex<()> = Mutex::new(());

const PRODUCERS: u64 = 4;
const TOTAL_LIMIT: u32 = 1000;
const BACKGROUND_LIMIT: u32 = 300;

fn items_per_producer() -> u64 {
    if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    }
}

/// The operations the harness needs, implemented by both slots.
trait Slot: Sync {
    fn admit(&self, class: ProposalClass, item: u64) -> Result<(), Rejected<u64>>;
    fn admit_batch(&self, class: ProposalClass, items: &[u64]) -> BatchAdmission;
    fn drain_with(&self, f: &mut dyn FnMut(Control<u64>)) -> usize;
    fn snapshot(&self) -> SlotSnapshot;
    fn counters(&self) -> AdmissionCounts;
}

macro_rules! impl_slot {
    ($t:ty) => {
        impl Slot for $t {
            fn admit(&self, class: ProposalClass, item: u64) -> Result<(), Rejected<u64>> {
                <$t>::admit(self, ControlKind::Propose, class, item)
            }
            fn admit_batch(&self, class: ProposalClass, items: &[u64]) -> BatchAdmission {
                <$t>::admit_batch_copied(self, ControlKind::Propose, class, items)
            }
            fn drain_with(&self, f: &mut dyn FnMut(Control<u64>)) -> usize {
                <$t>::drain_with(self, usize::MAX, f)
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
impl_slot!(SlotAdmission<u64>);
impl_slot!(MutexSlot<u64>);

fn class_of(seq: u64) -> ProposalClass {
    // Deterministic mix: about 40 % background.
    if seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 < 3 {
        ProposalClass::Background
    } else {
        ProposalClass::Foreground
    }
}

fn run(slot: &dyn Slot) {
    let per_producer = items_per_producer();
    let barrier = Barrier::new(PRODUCERS as usize + 1);
    let finished = std::sync::atomic::AtomicU64::new(0);
    let (admitted, drained) = thread::scope(|s| {
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let (barrier, finished) = (&barrier, &finished);
                s.spawn(move || {
                    barrier.wait();
                    let mut admitted = 0u64;
                    let mut seq = 0u64;
                    while seq < per_producer {
                        let class = class_of(seq);
                        let id = (p << 40) | seq;
                        if seq % 7 == 0 {
                            // A batch of up to 16 of one class.
                            let n = (per_producer - seq).min(16);
                            let items: Vec<u64> = (0..n).map(|i| id + i).collect();
                            let r = slot.admit_batch(class, &items);
                            admitted += r.admitted as u64;
                            seq += r.admitted as u64;
                            if r.admitted == 0 {
                                thread::yield_now();
                            }
                        } else {
                            match slot.admit(class, id) {
                                Ok(()) => {
                                    admitted += 1;
                                    seq += 1;
                                }
                                Err(r) => {
                                    assert!(r.error.is_backpressure(), "{:?}", r.error);
                                    thread::yield_now();
                                }
                            }
                        }
                    }
                    finished.fetch_add(1, std::sync::atomic::Ordering::Release);
                    admitted
                })
            })
            .collect();
        let consumer = s.spawn(|| {
            barrier.wait();
            let mut next_seq = vec![0u64; PRODUCERS as usize];
            let mut drained = 0u64;
            loop {
                let done = finished.load(std::sync::atomic::Ordering::Acquire) == PRODUCERS;
                let (mut total, mut background) = (0u32, 0u32);
                slot.drain_with(&mut |c: Control<u64>| {
                    let (p, seq) = ((c.item >> 40) as usize, c.item & ((1 << 40) - 1));
                    assert_eq!(seq, next_seq[p], "producer {p}: FIFO broken or item lost");
                    next_seq[p] += 1;
                    total += 1;
                    if c.class == ProposalClass::Background {
                        background += 1;
                    }
                });
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
        let admitted: u64 = producers.into_iter().map(|p| p.join().unwrap()).sum();
        (admitted, consumer.join().unwrap())
    });
    assert_eq!(admitted, PRODUCERS * per_producer);
    assert_eq!(
        drained, admitted,
        "every admitted item drained exactly once"
    );
    let s = slot.snapshot();
    assert_eq!(
        (s.queued, s.queued_background),
        (0, 0),
        "counts return to zero"
    );
    let counts = slot.counters();
    let ok = counts.get(ProposalClass::Foreground, AdmissionResult::Ok)
        + counts.get(ProposalClass::Background, AdmissionResult::Ok);
    assert_eq!(ok, admitted);
    assert_eq!(
        counts.get(ProposalClass::Foreground, AdmissionResult::Throttled),
        0
    );
}

fn limits() -> SlotLimits {
    SlotLimits::new(TOTAL_LIMIT, BACKGROUND_LIMIT)
}

#[test]
fn stress_slot_admission() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let slot = SlotAdmission::builder(limits())
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    run(&slot);
}

#[test]
fn stress_mutex_reference() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let slot = MutexSlot::new(limits()).unwrap();
    slot.set_leader();
    run(&slot);
}

/// Pushes more than 2^26 items (the state word's counter modulus) through a small slot, so the
/// modular counters and the ring's tickets wrap: FIFO and accounting stay exact.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "2^26 items: scripts/test runs this file in release"
)]
fn counters_wrap_past_the_modulus() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let slot = SlotAdmission::builder(SlotLimits::new(5, 3))
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    let target = (1u64 << 26) + 4099;
    let (mut next, mut expect) = (0u64, 0u64);
    let mut round = 0u64;
    while expect < target {
        round += 1;
        if round % 2 == 0 {
            let items = [next, next + 1, next + 2];
            next += slot
                .admit_batch_copied(ControlKind::Propose, class_of(round), &items)
                .admitted as u64;
        } else if slot
            .admit(ControlKind::Propose, class_of(round), next)
            .is_ok()
        {
            next += 1;
        }
        slot.drain_with((round % 4) as usize + 1, |c| {
            assert_eq!(c.item, expect);
            expect += 1;
        });
    }
    slot.drain_with(usize::MAX, |c| {
        assert_eq!(c.item, expect);
        expect += 1;
    });
    assert_eq!(expect, next);
    let s = slot.snapshot();
    assert_eq!((s.queued, s.queued_background), (0, 0));
}
