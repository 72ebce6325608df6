//! [`Ledger`]: a bounded table of records that are PENDING until exactly one terminal write wins.
//!
//! One structure carries every keyed pattern of the coordination issue:
//!
//! - **two-phase claims**: [`Ledger::place`] writes one PENDING record per target of a batch,
//!   each holding a *placeholder* id, so the whole batch is visible before anything runs;
//!   [`Ledger::claim`] swaps the placeholder for the real request id, only while the record
//!   still holds that placeholder and is still PENDING. Exactly one claim wins.
//! - **pending-only finalization**: [`Ledger::finalize`] moves a PENDING record to one terminal
//!   [`Outcome`], only from PENDING; every later write is told what won and may leave its payload
//!   for audit. [`Ledger::reconcile`] times out PENDING records past their deadline through the
//!   same transition, a bounded page at a time.
//! - **retention and reclaim**: terminal records stay for the configured retention, so late
//!   duplicates are still recognised, then [`Ledger::reclaim`] frees them, a bounded page at a
//!   time, driven by the host.
//! - **reads**: [`Ledger::get`] returns one state the record held, whole (never the fields of two
//!   of its states); [`Ledger::touch_with_state`] and [`Ledger::take_with_state`] also name the
//!   state the call decided on.
//! - **runner marks**: a record names the runner that started its work. A restarting runner
//!   finalizes only its own leftovers ([`Ledger::finalize_own`]); records whose runner went quiet
//!   are finalized by [`Ledger::sweep_orphans`]. Both go through the pending-only transition.
//! - **compare-and-delete**: [`Ledger::take`] verifies a record's id and removes it in one
//!   transition (a refresh token and the access token it pairs with: of two concurrent
//!   rotations with one token, exactly one succeeds).
//! - **shard hand-offs**: a [`Ledger`] keyed by [`HandoffKey`](super::HandoffKey), where
//!   [`Ledger::insert`] is the first-claim-wins hand-off and a retry is told it is a duplicate.
//!
//! # Layout
//!
//! The records live in a slab of `capacity` slots allocated up front, one cache line per slot
//! (the eight words every look-up, transition and scan touches; the words only inserts,
//! duplicates and the free list touch are in an array beside it: 80 bytes a record in all); a
//! free list (a tagged Treiber stack) hands out slots, so the ledger is bounded by
//! construction: with no free slot, an insert is [`InsertError::Full`] and nothing is evicted. A key index over the slab
//! (`index.rs`: chained buckets whose links carry the generation they were made in, and each
//! slot's key in words) takes a key to its slot. Each slot has one *state word*, `generation (32)
//! | phase (8) | pins (8) | outcome (16)`, and every transition is one CAS on it. The generation
//! grows each time a slot is freed, so a caller that found a slot (through the index, or by
//! scanning) and is slow to CAS cannot touch the slot's next record: its CAS expects the old
//! generation and fails.
//!
//! # Locks
//!
//! Only the index's stripe locks, and only on the cold steps: an insert holds its key's bucket
//! stripe while it checks the key is absent, pops a slot, fills it and links it (so two inserts
//! of one key are one after the other); reclaim and compare-and-delete take it to unlink the
//! key. Look-ups (claims, finalizations, heartbeats, reads) take no lock and write nothing but
//! the record's own word; the scans (reconcile, reclaim's scan, the runner sweeps) walk the slab
//! directly. The locked steps are one per new record and one per removed record, never per
//! receipt.
//!
//! # Orderings
//!
//! - The state word: a winning transition is `AcqRel`, so it synchronizes with the previous
//!   transition of the same record (whatever the previous winner wrote before its CAS is visible
//!   to the next winner); loads that decide are `Acquire`. The insert's `Release` store of the
//!   first PENDING word publishes every field it wrote before (key, id, runner, deadline,
//!   refreshed-at, the cleared audit fields) to whoever `Acquire`-loads that word or a later one.
//! - Fields written *after* a winning CAS: a claim's request id, runner and refresh time are
//!   written under a pin that the winning CAS itself takes, as `Release` stores read with
//!   `Acquire` loads, and published by the `Release` unpin; a reader that loads the unpinned
//!   word sees them. A finalization takes no pin (its decision is one RMW): it writes its
//!   payload, then its time, both `Release`, and the time is its last write to the slot. The
//!   insert resets the time to "unset", which no finalization stores (a time of `u64::MAX` is
//!   recorded as `u64::MAX - 1`), so a terminal word whose time reads "unset" is a
//!   finalization still writing: [`Ledger::get`] waits on it as on a pin, and reclaim does not
//!   take it. A reader that `Acquire`-loads the winner's time sees its payload, and a remover
//!   that did so cannot free the slot under a late store of the winner's. `get` reads
//!   seqlock-style (its docs), so every view it returns is one state the record held. Reclaim
//!   never reads an older record's time: the insert's reset happens-before its PENDING word,
//!   which happens-before every later CAS.
//! - A duplicate's audit (the count and the latest payload) is bracketed by the slot's audit
//!   word, which only grows: begin, `fence(Release)`, the payload, a `Release` end. `get` reads
//!   the pair between two loads of that word (`fence(Acquire)` before the second).
//! - The free list: a push is a `Release` CAS, a pop an `Acquire` CAS, so the popper sees the
//!   pusher's writes (the slot's new generation); the tag in the head word rules out ABA.
//! - Reuse: `fill` issues a `fence(Release)` before it writes anything of a reused slot's new
//!   record, and readers that read a record's fields after validating its word (`get`, `claim`,
//!   `take`, the index) reload the word after a `fence(Acquire)`: a reader that saw a new field
//!   sees the new generation and drops what it read (the seqlock argument).
//! - A scan page comes from a `Relaxed` `fetch_add` on a cursor: it only spreads the work.

use std::sync::Arc;

use super::counts::{self, LedgerCounters, LedgerCounts, LedgerEvent, LedgerKind};
use super::index::{KeyIndex, LedgerKey, LinkError, SlotStates};
use crate::metrics::Registry;
use crate::sync::{fence, spin_loop, AtomicU64, Ordering};
use crate::word::{disjoint, Field};

/// The largest capacity a ledger may be built with.
pub const LEDGER_CAPACITY_MAX: usize = 1 << 22;
/// The first host-defined outcome code; codes below it are wkcore's.
pub const HOST_OUTCOME_MIN: u16 = 256;
/// Time values are `u64`s chosen by the host; this one means "not yet" and is refused as a time.
const UNSET_TIME: u64 = u64::MAX;

/// The terminal state a PENDING record moves to (exactly once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The work succeeded (a receipt, an ack).
    Succeeded,
    /// The work failed.
    Failed,
    /// The reconciler found the record past its deadline.
    TimedOut,
    /// The orphan sweep found the record's runner quiet past the quiet period.
    Orphaned,
    /// A host-defined outcome (`HOST_OUTCOME_MIN..=u16::MAX`, checked by [`HostCode::new`]).
    Host(HostCode),
}

/// A host-defined outcome code, `HOST_OUTCOME_MIN..=u16::MAX`: codes below are wkcore's (or no
/// outcome), so a `HostCode` cannot be built from them, and no ledger can store a word whose
/// outcome reads back as another (or none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostCode(u16);

impl HostCode {
    /// The host code `code`, or `None` below [`HOST_OUTCOME_MIN`].
    pub const fn new(code: u16) -> Option<Self> {
        if code >= HOST_OUTCOME_MIN {
            Some(Self(code))
        } else {
            None
        }
    }

    /// The code.
    pub const fn get(self) -> u16 {
        self.0
    }
}

impl Outcome {
    /// The outcome's code: 1 succeeded, 2 failed, 3 timed out, 4 orphaned, host codes as given.
    pub const fn code(self) -> u16 {
        match self {
            Outcome::Succeeded => 1,
            Outcome::Failed => 2,
            Outcome::TimedOut => 3,
            Outcome::Orphaned => 4,
            Outcome::Host(code) => code.0,
        }
    }

