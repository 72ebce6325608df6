//! [`SlotAdmission`]: one slot's lock-free admission controller and FIFO control queue.
//!
//! # The algorithm
//!
//! State is split by writer, each part on its own cache line:
//!
//! - **The producers' line** holds the packed [`StateWord`] (admitted counts, cumulative modulo
//!   `2^27`, for all kinds and for background proposals; the leader, closed, fatal and
//!   config-change-pending bits) and the producers' *view* of what the consumer has released.
//! - **The consumer's line** holds what the consumer has released (taken), cumulative `u64`s
//!   (all items, background proposals, other kinds), written by the consumer once per drained
//!   batch with plain stores.
//! - **The cold line** holds what only slow paths and readers touch: refusal counts, the counts
//!   of non-proposal admissions, the fatal code and the config change serial.
//!
//! An admission loads the state word, runs upstream's checks in upstream's order against it
//! (closed, fatal, not leader, config change pending, total limit, background limit), and, if
//! admitted, CASes the counters forward. One CAS is the whole decision and its accounting, so a
//! limit is never exceeded, even transiently, by any number of producers. The old `admitted`
//! counter is the ticket of the admitted run's first item: its position in the [`Ring`], which is
//! free because `ticket + n - released <= limit <= capacity` (see `ring.rs`).
//!
//! `queued = admitted - released` uses the producers' view of `released`. The view only lags
//! (released only grows), so it over-estimates the queue: a stale view is conservative. A
//! producer re-reads the consumer's line only when its view says full, then raises the shared
//! view with `fetch_max`. In the common case neither side touches the other's line: a
//! producer's admission costs one CAS on a line producers own, and the consumer's drain costs
//! a store per released counter per batch.
//!
//! Accounting counts items queued and not yet taken. When the consumer takes everything, as
//! upstream's worker does with `takeControlBatch`, this equals upstream's counters: the total is
//! `len(controls)` and the background count is "background proposals admitted since the last
//! batch take" (upstream resets it at the take). With a partial drain it stays exact: each item
//! frees its quota when it is taken, and the reset is ordered with the take by construction.
//!
//! # Why the counters cannot wrap
//!
//! Let `A` be admitted and `V` the shared view (both unbounded in the proof; stored modulo
//! `M = 2^27`). Always `V <= released <= A` and `A - V <= limit <= 2^25 < M / 2`: an admission
//! grants at most `limit - (A' - V')` for values `A'` it CASes from and `V' <= V` it loaded. A
//! producer loads the state word first and the view after, so the pair it computes with satisfies
//! `A' - V' <= limit` or, if the state word went stale meanwhile, `V' > A'`, which shows as a
//! "queue" larger than the limit; it then reloads both. Hence `(A' - V') mod M` is exact. (The
//! modulus leaves `M - limit >= 3 · 2^25` values above the limit, so a stale pair is told apart
//! unless the word went more than that many admissions stale, and then its CAS fails.)
//!
//! # Orderings
//!
//! - The consumer's `Release` stores of the released counters (in `DrainBatch::drop`) pair with
//!   the producers' `Acquire` loads of them in [`SlotAdmission::refresh_view`], and the `AcqRel`
//!   `fetch_max` there passes them on to the `Acquire` loads of the view: a producer that computes
//!   room from a view has seen the consumer take the items that made the room.
//! - The ring's stamp store (`Release`) and load (`Acquire`) publish items (see `ring.rs`).
//! - Every admission CAS is `Release` on success. The ring slots its ticket refers to were freed
//!   as established by the view's `Acquire` load, and its run is published by the stamp, so the
//!   producer itself needs nothing more; the `Release` is for readers. It publishes what the
//!   producer saw before the CAS: the released counters that made its room (so a snapshot that
//!   sees the admission in the state word then re-reads released counters at least as new, and
//!   retries instead of reporting more than the limit: loom found that with a `Relaxed` CAS,
//!   `snapshot_never_above_the_limit`), and a non-proposal's `admitted_other` increment (so the
//!   counters never over-report, see "Counting"). On x86 every CAS is a `lock cmpxchg` whatever
//!   its ordering: this costs nothing there.
//! - Every load of the state word is `Acquire` (the CAS's on failure too). It pairs with the
//!   `Release` RMW in [`SlotAdmission::fail`], so a producer that sees the fatal bit also sees the
//!   fatal code, and with the `Release` admission CASes above. Every write of the state word is
//!   an RMW, so every later value continues the release sequences of all of them: seeing any
//!   later word is enough.
//! - Role, close and config-change flags are RMWs on the state word: any admission that happens
//!   after them reads them (coherence), so a demotion or close is visible to the very next
//!   admission, and an admission that raced them either CASed before them or sees them.
//! - Non-proposal admissions add their granted count to `committed_other` after their CAS
//!   (`Release`), pairing with the snapshot's `Acquire` load of it ("Queued proposals").
//! - A config change's ticket is issued and redeemed with a `Release` / `Acquire` pair on its
//!   serial, and the bit is cleared with an `AcqRel` RMW ("Config change tickets",
//!   `config_change.rs`).
//! - The consumer stores the other-kind and background released counters before the total (all
//!   `Release`); readers load the total first (`Acquire`), so the per-kind counts they read are at
//!   least what was stored with that total. A read torn by a drain that is between its stores
//!   pairs an older total with newer per-kind counts, which over-reports the total queue only,
//!   never the background queue above the total queue. (Storing the background count after the
//!   total let a snapshot report one queued background proposal and no queued item: the loom
//!   model `snapshot_vs_admit_and_drain` checks it.)
//! - Readers ([`SlotAdmission::snapshot`] and `SlotCore::counts`) load the released counters
//!   (`Acquire`, pairing with the consumer's `Release` stores) *before* the state word. Every item
//!   counted as released was admitted by a CAS that happens before that store: the producer's CAS
//!   is sequenced before its `Release` stamp store, which the consumer `Acquire`-loaded before it
//!   took the item and stored the count. So the state word loaded afterwards counts at least what
//!   was released (coherence), and `admitted - released` is never negative and never wraps.
//!
//! # The single-proposal fast path
//!
//! A single proposal on a leader slot with room by the view is decided in one short function
//! (`admit_proposal_fast`): load the state word, check the flags, load the view, check room,
//! CAS. It makes the same decision the general path makes on the same words; anything else (a
//! flag, a full view that needs a refresh, a stale word, a lost CAS) hands the item to the
//! general path, which reloads everything. Keeping the general decision out of line keeps the
//! common admission small enough that its register saves and branches do not dominate it. The
//! degraded test strategies turn the fast path off, so the general path is exercised alone too;
//! the production strategy runs both in every test and loom model.
//!
//! The consumer takes a run in chunks: a small guard counts the items handed to the callback and
//! moves the cursor once per chunk (also when the callback unwinds), so each item costs one
//! counter increment rather than three cursor stores.
//!
//! # Progress
//!
//! Admission is lock-free: a CAS retry means another producer admitted. The consumer takes runs
//! in ticket order; a producer preempted between its CAS and its publish holds back the items
//! admitted after it until it publishes (as in any bounded MPSC ring). Consumers are serialized
//! by a flag taken once per drained batch (one CAS, released with a plain store), uncontended
//! with the one worker per slot that hosts run; a second consumer waits for the first. It guards
//! the cursor, never the producers' path.
//!
//! # Counting without a second RMW
//!
//! Outcome counters must not cost an admission a second atomic RMW. Refusals are counted with a
//! `fetch_add` on a cold line (they are the slow path). Admissions are derived, when counters are
//! read, from the words that already exist: background `ok` is the background admitted counter,
//! and foreground `ok` is all admitted minus background proposals minus other kinds. The rare
//! non-proposal admissions count themselves in `admitted_other` *before* their CAS (a `Relaxed`
//! `fetch_add`, published by their `Release` CAS) and take back what was refused. The full `u64`
//! values are rebuilt from the consumer's `u64` released counters plus the modular queue depth.
//!
//! A reader loads the released counters, then the state word, then `admitted_other`. The
//! admitted counts it rebuilds are exactly the state word's (which counts at least what was
//! released, see "Orderings"). Each non-proposal admission that word counts made its `fetch_add`
//! before its `Release` CAS, and the reader's `Acquire` load of the word read that CAS or a later
//! RMW in its release sequence, so the `admitted_other` it loads next includes the increment; it
//! may also include admissions still in flight, or refused and not yet taken back. So the
//! subtracted `other` is at least what the word counts, and the derived foreground `ok` is exact
//! when nothing is in flight and never above the truth otherwise. The highest value reported is
//! kept, so reported counters are monotonic ([`super::counters::OutcomeCells`]).
//!
//! # Positions
//!
//! An item's *position* is its ticket: the number of items admitted before it, modulo
//! [`POSITION_MODULUS`] (`2^27`, the counters' modulus). Every admission reports the position of
//! its (first) item, and a drain the position of its first taken item; the items of a batch, and
//! the items a drain takes, have consecutive positions (modulo `2^27`). Positions are what the
//! ring is indexed by, so the items queued at any one time have distinct positions modulo the
//! ring's capacity (a power of two that divides `2^27`), and a host may keep its own values in an
//! array of that size indexed by position. Reporting them costs nothing: the ticket is the old
//! counter the admission CAS already read, and a drain's first position is its cursor.
//!
//! # Config change tickets
//!
//! The config-change-pending bit is set by the admission CAS of a config change, and cleared only
//! by [`SlotAdmission::resolve_config_change`] with the ticket that admission returned, once: a
//! serial on the cold line decides which resolve may clear it (`config_change.rs` has the
//! protocol and its orderings). The admitter takes its ticket right after its CAS; nothing on the
//! proposal path reads or writes the serial.
//!
//! # Queued proposals
//!
//! [`SlotSnapshot::queued_proposals`] (proposals of both classes queued and not taken; upstream's
//! `ProposalsQuiescent` asks for it) is `queued` minus the queued items of other kinds. Those are
//! counted off the proposal path: each non-proposal admission adds its granted count to
//! `committed_other` *after* its CAS (a `Release` `fetch_add` on the cold line), and the consumer
//! counts the non-proposal items it releases in `released_other`, stored before the total. A
//! snapshot loads the released counters (the total first), then `committed_other` (`Acquire`),
//! then the state word, and reports `queued - (committed_other - released_other)` (saturating).
//!
//! It is never below the truth at the state-word load: every increment the snapshot reads was
//! made after its CAS, and the `Acquire` load synchronizes with it, so that CAS happens before
//! the state-word load and the word counts its items (coherence): the subtracted other-kind count
//! is at most what the word holds. And `released_other` is read after the total it was stored
//! before, so it is at least the other-kind share of that total. It is exact when no admission is
//! in flight; an in-flight non-proposal admission (counted in the word, not yet in
//! `committed_other`) only makes it report high, and so does a drain caught between its stores
//! (a consumer preempted there), by that drain's other-kind items.
//!
//! # Memory
//!
//! The ring allocates its places in doubling segments as positions are first written (`ring.rs`):
//! an idle slot holds its own struct and its shared core (well under a KiB) and no place; one
//! that has used positions up to `p` about `p` places; after one full lap the whole capacity
//! (16 bytes a place for the C ABI's tokens: 128 KiB at the default 8192, 512 MiB at `2^25`).
//! [`SlotAdmission::memory_bytes`] reports it.
//!
//! # Test strategies
//!
//! A slot's type names its decision strategy ([`SlotStrategy`]); [`Production`], the default, is
//! the algorithm above. With the `test-strategies` feature, degraded strategies force a slow path
//! on every decision so the stress and model tests cover it as often as the fast path: a view
//! refresh on every admission (`RefreshEveryAdmission`), a decision that starts from a state word
//! an earlier decision loaded and then refreshes the view, so a view newer than the word sends it
//! down the "state went stale" reload (`StaleStateWord`), and a first CAS that fails
//! (`FailFirstCas`). They are constants: production code folds them away.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

