//! Model-based tests of `wkcore::coord`: random operation sequences give the same outcomes on
//! the lock-free primitives and on their mutex references (`wkcore-references`).
//!
//! `WK_PROPTEST_CASES` sequences per primitive (default 512; scripts/test runs 10 000 in release).

use proptest::prelude::*;
use wkcore::coord::{Anchor, ExclusiveTrigger, Flip};
use wkcore_references::coord::{MutexAnchor, MutexExclusiveTrigger, MutexFlip};

fn config() -> ProptestConfig {
    let cases = std::env::var("WK_PROPTEST_CASES")
        .ok()
        .map(|v| v.parse().expect("WK_PROPTEST_CASES: a number of cases"))
        .unwrap_or(512);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Small values, so sequences hit equal, due and reserved values often.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..8, Just(u64::MAX), Just(u64::MAX - 1)]
}

#[derive(Clone, Debug)]
enum AnchorOp {
    Advance(u64, u64),
    AnchorUnset(u64),
    TryFire(u64, u64),
    Get,
}

fn anchor_op() -> impl Strategy<Value = AnchorOp> {
    prop_oneof![
        (value(), value()).prop_map(|(a, b)| AnchorOp::Advance(a, b)),
        value().prop_map(AnchorOp::AnchorUnset),
        (value(), value()).prop_map(|(n, p)| AnchorOp::TryFire(n, p)),
        Just(AnchorOp::Get),
    ]
}

#[derive(Clone, Debug)]
enum TriggerOp {
    Trigger,
    Finish(u64),
    Active,
    LastRun,
}

fn trigger_op() -> impl Strategy<Value = TriggerOp> {
    prop_oneof![
        3 => Just(TriggerOp::Trigger),
        3 => prop_oneof![0u64..6, Just(u64::MAX)].prop_map(TriggerOp::Finish),
        1 => Just(TriggerOp::Active),
        1 => Just(TriggerOp::LastRun),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn anchor_matches_its_reference(
        start in prop_oneof![Just(None), (0u64..8).prop_map(Some), Just(Some(u64::MAX - 1))],
        ops in proptest::collection::vec(anchor_op(), 1..40),
    ) {
        let anchor = match start {
            None => Anchor::unset(),
            Some(v) => Anchor::at(v).expect("not the reserved value"),
        };
        let reference = MutexAnchor::new(start);
        for op in ops {
            match op {
                AnchorOp::Advance(a, b) => prop_assert_eq!(anchor.advance(a, b), reference.advance(a, b)),
                AnchorOp::AnchorUnset(n) => prop_assert_eq!(anchor.anchor_unset(n), reference.anchor_unset(n)),
                AnchorOp::TryFire(n, p) => prop_assert_eq!(anchor.try_fire(n, p), reference.try_fire(n, p)),
                AnchorOp::Get => prop_assert_eq!(anchor.get(), reference.get()),
            }
        }
        prop_assert_eq!(anchor.get(), reference.get());
    }

    #[test]
    fn exclusive_trigger_matches_its_reference(
        start in prop_oneof![0u64..4, Just(u64::MAX >> 1), Just(u64::MAX)],
        ops in proptest::collection::vec(trigger_op(), 1..40),
    ) {
        let key = ExclusiveTrigger::new(start);
        let reference = MutexExclusiveTrigger::new(start);
        for op in ops {
            match op {
                TriggerOp::Trigger => prop_assert_eq!(key.trigger(), reference.trigger()),
                TriggerOp::Finish(run) => prop_assert_eq!(key.finish(run), reference.finish(run)),
                TriggerOp::Active => prop_assert_eq!(key.active(), reference.active()),
                TriggerOp::LastRun => prop_assert_eq!(key.last_run(), reference.last_run()),
            }
        }
    }

    #[test]
    fn flip_matches_its_reference(
        start in 0u64..3,
        ops in proptest::collection::vec((0u64..3, 0u64..3), 1..40),
    ) {
        let flip = Flip::new(start);
        let reference = MutexFlip::new(start);
        for (from, to) in ops {
            prop_assert_eq!(flip.flip(from, to), reference.flip(from, to));
            prop_assert_eq!(flip.get(), reference.get());
        }
    }
}