    /// The outcome of `code`; codes 0 and 5..256 are not outcomes.
    pub const fn from_code(code: u16) -> Option<Outcome> {
        match code {
            1 => Some(Outcome::Succeeded),
            2 => Some(Outcome::Failed),
            3 => Some(Outcome::TimedOut),
            4 => Some(Outcome::Orphaned),
            c if c >= HOST_OUTCOME_MIN => Some(Outcome::Host(HostCode(c))),
            _ => None,
        }
    }
}

/// What a record is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordState {
    /// PENDING, holding the id it was placed with (a placeholder, or a pending record's id).
    Placed,
    /// PENDING, claimed: the id is the claimer's request id.
    Claimed,
    /// Terminal with this outcome (retained for late duplicates, or being reclaimed).
    Finalized(Outcome),
}

impl RecordState {
    /// True while PENDING (placed or claimed).
    pub const fn is_pending(self) -> bool {
        !matches!(self, RecordState::Finalized(_))
    }
}

/// A new PENDING record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewRecord {
    /// The record's id: a batch's placeholder, a receipt's request id, an access token's id.
    pub id: u64,
    /// The runner that started the work (a boot id); 0 for none.
    pub runner: u64,
    /// When the reconciler may time the record out (`u64::MAX`: never).
    pub deadline: u64,
}

/// A moment's view of one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordView {
    /// The record's state.
    pub state: RecordState,
    /// Its id (the placeholder until a claim's request id is visible).
    pub id: u64,
    /// Its runner (0: none).
    pub runner: u64,
    /// Its deadline.
    pub deadline: u64,
    /// When its runner last refreshed it (the insert or claim time, then [`Ledger::touch`]).
    pub refreshed_at: u64,
    /// When it was finalized: the winner's time, in every view of a terminal record (`None`
    /// while PENDING).
    pub finalized_at: Option<u64>,
    /// The winning finalization's payload, in every view of a terminal record (0 while
    /// PENDING).
    pub payload: u64,
    /// How many finalizations were told they were duplicates.
    pub duplicates: u64,
    /// The payload of the latest duplicate (0: none), for audit.
    pub last_duplicate_payload: u64,
}

/// The configuration of a [`Ledger`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerConfig {
    /// How many records (PENDING and retained) it holds at most: `1..=LEDGER_CAPACITY_MAX`.
    pub capacity: usize,
    /// How long a terminal record is kept after its finalization, in the host's time unit.
    pub retention: u64,
    /// The `ledger` label of its metric series.
    pub kind: LedgerKind,
}

/// Why a configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A capacity of 0.
    ZeroCapacity,
    /// A capacity above [`LEDGER_CAPACITY_MAX`].
    CapacityAboveMax {
        /// The capacity asked for.
        capacity: usize,
    },
}

/// Why an insert (or a hand-off claim) inserted nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// No free slot: nothing was evicted, nothing inserted.
    Full,
    /// A record with this key exists (a duplicate hand-off, a second placement); its state.
    Exists(RecordState),
    /// `now` was `u64::MAX` (reserved for "not yet").
    InvalidTime,
}

/// Why a claim did not win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimError {
    /// Another claim won the record first.
    Lost,
    /// The record holds another placeholder.
    PlaceholderMismatch,
    /// The record is terminal.
    Finalized(Outcome),
    /// No record with this key (never placed, or reclaimed).
    NotFound,
}

/// Why a finalization did not win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinalizeError {
    /// Another write won first; this is what it wrote.
    Duplicate(Outcome),
    /// No record with this key (never inserted, or reclaimed after its retention).
    NotFound,
}

/// Why a compare-and-delete removed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TakeError {
    /// The record's id is not the one given.
    Mismatch,
    /// The record is terminal (a concurrent take won, or it was finalized).
    Finalized(Outcome),
    /// No record with this key.
    NotFound,
}

/// Why a refresh did not apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TouchError {
    /// The record belongs to another runner.
    NotRunner,
    /// The record is terminal.
    Finalized(Outcome),
    /// No record with this key.
    NotFound,
}

/// What one scan page did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Slots examined.
    pub scanned: usize,
    /// Records this page changed (timed out, reclaimed, finalized).
    pub changed: usize,
    /// The page ended a pass over the whole slab (every slot has been examined since the pass
    /// began, by this or earlier pages of the same scan).
    pub wrapped: bool,
}

const PHASE_FREE: u64 = 0;
const PHASE_PLACED: u64 = 1;
const PHASE_CLAIMED: u64 = 2;
const PHASE_FINAL: u64 = 3;
const PHASE_RECLAIMING: u64 = 4;

const GENERATION: Field = Field::new(32, 32);
const PHASE: Field = Field::new(24, 8);
const PINS: Field = Field::new(16, 8);
const OUTCOME: Field = Field::new(0, 16);
const _: () = assert!(disjoint(&[GENERATION, PHASE, PINS, OUTCOME]));

/// One pin in the state word.
const PIN: u64 = PINS.put(1);
/// The most pins a word holds; a writer that finds them all taken waits for one to go.
const PINS_MAX: u64 = PINS.max();

/// The duplicate audit word (`Slot::duplicates`): duplicates told so far (the bits from 16 up)
/// and audit writers in flight (the low 16 bits; at most `PINS_MAX` at once, each holds a pin).
const AUDIT_WRITERS_MASK: u64 = (1 << 16) - 1;
/// One audit writer begun, in the audit word.
const AUDIT_BEGIN: u64 = 1;
/// One audit writer ended: one more duplicate, one writer less.
const AUDIT_END: u64 = (1 << 16) - 1;

/// `generation (32) | phase (8) | pins (8) | outcome (16)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Word(u64);

impl Word {
    const fn new(generation: u32, phase: u64, outcome: u16) -> Self {
        Word(GENERATION.put(generation as u64) | PHASE.put(phase) | OUTCOME.put(outcome as u64))
    }
    const fn generation(self) -> u32 {
        GENERATION.get(self.0) as u32
    }
    const fn phase(self) -> u64 {
        PHASE.get(self.0)
    }
    const fn pins(self) -> u64 {
        PINS.get(self.0)
    }
    const fn outcome(self) -> u16 {
        OUTCOME.get(self.0) as u16
    }
    fn finalized(self) -> Option<Outcome> {
        match self.phase() {
            PHASE_FINAL | PHASE_RECLAIMING => Outcome::from_code(self.outcome()),
            _ => None,
        }
    }
    fn state(self) -> Option<RecordState> {
        match self.phase() {
            PHASE_PLACED => Some(RecordState::Placed),
            PHASE_CLAIMED => Some(RecordState::Claimed),
            PHASE_FINAL | PHASE_RECLAIMING => self.finalized().map(RecordState::Finalized),
            _ => None,
        }
    }
    /// The same generation and pins, another phase and outcome.
    const fn with(self, phase: u64, outcome: u16) -> Self {
        Word(OUTCOME.set(PHASE.set(self.0, phase), outcome as u64))
    }
    /// One pin more (the caller checked `pins() < PINS_MAX`).
    const fn pinned(self) -> Self {
        Word(self.0 + PIN)
    }
}

/// One record's hot storage (its key is in the index): the eight words a claim, a
/// finalization, a read or a scan touch, `repr(C)` and 64-byte aligned so that they are exactly
/// one cache line and no two records share one. The words only inserts, duplicates and the
/// free list touch are in [`ColdSlot`], beside it in an array of their own.
#[repr(C, align(64))]
struct Slot {
    state: AtomicU64,
    id: AtomicU64,
    runner: AtomicU64,
    deadline: AtomicU64,
    refreshed_at: AtomicU64,
    finalized_at: AtomicU64,
    payload: AtomicU64,
    /// The duplicate audit word: `count (48) | writers in flight (16)` (`AUDIT_*`).
    duplicates: AtomicU64,
}

impl Slot {
    fn new() -> Self {
        Slot {
            state: AtomicU64::new(Word::new(0, PHASE_FREE, 0).0),
            id: AtomicU64::new(0),
            runner: AtomicU64::new(0),
            deadline: AtomicU64::new(0),
            refreshed_at: AtomicU64::new(0),
            finalized_at: AtomicU64::new(UNSET_TIME),
            payload: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
        }
    }
}