use crossbeam_utils::CachePadded;

use super::class::ProposalClass;
use super::config_change::{ConfigChangeTicket, ConfigSerial};
use super::counters::{AdmissionCounts, OutcomeCells};
use super::error::{AdmissionError, ConfigChangeError, Rejected};
use super::kind::ControlKind;
use super::limits::{LimitsError, SlotLimits};
use super::observer::AdmissionObserver;
use super::result::AdmissionResult;
use super::ring::Ring;
use super::state::{queued, Stamp, StateWord, COUNT_MODULUS};
use crate::sync::{AtomicBool, AtomicU64, Gate, GateGuard, Ordering, UnsafeCell};

/// A taken control action: its kind, its (normalized) class and the host's item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control<T> {
    /// The control kind it was admitted as.
    pub kind: ControlKind,
    /// The class it was admitted with (only background proposals count toward the background
    /// limit).
    pub class: ProposalClass,
    /// The host's item.
    pub item: T,
}

/// Positions count modulo `2^27` (module docs, "Positions").
pub const POSITION_MODULUS: u64 = COUNT_MODULUS;

/// An admitted control action: where it is queued, and the ticket of a config change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The item's ring position (module docs, "Positions"), modulo [`POSITION_MODULUS`].
    pub position: u64,
    /// For a config change, the ticket that resolves it
    /// ([`SlotAdmission::resolve_config_change`]); `None` for other kinds.
    pub config_change: Option<ConfigChangeTicket>,
}

/// The outcome of a batch admission: the longest prefix that fits was admitted, the rest refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchAdmission {
    /// How many leading items were admitted.
    pub admitted: usize,
    /// Why the remaining items were refused; `None` when all were admitted.
    pub refused: Option<AdmissionError>,
    /// The position of the first admitted item (the others follow it, modulo
    /// [`POSITION_MODULUS`]); 0 when none was admitted.
    pub first_position: u64,
    /// For a config change batch that admitted its one item, the change's ticket.
    pub config_change: Option<ConfigChangeTicket>,
}

/// What a drain took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drained {
    /// How many items were taken.
    pub count: usize,
    /// The position of the first item taken (the others follow it, modulo
    /// [`POSITION_MODULUS`]); when none was taken, the position the next item taken will have.
    pub first_position: u64,
}

/// A moment's view of a slot, for monitoring and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSnapshot {
    /// The slot admits proposals and config changes.
    pub leader: bool,
    /// The slot is closed.
    pub closed: bool,
    /// The fatal code, if the slot failed.
    pub fatal: Option<u32>,
    /// A config change is admitted and not yet resolved.
    pub config_change_pending: bool,
    /// Items admitted and not yet taken, when the state word was read
    /// ([`SlotAdmission::snapshot`]).
    pub queued: u32,
    /// Background proposals admitted and not yet taken, when the state word was read.
    pub queued_background: u32,
    /// Proposals of both classes admitted and not yet taken, when the state word was read: never
    /// below the truth, exact when no admission is in flight (module docs, "Queued proposals").
    /// A queued proposal makes a slot non-quiescent (upstream's `ProposalsQuiescent`); a queued
    /// control of another kind does not.
    pub queued_proposals: u32,
}

