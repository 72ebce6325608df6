//! loom models of `SlotAdmission`: the admission CAS, the ring and the released view.
#![cfg(wkcore_loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::admission::{
    AdmissionError, Control, ControlKind, ProposalClass, SlotAdmission, SlotLimits,
};

const FG: ProposalClass = ProposalClass::Foreground;
const BG: ProposalClass = ProposalClass::Background;
const PROPOSE: ControlKind = ControlKind::Propose;

fn leader(total: u32, background: u32) -> Arc<SlotAdmission<u64>> {
    let slot = SlotAdmission::builder(SlotLimits::new(total, background))
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    Arc::new(slot)
}

/// A consumer thread that drains `rounds` times and returns what it took, in order.
fn spawn_consumer(slot: &Arc<SlotAdmission<u64>>, rounds: usize) -> thread::JoinHandle<Vec<u64>> {
    let consumer = slot.clone();
    thread::spawn(move || {
        let mut taken = Vec::new();
        for _ in 0..rounds {
            consumer.drain_with(usize::MAX, |c| taken.push(c.item));
        }
        taken
    })
}

fn drain_all(slot: &SlotAdmission<u64>) -> Vec<Control<u64>> {
    let mut out = Vec::new();
    slot.drain(usize::MAX, &mut out);
    out
}

/// Two producers race for the last place: exactly one wins, the other is `Busy`, and the winner's
/// item is the one queued.
#[test]
fn admit_vs_admit_at_the_total_limit() {
    loom::model(|| {
        let slot = leader(1, 1);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, FG, 1).is_ok());
        let mine = slot.admit(PROPOSE, FG, 2).is_ok();
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one admission fits");
        let taken = drain_all(&slot);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].item, if mine { 2 } else { 1 });
        assert_eq!(slot.snapshot().queued, 0);
    });
}

/// Two background producers race for the last background place while foreground room remains:
/// one is admitted, the other `Throttled`, and the foreground reserve is untouched.
#[test]
fn admit_vs_admit_at_the_background_limit() {
    loom::model(|| {
        let slot = leader(3, 1);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, BG, 1).map_err(|r| r.error));
        let mine = slot.admit(PROPOSE, BG, 2).map_err(|r| r.error);
        let theirs = t.join().unwrap();
        match (mine, theirs) {
            (Ok(()), Err(AdmissionError::Throttled)) | (Err(AdmissionError::Throttled), Ok(())) => {
            }
            other => panic!("unexpected outcomes {other:?}"),
        }
        slot.admit(PROPOSE, FG, 3).unwrap();
        slot.admit(PROPOSE, FG, 4).unwrap();
        assert_eq!(slot.snapshot().queued, 3);
    });
}

/// A producer admits three items through a ring of two places while the consumer drains: slots
/// are reused only after they are taken (loom checks every cell access), nothing is lost or taken
/// twice, FIFO holds, and the background quota comes back exactly.
#[test]
fn admit_vs_drain_reuses_slots_safely() {
    loom::model(|| {
        let slot = leader(2, 1);
        let t = spawn_consumer(&slot, 2);
        let mut admitted = Vec::new();
        for item in 1..=3u64 {
            let class = if item == 2 { BG } else { FG };
            if slot.admit(PROPOSE, class, item).is_ok() {
                admitted.push(item);
            }
        }
        let mut taken = t.join().unwrap();
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        assert_eq!(
            taken, admitted,
            "every admitted item drained once, in order"
        );
        let s = slot.snapshot();
        assert_eq!((s.queued, s.queued_background), (0, 0));
        slot.admit(PROPOSE, BG, 4).unwrap();
        slot.admit(PROPOSE, FG, 5).unwrap();
    });
}

/// A producer refreshes its view from the consumer's line while the consumer drains: with a
/// limit of one, the second admission succeeds only if the first item was taken, and then it
/// reuses the same ring place.
#[test]
fn refresh_view_sees_the_take_that_made_room() {
    loom::model(|| {
        let slot = leader(1, 1);
        slot.admit(PROPOSE, FG, 1).unwrap();
        let t = spawn_consumer(&slot, 1);
        let second = slot.admit(PROPOSE, FG, 2);
        let mut taken = t.join().unwrap();
        if let Err(r) = &second {
            assert_eq!(r.error, AdmissionError::Busy);
        }
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        let expected: &[u64] = if second.is_ok() { &[1, 2] } else { &[1] };
        assert_eq!(taken, expected);
    });
}