// The slot is one cache line: a field added to it must move another out to `ColdSlot`. (Loom's
// atomics are larger than a word.)
#[cfg(not(wkcore_loom))]
const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// One record's cold words: the latest duplicate's payload (read and written inside the audit
/// word's brackets) and the free list's link. Records share these lines, which only the cold
/// steps write.
struct ColdSlot {
    duplicate_payload: AtomicU64,
    /// The free list's link: the next free slot + 1, or 0.
    next_free: AtomicU64,
}

/// The slab, as the index sees it.
struct Slab<'a>(&'a [Slot]);

impl SlotStates for Slab<'_> {
    #[inline]
    fn state(&self, slot: usize) -> &AtomicU64 {
        &self.0[slot].state
    }
    #[inline]
    fn generation(word: u64) -> u32 {
        Word(word).generation()
    }
    #[inline]
    fn is_live(word: u64) -> bool {
        Word(word).phase() != PHASE_FREE
    }
}

/// A bounded ledger of PENDING records and their one terminal write (module docs).
pub struct Ledger<K> {
    slots: Box<[Slot]>,
    cold: Box<[ColdSlot]>,
    index: KeyIndex,
    _keys: std::marker::PhantomData<fn(K) -> K>,
    /// `tag (32) | top slot + 1 (32)`; 0 in the low half: empty.
    free_head: AtomicU64,
    /// Records held: one more in `fill`, after the slot was popped; one less in `free_slot`,
    /// before it is pushed back.
    held: AtomicU64,
    reconcile_cursor: AtomicU64,
    reclaim_cursor: AtomicU64,
    runner_cursor: AtomicU64,
    orphan_cursor: AtomicU64,
    config: LedgerConfig,
    counters: Arc<LedgerCounters>,
}

impl<K> std::fmt::Debug for Ledger<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<K> Drop for Ledger<K> {
    fn drop(&mut self) {
        self.counters.retire();
    }
}

impl<K: LedgerKey> Ledger<K> {
    /// A ledger counting in the process-wide metrics registry.
    pub fn new(config: LedgerConfig) -> Result<Self, ConfigError> {
        Self::with_metrics(config, crate::metrics::global())
    }

    /// A ledger counting in `registry`.
    pub fn with_metrics(config: LedgerConfig, registry: &Registry) -> Result<Self, ConfigError> {
        if config.capacity == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        if config.capacity > LEDGER_CAPACITY_MAX {
            return Err(ConfigError::CapacityAboveMax {
                capacity: config.capacity,
            });
        }
        let n = config.capacity;
        // Free list: 0 → 1 → … → n - 1.
        let slots: Box<[Slot]> = (0..n).map(|_| Slot::new()).collect();
        let cold: Box<[ColdSlot]> = (0..n)
            .map(|i| ColdSlot {
                duplicate_payload: AtomicU64::new(0),
                next_free: AtomicU64::new(if i + 1 < n { i as u64 + 2 } else { 0 }),
            })
            .collect();
        let counters = Arc::new(LedgerCounters::new(config.kind));
        counts::register(registry, &counters);
        Ok(Self {
            slots,
            cold,
            index: KeyIndex::new(n, K::WORDS),
            _keys: std::marker::PhantomData,
            free_head: AtomicU64::new(1),
            held: AtomicU64::new(0),
            reconcile_cursor: AtomicU64::new(0),
            reclaim_cursor: AtomicU64::new(0),
            runner_cursor: AtomicU64::new(0),
            orphan_cursor: AtomicU64::new(0),
            config,
            counters,
        })
    }

    /// The configuration.
    pub fn config(&self) -> LedgerConfig {
        self.config
    }

    /// Records held (PENDING and retained), a moment's view; never above the capacity.
    ///
    /// # Orderings
    ///
    /// `Relaxed`, and still bounded: a slot's next occupant counts itself only after popping
    /// the slot, which happens after its previous occupant uncounted itself (before the push
    /// that the pop synchronizes with), so in the counter's modification order every slot's
    /// increments and decrements alternate, and no value in it exceeds the slots in use. (The
    /// map the ledger once had summed its shards one at a time and could read above the
    /// capacity.)
    pub fn len(&self) -> usize {
        self.held.load(Ordering::Relaxed) as usize
    }

    /// True when no record is held (a moment's view).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The event counters' totals (a moment's sums).
    pub fn counts(&self) -> LedgerCounts {
        self.counters.totals()
    }

    fn pop_free(&self) -> Option<usize> {
        // Ordering: Acquire; pairs with the Release CAS in `push_free` (and the failed CAS
        // reloads the same way), so the popper sees the slot as its pusher left it.
        let mut head = self.free_head.load(Ordering::Acquire);
        loop {
            let top = (head & 0xffff_ffff) as usize;
            if top == 0 {
                return None;
            }
            let slot = top - 1;
            // Ordering: Relaxed; the link was written before the push that the Acquire above
            // synchronizes with. A stale link (the slot popped and pushed again meanwhile) is
            // caught by the tag: the CAS below then fails.
            let next = self.cold[slot].next_free.load(Ordering::Relaxed);
            let tag = (head >> 32).wrapping_add(1);
            match self.free_head.compare_exchange_weak(
                head,
                (tag << 32) | next,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(slot),
                Err(actual) => head = actual,
            }
        }
    }

