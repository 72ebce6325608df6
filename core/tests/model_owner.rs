//! Model-based test of `wkcore::owner::OwnerRegistry`: random call sequences give the same
//! results on the registry and on its mutex reference (`wkcore_references::owner::MutexOwners`,
//! upstream's algorithm under one lock), both reading one `ManualClock` that the sequence
//! advances. After every step the snapshots, the sweep counts, the `wukongim_mqtt_owner_work`
//! gauges, the retirement proofs, every owner's stage / uncertain / complete flags and the close
//! callbacks' calls must be equal too (operations are exact: the test is single-threaded).
//!
//! Calls: reserve (valid and invalid claims, up to capacity), activate and renew (revisions 0,
//! equal, higher, lower; untils in the past, now, within and beyond the lease bound, an exact
//! retry), begin, done (twice too), check, mark-uncertain, fence, quiesce (by identity and by
//! handle), sweep and sweep turns (limits 0, 1, 2, 256, 257), stop, close, with identity variants
//! (another node or boot, a future connection id, a changed key or generation, a malformed one),
//! budgets already cancelled, and scripted close outcomes (ok, failed, panic, cancelled,
//! deadline exceeded).
//!
//! Waits. A quiesce (and so a sweep or close) of an owner with live operations and a closed
//! transport blocks until they are done. The core's quiesce, sweep and close run on a second
//! thread; the reference calls its `wait` hook exactly where upstream blocks, and the hook ends
//! that owner's live operations on both sides, so the core's waiting call returns — the wait
//! path is exercised, not skipped. Ending them before the core's thread has reached that owner
//! leads to the same final state (a done never touches the deadline heap, and retirement happens
//! once the last of fence+close and the dones is in). A core call that waits where the reference
//! does not would run into its budget (`WAIT` seconds) and fail the comparison.
//!
//! Close quiesces owners in the core's map order, which is unspecified (upstream's Go map order
//! is too); the reference goes by connection id. When every owner quiesces cleanly the order does
//! not matter and the sequence goes on; when one fails, only "it failed" is order-independent, so
//! that is compared and the sequence ends there.
//!
//! `WK_PROPTEST_CASES` sequences (default 256; scripts/test runs 10 000 in release).
#![allow(clippy::disallowed_types)] // the harness's own locks and counters; the code under test uses the shim

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use proptest::prelude::*;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::owner::{
    Budget, CancelToken, Claim, CloseError, CloseTransport, Operation, Owner, OwnerHandle,
    OwnerKey, OwnerOptions, OwnerRegistry, OwnerSnapshot, Stage, WorkState,
};
use wkcore_references::owner::{MutexOwners, OpId};

const SEC: u64 = 1_000_000_000;
const START: u64 = 1000 * SEC;
const MAX_LEASE: u64 = 10 * SEC;
/// How long a core call may wait before it counts as stuck.
const WAIT: Duration = Duration::from_secs(5);
const PANIC_TEXT: &str = "scripted close panic";

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

/// Silences the scripted panics of close callbacks (both sides catch them); anything else
/// reaches the default hook.
fn quiet_scripted_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PANIC_TEXT) {
                previous(info);
            }
        }));
    });
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Failed,
    Panic,
    Canceled,
    Deadline,
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        6 => Just(Outcome::Ok),
        1 => Just(Outcome::Failed),
        1 => Just(Outcome::Panic),
        1 => Just(Outcome::Canceled),
        1 => Just(Outcome::Deadline),
    ]
}

/// The close callbacks' script (an outcome per connection id, default ok) and their calls, per
/// side.
#[derive(Default)]
struct Script {
    outcomes: Mutex<HashMap<u64, Outcome>>,
    /// (core calls, reference calls) per connection id.
    calls: Mutex<HashMap<u64, (u64, u64)>>,
}

struct Scripted {
    script: Arc<Script>,
    id: u64,
    core: bool,
}