pub(crate) const FATAL_PRESENT: u64 = 1 << 32;

struct ProducerSide {
    state: AtomicU64,
    released_view: AtomicU64,
    released_background_view: AtomicU64,
}

struct ConsumerSide {
    released: AtomicU64,
    released_background: AtomicU64,
    /// Items of kinds other than proposals released.
    released_other: AtomicU64,
    gate: Gate,
    cursor: UnsafeCell<Cursor>,
}

struct Cursor {
    position: u64,
    released_background: u64,
    released_other: u64,
    run_left: u64,
    /// The head stamp of the run being taken (kind, class, background).
    run: Stamp,
}

struct ColdSide {
    outcomes: OutcomeCells,
    /// Non-proposal items admitted or being admitted: raised before the CAS, lowered by what it
    /// refused (module docs, "Counting").
    admitted_other: AtomicU64,
    /// Non-proposal items admitted: raised after the CAS by what it granted (module docs,
    /// "Queued proposals").
    committed_other: AtomicU64,
    config_change: ConfigSerial,
    fatal_code: AtomicU64,
    retired: AtomicBool,
    /// The state word the last decision loaded, for the `StaleStateWord` test strategy.
    #[cfg(feature = "test-strategies")]
    stale_state: AtomicU64,
}

/// The part of a slot that outlives it in the metrics registry: its words, not its items.
pub(crate) struct SlotCore {
    producer: CachePadded<ProducerSide>,
    consumer: CachePadded<ConsumerSide>,
    cold: CachePadded<ColdSide>,
}

// SAFETY: the cursor cell is only touched by the thread that holds the consumer gate (see
// `SlotAdmission::drain_with`); every other field is atomic.
unsafe impl Sync for SlotCore {}

impl SlotCore {
    fn new() -> Self {
        Self {
            producer: CachePadded::new(ProducerSide {
                state: AtomicU64::new(0),
                released_view: AtomicU64::new(0),
                released_background_view: AtomicU64::new(0),
            }),
            consumer: CachePadded::new(ConsumerSide {
                released: AtomicU64::new(0),
                released_background: AtomicU64::new(0),
                released_other: AtomicU64::new(0),
                gate: Gate::new(),
                cursor: UnsafeCell::new(Cursor {
                    position: 0,
                    released_background: 0,
                    released_other: 0,
                    run_left: 0,
                    run: Stamp::EMPTY,
                }),
            }),
            cold: CachePadded::new(ColdSide {
                outcomes: OutcomeCells::new(),
                admitted_other: AtomicU64::new(0),
                committed_other: AtomicU64::new(0),
                config_change: ConfigSerial::new(),
                fatal_code: AtomicU64::new(0),
                retired: AtomicBool::new(false),
                #[cfg(feature = "test-strategies")]
                stale_state: AtomicU64::new(0),
            }),
        }
    }

    /// Outcome counts, `ok` derived from the admitted counters (module docs, "Counting").
    pub(crate) fn counts(&self) -> AdmissionCounts {
        let (p, c) = (&*self.producer, &*self.consumer);
        // In this order: released, state, other (module docs, "Counting").
        let Released {
            total: released,
            background: released_bg,
            ..
        } = c.released();
        // Ordering: Acquire; pairs with the Release admission CAS of non-proposal kinds (or a
        // later RMW in its release sequence), so the load below sees their `admitted_other`
        // increments (module docs, "Counting").
        let state = StateWord(p.state.load(Ordering::Acquire));
        // Ordering: Relaxed; it relies only on the Acquire load above, which it follows.
        let other = self.cold.admitted_other.load(Ordering::Relaxed);
        let admitted = released + queued(state.admitted(), released);
        let admitted_bg = released_bg + queued(state.admitted_background(), released_bg);
        let ok_fg = admitted.saturating_sub(admitted_bg).saturating_sub(other);
        self.cold.outcomes.snapshot([ok_fg, admitted_bg])
    }

    /// Marks the counts final: their slot is gone.
    pub(crate) fn retire(&self) {
        // Ordering: Release; pairs with the Acquire load in `is_retired`.
        self.cold.retired.store(true, Ordering::Release);
    }

    /// Whether the slot is gone; if so, counts read after this are final.
    pub(crate) fn is_retired(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `retire`.
        self.cold.retired.load(Ordering::Acquire)
    }

    /// For the `StaleStateWord` strategy: records `fresh` and returns the word the previous
    /// decision recorded (an older state of this slot).
    #[cfg(feature = "test-strategies")]
    fn stale_word(&self, fresh: StateWord) -> StateWord {
        // Ordering: AcqRel; pairs with itself. The Release half passes this thread's Acquire load
        // of `fresh` on, the Acquire half takes the previous recorder's, so the view loaded after
        // this is loaded after the returned word, as in a decision's own load order.
        StateWord(self.cold.stale_state.swap(fresh.0, Ordering::AcqRel))
    }

    /// Without the `test-strategies` feature no strategy asks for a stale word.
    #[cfg(not(feature = "test-strategies"))]
    #[inline(always)]
    fn stale_word(&self, fresh: StateWord) -> StateWord {
        fresh
    }
}

/// The consumer's released counters, as one reader loaded them.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Released {
    total: u64,
    background: u64,
    other: u64,
}

impl ConsumerSide {
    /// The released counters: the total first, then the others (module docs, "Orderings").
    #[inline]
    fn released(&self) -> Released {
        // Ordering: Acquire; pairs with the Release stores in `DrainBatch::drop`: a state word
        // loaded after this counts every item released here (module docs, "Orderings"), and the
        // other-kind count below is at least what was stored with this total.
        let total = self.released.load(Ordering::Acquire);
        // Ordering: Acquire; as above.
        let background = self.released_background.load(Ordering::Acquire);
        // Ordering: Acquire; as above.
        let other = self.released_other.load(Ordering::Acquire);
        Released {
            total,
            background,
            other,
        }
    }
}

mod sealed {
    /// Keeps [`SlotStrategy`](super::SlotStrategy) implemented by this crate only.
    #[allow(unreachable_pub)] // public in a private module: the sealed-trait pattern
    pub trait Sealed {}
}

/// How a slot takes its admission decisions: [`Production`], or (with the `test-strategies`
/// feature) a degraded strategy that forces a slow path on every decision (module docs, "Test
/// strategies"). Sealed; its constants fold away.
#[doc(hidden)]
pub trait SlotStrategy: sealed::Sealed + 'static {
    /// Refresh the view from the consumer's line at the start of every decision.
    const REFRESH_EVERY_ADMISSION: bool = false;
    /// Start every decision from the state word the previous decision loaded, then refresh the
    /// view, so a view newer than the word takes the "state went stale" reload. A refusal is
    /// always decided on a word the call itself loaded.
    const STALE_STATE_WORD: bool = false;
    /// Treat the first CAS of every decision as failed, as a weak CAS may.
    const FAIL_FIRST_CAS: bool = false;
    /// Take the single-proposal fast path; every degraded strategy turns it off, so the general
    /// decision (and its slow paths) runs for every admission.
    const FAST_PATH: bool =
        !(Self::REFRESH_EVERY_ADMISSION || Self::STALE_STATE_WORD || Self::FAIL_FIRST_CAS);
}

