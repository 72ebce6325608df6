//! Model-based tests of `wkcore::coord::Ledger` and `WindowedCounter`: random operation sequences
//! give the same results, record views, sizes and event counts on the lock-free structures and on
//! their mutex references (`wkcore-references`).
//!
//! The ledger's scans take a page of slots from a rotating cursor over its slab, an order the
//! reference cannot mirror; the model calls them with a limit of 0 (nothing), the capacity or
//! more (one whole pass: every slot examined once) and compares with the reference's whole pass.
//! Times never go back, except a heartbeat's (`touch`), which may come late.
//!
//! `WK_PROPTEST_CASES` sequences per test (default 256; scripts/test runs 10 000 in release).

use proptest::prelude::*;
use wkcore::coord::{
    ByteKey, HostCode, Ledger, LedgerConfig, LedgerEvent, LedgerKind, NewRecord, Outcome, Page,
    WindowedCounter, HOST_OUTCOME_MIN, WINDOW_COUNT_MAX, WINDOW_TIME_MAX,
};
use wkcore::metrics::Registry;
use wkcore_references::coord::{MutexLedger, MutexWindowedCounter};

fn config() -> ProptestConfig {
    let cases = std::env::var("WK_PROPTEST_CASES")
        .ok()
        .map(|v| v.parse().expect("WK_PROPTEST_CASES: a number of cases"))
        .unwrap_or(256);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

const KEYS: usize = 6;

fn keys() -> Vec<ByteKey> {
    (0..KEYS)
        .map(|i| ByteKey::new(format!("k{i}").as_bytes()).unwrap())
        .collect()
}

/// Which scan limit: nothing, exactly one pass, more than a pass (clamped to one).
#[derive(Clone, Copy, Debug)]
enum Limit {
    Zero,
    Capacity,
    Beyond,
}

impl Limit {
    fn of(self, capacity: usize) -> usize {
        match self {
            Limit::Zero => 0,
            Limit::Capacity => capacity,
            Limit::Beyond => capacity + 7,
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert {
        key: usize,
        id: u64,
        runner: u64,
        deadline: Option<u64>,
        reserved_time: bool,
    },
    Place {
        keys: Vec<usize>,
        placeholder: u64,
        deadline: Option<u64>,
        reserved_time: bool,
    },
    Claim {
        key: usize,
        placeholder: u64,
        request_id: u64,
        runner: u64,
    },
    Finalize {
        key: usize,
        outcome: Outcome,
        payload: u64,
    },
    FinalizeBatch {
        keys: Vec<(usize, u64)>,
        outcome: Outcome,
    },
    Take {
        key: usize,
        id: u64,
    },
    /// A heartbeat `back` before now (a late one must not move the refresh time back).
    Touch {
        key: usize,
        runner: u64,
        back: u64,
    },
    Reconcile(Limit),
    Reclaim(Limit),
    FinalizeOwn {
        runner: u64,
        outcome: Outcome,
        limit: Limit,
    },
    SweepOrphans {
        quiet: u64,
        limit: Limit,
    },
}

fn key() -> impl Strategy<Value = usize> {
    0..KEYS
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Succeeded),
        Just(Outcome::Failed),
        Just(Outcome::Host(HostCode::new(300).unwrap())),
    ]
}

/// A deadline relative to now (`None`: never, `u64::MAX`).
fn deadline() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![4 => (0u64..15).prop_map(Some), 1 => Just(None)]
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        1 => Just(Limit::Zero),
        4 => Just(Limit::Capacity),
        1 => Just(Limit::Beyond),
    ]
}