/// A demotion (or close) that happens before an admission is visible to it: once the producer has
/// seen the change, it admits nothing.
#[test]
fn admit_vs_demote_and_close() {
    for close in [false, true] {
        loom::model(move || {
            let slot = leader(4, 2);
            let changed = Arc::new(AtomicBool::new(false));
            let (s2, c2) = (slot.clone(), changed.clone());
            let t = thread::spawn(move || {
                if close {
                    s2.close();
                } else {
                    s2.demote();
                }
                c2.store(true, Ordering::Release);
            });
            let seen = changed.load(Ordering::Acquire);
            let result = slot.admit(PROPOSE, FG, 1).map_err(|r| r.error);
            t.join().unwrap();
            let expected = if close {
                AdmissionError::Closed
            } else {
                AdmissionError::NotLeader
            };
            if seen {
                assert_eq!(result, Err(expected));
            }
            let queued = drain_all(&slot).len();
            assert_eq!(queued, usize::from(result.is_ok()));
            assert_eq!(slot.admit(PROPOSE, FG, 2).unwrap_err().error, expected);
        });
    }
}

/// A batch and a single admission race for three places: the limit holds, the batch's admitted
/// prefix is contiguous and in order, and the counts return to zero after the drain.
#[test]
fn batch_admit_vs_single_admit() {
    loom::model(|| {
        let slot = leader(3, 3);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, BG, 9).is_ok());
        let batch = slot.admit_batch_copied(PROPOSE, BG, &[1, 2, 3]);
        let single = t.join().unwrap();
        assert_eq!(
            batch.admitted + usize::from(single),
            3.min(3 + usize::from(single)).min(3)
        );
        if batch.admitted < 3 {
            assert_eq!(batch.refused, Some(AdmissionError::Busy));
        }
        let taken: Vec<u64> = drain_all(&slot).into_iter().map(|c| c.item).collect();
        let run: Vec<u64> = taken.iter().copied().filter(|&i| i != 9).collect();
        assert_eq!(run, (1..=batch.admitted as u64).collect::<Vec<_>>());
        assert_eq!(taken.len(), batch.admitted + usize::from(single));
        if single {
            let at = taken.iter().position(|&i| i == 9).unwrap();
            assert!(
                at == 0 || at == taken.len() - 1,
                "a run is never split: {taken:?}"
            );
        }
        assert_eq!(slot.snapshot().queued, 0);
    });
}

/// Two consumers never take the same item, and between them take everything once.
#[test]
fn drain_vs_drain() {
    loom::model(|| {
        let slot = leader(4, 2);
        slot.admit_batch_copied(PROPOSE, FG, &[1, 2, 3]);
        let other = slot.clone();
        let t = thread::spawn(move || {
            let mut taken = Vec::new();
            other.drain_with(2, |c| taken.push(c.item));
            taken
        });
        let mut mine = Vec::new();
        slot.drain_with(2, |c| mine.push(c.item));
        let mut all = t.join().unwrap();
        all.extend(mine);
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3]);
    });
}

/// Runs of two wrap a ring of two places while the consumer drains: an interior place of one lap
/// becomes the head of the next, and a head's stamp left from the previous lap must never be
/// mistaken for a new run (the consumer checks the lap's ticket; it never writes the ring).
#[test]
fn batch_runs_wrap_the_ring_while_draining() {
    loom::model(|| {
        let slot = leader(2, 2);
        let t = spawn_consumer(&slot, 2);
        let mut admitted = Vec::new();
        // Items 1 and 2 as one run (heads at place 0); then 3 alone, then 4 and 5 as a run,
        // whichever fit: heads move between places 0 and 1 from lap to lap.
        admitted.extend(
            [1, 2]
                .into_iter()
                .take(slot.admit_batch_copied(PROPOSE, FG, &[1, 2]).admitted),
        );
        if slot.admit(PROPOSE, BG, 3).is_ok() {
            admitted.push(3);
        }
        admitted.extend(
            [4, 5]
                .into_iter()
                .take(slot.admit_batch_copied(PROPOSE, FG, &[4, 5]).admitted),
        );
        let mut taken = t.join().unwrap();
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        assert_eq!(
            taken, admitted,
            "every admitted item drained once, in order"
        );
        assert_eq!(slot.snapshot().queued, 0);
    });
}
