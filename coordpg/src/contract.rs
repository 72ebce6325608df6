//! The coordination contract, named once: the traits a host writes against, the decisions they
//! return and the errors they report, whichever backend answers ([`crate::memory`] in one
//! process, [`crate::pg`] across replicas).
//!
//! The shapes follow the in-memory types of `wkcore::coord`, with `async` calls. The words
//! (flip, counter, exclusive trigger, windowed counter) are keyed: a store holds one word per key
//! (1 to [`KEY_MAX`] bytes), and a key never used is the word's initial state, so no call creates
//! a word before it decides on it.
//!
//! Arguments are checked the same way by every backend, before anything is decided (a refused
//! call changes nothing): keys by `wkcore::coord`'s rules ([`KeyError`]), the reserved time
//! `u64::MAX` ([`Error::InvalidTime`]), batches of 1 to [`BATCH_MAX`] keys
//! ([`Error::InvalidArgument`]). An [`Outcome`] is valid by construction. A store that cannot
//! decide reports [`Error::Store`], never a lost race: a lost race is a [`Decision`].

use std::fmt;
use std::future::Future;

pub use wkcore::coord::{
    AnchorTableError, Fire, HandoffKey, KeyError, NewRecord, Outcome, Page, RecordState,
    RecordView, TriggerError, WindowError, CHANNEL_ID_MAX, KEY_MAX, TAG_KEY_MAX, WINDOW_COUNT_MAX,
    WINDOW_TIME_MAX,
};

/// The most keys one batch call (place, finalize a batch, claim hand-offs) takes.
pub const BATCH_MAX: usize = 4096;
/// The reserved time: "never" as a deadline, refused as `now`.
pub const TIME_UNSET: u64 = u64::MAX;
/// The last run number of an exclusive trigger (`2^63 - 1`); after it a trigger is exhausted.
pub const RUN_MAX: u64 = (1 << 63) - 1;

/// Who won a decision on a record, as the caller learns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// This call made the transition.
    Won,
    /// Another caller holds the record (a PENDING record exists, a claim won first).
    Lost,
    /// The record is terminal: the transition was made before, by someone.
    Duplicate,
    /// No record with this key.
    NotFound,
    /// The in-memory ledger is full (never from the database: its table is not bounded).
    Full,
    /// The record holds another id (placeholder, expected id) or another runner.
    Mismatch,
}

/// A decision on one record: the verdict and the record's state (after a win, or as the loser
/// found it; `None` when there is no state to tell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// Who won.
    pub result: Verdict,
    /// The record's state.
    pub state: Option<RecordState>,
}

impl Decision {
    /// A decision of `result` with `state`.
    pub const fn new(result: Verdict, state: Option<RecordState>) -> Self {
        Self { result, state }
    }

    /// True when this call won.
    pub const fn won(&self) -> bool {
        matches!(self.result, Verdict::Won)
    }
}

/// The decisions of one batch call, one per key in order, and how many won.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// How many keys this call won (placed, finalized, claimed).
    pub won: usize,
    /// One decision per key.
    pub decisions: Vec<Decision>,
}

impl Batch {
    /// A batch of `decisions`, counting the wins.
    pub fn of(decisions: Vec<Decision>) -> Self {
        Self {
            won: decisions.iter().filter(|d| d.won()).count(),
            decisions,
        }
    }
}

/// A ledger's decisions as counted by one handle (every replica counts its own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Claims (and hand-off claims) won.
    pub claims_won: u64,
    /// Claims that did not win.
    pub claims_lost: u64,
    /// Finalizations won (and won takes, and records of the runner sweeps).
    pub finalizations_won: u64,
    /// Finalizations told they were duplicates.
    pub finalizations_duplicate: u64,
    /// Records the reconciler timed out.
    pub reconciled_timeouts: u64,
    /// Keys refused because the ledger was full (memory only).
    pub rejected_full: u64,
    /// Records reclaimed (and won takes).
    pub reclaimed: u64,
}

/// Why the database could not decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// The database could not be reached, or the connection broke and the decision could not be
    /// resolved in time ([`StoreError::uncertain`] then says it may have committed).
    Unavailable,
    /// The call's time limit passed before the statement was decided; nothing was decided for it.
    Timeout,
    /// The database's schema is not the one this driver knows (a newer version, a missing table).
    SchemaMismatch,
}

