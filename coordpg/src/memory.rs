//! The in-memory backend: the contract over `wkcore::coord`'s lock-free types, for one process.
//! Every call is decided at once (nothing waits); the futures are ready when first polled.
//!
//! The core results map to [`Decision`]s as the scenario file's table says: an insert that finds
//! a PENDING record is lost, a terminal one a duplicate; a claim that finds a claimed record is
//! lost, another placeholder a mismatch; a take or touch that wins has no state to tell.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wkcore::coord::{
    AnchorTable, ByteKey, ByteLedger, ClaimError, Counter, ExclusiveTrigger, FinalizeError, Flip,
    HandoffLedger, InsertError, LedgerConfig, LedgerCounts, LedgerEvent, TakeError, TouchError,
    WindowedCounter,
};

use crate::contract::{
    check_batch, check_batch_len, check_key, check_time, check_window, AnchorStore,
    AnchorTableError, Batch, CounterStore, Counts, Decision, Error, Fire, FlipStore, HandoffKey,
    HandoffStore, LedgerStore, NewRecord, Outcome, Page, RecordState, RecordView, TriggerStore,
    Verdict, WindowStore,
};

/// The decision of an insert (or placement, or hand-off claim).
pub fn insert_decision(r: Result<(), InsertError>) -> Decision {
    match r {
        Ok(()) => Decision::new(Verdict::Won, Some(RecordState::Placed)),
        Err(InsertError::Full) => Decision::new(Verdict::Full, None),
        Err(InsertError::Exists(s)) if s.is_pending() => Decision::new(Verdict::Lost, Some(s)),
        Err(InsertError::Exists(s)) => Decision::new(Verdict::Duplicate, Some(s)),
        // The contract refuses the reserved time before the core sees it.
        Err(InsertError::InvalidTime) => Decision::new(Verdict::NotFound, None),
    }
}

/// The decision of a claim.
pub fn claim_decision(r: Result<(), ClaimError>) -> Decision {
    match r {
        Ok(()) => Decision::new(Verdict::Won, Some(RecordState::Claimed)),
        Err(ClaimError::Lost) => Decision::new(Verdict::Lost, Some(RecordState::Claimed)),
        Err(ClaimError::PlaceholderMismatch) => {
            Decision::new(Verdict::Mismatch, Some(RecordState::Placed))
        }
        Err(ClaimError::Finalized(o)) => {
            Decision::new(Verdict::Duplicate, Some(RecordState::Finalized(o)))
        }
        Err(ClaimError::NotFound) => Decision::new(Verdict::NotFound, None),
    }
}

/// The decision of a finalization with `outcome`.
pub fn finalize_decision(r: Result<(), FinalizeError>, outcome: Outcome) -> Decision {
    match r {
        Ok(()) => Decision::new(Verdict::Won, Some(RecordState::Finalized(outcome))),
        Err(FinalizeError::Duplicate(o)) => {
            Decision::new(Verdict::Duplicate, Some(RecordState::Finalized(o)))
        }
        Err(FinalizeError::NotFound) => Decision::new(Verdict::NotFound, None),
    }
}

/// The decision of a compare-and-delete, with the state the ledger reported (the PENDING state
/// found on a mismatch).
pub fn take_decision(r: (Result<(), TakeError>, Option<RecordState>)) -> Decision {
    let (r, state) = r;
    match r {
        Ok(()) => Decision::new(Verdict::Won, None),
        Err(TakeError::Mismatch) => Decision::new(Verdict::Mismatch, state),
        Err(TakeError::Finalized(o)) => {
            Decision::new(Verdict::Duplicate, Some(RecordState::Finalized(o)))
        }
        Err(TakeError::NotFound) => Decision::new(Verdict::NotFound, None),
    }
}

/// The decision of a heartbeat, with the state the ledger reported (the PENDING state it
/// refreshed or found).
pub fn touch_decision(r: (Result<(), TouchError>, Option<RecordState>)) -> Decision {
    let (r, state) = r;
    match r {
        Ok(()) => Decision::new(Verdict::Won, state),
        Err(TouchError::NotRunner) => Decision::new(Verdict::Mismatch, state),
        Err(TouchError::Finalized(o)) => {
            Decision::new(Verdict::Duplicate, Some(RecordState::Finalized(o)))
        }
        Err(TouchError::NotFound) => Decision::new(Verdict::NotFound, None),
    }
}

