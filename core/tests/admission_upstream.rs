//! Upstream's admission scenarios (`spec/admission.md`, "Upstream tests"), named after them,
//! plus the check order and batch behaviour they imply.

use std::sync::{Arc, Mutex};

use wkcore::admission::{
    AdmissionError, AdmissionObserver, AdmissionRegistry, AdmissionResult, BatchAdmission, Control,
    ControlKind, ProposalClass, SlotAdmission, SlotLimits,
};
use wkcore::metrics::Registry;

const FG: ProposalClass = ProposalClass::Foreground;
const BG: ProposalClass = ProposalClass::Background;
const PROPOSE: ControlKind = ControlKind::Propose;

fn leader(limits: SlotLimits) -> SlotAdmission<u64> {
    let slot = SlotAdmission::builder(limits)
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    slot
}

fn err<T>(r: Result<(), wkcore::admission::Rejected<T>>) -> AdmissionError {
    r.expect_err("expected a refusal").error
}

fn drain_all(slot: &SlotAdmission<u64>) -> Vec<Control<u64>> {
    let mut out = Vec::new();
    slot.drain(usize::MAX, &mut out);
    out
}

#[derive(Default)]
struct RecordingObserver(Mutex<Vec<String>>);

impl AdmissionObserver for RecordingObserver {
    fn observe_admission(&self, _slot_id: u64, class: ProposalClass, result: AdmissionResult) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{}:{}", class.label(), result.label()));
    }
}

#[test]
fn control_drain_helper_moves_queued_actions_into_reusable_work_slice() {
    let slot = leader(SlotLimits::default());
    slot.admit(PROPOSE, FG, 1).unwrap();
    slot.admit(ControlKind::CompactLog, FG, 2).unwrap();
    let taken = drain_all(&slot);
    assert_eq!(taken.iter().map(|c| c.item).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(taken[1].kind, ControlKind::CompactLog);
    assert_eq!(slot.snapshot().queued, 0);
    assert!(drain_all(&slot).is_empty());
}

#[test]
fn enqueue_control_rejects_when_queue_limit_reached() {
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(1, 0))
        .without_metrics()
        .build()
        .unwrap();
    // TransferLeader is admitted on followers too.
    slot.admit(ControlKind::TransferLeader, FG, 1).unwrap();
    assert_eq!(
        err(slot.admit(ControlKind::TransferLeader, FG, 2)),
        AdmissionError::Busy
    );
    // Non-proposals report no outcome.
    assert_eq!(slot.counters().total(), 0);
}

#[test]
fn proposal_class_context_defaults_foreground() {
    assert_eq!(ProposalClass::default(), FG);
    assert_eq!(ProposalClass::from_label(""), FG);
    assert_eq!(ProposalClass::from_label(BG.label()), BG);
    assert_eq!(ProposalClass::from_raw(9), FG);
}

#[test]
fn background_proposal_admission_leaves_foreground_reserve() {
    let slot = leader(SlotLimits::new(4, 1));
    slot.admit(PROPOSE, BG, 1).unwrap();
    let e = err(slot.admit(PROPOSE, BG, 2));
    assert_eq!(e, AdmissionError::Throttled);
    assert!(e.is_backpressure());
    slot.admit(PROPOSE, FG, 3).unwrap();
    slot.admit(PROPOSE, FG, 4).unwrap();
    slot.admit(PROPOSE, FG, 5).unwrap();
    // The total binds first: a background proposal on a full queue is busy, not throttled.
    assert_eq!(err(slot.admit(PROPOSE, BG, 6)), AdmissionError::Busy);
    assert_eq!(err(slot.admit(PROPOSE, FG, 7)), AdmissionError::Busy);
    // A take restores the whole background quota.
    assert_eq!(drain_all(&slot).len(), 4);
    slot.admit(PROPOSE, BG, 8).unwrap();
}

