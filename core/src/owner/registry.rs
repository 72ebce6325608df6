//! [`OwnerRegistry`]: reserve, activate, renew, begin, fence, quiesce, stop, close, sweep.
//!
//! # Hot and cold paths
//!
//! Begin, done and check touch only the owner's hot words (`Entry`'s layout keeps another owner's
//! bytes off their lines): its state word (stage, scope count, uncertain, transport-closed and
//! complete bits, lease sequence) and its lease word, plus a read of the registry's `stopped` flag
//! and this thread's row of the operation gauge. Every other call is cold and takes the registry's
//! one lock (`cold`), which guards the deadline index, the stage counts, minting and `stopped`;
//! stage changes happen only under it, as CASes on the state word so that they serialize with the
//! lock-free begin and done. A close attempt is coordinated under the owner's own event lock; no
//! callback, close or wait ever runs under either lock, and neither lock is taken while the other
//! is held.
//!
//! # Orderings
//!
//! - The state word: every transition is an `AcqRel` CAS (loads before a CAS are `Acquire`).
//!   A done's CAS releases the scope's effects; the CAS that sets `COMPLETE` reads from it (the
//!   RMW chain), and the retirer publishes completion under the event lock, so a quiesce that
//!   returns success happens after every admitted scope's work.
//! - The lease word is stored `Release` *before* the activation's or renewal's CAS bumps the
//!   lease sequence; begin loads the word `Acquire` before the lease, so it sees a lease at
//!   least as new as the word it CASes from. A begin that finds the lease expired fences under
//!   the lock only if the sequence it saw is still current, so a renewal that won the race is
//!   never undone.
//! - `stopped` (a whole word, read by hosts too: `host.rs`) is stored `Release` under the lock
//!   and loaded `Acquire` by begin; a begin that read 0 is ordered before the stop (its scope
//!   is then visible to close, which fences every owner by CAS after setting the flag).
//! - `issued` is stored `Release` after the new entry is in the map; an identity check loads
//!   it `Acquire` before looking the map up, so a connection id at or below it that is not in
//!   the map was issued and retired.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crossbeam_utils::CachePadded;

use super::deadlines::{DeadlineIndex, Slot};
use super::error::{CloseError, OwnerError};
use super::identity::{Claim, Owner};
use super::metrics::{self, Cold as Gauge, Stats, SweepEvent};
use super::operation::Cancellation;
use super::options::{nanos, OwnerOptions};
use super::retirement::RetiredBoot;
use super::snapshot::OwnerSnapshot;
use super::state::{Stage, Word, COMPLETE, STOPPED, TRANSPORT_CLOSED, UNCERTAIN};
use super::uid::Uid;
use super::wait::{Budget, Event, Waitable};
use crate::coord::{Anchor, Fire};
use crate::sync::{Arc, AtomicU64, ConcurrentMap, Mutex, Ordering};

/// The most owners one sweep visits, and the size of a close page.
pub const SWEEP_LIMIT_MAX: usize = 256;
/// The number of owners [`OwnerRegistry::close`] copies out of the map at a time.
pub const CLOSE_PAGE: usize = 256;

/// A host's transport close: seal writes, close the socket, obey the budget (its cancellation
/// and deadline), and never call back into the registry's quiesce or wait for business cleanup.
///
/// It runs at most once per close attempt, synchronously on the thread that called quiesce,
/// outside every lock; a panic is caught and reported as [`OwnerError::Close`].
pub trait CloseTransport: Send + Sync + 'static {
    /// Closes the transport.
    fn close(&self, budget: &Budget) -> Result<(), CloseError>;
}

impl<F> CloseTransport for F
where
    F: Fn(&Budget) -> Result<(), CloseError> + Send + Sync + 'static,
{
    fn close(&self, budget: &Budget) -> Result<(), CloseError> {
        self(budget)
    }
}

/// What one [`OwnerRegistry::sweep`] did before it stopped on an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepError {
    /// Owners visited, the failing one included.
    pub visited: usize,
    /// Why it stopped.
    pub error: OwnerError,
}

/// The outcome of [`OwnerRegistry::sweep_turn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepTurn {
    /// This caller ran the interval's turn and visited this many owners.
    Ran(usize),
    /// Another caller ran (or is running) this interval's turn, or it is not due yet.
    Skipped,
}

/// An owner registry.
pub struct OwnerRegistry {
    pub(crate) core: Arc<Core>,
}

pub(crate) struct Core {
    pub(crate) node_id: u64,
    pub(crate) boot_id: std::sync::Arc<str>,
    capacity: u64,
    pub(crate) max_ops: u64,
    pending_timeout: u64,
    max_lease: u64,
    close_retry: u64,
    pub(crate) clock: std::sync::Arc<dyn crate::clock::Clock>,
    /// The clock's raw reading is the time-stamp counter (`Clock::raw_is_tsc`): begin reads
    /// it inline.
    raw_tsc: bool,
    /// Admission stopped (0 or 1: a whole word, so hosts read it with their own atomics,
    /// `host.rs`); written under `cold`, read lock-free by begin.
    pub(crate) stopped: CachePadded<AtomicU64>,
    /// The last connection id minted; written under `cold`.
    issued: AtomicU64,
    entries: ConcurrentMap<u64, OwnerHandle>,
    cold: Mutex<DeadlineIndex>,
    pub(crate) stats: std::sync::Arc<Stats>,
    sweep_anchor: Anchor,
}

/// A handle to one held owner: what hot callers keep so begin and done skip the map. Cloning
/// shares it; the owner's identity and UID outlive its retirement.
#[derive(Clone)]
pub struct OwnerHandle {
    pub(crate) entry: Arc<Entry>,
}

/// An owner's waits block on the event its entry holds inline; a cancellable wait lends the
/// token a handle, which keeps the entry, and so the event, alive while the token may notify it.
impl Waitable for OwnerHandle {
    type State = Attempts;
    fn event(&self) -> &Event<Attempts> {
        &self.entry.event
    }
}

