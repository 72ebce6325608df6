//! Mutex reference of `wkcore::owner::OwnerRegistry`: upstream's `mqttsession.Owners`
//! (`internal/runtime/mqttsession/owner.go`) written literally under one mutex, with wkcore's
//! public types (`Owner`, `Claim`, `OwnerError`, `OwnerSnapshot`, `CloseTransport`, `Budget`,
//! `SweepError`, `RetiredBoot`) and the registry's injected clock.
//!
//! # What is upstream's, what is the reference's
//!
//! The state is upstream's: the entry map, a deadline min-heap ordered `(deadline, connection
//! id)` with exactly one entry per retained owner (here an ordered set, and renewal replaces the
//! owner's entry), the stage counts, `issued` (the last minted id) and `stopped`. Every
//! operation follows upstream's order of checks (`entryLocked`, `fenceLocked`, `retireLocked`,
//! `installLease`, `Begin`, `Done`, `Check`, `MarkUncertain`, `Fence`, `Quiesce`, `Sweep`,
//! `Close`, `Snapshot`); where upstream's text leaves a point open, the core's documented
//! behaviour is taken (the budget is checked where the core checks it, a failed close is
//! rescheduled `close_retry` after the attempt, the sweep counts of
//! `wukongim_mqtt_owner_sweep_total`, `sweep_turn` through a [`MutexAnchor`]).
//!
//! Operations are identified by an [`OpId`] the reference hands out. Each has upstream's context:
//! cancelled by the owner's fence, by the stop, or by its own done, whichever comes first, and
//! that first cause is kept ([`MutexOwners::cancellation`], Go's `context.Cause`).
//!
//! # Waits
//!
//! A close callback runs outside the lock, once per attempt, with its panic caught (upstream's
//! `recover`). Where upstream *blocks* until the owner's admitted scopes finish (quiesce's
//! await, and so sweep's and close's), the reference does not block on a condition variable:
//! it calls the caller's `wait` hook, outside the lock, with the owner it waits for, and then
//! polls (yielding) until the owner completes or the budget is spent. In the sequential model the
//! hook ends the scopes the wait waits for — every live operation of that owner, on the
//! reference *and* on the core, whose own quiesce runs on another thread and is blocked at that
//! very wait — so the reference never spins and a wait in the core is exercised, not skipped.
//! The `*_waiting` calls take the hook; `quiesce`, `sweep`, `sweep_turn` and `close` have the
//! core's signatures and no hook (a polling baseline for the benchmarks). Close attempts
//! in flight (only concurrent callers see one) are joined the same way: polling for the
//! attempt's end, then its error or the await.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use wkcore::owner::{
    Budget, Cancellation, Claim, CloseTransport, Owner, OwnerError, OwnerOptions, OwnerSnapshot,
    RetiredBoot, Stage, SweepError, SweepTurn, CLOSE_PAGE, SWEEP_LIMIT_MAX,
};

use crate::coord::MutexAnchor;

/// An operation scope admitted by [`MutexOwners::begin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub u64);

/// What the reference knows of one held owner (see [`MutexOwners::view`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnerView {
    /// Pending, active or closing.
    pub stage: Stage,
    /// The committed lease receipt (0 before activation).
    pub revision: u64,
    /// The lease end (0 before activation).
    pub lease_until: u64,
    /// The owner's deadline-heap entry.
    pub deadline: u64,
    /// A close attempt succeeded.
    pub transport_closed: bool,
    /// Admitted scopes.
    pub operations: u64,
    /// Marked uncertain (never cleared).
    pub uncertain: bool,
    /// The retirement condition held once (only an uncertain owner stays held after it).
    pub complete: bool,
}

/// Upstream's `entry`.
struct Entry {
    owner: Arc<Owner>,
    uid: Box<str>,
    close: Arc<dyn CloseTransport>,
    stage: Stage,
    revision: u64,
    lease_until: u64,
    deadline: u64,
    transport_closed: bool,
    operations: u64,
    /// A close attempt is in flight (its callback runs outside the lock).
    attempt: bool,
    /// Attempts finished so far, and the last one's error.
    finished: u64,
    last_error: Option<OwnerError>,
    uncertain: bool,
    complete: bool,
}

