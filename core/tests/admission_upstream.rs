//! Upstream's admission scenarios that data cannot say: the observer, payload drops, panicking
//! consumers, Rust-only API (rejected items, batches left in a `Vec`, zero-length calls, config
//! change tickets as a type), limits validation and the default limits (8192 items), memory as
//! the ring grows, the registry and metrics.
//!
//! Every scenario that is a sequence of admissions, drains and state checks lives in
//! `testdata/admission/scenarios.json`, replayed by `admission_scenarios.rs` (and by the Go and C++
//! suites); see `testdata/README.md`.

use std::sync::{Arc, Mutex};

use wkcore::admission::{
    admission_totals, Admission, AdmissionError, AdmissionObserver, AdmissionRegistry,
    AdmissionResult, BatchAdmission, ConfigChangeError, ConfigChangeTicket, ControlKind, Drained,
    ProposalClass, SlotAdmission, SlotLimits, POSITION_MODULUS,
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

fn drain_items(slot: &SlotAdmission<u64>) -> Vec<u64> {
    let mut out = Vec::new();
    slot.drain_with(usize::MAX, |c| out.push(c.item));
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

/// `TestProposalClassContextDefaultsForeground` (`pkg/slot/multiraft/step_test.go`) for the Rust
/// API; the label normalization is replayed from data (`unknown_class_behaves_as_foreground`).
#[test]
fn proposal_class_context_defaults_foreground() {
    assert_eq!(ProposalClass::default(), FG);
    assert_eq!(ProposalClass::from_raw(1), BG);
    assert_eq!(ProposalClass::from_raw(9), FG);
}

/// `TestProposalAdmissionObserverRecordsBackgroundThrottle` (`pkg/slot/multiraft/step_test.go`)
/// through an observer; the counters' side is replayed from data too.
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

/// `TestReusableBuffersClearRetainedReferences` (`pkg/slot/multiraft/step_test.go`): taken and
/// dropped slots keep no payload.
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
    slot.drain_with(2, drop);
    assert_eq!(Arc::strong_count(&payload), 3);
    // A take drops what it takes.
    assert_eq!(slot.take(usize::MAX).count, 2);
    assert_eq!(Arc::strong_count(&payload), 1);
    // Items still queued when the slot is dropped are dropped with it.
    slot.admit(PROPOSE, FG, payload.clone()).unwrap();
    drop(slot);
    assert_eq!(Arc::strong_count(&payload), 1);
}

#[test]
fn rejected_items_come_back() {
    let slot = leader(SlotLimits::new(1, 1));
    slot.admit(PROPOSE, FG, 1).unwrap();
    let rejected = slot.admit(PROPOSE, FG, 42).unwrap_err();
    assert_eq!(rejected.error, AdmissionError::Busy);
    assert!(rejected.error.is_backpressure());
    assert_eq!(rejected.into_inner(), 42);
}

/// The refused rest of a batch stays in the caller's `Vec`; an empty batch is a no-op (the C ABI
/// refuses one, so the data file has none).
#[test]
fn admit_batch_leaves_the_refused_rest_in_the_vec() {
    let slot = leader(SlotLimits::new(5, 3));
    let mut items = vec![1, 2, 3, 4];
    let r = slot.admit_batch(PROPOSE, BG, &mut items);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 3,
            refused: Some(AdmissionError::Throttled),
            first_position: 0,
            config_change: None,
        }
    );
    assert_eq!(items, [4]);
    let nothing = BatchAdmission {
        admitted: 0,
        refused: None,
        first_position: 0,
        config_change: None,
    };
    let mut empty = Vec::new();
    assert_eq!(slot.admit_batch(PROPOSE, FG, &mut empty), nothing);
    assert_eq!(slot.admit_batch_copied(PROPOSE, FG, &[]), nothing);
    assert_eq!(slot.admit_batch_repeat(PROPOSE, FG, 0, 9), nothing);
    assert_eq!(slot.counters().total(), 4);
    assert_eq!(drain_items(&slot), [1, 2, 3]);
}