#[repr(C)]
pub(crate) struct Hot {
    pub(crate) state: AtomicU64,
    /// The lease end (registry-clock nanoseconds); meaningful while active.
    pub(crate) lease_until: AtomicU64,
    /// `lease_until` on the clock's raw scale (`Clock::raw_deadline`), so begin compares a raw
    /// reading instead of scaling one; written with it.
    pub(crate) lease_raw: AtomicU64,
}

/// One held owner, in one allocation with its reference counts (the identity included; only
/// the key's strings live apart, and the UID when it is long; the event the owner's waits block on
/// is inline too).
///
/// # Layout
///
/// The hot words are not padded to a cache line of their own. Instead the fields are laid out
/// (`repr(C)`) so that every 64-byte line holding a hot byte holds bytes of this allocation
/// only: the hot words start at least [`HOT_LEAD`] bytes into the allocation and end at least
/// [`HOT_TAIL`] bytes before its end, which on any allocation aligned to 16 (the system
/// allocator's least) keeps the lines around them inside it. So a busy owner's state word never
/// shares a line with another owner's, and the entry costs no over-aligned allocation (a
/// `CachePadded` entry was 384 bytes through `memalign`; this one is [`ENTRY_BYTES`]).
#[repr(C)]
pub(crate) struct Entry {
    pub(crate) core: Arc<Core>,
    close: Close,
    uid: Uid,
    pub(crate) hot: Hot,
    /// The committed lease receipt; read and written only under the registry's lock.
    revision: AtomicU64,
    /// The owner's slot in the deadline index.
    slot: Slot,
    pub(crate) event: Event<Attempts>,
    owner: Owner,
}

/// Bytes of an entry's allocation before its hot words: the reference counts and the fields
/// ahead of them.
#[cfg(not(wkcore_loom))]
const HOT_LEAD: usize = 2 * std::mem::size_of::<usize>() + std::mem::offset_of!(Entry, hot);
/// Bytes of an entry's allocation after its hot words.
#[cfg(not(wkcore_loom))]
const HOT_TAIL: usize =
    std::mem::size_of::<Entry>() - std::mem::offset_of!(Entry, hot) - std::mem::size_of::<Hot>();
/// An entry's allocation, reference counts included.
#[cfg(not(wkcore_loom))]
const ENTRY_BYTES: usize = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Entry>();

// The line bounds of `Entry`'s layout on a 16-aligned allocation: the line holding the first hot
// byte starts at most 48 bytes before it, the line holding the last ends at most 48 + 15 bytes
// after it. (Loom's `Arc` has other counts; the bound is for the build that ships.)
#[cfg(not(wkcore_loom))]
const _: () = assert!(HOT_LEAD >= 48 && HOT_TAIL >= 64 && ENTRY_BYTES <= 256);

/// An owner's transport close: owned (a closure given to [`OwnerRegistry::reserve`]; a
/// zero-sized one costs no allocation) or shared between owners.
enum Close {
    Owned(Box<dyn CloseTransport>),
    Shared(std::sync::Arc<dyn CloseTransport>),
}

impl Close {
    fn transport(&self) -> &dyn CloseTransport {
        match self {
            Close::Owned(c) => &**c,
            Close::Shared(c) => &**c,
        }
    }
}

/// An owner's close attempts and completion, under its event lock.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    in_flight: bool,
    /// Attempts finished so far.
    finished: u64,
    /// The error of the last finished attempt, if it failed.
    last_error: Option<OwnerError>,
    /// Retirement (or, for an uncertain owner, its final barrier) was published.
    complete: bool,
}

impl std::fmt::Debug for OwnerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerRegistry")
            .field("node_id", &self.core.node_id)
            .field("boot_id", &self.core.boot_id)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OwnerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerHandle")
            .field("owner", &self.entry.owner)
            .field("state", &Word(self.entry.hot.state.load(Ordering::Relaxed)))
            .finish()
    }
}

impl OwnerRegistry {
    /// A registry counting into the global metrics registry.
    pub fn new(options: OwnerOptions) -> Result<Self, OwnerError> {
        Self::with_metrics(options, crate::metrics::global())
    }

    /// A registry counting into `registry`.
    pub fn with_metrics(
        options: OwnerOptions,
        registry: &crate::metrics::Registry,
    ) -> Result<Self, OwnerError> {
        options.validate()?;
        let stats = std::sync::Arc::new(Stats::new());
        metrics::register(registry, &stats);
        Ok(Self {
            core: Arc::new(Core {
                node_id: options.node_id,
                boot_id: options.boot_id.clone(),
                capacity: u64::from(options.capacity),
                max_ops: u64::from(options.max_operations),
                pending_timeout: nanos(options.pending_timeout),
                max_lease: nanos(options.max_lease),
                close_retry: nanos(options.close_retry),
                clock: options.clock.clone(),
                raw_tsc: options.clock.raw_is_tsc(),
                stopped: CachePadded::new(AtomicU64::new(0)),
                issued: AtomicU64::new(0),
                entries: ConcurrentMap::new(),
                cold: Mutex::new(DeadlineIndex::default()),
                stats,
                sweep_anchor: Anchor::unset(),
            }),
        })
    }

    /// The registry clock's reading now: leases and deadlines are nanoseconds on it.
    pub fn now(&self) -> u64 {
        self.core.clock.now_nanos()
    }

    /// This registry's node id.
    pub fn node_id(&self) -> u64 {
        self.core.node_id
    }

    /// This registry's boot id.
    pub fn boot_id(&self) -> &str {
        &self.core.boot_id
    }

    /// Reserves a pending owner for `claim`, minting the next connection id; `close` is its
    /// transport's close. Fails with `Invalid` (a bad claim), `Stopped`, or `Limit` (capacity
    /// reached or ids exhausted). The owner is due `pending_timeout` from now unless activated.
    pub fn reserve(
        &self,
        claim: &Claim,
        close: impl CloseTransport,
    ) -> Result<OwnerHandle, OwnerError> {
        self.reserve_closing(claim, Close::Owned(Box::new(close)))
    }

    /// As [`OwnerRegistry::reserve`], with a shared close.
    pub fn reserve_with(
        &self,
        claim: &Claim,
        close: std::sync::Arc<dyn CloseTransport>,
    ) -> Result<OwnerHandle, OwnerError> {
        self.reserve_closing(claim, Close::Shared(close))
    }