fn counts_of(c: LedgerCounts) -> Counts {
    Counts {
        claims_won: c.get(LedgerEvent::ClaimWon),
        claims_lost: c.get(LedgerEvent::ClaimLost),
        finalizations_won: c.get(LedgerEvent::FinalizeWon),
        finalizations_duplicate: c.get(LedgerEvent::FinalizeDuplicate),
        reconciled_timeouts: c.get(LedgerEvent::ReconciledTimeout),
        rejected_full: c.get(LedgerEvent::RejectedFull),
        reclaimed: c.get(LedgerEvent::Reclaimed),
    }
}

fn byte_key(key: &[u8]) -> Result<ByteKey, Error> {
    check_key(key)?;
    Ok(ByteKey::new(key)?)
}

fn byte_keys(keys: &[&[u8]]) -> Result<Vec<ByteKey>, Error> {
    check_batch(keys)?;
    keys.iter().map(|k| byte_key(k)).collect()
}

/// [`LedgerStore`] over a [`ByteLedger`].
#[derive(Debug)]
pub struct MemoryLedger {
    ledger: ByteLedger,
}

impl MemoryLedger {
    /// A new ledger with `config` (its kind must be `Claim` or `Pending`).
    pub fn new(config: LedgerConfig) -> Result<Self, Error> {
        Ok(Self::from_ledger(
            ByteLedger::new(config).map_err(|_| Error::InvalidCapacity)?,
        ))
    }

    /// Adapts `ledger`.
    pub fn from_ledger(ledger: ByteLedger) -> Self {
        Self { ledger }
    }

    /// The core ledger.
    pub fn ledger(&self) -> &ByteLedger {
        &self.ledger
    }
}

impl LedgerStore for MemoryLedger {
    async fn insert(&self, key: &[u8], record: NewRecord, now: u64) -> Result<Decision, Error> {
        let key = byte_key(key)?;
        check_time(now)?;
        Ok(insert_decision(self.ledger.insert(&key, record, now)))
    }

    async fn place(
        &self,
        keys: &[&[u8]],
        placeholder: u64,
        deadline: u64,
        now: u64,
    ) -> Result<Batch, Error> {
        let keys = byte_keys(keys)?;
        check_time(now)?;
        let mut out = vec![Ok(()); keys.len()];
        match self
            .ledger
            .place(&keys, placeholder, deadline, now, &mut out)
        {
            Ok(n) => Ok(Batch {
                won: n,
                decisions: out.into_iter().map(insert_decision).collect(),
            }),
            Err(e) => Ok(Batch {
                won: 0,
                decisions: vec![insert_decision(Err(e)); keys.len()],
            }),
        }
    }

    async fn claim(
        &self,
        key: &[u8],
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        let key = byte_key(key)?;
        check_time(now)?;
        Ok(claim_decision(self.ledger.claim(
            &key,
            placeholder,
            request_id,
            runner,
            now,
        )))
    }

    async fn finalize(
        &self,
        key: &[u8],
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        let key = byte_key(key)?;
        check_time(now)?;
        Ok(finalize_decision(
            self.ledger.finalize(&key, outcome, payload, now),
            outcome,
        ))
    }

    async fn finalize_batch(
        &self,
        keys: &[&[u8]],
        payloads: Option<&[u64]>,
        outcome: Outcome,
        now: u64,
    ) -> Result<Batch, Error> {
        let keys = byte_keys(keys)?;
        if payloads.is_some_and(|p| p.len() != keys.len()) {
            return Err(Error::InvalidArgument);
        }
        check_time(now)?;
        let zeros;
        let payloads = match payloads {
            Some(p) => p,
            None => {
                zeros = vec![0; keys.len()];
                &zeros
            }
        };
        let mut out = vec![Ok(()); keys.len()];
        let won = self
            .ledger
            .finalize_batch(&keys, payloads, outcome, now, &mut out);
        Ok(Batch {
            won,
            decisions: out
                .into_iter()
                .map(|r| finalize_decision(r, outcome))
                .collect(),
        })
    }

    async fn take(&self, key: &[u8], expected_id: u64) -> Result<Decision, Error> {
        let key = byte_key(key)?;
        Ok(take_decision(
            self.ledger.take_with_state(&key, expected_id),
        ))
    }

    async fn touch(&self, key: &[u8], runner: u64, now: u64) -> Result<Decision, Error> {
        let key = byte_key(key)?;
        check_time(now)?;
        Ok(touch_decision(
            self.ledger.touch_with_state(&key, runner, now),
        ))
    }