/// The production strategy: the algorithm of the module docs, nothing forced.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Production;
impl sealed::Sealed for Production {}
impl SlotStrategy for Production {}

macro_rules! test_strategies {
    ($($(#[$doc:meta])* $name:ident { $($konst:ident),* })*) => {$(
        $(#[$doc])*
        #[cfg(feature = "test-strategies")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        #[cfg(feature = "test-strategies")]
        impl sealed::Sealed for $name {}
        #[cfg(feature = "test-strategies")]
        impl SlotStrategy for $name {
            $(const $konst: bool = true;)*
        }
    )*};
}
test_strategies! {
    /// Test strategy: a view refresh on every admission.
    RefreshEveryAdmission { REFRESH_EVERY_ADMISSION }
    /// Test strategy: every decision starts from a stale state word.
    StaleStateWord { STALE_STATE_WORD }
    /// Test strategy: the first CAS of every decision fails.
    FailFirstCas { FAIL_FIRST_CAS }
}

/// One slot's lock-free admission controller and FIFO control queue.
///
/// Producers on any threads call [`admit`](Self::admit) and
/// [`admit_batch`](Self::admit_batch); one consumer at a time (others wait) takes items in FIFO
/// order with [`drain_with`](Self::drain_with). Hosts share it behind an `Arc`; the hot path
/// touches only this object. See the module docs for the algorithm and its orderings.
///
/// A new slot is a follower (proposals and config changes are refused with `NotLeader` until
/// [`set_leader`](Self::set_leader)), open, with nothing queued.
///
/// `S` is the decision strategy; leave it at its default, [`Production`] (module docs, "Test
/// strategies").
pub struct SlotAdmission<T, S: SlotStrategy = Production> {
    core: StdArc<SlotCore>,
    ring: Ring<T, S>,
    limit: u64,
    limit_background: u64,
    limits: SlotLimits,
    slot_id: u64,
    observer: Option<StdArc<dyn AdmissionObserver>>,
    hosted: bool,
}

/// Builds a [`SlotAdmission`] with a slot id, an observer or a metrics registry.
pub struct SlotAdmissionBuilder<'r, T> {
    limits: SlotLimits,
    slot_id: u64,
    observer: Option<StdArc<dyn AdmissionObserver>>,
    metrics: Option<&'r crate::metrics::Registry>,
    register: bool,
    hosted: bool,
    items: PhantomData<fn(T) -> T>,
}

impl<'r, T> SlotAdmissionBuilder<'r, T> {
    /// The slot id reported to the observer (default 0).
    pub fn slot_id(mut self, slot_id: u64) -> Self {
        self.slot_id = slot_id;
        self
    }

    /// An observer called after every proposal admission decision.
    pub fn observer(mut self, observer: StdArc<dyn AdmissionObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The metrics registry that sums this slot's counters (default: [`crate::metrics::global`]).
    pub fn metrics<'m>(
        self,
        registry: &'m crate::metrics::Registry,
    ) -> SlotAdmissionBuilder<'m, T> {
        SlotAdmissionBuilder {
            limits: self.limits,
            slot_id: self.slot_id,
            observer: self.observer,
            metrics: Some(registry),
            register: true,
            hosted: self.hosted,
            items: PhantomData,
        }
    }

    /// A slot whose admissions and takes a host runs inline on its words
    /// ([`SlotAdmission::host_words`], `host.rs`): its ring is never used, and the host must not
    /// call [`SlotAdmission::admit`], its batch forms or its drains on it.
    pub fn hosted(mut self) -> Self {
        self.hosted = true;
        self
    }

    /// Registers with no metrics registry (the per-slot counters still count).
    pub fn without_metrics(mut self) -> Self {
        self.metrics = None;
        self.register = false;
        self
    }

    /// Validates the limits and builds the slot. The ring holds the total limit rounded up to a
    /// power of two, in segments allocated as positions are first used (module docs, "Memory"):
    /// a new slot allocates none.
    pub fn build(self) -> Result<SlotAdmission<T>, LimitsError> {
        let limits = self.limits.validate()?;
        let core = StdArc::new(SlotCore::new());
        if self.register {
            match self.metrics {
                Some(registry) => super::metrics::register(registry, core.clone()),
                #[cfg(not(wkcore_loom))]
                None => super::metrics::register(crate::metrics::global(), core.clone()),
                #[cfg(wkcore_loom)]
                None => {}
            }
        }
        let capacity = (limits.max_queued_controls as usize).next_power_of_two();
        Ok(SlotAdmission {
            core,
            ring: Ring::new(capacity),
            limit: u64::from(limits.max_queued_controls),
            limit_background: u64::from(limits.max_queued_background_controls),
            limits,
            slot_id: self.slot_id,
            observer: self.observer,
            hosted: self.hosted,
        })
    }
}

/// The outcome of a reservation.
struct Grant {
    ticket: u64,
    granted: u64,
    refused: Option<AdmissionError>,
    /// The ticket of a config change this reservation admitted.
    config_change: Option<ConfigChangeTicket>,
}

impl<T> SlotAdmission<T> {
    /// A slot with `limits`, id 0, counted in the global metrics registry.
    pub fn new(limits: SlotLimits) -> Result<Self, LimitsError> {
        Self::builder(limits).build()
    }

    /// A builder for a slot with `limits`.
    pub fn builder(limits: SlotLimits) -> SlotAdmissionBuilder<'static, T> {
        SlotAdmissionBuilder {
            limits,
            slot_id: 0,
            observer: None,
            metrics: None,
            register: !cfg!(wkcore_loom),
            hosted: false,
            items: PhantomData,
        }
    }

    /// The same slot with decision strategy `S` (tests only; module docs, "Test strategies").
    #[cfg(feature = "test-strategies")]
    #[doc(hidden)]
    pub fn with_strategy<S: SlotStrategy>(mut self) -> SlotAdmission<T, S> {
        // `self` is dropped below (`Drop` drains and retires): leave it an empty ring and a core
        // of its own, and move the real ones.
        let core = std::mem::replace(&mut self.core, StdArc::new(SlotCore::new()));
        let ring = std::mem::replace(&mut self.ring, Ring::new(1)).with_strategy();
        SlotAdmission {
            core,
            ring,
            limit: self.limit,
            limit_background: self.limit_background,
            limits: self.limits,
            slot_id: self.slot_id,
            observer: self.observer.take(),
            hosted: self.hosted,
        }
    }
}

impl<T, S: SlotStrategy> SlotAdmission<T, S> {
    /// The slot id given at construction.
    pub fn slot_id(&self) -> u64 {
        self.slot_id
    }

    /// The normalized limits.
    pub fn limits(&self) -> SlotLimits {
        self.limits
    }

    /// Whether the slot was built for a host that runs its words inline
    /// ([`SlotAdmissionBuilder::hosted`]).
    pub fn is_hosted(&self) -> bool {
        self.hosted
    }