    fn reserve_closing(&self, claim: &Claim, close: Close) -> Result<OwnerHandle, OwnerError> {
        claim.validate().map_err(|_| OwnerError::Invalid)?;
        let core = &self.core;
        let mut deadlines = core.cold.lock();
        // Ordering: Relaxed; `stopped` is written under this lock.
        if core.stopped.load(Ordering::Relaxed) != 0 {
            return Err(OwnerError::Stopped);
        }
        // Ordering: Relaxed; `issued` is written under this lock.
        let issued = core.issued.load(Ordering::Relaxed);
        if core.stats.get(Gauge::Held) >= core.capacity || issued == u64::MAX {
            return Err(OwnerError::Limit);
        }
        let id = issued + 1;
        let now = core.clock.now_nanos();
        let slot = deadlines.insert(id, now.saturating_add(core.pending_timeout));
        let handle = OwnerHandle {
            entry: Arc::new(Entry {
                core: core.clone(),
                close,
                uid: Uid::new(&claim.uid),
                hot: Hot {
                    state: AtomicU64::new(Word::PENDING.0),
                    lease_until: AtomicU64::new(0),
                    lease_raw: AtomicU64::new(0),
                },
                revision: AtomicU64::new(0),
                slot,
                event: Default::default(),
                owner: Owner {
                    key: claim.key.clone(),
                    session_generation: claim.session_generation,
                    owner_generation: claim.owner_generation,
                    node_id: core.node_id,
                    boot_id: core.boot_id.clone(),
                    connection_id: id,
                },
            }),
        };
        if core.entries.insert_if_absent(id, handle.clone()).is_err() {
            // Ids are minted under this lock and never reused.
            unreachable!("connection id {id} minted twice");
        }
        // Ordering: Release; pairs with the Acquire load in `resolve` (module docs).
        core.issued.store(id, Ordering::Release);
        core.stats.add(Gauge::Held, 1);
        core.stats.add(Gauge::Pending, 1);
        core.stats.set(Gauge::Deadlines, deadlines.len() as u64);
        Ok(handle)
    }

    /// Upstream's `entryLocked`: the held owner `owner` names, `None` if it was issued here and
    /// has retired since. `Invalid` for a malformed identity; `Unknown` for another node or boot,
    /// a connection id never issued, or an identity that differs from the held owner's in any
    /// field.
    pub fn resolve(&self, owner: &Owner) -> Result<Option<OwnerHandle>, OwnerError> {
        self.core.resolve(owner)
    }

    /// Activates a pending owner with committed lease receipt `revision`, admitting operations
    /// until `until` (registry-clock nanoseconds). See [`OwnerHandle::activate`].
    pub fn activate(&self, owner: &Owner, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.stopped_check()?;
        match self.core.resolve(owner)? {
            Some(h) => h.activate(revision, until),
            None => Err(OwnerError::Fenced),
        }
    }

    /// Renews an active owner's lease. See [`OwnerHandle::renew`].
    pub fn renew(&self, owner: &Owner, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.stopped_check()?;
        match self.core.resolve(owner)? {
            Some(h) => h.renew(revision, until),
            None => Err(OwnerError::Fenced),
        }
    }