/// Upstream's counts.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    pending: u64,
    active: u64,
    closing: u64,
    operations: u64,
    uncertain: u64,
}

/// One admitted operation: its owner, whether `Done` ran, and its context's first cause.
#[derive(Clone, Copy, Debug)]
struct OpRecord {
    owner: u64,
    done: bool,
    cause: Option<Cancellation>,
}

struct State {
    entries: BTreeMap<u64, Entry>,
    /// The deadline heap: `(deadline, connection id)`, one per retained owner.
    deadlines: BTreeSet<(u64, u64)>,
    counts: Counts,
    issued: u64,
    stopped: bool,
    ops: HashMap<u64, OpRecord>,
    next_op: u64,
    /// `wukongim_mqtt_owner_sweep_total`: turns, visited, failures.
    sweeps: [u64; 3],
}

/// The reference of `wkcore::owner::OwnerRegistry` (module docs).
pub struct MutexOwners {
    opts: OwnerOptions,
    pending_timeout: u64,
    max_lease: u64,
    close_retry: u64,
    state: Mutex<State>,
    sweep_anchor: MutexAnchor,
}

impl std::fmt::Debug for MutexOwners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutexOwners")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl State {
    /// Upstream's `entryLocked`: the held owner's id, `None` if issued and retired.
    fn entry_locked(&self, opts: &OwnerOptions, owner: &Owner) -> Result<Option<u64>, OwnerError> {
        owner.validate().map_err(|_| OwnerError::Invalid)?;
        if owner.node_id != opts.node_id
            || *owner.boot_id != *opts.boot_id
            || owner.connection_id > self.issued
        {
            return Err(OwnerError::Unknown);
        }
        match self.entries.get(&owner.connection_id) {
            Some(e) if *e.owner == *owner => Ok(Some(owner.connection_id)),
            Some(_) => Err(OwnerError::Unknown),
            None => Ok(None),
        }
    }

    /// Moves `id`'s heap entry to `deadline` (the heap's fix in place).
    fn schedule(&mut self, id: u64, deadline: u64) {
        let e = self.entries.get_mut(&id).expect("a held owner");
        self.deadlines.remove(&(e.deadline, id));
        e.deadline = deadline;
        self.deadlines.insert((deadline, id));
    }

    /// Upstream's `fenceLocked`.
    fn fence_locked(&mut self, id: u64, now: u64, close_retry: u64) {
        let e = self.entries.get_mut(&id).expect("a held owner");
        match e.stage {
            Stage::Closing => return,
            Stage::Pending => self.counts.pending -= 1,
            Stage::Active => self.counts.active -= 1,
        }
        self.counts.closing += 1;
        e.stage = Stage::Closing;
        // The entry's operations are cancelled (cause: fenced, unless an earlier one).
        for op in self.ops.values_mut().filter(|op| op.owner == id) {
            op.cause.get_or_insert(Cancellation::Fenced);
        }
        self.schedule(id, now.saturating_add(close_retry));
    }

    /// Upstream's `retireLocked`.
    fn try_retire(&mut self, id: u64) {
        let Some(e) = self.entries.get_mut(&id) else {
            return;
        };
        if e.stage != Stage::Closing || !e.transport_closed || e.operations != 0 {
            return;
        }
        if e.uncertain {
            // Held for good, in the heap, counted closing; complete once.
            e.complete = true;
            return;
        }
        let deadline = e.deadline;
        self.entries.remove(&id);
        self.counts.closing -= 1;
        self.deadlines.remove(&(deadline, id));
    }

    /// The await's answer, if the wait is over: retired (`Ok`) or an uncertain barrier.
    fn completion(&self, id: u64) -> Option<Result<(), OwnerError>> {
        match self.entries.get(&id) {
            None => Some(Ok(())),
            Some(e) if e.complete => Some(if e.uncertain {
                Err(OwnerError::Unknown)
            } else {
                Ok(())
            }),
            Some(_) => None,
        }
    }
}

