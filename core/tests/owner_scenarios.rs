//! Replays `testdata/owner/scenarios.json`, the owner registry's scenarios shared by the Rust, Go
//! and C++ suites (format: `testdata/owner/README.md`), against the core API (`wkcore::owner`).
//!
//! The file is parsed strictly (unknown, missing or duplicate fields, unknown ops and names fail),
//! then every scenario runs on a fresh registry with a manual clock and its own metrics registry.
//! Owners and operations are named by the steps that create them; close callbacks follow their
//! scripts; background quiesces run on threads joined by `join` steps. A mismatch names the
//! scenario, the step's index and the step's JSON, and ends that scenario.

#![allow(clippy::disallowed_types)] // the replay's own atomics; the code under test uses the shim

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::owner::{
    Budget, CancelToken, Cancellation, Claim, CloseError, Operation, Owner, OwnerError,
    OwnerHandle, OwnerKey, OwnerOptions, OwnerRegistry, OwnerSnapshot,
};

const SCENARIOS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/owner/scenarios.json"
);

/// How many scenarios the file holds at least.
const MIN_SCENARIOS: usize = 24;

/// The real-time cap of an `unbounded` budget, and the longest a `join` or `close_calls` step
/// waits: no scenario comes near it, so reaching it is a failure, never an outcome.
const GUARD: Duration = Duration::from_secs(10);
/// A `brief` budget: a deadline this long after the step starts.
const BRIEF: Duration = Duration::from_millis(20);
/// How long a `pending` step waits before it checks that its task has not finished.
const PENDING_WAIT: Duration = Duration::from_millis(50);
/// The message of a scripted `panic` close (the replay's panic hook keeps it quiet).
const SCRIPTED_PANIC: &str = "scripted close panic (owner scenarios)";

// ---------------------------------------------------------------------------------------------
// The format.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    system: String,
    scenarios: Vec<Value>,
}

/// The whole file, typed, parsed straight from the text: catches duplicate fields, which a parse
/// into [`Value`] would silently drop.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictFile {
    system: String,
    scenarios: Vec<StrictScenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictScenario {
    name: String,
    upstream: String,
    config: Config,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    upstream: String,
    config: Config,
    steps: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    node_id: u64,
    boot_id: String,
    capacity: u32,
    max_operations: u32,
    pending_timeout: u64,
    max_lease: u64,
    close_retry: u64,
    start: u64,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct ClaimJ {
    namespace: String,
    client_id: String,
    uid: String,
    session_generation: u64,
    owner_generation: u64,
}

/// An identity mutation (`by_identity`): every field optional, `{}` is the exact identity.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct Mutation {
    namespace: Option<String>,
    client_id: Option<String>,
    session_generation_delta: Option<u64>,
    owner_generation_delta: Option<u64>,
    node_id: Option<u64>,
    boot_id: Option<String>,
    connection_id: Option<u64>,
    connection_id_delta: Option<u64>,
}

impl Mutation {
    fn apply(&self, base: &Owner) -> Owner {
        assert!(
            self.connection_id.is_none() || self.connection_id_delta.is_none(),
            "by_identity: connection_id and connection_id_delta together"
        );
        let mut o = base.clone();
        if let Some(s) = &self.namespace {
            o.key.namespace = s.clone();
        }
        if let Some(s) = &self.client_id {
            o.key.client_id = s.clone();
        }
        if let Some(d) = self.session_generation_delta {
            o.session_generation += d;
        }
        if let Some(d) = self.owner_generation_delta {
            o.owner_generation += d;
        }
        if let Some(n) = self.node_id {
            o.node_id = n;
        }
        if let Some(s) = &self.boot_id {
            o.boot_id = s.as_str().into();
        }
        if let Some(c) = self.connection_id {
            o.connection_id = c;
        }
        if let Some(d) = self.connection_id_delta {
            o.connection_id += d;
        }
        o
    }
}

/// A call's result: `ok` or an `OwnerError` (`WK_STATUS_OWNER_<NAME>`).
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ResultJ {
    Ok,
    Invalid,
    Fenced,
    Unknown,
    Limit,
    Stopped,
    Close,
    Canceled,
    DeadlineExceeded,
}