    /// Begins an operation for `owner` by full identity (a map look-up and an exact compare;
    /// hot callers keep the [`OwnerHandle`] instead). The operation owns a handle clone.
    pub fn begin(&self, owner: &Owner) -> Result<super::Operation<'static>, OwnerError> {
        self.stopped_check()?;
        match self.core.resolve(owner)? {
            Some(h) => super::Operation::owned(h),
            None => Err(OwnerError::Fenced),
        }
    }

    /// Fences `owner`: it admits nothing more, its operations' cancellation is raised and it is
    /// due for closing after `close_retry`. No transport call, no wait. A retired owner: `Ok`.
    pub fn fence(&self, owner: &Owner) -> Result<(), OwnerError> {
        match self.core.resolve(owner)? {
            Some(h) => {
                h.fence();
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Proves `owner` isolated: fences it, closes its transport (one attempt shared by every
    /// concurrent caller) and waits until every admitted operation is done. `Ok` also for an
    /// owner issued here and retired since. See [`OwnerHandle::quiesce`].
    pub fn quiesce(&self, owner: &Owner, budget: &Budget) -> Result<(), OwnerError> {
        budget.check()?;
        match self.core.resolve(owner)? {
            Some(h) => h.quiesce(budget),
            None => Ok(()),
        }
    }

    /// Stops admission: reserve, activate, renew and begin fail with `Stopped` from now on, and
    /// every operation's cancellation is raised. Idempotent.
    pub fn stop_admission(&self) {
        {
            let _cold = self.core.cold.lock();
            // Ordering: Release; pairs with the Acquire load in begin (module docs).
            self.core.stopped.store(1, Ordering::Release);
        }
        for h in self.core.entries.values(usize::MAX) {
            // The first cause of an owner's cancellation: a stop, unless it was fenced before.
            h.entry.update(|w| {
                (w.stage() != Stage::Closing && !w.has(STOPPED)).then(|| w.with(STOPPED))
            });
            h.entry.event.notify();
        }
    }

    /// Stops admission, then quiesces every held owner, [`CLOSE_PAGE`] at a time, until none is
    /// left; returns the first error (an uncertain owner makes this `Unknown` for good). Admission
    /// is stopped even when the budget is already spent.
    pub fn close(&self, budget: &Budget) -> Result<(), OwnerError> {
        self.stop_admission();
        loop {
            budget.check()?;
            let page = self.core.entries.values(CLOSE_PAGE);
            if page.is_empty() {
                return Ok(());
            }
            for h in page {
                h.quiesce(budget)?;
            }
        }
    }

    /// Fences, reschedules and quiesces due owners, earliest deadline first, visiting at most
    /// `limit` (1..=256). Each visited owner is rescheduled to now + `close_retry` *before* it
    /// is closed, so an owner whose close fails yields to the other due owners. Stops at the
    /// first error. Costs O(k log n) for k visited of n held.
    pub fn sweep(&self, limit: usize, budget: &Budget) -> Result<usize, SweepError> {
        if !(1..=SWEEP_LIMIT_MAX).contains(&limit) {
            return Err(SweepError {
                visited: 0,
                error: OwnerError::Invalid,
            });
        }
        let stats = &self.core.stats;
        stats.sweep(SweepEvent::Turns, 1);
        let result = self.core.sweep(limit, budget);
        if result.is_err() {
            stats.sweep(SweepEvent::Failures, 1);
        }
        result
    }

    /// One sweep turn per `interval` however many host threads call this: the turn is claimed
    /// through an anchor on the registry clock (the first call anchors and runs), and only the
    /// claimant sweeps.
    pub fn sweep_turn(
        &self,
        interval: std::time::Duration,
        limit: usize,
        budget: &Budget,
    ) -> Result<SweepTurn, SweepError> {
        if !(1..=SWEEP_LIMIT_MAX).contains(&limit) {
            return Err(SweepError {
                visited: 0,
                error: OwnerError::Invalid,
            });
        }
        let now = self.now();
        match self.core.sweep_anchor.try_fire(now, nanos(interval)) {
            Fire::Fired { .. } | Fire::AnchoredFirstSeen => {
                self.sweep(limit, budget).map(SweepTurn::Ran)
            }
            Fire::NotDue { .. } | Fire::Lost => Ok(SweepTurn::Skipped),
        }
    }

    /// The counts, in O(1). The stage counts, held, deadlines and stopped are one moment's
    /// (read under the lock); operations is the saturating per-thread gauge, exact whenever no
    /// begin or done is in flight.
    pub fn snapshot(&self) -> OwnerSnapshot {
        let s = &self.core.stats;
        let deadlines = self.core.cold.lock();
        OwnerSnapshot {
            held: s.get(Gauge::Held),
            pending: s.get(Gauge::Pending),
            active: s.get(Gauge::Active),
            closing: s.get(Gauge::Closing),
            operations: s.ops.get(),
            deadlines: deadlines.len() as u64,
            uncertain: s.get(Gauge::Uncertain),
            // Ordering: Relaxed; written under this lock.
            stopped: self.core.stopped.load(Ordering::Relaxed) != 0,
        }
    }

    /// The sweep counts so far: turns, visited, failures.
    pub fn sweep_counts(&self) -> [u64; 3] {
        SweepEvent::ALL.map(|e| self.core.stats.sweep_count(e))
    }

    /// The proof that this boot holds nothing more: needs admission stopped and no owner held,
    /// else `Unknown`.
    pub fn retirement(&self) -> Result<RetiredBoot, OwnerError> {
        let core = &self.core;
        let _cold = core.cold.lock();
        // Ordering: Relaxed; both written under this lock.
        if core.stopped.load(Ordering::Relaxed) == 0 || core.stats.get(Gauge::Held) != 0 {
            return Err(OwnerError::Unknown);
        }
        Ok(RetiredBoot {
            node_id: core.node_id,
            boot_id: core.boot_id.clone(),
            last_connection_id: core.issued.load(Ordering::Relaxed),
        })
    }

    fn stopped_check(&self) -> Result<(), OwnerError> {
        if self.core.is_stopped() {
            Err(OwnerError::Stopped)
        } else {
            Ok(())
        }
    }
}

impl Drop for OwnerRegistry {
    fn drop(&mut self) {
        // Entries point back at the core; dropping the registry breaks the cycle (handles the
        // host still holds keep their owner readable, and admit nothing: admission is stopped).
        self.stop_admission();
        for h in self.core.entries.values(usize::MAX) {
            self.core.entries.remove(&h.entry.owner.connection_id);
        }
        self.core.stats.retire();
    }
}

impl Core {
    /// The clock's raw reading (`Clock::raw_now`), inline when it is the counter.
    #[inline]
    fn raw_now(&self) -> u64 {
        if self.raw_tsc {
            crate::clock::read_tsc()
        } else {
            self.clock.raw_now()
        }
    }

    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `stop_admission` (module docs).
        self.stopped.load(Ordering::Acquire) != 0
    }

    fn resolve(&self, owner: &Owner) -> Result<Option<OwnerHandle>, OwnerError> {
        owner.validate().map_err(|_| OwnerError::Invalid)?;
        // Ordering: Acquire; pairs with the Release store in `reserve_with` (module docs).
        if owner.node_id != self.node_id
            || *owner.boot_id != *self.boot_id
            || owner.connection_id > self.issued.load(Ordering::Acquire)
        {
            return Err(OwnerError::Unknown);
        }
        match self.entries.get_cloned(&owner.connection_id) {
            Some(h) if h.entry.owner == *owner => Ok(Some(h)),
            Some(_) => Err(OwnerError::Unknown),
            None => Ok(None),
        }
    }

    fn sweep(&self, limit: usize, budget: &Budget) -> Result<usize, SweepError> {
        let mut visited = 0;
        while visited < limit {
            budget
                .check()
                .map_err(|error| SweepError { visited, error })?;
            let (handle, fenced) = {
                let mut deadlines = self.cold.lock();
                let now = self.clock.now_nanos();
                let Some((deadline, id, slot)) = deadlines.peek() else {
                    break;
                };
                if deadline > now {
                    break;
                }
                let Some(handle) = self.entries.get_cloned(&id) else {
                    // Every heap entry is a held owner; a miss means a retirement is between
                    // its map and heap removal — skip it by its own removal.
                    deadlines.remove(slot, id);
                    continue;
                };
                let fenced = handle.entry.fence_locked(&mut deadlines, now);
                deadlines.schedule(slot, id, now.saturating_add(self.close_retry));
                (handle, fenced)
            };
            if fenced {
                // Waiters wait on the stage; an owner that was closing already changed nothing.
                handle.entry.event.notify();
            }
            visited += 1;
            self.stats.sweep(SweepEvent::Visited, 1);
            handle
                .quiesce(budget)
                .map_err(|error| SweepError { visited, error })?;
        }
        Ok(visited)
    }
}

impl Entry {
    #[inline]
    pub(crate) fn word(&self) -> Word {
        // Ordering: Acquire (module docs).
        Word(self.hot.state.load(Ordering::Acquire))
    }

    #[inline]
    pub(crate) fn cas(&self, current: Word, new: Word) -> Result<Word, Word> {
        // Ordering: AcqRel on success, Acquire on failure (module docs).
        self.hot
            .state
            .compare_exchange(current.0, new.0, Ordering::AcqRel, Ordering::Acquire)
            .map(Word)
            .map_err(Word)
    }

    /// Applies `f` to the word until the CAS succeeds or `f` declines; returns (old, new).
    pub(crate) fn update(&self, mut f: impl FnMut(Word) -> Option<Word>) -> Option<(Word, Word)> {
        let mut w = self.word();
        loop {
            let new = f(w)?;
            match self.cas(w, new) {
                Ok(_) => return Some((w, new)),
                Err(actual) => w = actual,
            }
        }
    }

    fn id(&self) -> u64 {
        self.owner.connection_id
    }

    /// Upstream's `fenceLocked`: closing from pending or active, counts moved, due after
    /// `close_retry`. Caller holds the registry lock and notifies the event afterwards.
    /// True if this call fenced.
    pub(crate) fn fence_locked(&self, deadlines: &mut DeadlineIndex, now: u64) -> bool {
        let Some((old, _)) =
            self.update(|w| (w.stage() != Stage::Closing).then(|| w.with_stage(Stage::Closing)))
        else {
            return false;
        };
        let stats = &self.core.stats;
        stats.add(
            if old.stage() == Stage::Pending {
                Gauge::Pending
            } else {
                Gauge::Active
            },
            -1,
        );
        stats.add(Gauge::Closing, 1);
        deadlines.schedule(
            self.slot,
            self.id(),
            now.saturating_add(self.core.close_retry),
        );
        true
    }

    /// Fences under the lock and wakes waiters. Closing is the last stage (no transition leaves
    /// it), so an owner seen closing needs neither the lock nor a wake-up.
    pub(crate) fn fence(&self) {
        if self.word().is_closing() {
            return;
        }
        let fenced = {
            let mut deadlines = self.core.cold.lock();
            self.fence_locked(&mut deadlines, self.core.clock.now_nanos())
        };
        if fenced {
            self.event.notify();
        }
    }

    /// The lease's end is reached on the nanosecond clock (begin's slow check).
    #[cold]
    fn lease_expired(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `install_lease`.
        let lease = self.hot.lease_until.load(Ordering::Acquire);
        self.core.clock.now_nanos() >= lease
    }

    /// Begin (and check) found the lease expired in word `seen`: fences unless a renewal moved
    /// the lease since. `Err(Fenced)` when fenced (or already closing), `Ok` to retry.
    #[cold]
    pub(crate) fn expire(&self, seen: Word) -> Result<(), OwnerError> {
        let fenced = {
            let mut deadlines = self.core.cold.lock();
            let w = self.word();
            if w.stage() == Stage::Active && w.lease_seq() != seen.lease_seq() {
                return Ok(());
            }
            self.fence_locked(&mut deadlines, self.core.clock.now_nanos())
        };
        if fenced {
            self.event.notify();
        }
        Err(OwnerError::Fenced)
    }

    /// Admits one scope (module docs: the hot path).
    #[inline]
    pub(crate) fn begin_scope(&self) -> Result<(), OwnerError> {
        let core = &*self.core;
        if core.is_stopped() {
            return Err(OwnerError::Stopped);
        }
        let mut w = self.word();
        loop {
            if !w.is_active() {
                return Err(OwnerError::Fenced);
            }
            // Ordering: Acquire; pairs with the Release store of the raw lease in
            // `install_lease`. A raw reading below it is a reading before the lease's end
            // (`Clock::raw_deadline`); at or above it, the nanosecond reading decides.
            let raw_lease = self.hot.lease_raw.load(Ordering::Acquire);
            if core.raw_now() >= raw_lease && self.lease_expired() {
                self.expire(w)?;
                w = self.word();
                continue;
            }
            let ops = w.ops();
            if ops >= core.max_ops {
                return Err(OwnerError::Limit);
            }
            match self.cas(w, w.with_ops(ops + 1)) {
                Ok(_) => {
                    core.stats.ops.begun();
                    return Ok(());
                }
                Err(actual) => w = actual,
            }
        }
    }

    /// Ends one scope; the caller's once-only done flag guarantees one call per begin. Returns
    /// the word the ending CAS replaced.
    #[inline]
    pub(crate) fn end_scope(&self) -> Word {
        match self.try_end_scope() {
            Some(old) => old,
            None => {
                debug_assert!(false, "a scope ended twice");
                self.word()
            }
        }
    }

    /// As [`Entry::end_scope`], but `None` (changing nothing) when no scope is admitted: the
    /// inline protocol's slow path uses it, where the host's count cannot be trusted
    /// (`host.rs`).
    #[inline]
    pub(crate) fn try_end_scope(&self) -> Option<Word> {
        let (old, new) = self.update(|w| {
            let ops = w.ops();
            (ops > 0).then(|| w.with_ops(ops - 1).settle())
        })?;
        self.core.stats.ops.ended();
        if new.has(COMPLETE) && !old.has(COMPLETE) {
            self.retire(new);
        }
        Some(old)
    }

    /// Check: the lease still holds and the owner still admits.
    pub(crate) fn check_scope(&self, op_done: bool) -> Result<(), OwnerError> {
        if op_done {
            return Err(OwnerError::Fenced);
        }
        if self.cancelled() {
            return Err(OwnerError::Canceled);
        }
        let mut w = self.word();
        loop {
            if self.core.is_stopped() || w.stage() != Stage::Active {
                return Err(OwnerError::Fenced);
            }
            // Ordering: Acquire; as in `begin_scope`.
            let lease = self.hot.lease_until.load(Ordering::Acquire);
            if self.core.clock.now_nanos() < lease {
                return Ok(());
            }
            self.expire(w)?;
            w = self.word();
        }
    }

    /// True once the owner is fenced or admission stopped: an operation's cancellation.
    #[inline]
    pub(crate) fn cancelled(&self) -> bool {
        self.word().stage() == Stage::Closing || self.core.is_stopped()
    }

    /// The first cause of the owner's cancellation, if raised: a stop that reached the owner
    /// before any fence (its `STOPPED` bit), else a fence, else a stop still on its way to the
    /// owner's word.
    #[inline]
    pub(crate) fn cause(&self) -> Option<Cancellation> {
        self.cause_in(self.word())
    }

    /// [`Entry::cause`] as of word `w`.
    #[inline]
    pub(crate) fn cause_in(&self, w: Word) -> Option<Cancellation> {
        if w.has(STOPPED) {
            Some(Cancellation::Stopped)
        } else if w.is_closing() {
            Some(Cancellation::Fenced)
        } else if self.core.is_stopped() {
            Some(Cancellation::Stopped)
        } else {
            None
        }
    }

    /// Marks the owner uncertain (for good) and fences it. `Fenced` when the calling operation
    /// is done or the owner already retired.
    pub(crate) fn mark_uncertain(&self, op_done: bool) -> Result<(), OwnerError> {
        if op_done {
            return Err(OwnerError::Fenced);
        }
        let changed_stage = {
            let mut deadlines = self.core.cold.lock();
            let Some((old, _)) = self.update(|w| {
                (!w.has(COMPLETE)).then(|| w.with(UNCERTAIN).with_stage(Stage::Closing))
            }) else {
                return Err(OwnerError::Fenced);
            };
            let stats = &self.core.stats;
            if !old.has(UNCERTAIN) {
                stats.add(Gauge::Uncertain, 1);
            }
            let changed = old.stage() != Stage::Closing;
            if changed {
                stats.add(
                    if old.stage() == Stage::Pending {
                        Gauge::Pending
                    } else {
                        Gauge::Active
                    },
                    -1,
                );
                stats.add(Gauge::Closing, 1);
                let now = self.core.clock.now_nanos();
                deadlines.schedule(
                    self.slot,
                    self.id(),
                    now.saturating_add(self.core.close_retry),
                );
            }
            changed
        };
        if changed_stage {
            self.event.notify();
        }
        Ok(())
    }

    /// Upstream's `installLease` for activate (`renew == false`) and renew.
    fn install_lease(&self, revision: u64, until: u64, renew: bool) -> Result<(), OwnerError> {
        let core = &*self.core;
        if core.is_stopped() {
            return Err(OwnerError::Stopped);
        }
        let mut deadlines = core.cold.lock();
        let now = core.clock.now_nanos();
        let Some(deadline) = deadlines.deadline(self.slot, self.id()) else {
            // Retired: absent.
            return Err(OwnerError::Fenced);
        };
        let w = self.word();
        if w.stage() == Stage::Closing || now >= deadline {
            let fenced = self.fence_locked(&mut deadlines, now);
            drop(deadlines);
            if fenced {
                self.event.notify();
            }
            return Err(OwnerError::Fenced);
        }
        if revision == 0 || until <= now || until - now > core.max_lease {
            return Err(OwnerError::Invalid);
        }
        // Ordering: Relaxed; revision is read and written only under the registry lock.
        let current = self.revision.load(Ordering::Relaxed);
        // Ordering: Relaxed; written only under this lock (by us), so this reads our own value.
        let lease = self.hot.lease_until.load(Ordering::Relaxed);
        if w.stage() == Stage::Active && current == revision && lease == until {
            return Ok(());
        }
        let allowed = if renew {
            w.stage() == Stage::Active && revision > current
        } else {
            w.stage() == Stage::Pending
        };
        if !allowed {
            return Err(OwnerError::Fenced);
        }
        // Ordering: Release; pairs with begin's Acquire load (module docs), published by the
        // CAS below.
        self.hot.lease_until.store(until, Ordering::Release);
        // Ordering: Release; pairs with begin's Acquire load of the raw lease, as the store
        // above (each of the two words is at least as new as the state word begin CASes from).
        self.hot
            .lease_raw
            .store(core.clock.raw_deadline(until), Ordering::Release);
        self.update(|w| Some(w.with_stage(Stage::Active).with_next_lease()));
        // Ordering: Relaxed; under the registry lock.
        self.revision.store(revision, Ordering::Relaxed);
        if !renew {
            core.stats.add(Gauge::Pending, -1);
            core.stats.add(Gauge::Active, 1);
        }
        deadlines.schedule(self.slot, self.id(), until);
        Ok(())
    }

    /// Retirement, by whichever of done and quiesce set `COMPLETE` (word `settled`).
    fn retire(&self, settled: Word) {
        self.unlist(settled);
        self.event.publish(|a| a.complete = true);
    }

    /// Retirement's registry half: a settled owner that is not uncertain leaves the map, the
    /// deadline index and the counts (the caller then publishes completion).
    fn unlist(&self, settled: Word) {
        if settled.has(UNCERTAIN) {
            return;
        }
        let core = &*self.core;
        let removed = {
            let mut deadlines = core.cold.lock();
            // Connection ids are minted once per registry, so the entry under this owner's id
            // is this owner's; it is absent only once the registry's drop emptied the map.
            let removed = core.entries.remove(&self.id());
            if let Some(h) = &removed {
                debug_assert!(std::ptr::eq(&*h.entry, self));
                deadlines.remove(self.slot, self.id());
                core.stats.add(Gauge::Closing, -1);
                core.stats.add(Gauge::Held, -1);
                core.stats.set(Gauge::Deadlines, deadlines.len() as u64);
            }
            removed
        };
        // The map's handle is dropped outside the lock.
        drop(removed);
    }
}

impl OwnerHandle {
    /// The owner's identity (immutable; also after retirement).
    pub fn owner(&self) -> &Owner {
        &self.entry.owner
    }

    /// The UID reserved with the owner.
    pub fn uid(&self) -> &str {
        self.entry.uid.as_str()
    }

    /// The owner's connection id.
    pub fn connection_id(&self) -> u64 {
        self.entry.owner.connection_id
    }

    /// The owner's stage now.
    pub fn stage(&self) -> Stage {
        self.entry.word().stage()
    }

    /// True once the owner is marked uncertain (never cleared).
    pub fn is_uncertain(&self) -> bool {
        self.entry.word().has(UNCERTAIN)
    }

    /// True once retired (no longer held), or, for an uncertain owner, once it reached its final
    /// barrier.
    pub fn is_complete(&self) -> bool {
        self.entry.word().has(COMPLETE)
    }

    /// Activates the pending owner with committed lease receipt `revision`, admitting
    /// operations until `until` (registry-clock nanoseconds). In upstream's order: `Stopped`; an
    /// owner already closing or past its deadline is fenced here (`Fenced`); `Invalid` for
    /// revision 0, `until` not after now or more than `max_lease` ahead; an exact retry of the
    /// installed lease is `Ok`; `Fenced` unless pending.
    pub fn activate(&self, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.entry.install_lease(revision, until, false)
    }

    /// Renews the active owner's lease: as [`OwnerHandle::activate`], but requires an active
    /// owner and a higher `revision` (else `Fenced`, without fencing). Moves the owner's
    /// deadline entry in place.
    pub fn renew(&self, revision: u64, until: u64) -> Result<(), OwnerError> {
        self.entry.install_lease(revision, until, true)
    }

    /// Begins an operation scope: `Stopped`, `Fenced` (not active, or the lease expired — which
    /// fences the owner here), or `Limit` at `max_operations` (no queueing). Lock-free, no
    /// allocation.
    #[inline]
    pub fn begin(&self) -> Result<super::Operation<'_>, OwnerError> {
        self.entry.begin_scope()?;
        Ok(super::Operation::borrowed(self))
    }

    /// As [`OwnerHandle::begin`], for an operation that owns a clone of this handle (one
    /// reference-count increment): it borrows nothing, so it can outlive the handle it was begun
    /// from or move to another thread freely.
    pub fn begin_owned(&self) -> Result<super::Operation<'static>, OwnerError> {
        super::Operation::owned(self.clone())
    }

    /// Begins a scope that the caller ends with [`OwnerHandle::end_detached`], keeping its own
    /// once-only done flag (the C ABI keeps it in the host's operation record).
    #[inline]
    pub fn begin_detached(&self) -> Result<(), OwnerError> {
        self.entry.begin_scope()
    }

    /// Ends one scope begun with [`OwnerHandle::begin_detached`]. Calling it more often than
    /// begin succeeded breaks the owner's accounting; the caller's done flag prevents that.
    #[inline]
    pub fn end_detached(&self) {
        self.entry.end_scope();
    }

    /// Check for a detached scope whose done flag is `op_done`. See [`super::Operation::check`].
    pub fn check_detached(&self, op_done: bool) -> Result<(), OwnerError> {
        self.entry.check_scope(op_done)
    }

    /// Mark-uncertain for a detached scope. See [`super::Operation::mark_uncertain`].
    pub fn mark_uncertain_detached(&self, op_done: bool) -> Result<(), OwnerError> {
        self.entry.mark_uncertain(op_done)
    }

    /// True once the owner's operations are cancelled: fenced, or admission stopped.
    pub fn is_cancelled(&self) -> bool {
        self.entry.cancelled()
    }

    /// Fences the owner (no transport call, no wait); a retired owner is left as it is.
    pub fn fence(&self) {
        self.entry.fence();
    }

    /// Proves the owner isolated: fences it; then, unless its transport is already closed,
    /// joins the close attempt in flight or runs one (the close callback, on this thread); then
    /// waits until every admitted scope is done. A failed close keeps the owner fenced, holding
    /// capacity, due again after `close_retry`, and returns `Close` (or the callback's
    /// `Canceled` / `DeadlineExceeded`). An uncertain owner answers `Unknown`. A spent budget
    /// returns `Canceled` or `DeadlineExceeded` and leaves the attempt and the owner as they are.
    ///
    /// A wait that carries a cancellation token lends the token this handle while it waits.
    pub fn quiesce(&self, budget: &Budget) -> Result<(), OwnerError> {
        let entry = &*self.entry;
        budget.check()?;
        let w = entry.word();
        if w.has(COMPLETE) && !w.has(UNCERTAIN) {
            return self.await_quiescence(budget);
        }
        entry.fence();
        let mut attempts = entry.event.lock();
        if entry.word().has(TRANSPORT_CLOSED) {
            drop(attempts);
            return self.await_quiescence(budget);
        }
        if attempts.in_flight {
            let target = attempts.finished + 1;
            drop(attempts);
            let mut failed = None;
            budget.wait_on(self, |a| {
                if a.finished >= target {
                    failed = a.last_error;
                    true
                } else {
                    false
                }
            })?;
            return match failed {
                Some(e) => Err(e),
                None => self.await_quiescence(budget),
            };
        }
        attempts.in_flight = true;
        drop(attempts);

        let close = entry.close.transport();
        let result = match catch_unwind(AssertUnwindSafe(|| close.close(budget))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(OwnerError::from(e)),
            Err(_panic) => Err(OwnerError::Close),
        };
        let mut retire = None;
        match result {
            Ok(()) => {
                let (old, new) = entry
                    .update(|w| Some(w.with(TRANSPORT_CLOSED).settle()))
                    .unwrap_or((w, w));
                if new.has(COMPLETE) && !old.has(COMPLETE) {
                    retire = Some(new);
                }
            }
            Err(_) => {
                let mut deadlines = entry.core.cold.lock();
                let now = entry.core.clock.now_nanos();
                deadlines.schedule(
                    entry.slot,
                    entry.id(),
                    now.saturating_add(entry.core.close_retry),
                );
            }
        }
        // A close that retired the owner publishes the attempt and the completion in one
        // section of the event lock.
        if let Some(settled) = retire {
            entry.unlist(settled);
        }
        entry.event.publish(|a| {
            a.in_flight = false;
            a.finished += 1;
            a.last_error = result.err();
            a.complete |= retire.is_some();
        });
        result?;
        self.await_quiescence(budget)
    }

    /// Waits for retirement (or an uncertain owner's barrier); `Unknown` for an uncertain one.
    fn await_quiescence(&self, budget: &Budget) -> Result<(), OwnerError> {
        budget.wait_on(self, |a| a.complete)?;
        if self.entry.word().has(UNCERTAIN) {
            Err(OwnerError::Unknown)
        } else {
            Ok(())
        }
    }

    /// Waits, within `budget`, until the owner's operations are cancelled — the owner fenced or
    /// admission stopped — and returns the first cause. Fences and stops wake every waiter.
    pub fn wait_cancelled(&self, budget: &Budget) -> Result<Cancellation, OwnerError> {
        let entry = &*self.entry;
        let mut cause = None;
        budget.wait_on(self, |_| {
            cause = entry.cause();
            cause.is_some()
        })?;
        Ok(cause.unwrap_or(Cancellation::Fenced))
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::owner::{Claim, OwnerKey, OwnerOptions};

    /// A clock whose raw scale is not nanoseconds (`3t + 5`), with an exact or a low (by 100
    /// ns) raw deadline: begin must decide exactly as on nanoseconds either way.
    struct Scaled {
        nanos: AtomicU64,
        low: bool,
    }

    impl Scaled {
        fn set(&self, nanos: u64) {
            // Ordering: Relaxed; the test clock publishes nothing else.
            self.nanos.store(nanos, Ordering::Relaxed);
        }
    }

    impl Clock for Scaled {
        fn now_nanos(&self) -> u64 {
            // Ordering: Relaxed, as in `set`.
            self.nanos.load(Ordering::Relaxed)
        }
        fn raw_now(&self) -> u64 {
            self.now_nanos() * 3 + 5
        }
        fn raw_deadline(&self, nanos: u64) -> u64 {
            let exact = nanos * 3 + 5;
            if self.low {
                exact - 300
            } else {
                exact
            }
        }
    }

    fn registry(low: bool) -> (OwnerRegistry, std::sync::Arc<Scaled>) {
        let clock = std::sync::Arc::new(Scaled {
            nanos: AtomicU64::new(1_000),
            low,
        });
        let options = OwnerOptions {
            node_id: 1,
            boot_id: "boot".into(),
            capacity: 4,
            max_operations: 4,
            pending_timeout: std::time::Duration::from_secs(5),
            max_lease: std::time::Duration::from_secs(60),
            close_retry: std::time::Duration::from_secs(1),
            clock: clock.clone(),
        };
        let metrics = crate::metrics::Registry::new();
        (
            OwnerRegistry::with_metrics(options, &metrics).unwrap(),
            clock,
        )
    }

    fn claim() -> Claim {
        Claim {
            key: OwnerKey::new("ns", "c"),
            uid: "u".into(),
            session_generation: 1,
            owner_generation: 1,
        }
    }

    #[test]
    fn begin_decides_on_the_lease_whatever_the_raw_scale() {
        for low in [false, true] {
            let (r, clock) = registry(low);
            let h = r.reserve(&claim(), |_: &Budget| Ok(())).unwrap();
            h.activate(1, 1_500).unwrap();
            h.begin().unwrap().done();
            clock.set(1_450);
            h.begin()
                .expect("inside the lease, below a low raw deadline")
                .done();
            // A renewal moves the raw deadline with the lease.
            h.renew(2, 1_900).unwrap();
            clock.set(1_600);
            h.begin().expect("renewed").done();
            clock.set(1_899);
            h.begin().expect("the last nanosecond of the lease").done();
            clock.set(1_900);
            assert_eq!(h.begin().err(), Some(OwnerError::Fenced), "low: {low}");
            assert_eq!(h.stage(), Stage::Closing, "an expired lease fences");
        }
    }

    #[test]
    fn the_production_clock_admits_inside_the_lease_and_fences_after_it() {
        let metrics = crate::metrics::Registry::new();
        let r =
            OwnerRegistry::with_metrics(OwnerOptions::production(1, "boot", 4), &metrics).unwrap();
        let h = r.reserve(&claim(), |_: &Budget| Ok(())).unwrap();
        h.activate(1, r.now() + 60_000_000_000).unwrap();
        for _ in 0..1_000 {
            h.begin().unwrap().done();
        }
        let h2 = r
            .reserve(
                &Claim {
                    key: OwnerKey::new("ns", "d"),
                    ..claim()
                },
                |_: &Budget| Ok(()),
            )
            .unwrap();
        // A lease of 10 ms on the real clock. A busy machine may deschedule this thread past it
        // before `activate` reads the clock: then the lease is refused as already over and the
        // owner stays pending (no wall-clock race decides whether the test passes).
        match h2.activate(1, r.now() + 10_000_000) {
            Ok(()) => {
                let mut admitted = 0u64;
                while h2.begin().map(|op| op.done()).is_ok() {
                    admitted += 1;
                    assert!(admitted < 1 << 40, "the lease never ended");
                }
                assert_eq!(h2.stage(), Stage::Closing);
            }
            Err(OwnerError::Invalid) => {
                assert_eq!(h2.stage(), Stage::Pending);
                assert!(h2.begin().is_err(), "a pending owner admits nothing");
            }
            Err(e) => panic!("activate: {e:?}"),
        }
    }

    #[test]
    fn a_cancellable_wait_on_an_owner_borrows_its_handle_only_while_it_waits() {
        use crate::owner::{CancelToken, Cancellation};
        let (r, clock) = registry(false);
        let h = r.reserve(&claim(), |_: &Budget| Ok(())).unwrap();
        h.activate(1, 1_500).unwrap();
        let held = Arc::strong_count(&h.entry);

        // Ended by its token: the wait answers `Canceled` and the token keeps nothing.
        let token = CancelToken::new();
        let budget = Budget::unbounded().with_cancel(token.clone());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| h.wait_cancelled(&budget));
            token.cancel();
            assert_eq!(waiter.join().unwrap(), Err(OwnerError::Canceled));
        });
        assert_eq!(token.watching(), 0);
        assert_eq!(Arc::strong_count(&h.entry), held);

        // Ended by the owner's fence, the token never raised: the wait gives its handle back.
        let token = CancelToken::new();
        let budget = Budget::unbounded().with_cancel(token.clone());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| h.wait_cancelled(&budget));
            clock.set(1_600);
            assert_eq!(h.begin().err(), Some(OwnerError::Fenced));
            assert_eq!(waiter.join().unwrap(), Ok(Cancellation::Fenced));
        });
        assert_eq!(token.watching(), 0);
        assert_eq!(Arc::strong_count(&h.entry), held);
    }
}
