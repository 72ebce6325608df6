//! Replays `testdata/coord/scenarios.json` (format: `testdata/coord/README.md`) through the
//! contract against both backends: every scenario in memory (pages compared in full), and those
//! whose `memory_only` is null against PostgreSQL, expecting the same decisions and comparing
//! pages on `changed` only (`scanned` and `wrapped` describe the in-memory slab walk).

use serde::Deserialize;
use serde_json::Value;
use wkcore::coord::{HostCode, LedgerConfig, LedgerKind};
use wkcore_coordpg::contract::{
    AnchorStore, AnchorTableError, Counts, Decision, Error, Fire, HandoffKey, HandoffStore,
    LedgerStore, NewRecord, Outcome, Page, RecordState, RecordView, Verdict,
};
use wkcore_coordpg::memory::{MemoryAnchors, MemoryHandoffs, MemoryLedger};
use wkcore_coordpg::pg::{Options, Store};

use crate::common;

const SCENARIOS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/coord/scenarios.json"
);
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
struct DecisionJ {
    result: ResultJ,
    state: StateJ,
    #[serde(deserialize_with = "Option::deserialize")]
    outcome: Option<OutcomeJ>,
}

fn state_j(state: Option<RecordState>) -> (StateJ, Option<OutcomeJ>) {
    match state {
        None => (StateJ::None, None),
        Some(RecordState::Placed) => (StateJ::Placed, None),
        Some(RecordState::Claimed) => (StateJ::Claimed, None),
        Some(RecordState::Finalized(o)) => (StateJ::Finalized, Some(OutcomeJ(o))),
    }
}

