//! Mutex references of `wkcore::coord`: each primitive's contract written plainly over a
//! `Mutex<state>`, with the same outcome types.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use wkcore::coord::{
    ClaimError, ConfigError, FinalizeError, Fire, InsertError, LedgerConfig, LedgerEvent,
    LedgerKind, NewRecord, Outcome, RecordState, RecordView, TakeError, TouchError, TriggerError,
    WindowError, LEDGER_CAPACITY_MAX, WINDOW_COUNT_MAX, WINDOW_TIME_MAX,
};

/// The reference of `wkcore::coord::Anchor`: `None` is unset.
#[derive(Debug, Default)]
pub struct MutexAnchor {
    value: Mutex<Option<u64>>,
}

impl MutexAnchor {
    /// An anchor holding `value` (`None`: unset).
    pub fn new(value: Option<u64>) -> Self {
        Self {
            value: Mutex::new(value),
        }
    }

    /// The anchor.
    pub fn get(&self) -> Option<u64> {
        *self.value.lock().unwrap()
    }

    /// `expected` → `next` if the anchor holds `expected` and `next` differs; `u64::MAX` is
    /// refused.
    pub fn advance(&self, expected: u64, next: u64) -> bool {
        let mut v = self.value.lock().unwrap();
        if expected == u64::MAX || next == u64::MAX || next == expected || *v != Some(expected) {
            return false;
        }
        *v = Some(next);
        true
    }

    /// unset → `now`.
    pub fn anchor_unset(&self, now: u64) -> bool {
        let mut v = self.value.lock().unwrap();
        if now == u64::MAX || v.is_some() {
            return false;
        }
        *v = Some(now);
        true
    }

    /// Anchors, reports not due (due at `anchor + max(period, 1)`), or fires.
    pub fn try_fire(&self, now: u64, period: u64) -> Fire {
        let mut v = self.value.lock().unwrap();
        if now == u64::MAX {
            return Fire::Lost;
        }
        match *v {
            None => {
                *v = Some(now);
                Fire::AnchoredFirstSeen
            }
            Some(a) if now < a.saturating_add(period.max(1)) => Fire::NotDue {
                due_at: a.saturating_add(period.max(1)),
            },
            Some(a) => {
                *v = Some(now);
                Fire::Fired { previous: a }
            }
        }
    }
}

/// The reference of `wkcore::coord::ExclusiveTrigger`: (last run, active).
#[derive(Debug, Default)]
pub struct MutexExclusiveTrigger {
    state: Mutex<(u64, bool)>,
}

impl MutexExclusiveTrigger {
    /// An inactive key whose last run was `last_run` (clamped to `2^63 - 1`).
    pub fn new(last_run: u64) -> Self {
        Self {
            state: Mutex::new((last_run.min(u64::MAX >> 1), false)),
        }
    }

    /// Starts the next run, or says which run holds the key.
    pub fn trigger(&self) -> Result<u64, TriggerError> {
        let mut s = self.state.lock().unwrap();
        if s.1 {
            return Err(TriggerError::Busy { run: s.0 });
        }
        if s.0 == u64::MAX >> 1 {
            return Err(TriggerError::Exhausted);
        }
        *s = (s.0 + 1, true);
        Ok(s.0)
    }

    /// Ends `run` if it is the active one.
    pub fn finish(&self, run: u64) -> bool {
        let mut s = self.state.lock().unwrap();
        if s.1 && s.0 == run {
            s.1 = false;
            return true;
        }
        false
    }

    /// The active run.
    pub fn active(&self) -> Option<u64> {
        let s = self.state.lock().unwrap();
        s.1.then_some(s.0)
    }

    /// The last run started.
    pub fn last_run(&self) -> u64 {
        self.state.lock().unwrap().0
    }
}

/// The reference of `wkcore::coord::Flip`.
#[derive(Debug, Default)]
pub struct MutexFlip {
    state: Mutex<u64>,
}