    async fn reconcile(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.reconcile(now, limit))
    }

    async fn reclaim(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.reclaim(now, limit))
    }

    async fn finalize_own(
        &self,
        runner: u64,
        outcome: Outcome,
        now: u64,
        limit: usize,
    ) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.finalize_own(runner, outcome, now, limit))
    }

    async fn sweep_orphans(&self, now: u64, quiet: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.sweep_orphans(now, quiet, limit))
    }

    async fn get(&self, key: &[u8]) -> Result<Option<RecordView>, Error> {
        let key = byte_key(key)?;
        Ok(self.ledger.get(&key))
    }

    async fn len(&self) -> Result<usize, Error> {
        Ok(self.ledger.len())
    }

    fn counts(&self) -> Counts {
        counts_of(self.ledger.counts())
    }
}

/// [`HandoffStore`] over a [`HandoffLedger`].
#[derive(Debug)]
pub struct MemoryHandoffs {
    ledger: HandoffLedger,
}

impl MemoryHandoffs {
    /// A new hand-off ledger of `capacity` records kept `retention` after completion.
    pub fn new(capacity: usize, retention: u64) -> Result<Self, Error> {
        let config = LedgerConfig {
            capacity,
            retention,
            kind: wkcore::coord::LedgerKind::Handoff,
        };
        Ok(Self {
            ledger: HandoffLedger::new(config).map_err(|_| Error::InvalidCapacity)?,
        })
    }

    /// Adapts `ledger` (built with kind `Handoff`, so that claims are counted).
    pub fn from_ledger(ledger: HandoffLedger) -> Self {
        Self { ledger }
    }
}

fn handoff_record(deadline: u64) -> NewRecord {
    NewRecord {
        id: 0,
        runner: 0,
        deadline,
    }
}

impl HandoffStore for MemoryHandoffs {
    async fn claim(&self, key: &HandoffKey, deadline: u64, now: u64) -> Result<Decision, Error> {
        check_time(now)?;
        Ok(insert_decision(self.ledger.insert(
            key,
            handoff_record(deadline),
            now,
        )))
    }

    async fn claim_batch(
        &self,
        keys: &[HandoffKey],
        deadline: u64,
        now: u64,
    ) -> Result<Batch, Error> {
        check_batch_len(keys.len())?;
        check_time(now)?;
        Ok(Batch::of(
            keys.iter()
                .map(|k| insert_decision(self.ledger.insert(k, handoff_record(deadline), now)))
                .collect(),
        ))
    }

    async fn complete(
        &self,
        key: &HandoffKey,
        outcome: Outcome,
        now: u64,
    ) -> Result<Decision, Error> {
        check_time(now)?;
        Ok(finalize_decision(
            self.ledger.finalize(key, outcome, 0, now),
            outcome,
        ))
    }

    async fn reconcile(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.reconcile(now, limit))
    }

    async fn reclaim(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        Ok(self.ledger.reclaim(now, limit))
    }

    async fn get(&self, key: &HandoffKey) -> Result<Option<RecordView>, Error> {
        Ok(self.ledger.get(key))
    }

    async fn len(&self) -> Result<usize, Error> {
        Ok(self.ledger.len())
    }

    fn counts(&self) -> Counts {
        counts_of(self.ledger.counts())
    }
}

/// [`AnchorStore`] over an [`AnchorTable`].
#[derive(Debug)]
pub struct MemoryAnchors {
    table: AnchorTable,
}

impl MemoryAnchors {
    /// A new table of at most `capacity` anchors.
    pub fn new(capacity: usize) -> Result<Self, Error> {
        Ok(Self {
            table: AnchorTable::new(capacity).map_err(|_| Error::InvalidCapacity)?,
        })
    }
}

impl AnchorStore for MemoryAnchors {
    async fn insert(&self, id: u64, value: Option<u64>) -> Result<(), Error> {
        if let Some(v) = value {
            check_time(v)?;
        }
        self.table.insert(id, value).map_err(Error::Anchor)
    }

    async fn remove(&self, id: u64) -> Result<(), Error> {
        self.table.remove(id).map_err(Error::Anchor)
    }

    async fn try_fire(&self, id: u64, now: u64, period: u64) -> Result<Fire, Error> {
        check_time(now)?;
        self.table.try_fire(id, now, period).map_err(Error::Anchor)
    }

    async fn advance(&self, id: u64, expected: u64, next: u64) -> Result<bool, Error> {
        check_time(next)?;
        self.table
            .advance(id, expected, next)
            .map_err(Error::Anchor)
    }

    async fn anchor_unset(&self, id: u64, now: u64) -> Result<bool, Error> {
        check_time(now)?;
        self.table.anchor_unset(id, now).map_err(Error::Anchor)
    }

    async fn get(&self, id: u64) -> Result<Option<u64>, Error> {
        self.table.get(id).map_err(Error::Anchor)
    }