impl CloseTransport for Scripted {
    fn close(&self, _: &Budget) -> Result<(), CloseError> {
        {
            let mut calls = self.script.calls.lock().unwrap();
            let c = calls.entry(self.id).or_default();
            if self.core {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
        let outcome = *self
            .script
            .outcomes
            .lock()
            .unwrap()
            .get(&self.id)
            .unwrap_or(&Outcome::Ok);
        match outcome {
            Outcome::Ok => Ok(()),
            Outcome::Failed => Err(CloseError::Failed),
            Outcome::Panic => std::panic::panic_any(PANIC_TEXT),
            Outcome::Canceled => Err(CloseError::Canceled),
            Outcome::Deadline => Err(CloseError::DeadlineExceeded),
        }
    }
}

/// How the step names an owner.
#[derive(Clone, Copy, Debug)]
enum Ident {
    Exact,
    WrongNode,
    WrongBoot,
    /// A connection id not issued yet.
    Future,
    ChangedClient,
    ChangedSession,
    ChangedOwnerGeneration,
    /// Connection id 0: malformed.
    Malformed,
    /// An empty boot id: malformed.
    BadBoot,
}

fn ident() -> impl Strategy<Value = Ident> {
    prop_oneof![
        48 => Just(Ident::Exact),
        1 => Just(Ident::WrongNode),
        1 => Just(Ident::WrongBoot),
        1 => Just(Ident::Future),
        1 => Just(Ident::ChangedClient),
        1 => Just(Ident::ChangedSession),
        1 => Just(Ident::ChangedOwnerGeneration),
        1 => Just(Ident::Malformed),
        1 => Just(Ident::BadBoot),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Rev {
    Zero,
    Last,
    Next,
    Skip,
    Lower,
}

#[derive(Clone, Copy, Debug)]
enum Until {
    Past,
    Now,
    /// `now + d`.
    After(u64),
    /// The last until tried for this owner: an exact retry.
    Last,
}

fn lease() -> impl Strategy<Value = (Rev, Until)> {
    (
        prop_oneof![
            1 => Just(Rev::Zero),
            2 => Just(Rev::Last),
            5 => Just(Rev::Next),
            1 => Just(Rev::Skip),
            1 => Just(Rev::Lower),
        ],
        prop_oneof![
            1 => Just(Until::Past),
            1 => Just(Until::Now),
            1 => Just(Until::After(1)),
            2 => Just(Until::After(SEC / 2)),
            2 => Just(Until::After(2 * SEC)),
            4 => Just(Until::After(5 * SEC)),
            1 => Just(Until::After(MAX_LEASE)),
            1 => Just(Until::After(MAX_LEASE + 1)),
            2 => Just(Until::Last),
        ],
    )
}

#[derive(Clone, Debug)]
enum Step {
    /// Claims 0..3 are valid (0 and 2 are equal), 3 has a blank UID, 4 a zero generation.
    Reserve(usize),
    Activate {
        owner: usize,
        ident: Ident,
        lease: (Rev, Until),
        by_handle: bool,
    },
    Renew {
        owner: usize,
        ident: Ident,
        lease: (Rev, Until),
        by_handle: bool,
    },
    Begin {
        owner: usize,
        ident: Ident,
    },
    Done(usize),
    Check(usize),
    MarkUncertain(usize),
    Fence {
        owner: usize,
        ident: Ident,
        by_handle: bool,
    },
    Quiesce {
        owner: usize,
        ident: Ident,
        outcome: Outcome,
        by_handle: bool,
        cancelled: bool,
    },
    Sweep {
        limit: usize,
        outcomes: [Outcome; 3],
        cancelled: bool,
    },
    SweepTurn {
        interval: u64,
        limit: usize,
        outcomes: [Outcome; 3],
    },
    Stop,
    Close {
        outcomes: [Outcome; 3],
        cancelled: bool,
    },
    Advance(u64),
}

/// Stop and close are rare (about one sequence in three has one), so most sequences run long
/// with admission open.
fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        250 => live_step(),
        1 => Just(Step::Stop),
        1 => ([outcome(), outcome(), outcome()], prop::bool::weighted(0.1))
            .prop_map(|(outcomes, cancelled)| Step::Close { outcomes, cancelled }),
    ]
}

fn live_step() -> impl Strategy<Value = Step> {
    // Indices count back from the newest owner or operation, mostly the last few.
    let owner = prop_oneof![6 => 0usize..2, 3 => 0usize..4, 1 => 0usize..12];
    let op = owner.clone();
    let cancelled = prop::bool::weighted(0.1);
    let limit = prop_oneof![
        1 => Just(0usize),
        4 => Just(1usize),
        3 => Just(2usize),
        3 => Just(256usize),
        1 => Just(257usize),
    ];
    let outcomes = || [outcome(), outcome(), outcome()];
    prop_oneof![
        6 => prop_oneof![8 => 0usize..3, 1 => 3usize..5].prop_map(Step::Reserve),
        10 => (owner.clone(), ident(), lease(), any::<bool>()).prop_map(
            |(owner, ident, lease, by_handle)| Step::Activate { owner, ident, lease, by_handle }
        ),
        4 => (owner.clone(), ident(), lease(), any::<bool>()).prop_map(
            |(owner, ident, lease, by_handle)| Step::Renew { owner, ident, lease, by_handle }
        ),
        14 => (owner.clone(), ident()).prop_map(|(owner, ident)| Step::Begin { owner, ident }),
        6 => op.clone().prop_map(Step::Done),
        3 => op.clone().prop_map(Step::Check),
        1 => op.prop_map(Step::MarkUncertain),
        1 => (owner.clone(), ident(), any::<bool>())
            .prop_map(|(owner, ident, by_handle)| Step::Fence { owner, ident, by_handle }),
        3 => (owner, ident(), outcome(), any::<bool>(), cancelled).prop_map(
            |(owner, ident, outcome, by_handle, cancelled)| Step::Quiesce {
                owner,
                ident,
                outcome,
                by_handle,
                cancelled
            }
        ),
        2 => (limit.clone(), outcomes(), cancelled)
            .prop_map(|(limit, outcomes, cancelled)| Step::Sweep { limit, outcomes, cancelled }),
        1 => (prop_oneof![Just(SEC), Just(3 * SEC)], limit, outcomes()).prop_map(
            |(interval, limit, outcomes)| Step::SweepTurn { interval, limit, outcomes }
        ),
        6 => prop_oneof![
            2 => Just(1u64),
            4 => Just(SEC / 10),
            3 => Just(SEC / 2),
            2 => Just(SEC),
            1 => Just(3 * SEC),
            1 => Just(11 * SEC),
        ]
        .prop_map(Step::Advance),
    ]
}

fn claim(i: usize) -> Claim {
    let (client, uid, generation) = match i {
        0 | 2 => ("c0", "alice", 1),
        1 => ("c1", "bob", 2),
        3 => ("c1", " ", 1),
        _ => ("c0", "alice", 0),
    };
    Claim {
        key: OwnerKey::new("tenant", client),
        uid: uid.into(),
        session_generation: 7,
        owner_generation: generation,
    }
}

/// The index `i` back from the newest of `len` (any index when `len` is 0: there is none).
fn back(len: usize, i: usize) -> usize {
    len.wrapping_sub(1 + i % len.max(1))
}

/// One admitted operation, on both sides.
struct ModelOp {
    core: Operation<'static>,
    reference: OpId,
    owner: u64,
}

struct Model {
    clock: Arc<ManualClock>,
    metrics: Registry,
    core: OwnerRegistry,
    reference: MutexOwners,
    script: Arc<Script>,
    /// Reserved owners (both sides minted the same identity), in order.
    owners: Vec<(Arc<Owner>, OwnerHandle)>,
    ops: Vec<ModelOp>,
    /// The last (revision, until) tried per connection id.
    leases: HashMap<u64, (u64, u64)>,
}

/// What the core's call on the other thread must have done before [`drain`] ends scopes, so
/// that the operations' first cancellation cause is the same on both sides.
#[derive(Clone, Copy)]
enum Reached {
    /// Fenced the owner (quiesce and sweep fence it before they close and wait).
    Fence,
    /// Stopped admission (close stops first, and then visits owners in its own order).
    Stop,
    /// Nothing (the sequence ends).
    Nothing,
}

/// Ends every live operation of `owner` on both sides: the reference's `wait` hook. It first
/// waits (up to `WAIT`) until the core's call got as far as `reached`.
fn drain(model: &Model, owner: &Owner, reached: Reached) {
    let start = std::time::Instant::now();
    let arrived = || match reached {
        Reached::Fence => model
            .owners
            .iter()
            .find(|(o, _)| **o == *owner)
            .is_none_or(|(_, h)| h.stage() == Stage::Closing),
        Reached::Stop => model.core.snapshot().stopped,
        Reached::Nothing => true,
    };
    while !arrived() && start.elapsed() < WAIT {
        std::thread::yield_now();
    }
    let (reference, ops) = (&model.reference, &model.ops);
    for op in ops.iter().filter(|op| op.owner == owner.connection_id) {
        reference.done(op.reference);
        op.core.done();
    }
}

impl Model {
    fn new(capacity: u32, max_operations: u32) -> Self {
        let clock = Arc::new(ManualClock::new(START));
        let options = OwnerOptions {
            node_id: 3,
            boot_id: "boot".into(),
            capacity,
            max_operations,
            pending_timeout: Duration::from_secs(1),
            max_lease: Duration::from_nanos(MAX_LEASE),
            close_retry: Duration::from_secs(1),
            clock: clock.clone(),
        };
        let metrics = Registry::new();
        Self {
            core: OwnerRegistry::with_metrics(options.clone(), &metrics).unwrap(),
            reference: MutexOwners::new(options).unwrap(),
            clock,
            metrics,
            script: Arc::default(),
            owners: Vec::new(),
            ops: Vec::new(),
            leases: HashMap::new(),
        }
    }

    fn issued(&self) -> u64 {
        self.owners.len() as u64
    }

    fn set_outcomes(&self, outcomes: [Outcome; 3]) {
        let mut script = self.script.outcomes.lock().unwrap();
        for id in 1..=self.issued() {
            script.insert(id, outcomes[id as usize % 3]);
        }
    }

    /// The identity a step names, and the handle when it names a reserved owner exactly.
    fn ident(&self, i: usize, ident: Ident) -> (Owner, Option<&OwnerHandle>) {
        let (mut o, handle) = match self.owners.get(back(self.owners.len(), i)) {
            Some((o, h)) => ((**o).clone(), Some(h)),
            None => (
                Owner {
                    key: claim(0).key,
                    session_generation: 7,
                    owner_generation: 1,
                    node_id: 3,
                    boot_id: "boot".into(),
                    connection_id: 1,
                },
                None,
            ),
        };
        match ident {
            Ident::Exact => return (o, handle),
            Ident::WrongNode => o.node_id = 4,
            Ident::WrongBoot => o.boot_id = "other".into(),
            Ident::Future => o.connection_id = self.issued() + 1 + (i as u64 % 2),
            Ident::ChangedClient => o.key.client_id = "cx".into(),
            Ident::ChangedSession => o.session_generation += 1,
            Ident::ChangedOwnerGeneration => o.owner_generation += 1,
            Ident::Malformed => o.connection_id = 0,
            Ident::BadBoot => o.boot_id = "".into(),
        }
        (o, None)
    }

    fn lease(&mut self, owner: &Owner, (rev, until): (Rev, Until)) -> (u64, u64) {
        let now = self.core.now();
        let (last_rev, last_until) = self
            .leases
            .get(&owner.connection_id)
            .copied()
            .unwrap_or((0, now + 5 * SEC));
        let rev = match rev {
            Rev::Zero => 0,
            Rev::Last => last_rev,
            Rev::Next => last_rev + 1,
            Rev::Skip => last_rev + 2,
            Rev::Lower => last_rev.saturating_sub(1),
        };
        let until = match until {
            Until::Past => now - 1,
            Until::Now => now,
            Until::After(d) => now + d,
            Until::Last => last_until,
        };
        self.leases.insert(owner.connection_id, (rev, until));
        (rev, until)
    }

    fn budget(cancelled: bool) -> Budget {
        let budget = Budget::timeout(WAIT);
        if cancelled {
            let token = CancelToken::new();
            token.cancel();
            budget.with_cancel(token)
        } else {
            budget
        }
    }

    /// Runs `core` on a second thread and `reference` here, with the draining `wait` hook.
    fn waiting<T: Send>(
        &self,
        reached: Reached,
        core: impl FnOnce(&OwnerRegistry) -> T + Send,
        reference: impl FnOnce(&MutexOwners, &mut dyn FnMut(&Owner)) -> T,
    ) -> (T, T) {
        std::thread::scope(|s| {
            let registry = &self.core;
            let thread = s.spawn(move || core(registry));
            let expected = reference(&self.reference, &mut |owner: &Owner| {
                drain(self, owner, reached)
            });
            (thread.join().expect("the core's call panicked"), expected)
        })
    }

    /// Runs one step; `Ok(false)` ends the sequence.
    fn step(&mut self, step: Step) -> Result<bool, TestCaseError> {
        match step {
            Step::Reserve(c) => {
                let claim = claim(c);
                let id = self.issued() + 1;
                let script = &self.script;
                let close = |core| Scripted {
                    script: script.clone(),
                    id,
                    core,
                };
                let core = self.core.reserve(&claim, close(true));
                let reference = self.reference.reserve(&claim, close(false));
                match (core, reference) {
                    (Ok(h), Ok(o)) => {
                        prop_assert_eq!(h.owner(), &o);
                        prop_assert_eq!(h.uid(), claim.uid.as_str());
                        self.owners.push((Arc::new(o), h));
                    }
                    (c, r) => prop_assert_eq!(c.err(), r.err()),
                }
            }
            Step::Activate {
                owner,
                ident,
                lease,
                by_handle,
            }
            | Step::Renew {
                owner,
                ident,
                lease,
                by_handle,
            } => {
                let renew = matches!(step, Step::Renew { .. });
                let (o, handle) = self.ident(owner, ident);
                let handle = handle.cloned();
                let (rev, until) = self.lease(&o, lease);
                let core = match (renew, handle.filter(|_| by_handle)) {
                    (false, Some(h)) => h.activate(rev, until),
                    (true, Some(h)) => h.renew(rev, until),
                    (false, None) => self.core.activate(&o, rev, until),
                    (true, None) => self.core.renew(&o, rev, until),
                };
                let reference = if renew {
                    self.reference.renew(&o, rev, until)
                } else {
                    self.reference.activate(&o, rev, until)
                };
                prop_assert_eq!(
                    core,
                    reference,
                    "renew {} rev {} until {}",
                    renew,
                    rev,
                    until
                );
            }
            Step::Begin { owner, ident } => {
                let (o, _) = self.ident(owner, ident);
                match (self.core.begin(&o), self.reference.begin(&o)) {
                    (Ok(core), Ok(reference)) => {
                        prop_assert_eq!(
                            Some(core.uid().to_string()),
                            self.reference.uid(reference)
                        );
                        self.ops.push(ModelOp {
                            core,
                            reference,
                            owner: o.connection_id,
                        })
                    }
                    (c, r) => prop_assert_eq!(c.err(), r.err()),
                }
            }
            Step::Done(i) => {
                if let Some(op) = self.ops.get(back(self.ops.len(), i)) {
                    op.core.done();
                    self.reference.done(op.reference);
                }
            }
            Step::Check(i) => {
                if let Some(op) = self.ops.get(back(self.ops.len(), i)) {
                    prop_assert_eq!(op.core.check(), self.reference.check(op.reference));
                }
            }
            Step::MarkUncertain(i) => {
                if let Some(op) = self.ops.get(back(self.ops.len(), i)) {
                    prop_assert_eq!(
                        op.core.mark_uncertain(),
                        self.reference.mark_uncertain(op.reference)
                    );
                }
            }
            Step::Fence {
                owner,
                ident,
                by_handle,
            } => {
                let (o, handle) = self.ident(owner, ident);
                let core = match handle.filter(|_| by_handle) {
                    Some(h) => {
                        h.fence();
                        Ok(())
                    }
                    None => self.core.fence(&o),
                };
                prop_assert_eq!(core, self.reference.fence(&o));
            }
            Step::Quiesce {
                owner,
                ident,
                outcome,
                by_handle,
                cancelled,
            } => {
                let (o, handle) = self.ident(owner, ident);
                let handle = handle.filter(|_| by_handle).cloned();
                self.script
                    .outcomes
                    .lock()
                    .unwrap()
                    .insert(o.connection_id, outcome);
                let budget = Self::budget(cancelled);
                let (core, reference) = self.waiting(
                    Reached::Fence,
                    |registry| match handle {
                        Some(h) => h.quiesce(&budget),
                        None => registry.quiesce(&o, &budget),
                    },
                    |reference, wait| reference.quiesce_waiting(&o, &budget, wait),
                );
                prop_assert_eq!(core, reference);
            }
            Step::Sweep {
                limit,
                outcomes,
                cancelled,
            } => {
                self.set_outcomes(outcomes);
                let budget = Self::budget(cancelled);
                let (core, reference) = self.waiting(
                    Reached::Fence,
                    |registry| registry.sweep(limit, &budget),
                    |reference, wait| reference.sweep_waiting(limit, &budget, wait),
                );
                prop_assert_eq!(core, reference);
            }
            Step::SweepTurn {
                interval,
                limit,
                outcomes,
            } => {
                self.set_outcomes(outcomes);
                let budget = Self::budget(false);
                let interval = Duration::from_nanos(interval);
                let (core, reference) = self.waiting(
                    Reached::Fence,
                    |registry| registry.sweep_turn(interval, limit, &budget),
                    |reference, wait| reference.sweep_turn_waiting(interval, limit, &budget, wait),
                );
                prop_assert_eq!(core, reference);
            }
            Step::Stop => {
                self.core.stop_admission();
                self.reference.stop_admission();
            }
            Step::Close {
                outcomes,
                cancelled,
            } => {
                self.set_outcomes(outcomes);
                let budget = Self::budget(cancelled);
                let (core, reference) = self.waiting(
                    Reached::Stop,
                    |registry| registry.close(&budget),
                    |reference, wait| {
                        let r = reference.close_waiting(&budget, wait);
                        if r.is_err() && !cancelled {
                            // The core may wait on an owner the reference did not reach (map
                            // order): end every scope so its close returns.
                            for (o, _) in self.owners.iter() {
                                drain(self, o, Reached::Nothing);
                            }
                        }
                        r
                    },
                );
                if reference.is_err() && !cancelled {
                    prop_assert!(core.is_err(), "core {:?}, reference {:?}", core, reference);
                    return Ok(false);
                }
                // Ok, or a cancelled budget (it fails before any owner is visited).
                prop_assert_eq!(core, reference);
            }
            Step::Advance(dt) => self.clock.advance(dt),
        }
        Ok(true)
    }

    fn compare(&self) -> Result<(), TestCaseError> {
        let snapshot = self.core.snapshot();
        let expected = self.reference.snapshot();
        prop_assert_eq!(snapshot, expected);
        prop_assert_eq!(self.core.sweep_counts(), self.reference.sweep_counts());
        let work = self.metrics.family("wukongim_mqtt_owner_work").unwrap();
        let OwnerSnapshot {
            held,
            pending,
            active,
            closing,
            operations,
            deadlines,
            uncertain,
            stopped: _,
        } = expected;
        let gauges = [
            held, pending, active, closing, operations, deadlines, uncertain,
        ];
        for (state, value) in WorkState::ALL.into_iter().zip(gauges) {
            prop_assert_eq!(work.value(&[state.label()]), Some(value), "{:?}", state);
        }
        let sweeps = self
            .metrics
            .family("wukongim_mqtt_owner_sweep_total")
            .unwrap();
        prop_assert_eq!(
            ["turns", "visited", "failures"].map(|e| sweeps.value(&[e]).unwrap()),
            self.reference.sweep_counts()
        );
        prop_assert_eq!(self.core.retirement(), self.reference.retirement());
        for (o, h) in &self.owners {
            match self.reference.view(o.connection_id) {
                Some(v) => {
                    prop_assert_eq!(h.stage(), v.stage, "owner {}", o.connection_id);
                    prop_assert_eq!(h.is_uncertain(), v.uncertain, "owner {}", o.connection_id);
                    prop_assert_eq!(h.is_complete(), v.complete, "owner {}", o.connection_id);
                    prop_assert_eq!(
                        h.is_cancelled(),
                        v.stage == Stage::Closing || expected.stopped
                    );
                }
                None => {
                    prop_assert_eq!(h.stage(), Stage::Closing, "owner {}", o.connection_id);
                    prop_assert!(h.is_complete() && !h.is_uncertain());
                }
            }
        }
        for op in &self.ops {
            prop_assert_eq!(
                op.core.cancellation(),
                self.reference.cancellation(op.reference)
            );
            prop_assert_eq!(
                op.core.is_cancelled(),
                self.reference.cancellation(op.reference).is_some()
            );
        }
        for (id, (core, reference)) in self.script.calls.lock().unwrap().iter() {
            prop_assert_eq!(core, reference, "close calls of owner {}", id);
        }
        Ok(())
    }
}

fn run(capacity: u32, max_operations: u32, steps: Vec<Step>) -> Result<(), TestCaseError> {
    quiet_scripted_panics();
    let mut model = Model::new(capacity, max_operations);
    // Every sequence starts with an active owner (when the capacity allows two, a pending one
    // too), so that its steps mostly meet owners.
    let prelude = [
        Step::Reserve(0),
        Step::Activate {
            owner: 0,
            ident: Ident::Exact,
            lease: (Rev::Next, Until::After(5 * SEC)),
            by_handle: false,
        },
        Step::Reserve(1),
    ];
    for step in prelude.into_iter().chain(steps) {
        if !model.step(step)? {
            break;
        }
        model.compare()?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn registry_matches_reference(
        capacity in 1u32..8,
        max_operations in 1u32..4,
        steps in prop::collection::vec(step(), 0..80),
    ) {
        run(capacity, max_operations, steps)?;
    }
}

/// Upstream's scenarios as explicit sequences (the model's corner cases, kept as regressions).
#[test]
fn fixed_sequences_match_reference() {
    use Step::*;
    let lease = (Rev::Next, Until::After(5 * SEC));
    let exact = Ident::Exact;
    let sequences: Vec<Vec<Step>> = vec![
        // Quiesce waits for a live scope, then retires.
        vec![
            Reserve(0),
            Activate {
                owner: 0,
                ident: exact,
                lease,
                by_handle: false,
            },
            Begin {
                owner: 0,
                ident: exact,
            },
            Begin {
                owner: 0,
                ident: exact,
            },
            Quiesce {
                owner: 0,
                ident: exact,
                outcome: Outcome::Ok,
                by_handle: false,
                cancelled: false,
            },
            Reserve(1),
        ],
        // Uncertain: held for good, Unknown from quiesce, sweep and close.
        vec![
            Reserve(0),
            Activate {
                owner: 0,
                ident: exact,
                lease,
                by_handle: true,
            },
            Begin {
                owner: 0,
                ident: exact,
            },
            MarkUncertain(0),
            MarkUncertain(0),
            Quiesce {
                owner: 0,
                ident: exact,
                outcome: Outcome::Ok,
                by_handle: true,
                cancelled: false,
            },
            MarkUncertain(0),
            Advance(3 * SEC),
            Sweep {
                limit: 256,
                outcomes: [Outcome::Ok; 3],
                cancelled: false,
            },
            Close {
                outcomes: [Outcome::Ok; 3],
                cancelled: false,
            },
        ],
        // Expiry by begin and check, a failed close retried by the sweep.
        vec![
            Reserve(0),
            Reserve(1),
            Activate {
                owner: 1,
                ident: exact,
                lease,
                by_handle: false,
            },
            Begin {
                owner: 1,
                ident: exact,
            },
            Advance(5 * SEC),
            Check(0),
            Check(0),
            Begin {
                owner: 1,
                ident: exact,
            },
            Done(0),
            Sweep {
                limit: 1,
                outcomes: [Outcome::Failed; 3],
                cancelled: false,
            },
            Sweep {
                limit: 256,
                outcomes: [Outcome::Failed; 3],
                cancelled: false,
            },
            Advance(SEC),
            Sweep {
                limit: 256,
                outcomes: [Outcome::Panic, Outcome::Ok, Outcome::Ok],
                cancelled: false,
            },
            Close {
                outcomes: [Outcome::Ok; 3],
                cancelled: false,
            },
            Reserve(0),
        ],
    ];
    for steps in sequences {
        run(2, 2, steps).unwrap();
    }
}