#[test]
fn proposal_admission_observer_records_background_throttle() {
    let observer = Arc::new(RecordingObserver::default());
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(4, 1))
        .slot_id(7)
        .observer(observer.clone())
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    slot.admit(PROPOSE, BG, 1).unwrap();
    slot.admit(PROPOSE, BG, 2).unwrap_err();
    assert_eq!(
        *observer.0.lock().unwrap(),
        ["background:ok", "background:throttled"]
    );
    let counts = slot.counters();
    assert_eq!(counts.get(BG, AdmissionResult::Ok), 1);
    assert_eq!(counts.get(BG, AdmissionResult::Throttled), 1);
    assert_eq!(counts.total(), 2);
}

#[test]
fn reusable_buffers_clear_retained_references() {
    let slot = SlotAdmission::<Arc<u64>>::builder(SlotLimits::new(4, 0))
        .without_metrics()
        .build()
        .unwrap();
    slot.set_leader();
    let payload = Arc::new(7);
    for _ in 0..3 {
        slot.admit(PROPOSE, FG, payload.clone()).unwrap();
    }
    slot.admit_batch(PROPOSE, FG, &mut vec![payload.clone()]);
    assert_eq!(Arc::strong_count(&payload), 5);
    slot.drain_with(usize::MAX, drop);
    assert_eq!(Arc::strong_count(&payload), 1);
    // Items still queued when the slot is dropped are dropped with it.
    slot.admit(PROPOSE, FG, payload.clone()).unwrap();
    drop(slot);
    assert_eq!(Arc::strong_count(&payload), 1);
}

#[test]
fn close_slot_blocks_new_admissions() {
    let slot = leader(SlotLimits::default());
    slot.admit(PROPOSE, FG, 1).unwrap();
    slot.close();
    for kind in ControlKind::ALL {
        assert_eq!(err(slot.admit(kind, FG, 2)), AdmissionError::Closed);
    }
    // Closed refusals emit no outcome; queued items can still be drained.
    assert_eq!(slot.counters().total(), 1);
    assert_eq!(drain_all(&slot).len(), 1);
    assert!(slot.snapshot().closed);
}

#[test]
fn propose_rejects_stale_leader_after_higher_term_message_queued() {
    let slot = leader(SlotLimits::default());
    slot.admit(PROPOSE, FG, 1).unwrap();
    slot.demote();
    assert_eq!(err(slot.admit(PROPOSE, FG, 2)), AdmissionError::NotLeader);
    assert_eq!(err(slot.admit(PROPOSE, BG, 3)), AdmissionError::NotLeader);
    let counts = slot.counters();
    assert_eq!(counts.get(FG, AdmissionResult::NotLeader), 1);
    assert_eq!(counts.get(BG, AdmissionResult::NotLeader), 1);
    // Other kinds are admitted on followers.
    for kind in [
        ControlKind::TransferLeader,
        ControlKind::CompactLog,
        ControlKind::CaptureHashSlotSnapshot,
        ControlKind::FreshStatus,
        ControlKind::Campaign,
    ] {
        slot.admit(kind, FG, 4).unwrap();
    }
}

#[test]
fn change_config_rejects_stale_leader_after_higher_term_message_queued() {
    let slot = leader(SlotLimits::default());
    slot.demote();
    assert_eq!(
        err(slot.admit(ControlKind::ConfigChange, FG, 1)),
        AdmissionError::NotLeader
    );
    // Config-change refusals report no proposal outcome.
    assert_eq!(slot.counters().total(), 0);
}

#[test]
fn config_change_pending_until_resolved() {
    let slot = leader(SlotLimits::default());
    slot.admit(ControlKind::ConfigChange, FG, 1).unwrap();
    assert_eq!(
        err(slot.admit(ControlKind::ConfigChange, FG, 2)),
        AdmissionError::ConfigChangePending
    );
    // Still pending while being applied (taken but unresolved), as upstream's submitted futures.
    drain_all(&slot);
    assert_eq!(
        err(slot.admit(ControlKind::ConfigChange, FG, 3)),
        AdmissionError::ConfigChangePending
    );
    assert!(slot.snapshot().config_change_pending);
    slot.config_change_resolved();
    slot.admit(ControlKind::ConfigChange, FG, 4).unwrap();
    assert_eq!(slot.counters().total(), 0);
}