    async fn len(&self) -> Result<usize, Error> {
        Ok(self.table.len())
    }
}

/// One in-memory word per key, made on the key's first use (under a mutex: the map is the
/// adapter's, the decisions are the words' own lock-free transitions).
#[derive(Debug)]
struct Keyed<W> {
    words: Mutex<HashMap<Vec<u8>, Arc<W>>>,
}

impl<W> Keyed<W> {
    fn new() -> Self {
        Self {
            words: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, key: &[u8], make: impl FnOnce() -> W) -> Result<Arc<W>, Error> {
        check_key(key)?;
        let mut words = self.words.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(w) = words.get(key) {
            return Ok(Arc::clone(w));
        }
        let w = Arc::new(make());
        words.insert(key.to_vec(), Arc::clone(&w));
        Ok(w)
    }
}

/// A [`FlipStore`] of [`Flip`]s, each made in the initial state on its key's first use.
#[derive(Debug)]
pub struct MemoryFlips {
    initial: u64,
    words: Keyed<Flip>,
}

impl MemoryFlips {
    /// A store whose keys start in `initial`.
    pub fn new(initial: u64) -> Self {
        Self {
            initial,
            words: Keyed::new(),
        }
    }
}

impl FlipStore for MemoryFlips {
    async fn flip(&self, key: &[u8], from: u64, to: u64) -> Result<bool, Error> {
        Ok(self
            .words
            .get(key, || Flip::new(self.initial))?
            .flip(from, to))
    }

    async fn get(&self, key: &[u8]) -> Result<u64, Error> {
        Ok(self.words.get(key, || Flip::new(self.initial))?.get())
    }
}

/// A [`CounterStore`] of [`Counter`]s starting at 0.
#[derive(Debug)]
pub struct MemoryCounters {
    words: Keyed<Counter>,
}

impl MemoryCounters {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            words: Keyed::new(),
        }
    }
}

impl Default for MemoryCounters {
    fn default() -> Self {
        Self::new()
    }
}

impl CounterStore for MemoryCounters {
    async fn increment(&self, key: &[u8]) -> Result<u64, Error> {
        Ok(self.words.get(key, || Counter::new(0))?.increment())
    }

    async fn get(&self, key: &[u8]) -> Result<u64, Error> {
        Ok(self.words.get(key, || Counter::new(0))?.get())
    }
}

/// A [`TriggerStore`] of [`ExclusiveTrigger`]s, inactive at run 0.
#[derive(Debug)]
pub struct MemoryTriggers {
    words: Keyed<ExclusiveTrigger>,
}

impl MemoryTriggers {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            words: Keyed::new(),
        }
    }
}

impl Default for MemoryTriggers {
    fn default() -> Self {
        Self::new()
    }
}

impl TriggerStore for MemoryTriggers {
    async fn trigger(&self, key: &[u8]) -> Result<u64, Error> {
        self.words
            .get(key, ExclusiveTrigger::default)?
            .trigger()
            .map_err(Error::Trigger)
    }

    async fn finish(&self, key: &[u8], run: u64) -> Result<bool, Error> {
        Ok(self.words.get(key, ExclusiveTrigger::default)?.finish(run))
    }

    async fn active(&self, key: &[u8]) -> Result<Option<u64>, Error> {
        Ok(self.words.get(key, ExclusiveTrigger::default)?.active())
    }

    async fn last_run(&self, key: &[u8]) -> Result<u64, Error> {
        Ok(self.words.get(key, ExclusiveTrigger::default)?.last_run())
    }
}

/// A [`WindowStore`] of [`WindowedCounter`]s.
#[derive(Debug)]
pub struct MemoryWindows {
    words: Keyed<WindowedCounter>,
}

impl MemoryWindows {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            words: Keyed::new(),
        }
    }
}

impl Default for MemoryWindows {
    fn default() -> Self {
        Self::new()
    }
}

impl WindowStore for MemoryWindows {
    async fn increment(&self, key: &[u8], now: u64, window: u64) -> Result<u32, Error> {
        check_window(now, window)?;
        self.words
            .get(key, WindowedCounter::new)?
            .increment(now, window)
            .map_err(Error::Window)
    }

    async fn count(&self, key: &[u8], now: u64) -> Result<u32, Error> {
        Ok(self.words.get(key, WindowedCounter::new)?.count(now))
    }
}

/// Reports whether `e` is the anchor table's "not found".
pub fn is_anchor_not_found(e: &Error) -> bool {
    matches!(e, Error::Anchor(AnchorTableError::NotFound))
}