    /// References to every word of the slot's shared core (`host.rs`).
    pub(crate) fn core_words(&self) -> super::host::HostWords<'_> {
        let (p, c, cold) = (&*self.core.producer, &*self.core.consumer, &*self.core.cold);
        use crate::sync::{host_u64, host_u64_table};
        super::host::HostWords {
            state: host_u64(&p.state),
            released_view: host_u64(&p.released_view),
            released_background_view: host_u64(&p.released_background_view),
            released: host_u64(&c.released),
            released_background: host_u64(&c.released_background),
            released_other: host_u64(&c.released_other),
            admitted_other: host_u64(&cold.admitted_other),
            committed_other: host_u64(&cold.committed_other),
            config_serial: host_u64(cold.config_change.word()),
            fatal_code: host_u64(&cold.fatal_code),
            outcomes: host_u64_table(cold.outcomes.cells()),
        }
    }

    /// Admits one control action, or refuses it and gives the item back.
    ///
    /// Checks run in upstream's order: closed, fatal, not leader (Propose and ConfigChange
    /// only), config change pending (ConfigChange only), total limit (`Busy`), background limit
    /// (`Throttled`, background proposals only). Proposals report their outcome to the counters
    /// and the observer after the decision.
    ///
    /// The admission reports the item's position, and for a config change the ticket that
    /// resolves it.
    #[inline]
    pub fn admit(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        item: T,
    ) -> Result<Admission, Rejected<T>> {
        if kind == ControlKind::Propose && S::FAST_PATH {
            match self.admit_proposal_fast(class, item) {
                Ok(position) => {
                    return Ok(Admission {
                        position,
                        config_change: None,
                    })
                }
                Err(item) => return self.admit_slow(kind, class, item),
            }
        }
        self.admit_slow(kind, class, item)
    }

    /// The common case of one proposal, in one short function: a leader slot, open, with room
    /// by the view, and an uncontended CAS. It makes exactly the decision [`Self::decide`] makes
    /// on the same words (the checks pass, `granted == 1`); anything else — a flag set, the view
    /// saying full (which needs a refresh), a stale word, a lost CAS — gives the item back for
    /// the general path, which reloads everything. Returns the item's position.
    #[inline]
    fn admit_proposal_fast(&self, class: ProposalClass, item: T) -> Result<u64, T> {
        let background = class == ProposalClass::Background;
        let p = &*self.core.producer;
        // Ordering: Acquire, as in `decide` step 1 (pairs with the Release RMW in `fail`; a
        // producer that sees no fatal bit needs no code).
        let cur = StateWord(p.state.load(Ordering::Acquire));
        let flags = StateWord::LEADER_BIT | StateWord::CLOSED_BIT | StateWord::FATAL_BIT;
        if cur.0 & flags != StateWord::LEADER_BIT {
            return Err(item);
        }
        // The state word first, then the view: the order that bounds the view's lag (module
        // docs); a view newer than the word shows as a wrapped, over-limit queue and falls back.
        let (released, released_bg) = self.load_view(background);
        if queued(cur.admitted(), released) >= self.limit
            || (background
                && queued(cur.admitted_background(), released_bg) >= self.limit_background)
        {
            return Err(item);
        }
        let next = cur.admit(1, background, false);
        // Ordering: Release on success, as every admission CAS in `decide` (module docs); Relaxed
        // on failure: the general path reloads the word with Acquire.
        if p.state
            .compare_exchange_weak(cur.0, next.0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            return Err(item);
        }
        let ticket = cur.admitted();
        // SAFETY: the CAS handed this thread the ticket; it is written once.
        unsafe {
            self.ring.write_one(
                ticket,
                item,
                Stamp::new(ticket, 1, ControlKind::Propose, class),
            );
        }
        if let Some(observer) = &self.observer {
            observer.observe_admission_batch(self.slot_id, class, AdmissionResult::Ok, 1);
        }
        Ok(ticket)
    }

    /// [`Self::admit`] through the general decision.
    #[inline(never)]
    fn admit_slow(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        item: T,
    ) -> Result<Admission, Rejected<T>> {
        let grant = self.reserve(kind, class, 1);
        match grant.refused {
            Some(error) => {
                self.report(kind, class, &grant, 1);
                Err(Rejected { error, item })
            }
            None => {
                // SAFETY: the reservation handed this thread the ticket; it is written once.
                unsafe {
                    self.ring.write_one(
                        grant.ticket,
                        item,
                        Stamp::new(grant.ticket, 1, kind, class),
                    );
                }
                self.report(kind, class, &grant, 1);
                Ok(Admission {
                    position: grant.ticket,
                    config_change: grant.config_change,
                })
            }
        }
    }

    /// Admits the longest prefix of `items` that fits, with one CAS, as one queue element; the
    /// admitted prefix is removed from `items` and the refused rest stays there.
    pub fn admit_batch(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        items: &mut Vec<T>,
    ) -> BatchAdmission {
        let want = items.len();
        self.admit_run(kind, class, want, |ticket, granted| {
            // SAFETY: the reservation handed this thread `granted` tickets from `ticket`; a
            // vector's drain yields exactly `granted` items.
            unsafe {
                self.ring
                    .write_run(ticket, granted as u64, items.drain(..granted))
            }
        })
    }

    /// Admits the longest prefix of `items` that fits, copying it, with one CAS, as one queue
    /// element; `items[..admitted]` were admitted.
    pub fn admit_batch_copied(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        items: &[T],
    ) -> BatchAdmission
    where
        T: Copy,
    {
        self.admit_run(kind, class, items.len(), |ticket, granted| {
            // SAFETY: the reservation handed this thread `granted` tickets from `ticket`.
            unsafe {
                self.ring
                    .write_run(ticket, granted as u64, items[..granted].iter().copied())
            }
        })
    }

    /// Admits the longest prefix of `n` copies of `item` that fits, with one CAS, as one queue
    /// element; returns how many were admitted. For hosts that keep their own values by
    /// position and queue a placeholder (the C ABI's batch without tokens).
    pub fn admit_batch_repeat(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        n: usize,
        item: T,
    ) -> BatchAdmission
    where
        T: Copy,
    {
        self.admit_run(kind, class, n, |ticket, granted| {
            // SAFETY: the reservation handed this thread `granted` tickets from `ticket`.
            unsafe {
                self.ring
                    .write_run(ticket, granted as u64, std::iter::repeat_n(item, granted))
            }
        })
    }

    /// Reserves up to `want` items, lets `fill` write the granted ones (returning how many it
    /// wrote), publishes them as one run. `fill` must write every granted position and must not
    /// panic (moves and copies only).
    #[inline]
    fn admit_run(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        want: usize,
        fill: impl FnOnce(u64, usize) -> u64,
    ) -> BatchAdmission {
        if want == 0 {
            return BatchAdmission {
                admitted: 0,
                refused: None,
                first_position: 0,
                config_change: None,
            };
        }
        let want = want.min(SlotLimits::MAX as usize + 1) as u64;
        let grant = self.reserve(kind, class, want);
        if grant.granted > 0 {
            let written = fill(grant.ticket, grant.granted as usize);
            // A short fill would leave a hole the consumer would read: never publish one.
            assert_eq!(written, grant.granted, "a run was not filled");
            // SAFETY: every granted position was written by `fill`.
            unsafe {
                let stamp = Stamp::new(grant.ticket, grant.granted, kind, class);
                self.ring.publish(grant.ticket, stamp)
            };
        }
        self.report(kind, class, &grant, want);
        BatchAdmission {
            admitted: grant.granted as usize,
            refused: grant.refused,
            first_position: if grant.granted > 0 { grant.ticket } else { 0 },
            config_change: grant.config_change,
        }
    }

    /// The decision: upstream's checks and one CAS (see the module docs).
    #[inline]
    fn reserve(&self, kind: ControlKind, class: ProposalClass, want: u64) -> Grant {
        if kind == ControlKind::Propose {
            return self.decide(kind, class, want);
        }
        // Other kinds count themselves before their CAS (module docs, "Counting").
        let cold = &*self.core.cold;
        // Ordering: Relaxed; published by the Release CAS in `decide` that admits.
        cold.admitted_other.fetch_add(want, Ordering::Relaxed);
        let mut grant = self.decide(kind, class, want);
        if grant.granted < want {
            // Ordering: Relaxed; a reader that misses the take-back under-reports `ok`, which the
            // counting scheme allows (module docs, "Counting").
            cold.admitted_other
                .fetch_sub(want - grant.granted, Ordering::Relaxed);
        }
        if grant.granted > 0 {
            if kind == ControlKind::ConfigChange {
                // After the CAS that set the pending bit (module docs, "Config change tickets").
                grant.config_change = Some(cold.config_change.issue());
            }
            // Ordering: Release; pairs with the Acquire load in `snapshot`: a reader that counts
            // this increment sees the CAS above (module docs, "Queued proposals").
            cold.committed_other
                .fetch_add(grant.granted, Ordering::Release);
        }
        grant
    }

    /// Upstream's checks and one CAS (module docs). The CAS also publishes what the caller did
    /// before it: the view it computed room from and, for the non-proposal kinds, its
    /// `admitted_other` increment.
    #[inline]
    fn decide(&self, kind: ControlKind, class: ProposalClass, want: u64) -> Grant {
        let background = kind == ControlKind::Propose && class == ProposalClass::Background;
        let cap = if kind == ControlKind::ConfigChange {
            1
        } else {
            want
        };
        let p = &*self.core.producer;
        // The test strategies' switches (module docs, "Test strategies"); constants, all false
        // in production.
        let mut stale = S::STALE_STATE_WORD;
        let mut fail_cas = S::FAIL_FIRST_CAS;
        // 1. Load the state word, then the view (this order bounds the view's lag; module docs).
        // Ordering: Acquire; pairs with the Release RMW in `fail` (fatal bit, then its code).
        let mut cur = StateWord(p.state.load(Ordering::Acquire));
        if stale {
            cur = self.core.stale_word(cur);
        }
        let (mut released, mut released_bg) = if S::REFRESH_EVERY_ADMISSION || stale {
            self.refresh_view(background)
        } else {
            self.load_view(background)
        };
        let mut refreshed = false;
        loop {
            // 2. Upstream's checks 1 to 4, on the word this decision will CAS from.
            if let Some(error) = self.gate(cur, kind) {
                if stale {
                    // A refusal rests on a word this call loaded: a stale start reloads first.
                    (cur, (released, released_bg)) = self.load_state(background);
                    stale = false;
                    continue;
                }
                return Grant {
                    ticket: 0,
                    granted: 0,
                    refused: Some(error),
                    config_change: None,
                };
            }
            // 3. Room under the total and background limits, by the view.
            let queued_total = queued(cur.admitted(), released);
            let queued_bg = queued(cur.admitted_background(), released_bg);
            if queued_total > self.limit || (background && queued_bg > self.limit_background) {
                // The state word went stale after we loaded it: reload both, in order.
                (cur, (released, released_bg)) = self.load_state(background);
                stale = false;
                continue;
            }
            let room = self.limit - queued_total;
            let room_bg = if background {
                self.limit_background - queued_bg
            } else {
                u64::MAX
            };
            let granted = want.min(cap).min(room).min(room_bg);
            if granted < want.min(cap) && !refreshed {
                // 4. The view says full: read what the consumer has really released.
                (released, released_bg) = self.refresh_view(background);
                refreshed = true;
                continue;
            }
            let refused = if granted == want {
                None
            } else if granted == cap {
                // Only a config change caps a run: a second one waits for the first (check 4).
                Some(AdmissionError::ConfigChangePending)
            } else if granted == room {
                Some(AdmissionError::Busy)
            } else {
                Some(AdmissionError::Throttled)
            };
            if granted == 0 {
                if stale {
                    // As for the checks above.
                    (cur, (released, released_bg)) = self.load_state(background);
                    stale = false;
                    continue;
                }
                return Grant {
                    ticket: 0,
                    granted: 0,
                    refused,
                    config_change: None,
                };
            }
            // 5. Account and decide in one CAS.
            let next = cur.admit(granted, background, kind == ControlKind::ConfigChange);
            let result = if fail_cas {
                // The test strategy's failure, as a weak CAS may fail spuriously.
                fail_cas = false;
                // Ordering: Acquire, as in step 1.
                Err(p.state.load(Ordering::Acquire))
            } else {
                // Ordering: Release on success (module docs, "Orderings"); Acquire on failure, as
                // in step 1.
                p.state
                    .compare_exchange_weak(cur.0, next.0, Ordering::Release, Ordering::Acquire)
            };
            match result {
                Ok(_) => {
                    return Grant {
                        ticket: cur.admitted(),
                        granted,
                        refused,
                        config_change: None,
                    }
                }
                Err(actual) => {
                    cur = StateWord(actual);
                    (released, released_bg) = self.load_view(background);
                    refreshed = false;
                    stale = false;
                }
            }
        }
    }

    /// Loads the state word, then the view: a decision's load order (module docs).
    #[inline]
    fn load_state(&self, background: bool) -> (StateWord, (u64, u64)) {
        // Ordering: Acquire, as in step 1 of `decide`.
        let cur = StateWord(self.core.producer.state.load(Ordering::Acquire));
        (cur, self.load_view(background))
    }

    /// Upstream's checks 1, 1', 3 and 4.
    #[inline]
    fn gate(&self, cur: StateWord, kind: ControlKind) -> Option<AdmissionError> {
        if cur.closed() {
            Some(AdmissionError::Closed)
        } else if cur.fatal() {
            Some(AdmissionError::Fatal(self.fatal_code().unwrap_or(0)))
        } else if kind.requires_leader() && !cur.leader() {
            Some(AdmissionError::NotLeader)
        } else if kind == ControlKind::ConfigChange && cur.config_change_pending() {
            Some(AdmissionError::ConfigChangePending)
        } else {
            None
        }
    }

    #[inline]
    fn load_view(&self, background: bool) -> (u64, u64) {
        let p = &*self.core.producer;
        // Ordering: Acquire; pairs with the AcqRel fetch_max in `refresh_view`.
        let released = p.released_view.load(Ordering::Acquire);
        let released_bg = if background {
            // Ordering: Acquire; as above.
            p.released_background_view.load(Ordering::Acquire)
        } else {
            0
        };
        (released, released_bg)
    }

    #[cold]
    fn refresh_view(&self, background: bool) -> (u64, u64) {
        let (p, c) = (&*self.core.producer, &*self.core.consumer);
        // Ordering: Acquire; pairs with the consumer's Release store in `DrainBatch::drop`.
        let released = c.released.load(Ordering::Acquire);
        // Ordering: AcqRel; passes the consumer's release on to the Acquire loads in `load_view`.
        let released = p
            .released_view
            .fetch_max(released, Ordering::AcqRel)
            .max(released);
        let released_bg = if background {
            // Ordering: Acquire; as above.
            let r = c.released_background.load(Ordering::Acquire);
            // Ordering: AcqRel; as above.
            p.released_background_view
                .fetch_max(r, Ordering::AcqRel)
                .max(r)
        } else {
            0
        };
        (released, released_bg)
    }

    /// Counts a proposal refusal and tells the observer; never inside the CAS loop. Admissions
    /// need no counting: the CAS counted them (module docs, "Counting").
    #[inline]
    fn report(&self, kind: ControlKind, class: ProposalClass, grant: &Grant, want: u64) {
        if kind != ControlKind::Propose {
            return;
        }
        let refused = want - grant.granted;
        let refused_result = grant.refused.and_then(|e| e.result());
        if let Some(result) = refused_result {
            self.core.cold.outcomes.add_refused(class, result, refused);
        }
        if let Some(observer) = &self.observer {
            if grant.granted > 0 {
                observer.observe_admission_batch(
                    self.slot_id,
                    class,
                    AdmissionResult::Ok,
                    grant.granted as usize,
                );
            }
            if let Some(result) = refused_result {
                observer.observe_admission_batch(self.slot_id, class, result, refused as usize);
            }
        }
    }

    /// Takes up to `max` items in FIFO order and hands each to `f`; returns how many, and the
    /// position of the first.
    ///
    /// Their quota is released with one store when the call returns (also if `f` panics: the
    /// items already handed over stay taken). One consumer at a time; a concurrent call waits.
    pub fn drain_with(&self, max: usize, f: impl FnMut(Control<T>)) -> Drained {
        self.consume(max, false, f)
    }

    /// Takes up to `max` items in FIFO order into `out`; returns how many, and the position of
    /// the first.
    pub fn drain(&self, max: usize, out: &mut Vec<Control<T>>) -> Drained {
        self.drain_with(max, |control| out.push(control))
    }

    /// Takes up to `max` items in FIFO order without handing them out (they are dropped): for
    /// hosts that keep their own values by position. Returns how many, and the position of the
    /// first. For an item type without drop glue (the C ABI's tokens) no item is read: the cost
    /// is per run, not per item.
    pub fn take(&self, max: usize) -> Drained {
        self.consume(max, !std::mem::needs_drop::<T>(), drop)
    }

    /// The consumer: takes up to `max` items, handing each to `f`, or, with `skip` (only for a
    /// `T` without drop glue), moving past them unread.
    #[inline]
    fn consume(&self, max: usize, skip: bool, mut f: impl FnMut(Control<T>)) -> Drained {
        debug_assert!(!skip || !std::mem::needs_drop::<T>());
        let consumer = &*self.core.consumer;
        let gate = consumer.gate.enter();
        if max == 0 {
            // The cursor, under the gate: a drain still running has moved it past what it took
            // but may not have published its release yet, so `released` could name a taken item.
            let position = consumer.cursor.with_mut(|cursor| {
                // SAFETY: this thread holds the gate, and only the holder touches the cursor.
                unsafe { (*cursor).position }
            });
            drop(gate);
            return Drained {
                count: 0,
                first_position: position & (POSITION_MODULUS - 1),
            };
        }
        consumer.cursor.with_mut(|cursor| {
            // SAFETY: this thread holds the gate until `batch` is dropped (also on unwind), and
            // only the holder touches the cursor.
            let cursor = unsafe { &mut *cursor };
            let batch = DrainBatch {
                consumer,
                _gate: gate,
                start: cursor.position,
                start_background: cursor.released_background,
                start_other: cursor.released_other,
                cursor,
            };
            let first_position = batch.start & (POSITION_MODULUS - 1);
            let cursor = &mut *batch.cursor;
            let mut taken = 0;
            loop {
                if cursor.run_left == 0 {
                    if taken == max {
                        break;
                    }
                    // The next run is published when the cursor's place holds a head stamp of
                    // this lap (ring.rs: stamps are at most one lap old).
                    // SAFETY: this thread holds the consumer gate.
                    let Some(head) = (unsafe { self.ring.head(cursor.position) }) else {
                        break;
                    };
                    let stamp = head.stamp();
                    if !stamp.is_ready() || stamp.ticket() != cursor.position & (COUNT_MODULUS - 1)
                    {
                        break;
                    }
                    let mut len = stamp.len();
                    if len == 1 {
                        // Runs of one (single admissions, the common case) that follow each
                        // other with the same kind and class are taken as one run: one stamp
                        // load and compare each here, then the chunk below moves their items
                        // with no atomic access in its loop. Each stamp is loaded with Acquire,
                        // so every item counted here is published; should `f` unwind, the rest
                        // stays counted in `run_left` for the next drain, which holds the gate
                        // after this one.
                        // The run's end: the budget, or the segment's last place.
                        let end = ((max - taken) as u64).min(head.following() + 1);
                        let mut place = head;
                        while len < end {
                            // SAFETY: `len < following + 1` of the head, so the place has a
                            // next; this thread holds the consumer gate.
                            place = unsafe { place.next() };
                            if !place.stamp().is_single_after(stamp, len) {
                                break;
                            }
                            len += 1;
                        }
                    }
                    cursor.run_left = len;
                    cursor.run = stamp;
                }
                let run = cursor.run;
                let (kind, class, background) = (run.kind(), run.class(), run.background());
                let n = cursor.run_left.min((max - taken) as u64);
                if n == 0 {
                    break;
                }
                let start = cursor.position;
                let mut chunk = Chunk {
                    cursor: &mut *cursor,
                    start,
                    background,
                    other: run.other(),
                    handed: 0,
                };
                if skip {
                    // Moving past an item of a type without drop glue is taking and dropping it.
                    chunk.handed = n;
                } else {
                    // SAFETY: this thread holds the consumer gate; the positions lie in a run read
                    // as ready (`n <= run_left`, which is at most the limit, at most the
                    // capacity) and each is taken once: the chunk counts it before the item is
                    // handed over.
                    unsafe {
                        self.ring.take_run(start, n, |item| {
                            // Counted before handing over: if `f` unwinds, this item (already
                            // moved into `f`) stays taken and the rest of the run stays queued.
                            chunk.handed += 1;
                            f(Control { kind, class, item });
                        })
                    };
                }
                drop(chunk);
                taken += n as usize;
            }
            drop(batch);
            Drained {
                count: taken,
                first_position,
            }
        })
    }

    /// Makes this node the slot's leader: proposals and config changes are admitted again.
    pub fn set_leader(&self) {
        // Ordering: AcqRel; a flag RMW on the state word (module docs, "Orderings").
        self.core
            .producer
            .state
            .fetch_or(StateWord::LEADER_BIT, Ordering::AcqRel);
    }

    /// Makes this node a follower (a higher term was seen): from the very next admission,
    /// proposals and config changes are refused with `NotLeader`.
    pub fn demote(&self) {
        // Ordering: AcqRel; as in `set_leader`.
        self.core
            .producer
            .state
            .fetch_and(!StateWord::LEADER_BIT, Ordering::AcqRel);
    }

    /// Closes the slot: every later admission is refused with `Closed`. Queued items stay and can
    /// still be drained.
    pub fn close(&self) {
        // Ordering: AcqRel; as in `set_leader`.
        self.core
            .producer
            .state
            .fetch_or(StateWord::CLOSED_BIT, Ordering::AcqRel);
    }

    /// Fails the slot with a host-defined fatal `code`: every later admission is refused with
    /// `Fatal(code)` (unless the slot is closed, which is checked first). The first code wins;
    /// returns false if the slot had already failed.
    pub fn fail(&self, code: u32) -> bool {
        // Ordering: Relaxed; the first-wins record is published by the Release RMW below.
        let recorded = self
            .core
            .cold
            .fatal_code
            .compare_exchange(
                0,
                FATAL_PRESENT | u64::from(code),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        if recorded {
            // Ordering: Release; pairs with the Acquire loads of the state word that see the bit
            // (or a later RMW in its release sequence), so they see the code recorded above.
            self.core
                .producer
                .state
                .fetch_or(StateWord::FATAL_BIT, Ordering::Release);
        }
        recorded
    }

    /// The config change admitted with `ticket` has resolved (applied, failed or abandoned): a
    /// new one may be admitted.
    ///
    /// Only the pending change's ticket clears the pending flag, and only once: a second resolve,
    /// or a ticket of an earlier change (or one this slot never issued), is refused with
    /// [`ConfigChangeError::Stale`] and changes nothing (module docs, "Config change tickets").
    /// Any thread may call this.
    pub fn resolve_config_change(
        &self,
        ticket: ConfigChangeTicket,
    ) -> Result<(), ConfigChangeError> {
        self.core.cold.config_change.redeem(ticket)?;
        // Ordering: AcqRel; a flag RMW on the state word, after the Acquire CAS in `redeem` that
        // read the admitter's ticket, so it follows the admission's set (`config_change.rs`).
        self.core
            .producer
            .state
            .fetch_and(!StateWord::CONFIG_CHANGE_PENDING_BIT, Ordering::AcqRel);
        Ok(())
    }

    fn fatal_code(&self) -> Option<u32> {
        // Ordering: Relaxed; read after an Acquire load of the state word saw the fatal bit.
        let word = self.core.cold.fatal_code.load(Ordering::Relaxed);
        (word & FATAL_PRESENT != 0).then_some(word as u32)
    }

    /// A moment's view of the slot's flags and queue depth.
    ///
    /// The flags and the queue depths are those of one state word, and the depths are exact for
    /// the moment it was loaded: never negative, never wrapped, never above the limits. They are
    /// computed from released counters loaded before the state word (so the word counts at least
    /// what they count; module docs, "Orderings") and checked by loading them again after it. If
    /// the consumer released items in between, the first result would over-estimate the queue by
    /// what passed through during the read, so the read is retried. A retry means the consumer
    /// took a batch meanwhile: this never waits for anyone (lock-free, not wait-free).
    ///
    /// `queued_proposals` subtracts the other kinds' queued items counted after their CAS: never
    /// below the truth at the state-word load, exact when no admission is in flight (module
    /// docs, "Queued proposals").
    pub fn snapshot(&self) -> SlotSnapshot {
        let (p, c) = (&*self.core.producer, &*self.core.consumer);
        let mut released = c.released();
        let (state, committed_other, released) = loop {
            // Ordering: Acquire; pairs with the Release `fetch_add` in `reserve`, so the state
            // word loaded next counts every other-kind item counted here.
            let committed_other = self.core.cold.committed_other.load(Ordering::Acquire);
            // Ordering: Acquire; pairs with the Release RMW in `fail` (the code read below).
            let state = StateWord(p.state.load(Ordering::Acquire));
            let again = c.released();
            if again == released {
                break (state, committed_other, released);
            }
            released = again;
        };
        // Below 2^27, so the casts are exact.
        let queued_total = queued(state.admitted(), released.total);
        let queued_other = committed_other.saturating_sub(released.other);
        let queued_proposals = queued_total.saturating_sub(queued_other);
        SlotSnapshot {
            leader: state.leader(),
            closed: state.closed(),
            fatal: if state.fatal() {
                self.fatal_code()
            } else {
                None
            },
            config_change_pending: state.config_change_pending(),
            queued: queued_total as u32,
            queued_background: queued(state.admitted_background(), released.background) as u32,
            queued_proposals: queued_proposals as u32,
        }
    }

    /// The bytes this slot holds now: its own struct, its shared core and the ring segments
    /// allocated so far (module docs, "Memory"). The ring grows as positions are first used and
    /// never shrinks, so this is a high-water mark. Items' own heap allocations, the observer and
    /// the allocator's overhead are not counted.
    pub fn memory_bytes(&self) -> usize {
        // The core's `Arc` allocation holds two counts beside it.
        let core = std::mem::size_of::<SlotCore>() + 2 * std::mem::size_of::<usize>();
        std::mem::size_of::<Self>() + core + self.ring.allocated_bytes()
    }

    /// This slot's proposal outcome counts, `[class][result]`.
    pub fn counters(&self) -> AdmissionCounts {
        self.core.counts()
    }
}