impl From<Decision> for DecisionJ {
    fn from(d: Decision) -> Self {
        let result = match d.result {
            Verdict::Won => ResultJ::Won,
            Verdict::Lost => ResultJ::Lost,
            Verdict::Duplicate => ResultJ::Duplicate,
            Verdict::NotFound => ResultJ::NotFound,
            Verdict::Full => ResultJ::Full,
            Verdict::Mismatch => ResultJ::Mismatch,
        };
        let (state, outcome) = state_j(d.state);
        DecisionJ {
            result,
            state,
            outcome,
        }
    }
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct PageJ {
    scanned: usize,
    changed: usize,
    wrapped: bool,
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
        let (state, outcome) = state_j(Some(v.state));
        RecordJ {
            state,
            outcome,
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

impl From<Counts> for CountsJ {
    fn from(c: Counts) -> Self {
        CountsJ {
            claims_won: c.claims_won,
            claims_lost: c.claims_lost,
            finalizations_won: c.finalizations_won,
            finalizations_duplicate: c.finalizations_duplicate,
            reconciled_timeouts: c.reconciled_timeouts,
            rejected_full: c.rejected_full,
            reclaimed: c.reclaimed,
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
        expect: DecisionJ,
    },
    Place {
        keys: Vec<String>,
        placeholder: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Vec<DecisionJ>,
        placed: usize,
    },
    Claim {
        key: String,
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
        expect: DecisionJ,
    },
    Finalize {
        key: String,
        outcome: OutcomeJ,
        payload: u64,
        now: u64,
        expect: DecisionJ,
    },
    FinalizeBatch {
        keys: Vec<String>,
        payloads: Vec<u64>,
        outcome: OutcomeJ,
        now: u64,
        expect: Vec<DecisionJ>,
        won: usize,
    },
    Take {
        key: String,
        id: u64,
        expect: DecisionJ,
    },
    Touch {
        key: String,
        runner: u64,
        now: u64,
        expect: DecisionJ,
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

/// How pages are compared: in full (memory) or on `changed` (PostgreSQL).
#[derive(Clone, Copy)]
enum Pages {
    Full,
    Changed,
}

fn page_ok(got: Result<Page, Error>, want: &PageJ, pages: Pages) -> bool {
    let p = got.unwrap_or_else(|e| panic!("a page: {e}"));
    match pages {
        Pages::Full => {
            p.scanned == want.scanned && p.changed == want.changed && p.wrapped == want.wrapped
        }
        Pages::Changed => p.changed == want.changed,
    }
}

fn dec(r: Result<Decision, Error>) -> DecisionJ {
    DecisionJ::from(r.unwrap_or_else(|e| panic!("a decision: {e}")))
}

async fn run_ledger(
    l: &impl LedgerStore,
    pages: Pages,
    steps: &[Value],
    fail: &mut dyn FnMut(usize, &str),
) {
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
                let rec = NewRecord {
                    id,
                    runner,
                    deadline: never(deadline),
                };
                dec(l.insert(key.as_bytes(), rec, now).await) == expect
            }
            LedgerStep::Place {
                keys,
                placeholder,
                deadline,
                now,
                expect,
                placed,
            } => {
                let ks: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
                let b = l
                    .place(&ks, placeholder, never(deadline), now)
                    .await
                    .unwrap_or_else(|e| panic!("place: {e}"));
                let got: Vec<DecisionJ> = b.decisions.into_iter().map(DecisionJ::from).collect();
                got == expect && b.won == placed
            }
            LedgerStep::Claim {
                key,
                placeholder,
                request_id,
                runner,
                now,
                expect,
            } => {
                dec(l
                    .claim(key.as_bytes(), placeholder, request_id, runner, now)
                    .await)
                    == expect
            }
            LedgerStep::Finalize {
                key,
                outcome,
                payload,
                now,
                expect,
            } => dec(l.finalize(key.as_bytes(), outcome.0, payload, now).await) == expect,
            LedgerStep::FinalizeBatch {
                keys,
                payloads,
                outcome,
                now,
                expect,
                won,
            } => {
                let ks: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
                let b = l
                    .finalize_batch(&ks, Some(&payloads), outcome.0, now)
                    .await
                    .unwrap_or_else(|e| panic!("finalize_batch: {e}"));
                let got: Vec<DecisionJ> = b.decisions.into_iter().map(DecisionJ::from).collect();
                got == expect && b.won == won
            }
            LedgerStep::Take { key, id, expect } => dec(l.take(key.as_bytes(), id).await) == expect,
            LedgerStep::Touch {
                key,
                runner,
                now,
                expect,
            } => dec(l.touch(key.as_bytes(), runner, now).await) == expect,
            LedgerStep::Reconcile { now, limit, expect } => {
                page_ok(l.reconcile(now, limit).await, &expect, pages)
            }
            LedgerStep::Reclaim { now, limit, expect } => {
                page_ok(l.reclaim(now, limit).await, &expect, pages)
            }
            LedgerStep::FinalizeOwn {
                runner,
                outcome,
                now,
                limit,
                expect,
            } => page_ok(
                l.finalize_own(runner, outcome.0, now, limit).await,
                &expect,
                pages,
            ),
            LedgerStep::SweepOrphans {
                now,
                quiet,
                limit,
                expect,
            } => page_ok(l.sweep_orphans(now, quiet, limit).await, &expect, pages),
            LedgerStep::Get { key, expect } => {
                l.get(key.as_bytes()).await.expect("get").map(RecordJ::from) == expect
            }
            LedgerStep::Len { expect } => l.len().await.expect("len") == expect,
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
        expect: DecisionJ,
    },
    ClaimBatch {
        keys: Vec<HandoffKeyJ>,
        #[serde(deserialize_with = "Option::deserialize")]
        deadline: Option<u64>,
        now: u64,
        expect: Vec<DecisionJ>,
        won: usize,
    },
    Complete {
        key: HandoffKeyJ,
        outcome: OutcomeJ,
        now: u64,
        expect: DecisionJ,
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

async fn run_handoff(
    l: &impl HandoffStore,
    pages: Pages,
    steps: &[Value],
    fail: &mut dyn FnMut(usize, &str),
) {
    for (i, raw) in steps.iter().enumerate() {
        let step: HandoffStep =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("step {i}: {e}: {raw}"));
        let ok = match step {
            HandoffStep::Claim {
                key,
                deadline,
                now,
                expect,
            } => dec(l.claim(&key.key(), never(deadline), now).await) == expect,
            HandoffStep::ClaimBatch {
                keys,
                deadline,
                now,
                expect,
                won,
            } => {
                let ks: Vec<HandoffKey> = keys.iter().map(HandoffKeyJ::key).collect();
                let b = l
                    .claim_batch(&ks, never(deadline), now)
                    .await
                    .unwrap_or_else(|e| panic!("claim_batch: {e}"));
                let got: Vec<DecisionJ> = b.decisions.into_iter().map(DecisionJ::from).collect();
                got == expect && b.won == won
            }
            HandoffStep::Complete {
                key,
                outcome,
                now,
                expect,
            } => dec(l.complete(&key.key(), outcome.0, now).await) == expect,
            HandoffStep::Reconcile { now, limit, expect } => {
                page_ok(l.reconcile(now, limit).await, &expect, pages)
            }
            HandoffStep::Reclaim { now, limit, expect } => {
                page_ok(l.reclaim(now, limit).await, &expect, pages)
            }
            HandoffStep::Get { key, expect } => {
                l.get(&key.key()).await.expect("get").map(RecordJ::from) == expect
            }
            HandoffStep::Len { expect } => l.len().await.expect("len") == expect,
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

fn table_status(r: Result<(), Error>) -> String {
    match r {
        Ok(()) => "ok",
        Err(Error::Anchor(AnchorTableError::Exists)) => "already_exists",
        Err(Error::Anchor(AnchorTableError::Full)) => "full",
        Err(Error::Anchor(AnchorTableError::NotFound)) => "not_found",
        Err(e) => panic!("unexpected {e}"),
    }
    .to_string()
}

fn value_or_not_found<T>(r: Result<T, Error>, f: impl FnOnce(T) -> Value) -> Value {
    match r {
        Ok(v) => f(v),
        Err(Error::Anchor(AnchorTableError::NotFound)) => Value::String("not_found".into()),
        Err(e) => panic!("unexpected {e}"),
    }
}

async fn run_anchors(t: &impl AnchorStore, steps: &[Value], fail: &mut dyn FnMut(usize, &str)) {
    for (i, raw) in steps.iter().enumerate() {
        let step: AnchorStep =
            serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("step {i}: {e}: {raw}"));
        let ok = match step {
            AnchorStep::Insert { id, value, expect } => {
                assert!(["ok", "already_exists", "full"].contains(&expect.as_str()));
                table_status(t.insert(id, value).await) == expect
            }
            AnchorStep::Remove { id, expect } => {
                assert!(["ok", "not_found"].contains(&expect.as_str()));
                table_status(t.remove(id).await) == expect
            }
            AnchorStep::TryFire {
                id,
                now,
                period,
                expect,
            } => {
                let got = value_or_not_found(t.try_fire(id, now, period).await, |f| {
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
            } => value_or_not_found(t.advance(id, expected, next).await, Value::Bool) == expect,
            AnchorStep::AnchorUnset { id, now, expect } => {
                value_or_not_found(t.anchor_unset(id, now).await, Value::Bool) == expect
            }
            AnchorStep::Get { id, expect } => {
                value_or_not_found(t.get(id).await, |v| serde_json::json!(v)) == expect
            }
        };
        if !ok {
            fail(i, &format!("{raw}"));
        }
    }
}

/// Which backend a replay runs on.
enum Backend<'a> {
    Memory,
    Pg(&'a Store),
}

async fn replay(backend: Backend<'_>) -> usize {
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
    let mut ran = 0;
    for raw in file.scenarios {
        let s: Scenario = serde_json::from_value(raw).expect("a scenario");
        assert!(names.insert(s.name.clone()), "{} twice", s.name);
        let name = s.name.clone();
        let mut fail = |i: usize, step: &str| failures.push(format!("{name}: step {i}: {step}"));
        match &backend {
            Backend::Memory => {
                ran += 1;
                match s.subject {
                    Subject::Ledger => {
                        let c: LedgerCfg = serde_json::from_value(s.config).expect("config");
                        let l = MemoryLedger::new(ledger_config(&c)).expect("a ledger");
                        run_ledger(&l, Pages::Full, &s.steps, &mut fail).await;
                    }
                    Subject::Handoff => {
                        let c: HandoffCfg = serde_json::from_value(s.config).expect("config");
                        let l = MemoryHandoffs::new(c.capacity, c.retention).expect("a ledger");
                        run_handoff(&l, Pages::Full, &s.steps, &mut fail).await;
                    }
                    Subject::Anchors => {
                        let c: AnchorCfg = serde_json::from_value(s.config).expect("config");
                        let t = MemoryAnchors::new(c.capacity).expect("a table");
                        run_anchors(&t, &s.steps, &mut fail).await;
                    }
                }
            }
            Backend::Pg(store) => {
                if s.memory_only.is_some() {
                    continue;
                }
                ran += 1;
                let n = common::unique("sc");
                match s.subject {
                    Subject::Ledger => {
                        let c: LedgerCfg = serde_json::from_value(s.config).expect("config");
                        let l = store.ledger(&n, ledger_config(&c)).expect("a ledger");
                        run_ledger(&l, Pages::Changed, &s.steps, &mut fail).await;
                    }
                    Subject::Handoff => {
                        let c: HandoffCfg = serde_json::from_value(s.config).expect("config");
                        let l = store
                            .handoffs(&n, c.capacity, c.retention)
                            .expect("hand-offs");
                        run_handoff(&l, Pages::Changed, &s.steps, &mut fail).await;
                    }
                    Subject::Anchors => {
                        let c: AnchorCfg = serde_json::from_value(s.config).expect("config");
                        let t = store.anchors(&n, c.capacity).expect("a table");
                        run_anchors(&t, &s.steps, &mut fail).await;
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    ran
}

fn ledger_config(c: &LedgerCfg) -> LedgerConfig {
    LedgerConfig {
        capacity: c.capacity,
        retention: c.retention,
        kind: match c.kind {
            KindJ::Claim => LedgerKind::Claim,
            KindJ::Pending => LedgerKind::Pending,
        },
    }
}

#[tokio::test]
async fn scenarios_replay_in_memory() {
    let ran = replay(Backend::Memory).await;
    assert!(ran >= MIN_SCENARIOS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_replay_on_postgres() {
    let Some(store) = common::store(Options::default()).await else {
        return;
    };
    let ran = replay(Backend::Pg(&store)).await;
    assert!(ran > 0, "no scenario ran on PostgreSQL");
}