#[test]
fn check_order_is_upstreams() {
    // closed before fatal
    let slot = leader(SlotLimits::new(1, 1));
    slot.fail(9);
    slot.close();
    assert_eq!(err(slot.admit(PROPOSE, FG, 1)), AdmissionError::Closed);
    // fatal before not leader; first code wins
    let slot = leader(SlotLimits::new(1, 1));
    assert!(slot.fail(9));
    assert!(!slot.fail(10));
    slot.demote();
    assert_eq!(err(slot.admit(PROPOSE, FG, 1)), AdmissionError::Fatal(9));
    assert_eq!(slot.snapshot().fatal, Some(9));
    // not leader before config change pending
    let slot = leader(SlotLimits::new(1, 1));
    slot.admit(ControlKind::ConfigChange, FG, 1).unwrap();
    slot.demote();
    assert_eq!(
        err(slot.admit(ControlKind::ConfigChange, FG, 2)),
        AdmissionError::NotLeader
    );
    // config change pending before busy
    slot.set_leader();
    assert_eq!(
        err(slot.admit(ControlKind::ConfigChange, FG, 2)),
        AdmissionError::ConfigChangePending
    );
    // busy before throttled
    let slot = leader(SlotLimits::new(2, 1));
    slot.admit(PROPOSE, BG, 1).unwrap();
    slot.admit(PROPOSE, FG, 2).unwrap();
    assert_eq!(err(slot.admit(PROPOSE, BG, 3)), AdmissionError::Busy);
}

#[test]
fn rejected_items_come_back() {
    let slot = leader(SlotLimits::new(1, 1));
    slot.admit(PROPOSE, FG, 1).unwrap();
    let rejected = slot.admit(PROPOSE, FG, 42).unwrap_err();
    assert_eq!(rejected.error, AdmissionError::Busy);
    assert_eq!(rejected.into_inner(), 42);
}

#[test]
fn batch_admits_the_longest_prefix_that_fits() {
    let slot = leader(SlotLimits::new(5, 3));
    let mut items = vec![1, 2, 3, 4];
    let r = slot.admit_batch(PROPOSE, BG, &mut items);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 3,
            refused: Some(AdmissionError::Throttled)
        }
    );
    assert_eq!(items, [4]);
    let r = slot.admit_batch_copied(PROPOSE, FG, &[5, 6, 7]);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 2,
            refused: Some(AdmissionError::Busy)
        }
    );
    let counts = slot.counters();
    assert_eq!(counts.get(BG, AdmissionResult::Ok), 3);
    assert_eq!(counts.get(BG, AdmissionResult::Throttled), 1);
    assert_eq!(counts.get(FG, AdmissionResult::Ok), 2);
    assert_eq!(counts.get(FG, AdmissionResult::Busy), 1);
    let taken: Vec<_> = drain_all(&slot).iter().map(|c| (c.item, c.class)).collect();
    assert_eq!(taken, [(1, BG), (2, BG), (3, BG), (5, FG), (6, FG)]);
    // Empty batches are a no-op.
    assert_eq!(
        slot.admit_batch_copied(PROPOSE, FG, &[]),
        BatchAdmission {
            admitted: 0,
            refused: None
        }
    );
}

#[test]
fn batch_of_config_changes_admits_one() {
    let slot = leader(SlotLimits::new(5, 3));
    let r = slot.admit_batch_copied(ControlKind::ConfigChange, FG, &[1, 2]);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 1,
            refused: Some(AdmissionError::ConfigChangePending)
        }
    );
}

#[test]
fn batch_on_a_follower_counts_every_item_not_leader() {
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(5, 3))
        .without_metrics()
        .build()
        .unwrap();
    let r = slot.admit_batch_copied(PROPOSE, BG, &[1, 2, 3]);
    assert_eq!(r.refused, Some(AdmissionError::NotLeader));
    assert_eq!(slot.counters().get(BG, AdmissionResult::NotLeader), 3);
}