impl MutexOwners {
    /// An empty registry; upstream's `NewOwners` checks (`Invalid`).
    pub fn new(options: OwnerOptions) -> Result<Self, OwnerError> {
        options.validate()?;
        Ok(Self {
            pending_timeout: nanos(options.pending_timeout),
            max_lease: nanos(options.max_lease),
            close_retry: nanos(options.close_retry),
            opts: options,
            state: Mutex::new(State {
                entries: BTreeMap::new(),
                deadlines: BTreeSet::new(),
                counts: Counts::default(),
                issued: 0,
                stopped: false,
                ops: HashMap::new(),
                next_op: 0,
                sweeps: [0; 3],
            }),
            sweep_anchor: MutexAnchor::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The clock's reading now.
    pub fn now(&self) -> u64 {
        self.opts.clock.now_nanos()
    }

    /// `Reserve`: a pending owner with the next connection id, due `pending_timeout` from now;
    /// `close` is its transport's close.
    pub fn reserve(&self, claim: &Claim, close: impl CloseTransport) -> Result<Owner, OwnerError> {
        self.reserve_with(claim, Arc::new(close))
    }

    /// As [`MutexOwners::reserve`], with a shared close.
    pub fn reserve_with(
        &self,
        claim: &Claim,
        close: Arc<dyn CloseTransport>,
    ) -> Result<Owner, OwnerError> {
        claim.validate().map_err(|_| OwnerError::Invalid)?;
        let mut st = self.lock();
        if st.stopped {
            return Err(OwnerError::Stopped);
        }
        if st.entries.len() as u64 >= u64::from(self.opts.capacity) || st.issued == u64::MAX {
            return Err(OwnerError::Limit);
        }
        st.issued += 1;
        let id = st.issued;
        let owner = Arc::new(Owner {
            key: claim.key.clone(),
            session_generation: claim.session_generation,
            owner_generation: claim.owner_generation,
            node_id: self.opts.node_id,
            boot_id: self.opts.boot_id.clone(),
            connection_id: id,
        });
        let deadline = self.now().saturating_add(self.pending_timeout);
        st.entries.insert(
            id,
            Entry {
                owner: owner.clone(),
                uid: claim.uid.as_str().into(),
                close,
                stage: Stage::Pending,
                revision: 0,
                lease_until: 0,
                deadline,
                transport_closed: false,
                operations: 0,
                attempt: false,
                finished: 0,
                last_error: None,
                uncertain: false,
                complete: false,
            },
        );
        st.deadlines.insert((deadline, id));
        st.counts.pending += 1;
        Ok((*owner).clone())
    }

    /// `Activate`.
    pub fn activate(&self, owner: &Owner, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.install_lease(owner, revision, until, false)
    }

    /// `Renew`.
    pub fn renew(&self, owner: &Owner, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.install_lease(owner, revision, until, true)
    }

    /// Upstream's `installLease`.
    fn install_lease(
        &self,
        owner: &Owner,
        revision: u64,
        until: u64,
        renew: bool,
    ) -> Result<(), OwnerError> {
        let mut st = self.lock();
        if st.stopped {
            return Err(OwnerError::Stopped);
        }
        let Some(id) = st.entry_locked(&self.opts, owner)? else {
            return Err(OwnerError::Fenced);
        };
        let now = self.now();
        let e = &st.entries[&id];
        if e.stage == Stage::Closing || now >= e.deadline {
            st.fence_locked(id, now, self.close_retry);
            return Err(OwnerError::Fenced);
        }
        if revision == 0 || until <= now || until - now > self.max_lease {
            return Err(OwnerError::Invalid);
        }
        if e.stage == Stage::Active && e.revision == revision && e.lease_until == until {
            return Ok(());
        }
        let allowed = if renew {
            e.stage == Stage::Active && revision > e.revision
        } else {
            e.stage == Stage::Pending
        };
        if !allowed {
            return Err(OwnerError::Fenced);
        }
        if e.stage == Stage::Pending {
            st.counts.pending -= 1;
            st.counts.active += 1;
        }
        let e = st.entries.get_mut(&id).expect("held");
        e.stage = Stage::Active;
        e.revision = revision;
        e.lease_until = until;
        st.schedule(id, until);
        Ok(())
    }

    /// `Begin`: one admitted scope of an active owner whose lease holds.
    pub fn begin(&self, owner: &Owner) -> Result<OpId, OwnerError> {
        let mut st = self.lock();
        if st.stopped {
            return Err(OwnerError::Stopped);
        }
        let Some(id) = st.entry_locked(&self.opts, owner)? else {
            return Err(OwnerError::Fenced);
        };
        let e = &st.entries[&id];
        if e.stage != Stage::Active {
            return Err(OwnerError::Fenced);
        }
        let now = self.now();
        if now >= e.lease_until {
            st.fence_locked(id, now, self.close_retry);
            return Err(OwnerError::Fenced);
        }
        if e.operations >= u64::from(self.opts.max_operations) {
            return Err(OwnerError::Limit);
        }
        st.entries.get_mut(&id).expect("held").operations += 1;
        st.counts.operations += 1;
        st.next_op += 1;
        let op = st.next_op;
        st.ops.insert(
            op,
            OpRecord {
                owner: id,
                done: false,
                cause: None,
            },
        );
        Ok(OpId(op))
    }

    /// `Done`: idempotent per operation; the last scope of a closed owner retires it.
    pub fn done(&self, op: OpId) {
        let mut st = self.lock();
        let Some(rec) = st.ops.get_mut(&op.0) else {
            return;
        };
        if rec.done {
            return;
        }
        rec.done = true;
        rec.cause.get_or_insert(Cancellation::Done);
        let id = rec.owner;
        let e = st
            .entries
            .get_mut(&id)
            .expect("a live scope keeps its owner");
        e.operations -= 1;
        st.counts.operations -= 1;
        st.try_retire(id);
    }

    /// `Check`.
    pub fn check(&self, op: OpId) -> Result<(), OwnerError> {
        let mut st = self.lock();
        let rec = match st.ops.get(&op.0) {
            Some(rec) if !rec.done => *rec,
            _ => return Err(OwnerError::Fenced),
        };
        let e = &st.entries[&rec.owner];
        if e.stage == Stage::Closing || st.stopped {
            return Err(OwnerError::Canceled);
        }
        if st.stopped || e.stage != Stage::Active {
            return Err(OwnerError::Fenced);
        }
        let now = self.now();
        if now >= e.lease_until {
            st.fence_locked(rec.owner, now, self.close_retry);
            return Err(OwnerError::Fenced);
        }
        Ok(())
    }

    /// `MarkUncertain`: the owner is uncertain for good, and fenced.
    pub fn mark_uncertain(&self, op: OpId) -> Result<(), OwnerError> {
        let mut st = self.lock();
        let rec = match st.ops.get(&op.0) {
            Some(rec) if !rec.done => *rec,
            _ => return Err(OwnerError::Fenced),
        };
        let Some(e) = st.entries.get_mut(&rec.owner) else {
            return Err(OwnerError::Fenced);
        };
        if !e.uncertain {
            e.uncertain = true;
            st.counts.uncertain += 1;
        }
        st.fence_locked(rec.owner, self.now(), self.close_retry);
        Ok(())
    }

    /// The UID reserved with the operation's owner.
    pub fn uid(&self, op: OpId) -> Option<String> {
        let st = self.lock();
        let rec = st.ops.get(&op.0)?;
        st.entries.get(&rec.owner).map(|e| e.uid.to_string())
    }

    /// `Fence`: no transport call, no wait; a retired owner is `Ok`.
    pub fn fence(&self, owner: &Owner) -> Result<(), OwnerError> {
        let mut st = self.lock();
        let Some(id) = st.entry_locked(&self.opts, owner)? else {
            return Ok(());
        };
        st.fence_locked(id, self.now(), self.close_retry);
        Ok(())
    }

    /// `Quiesce`: fence, close the transport (one attempt), await quiescence (polling).
    pub fn quiesce(&self, owner: &Owner, budget: &Budget) -> Result<(), OwnerError> {
        self.quiesce_waiting(owner, budget, &mut |_| {})
    }

    /// [`MutexOwners::quiesce`], calling `wait` where upstream blocks for the owner's scopes
    /// (module docs).
    pub fn quiesce_waiting(
        &self,
        owner: &Owner,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<(), OwnerError> {
        budget.check()?;
        let id = {
            let st = self.lock();
            match st.entry_locked(&self.opts, owner)? {
                Some(id) => id,
                None => return Ok(()),
            }
        };
        self.quiesce_id(id, budget, wait)
    }

    /// Quiesce of the held (or retired) owner `id`.
    fn quiesce_id(
        &self,
        id: u64,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<(), OwnerError> {
        budget.check()?;
        enum Next {
            Await,
            Join(u64),
            Close(Arc<dyn CloseTransport>),
        }
        let (owner, next) = {
            let mut st = self.lock();
            if !st.entries.contains_key(&id) {
                return Ok(());
            }
            st.fence_locked(id, self.now(), self.close_retry);
            let e = st.entries.get_mut(&id).expect("held");
            let owner = e.owner.clone();
            if e.transport_closed {
                st.try_retire(id);
                (owner, Next::Await)
            } else if e.attempt {
                (owner, Next::Join(e.finished + 1))
            } else {
                e.attempt = true;
                (owner, Next::Close(e.close.clone()))
            }
        };
        match next {
            Next::Await => {}
            Next::Join(target) => loop {
                {
                    let st = self.lock();
                    match st.entries.get(&id) {
                        None => return Ok(()),
                        Some(e) if e.finished >= target => match e.last_error {
                            Some(err) => return Err(err),
                            None => break,
                        },
                        Some(_) => {}
                    }
                }
                budget.check()?;
                std::thread::yield_now();
            },
            Next::Close(close) => {
                let result = match catch_unwind(AssertUnwindSafe(|| close.close(budget))) {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => Err(OwnerError::from(e)),
                    Err(_panic) => Err(OwnerError::Close),
                };
                let mut st = self.lock();
                let e = st
                    .entries
                    .get_mut(&id)
                    .expect("an owner whose transport is open stays held");
                e.attempt = false;
                e.finished += 1;
                e.last_error = result.err();
                match result {
                    Ok(()) => {
                        e.transport_closed = true;
                        st.try_retire(id);
                    }
                    Err(err) => {
                        let now = self.now();
                        st.schedule(id, now.saturating_add(self.close_retry));
                        return Err(err);
                    }
                }
            }
        }
        self.await_quiescence(id, &owner, budget, wait)
    }

    /// Waits for the owner to complete (module docs: the `wait` hook, then polling).
    fn await_quiescence(
        &self,
        id: u64,
        owner: &Owner,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<(), OwnerError> {
        if let Some(r) = self.lock().completion(id) {
            return r;
        }
        wait(owner);
        loop {
            if let Some(r) = self.lock().completion(id) {
                return r;
            }
            budget.check()?;
            std::thread::yield_now();
        }
    }

    /// `Sweep`: fence, reschedule and quiesce due owners, earliest first, at most `limit`
    /// (1..=256).
    pub fn sweep(&self, limit: usize, budget: &Budget) -> Result<usize, SweepError> {
        self.sweep_waiting(limit, budget, &mut |_| {})
    }

    /// [`MutexOwners::sweep`] with the `wait` hook (module docs).
    pub fn sweep_waiting(
        &self,
        limit: usize,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<usize, SweepError> {
        if !(1..=SWEEP_LIMIT_MAX).contains(&limit) {
            return Err(SweepError {
                visited: 0,
                error: OwnerError::Invalid,
            });
        }
        self.lock().sweeps[0] += 1;
        let result = self.sweep_loop(limit, budget, wait);
        if result.is_err() {
            self.lock().sweeps[2] += 1;
        }
        result
    }

    fn sweep_loop(
        &self,
        limit: usize,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<usize, SweepError> {
        let mut visited = 0;
        while visited < limit {
            budget
                .check()
                .map_err(|error| SweepError { visited, error })?;
            let id = {
                let mut st = self.lock();
                let now = self.now();
                let Some(&(deadline, id)) = st.deadlines.first() else {
                    break;
                };
                if deadline > now {
                    break;
                }
                st.fence_locked(id, now, self.close_retry);
                st.schedule(id, now.saturating_add(self.close_retry));
                st.sweeps[1] += 1;
                id
            };
            visited += 1;
            self.quiesce_id(id, budget, wait)
                .map_err(|error| SweepError { visited, error })?;
        }
        Ok(visited)
    }

    /// One sweep per `interval` (the core's `sweep_turn`): the anchor decides.
    pub fn sweep_turn(
        &self,
        interval: std::time::Duration,
        limit: usize,
        budget: &Budget,
    ) -> Result<SweepTurn, SweepError> {
        self.sweep_turn_waiting(interval, limit, budget, &mut |_| {})
    }

    /// [`MutexOwners::sweep_turn`] with the `wait` hook (module docs).
    pub fn sweep_turn_waiting(
        &self,
        interval: std::time::Duration,
        limit: usize,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<SweepTurn, SweepError> {
        if !(1..=SWEEP_LIMIT_MAX).contains(&limit) {
            return Err(SweepError {
                visited: 0,
                error: OwnerError::Invalid,
            });
        }
        match self.sweep_anchor.try_fire(self.now(), nanos(interval)) {
            wkcore::coord::Fire::Fired { .. } | wkcore::coord::Fire::AnchoredFirstSeen => {
                self.sweep_waiting(limit, budget, wait).map(SweepTurn::Ran)
            }
            _ => Ok(SweepTurn::Skipped),
        }
    }

    /// `StopAdmission`: every operation's context is cancelled (cause: stopped, unless an
    /// earlier one).
    pub fn stop_admission(&self) {
        let mut st = self.lock();
        st.stopped = true;
        for op in st.ops.values_mut() {
            op.cause.get_or_insert(Cancellation::Stopped);
        }
    }

    /// `Close`: stop admission, then quiesce every held owner, [`CLOSE_PAGE`] at a time (in
    /// connection-id order; upstream's map order is unspecified), returning the first error.
    pub fn close(&self, budget: &Budget) -> Result<(), OwnerError> {
        self.close_waiting(budget, &mut |_| {})
    }

    /// [`MutexOwners::close`] with the `wait` hook (module docs).
    pub fn close_waiting(
        &self,
        budget: &Budget,
        wait: &mut dyn FnMut(&Owner),
    ) -> Result<(), OwnerError> {
        self.stop_admission();
        loop {
            budget.check()?;
            let page: Vec<u64> = self
                .lock()
                .entries
                .keys()
                .take(CLOSE_PAGE)
                .copied()
                .collect();
            if page.is_empty() {
                return Ok(());
            }
            for id in page {
                self.quiesce_id(id, budget, wait)?;
            }
        }
    }

    /// `Snapshot`.
    pub fn snapshot(&self) -> OwnerSnapshot {
        let st = self.lock();
        OwnerSnapshot {
            held: st.entries.len() as u64,
            pending: st.counts.pending,
            active: st.counts.active,
            closing: st.counts.closing,
            operations: st.counts.operations,
            deadlines: st.deadlines.len() as u64,
            uncertain: st.counts.uncertain,
            stopped: st.stopped,
        }
    }

    /// The sweep counts: turns, visited, failures.
    pub fn sweep_counts(&self) -> [u64; 3] {
        self.lock().sweeps
    }

    /// The retirement proof: admission stopped and nothing held, else `Unknown`.
    pub fn retirement(&self) -> Result<RetiredBoot, OwnerError> {
        let st = self.lock();
        if !st.stopped || !st.entries.is_empty() {
            return Err(OwnerError::Unknown);
        }
        Ok(RetiredBoot {
            node_id: self.opts.node_id,
            boot_id: self.opts.boot_id.clone(),
            last_connection_id: st.issued,
        })
    }

    /// The held owner `connection_id`, if it is held.
    pub fn view(&self, connection_id: u64) -> Option<OwnerView> {
        let st = self.lock();
        st.entries.get(&connection_id).map(|e| OwnerView {
            stage: e.stage,
            revision: e.revision,
            lease_until: e.lease_until,
            deadline: e.deadline,
            transport_closed: e.transport_closed,
            operations: e.operations,
            uncertain: e.uncertain,
            complete: e.complete,
        })
    }

    /// Why `op`'s context is cancelled, if it is: the first cause (Go's `context.Cause`).
    pub fn cancellation(&self, op: OpId) -> Option<Cancellation> {
        self.lock().ops.get(&op.0).and_then(|r| r.cause)
    }

    /// True once `op` is done (or was never admitted).
    pub fn is_done(&self, op: OpId) -> bool {
        self.lock().ops.get(&op.0).is_none_or(|r| r.done)
    }

    /// The live (not done) operations of `connection_id`.
    pub fn live_ops(&self, connection_id: u64) -> Vec<OpId> {
        let st = self.lock();
        let mut ops: Vec<OpId> = st
            .ops
            .iter()
            .filter(|(_, r)| r.owner == connection_id && !r.done)
            .map(|(&id, _)| OpId(id))
            .collect();
        ops.sort();
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use wkcore::clock::ManualClock;
    use wkcore::owner::{CloseError, OwnerKey};

    const SEC: u64 = 1_000_000_000;

    fn owners(capacity: u32) -> (Arc<ManualClock>, MutexOwners) {
        let clock = Arc::new(ManualClock::new(1000 * SEC));
        let r = MutexOwners::new(OwnerOptions {
            node_id: 3,
            boot_id: "boot".into(),
            capacity,
            max_operations: 1,
            pending_timeout: Duration::from_secs(1),
            max_lease: Duration::from_secs(10),
            close_retry: Duration::from_secs(1),
            clock: clock.clone(),
        })
        .unwrap();
        (clock, r)
    }

    fn claim() -> Claim {
        Claim {
            key: OwnerKey::new("tenant", "c1"),
            uid: "alice".into(),
            session_generation: 7,
            owner_generation: 9,
        }
    }

    fn ok() -> impl CloseTransport {
        |_: &Budget| Ok(())
    }

    #[test]
    fn admission_fence_and_quiescence_follow_upstream() {
        let (clock, r) = owners(1);
        let o = r.reserve(&claim(), ok()).unwrap();
        assert_eq!(r.reserve(&claim(), ok()), Err(OwnerError::Limit));
        assert_eq!(r.begin(&o), Err(OwnerError::Fenced));
        let until = r.now() + 5 * SEC;
        r.activate(&o, 1, until).unwrap();
        r.activate(&o, 1, until).unwrap();
        let op = r.begin(&o).unwrap();
        assert_eq!(r.begin(&o), Err(OwnerError::Limit));
        assert_eq!(r.check(op), Ok(()));
        let mut waited = 0;
        let mut wait = |_: &Owner| {
            waited += 1;
            r.done(op);
        };
        assert_eq!(
            r.quiesce_waiting(&o, &Budget::unbounded(), &mut wait),
            Ok(())
        );
        assert_eq!(waited, 1);
        assert_eq!(r.check(op), Err(OwnerError::Fenced));
        assert_eq!(r.snapshot().held, 0);
        clock.advance(SEC);
        assert_eq!(r.quiesce(&o, &Budget::unbounded()), Ok(()));
        let mut future = o.clone();
        future.connection_id = 2;
        assert_eq!(r.fence(&future), Err(OwnerError::Unknown));
    }

    #[test]
    fn uncertain_owners_stay_held_and_failed_closes_are_retried() {
        let (clock, r) = owners(2);
        let failing = r
            .reserve(&claim(), |_: &Budget| Err(CloseError::Failed))
            .unwrap();
        let o = r.reserve(&claim(), ok()).unwrap();
        r.activate(&o, 1, r.now() + 5 * SEC).unwrap();
        let op = r.begin(&o).unwrap();
        r.mark_uncertain(op).unwrap();
        r.done(op);
        assert_eq!(
            r.quiesce(&o, &Budget::unbounded()),
            Err(OwnerError::Unknown)
        );
        clock.advance(2 * SEC);
        let e = r.sweep(256, &Budget::unbounded()).unwrap_err();
        assert_eq!((e.visited, e.error), (1, OwnerError::Close));
        assert_eq!(r.view(failing.connection_id).unwrap().stage, Stage::Closing);
        let s = r.snapshot();
        assert_eq!((s.held, s.closing, s.uncertain, s.deadlines), (2, 2, 1, 2));
        assert_eq!(r.close(&Budget::unbounded()), Err(OwnerError::Close));
        assert_eq!(r.retirement(), Err(OwnerError::Unknown));
    }
}
