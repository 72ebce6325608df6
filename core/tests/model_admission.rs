//! Model test: random operation sequences give the same results on `SlotAdmission`, under each
//! decision strategy (the degraded ones force the slow paths), as on `MutexSlot`, upstream's
//! algorithm under a mutex: every outcome, position, config change ticket, drained item,
//! snapshot (queued proposals included) and counter.
//!
//! Each strategy runs `WK_PROPTEST_CASES` sequences (default 512; scripts/test runs 10 000 in
//! release).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use wkcore::admission::{
    ConfigChangeTicket, Control, ControlKind, FailFirstCas, Production, ProposalClass,
    RefreshEveryAdmission, SlotAdmission, SlotLimits, SlotStrategy, StaleStateWord,
};
use wkcore_references::admission::MutexSlot;

#[derive(Clone, Debug)]
enum Op {
    Admit {
        kind: u32,
        class: u32,
    },
    AdmitBatch {
        kind: u32,
        class: u32,
        n: usize,
    },
    /// A batch of `n` copies (the C ABI's batch without tokens).
    AdmitRepeat {
        kind: u32,
        class: u32,
        n: usize,
    },
    Drain {
        max: usize,
    },
    Take {
        max: usize,
    },
    SetLeader,
    Demote,
    Close,
    Fail(u32),
    /// Resolves a ticket: the `back`-th newest issued (0: the newest, so usually the pending
    /// one), or, past the issued ones, a number no slot issued.
    Resolve {
        back: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    // Proposals dominate, as in production; every kind appears.
    let kind = prop_oneof![6 => Just(1u32), 1 => 1u32..=7];
    let class = prop_oneof![Just(0u32), Just(1u32), any::<u32>()];
    prop_oneof![
        96 => (kind.clone(), class.clone()).prop_map(|(kind, class)| Op::Admit { kind, class }),
        32 => (kind.clone(), class.clone(), 0usize..12).prop_map(|(kind, class, n)| Op::AdmitBatch { kind, class, n }),
        8 => (kind, class, 0usize..12).prop_map(|(kind, class, n)| Op::AdmitRepeat { kind, class, n }),
        30 => (0usize..10).prop_map(|max| Op::Drain { max }),
        10 => (0usize..10).prop_map(|max| Op::Take { max }),
        16 => Just(Op::SetLeader),
        8 => Just(Op::Demote),
        10 => prop_oneof![4 => Just(0usize), 1 => 1usize..4].prop_map(|back| Op::Resolve { back }),
        8 => (0u32..3).prop_map(Op::Fail),
        // Closing ends a run's interest early; keep it rare (weights, not a filter: a filter's
        // rejections would abort long runs).
        1 => Just(Op::Close),
    ]
}

fn kind(raw: u32) -> ControlKind {
    ControlKind::from_raw(raw).unwrap()
}

fn config() -> ProptestConfig {
    let cases = std::env::var("WK_PROPTEST_CASES")
        .ok()
        .map(|v| v.parse().expect("WK_PROPTEST_CASES: a number of cases"))
        .unwrap_or(512);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `ops` on a lock-free slot with strategy `S` and on the reference, comparing every result,
/// snapshot and counter.
fn check<S: SlotStrategy>(total: u32, background: u32, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let limits = SlotLimits::new(total, background);
    let lock_free = SlotAdmission::<u64>::builder(limits)
        .without_metrics()
        .build()
        .unwrap()
        .with_strategy::<S>();
    let reference = MutexSlot::<u64>::new(limits).unwrap();
    let mut next = 0u64;
    // Every ticket issued, oldest first.
    let mut tickets: Vec<ConfigChangeTicket> = Vec::new();
    for op in ops {
        match op {
            Op::Admit { kind: k, class } => {
                let class = ProposalClass::from_raw(class);
                let a = lock_free
                    .admit(kind(k), class, next)
                    .map_err(|r| (r.error, r.item));
                let b = reference
                    .admit(kind(k), class, next)
                    .map_err(|r| (r.error, r.item));
                prop_assert_eq!(a, b);
                tickets.extend(a.ok().and_then(|a| a.config_change));
                next += 1;
            }
            Op::AdmitBatch { kind: k, class, n } => {
                let class = ProposalClass::from_raw(class);
                let items: Vec<u64> = (next..next + n as u64).collect();
                let mut owned = items.clone();
                let a = lock_free.admit_batch(kind(k), class, &mut owned);
                let b = reference.admit_batch_copied(kind(k), class, &items);
                prop_assert_eq!(a, b);
                prop_assert_eq!(&owned[..], &items[a.admitted..]);
                tickets.extend(a.config_change);
                next += n as u64;
            }
            Op::AdmitRepeat { kind: k, class, n } => {
                let class = ProposalClass::from_raw(class);
                let a = lock_free.admit_batch_repeat(kind(k), class, n, next);
                let b = reference.admit_batch_repeat(kind(k), class, n, next);
                prop_assert_eq!(a, b);
                tickets.extend(a.config_change);
                next += 1;
            }
            Op::Drain { max } => {
                let (mut a, mut b): (Vec<Control<u64>>, Vec<Control<u64>>) = Default::default();
                prop_assert_eq!(lock_free.drain(max, &mut a), reference.drain(max, &mut b));
                prop_assert_eq!(a, b);
            }
            Op::Take { max } => prop_assert_eq!(lock_free.take(max), reference.take(max)),
            Op::Resolve { back } => {
                let ticket = match tickets.len().checked_sub(back + 1) {
                    Some(i) => tickets[i],
                    // Never issued: the next even number (odd ones may be issued later).
                    None => ConfigChangeTicket::from_raw(2 * (tickets.len() as u64 + 1)).unwrap(),
                };
                prop_assert_eq!(
                    lock_free.resolve_config_change(ticket),
                    reference.resolve_config_change(ticket)
                );
            }
            Op::SetLeader => {
                lock_free.set_leader();
                reference.set_leader();
            }
            Op::Demote => {
                lock_free.demote();
                reference.demote();
            }
            Op::Close => {
                lock_free.close();
                reference.close();
            }
            Op::Fail(code) => prop_assert_eq!(lock_free.fail(code), reference.fail(code)),
        }
        prop_assert_eq!(lock_free.snapshot(), reference.snapshot());
        prop_assert_eq!(lock_free.counters(), reference.counters());
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn production_matches_the_mutex_reference(
        total in 0u32..10,
        background in 0u32..10,
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        check::<Production>(total, background, ops)?;
    }

    #[test]
    fn refresh_every_admission_matches_the_mutex_reference(
        total in 0u32..10,
        background in 0u32..10,
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        check::<RefreshEveryAdmission>(total, background, ops)?;
    }

    #[test]
    fn stale_state_word_matches_the_mutex_reference(
        total in 0u32..10,
        background in 0u32..10,
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        check::<StaleStateWord>(total, background, ops)?;
    }

    #[test]
    fn fail_first_cas_matches_the_mutex_reference(
        total in 0u32..10,
        background in 0u32..10,
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        check::<FailFirstCas>(total, background, ops)?;
    }
}