/// An error of the store itself (never an argument's, never a lost race).
#[derive(Debug)]
pub struct StoreError {
    /// What went wrong.
    pub kind: StoreErrorKind,
    /// The statement's name (its `-- name:` in the SQL files), or the step (`connect`,
    /// `migrate`).
    pub statement: &'static str,
    /// The decision's request id (0 for a read).
    pub request_id: u64,
    /// The statement was sent and its commit could not be resolved: it may have won. Ask the
    /// store about `request_id` later.
    pub uncertain: bool,
    /// The driver's error, when there is one.
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            StoreErrorKind::Unavailable => "store unavailable",
            StoreErrorKind::Timeout => "store timeout",
            StoreErrorKind::SchemaMismatch => "schema mismatch",
        };
        write!(f, "coordpg: {kind}: {}", self.statement)?;
        if self.uncertain {
            write!(
                f,
                " (uncertain: request {} may have committed)",
                self.request_id
            )?;
        }
        if let Some(e) = &self.source {
            write!(f, ": {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Every error of the contract: an argument refused (nothing changed), an answer of the anchor
/// table or trigger that is not a decision, or the store's own failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A key refused: empty or longer than its maximum.
    InvalidKey(KeyError),
    /// A time of `u64::MAX` (reserved), where a time is required.
    InvalidTime,
    /// A batch of 0 or more than [`BATCH_MAX`] keys, or payloads of another length.
    InvalidArgument,
    /// A capacity of 0 or above its maximum (checked as in memory by every backend).
    InvalidCapacity,
    /// The anchor table's answer: no anchor with that id, one exists already, the in-memory
    /// table is full.
    Anchor(AnchorTableError),
    /// An exclusive trigger refused to start a run: which run holds it, or the numbers are spent.
    Trigger(TriggerError),
    /// A windowed counter refused the window (0, or ending past [`WINDOW_TIME_MAX`]).
    Window(WindowError),
    /// The store could not decide.
    Store(StoreError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidKey(e) => write!(f, "coord: invalid key: {e}"),
            Error::InvalidTime => f.write_str("coord: invalid time"),
            Error::InvalidArgument => f.write_str("coord: invalid argument"),
            Error::InvalidCapacity => f.write_str("coord: invalid capacity"),
            Error::Anchor(e) => write!(f, "coord: anchor table: {e:?}"),
            Error::Trigger(e) => write!(f, "coord: {e}"),
            Error::Window(e) => write!(f, "coord: window: {e:?}"),
            Error::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::InvalidKey(e) => Some(e),
            Error::Trigger(e) => Some(e),
            Error::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<KeyError> for Error {
    fn from(e: KeyError) -> Self {
        Error::InvalidKey(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

/// Checks a byte key (1 to [`KEY_MAX`] bytes).
pub fn check_key(key: &[u8]) -> Result<(), Error> {
    if key.is_empty() {
        Err(Error::InvalidKey(KeyError::Empty))
    } else if key.len() > KEY_MAX {
        Err(Error::InvalidKey(KeyError::TooLong {
            len: key.len(),
            max: KEY_MAX,
        }))
    } else {
        Ok(())
    }
}

/// Refuses the reserved time.
pub fn check_time(now: u64) -> Result<(), Error> {
    if now == TIME_UNSET {
        Err(Error::InvalidTime)
    } else {
        Ok(())
    }
}

/// Checks a batch of byte keys: 1 to [`BATCH_MAX`], each a valid key.
pub fn check_batch(keys: &[&[u8]]) -> Result<(), Error> {
    check_batch_len(keys.len())?;
    keys.iter().try_for_each(|k| check_key(k))
}

/// Checks a batch's length: 1 to [`BATCH_MAX`].
pub fn check_batch_len(n: usize) -> Result<(), Error> {
    if n == 0 || n > BATCH_MAX {
        Err(Error::InvalidArgument)
    } else {
        Ok(())
    }
}

/// Checks a window: not 0, ending at most at [`WINDOW_TIME_MAX`].
pub fn check_window(now: u64, window: u64) -> Result<(), Error> {
    if window == 0
        || now
            .checked_add(window)
            .is_none_or(|end| end > WINDOW_TIME_MAX)
    {
        Err(Error::Window(WindowError::TimeOutOfRange))
    } else {
        Ok(())
    }
}

/// The contract of a byte-keyed ledger: two-phase claims, pending-only finalization, the
/// reconciler, retention and reclaim, runner marks and compare-and-delete.
pub trait LedgerStore: Send + Sync {
    /// Inserts a PENDING record under `key`; the first insert wins, a later one is lost (while
    /// PENDING) or a duplicate (once terminal).
    fn insert(
        &self,
        key: &[u8],
        record: NewRecord,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// Places one PENDING record holding `placeholder` per absent key (phase one of a claim).
    fn place(
        &self,
        keys: &[&[u8]],
        placeholder: u64,
        deadline: u64,
        now: u64,
    ) -> impl Future<Output = Result<Batch, Error>> + Send;
    /// Swaps `placeholder` for `request_id` while the record is placed and holds it: one wins.
    fn claim(
        &self,
        key: &[u8],
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// Moves the PENDING record to `outcome`; the first terminal write wins, a duplicate is told
    /// what won and leaves `payload` for audit.
    fn finalize(
        &self,
        key: &[u8],
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// [`LedgerStore::finalize`] for many keys with one outcome (`payloads`: one per key, or
    /// `None` for 0s).
    fn finalize_batch(
        &self,
        keys: &[&[u8]],
        payloads: Option<&[u64]>,
        outcome: Outcome,
        now: u64,
    ) -> impl Future<Output = Result<Batch, Error>> + Send;
    /// Compare-and-delete: removes the PENDING record if it holds `expected_id`.
    fn take(
        &self,
        key: &[u8],
        expected_id: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// The runner's heartbeat on its PENDING record.
    fn touch(
        &self,
        key: &[u8],
        runner: u64,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// Times out up to `limit` PENDING records past their deadline.
    fn reconcile(&self, now: u64, limit: usize)
        -> impl Future<Output = Result<Page, Error>> + Send;
    /// Frees up to `limit` terminal records whose retention has passed.
    fn reclaim(&self, now: u64, limit: usize) -> impl Future<Output = Result<Page, Error>> + Send;
    /// Finalizes with `outcome` up to `limit` PENDING records of `runner` (0: none).
    fn finalize_own(
        &self,
        runner: u64,
        outcome: Outcome,
        now: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Page, Error>> + Send;
    /// Finalizes as orphaned up to `limit` PENDING records whose runner was quiet for `quiet`.
    fn sweep_orphans(
        &self,
        now: u64,
        quiet: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Page, Error>> + Send;
    /// The record of `key`, if any.
    fn get(&self, key: &[u8]) -> impl Future<Output = Result<Option<RecordView>, Error>> + Send;
    /// How many records the ledger holds.
    fn len(&self) -> impl Future<Output = Result<usize, Error>> + Send;
    /// True when the ledger holds no record.
    fn is_empty(&self) -> impl Future<Output = Result<bool, Error>> + Send {
        async { Ok(self.len().await? == 0) }
    }
    /// This handle's decisions.
    fn counts(&self) -> Counts;
}

/// The contract of a hand-off ledger: the first claim of a 6-tuple wins.
pub trait HandoffStore: Send + Sync {
    /// Claims the hand-off: the first claim wins; a retry is lost while in flight, a duplicate
    /// once completed.
    fn claim(
        &self,
        key: &HandoffKey,
        deadline: u64,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// Claims many hand-offs.
    fn claim_batch(
        &self,
        keys: &[HandoffKey],
        deadline: u64,
        now: u64,
    ) -> impl Future<Output = Result<Batch, Error>> + Send;
    /// Completes (finalizes) the hand-off.
    fn complete(
        &self,
        key: &HandoffKey,
        outcome: Outcome,
        now: u64,
    ) -> impl Future<Output = Result<Decision, Error>> + Send;
    /// Times out hand-offs past their deadline.
    fn reconcile(&self, now: u64, limit: usize)
        -> impl Future<Output = Result<Page, Error>> + Send;
    /// Frees completed hand-offs past retention.
    fn reclaim(&self, now: u64, limit: usize) -> impl Future<Output = Result<Page, Error>> + Send;
    /// The hand-off's record.
    fn get(
        &self,
        key: &HandoffKey,
    ) -> impl Future<Output = Result<Option<RecordView>, Error>> + Send;
    /// How many hand-offs are held.
    fn len(&self) -> impl Future<Output = Result<usize, Error>> + Send;
    /// True when no hand-off is held.
    fn is_empty(&self) -> impl Future<Output = Result<bool, Error>> + Send {
        async { Ok(self.len().await? == 0) }
    }
    /// This handle's decisions.
    fn counts(&self) -> Counts;
}

/// The contract of an anchor table: scheduled-trigger anchors by id, with the unset-anchor
/// first-seen transition.
pub trait AnchorStore: Send + Sync {
    /// Adds `id`, unset (`None`) or at `value`; [`AnchorTableError::Exists`] if present.
    fn insert(&self, id: u64, value: Option<u64>)
        -> impl Future<Output = Result<(), Error>> + Send;
    /// Removes `id`; [`AnchorTableError::NotFound`] if absent.
    fn remove(&self, id: u64) -> impl Future<Output = Result<(), Error>> + Send;
    /// Fires the trigger if due (one caller of many wins), anchoring an unset one first-seen.
    fn try_fire(
        &self,
        id: u64,
        now: u64,
        period: u64,
    ) -> impl Future<Output = Result<Fire, Error>> + Send;
    /// Moves the anchor from `expected` to `next`: true for the one caller that did.
    fn advance(
        &self,
        id: u64,
        expected: u64,
        next: u64,
    ) -> impl Future<Output = Result<bool, Error>> + Send;
    /// The explicit unset → `now` transition: true for the one caller that did.
    fn anchor_unset(&self, id: u64, now: u64) -> impl Future<Output = Result<bool, Error>> + Send;
    /// The anchor's value (`None` while unset).
    fn get(&self, id: u64) -> impl Future<Output = Result<Option<u64>, Error>> + Send;
    /// How many anchors the table holds.
    fn len(&self) -> impl Future<Output = Result<usize, Error>> + Send;
    /// True when the table holds no anchor.
    fn is_empty(&self) -> impl Future<Output = Result<bool, Error>> + Send {
        async { Ok(self.len().await? == 0) }
    }
}

/// One flip per key; a key never flipped is in the store's initial state.
pub trait FlipStore: Send + Sync {
    /// Moves `key` from `from` to `to`: true only for the caller that did (never when equal).
    fn flip(
        &self,
        key: &[u8],
        from: u64,
        to: u64,
    ) -> impl Future<Output = Result<bool, Error>> + Send;
    /// The state of `key`.
    fn get(&self, key: &[u8]) -> impl Future<Output = Result<u64, Error>> + Send;
}

/// One counter per key, starting at 0.
pub trait CounterStore: Send + Sync {
    /// Adds one and returns the new value, unique to this call (wrapping at 2^64).
    fn increment(&self, key: &[u8]) -> impl Future<Output = Result<u64, Error>> + Send;
    /// The value of `key`.
    fn get(&self, key: &[u8]) -> impl Future<Output = Result<u64, Error>> + Send;
}

/// One exclusive trigger per key, inactive at run 0.
pub trait TriggerStore: Send + Sync {
    /// Starts the next run and returns its number; refused with [`TriggerError::Busy`] naming
    /// the active run, or [`TriggerError::Exhausted`] after [`RUN_MAX`].
    fn trigger(&self, key: &[u8]) -> impl Future<Output = Result<u64, Error>> + Send;
    /// Ends `run`: true only for the run that holds the key.
    fn finish(&self, key: &[u8], run: u64) -> impl Future<Output = Result<bool, Error>> + Send;
    /// The active run, if any.
    fn active(&self, key: &[u8]) -> impl Future<Output = Result<Option<u64>, Error>> + Send;
    /// The number of the last run started (0: none).
    fn last_run(&self, key: &[u8]) -> impl Future<Output = Result<u64, Error>> + Send;
}

/// One windowed counter per key.
pub trait WindowStore: Send + Sync {
    /// Counts one in the window and returns the new count: a new window (count 1, ending at
    /// `now + window`) once `now` is at or past the end; saturating at [`WINDOW_COUNT_MAX`].
    fn increment(
        &self,
        key: &[u8],
        now: u64,
        window: u64,
    ) -> impl Future<Output = Result<u32, Error>> + Send;
    /// The count at `now` (0 once the window has ended).
    fn count(&self, key: &[u8], now: u64) -> impl Future<Output = Result<u32, Error>> + Send;
}