impl MutexFlip {
    /// A flip in `state`.
    pub fn new(state: u64) -> Self {
        Self {
            state: Mutex::new(state),
        }
    }

    /// `from` → `to` if the state is `from` and they differ.
    pub fn flip(&self, from: u64, to: u64) -> bool {
        let mut s = self.state.lock().unwrap();
        if from == to || *s != from {
            return false;
        }
        *s = to;
        true
    }

    /// The state.
    pub fn get(&self) -> u64 {
        *self.state.lock().unwrap()
    }
}

/// One record of [`MutexLedger`]: the fields of `wkcore::coord::RecordView`.
#[derive(Clone, Copy, Debug)]
struct LedgerRecord {
    state: RecordState,
    id: u64,
    runner: u64,
    deadline: u64,
    refreshed_at: u64,
    /// `u64::MAX`: not finalized (the ledger's "unset" time).
    finalized_at: u64,
    payload: u64,
    duplicates: u64,
    last_duplicate_payload: u64,
}

impl LedgerRecord {
    fn new(record: NewRecord, now: u64) -> Self {
        Self {
            state: RecordState::Placed,
            id: record.id,
            runner: record.runner,
            deadline: record.deadline,
            refreshed_at: now,
            finalized_at: u64::MAX,
            payload: 0,
            duplicates: 0,
            last_duplicate_payload: 0,
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        match self.state {
            RecordState::Finalized(outcome) => Some(outcome),
            _ => None,
        }
    }

    /// The pending-only transition: PENDING → `outcome`.
    fn finalize(&mut self, outcome: Outcome, payload: u64, now: u64) {
        debug_assert!(self.state.is_pending());
        self.state = RecordState::Finalized(outcome);
        self.payload = payload;
        self.finalized_at = now;
    }

    fn view(&self) -> RecordView {
        RecordView {
            state: self.state,
            id: self.id,
            runner: self.runner,
            deadline: self.deadline,
            refreshed_at: self.refreshed_at,
            finalized_at: (self.finalized_at != u64::MAX).then_some(self.finalized_at),
            payload: self.payload,
            duplicates: self.duplicates,
            last_duplicate_payload: self.last_duplicate_payload,
        }
    }
}

/// The state of a [`MutexLedger`]: its records and its event counts.
#[derive(Debug)]
struct LedgerState<K> {
    records: HashMap<K, LedgerRecord>,
    counts: [u64; LedgerEvent::ALL.len()],
}

impl<K> LedgerState<K> {
    fn count(&mut self, event: LedgerEvent, n: u64) {
        self.counts[event_index(event)] += n;
    }
}

fn event_index(event: LedgerEvent) -> usize {
    LedgerEvent::ALL
        .iter()
        .position(|e| *e == event)
        .expect("every event is in LedgerEvent::ALL")
}

/// The reference of `wkcore::coord::Ledger`: a `HashMap` of records under one mutex, with the
/// same results and event counts for every keyed operation.
///
/// The ledger's scans examine a page of slots from a rotating cursor over its slab; the slab's
/// order is not part of the contract, so the reference has *whole pass* scans instead
/// (`reconcile_all`, `reclaim_all`, `finalize_own_all`, `sweep_orphans_all`): each is what one
/// page of `capacity` slots does (every slot examined once), and returns how many records it
/// changed.
#[derive(Debug)]
pub struct MutexLedger<K> {
    config: LedgerConfig,
    state: Mutex<LedgerState<K>>,
}

impl<K: Clone + Eq + Hash> MutexLedger<K> {
    /// An empty ledger; the same bounds on the capacity as the ledger's.
    pub fn new(config: LedgerConfig) -> Result<Self, ConfigError> {
        if config.capacity == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        if config.capacity > LEDGER_CAPACITY_MAX {
            return Err(ConfigError::CapacityAboveMax {
                capacity: config.capacity,
            });
        }
        Ok(Self {
            config,
            state: Mutex::new(LedgerState {
                records: HashMap::new(),
                counts: [0; LedgerEvent::ALL.len()],
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> LedgerConfig {
        self.config
    }

    /// Records held (PENDING and retained terminal ones).
    pub fn len(&self) -> usize {
        self.state.lock().unwrap().records.len()
    }

    /// True when no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many times `event` was counted.
    pub fn count(&self, event: LedgerEvent) -> u64 {
        self.state.lock().unwrap().counts[event_index(event)]
    }

    /// Inserts a PENDING record under `key`: `Exists` before `Full`; a hand-off ledger counts a
    /// claim won or lost.
    pub fn insert(&self, key: &K, record: NewRecord, now: u64) -> Result<(), InsertError> {
        if now == u64::MAX {
            return Err(InsertError::InvalidTime);
        }
        let mut st = self.state.lock().unwrap();
        let result = if let Some(existing) = st.records.get(key) {
            Err(InsertError::Exists(existing.state))
        } else if st.records.len() >= self.config.capacity {
            st.count(LedgerEvent::RejectedFull, 1);
            return Err(InsertError::Full);
        } else {
            st.records
                .insert(key.clone(), LedgerRecord::new(record, now));
            Ok(())
        };
        if self.config.kind == LedgerKind::Handoff {
            let event = if result.is_ok() {
                LedgerEvent::ClaimWon
            } else {
                LedgerEvent::ClaimLost
            };
            st.count(event, 1);
        }
        result
    }

    /// Places one PENDING record holding `placeholder` (runner 0) per key, all or nothing: when
    /// fewer than `keys.len()` records fit, nothing is placed, `out` is left as it was, and each
    /// key counts as refused full. Otherwise `out[i]` is `keys[i]`'s result (`Exists` for a key
    /// present, including one placed earlier in the same batch); returns how many were placed.
    ///
    /// # Panics
    ///
    /// If `out.len() != keys.len()`.
    pub fn place(
        &self,
        keys: &[K],
        placeholder: u64,
        deadline: u64,
        now: u64,
        out: &mut [Result<(), InsertError>],
    ) -> Result<usize, InsertError> {
        assert_eq!(keys.len(), out.len(), "one result per key");
        if now == u64::MAX {
            return Err(InsertError::InvalidTime);
        }
        let mut st = self.state.lock().unwrap();
        if self.config.capacity - st.records.len() < keys.len() {
            st.count(LedgerEvent::RejectedFull, keys.len() as u64);
            return Err(InsertError::Full);
        }
        let record = NewRecord {
            id: placeholder,
            runner: 0,
            deadline,
        };
        let mut placed = 0;
        for (key, result) in keys.iter().zip(out.iter_mut()) {
            *result = match st.records.get(key) {
                Some(existing) => Err(InsertError::Exists(existing.state)),
                None => {
                    st.records
                        .insert(key.clone(), LedgerRecord::new(record, now));
                    placed += 1;
                    Ok(())
                }
            };
        }
        Ok(placed)
    }

    /// Claims the placed record of `key` if it still holds `placeholder`; every refusal counts as
    /// a claim lost.
    pub fn claim(
        &self,
        key: &K,
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> Result<(), ClaimError> {
        let mut st = self.state.lock().unwrap();
        let result = match st.records.get_mut(key) {
            None => Err(ClaimError::NotFound),
            Some(rec) => match rec.state {
                RecordState::Claimed => Err(ClaimError::Lost),
                RecordState::Finalized(outcome) => Err(ClaimError::Finalized(outcome)),
                RecordState::Placed if rec.id != placeholder => {
                    Err(ClaimError::PlaceholderMismatch)
                }
                RecordState::Placed => {
                    rec.state = RecordState::Claimed;
                    rec.id = request_id;
                    rec.runner = runner;
                    rec.refreshed_at = now;
                    Ok(())
                }
            },
        };
        let event = if result.is_ok() {
            LedgerEvent::ClaimWon
        } else {
            LedgerEvent::ClaimLost
        };
        st.count(event, 1);
        result
    }

    fn finalize_locked(
        st: &mut LedgerState<K>,
        key: &K,
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<(), FinalizeError> {
        let rec = st.records.get_mut(key).ok_or(FinalizeError::NotFound)?;
        match rec.outcome() {
            Some(winner) => {
                rec.duplicates += 1;
                rec.last_duplicate_payload = payload;
                Err(FinalizeError::Duplicate(winner))
            }
            None => {
                rec.finalize(outcome, payload, now);
                Ok(())
            }
        }
    }

    /// Moves the PENDING record of `key` to `outcome`; a duplicate learns the winner and leaves
    /// its payload for audit. "Not found" is not counted.
    pub fn finalize(
        &self,
        key: &K,
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<(), FinalizeError> {
        let mut st = self.state.lock().unwrap();
        let result = Self::finalize_locked(&mut st, key, outcome, payload, now);
        match result {
            Ok(()) => st.count(LedgerEvent::FinalizeWon, 1),
            Err(FinalizeError::Duplicate(_)) => st.count(LedgerEvent::FinalizeDuplicate, 1),
            Err(FinalizeError::NotFound) => {}
        }
        result
    }

    /// [`MutexLedger::finalize`] for each key in order; returns how many won.
    ///
    /// # Panics
    ///
    /// If the three slices differ in length.
    pub fn finalize_batch(
        &self,
        keys: &[K],
        payloads: &[u64],
        outcome: Outcome,
        now: u64,
        out: &mut [Result<(), FinalizeError>],
    ) -> usize {
        assert!(
            keys.len() == out.len() && keys.len() == payloads.len(),
            "one payload and one result per key"
        );
        let mut st = self.state.lock().unwrap();
        let (mut won, mut duplicates) = (0, 0);
        for ((key, payload), result) in keys.iter().zip(payloads).zip(out.iter_mut()) {
            *result = Self::finalize_locked(&mut st, key, outcome, *payload, now);
            match result {
                Ok(()) => won += 1,
                Err(FinalizeError::Duplicate(_)) => duplicates += 1,
                Err(FinalizeError::NotFound) => {}
            }
        }
        st.count(LedgerEvent::FinalizeWon, won);
        st.count(LedgerEvent::FinalizeDuplicate, duplicates);
        won as usize
    }

    /// Compare-and-delete: removes the PENDING record of `key` if its id is `expected_id`
    /// (counted as a finalization won and a record reclaimed).
    pub fn take(&self, key: &K, expected_id: u64) -> Result<(), TakeError> {
        let mut st = self.state.lock().unwrap();
        let rec = st.records.get(key).ok_or(TakeError::NotFound)?;
        if let Some(outcome) = rec.outcome() {
            return Err(TakeError::Finalized(outcome));
        }
        if rec.id != expected_id {
            return Err(TakeError::Mismatch);
        }
        st.records.remove(key);
        st.count(LedgerEvent::FinalizeWon, 1);
        st.count(LedgerEvent::Reclaimed, 1);
        Ok(())
    }

    /// Refreshes a PENDING record of `runner`; the refresh time never moves back.
    pub fn touch(&self, key: &K, runner: u64, now: u64) -> Result<(), TouchError> {
        let mut st = self.state.lock().unwrap();
        let rec = st.records.get_mut(key).ok_or(TouchError::NotFound)?;
        if let Some(outcome) = rec.outcome() {
            return Err(TouchError::Finalized(outcome));
        }
        if rec.runner != runner {
            return Err(TouchError::NotRunner);
        }
        rec.refreshed_at = rec.refreshed_at.max(now);
        Ok(())
    }

    /// Finalizes (payload 0, at `now`) every PENDING record that `pick` accepts; returns how
    /// many.
    fn finalize_all(
        st: &mut LedgerState<K>,
        outcome: Outcome,
        now: u64,
        pick: impl Fn(&LedgerRecord) -> bool,
    ) -> u64 {
        let mut changed = 0;
        for rec in st.records.values_mut() {
            if rec.state.is_pending() && pick(rec) {
                rec.finalize(outcome, 0, now);
                changed += 1;
            }
        }
        changed
    }

    /// A whole pass of the reconciler: times out every PENDING record whose deadline is
    /// `<= now`.
    pub fn reconcile_all(&self, now: u64) -> usize {
        let mut st = self.state.lock().unwrap();
        let changed = Self::finalize_all(&mut st, Outcome::TimedOut, now, |r| r.deadline <= now);
        st.count(LedgerEvent::ReconciledTimeout, changed);
        changed as usize
    }

    /// A whole pass of reclaim: removes every terminal record finalized at least the retention
    /// before `now` (saturating; a record finalized at the unset time `u64::MAX` stays).
    pub fn reclaim_all(&self, now: u64) -> usize {
        let retention = self.config.retention;
        let mut st = self.state.lock().unwrap();
        let before = st.records.len();
        st.records.retain(|_, r| {
            r.state.is_pending()
                || r.finalized_at == u64::MAX
                || now < r.finalized_at.saturating_add(retention)
        });
        let changed = before - st.records.len();
        st.count(LedgerEvent::Reclaimed, changed as u64);
        changed
    }

    /// A whole pass of a restarting runner's clean-up: finalizes with `outcome` every PENDING
    /// record that names `runner`; runner 0 finalizes nothing.
    pub fn finalize_own_all(&self, runner: u64, outcome: Outcome, now: u64) -> usize {
        if runner == 0 {
            return 0;
        }
        let mut st = self.state.lock().unwrap();
        let changed = Self::finalize_all(&mut st, outcome, now, |r| r.runner == runner);
        st.count(LedgerEvent::FinalizeWon, changed);
        changed as usize
    }

    /// A whole pass of the orphan sweep: finalizes as `Orphaned` every PENDING record that names
    /// a runner and was refreshed at or before `now - quiet` (saturating).
    pub fn sweep_orphans_all(&self, now: u64, quiet: u64) -> usize {
        let mut st = self.state.lock().unwrap();
        let changed = Self::finalize_all(&mut st, Outcome::Orphaned, now, |r| {
            r.runner != 0 && r.refreshed_at.saturating_add(quiet) <= now
        });
        st.count(LedgerEvent::FinalizeWon, changed);
        changed as usize
    }

    /// The view of the record of `key`.
    pub fn get(&self, key: &K) -> Option<RecordView> {
        self.state
            .lock()
            .unwrap()
            .records
            .get(key)
            .map(|r| r.view())
    }
}

/// The reference of `wkcore::coord::WindowedCounter`: (window end, count).
#[derive(Debug, Default)]
pub struct MutexWindowedCounter {
    state: Mutex<(u64, u32)>,
}

impl MutexWindowedCounter {
    /// A counter at zero (its window ended at 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one at `now`: a new window of count 1 ending `now + window` when the current one
    /// has ended by `now`, otherwise one more (saturating at `WINDOW_COUNT_MAX`).
    pub fn increment(&self, now: u64, window: u64) -> Result<u32, WindowError> {
        if window == 0 || now.checked_add(window).is_none_or(|e| e > WINDOW_TIME_MAX) {
            return Err(WindowError::TimeOutOfRange);
        }
        let mut s = self.state.lock().unwrap();
        *s = if now >= s.0 {
            (now + window, 1)
        } else {
            (s.0, (s.1 + 1).min(WINDOW_COUNT_MAX))
        };
        Ok(s.1)
    }

    /// The count at `now`: 0 once the window has ended.
    pub fn count(&self, now: u64) -> u32 {
        let s = self.state.lock().unwrap();
        if now >= s.0 {
            0
        } else {
            s.1
        }
    }

    /// When the current window ends (`None` when it has ended by `now`).
    pub fn window_end(&self, now: u64) -> Option<u64> {
        let s = self.state.lock().unwrap();
        (now < s.0).then_some(s.0)
    }
}