/// Publishes a drained batch's release when dropped: at the end of `drain_with`, or while
/// unwinding from a panicking callback.
struct DrainBatch<'a> {
    consumer: &'a ConsumerSide,
    _gate: GateGuard<'a>,
    cursor: &'a mut Cursor,
    start: u64,
    start_background: u64,
    start_other: u64,
}

impl Drop for DrainBatch<'_> {
    fn drop(&mut self) {
        // Other kinds and background before the total: a reader loads the total first, so a
        // total it sees comes with the per-kind counts stored before it, and a total older than
        // those only errs toward reporting more queued. Either way a snapshot never pairs a newer
        // total with an older background or other-kind count, which would report more queued
        // background proposals than queued items, or fewer queued proposals than there are
        // (module docs, "Orderings").
        if self.cursor.released_other != self.start_other {
            // Ordering: Release; pairs with the Acquire load in `ConsumerSide::released`.
            self.consumer
                .released_other
                .store(self.cursor.released_other, Ordering::Release);
        }
        if self.cursor.released_background != self.start_background {
            // Ordering: Release; pairs with the Acquire loads in `refresh_view` and
            // `ConsumerSide::released`.
            self.consumer
                .released_background
                .store(self.cursor.released_background, Ordering::Release);
        }
        if self.cursor.position != self.start {
            // Ordering: Release; pairs with the Acquire load in `refresh_view`: the taken items
            // were read before their slots are handed back; and with the Acquire load of the
            // total in `ConsumerSide::released`, which then sees the counts stored above.
            self.consumer
                .released
                .store(self.cursor.position, Ordering::Release);
        }
    }
}

/// Moves the cursor past the items of a chunk that were handed to the consumer's callback, when
/// the chunk ends or the callback unwinds: one counter per item instead of three stores.
struct Chunk<'a> {
    cursor: &'a mut Cursor,
    start: u64,
    /// 1 when the run's items are background proposals, else 0.
    background: u64,
    /// 1 when the run's items are not proposals, else 0.
    other: u64,
    handed: u64,
}

impl Drop for Chunk<'_> {
    fn drop(&mut self) {
        self.cursor.position = self.start + self.handed;
        self.cursor.run_left -= self.handed;
        self.cursor.released_background += self.handed * self.background;
        self.cursor.released_other += self.handed * self.other;
    }
}

impl<T, S: SlotStrategy> Drop for SlotAdmission<T, S> {
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() {
            // Every producer is gone (`&mut self`), so every admitted run is published.
            self.drain_with(usize::MAX, drop);
        }
        self.core.retire();
    }
}

impl<T, S: SlotStrategy> fmt::Debug for SlotAdmission<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotAdmission")
            .field("slot_id", &self.slot_id)
            .field("limits", &self.limits)
            .field("snapshot", &self.snapshot())
            .finish_non_exhaustive()
    }
}
