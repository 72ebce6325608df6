//! Replays `testdata/coord/scenarios.json`, the coordination scenarios shared by the Rust, Go
//! and C++ suites (format: `testdata/coord/README.md`), against the core types.
//!
//! The file is parsed strictly (unknown, missing or duplicate fields and unknown names fail), then
//! every scenario runs on a fresh ledger, hand-off ledger or anchor table; a mismatch names the
//! scenario, the step's index and the step's JSON. Core results are mapped to decisions with the
//! table of the format's README, the same mapping the C ABI makes.

use serde::Deserialize;
use serde_json::Value;
use wkcore::coord::{
    AnchorTable, AnchorTableError, ByteKey, ClaimError, FinalizeError, Fire, HandoffKey, HostCode,
    InsertError, Ledger, LedgerConfig, LedgerCounts, LedgerEvent, LedgerKind, NewRecord, Outcome,
    Page, RecordState, RecordView, TakeError, TouchError,
};
use wkcore::metrics::Registry;

const SCENARIOS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/coord/scenarios.json"
);

/// How many scenarios the file holds at least.
const MIN_SCENARIOS: usize = 17;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    system: String,
    scenarios: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    #[allow(dead_code)]
    upstream: String,
    subject: Subject,
    /// null, or why the scenario depends on the in-memory backend (slot order, capacity): the
    /// PostgreSQL replay (go/coordpg) skips those; every scenario runs here.
    #[allow(dead_code)]
    memory_only: Option<String>,
    config: Value,
    steps: Vec<Value>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Subject {
    Ledger,
    Handoff,
    Anchors,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LedgerCfg {
    kind: KindJ,
    capacity: usize,
    retention: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandoffCfg {
    capacity: usize,
    retention: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnchorCfg {
    capacity: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum KindJ {
    Claim,
    Pending,
}

/// An outcome: a name, or a host code 256..=65535.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OutcomeJ(Outcome);

impl<'de> Deserialize<'de> for OutcomeJ {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let o = match &v {
            Value::String(s) => match s.as_str() {
                "succeeded" => Outcome::Succeeded,
                "failed" => Outcome::Failed,
                "timed_out" => Outcome::TimedOut,
                "orphaned" => Outcome::Orphaned,
                _ => return Err(D::Error::custom(format!("unknown outcome {s:?}"))),
            },
            Value::Number(n) => match n.as_u64().and_then(|c| u16::try_from(c).ok()) {
                Some(c) if c >= 256 => Outcome::Host(HostCode::new(c).unwrap()),
                _ => return Err(D::Error::custom(format!("bad host outcome {n}"))),
            },
            _ => return Err(D::Error::custom("outcome must be a name or a number")),
        };
        Ok(OutcomeJ(o))
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ResultJ {
    Won,
    Lost,
    Duplicate,
    NotFound,
    Full,
    Mismatch,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum StateJ {
    None,
    Placed,
    Claimed,
    Finalized,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Decision {
    result: ResultJ,
    state: StateJ,
    #[serde(deserialize_with = "Option::deserialize")]
    outcome: Option<OutcomeJ>,
}

impl Decision {
    fn new(result: ResultJ, state: Option<RecordState>) -> Self {
        let (state, outcome) = match state {
            None => (StateJ::None, None),
            Some(RecordState::Placed) => (StateJ::Placed, None),
            Some(RecordState::Claimed) => (StateJ::Claimed, None),
            Some(RecordState::Finalized(o)) => (StateJ::Finalized, Some(OutcomeJ(o))),
        };
        Decision {
            result,
            state,
            outcome,
        }
    }

    fn insert(r: Result<(), InsertError>) -> Self {
        match r {
            Ok(()) => Self::new(ResultJ::Won, Some(RecordState::Placed)),
            Err(InsertError::Full) => Self::new(ResultJ::Full, None),
            Err(InsertError::Exists(s)) if s.is_pending() => Self::new(ResultJ::Lost, Some(s)),
            Err(InsertError::Exists(s)) => Self::new(ResultJ::Duplicate, Some(s)),
            Err(InsertError::InvalidTime) => panic!("the file uses no reserved time"),
        }
    }

    fn claim(r: Result<(), ClaimError>) -> Self {
        match r {
            Ok(()) => Self::new(ResultJ::Won, Some(RecordState::Claimed)),
            Err(ClaimError::Lost) => Self::new(ResultJ::Lost, Some(RecordState::Claimed)),
            Err(ClaimError::PlaceholderMismatch) => {
                Self::new(ResultJ::Mismatch, Some(RecordState::Placed))
            }
            Err(ClaimError::Finalized(o)) => {
                Self::new(ResultJ::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(ClaimError::NotFound) => Self::new(ResultJ::NotFound, None),
        }
    }

    fn finalize(r: Result<(), FinalizeError>, outcome: Outcome) -> Self {
        match r {
            Ok(()) => Self::new(ResultJ::Won, Some(RecordState::Finalized(outcome))),
            Err(FinalizeError::Duplicate(o)) => {
                Self::new(ResultJ::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(FinalizeError::NotFound) => Self::new(ResultJ::NotFound, None),
        }
    }

    /// A take's result and the state it decided on (`Ledger::take_with_state`).
    fn take((r, state): (Result<(), TakeError>, Option<RecordState>)) -> Self {
        let result = match r {
            Ok(()) => ResultJ::Won,
            Err(TakeError::Mismatch) => ResultJ::Mismatch,
            Err(TakeError::Finalized(_)) => ResultJ::Duplicate,
            Err(TakeError::NotFound) => ResultJ::NotFound,
        };
        Self::new(result, state)
    }

    /// A heartbeat's result and the state it decided on (`Ledger::touch_with_state`).
    fn touch((r, state): (Result<(), TouchError>, Option<RecordState>)) -> Self {
        let result = match r {
            Ok(()) => ResultJ::Won,
            Err(TouchError::NotRunner) => ResultJ::Mismatch,
            Err(TouchError::Finalized(_)) => ResultJ::Duplicate,
            Err(TouchError::NotFound) => ResultJ::NotFound,
        };
        Self::new(result, state)
    }
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct PageJ {
    scanned: usize,
    changed: usize,
    wrapped: bool,
}

impl From<Page> for PageJ {
    fn from(p: Page) -> Self {
        PageJ {
            scanned: p.scanned,
            changed: p.changed,
            wrapped: p.wrapped,
        }
    }
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct RecordJ {
    state: StateJ,
    #[serde(deserialize_with = "Option::deserialize")]
    outcome: Option<OutcomeJ>,
    id: u64,
    runner: u64,
    #[serde(deserialize_with = "Option::deserialize")]
    deadline: Option<u64>,
    refreshed_at: u64,
    #[serde(deserialize_with = "Option::deserialize")]
    finalized_at: Option<u64>,
    payload: u64,
    duplicates: u64,
    last_duplicate_payload: u64,
}

impl From<RecordView> for RecordJ {
    fn from(v: RecordView) -> Self {
        let d = Decision::new(ResultJ::Won, Some(v.state));
        RecordJ {
            state: d.state,
            outcome: d.outcome,
            id: v.id,
            runner: v.runner,
            deadline: (v.deadline != u64::MAX).then_some(v.deadline),
            refreshed_at: v.refreshed_at,
            finalized_at: v.finalized_at,
            payload: v.payload,
            duplicates: v.duplicates,
            last_duplicate_payload: v.last_duplicate_payload,
        }
    }
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct CountsJ {
    claims_won: u64,
    claims_lost: u64,
    finalizations_won: u64,
    finalizations_duplicate: u64,
    reconciled_timeouts: u64,
    rejected_full: u64,
    reclaimed: u64,
}

impl From<LedgerCounts> for CountsJ {
    fn from(c: LedgerCounts) -> Self {
        CountsJ {
            claims_won: c.get(LedgerEvent::ClaimWon),
            claims_lost: c.get(LedgerEvent::ClaimLost),
            finalizations_won: c.get(LedgerEvent::FinalizeWon),
            finalizations_duplicate: c.get(LedgerEvent::FinalizeDuplicate),
            reconciled_timeouts: c.get(LedgerEvent::ReconciledTimeout),
            rejected_full: c.get(LedgerEvent::RejectedFull),
            reclaimed: c.get(LedgerEvent::Reclaimed),
        }
    }
}

fn never(deadline: Option<u64>) -> u64 {
    deadline.unwrap_or(u64::MAX)
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum LedgerStep {
    Insert {
        key: String,
        id: u64,
        runner: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Decision,
    },
    Place {
        keys: Vec<String>,
        placeholder: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Vec<Decision>,
        placed: usize,
    },
    Claim {
        key: String,
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
        expect: Decision,
    },
    Finalize {
        key: String,
        outcome: OutcomeJ,
        payload: u64,
        now: u64,
        expect: Decision,
    },
    FinalizeBatch {
        keys: Vec<String>,
        payloads: Vec<u64>,
        outcome: OutcomeJ,
        now: u64,
        expect: Vec<Decision>,
        won: usize,
    },
    Take {
        key: String,
        id: u64,
        expect: Decision,
    },
    Touch {
        key: String,
        runner: u64,
        now: u64,
        expect: Decision,
    },
    Reconcile {
        now: u64,
        limit: usize,
        expect: PageJ,
    },
    Reclaim {
        now: u64,
        limit: usize,
        expect: PageJ,
    },
    FinalizeOwn {
        runner: u64,
        outcome: OutcomeJ,
        now: u64,
        limit: usize,
        expect: PageJ,
    },
    SweepOrphans {
        now: u64,
        quiet: u64,
        limit: usize,
        expect: PageJ,
    },
    Get {
        key: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<RecordJ>,
    },
    Len {
        expect: usize,
    },
    Counts {
        expect: CountsJ,
    },
}

fn bk(s: &str) -> ByteKey {
    ByteKey::new(s.as_bytes()).expect("a valid key")
}

fn run_ledger(config: Value, steps: &[Value], fail: &dyn Fn(usize, &str)) {
    let cfg: LedgerCfg = serde_json::from_value(config).expect("ledger config");
    let registry = Registry::new();
    let kind = match cfg.kind {
        KindJ::Claim => LedgerKind::Claim,
        KindJ::Pending => LedgerKind::Pending,
    };
    let l = Ledger::<ByteKey>::with_metrics(
        LedgerConfig {
            capacity: cfg.capacity,
            retention: cfg.retention,
            kind,
        },
        &registry,
    )
    .expect("a valid config");
    for (i, raw) in steps.iter().enumerate() {
        let step: LedgerStep =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("step {i}: {e}: {raw}"));
        let ok = match step {
            LedgerStep::Insert {
                key,
                id,
                runner,
                deadline,
                now,
                expect,
            } => {
                let r = l.insert(
                    &bk(&key),
                    NewRecord {
                        id,
                        runner,
                        deadline: never(deadline),
                    },
                    now,
                );
                Decision::insert(r) == expect
            }
            LedgerStep::Place {
                keys,
                placeholder,
                deadline,
                now,
                expect,
                placed,
            } => {
                assert!(!keys.is_empty() && keys.len() == expect.len(), "step {i}");
                let keys: Vec<ByteKey> = keys.iter().map(|k| bk(k)).collect();
                let mut out = vec![Ok(()); keys.len()];
                let (got, n) = match l.place(&keys, placeholder, never(deadline), now, &mut out) {
                    Ok(n) => (out.into_iter().map(Decision::insert).collect::<Vec<_>>(), n),
                    Err(e) => (vec![Decision::insert(Err(e)); keys.len()], 0),
                };
                got == expect && n == placed
            }
            LedgerStep::Claim {
                key,
                placeholder,
                request_id,
                runner,
                now,
                expect,
            } => {
                Decision::claim(l.claim(&bk(&key), placeholder, request_id, runner, now)) == expect
            }
            LedgerStep::Finalize {
                key,
                outcome,
                payload,
                now,
                expect,
            } => {
                Decision::finalize(l.finalize(&bk(&key), outcome.0, payload, now), outcome.0)
                    == expect
            }
            LedgerStep::FinalizeBatch {
                keys,
                payloads,
                outcome,
                now,
                expect,
                won,
            } => {
                assert!(
                    !keys.is_empty() && keys.len() == payloads.len() && keys.len() == expect.len(),
                    "step {i}"
                );
                let keys: Vec<ByteKey> = keys.iter().map(|k| bk(k)).collect();
                let mut out = vec![Ok(()); keys.len()];
                let n = l.finalize_batch(&keys, &payloads, outcome.0, now, &mut out);
                let got: Vec<Decision> = out
                    .into_iter()
                    .map(|r| Decision::finalize(r, outcome.0))
                    .collect();
                got == expect && n == won
            }
            LedgerStep::Take { key, id, expect } => {
                Decision::take(l.take_with_state(&bk(&key), id)) == expect
            }
            LedgerStep::Touch {
                key,
                runner,
                now,
                expect,
            } => Decision::touch(l.touch_with_state(&bk(&key), runner, now)) == expect,
            LedgerStep::Reconcile { now, limit, expect } => {
                PageJ::from(l.reconcile(now, limit)) == expect
            }
            LedgerStep::Reclaim { now, limit, expect } => {
                PageJ::from(l.reclaim(now, limit)) == expect
            }
            LedgerStep::FinalizeOwn {
                runner,
                outcome,
                now,
                limit,
                expect,
            } => PageJ::from(l.finalize_own(runner, outcome.0, now, limit)) == expect,
            LedgerStep::SweepOrphans {
                now,
                quiet,
                limit,
                expect,
            } => PageJ::from(l.sweep_orphans(now, quiet, limit)) == expect,
            LedgerStep::Get { key, expect } => l.get(&bk(&key)).map(RecordJ::from) == expect,
            LedgerStep::Len { expect } => l.len() == expect,
            LedgerStep::Counts { expect } => CountsJ::from(l.counts()) == expect,
        };
        if !ok {
            fail(i, &format!("{raw}"));
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandoffKeyJ {
    channel_id: String,
    channel_type: u8,
    message_id: u64,
    target_node_id: u64,
    tag_key: String,
    tag_version: u64,
}

impl HandoffKeyJ {
    fn key(&self) -> HandoffKey {
        HandoffKey::new(
            self.channel_id.as_bytes(),
            self.channel_type,
            self.message_id,
            self.target_node_id,
            self.tag_key.as_bytes(),
            self.tag_version,
        )
        .expect("a valid hand-off key")
    }
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum HandoffStep {
    Claim {
        key: HandoffKeyJ,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Decision,
    },
    ClaimBatch {
        keys: Vec<HandoffKeyJ>,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Vec<Decision>,
        won: usize,
    },
    Complete {
        key: HandoffKeyJ,
        outcome: OutcomeJ,
        now: u64,
        expect: Decision,
    },
    Reconcile {
        now: u64,
        limit: usize,
        expect: PageJ,
    },
    Reclaim {
        now: u64,
        limit: usize,
        expect: PageJ,
    },
    Get {
        key: HandoffKeyJ,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<RecordJ>,
    },
    Len {
        expect: usize,
    },
    Counts {
        expect: CountsJ,
    },
}

fn run_handoff(config: Value, steps: &[Value], fail: &dyn Fn(usize, &str)) {
    let cfg: HandoffCfg = serde_json::from_value(config).expect("hand-off config");
    let registry = Registry::new();
    let l = Ledger::<HandoffKey>::with_metrics(
        LedgerConfig {
            capacity: cfg.capacity,
            retention: cfg.retention,
            kind: LedgerKind::Handoff,
        },
        &registry,
    )
    .expect("a valid config");
    let record = |deadline| NewRecord {
        id: 0,
        runner: 0,
        deadline: never(deadline),
    };
    for (i, raw) in steps.iter().enumerate() {
        let step: HandoffStep =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("step {i}: {e}: {raw}"));
        let ok = match step {
            HandoffStep::Claim {
                key,
                deadline,
                now,
                expect,
            } => Decision::insert(l.insert(&key.key(), record(deadline), now)) == expect,
            HandoffStep::ClaimBatch {
                keys,
                deadline,
                now,
                expect,
                won,
            } => {
                assert!(!keys.is_empty() && keys.len() == expect.len(), "step {i}");
                let got: Vec<Decision> = keys
                    .iter()
                    .map(|k| Decision::insert(l.insert(&k.key(), record(deadline), now)))
                    .collect();
                let n = got.iter().filter(|d| d.result == ResultJ::Won).count();
                got == expect && n == won
            }
            HandoffStep::Complete {
                key,
                outcome,
                now,
                expect,
            } => Decision::finalize(l.finalize(&key.key(), outcome.0, 0, now), outcome.0) == expect,
            HandoffStep::Reconcile { now, limit, expect } => {
                PageJ::from(l.reconcile(now, limit)) == expect
            }
            HandoffStep::Reclaim { now, limit, expect } => {
                PageJ::from(l.reclaim(now, limit)) == expect
            }
            HandoffStep::Get { key, expect } => l.get(&key.key()).map(RecordJ::from) == expect,
            HandoffStep::Len { expect } => l.len() == expect,
            HandoffStep::Counts { expect } => CountsJ::from(l.counts()) == expect,
        };
        if !ok {
            fail(i, &format!("{raw}"));
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum AnchorStep {
    Insert {
        id: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        value: Option<u64>,
        expect: String,
    },
    Remove {
        id: u64,
        expect: String,
    },
    TryFire {
        id: u64,
        now: u64,
        period: u64,
        expect: Value,
    },
    Advance {
        id: u64,
        expected: u64,
        next: u64,
        expect: Value,
    },
    AnchorUnset {
        id: u64,
        now: u64,
        expect: Value,
    },
    Get {
        id: u64,
        expect: Value,
    },
}

fn table_status(r: Result<(), AnchorTableError>) -> String {
    match r {
        Ok(()) => "ok",
        Err(AnchorTableError::Exists) => "already_exists",
        Err(AnchorTableError::Full) => "full",
        Err(AnchorTableError::NotFound) => "not_found",
        Err(e) => panic!("unexpected {e:?}"),
    }
    .to_string()
}

fn value_or_not_found<T>(r: Result<T, AnchorTableError>, f: impl FnOnce(T) -> Value) -> Value {
    match r {
        Ok(v) => f(v),
        Err(AnchorTableError::NotFound) => Value::String("not_found".into()),
        Err(e) => panic!("unexpected {e:?}"),
    }
}

fn run_anchors(config: Value, steps: &[Value], fail: &dyn Fn(usize, &str)) {
    let cfg: AnchorCfg = serde_json::from_value(config).expect("anchor config");
    let t = AnchorTable::new(cfg.capacity).expect("a valid capacity");
    for (i, raw) in steps.iter().enumerate() {
        let step: AnchorStep =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("step {i}: {e}: {raw}"));
        let ok = match step {
            AnchorStep::Insert { id, value, expect } => {
                assert!(["ok", "already_exists", "full"].contains(&expect.as_str()));
                table_status(t.insert(id, value)) == expect
            }
            AnchorStep::Remove { id, expect } => {
                assert!(["ok", "not_found"].contains(&expect.as_str()));
                table_status(t.remove(id)) == expect
            }
            AnchorStep::TryFire {
                id,
                now,
                period,
                expect,
            } => {
                let got = value_or_not_found(t.try_fire(id, now, period), |f| {
                    let (kind, value) = match f {
                        Fire::Fired { previous } => ("fired", previous),
                        Fire::NotDue { due_at } => ("not_due", due_at),
                        Fire::Lost => ("lost", 0),
                        Fire::AnchoredFirstSeen => ("anchored_first_seen", 0),
                    };
                    serde_json::json!({"kind": kind, "value": value})
                });
                got == expect
            }
            AnchorStep::Advance {
                id,
                expected,
                next,
                expect,
            } => value_or_not_found(t.advance(id, expected, next), Value::Bool) == expect,
            AnchorStep::AnchorUnset { id, now, expect } => {
                value_or_not_found(t.anchor_unset(id, now), Value::Bool) == expect
            }
            AnchorStep::Get { id, expect } => {
                value_or_not_found(t.get(id), |v| serde_json::json!(v)) == expect
            }
        };
        if !ok {
            fail(i, &format!("{raw}"));
        }
    }
}

#[test]
fn coord_scenarios_replay() {
    let file: File =
        serde_json::from_str(&std::fs::read_to_string(SCENARIOS).unwrap()).expect("the file");
    assert_eq!(file.system, "coord");
    assert!(
        file.scenarios.len() >= MIN_SCENARIOS,
        "{} scenarios, expected at least {MIN_SCENARIOS}",
        file.scenarios.len()
    );
    let mut names = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for raw in file.scenarios {
        let s: Scenario = serde_json::from_value(raw).expect("a scenario");
        assert!(names.insert(s.name.clone()), "{} twice", s.name);
        let failed = std::cell::RefCell::new(Vec::new());
        let fail = |i: usize, step: &str| {
            failed
                .borrow_mut()
                .push(format!("{}: step {i}: {step}", s.name))
        };
        match s.subject {
            Subject::Ledger => run_ledger(s.config, &s.steps, &fail),
            Subject::Handoff => run_handoff(s.config, &s.steps, &fail),
            Subject::Anchors => run_anchors(s.config, &s.steps, &fail),
        }
        failures.extend(failed.into_inner());
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