#[test]
fn partial_drains_keep_fifo_across_runs_and_release_exactly() {
    let slot = leader(SlotLimits::new(8, 4));
    slot.admit(PROPOSE, FG, 1).unwrap();
    slot.admit_batch_copied(PROPOSE, BG, &[2, 3, 4]);
    slot.admit(ControlKind::CompactLog, FG, 5).unwrap();
    let mut out = Vec::new();
    assert_eq!(slot.drain(2, &mut out), 2);
    assert_eq!(slot.snapshot().queued, 3);
    assert_eq!(slot.snapshot().queued_background, 2);
    // The background quota freed by the partial drain is usable at once.
    slot.admit(PROPOSE, BG, 6).unwrap();
    slot.admit(PROPOSE, BG, 7).unwrap();
    assert_eq!(err(slot.admit(PROPOSE, BG, 8)), AdmissionError::Throttled);
    assert_eq!(slot.drain(1, &mut out), 1);
    slot.drain(usize::MAX, &mut out);
    assert_eq!(
        out.iter().map(|c| c.item).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(out[4].kind, ControlKind::CompactLog);
    assert_eq!(slot.snapshot().queued, 0);
    assert_eq!(slot.snapshot().queued_background, 0);
    assert_eq!(slot.drain(0, &mut out), 0);
}

#[test]
fn ring_wraps_many_times_with_small_limits() {
    let slot = leader(SlotLimits::new(3, 2));
    let mut next = 0u64;
    let mut expect = 0u64;
    for round in 0..10_000u64 {
        let n = round % 4;
        for _ in 0..n {
            if slot.admit(PROPOSE, BG, next).is_ok() {
                next += 1;
            }
        }
        next += slot
            .admit_batch_copied(PROPOSE, FG, &[next, next + 1])
            .admitted as u64;
        slot.drain_with((round % 3) as usize + 1, |c| {
            assert_eq!(c.item, expect);
            expect += 1;
        });
        let s = slot.snapshot();
        assert!(s.queued <= 3 && s.queued_background <= 2);
    }
    slot.drain_with(usize::MAX, |c| {
        assert_eq!(c.item, expect);
        expect += 1;
    });
    assert_eq!(expect, next);
}

#[test]
fn a_panicking_consumer_keeps_what_it_took_taken() {
    let slot = leader(SlotLimits::new(4, 2));
    slot.admit_batch_copied(PROPOSE, FG, &[1, 2, 3]);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        slot.drain_with(usize::MAX, |c| {
            if c.item == 2 {
                panic!("consumer failed");
            }
        })
    }));
    assert!(caught.is_err());
    assert_eq!(slot.snapshot().queued, 1);
    let rest: Vec<_> = drain_all(&slot).iter().map(|c| c.item).collect();
    assert_eq!(rest, [3]);
}

#[test]
fn limits_are_validated() {
    assert!(SlotAdmission::<u64>::new(SlotLimits::new(SlotLimits::MAX + 1, 0)).is_err());
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(0, 0))
        .without_metrics()
        .build()
        .unwrap();
    assert_eq!(slot.limits(), SlotLimits::new(8192, 4096));
}

#[test]
fn registry_maps_ids_to_handles() {
    let registry = AdmissionRegistry::<u64>::new();
    let slot = Arc::new(
        SlotAdmission::<u64>::builder(SlotLimits::default())
            .slot_id(11)
            .without_metrics()
            .build()
            .unwrap(),
    );
    registry.insert(slot.clone()).unwrap();
    assert!(registry.insert(slot.clone()).is_err());
    assert_eq!(registry.len(), 1);
    assert!(Arc::ptr_eq(&registry.get(11).unwrap(), &slot));
    assert!(registry.get(12).is_none());
    assert!(registry.remove(11).is_some());
    assert!(registry.is_empty());
}

#[test]
fn slots_count_in_the_registry_they_were_built_with() {
    let metrics = Registry::new();
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(2, 1))
        .metrics(&metrics)
        .build()
        .unwrap();
    slot.admit(PROPOSE, FG, 1).unwrap_err();
    assert_eq!(
        metrics
            .admission_totals()
            .get(FG, AdmissionResult::NotLeader),
        1
    );
}