/// Ids overlap: insert ids and placeholders in 0..4, request ids in 10..13, so takes and claims
/// hit both matching and mismatching records.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), 0u64..4, 0u64..3, deadline(), prop::bool::weighted(0.05)).prop_map(
            |(key, id, runner, deadline, reserved_time)| Op::Insert {
                key,
                id,
                runner,
                deadline,
                reserved_time
            }
        ),
        2 => (
            prop::collection::vec(key(), 0..4),
            0u64..4,
            deadline(),
            prop::bool::weighted(0.05)
        )
            .prop_map(|(keys, placeholder, deadline, reserved_time)| Op::Place {
                keys,
                placeholder,
                deadline,
                reserved_time
            }),
        3 => (key(), 0u64..4, 10u64..13, 0u64..3).prop_map(
            |(key, placeholder, request_id, runner)| Op::Claim {
                key,
                placeholder,
                request_id,
                runner
            }
        ),
        4 => (key(), outcome(), 0u64..5).prop_map(|(key, outcome, payload)| Op::Finalize {
            key,
            outcome,
            payload
        }),
        1 => (prop::collection::vec((key(), 0u64..5), 0..4), outcome())
            .prop_map(|(keys, outcome)| Op::FinalizeBatch { keys, outcome }),
        2 => (key(), prop_oneof![0u64..4, 10u64..13]).prop_map(|(key, id)| Op::Take { key, id }),
        2 => (key(), 0u64..3, prop_oneof![Just(0u64), 1u64..4])
            .prop_map(|(key, runner, back)| Op::Touch { key, runner, back }),
        2 => limit().prop_map(Op::Reconcile),
        2 => limit().prop_map(Op::Reclaim),
        1 => (0u64..3, outcome(), limit()).prop_map(|(runner, outcome, limit)| Op::FinalizeOwn {
            runner,
            outcome,
            limit
        }),
        1 => (0u64..10, limit()).prop_map(|(quiet, limit)| Op::SweepOrphans { quiet, limit }),
    ]
}

/// A page of `limit` slots against the reference's whole pass that changed `changed` records.
fn expected_page(limit: usize, capacity: usize, changed: usize) -> Page {
    Page {
        scanned: limit.min(capacity),
        changed,
        wrapped: limit > 0,
    }
}

fn assert_same_counts(
    ledger: &Ledger<ByteKey>,
    reference: &MutexLedger<ByteKey>,
) -> Result<(), TestCaseError> {
    let counts = ledger.counts();
    for event in LedgerEvent::ALL {
        prop_assert_eq!(counts.get(event), reference.count(event), "{:?}", event);
    }
    Ok(())
}