impl ResultJ {
    fn of<T>(r: &Result<T, OwnerError>) -> Self {
        match r {
            Ok(_) => ResultJ::Ok,
            Err(OwnerError::Invalid) => ResultJ::Invalid,
            Err(OwnerError::Fenced) => ResultJ::Fenced,
            Err(OwnerError::Unknown) => ResultJ::Unknown,
            Err(OwnerError::Limit) => ResultJ::Limit,
            Err(OwnerError::Stopped) => ResultJ::Stopped,
            Err(OwnerError::Close) => ResultJ::Close,
            Err(OwnerError::Canceled) => ResultJ::Canceled,
            Err(OwnerError::DeadlineExceeded) => ResultJ::DeadlineExceeded,
        }
    }
}

/// One scripted close outcome.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum CloseJ {
    Ok,
    Fail,
    Panic,
    Canceled,
    DeadlineExceeded,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum BudgetJ {
    Unbounded,
    Cancelled,
    Expired,
    Brief,
}

impl BudgetJ {
    fn budget(self) -> Budget {
        match self {
            BudgetJ::Unbounded => Budget::timeout(GUARD),
            BudgetJ::Cancelled => {
                let token = CancelToken::new();
                token.cancel();
                Budget::timeout(GUARD).with_cancel(token)
            }
            BudgetJ::Expired => Budget::timeout(Duration::ZERO),
            BudgetJ::Brief => Budget::timeout(BRIEF),
        }
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum CancelJ {
    Done,
    Fenced,
    Stopped,
}

impl From<Cancellation> for CancelJ {
    fn from(c: Cancellation) -> Self {
        match c {
            Cancellation::Done => CancelJ::Done,
            Cancellation::Fenced => CancelJ::Fenced,
            Cancellation::Stopped => CancelJ::Stopped,
        }
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct SnapshotJ {
    held: u64,
    pending: u64,
    active: u64,
    closing: u64,
    operations: u64,
    deadlines: u64,
    uncertain: u64,
    stopped: bool,
}

impl From<OwnerSnapshot> for SnapshotJ {
    fn from(s: OwnerSnapshot) -> Self {
        SnapshotJ {
            held: s.held,
            pending: s.pending,
            active: s.active,
            closing: s.closing,
            operations: s.operations,
            deadlines: s.deadlines,
            uncertain: s.uncertain,
            stopped: s.stopped,
        }
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct SweepCountsJ {
    turns: u64,
    visited: u64,
    failures: u64,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Reserve {
        #[serde(deserialize_with = "Option::deserialize")]
        owner: Option<String>,
        claim: ClaimJ,
        close: Vec<CloseJ>,
        expect: ResultJ,
        #[serde(deserialize_with = "Option::deserialize")]
        connection_id: Option<u64>,
    },
    Activate {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        revision: u64,
        until: Option<u64>,
        until_in: Option<u64>,
        expect: ResultJ,
    },
    Renew {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        revision: u64,
        until: Option<u64>,
        until_in: Option<u64>,
        expect: ResultJ,
    },
    Begin {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        #[serde(rename = "as", deserialize_with = "Option::deserialize")]
        name: Option<String>,
        expect: ResultJ,
    },
    Done {
        operation: String,
    },
    Check {
        operation: String,
        expect: ResultJ,
    },
    MarkUncertain {
        operation: String,
        expect: ResultJ,
    },
    Uid {
        operation: String,
        expect: String,
    },
    Cancelled {
        operation: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<CancelJ>,
    },
    Fence {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        expect: ResultJ,
    },
    Quiesce {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        budget: BudgetJ,
        expect: ResultJ,
    },
    QuiesceStart {
        owner: String,
        #[serde(deserialize_with = "Option::deserialize")]
        by_identity: Option<Mutation>,
        budget: BudgetJ,
        #[serde(rename = "as")]
        name: String,
    },
    Pending {
        task: String,
    },
    Join {
        task: String,
        expect: ResultJ,
    },
    Advance {
        by: u64,
    },
    Sweep {
        limit: usize,
        budget: BudgetJ,
        expect: ResultJ,
        visited: usize,
    },
    StopAdmission {},
    Close {
        budget: BudgetJ,
        expect: ResultJ,
    },
    Snapshot {
        expect: SnapshotJ,
    },
    CloseCalls {
        owner: String,
        expect: u64,
    },
    Retirement {
        expect: ResultJ,
        #[serde(deserialize_with = "Option::deserialize")]
        last_connection_id: Option<u64>,
    },
    Metrics {
        expect: SweepCountsJ,
    },
}

// ---------------------------------------------------------------------------------------------
// The replay.

/// A scripted close callback: the n-th call answers the n-th outcome, the last repeating.
struct Script {
    outcomes: Vec<CloseJ>,
    calls: AtomicU64,
}

impl Script {
    fn close(&self) -> Result<(), CloseError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as usize;
        match self.outcomes[n.min(self.outcomes.len() - 1)] {
            CloseJ::Ok => Ok(()),
            CloseJ::Fail => Err(CloseError::Failed),
            CloseJ::Panic => std::panic::panic_any(SCRIPTED_PANIC),
            CloseJ::Canceled => Err(CloseError::Canceled),
            CloseJ::DeadlineExceeded => Err(CloseError::DeadlineExceeded),
        }
    }
}

struct Held {
    /// Operations begun through it own a clone (`begin_owned`), so nothing borrows it.
    handle: OwnerHandle,
    script: Arc<Script>,
}

struct Run {
    clock: Arc<ManualClock>,
    metrics: Registry,
    registry: Arc<OwnerRegistry>,
    owners: HashMap<String, Held>,
    ops: HashMap<String, Operation<'static>>,
    tasks: HashMap<String, Option<JoinHandle<Result<(), OwnerError>>>>,
}

/// A step's outcome: `Ok` when it matched, else what the library did.
type Outcome = Result<(), String>;

fn expect_eq<T: PartialEq + std::fmt::Debug>(got: T, want: T) -> Outcome {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:?}, expected {want:?}"))
    }
}

fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + GUARD;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

impl Run {
    fn new(cfg: &Config) -> Self {
        let clock = Arc::new(ManualClock::new(cfg.start));
        let metrics = Registry::new();
        let registry = OwnerRegistry::with_metrics(
            OwnerOptions {
                node_id: cfg.node_id,
                boot_id: cfg.boot_id.as_str().into(),
                capacity: cfg.capacity,
                max_operations: cfg.max_operations,
                pending_timeout: Duration::from_nanos(cfg.pending_timeout),
                max_lease: Duration::from_nanos(cfg.max_lease),
                close_retry: Duration::from_nanos(cfg.close_retry),
                clock: clock.clone(),
            },
            &metrics,
        )
        .expect("a valid config");
        Run {
            clock,
            metrics,
            registry: Arc::new(registry),
            owners: HashMap::new(),
            ops: HashMap::new(),
            tasks: HashMap::new(),
        }
    }

    fn owner(&self, name: &str) -> &Held {
        self.owners
            .get(name)
            .unwrap_or_else(|| panic!("no owner named {name:?}"))
    }

    fn op(&self, name: &str) -> &Operation<'static> {
        self.ops
            .get(name)
            .unwrap_or_else(|| panic!("no operation named {name:?}"))
    }

    fn identity(&self, name: &str, m: &Mutation) -> Owner {
        m.apply(self.owner(name).handle.owner())
    }

    fn until(&self, until: Option<u64>, until_in: Option<u64>) -> u64 {
        match (until, until_in) {
            (Some(u), None) => u,
            (None, Some(d)) => self.registry.now() + d,
            _ => panic!("exactly one of until and until_in"),
        }
    }

    fn lease(
        &self,
        renew: bool,
        owner: &str,
        by_identity: Option<Mutation>,
        revision: u64,
        until: u64,
    ) -> Result<(), OwnerError> {
        let h = &self.owner(owner).handle;
        match (by_identity, renew) {
            (None, false) => h.activate(revision, until),
            (None, true) => h.renew(revision, until),
            (Some(m), false) => self
                .registry
                .activate(&self.identity(owner, &m), revision, until),
            (Some(m), true) => self
                .registry
                .renew(&self.identity(owner, &m), revision, until),
        }
    }

    fn step(&mut self, step: Step) -> Outcome {
        match step {
            Step::Reserve {
                owner,
                claim,
                close,
                expect,
                connection_id,
            } => {
                assert!(!close.is_empty(), "reserve: an empty close script");
                assert_eq!(
                    owner.is_some(),
                    expect == ResultJ::Ok,
                    "reserve: a name exactly when ok"
                );
                assert_eq!(
                    connection_id.is_some(),
                    expect == ResultJ::Ok,
                    "reserve: a connection id exactly when ok"
                );
                let script = Arc::new(Script {
                    outcomes: close,
                    calls: AtomicU64::new(0),
                });
                let s = script.clone();
                let r = self.registry.reserve(
                    &Claim {
                        key: OwnerKey::new(claim.namespace, claim.client_id),
                        uid: claim.uid,
                        session_generation: claim.session_generation,
                        owner_generation: claim.owner_generation,
                    },
                    move |_: &Budget| s.close(),
                );
                expect_eq(ResultJ::of(&r), expect)?;
                if let (Ok(handle), Some(name)) = (r, owner) {
                    expect_eq(Some(handle.connection_id()), connection_id)?;
                    let held = Held { handle, script };
                    assert!(
                        self.owners.insert(name.clone(), held).is_none(),
                        "owner {name:?} named twice"
                    );
                }
                Ok(())
            }
            Step::Activate {
                owner,
                by_identity,
                revision,
                until,
                until_in,
                expect,
            } => {
                let until = self.until(until, until_in);
                let r = self.lease(false, &owner, by_identity, revision, until);
                expect_eq(ResultJ::of(&r), expect)
            }
            Step::Renew {
                owner,
                by_identity,
                revision,
                until,
                until_in,
                expect,
            } => {
                let until = self.until(until, until_in);
                let r = self.lease(true, &owner, by_identity, revision, until);
                expect_eq(ResultJ::of(&r), expect)
            }
            Step::Begin {
                owner,
                by_identity,
                name,
                expect,
            } => {
                assert_eq!(
                    name.is_some(),
                    expect == ResultJ::Ok,
                    "begin: a name exactly when ok"
                );
                let r = match by_identity {
                    None => self.owner(&owner).handle.begin_owned(),
                    Some(m) => self.registry.begin(&self.identity(&owner, &m)),
                };
                expect_eq(ResultJ::of(&r), expect)?;
                if let (Ok(op), Some(name)) = (r, name) {
                    assert!(
                        !self.ops.contains_key(&name),
                        "operation {name:?} named twice"
                    );
                    self.ops.insert(name, op);
                }
                Ok(())
            }
            Step::Done { operation: op } => {
                self.op(&op).done();
                Ok(())
            }
            Step::Check {
                operation: op,
                expect,
            } => expect_eq(ResultJ::of(&self.op(&op).check()), expect),
            Step::MarkUncertain {
                operation: op,
                expect,
            } => expect_eq(ResultJ::of(&self.op(&op).mark_uncertain()), expect),
            Step::Uid {
                operation: op,
                expect,
            } => expect_eq(self.op(&op).uid(), expect.as_str()),
            Step::Cancelled {
                operation: op,
                expect,
            } => {
                let got = self.op(&op).cancellation().map(CancelJ::from);
                expect_eq(got, expect)?;
                expect_eq(self.op(&op).is_cancelled(), expect.is_some())
            }
            Step::Fence {
                owner,
                by_identity,
                expect,
            } => {
                let r = match by_identity {
                    None => {
                        self.owner(&owner).handle.fence();
                        Ok(())
                    }
                    Some(m) => self.registry.fence(&self.identity(&owner, &m)),
                };
                expect_eq(ResultJ::of(&r), expect)
            }
            Step::Quiesce {
                owner,
                by_identity,
                budget,
                expect,
            } => {
                let budget = budget.budget();
                let r = match by_identity {
                    None => self.owner(&owner).handle.quiesce(&budget),
                    Some(m) => self.registry.quiesce(&self.identity(&owner, &m), &budget),
                };
                expect_eq(ResultJ::of(&r), expect)
            }
            Step::QuiesceStart {
                owner,
                by_identity,
                budget,
                name,
            } => {
                assert!(!self.tasks.contains_key(&name), "task {name:?} named twice");
                let budget = budget.budget();
                let task = match by_identity {
                    None => {
                        let h = self.owner(&owner).handle.clone();
                        std::thread::spawn(move || h.quiesce(&budget))
                    }
                    Some(m) => {
                        let identity = self.identity(&owner, &m);
                        let registry = self.registry.clone();
                        std::thread::spawn(move || registry.quiesce(&identity, &budget))
                    }
                };
                self.tasks.insert(name, Some(task));
                Ok(())
            }
            Step::Pending { task } => {
                std::thread::sleep(PENDING_WAIT);
                let t = self.task(&task);
                if t.is_finished() {
                    Err("the task has finished".into())
                } else {
                    Ok(())
                }
            }
            Step::Join { task, expect } => {
                let t = self.task(&task);
                if !wait_until(|| t.is_finished()) {
                    return Err(format!("the task did not finish within {GUARD:?}"));
                }
                let t = self.tasks.get_mut(&task).unwrap().take().unwrap();
                match t.join() {
                    Ok(r) => expect_eq(ResultJ::of(&r), expect),
                    Err(_) => Err("the task panicked".into()),
                }
            }
            Step::Advance { by } => {
                self.clock.advance(by);
                Ok(())
            }
            Step::Sweep {
                limit,
                budget,
                expect,
                visited,
            } => {
                let (got, n) = match self.registry.sweep(limit, &budget.budget()) {
                    Ok(n) => (ResultJ::Ok, n),
                    Err(e) => (ResultJ::of::<()>(&Err(e.error)), e.visited),
                };
                expect_eq((got, n), (expect, visited))
            }
            Step::StopAdmission {} => {
                self.registry.stop_admission();
                Ok(())
            }
            Step::Close { budget, expect } => {
                expect_eq(ResultJ::of(&self.registry.close(&budget.budget())), expect)
            }
            Step::Snapshot { expect } => {
                expect_eq(SnapshotJ::from(self.registry.snapshot()), expect)
            }
            Step::CloseCalls { owner, expect } => {
                let script = &self.owner(&owner).script;
                wait_until(|| script.calls.load(Ordering::SeqCst) >= expect);
                expect_eq(script.calls.load(Ordering::SeqCst), expect)
            }
            Step::Retirement {
                expect,
                last_connection_id,
            } => {
                assert_eq!(
                    last_connection_id.is_some(),
                    expect == ResultJ::Ok,
                    "retirement: last_connection_id exactly when ok"
                );
                let r = self.registry.retirement();
                expect_eq(ResultJ::of(&r), expect)?;
                if let Ok(proof) = r {
                    expect_eq(
                        (proof.node_id, &*proof.boot_id, proof.last_connection_id),
                        (
                            self.registry.node_id(),
                            self.registry.boot_id(),
                            last_connection_id.unwrap(),
                        ),
                    )?;
                }
                Ok(())
            }
            Step::Metrics { expect } => {
                let family = self
                    .metrics
                    .family("wukongim_mqtt_owner_sweep_total")
                    .expect("the sweep family is registered");
                let get = |e: &str| family.value(&[e]).expect("a sweep series");
                let got = SweepCountsJ {
                    turns: get("turns"),
                    visited: get("visited"),
                    failures: get("failures"),
                };
                expect_eq(got, expect)?;
                let [turns, visited, failures] = self.registry.sweep_counts();
                expect_eq(
                    SweepCountsJ {
                        turns,
                        visited,
                        failures,
                    },
                    expect,
                )
            }
        }
    }

    fn task(&self, name: &str) -> &JoinHandle<Result<(), OwnerError>> {
        self.tasks
            .get(name)
            .unwrap_or_else(|| panic!("no task named {name:?}"))
            .as_ref()
            .unwrap_or_else(|| panic!("task {name:?} already joined"))
    }
}

/// Runs one scenario; returns its mismatch, if any (the scenario stops at its first).
fn run(s: &Scenario) -> Option<String> {
    let mut run = Run::new(&s.config);
    let mut failure = None;
    for (i, raw) in s.steps.iter().enumerate() {
        let step: Step = serde_json::from_value(raw.clone())
            .unwrap_or_else(|e| panic!("{}: step {i}: {e}: {raw}", s.name));
        // A step that breaks the format's rules (an unknown name, a missing `until`) panics;
        // say where.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.step(step)))
            .unwrap_or_else(|p| {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{}: step {i}: {raw}: an error of the file: {why}", s.name)
            });
        if let Err(got) = outcome {
            failure = Some(format!("{}: step {i}: {raw}: {got}", s.name));
            break;
        }
    }
    if failure.is_none() {
        let open: Vec<_> = run
            .tasks
            .iter()
            .filter(|(_, t)| t.is_some())
            .map(|(n, _)| n.clone())
            .collect();
        assert!(open.is_empty(), "{}: tasks never joined: {open:?}", s.name);
    }
    // Operations first (they end their scopes), then any task left by a mismatch is detached:
    // its budget is bounded by GUARD.
    run.ops.clear();
    run.tasks.clear();
    failure
}

/// Keeps the scripted close panics (caught by the registry) out of the test's output.
fn quiet_scripted_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&SCRIPTED_PANIC) {
            default(info);
        }
    }));
}

fn snake_case(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[test]
fn owner_scenarios_replay() {
    quiet_scripted_panics();
    let text = std::fs::read_to_string(SCENARIOS).unwrap();
    let strict: StrictFile = serde_json::from_str(&text).expect("the file, strictly");
    let file: File = serde_json::from_str(&text).expect("the file");
    assert_eq!(file.system, "owner");
    assert_eq!(strict.scenarios.len(), file.scenarios.len());
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
        assert!(snake_case(&s.name), "{}: not snake_case", s.name);
        assert!(!s.upstream.is_empty(), "{}: an empty upstream", s.name);
        failures.extend(run(&s));
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