/// A drain of at most 0 items takes nothing (the Go and C layers refuse an empty buffer, so the
/// data file has none).
#[test]
fn a_zero_max_drain_takes_nothing() {
    let slot = leader(SlotLimits::new(8, 4));
    slot.admit(PROPOSE, BG, 1).unwrap();
    let mut out = Vec::new();
    let nothing = Drained {
        count: 0,
        first_position: 0,
    };
    assert_eq!(slot.drain(0, &mut out), nothing);
    assert_eq!(slot.drain_with(0, |_| unreachable!()), nothing);
    assert_eq!(slot.take(0), nothing);
    assert!(out.is_empty());
    assert_eq!(slot.snapshot().queued_background, 1);
    assert_eq!(drain_items(&slot), [1]);
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
    assert_eq!(drain_items(&slot), [3]);
}

/// Single admissions in a row are taken like one batch; a consumer that panics among them keeps
/// what it took taken, and the next drain hands over the rest, each with its own kind and class,
/// and then what was admitted since.
#[test]
fn a_panicking_consumer_of_single_admissions_keeps_what_it_took_taken() {
    let slot = leader(SlotLimits::new(16, 8));
    for item in 1..=4 {
        slot.admit(PROPOSE, FG, item).unwrap();
    }
    slot.admit(PROPOSE, BG, 5).unwrap();
    slot.admit(ControlKind::ConfigChange, FG, 6).unwrap();
    slot.admit(PROPOSE, FG, 7).unwrap();
    let mut seen = Vec::new();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        slot.drain_with(usize::MAX, |c| {
            seen.push(c.item);
            if c.item == 2 {
                panic!("consumer failed");
            }
        })
    }));
    assert!(caught.is_err());
    assert_eq!(seen, [1, 2]);
    let snapshot = slot.snapshot();
    assert_eq!((snapshot.queued, snapshot.queued_background), (5, 1));
    slot.admit(PROPOSE, FG, 8).unwrap();
    let mut out = Vec::new();
    let drained = slot.drain(usize::MAX, &mut out);
    assert_eq!(
        drained,
        Drained {
            count: 6,
            first_position: 2,
        }
    );
    let got: Vec<_> = out.iter().map(|c| (c.item, c.kind, c.class)).collect();
    let config = ControlKind::ConfigChange;
    assert_eq!(
        got,
        [
            (3, PROPOSE, FG),
            (4, PROPOSE, FG),
            (5, PROPOSE, BG),
            (6, config, FG),
            (7, PROPOSE, FG),
            (8, PROPOSE, FG),
        ]
    );
    assert_eq!(slot.snapshot().queued, 0);
}

#[test]
fn limits_are_validated() {
    assert!(SlotAdmission::<u64>::new(SlotLimits::new(SlotLimits::MAX + 1, 0)).is_err());
    assert!(SlotAdmission::<u64>::new(SlotLimits::new(4, SlotLimits::MAX + 1)).is_err());
    let slot = SlotAdmission::<u64>::builder(SlotLimits::new(0, 0))
        .without_metrics()
        .build()
        .unwrap();
    assert_eq!(slot.limits(), SlotLimits::new(8192, 4096));
}

/// `TestNormalizeRaftOptionsDefaultsBackpressureLimits` (`pkg/slot/multiraft/config_test.go`),
/// by filling a slot with zero limits: 8192 in all, 4096 background. (Too many tokens for the
/// data file, which checks the "half, at least 1" rule on small totals.)
#[test]
fn normalize_raft_options_defaults_backpressure_limits() {
    let slot = leader(SlotLimits::new(0, 0));
    let tokens: Vec<u64> = (0..10_000).collect();
    let r = slot.admit_batch_copied(PROPOSE, BG, &tokens);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 4096,
            refused: Some(AdmissionError::Throttled),
            first_position: 0,
            config_change: None,
        }
    );
    let r = slot.admit_batch_copied(PROPOSE, FG, &tokens);
    assert_eq!(
        r,
        BatchAdmission {
            admitted: 8192 - 4096,
            refused: Some(AdmissionError::Busy),
            first_position: 4096,
            config_change: None,
        }
    );
    let s = slot.snapshot();
    assert_eq!((s.queued, s.queued_background), (8192, 4096));
}