fn ledger_matches_reference(
    capacity: usize,
    retention: u64,
    kind: LedgerKind,
    ops: Vec<(u64, Op)>,
) -> Result<(), TestCaseError> {
    let config = LedgerConfig {
        capacity,
        retention,
        kind,
    };
    let registry = Registry::new();
    let ledger = Ledger::<ByteKey>::with_metrics(config, &registry).unwrap();
    let reference = MutexLedger::<ByteKey>::new(config).unwrap();
    let keys = keys();
    let mut now = 0u64;
    for (dt, op) in ops {
        now += dt;
        let time = |reserved: bool| if reserved { u64::MAX } else { now };
        let at = |d: Option<u64>| d.map_or(u64::MAX, |d| now + d);
        match op {
            Op::Insert {
                key,
                id,
                runner,
                deadline,
                reserved_time,
            } => {
                let record = NewRecord {
                    id,
                    runner,
                    deadline: at(deadline),
                };
                let t = time(reserved_time);
                prop_assert_eq!(
                    ledger.insert(&keys[key], record, t),
                    reference.insert(&keys[key], record, t)
                );
            }
            Op::Place {
                keys: picked,
                placeholder,
                deadline,
                reserved_time,
            } => {
                let batch: Vec<ByteKey> = picked.iter().map(|&k| keys[k]).collect();
                // Both start from the same sentinel, so "left as it was" is compared too.
                let mut out_l = vec![Err(wkcore::coord::InsertError::InvalidTime); batch.len()];
                let mut out_r = out_l.clone();
                let (t, d) = (time(reserved_time), at(deadline));
                prop_assert_eq!(
                    ledger.place(&batch, placeholder, d, t, &mut out_l),
                    reference.place(&batch, placeholder, d, t, &mut out_r)
                );
                prop_assert_eq!(out_l, out_r);
            }
            Op::Claim {
                key,
                placeholder,
                request_id,
                runner,
            } => prop_assert_eq!(
                ledger.claim(&keys[key], placeholder, request_id, runner, now),
                reference.claim(&keys[key], placeholder, request_id, runner, now)
            ),
            Op::Finalize {
                key,
                outcome,
                payload,
            } => prop_assert_eq!(
                ledger.finalize(&keys[key], outcome, payload, now),
                reference.finalize(&keys[key], outcome, payload, now)
            ),
            Op::FinalizeBatch {
                keys: picked,
                outcome,
            } => {
                let batch: Vec<ByteKey> = picked.iter().map(|&(k, _)| keys[k]).collect();
                let payloads: Vec<u64> = picked.iter().map(|&(_, p)| p).collect();
                let mut out_l = vec![Ok(()); batch.len()];
                let mut out_r = out_l.clone();
                prop_assert_eq!(
                    ledger.finalize_batch(&batch, &payloads, outcome, now, &mut out_l),
                    reference.finalize_batch(&batch, &payloads, outcome, now, &mut out_r)
                );
                prop_assert_eq!(out_l, out_r);
            }
            Op::Take { key, id } => {
                prop_assert_eq!(ledger.take(&keys[key], id), reference.take(&keys[key], id))
            }
            Op::Touch { key, runner, back } => {
                let t = now.saturating_sub(back);
                prop_assert_eq!(
                    ledger.touch(&keys[key], runner, t),
                    reference.touch(&keys[key], runner, t)
                )
            }
            Op::Reconcile(limit) => {
                let limit = limit.of(capacity);
                let expected = if limit == 0 {
                    0
                } else {
                    reference.reconcile_all(now)
                };
                prop_assert_eq!(
                    ledger.reconcile(now, limit),
                    expected_page(limit, capacity, expected)
                );
            }
            Op::Reclaim(limit) => {
                let limit = limit.of(capacity);
                let expected = if limit == 0 {
                    0
                } else {
                    reference.reclaim_all(now)
                };
                prop_assert_eq!(
                    ledger.reclaim(now, limit),
                    expected_page(limit, capacity, expected)
                );
            }
            Op::FinalizeOwn {
                runner,
                outcome,
                limit,
            } => {
                let limit = limit.of(capacity);
                let page = ledger.finalize_own(runner, outcome, now, limit);
                if runner == 0 {
                    // Runner 0 (none) finalizes nothing and scans nothing.
                    prop_assert_eq!(page, Page::default());
                    prop_assert_eq!(reference.finalize_own_all(runner, outcome, now), 0);
                } else {
                    let expected = if limit == 0 {
                        0
                    } else {
                        reference.finalize_own_all(runner, outcome, now)
                    };
                    prop_assert_eq!(page, expected_page(limit, capacity, expected));
                }
            }
            Op::SweepOrphans { quiet, limit } => {
                let limit = limit.of(capacity);
                let expected = if limit == 0 {
                    0
                } else {
                    reference.sweep_orphans_all(now, quiet)
                };
                prop_assert_eq!(
                    ledger.sweep_orphans(now, quiet, limit),
                    expected_page(limit, capacity, expected)
                );
            }
        }
        for k in &keys {
            prop_assert_eq!(ledger.get(k), reference.get(k), "get({:?})", k);
        }
        prop_assert_eq!(ledger.len(), reference.len());
        prop_assert!(ledger.len() <= capacity);
        assert_same_counts(&ledger, &reference)?;
    }
    assert_same_counts(&ledger, &reference)
}

#[derive(Clone, Debug)]
enum WindowOp {
    Increment(u64, u64),
    Count(u64),
    WindowEnd(u64),
}

/// Small times, so windows start, grow and end often, and times at the top of the range.
fn window_time() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..40,
        1 => (WINDOW_TIME_MAX - 20)..=WINDOW_TIME_MAX,
        1 => Just(u64::MAX),
    ]
}