    fn push_free(&self, slot: usize) {
        // Ordering: Relaxed; the CAS below publishes, and it rereads on failure.
        let mut head = self.free_head.load(Ordering::Relaxed);
        loop {
            // Ordering: Relaxed; published by the Release CAS below.
            self.cold[slot]
                .next_free
                .store(head & 0xffff_ffff, Ordering::Relaxed);
            let tag = (head >> 32).wrapping_add(1);
            // Ordering: Release; pairs with the Acquire CAS in `pop_free`.
            match self.free_head.compare_exchange_weak(
                head,
                (tag << 32) | (slot as u64 + 1),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }

    /// Fills a slot this thread popped and publishes its first PENDING word.
    fn fill(&self, slot: usize, key: &K, record: NewRecord, now: u64) -> (usize, u32) {
        let s = &self.slots[slot];
        // Ordering: Release fence, before any field of the new record is written: a reader of
        // the slot's previous record whose (relaxed) load sees one of the writes below
        // synchronizes, through its `fence(Acquire)`, with this fence, so its reload of the state
        // word sees the new generation, which the pop (`Acquire`) ordered before this fence,
        // and it drops what it read (the seqlock argument; `get`, `claim`, `take` and the
        // index's look-up rely on it).
        fence(Ordering::Release);
        // Ordering: Relaxed; this thread owns the slot, and the Release store below publishes.
        let generation = Word(s.state.load(Ordering::Relaxed)).generation();
        s.id.store(record.id, Ordering::Relaxed);
        s.runner.store(record.runner, Ordering::Relaxed);
        s.deadline.store(record.deadline, Ordering::Relaxed);
        s.refreshed_at.store(now, Ordering::Relaxed);
        s.finalized_at.store(UNSET_TIME, Ordering::Relaxed);
        s.payload.store(0, Ordering::Relaxed);
        s.duplicates.store(0, Ordering::Relaxed);
        self.cold[slot]
            .duplicate_payload
            .store(0, Ordering::Relaxed);
        // Ordering: Relaxed; see `len`.
        self.held.fetch_add(1, Ordering::Relaxed);
        self.index.prepare(slot, key);
        // Ordering: Release; publishes the fields above (module docs). Pairs with every Acquire
        // load and AcqRel CAS of the state word.
        s.state
            .store(Word::new(generation, PHASE_PLACED, 0).0, Ordering::Release);
        (slot, generation)
    }

    /// The record of `key`: its slot, generation and current word, or `None`.
    #[inline]
    fn locate(&self, key: &K) -> Option<(usize, Word)> {
        // The index validated the word against the record (`Acquire`; see its docs).
        let (slot, word) = self.index.find(&Slab(&self.slots), key)?;
        Some((slot, Word(word)))
    }

    /// Inserts a PENDING record under `key` (a pending receipt, a hand-off claim: the first
    /// insert wins and every later one is told [`InsertError::Exists`]).
    pub fn insert(&self, key: &K, record: NewRecord, now: u64) -> Result<(), InsertError> {
        if now == UNSET_TIME {
            return Err(InsertError::InvalidTime);
        }
        loop {
            let result = self.index.link_with(&Slab(&self.slots), key, || {
                let slot = self.pop_free().ok_or(())?;
                Ok(self.fill(slot, key, record, now))
            });
            let event = match result {
                Ok(()) => Ok(()),
                Err(LinkError::Refused(())) => {
                    self.counters.add(LedgerEvent::RejectedFull, 1);
                    return Err(InsertError::Full);
                }
                Err(LinkError::Exists(slot, generation)) => match self.state_at(slot, generation) {
                    Some(state) => Err(InsertError::Exists(state)),
                    None => continue, // reclaimed since the index answered: the key is free again
                },
            };
            if self.config.kind == LedgerKind::Handoff {
                self.counters.add(
                    if event.is_ok() {
                        LedgerEvent::ClaimWon
                    } else {
                        LedgerEvent::ClaimLost
                    },
                    1,
                );
            }
            return event;
        }
    }

    /// The state of the record in `slot` in `generation`, or `None` if the slot left it.
    fn state_at(&self, slot: usize, generation: u32) -> Option<RecordState> {
        // Ordering: Acquire; pairs with the insert's Release store and every winning CAS.
        let word = Word(self.slots[slot].state.load(Ordering::Acquire));
        if word.generation() != generation {
            return None;
        }
        word.state()
    }

    /// Places one PENDING record holding `placeholder` per key, reserving every slot first: if
    /// the ledger cannot hold them all, nothing is placed and the call is [`InsertError::Full`].
    /// `out[i]` says what happened to `keys[i]` (a key already present is `Exists`; its slot goes
    /// back). `out` must be as long as `keys`.
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
        if now == UNSET_TIME {
            return Err(InsertError::InvalidTime);
        }
        let mut reserved = Vec::with_capacity(keys.len());
        for _ in keys {
            match self.pop_free() {
                Some(slot) => reserved.push(slot),
                None => {
                    for slot in reserved {
                        self.push_free(slot);
                    }
                    self.counters
                        .add(LedgerEvent::RejectedFull, keys.len() as u64);
                    return Err(InsertError::Full);
                }
            }
        }
        let record = NewRecord {
            id: placeholder,
            runner: 0,
            deadline,
        };
        let mut placed = 0;
        let mut spare = Vec::new();
        for ((key, slot), result) in keys.iter().zip(reserved).zip(out.iter_mut()) {
            *result = loop {
                let inserted = self.index.link_with(&Slab(&self.slots), key, || {
                    Ok::<_, ()>(self.fill(slot, key, record, now))
                });
                match inserted {
                    Ok(()) => {
                        placed += 1;
                        break Ok(());
                    }
                    Err(LinkError::Exists(at, generation)) => {
                        if let Some(state) = self.state_at(at, generation) {
                            spare.push(slot);
                            break Err(InsertError::Exists(state));
                        }
                    }
                    Err(LinkError::Refused(())) => unreachable!("the slot is reserved"),
                }
            };
        }
        for slot in spare {
            self.push_free(slot);
        }
        Ok(placed)
    }

    /// Claims the placed record of `key`: swaps `placeholder` for `request_id` and records
    /// `runner`, only if the record still holds `placeholder` and is still PENDING and
    /// unclaimed. Exactly one of many racing claims wins.
    pub fn claim(
        &self,
        key: &K,
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> Result<(), ClaimError> {
        let result = self.claim_inner(key, placeholder, request_id, runner, now);
        self.counters.add(
            match result {
                Ok(()) => LedgerEvent::ClaimWon,
                Err(_) => LedgerEvent::ClaimLost,
            },
            1,
        );
        result
    }

    fn claim_inner(
        &self,
        key: &K,
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> Result<(), ClaimError> {
        let (slot, mut word) = self.locate(key).ok_or(ClaimError::NotFound)?;
        let s = &self.slots[slot];
        let generation = word.generation();
        loop {
            if word.generation() != generation || word.phase() == PHASE_FREE {
                return Err(ClaimError::NotFound);
            }
            match word.phase() {
                PHASE_PLACED => {}
                PHASE_CLAIMED => return Err(ClaimError::Lost),
                _ => {
                    return Err(word
                        .finalized()
                        .map_or(ClaimError::NotFound, ClaimError::Finalized))
                }
            }
            if word.pins() == PINS_MAX {
                spin_loop();
                // Ordering: Acquire; as in `locate`.
                word = Word(s.state.load(Ordering::Acquire));
                continue;
            }
            // Ordering: Acquire; pairs with a claim winner's Release store of its id. The id of
            // a PLACED record is the placeholder; it changes only after a claim's CAS, so an id
            // that differs sends us back to the word, which then shows the claim.
            if s.id.load(Ordering::Acquire) != placeholder {
                // Ordering: an Acquire fence, then the reload: if the id was a reused slot's next
                // record's, the reload sees the new generation (`fill`).
                fence(Ordering::Acquire);
                let again = Word(s.state.load(Ordering::Relaxed));
                if again == word {
                    return Err(ClaimError::PlaceholderMismatch);
                }
                word = again;
                continue;
            }
            // The winning CAS also pins the slot: the id, runner and refresh time below are
            // written before the pin goes, and a pinned slot is never reclaimed, so they cannot
            // land on the slot's next record.
            // Ordering: AcqRel on success (module docs); Acquire on failure, to decide again.
            match s.state.compare_exchange(
                word.0,
                word.with(PHASE_CLAIMED, 0).pinned().0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // Ordering: Release, each; pairs with the Acquire loads in `get` (a view
                    // that reads one of them happens-after this CAS, so its second load of the
                    // word sees CLAIMED and it reads again) and, for the id, in `claim_inner`
                    // and `take`. The Release unpin below publishes all three to whoever loads
                    // the unpinned word.
                    s.refreshed_at.store(now, Ordering::Release);
                    s.runner.store(runner, Ordering::Release);
                    s.id.store(request_id, Ordering::Release);
                    self.unpin(slot);
                    return Ok(());
                }
                Err(actual) => word = Word(actual),
            }
        }
    }

    /// Adds a pin to the slot's word while it is in `generation` and `allow` agrees, so the
    /// caller may write the record's side fields: a pinned slot is never reclaimed. Returns the
    /// word the pin was added to, or the word that refused it.
    fn pin(&self, slot: usize, mut word: Word, allow: impl Fn(Word) -> bool) -> Result<Word, Word> {
        let s = &self.slots[slot];
        let generation = word.generation();
        loop {
            if word.generation() != generation || !allow(word) {
                return Err(word);
            }
            if word.pins() == PINS_MAX {
                spin_loop();
                // Ordering: Acquire; as in `locate`.
                word = Word(s.state.load(Ordering::Acquire));
                continue;
            }
            // Ordering: AcqRel on success: the pinner sees the record's fields as the previous
            // transition left them; Acquire on failure, to decide again.
            match s.state.compare_exchange_weak(
                word.0,
                word.pinned().0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(word.pinned()),
                Err(actual) => word = Word(actual),
            }
        }
    }

    /// Drops a pin taken by `pin` or a claim.
    fn unpin(&self, slot: usize) {
        // Ordering: Release; publishes the side fields written while pinned to whoever loads
        // the word after (with Acquire), and pairs with the AcqRel CAS of the remover, which
        // expects no pins.
        self.slots[slot].state.fetch_sub(PIN, Ordering::Release);
    }

    /// The pending-only transition on one slot: PENDING (`from`, or whatever PENDING word the
    /// slot holds next in the same generation, when `accept` still agrees) → `outcome`.
    /// Returns the word that won instead, or `None` if the slot left the generation.
    #[inline]
    fn finalize_slot(
        &self,
        slot: usize,
        mut word: Word,
        outcome: Outcome,
        payload: u64,
        now: u64,
        accept: impl Fn(&Slot, Word) -> bool,
    ) -> Result<(), Option<Word>> {
        let s = &self.slots[slot];
        let generation = word.generation();
        loop {
            if word.generation() != generation {
                return Err(None);
            }
            match word.phase() {
                PHASE_PLACED | PHASE_CLAIMED => {}
                PHASE_FINAL | PHASE_RECLAIMING => return Err(Some(word)),
                _ => return Err(None),
            }
            if !accept(s, word) {
                return Err(Some(word));
            }
            // No pin: the time written last marks the finalization done (module docs). Until
            // it is written, `get` waits and reclaim leaves the record alone, so the two stores
            // below always land on this record, and a view never holds a terminal state
            // without its time and payload. The CAS keeps whatever pins the word holds (a
            // claim still writing its fields keeps its own).
            // Ordering: AcqRel on success (module docs); Acquire on failure, to decide again.
            match s.state.compare_exchange(
                word.0,
                word.with(PHASE_FINAL, outcome.code()).0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // Ordering: Release; pairs with the Acquire load in `get`: a view that reads
                    // this payload happens-after this CAS, so its second load of the word sees
                    // FINAL and it reads again (the time below publishes it to reclaim).
                    s.payload.store(payload, Ordering::Release);
                    // Ordering: Release; pairs with the Acquire loads of the time in `get` and
                    // `reclaim`: whoever sees the time sees the payload, and this is the
                    // finalization's last write to the slot. "Unset" is never stored here.
                    s.finalized_at
                        .store(now.min(UNSET_TIME - 1), Ordering::Release);
                    return Ok(());
                }
                Err(actual) => {
                    word = Word(actual);
                    if word.generation() != generation {
                        return Err(None);
                    }
                    // PLACED → CLAIMED raced us: still PENDING, try again.
                }
            }
        }
    }

    /// Moves the PENDING record of `key` to `outcome`, only from PENDING. A duplicate is told
    /// the outcome that won, and its `payload` is kept as the record's latest duplicate.
    ///
    /// The record's finalization time is `now`; `u64::MAX` (the ledger's "not yet") is recorded
    /// as `u64::MAX - 1`. The same holds for the scans that finalize ([`Ledger::reconcile`],
    /// [`Ledger::finalize_own`], [`Ledger::sweep_orphans`]).
    pub fn finalize(
        &self,
        key: &K,
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<(), FinalizeError> {
        let result = self.finalize_inner(key, outcome, payload, now);
        self.counters.add(
            match result {
                Ok(()) => LedgerEvent::FinalizeWon,
                Err(FinalizeError::Duplicate(_)) => LedgerEvent::FinalizeDuplicate,
                Err(FinalizeError::NotFound) => return result,
            },
            1,
        );
        result
    }

    #[inline]
    fn finalize_inner(
        &self,
        key: &K,
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<(), FinalizeError> {
        let (slot, word) = self.locate(key).ok_or(FinalizeError::NotFound)?;
        match self.finalize_slot(slot, word, outcome, payload, now, |_, _| true) {
            Ok(()) => Ok(()),
            Err(Some(winner)) => {
                // Audit under a pin, so it cannot land on the slot's next record; a record
                // already being reclaimed takes no pin and no audit.
                if self.pin(slot, winner, |w| w.phase() == PHASE_FINAL).is_ok() {
                    let s = &self.slots[slot];
                    // The audit word brackets the payload store, seqlock-style (`get`): begin
                    // (one writer in flight), the payload, end (one duplicate more, the writer
                    // gone). The word only grows, so a reader can tell it moved.
                    // Ordering: Relaxed; ordered before the payload by the fence below.
                    s.duplicates.fetch_add(AUDIT_BEGIN, Ordering::Relaxed);
                    // Ordering: Release fence; pairs with the `fence(Acquire)` in `get`: a view
                    // that read this payload sees the begin when it reloads the audit word.
                    fence(Ordering::Release);
                    // Ordering: Relaxed; published by the fence above and the end below.
                    self.cold[slot]
                        .duplicate_payload
                        .store(payload, Ordering::Relaxed);
                    // Ordering: Release; pairs with the Acquire load of the audit word in `get`:
                    // a view that sees this end sees the payload.
                    s.duplicates.fetch_add(AUDIT_END, Ordering::Release);
                    self.unpin(slot);
                }
                Err(FinalizeError::Duplicate(
                    winner.finalized().unwrap_or(Outcome::Succeeded),
                ))
            }
            Err(None) => Err(FinalizeError::NotFound),
        }
    }

    /// [`Ledger::finalize`] for many keys with one outcome and time (one receipt batch); `out[i]`
    /// is `keys[i]`'s result and `payloads[i]` its payload. Returns how many won.
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
        let (mut won, mut duplicates) = (0, 0);
        for ((key, payload), result) in keys.iter().zip(payloads).zip(out.iter_mut()) {
            *result = self.finalize_inner(key, outcome, *payload, now);
            match result {
                Ok(()) => won += 1,
                Err(FinalizeError::Duplicate(_)) => duplicates += 1,
                Err(FinalizeError::NotFound) => {}
            }
        }
        self.counters.add(LedgerEvent::FinalizeWon, won);
        self.counters
            .add(LedgerEvent::FinalizeDuplicate, duplicates);
        won as usize
    }

    /// The next page of `limit` slots of one scan, as slot indices (wrapping) and whether it
    /// ends a pass.
    fn page(&self, cursor: &AtomicU64, limit: usize) -> (u64, usize, bool) {
        let n = self.slots.len() as u64;
        let limit = limit.min(self.slots.len()) as u64;
        // Ordering: Relaxed; the cursor only spreads the work (module docs).
        let start = cursor.fetch_add(limit, Ordering::Relaxed);
        let wrapped = limit > 0 && (start + limit) / n > start / n;
        (start % n, limit as usize, wrapped)
    }

    /// Runs `f` on each slot of the next page of `cursor`'s scan, with the slot's word.
    fn scan(
        &self,
        cursor: &AtomicU64,
        limit: usize,
        mut f: impl FnMut(usize, Word) -> bool,
    ) -> Page {
        let (start, count, wrapped) = self.page(cursor, limit);
        let n = self.slots.len();
        let mut changed = 0;
        for i in 0..count {
            let slot = (start as usize + i) % n;
            // Ordering: Acquire; as in `locate`.
            let word = Word(self.slots[slot].state.load(Ordering::Acquire));
            if f(slot, word) {
                changed += 1;
            }
        }
        Page {
            scanned: count,
            changed,
            wrapped,
        }
    }

    /// Times out, with [`Outcome::TimedOut`], every PENDING record of the next `limit` slots
    /// whose deadline is `<= now`, through the pending-only transition (a receipt racing it: one
    /// of them wins, the other is told so).
    pub fn reconcile(&self, now: u64, limit: usize) -> Page {
        let page = self.scan(&self.reconcile_cursor, limit, |slot, word| {
            let due = |s: &Slot, _: Word| {
                // Ordering: Relaxed; the deadline was published with the PENDING word that the
                // scan (or the failed CAS) loaded with Acquire, and if the slot moved on, the
                // CAS expects the old generation and fails.
                s.deadline.load(Ordering::Relaxed) <= now
            };
            self.finalize_slot(slot, word, Outcome::TimedOut, 0, now, due)
                .is_ok()
        });
        self.counters
            .add(LedgerEvent::ReconciledTimeout, page.changed as u64);
        page
    }

    /// Reclaims every terminal record of the next `limit` slots finalized at least the
    /// retention before `now`: its key leaves the index (a later duplicate is "not found") and its
    /// slot becomes free.
    pub fn reclaim(&self, now: u64, limit: usize) -> Page {
        let page = self.scan(&self.reclaim_cursor, limit, |slot, word| {
            if word.phase() != PHASE_FINAL || word.pins() != 0 {
                return false;
            }
            // Ordering: Acquire; pairs with the finalizer's Release store of its time, its last
            // write to the slot (module docs). "Unset": the finalizer is still writing.
            let at = self.slots[slot].finalized_at.load(Ordering::Acquire);
            if at == UNSET_TIME || now < at.saturating_add(self.config.retention) {
                return false;
            }
            self.remove_slot(slot, word)
        });
        self.counters
            .add(LedgerEvent::Reclaimed, page.changed as u64);
        page
    }

    /// Wins `word → RECLAIMING` for the slot (an unpinned terminal word), then removes its key
    /// and frees it.
    fn remove_slot(&self, slot: usize, word: Word) -> bool {
        let removing = word.with(PHASE_RECLAIMING, word.outcome());
        // Ordering: AcqRel (module docs): the remover must see the key the insert published and
        // what the last pinned writer did before its Release unpin.
        if self.slots[slot]
            .state
            .compare_exchange(word.0, removing.0, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.free_slot(slot, removing);
        true
    }

    /// Unlinks the key of a slot this thread moved to RECLAIMING and frees the slot.
    fn free_slot(&self, slot: usize, removing: Word) {
        let s = &self.slots[slot];
        // Winning RECLAIMING made this thread the only remover; the insert's key words
        // happen-before the word its winning CAS replaced.
        self.index.unlink(slot, removing.generation());
        // Ordering: Relaxed; the Release push below publishes the new generation.
        s.state.store(
            Word::new(removing.generation().wrapping_add(1), PHASE_FREE, 0).0,
            Ordering::Relaxed,
        );
        // Ordering: Relaxed; see `len`.
        self.held.fetch_sub(1, Ordering::Relaxed);
        self.push_free(slot);
    }

    /// Compare-and-delete: removes the PENDING record of `key` if its id is `expected_id`, in
    /// one transition. Of two racing takes with the same id, exactly one succeeds.
    ///
    /// One of the two waits in the ledger (the other is [`Ledger::get`]'s): while a claim or a
    /// heartbeat holds a pin on the PENDING record (a few stores), a take waits for it to drop,
    /// because until then the id it must compare may be about to change.
    pub fn take(&self, key: &K, expected_id: u64) -> Result<(), TakeError> {
        self.take_with_state(key, expected_id).0
    }

    /// [`Ledger::take`], and the state of the record the call decided on: `None` after a win
    /// (the record is gone) or when there is none; the state it found when refused (the PENDING
    /// state of a [`TakeError::Mismatch`], the outcome of a terminal record).
    pub fn take_with_state(
        &self,
        key: &K,
        expected_id: u64,
    ) -> (Result<(), TakeError>, Option<RecordState>) {
        let Some((slot, mut word)) = self.locate(key) else {
            return (Err(TakeError::NotFound), None);
        };
        let s = &self.slots[slot];
        let generation = word.generation();
        loop {
            if word.generation() != generation || word.phase() == PHASE_FREE {
                return (Err(TakeError::NotFound), None);
            }
            if let Some(outcome) = word.finalized() {
                return (
                    Err(TakeError::Finalized(outcome)),
                    Some(RecordState::Finalized(outcome)),
                );
            }
            if word.pins() != 0 {
                spin_loop();
                // Ordering: Acquire; as in `locate`.
                word = Word(s.state.load(Ordering::Acquire));
                continue;
            }
            // Ordering: Acquire; pairs with a claim's Release store of the id (and the unpin
            // that the Acquire load of this unpinned word saw).
            if s.id.load(Ordering::Acquire) != expected_id {
                // Ordering: an Acquire fence, then the reload (as in `claim_inner`).
                fence(Ordering::Acquire);
                let again = Word(s.state.load(Ordering::Relaxed));
                if again == word {
                    return (Err(TakeError::Mismatch), word.state());
                }
                word = again;
                continue;
            }
            // Verify and delete in one step: PENDING, unpinned → RECLAIMING.
            let removing = word.with(PHASE_RECLAIMING, Outcome::Succeeded.code());
            // Ordering: AcqRel on success (module docs; the remover must see the key the insert
            // published); Acquire on failure, to decide again.
            match s
                .state
                .compare_exchange(word.0, removing.0, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.free_slot(slot, removing);
                    self.counters.add(LedgerEvent::FinalizeWon, 1);
                    self.counters.add(LedgerEvent::Reclaimed, 1);
                    return (Ok(()), None);
                }
                Err(actual) => word = Word(actual),
            }
        }
    }

    /// Refreshes a PENDING record of `runner` (its heartbeat): the orphan sweep measures its
    /// quiet period from here.
    pub fn touch(&self, key: &K, runner: u64, now: u64) -> Result<(), TouchError> {
        self.touch_with_state(key, runner, now).0
    }

    /// [`Ledger::touch`], and the state of the record the call decided on: the PENDING state
    /// it refreshed (a win) or found (another runner's: [`TouchError::NotRunner`]), the outcome
    /// of a terminal record, `None` when there is none.
    pub fn touch_with_state(
        &self,
        key: &K,
        runner: u64,
        now: u64,
    ) -> (Result<(), TouchError>, Option<RecordState>) {
        let Some((slot, word)) = self.locate(key) else {
            return (Err(TouchError::NotFound), None);
        };
        // Under a pin, so a late heartbeat cannot land on the slot's next record.
        let pinned = match self.pin(slot, word, |w| {
            w.finalized().is_none() && w.phase() != PHASE_FREE
        }) {
            Ok(pinned) => pinned,
            Err(w) if w.generation() != word.generation() || w.phase() == PHASE_FREE => {
                return (Err(TouchError::NotFound), None)
            }
            Err(w) => {
                return match w.finalized() {
                    Some(o) => (
                        Err(TouchError::Finalized(o)),
                        Some(RecordState::Finalized(o)),
                    ),
                    None => (Err(TouchError::NotFound), None),
                }
            }
        };
        let state = pinned.state();
        let s = &self.slots[slot];
        // Ordering: Relaxed; the pin's AcqRel CAS saw the word after the claim's Release unpin
        // (or the claim is still in flight, and then its runner is not this caller).
        let result = if s.runner.load(Ordering::Relaxed) == runner {
            // Ordering: Relaxed; published by the Release unpin. `fetch_max`, so an older
            // heartbeat never moves it back.
            s.refreshed_at.fetch_max(now, Ordering::Relaxed);
            Ok(())
        } else {
            Err(TouchError::NotRunner)
        };
        self.unpin(slot);
        (result, state)
    }

    /// A restarting runner's clean-up: finalizes with `outcome` the PENDING records of the next
    /// `limit` slots that name `runner`, and only those.
    /// Runner 0 (none) finalizes nothing.
    pub fn finalize_own(&self, runner: u64, outcome: Outcome, now: u64, limit: usize) -> Page {
        if runner == 0 {
            return Page::default();
        }
        let page = self.scan(&self.runner_cursor, limit, |slot, word| {
            let own = |s: &Slot, _: Word| {
                // Ordering: Acquire; pairs with a claim's Release store of the runner.
                s.runner.load(Ordering::Acquire) == runner
            };
            self.finalize_slot(slot, word, outcome, 0, now, own).is_ok()
        });
        self.counters
            .add(LedgerEvent::FinalizeWon, page.changed as u64);
        page
    }

    /// The orphan sweep: finalizes as [`Outcome::Orphaned`] the PENDING records of the next
    /// `limit` slots that name a runner and were not refreshed for `quiet` (refreshed at or
    /// before `now - quiet`).
    pub fn sweep_orphans(&self, now: u64, quiet: u64, limit: usize) -> Page {
        let page = self.scan(&self.orphan_cursor, limit, |slot, word| {
            let quiet_enough = |s: &Slot, w: Word| {
                // A pinned record is being claimed or refreshed: not quiet. Unpinned, the
                // Acquire load of the word saw the last pinned writer's Release unpin.
                w.pins() == 0
                    && s.runner.load(Ordering::Acquire) != 0
                    && s.refreshed_at.load(Ordering::Acquire).saturating_add(quiet) <= now
            };
            self.finalize_slot(slot, word, Outcome::Orphaned, 0, now, quiet_enough)
                .is_ok()
        });
        self.counters
            .add(LedgerEvent::FinalizeWon, page.changed as u64);
        page
    }

    /// A moment's view of the record of `key`: one state the record held, whole (never fields
    /// of two of its states, nor of two records of its slot); `None` when there is no record,
    /// or it is being removed (reclaimed or taken).
    ///
    /// Like `take`, it waits while a writer holds a pin on the record (a claim, a heartbeat or
    /// a duplicate's audit: a few stores each) and while a finalization that won has not yet
    /// written its time (two stores), and reads again when the record moved while it read.
    ///
    /// # Orderings (the seqlock argument)
    ///
    /// The fields are read between two loads of the state word that return the same unpinned
    /// word. Every field written after the insert is written under a pin (a claim takes its own
    /// in its winning CAS), or, for a finalization, before its time, which it stores last
    /// (`Release`) and which is "unset" until then:
    ///
    /// - An unpinned word loaded with `Acquire` comes after the `Release` unpin of every writer
    ///   that pinned it before (the pins and unpins are RMWs, so they continue the release
    ///   sequence), so the fields read after it are at least those writers' values.
    /// - A claim's stores and a finalization's payload and time are `Release` and the loads
    ///   here `Acquire`: a field read from a writer whose CAS came after the first load synchronizes
    ///   with it, so the writer's CAS happens-before the second load, which then sees CLAIMED
    ///   or FINAL (or a later word). The phase and the generation only grow, so that word
    ///   differs from the first, and the view is read again.
    /// - A terminal word: its time is read before its payload. "Unset" means the winner is
    ///   still writing, so the view waits and reads again; a time that is set synchronizes with
    ///   the winner's `Release` store of it, so the payload read after it is the winner's.
    /// - A heartbeat changes one field (the refresh time; either value is a state the record
    ///   held) and a duplicate's audit two, bracketed by the audit word, which only grows: a
    ///   payload read from a writer that began after the first audit load sees its begin in
    ///   the reload after the `fence(Acquire)` (pairs with the writer's `fence(Release)`), so
    ///   the two audit loads differ; equal and with no writer in flight, the payload is the
    ///   latest of the duplicates counted (the `Acquire` load pairs with their `Release` ends).
    /// - A reused slot: `fill` fences before it writes, so a field of the slot's next record
    ///   read here makes the second load see the new generation (module docs).
    pub fn get(&self, key: &K) -> Option<RecordView> {
        let (slot, mut word) = self.locate(key)?;
        let s = &self.slots[slot];
        let generation = word.generation();
        loop {
            if word.generation() != generation
                || matches!(word.phase(), PHASE_FREE | PHASE_RECLAIMING)
            {
                return None;
            }
            let state = word.state()?;
            if word.pins() != 0 {
                spin_loop();
                // Ordering: Acquire; as in `locate`.
                word = Word(s.state.load(Ordering::Acquire));
                continue;
            }
            // Ordering: Acquire; pairs with the finalizer's Release store of its time (its last
            // write; doc above), so the payload read below is the winner's.
            let finalized_at = s.finalized_at.load(Ordering::Acquire);
            if finalized_at == UNSET_TIME && word.finalized().is_some() {
                // A finalization won and is still writing its payload and time.
                spin_loop();
                // Ordering: Acquire; as in `locate`.
                word = Word(s.state.load(Ordering::Acquire));
                continue;
            }
            // Ordering: Acquire; pairs with the Release end of each duplicate's audit.
            let audit = s.duplicates.load(Ordering::Acquire);
            // Ordering: Acquire throughout; pairs with the Release stores after a winning CAS
            // (claim, finalize): a field read from a writer whose CAS came after the first load
            // of the word makes the second load see that CAS. The deadline and the duplicate
            // payload are published by the insert's word and by the audit word (above).
            let view = RecordView {
                state,
                id: s.id.load(Ordering::Acquire),
                runner: s.runner.load(Ordering::Acquire),
                deadline: s.deadline.load(Ordering::Relaxed),
                refreshed_at: s.refreshed_at.load(Ordering::Acquire),
                finalized_at: (finalized_at != UNSET_TIME).then_some(finalized_at),
                payload: s.payload.load(Ordering::Acquire),
                duplicates: audit >> 16,
                last_duplicate_payload: self.cold[slot].duplicate_payload.load(Ordering::Relaxed),
            };
            // Ordering: an Acquire fence, then the reloads (doc above): pairs with the audit's
            // Release fence and with `fill`'s.
            fence(Ordering::Acquire);
            // Ordering: Relaxed, both; ordered after the reads above by the fence.
            let audit_again = s.duplicates.load(Ordering::Relaxed);
            let again = Word(s.state.load(Ordering::Relaxed));
            if again == word && audit_again == audit && audit & AUDIT_WRITERS_MASK == 0 {
                return Some(view);
            }
            spin_loop();
            // Ordering: Acquire; as in `locate`.
            word = Word(s.state.load(Ordering::Acquire));
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::coord::ByteKey;

    fn key(s: &str) -> ByteKey {
        ByteKey::new(s.as_bytes()).unwrap()
    }

    fn ledger(capacity: usize, retention: u64) -> (Ledger<ByteKey>, Registry) {
        let registry = Registry::new();
        let l = Ledger::with_metrics(
            LedgerConfig {
                capacity,
                retention,
                kind: LedgerKind::Pending,
            },
            &registry,
        )
        .unwrap();
        (l, registry)
    }

    fn pending(id: u64, deadline: u64) -> NewRecord {
        NewRecord {
            id,
            runner: 0,
            deadline,
        }
    }

    #[test]
    fn config_bounds() {
        let registry = Registry::new();
        let cfg = |capacity| LedgerConfig {
            capacity,
            retention: 0,
            kind: LedgerKind::Claim,
        };
        assert_eq!(
            Ledger::<ByteKey>::with_metrics(cfg(0), &registry).unwrap_err(),
            ConfigError::ZeroCapacity
        );
        assert_eq!(
            Ledger::<ByteKey>::with_metrics(cfg(LEDGER_CAPACITY_MAX + 1), &registry).unwrap_err(),
            ConfigError::CapacityAboveMax {
                capacity: LEDGER_CAPACITY_MAX + 1
            }
        );
    }

    #[test]
    fn outcome_codes_round_trip_and_reserved_codes_are_refused() {
        for o in [
            Outcome::Succeeded,
            Outcome::Failed,
            Outcome::TimedOut,
            Outcome::Orphaned,
            Outcome::Host(HostCode::new(256).unwrap()),
            Outcome::Host(HostCode::new(u16::MAX).unwrap()),
        ] {
            assert_eq!(Outcome::from_code(o.code()), Some(o));
        }
        for c in [0u16, 5, 100, 255] {
            assert_eq!(Outcome::from_code(c), None);
            assert_eq!(HostCode::new(c), None);
        }
    }

    #[test]
    fn finalize_first_write_wins_and_duplicates_learn_the_winner() {
        let (l, _r) = ledger(4, 100);
        l.insert(&key("r1"), pending(1, 50), 0).unwrap();
        assert_eq!(l.finalize(&key("r1"), Outcome::Succeeded, 7, 10), Ok(()));
        assert_eq!(
            l.finalize(&key("r1"), Outcome::Failed, 8, 11),
            Err(FinalizeError::Duplicate(Outcome::Succeeded))
        );
        let v = l.get(&key("r1")).unwrap();
        assert_eq!(v.state, RecordState::Finalized(Outcome::Succeeded));
        assert_eq!(
            (v.payload, v.duplicates, v.last_duplicate_payload),
            (7, 1, 8)
        );
        assert_eq!(v.finalized_at, Some(10));
        // a late receipt after a timeout is a no-op
        l.insert(&key("r2"), pending(2, 5), 0).unwrap();
        assert_eq!(l.reconcile(5, 4).changed, 1);
        assert_eq!(
            l.finalize(&key("r2"), Outcome::Succeeded, 0, 6),
            Err(FinalizeError::Duplicate(Outcome::TimedOut))
        );
        assert_eq!(
            l.finalize(&key("nope"), Outcome::Succeeded, 0, 6),
            Err(FinalizeError::NotFound)
        );
        let c = l.counts();
        assert_eq!(c.get(LedgerEvent::FinalizeWon), 1);
        assert_eq!(c.get(LedgerEvent::FinalizeDuplicate), 2);
        assert_eq!(c.get(LedgerEvent::ReconciledTimeout), 1);
    }

    #[test]
    fn full_never_evicts_and_reclaim_respects_retention() {
        let (l, _r) = ledger(2, 100);
        l.insert(&key("a"), pending(1, u64::MAX), 0).unwrap();
        l.insert(&key("b"), pending(2, u64::MAX), 0).unwrap();
        assert_eq!(
            l.insert(&key("c"), pending(3, u64::MAX), 0),
            Err(InsertError::Full)
        );
        assert_eq!(
            l.insert(&key("a"), pending(3, u64::MAX), 0),
            Err(InsertError::Exists(RecordState::Placed))
        );
        l.finalize(&key("a"), Outcome::Failed, 0, 10).unwrap();
        assert_eq!(l.reclaim(109, 2).changed, 0, "inside retention");
        assert_eq!(
            l.finalize(&key("a"), Outcome::Succeeded, 0, 109),
            Err(FinalizeError::Duplicate(Outcome::Failed))
        );
        let page = l.reclaim(110, 2);
        assert_eq!((page.changed, page.scanned), (1, 2));
        assert!(page.wrapped);
        assert_eq!(
            l.finalize(&key("a"), Outcome::Succeeded, 0, 111),
            Err(FinalizeError::NotFound)
        );
        l.insert(&key("c"), pending(3, u64::MAX), 0).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l.get(&key("b")).unwrap().state, RecordState::Placed);
        let c = l.counts();
        assert_eq!(c.get(LedgerEvent::RejectedFull), 1);
        assert_eq!(c.get(LedgerEvent::Reclaimed), 1);
    }

    #[test]
    fn two_phase_claim() {
        let (l, _r) = ledger(8, 0);
        let keys = [key("p:1:1:a"), key("p:1:1:b"), key("p:1:1:c")];
        let mut out = [Ok(()); 3];
        assert_eq!(l.place(&keys, 900, 1000, 0, &mut out), Ok(3));
        assert_eq!(
            l.claim(&keys[0], 901, 5, 1, 1),
            Err(ClaimError::PlaceholderMismatch)
        );
        assert_eq!(l.claim(&keys[0], 900, 5, 1, 1), Ok(()));
        assert_eq!(l.claim(&keys[0], 900, 6, 2, 1), Err(ClaimError::Lost));
        let v = l.get(&keys[0]).unwrap();
        assert_eq!((v.state, v.id, v.runner), (RecordState::Claimed, 5, 1));
        l.finalize(&keys[1], Outcome::Failed, 0, 2).unwrap();
        assert_eq!(
            l.claim(&keys[1], 900, 7, 1, 3),
            Err(ClaimError::Finalized(Outcome::Failed))
        );
        assert_eq!(l.claim(&key("zz"), 900, 7, 1, 3), Err(ClaimError::NotFound));
        // a second placement of the batch: every key exists, nothing placed, slots back
        assert_eq!(l.place(&keys, 900, 1000, 0, &mut out), Ok(0));
        assert!(out.iter().all(|r| matches!(r, Err(InsertError::Exists(_)))));
        // a batch bigger than what is free: nothing placed
        let big: Vec<ByteKey> = (0..6).map(|i| key(&format!("q{i}"))).collect();
        let mut out6 = [Ok(()); 6];
        assert_eq!(l.place(&big, 1, 1, 0, &mut out6), Err(InsertError::Full));
        assert_eq!(l.len(), 3);
        let mut out5 = [Ok(()); 5];
        assert_eq!(l.place(&big[..5], 1, 1, 0, &mut out5), Ok(5));
        assert_eq!(l.counts().get(LedgerEvent::ClaimWon), 1);
        assert_eq!(l.counts().get(LedgerEvent::ClaimLost), 4);
    }

    #[test]
    fn take_is_compare_and_delete() {
        let (l, _r) = ledger(2, 1000);
        l.insert(&key("refresh-1"), pending(77, u64::MAX), 0)
            .unwrap();
        assert_eq!(l.take(&key("refresh-1"), 78), Err(TakeError::Mismatch));
        assert_eq!(l.take(&key("refresh-1"), 77), Ok(()));
        assert_eq!(l.take(&key("refresh-1"), 77), Err(TakeError::NotFound));
        assert!(l.get(&key("refresh-1")).is_none());
        assert!(l.is_empty());
        let c = l.counts();
        assert_eq!(c.get(LedgerEvent::Reclaimed), 1);
    }

    #[test]
    fn runner_marks() {
        let (l, _r) = ledger(8, 0);
        let rec = |runner| NewRecord {
            id: 1,
            runner,
            deadline: u64::MAX,
        };
        l.insert(&key("mine"), rec(1), 0).unwrap();
        l.insert(&key("theirs"), rec(2), 0).unwrap();
        l.insert(&key("nobody"), rec(0), 0).unwrap();
        let page = l.finalize_own(1, Outcome::Failed, 10, 8);
        assert_eq!((page.changed, page.scanned), (1, 8));
        assert!(l.get(&key("theirs")).unwrap().state.is_pending());
        // the other runner refreshes at 3 s; quiet period 7200
        l.touch(&key("theirs"), 2, 3).unwrap();
        assert_eq!(l.touch(&key("theirs"), 1, 3), Err(TouchError::NotRunner));
        assert_eq!(l.sweep_orphans(7202, 7200, 8).changed, 0);
        assert_eq!(l.sweep_orphans(7203, 7200, 8).changed, 1);
        assert_eq!(
            l.get(&key("theirs")).unwrap().state,
            RecordState::Finalized(Outcome::Orphaned)
        );
        assert!(l.get(&key("nobody")).unwrap().state.is_pending());
        assert_eq!(
            l.touch(&key("theirs"), 2, 9000),
            Err(TouchError::Finalized(Outcome::Orphaned))
        );
    }

    #[test]
    fn scans_cover_the_slab_in_pages() {
        let (l, _r) = ledger(10, 0);
        for i in 0..10 {
            l.insert(&key(&format!("k{i}")), pending(i, 5), 0).unwrap();
        }
        let mut total = 0;
        let mut pages = 0;
        loop {
            let p = l.reconcile(5, 3);
            total += p.changed;
            pages += 1;
            if p.wrapped {
                break;
            }
        }
        assert_eq!((total, pages), (10, 4)); // 3 + 3 + 3, then slots 9, 0, 1
        assert_eq!(l.reconcile(5, 3).changed, 0);
        let mut batch_out = [Ok(()); 2];
        assert_eq!(
            l.finalize_batch(
                &[key("k0"), key("zz")],
                &[1, 2],
                Outcome::Succeeded,
                6,
                &mut batch_out
            ),
            0
        );
        assert_eq!(
            batch_out,
            [
                Err(FinalizeError::Duplicate(Outcome::TimedOut)),
                Err(FinalizeError::NotFound)
            ]
        );
    }

    #[test]
    fn a_finalization_at_the_reserved_time_is_recorded_just_before_it() {
        let (l, _r) = ledger(2, 0);
        l.insert(&key("a"), pending(1, u64::MAX), 0).unwrap();
        l.finalize(&key("a"), Outcome::Failed, 5, u64::MAX).unwrap();
        let v = l.get(&key("a")).unwrap();
        assert_eq!(v.state, RecordState::Finalized(Outcome::Failed));
        assert_eq!((v.finalized_at, v.payload), (Some(u64::MAX - 1), 5));
        // and it is reclaimable, as any other terminal record
        assert_eq!(l.reclaim(u64::MAX - 1, 2).changed, 1);
        assert!(l.is_empty());
    }

    #[test]
    fn reserved_time_is_refused() {
        let (l, _r) = ledger(2, 0);
        assert_eq!(
            l.insert(&key("a"), pending(1, 1), u64::MAX),
            Err(InsertError::InvalidTime)
        );
        assert!(l.is_empty());
    }
}