/// Positions are tickets: consecutive over admissions, batches and drains, modulo 2^27.
#[test]
fn positions_are_consecutive() {
    let slot = leader(SlotLimits::new(6, 0));
    assert_eq!(
        slot.admit(PROPOSE, FG, 1).unwrap(),
        Admission {
            position: 0,
            config_change: None
        }
    );
    assert_eq!(
        slot.admit_batch_copied(PROPOSE, BG, &[2, 3]).first_position,
        1
    );
    assert_eq!(
        slot.admit_batch(PROPOSE, FG, &mut vec![4]).first_position,
        3
    );
    assert_eq!(
        slot.admit_batch_repeat(ControlKind::CompactLog, FG, 2, 0)
            .first_position,
        4
    );
    let mut out = Vec::new();
    assert_eq!(
        slot.drain(2, &mut out),
        Drained {
            count: 2,
            first_position: 0
        }
    );
    assert_eq!(slot.take(3).first_position, 2);
    assert_eq!(slot.drain_with(9, drop).first_position, 5);
    assert_eq!(slot.take(9).first_position, 6);
    assert_eq!(slot.admit(PROPOSE, FG, 7).unwrap().position, 6);
    assert_eq!(POSITION_MODULUS, 1 << 27);
}

/// The ticket of a config change resolves it once; a stale or repeated one changes nothing.
#[test]
fn config_change_tickets_resolve_once() {
    let slot = leader(SlotLimits::new(8, 0));
    let first = slot
        .admit(ControlKind::ConfigChange, FG, 1)
        .unwrap()
        .config_change
        .expect("a config change has a ticket");
    assert_eq!(first.get() % 2, 1);
    assert!(slot.snapshot().config_change_pending);
    assert_eq!(slot.resolve_config_change(first), Ok(()));
    assert_eq!(
        slot.resolve_config_change(first),
        Err(ConfigChangeError::Stale)
    );
    let second = slot
        .admit_batch_copied(ControlKind::ConfigChange, FG, &[2, 3])
        .config_change
        .unwrap();
    assert!(second > first);
    assert_eq!(
        slot.resolve_config_change(first),
        Err(ConfigChangeError::Stale)
    );
    let forged = ConfigChangeTicket::from_raw(second.get() + 1).unwrap();
    assert_eq!(
        slot.resolve_config_change(forged),
        Err(ConfigChangeError::Stale)
    );
    assert!(slot.snapshot().config_change_pending);
    assert_eq!(slot.resolve_config_change(second), Ok(()));
    assert!(!slot.snapshot().config_change_pending);
    assert_eq!(
        ConfigChangeError::Stale.to_string(),
        "wkcore: config change already resolved"
    );
    assert!(slot
        .admit(ControlKind::TransferLeader, FG, 4)
        .unwrap()
        .config_change
        .is_none());
}

/// The ring grows in segments as positions are first used and keeps them: an idle slot is small
/// at any limit; after one full lap it holds the whole ring (16 bytes a place for `u64`).
#[test]
fn memory_grows_with_the_positions_used() {
    let slot = leader(SlotLimits::default());
    let idle = slot.memory_bytes();
    assert!(idle < 1024, "idle default slot: {idle} bytes");
    slot.admit(PROPOSE, FG, 1).unwrap();
    assert_eq!(
        slot.memory_bytes(),
        idle + 256 * 16,
        "one 256-place segment"
    );
    slot.take(1);
    let tokens = vec![0u64; 8192];
    assert_eq!(slot.admit_batch_copied(PROPOSE, FG, &tokens).admitted, 8192);
    let lap = slot.memory_bytes();
    assert_eq!(lap, idle + 8192 * 16, "one lap: the whole ring");
    assert_eq!(slot.take(usize::MAX).count, 8192);
    assert_eq!(slot.admit_batch_copied(PROPOSE, FG, &tokens).admitted, 8192);
    assert_eq!(slot.memory_bytes(), lap, "a high-water mark");
    // The largest limits cost nothing until used.
    let big = leader(SlotLimits::new(SlotLimits::MAX, 0));
    assert_eq!(big.limits(), SlotLimits::new(1 << 25, 1 << 24));
    assert_eq!(big.memory_bytes(), idle);
    big.admit(PROPOSE, FG, 1).unwrap();
    assert_eq!(big.memory_bytes(), idle + 256 * 16);
    println!(
        "memory per slot (u64 items): idle {idle} B, default after one lap {lap} B, 2^25 idle {} B",
        idle
    );
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
        admission_totals(&metrics).get(FG, AdmissionResult::NotLeader),
        1
    );
}