fn window_len() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..15,
        1 => Just(WINDOW_TIME_MAX),
        1 => Just(WINDOW_TIME_MAX + 1),
        1 => Just(u64::MAX),
    ]
}

fn window_op() -> impl Strategy<Value = WindowOp> {
    prop_oneof![
        4 => (window_time(), window_len()).prop_map(|(n, w)| WindowOp::Increment(n, w)),
        1 => window_time().prop_map(WindowOp::Count),
        1 => window_time().prop_map(WindowOp::WindowEnd),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn ledger_matches_its_reference(
        capacity in 1usize..=5,
        retention in 0u64..=20,
        kind in prop_oneof![
            Just(LedgerKind::Claim),
            Just(LedgerKind::Pending),
            Just(LedgerKind::Handoff),
        ],
        ops in prop::collection::vec((0u64..4, op()), 1..60),
    ) {
        ledger_matches_reference(capacity, retention, kind, ops)?;
    }

    #[test]
    fn windowed_counter_matches_its_reference(
        ops in prop::collection::vec(window_op(), 1..60),
    ) {
        let counter = WindowedCounter::new();
        let reference = MutexWindowedCounter::new();
        for op in ops {
            match op {
                WindowOp::Increment(n, w) => {
                    prop_assert_eq!(counter.increment(n, w), reference.increment(n, w))
                }
                WindowOp::Count(n) => prop_assert_eq!(counter.count(n), reference.count(n)),
                WindowOp::WindowEnd(n) => {
                    prop_assert_eq!(counter.window_end(n), reference.window_end(n))
                }
            }
        }
    }
}

/// The count saturates at `WINDOW_COUNT_MAX` on both, and the window still ends.
#[test]
fn windowed_counter_saturates_like_its_reference() {
    let counter = WindowedCounter::new();
    let reference = MutexWindowedCounter::new();
    for _ in 0..WINDOW_COUNT_MAX as u64 + 3 {
        assert_eq!(counter.increment(5, 10), reference.increment(5, 10));
    }
    assert_eq!(counter.count(14), WINDOW_COUNT_MAX);
    assert_eq!(reference.count(14), WINDOW_COUNT_MAX);
    assert_eq!(counter.increment(15, 10), Ok(1));
    assert_eq!(reference.increment(15, 10), Ok(1));
}

/// `Outcome::Host` holds a [`HostCode`], which cannot be built below `HOST_OUTCOME_MIN`: a
/// finalization with a host code always reads back as that code. (When `Host` held a bare `u16`,
/// `Host(5)` won a finalization and left a record that read as no state, and a later insert of
/// its key spun forever; `Host(1)` read back as `Succeeded`.)
#[test]
fn host_outcomes_below_the_host_range_cannot_be_built_and_host_codes_read_back() {
    for code in [0u16, 1, 4, 5, 255] {
        assert_eq!(HostCode::new(code), None, "{code}");
    }
    for code in [HOST_OUTCOME_MIN, 300, u16::MAX] {
        let registry = Registry::new();
        let ledger = Ledger::<ByteKey>::with_metrics(
            LedgerConfig {
                capacity: 2,
                retention: 0,
                kind: LedgerKind::Pending,
            },
            &registry,
        )
        .unwrap();
        let key = ByteKey::new(b"a").unwrap();
        let record = NewRecord {
            id: 1,
            runner: 0,
            deadline: u64::MAX,
        };
        let outcome = Outcome::Host(HostCode::new(code).unwrap());
        ledger.insert(&key, record, 0).unwrap();
        assert_eq!(ledger.finalize(&key, outcome, 0, 1), Ok(()));
        assert_eq!(
            ledger.get(&key).map(|v| v.state),
            Some(wkcore::coord::RecordState::Finalized(outcome))
        );
        assert_eq!(
            ledger.insert(&key, record, 2),
            Err(wkcore::coord::InsertError::Exists(
                wkcore::coord::RecordState::Finalized(outcome)
            ))
        );
    }
}
