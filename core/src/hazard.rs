//! Hazard slots with asymmetric barriers: how a reader holds an `Arc`-managed value published
//! in an atomic pointer without writing a shared cache line and without a read-modify-write,
//! while writers replace the value and the replaced ones are freed once no reader holds them.
//!
//! # Shape
//!
//! A [`Domain`] has one row of [`SLOTS`] hazard slots per thread row ([`crate::sync::thread_row`]):
//! a row belongs to one live thread, which is the only one to *fill* its slots. A reader takes a
//! free slot of its row, stores the pointer it loaded there (a plain store), runs the domain's
//! *light* barrier and loads the pointer again; if both loads agree, the value is protected until
//! the slot is cleared (one `Release` store, by whoever drops the [`Protected`] value). A thread
//! without a row of its own (more than `THREAD_ROWS - 1` threads, a thread that is exiting) or
//! with every slot of its row in use takes one of the domain's shared slots with a CAS, just
//! long enough to take a reference count of its own, and holds that instead.
//!
//! A writer that replaces a value [retires](Domain::retire) the replaced `Arc`: it goes on the
//! domain's list, and a [`Domain::reclaim`] (run when the list's weight passes a bound, and by
//! whoever asks) takes the list, runs the *heavy* barrier, reads every slot, drops the retired
//! values no slot names and puts the others back.
//!
//! # The barriers
//!
//! On Linux with `membarrier(2)`'s private expedited command, the light barrier is a compiler
//! fence and the heavy one the system call, which makes every running thread of the process
//! execute a full memory barrier: for each reader, either its slot store is visible to the
//! reclaimer's scan, or its second pointer load comes after the barrier and sees the replacement
//! (the retire, and so the replacing CAS, happens before the reclaimer's barrier). Elsewhere,
//! or when the command is refused, both are `SeqCst` fences (a fence per protected load, still
//! fewer than the two read-modify-writes of arc-swap's debt slots). Under loom, both are an
//! `AcqRel` read-modify-write of one word of the domain: either the reader's comes first in that
//! word's order (and the reclaimer acquires the slot store), or the reclaimer's does (and the
//! reader acquires the replacement).
//!
//! # Orderings
//!
//! - A value is published by the writer's `Release` (or `AcqRel`) CAS of the pointer and read
//!   through the reader's `Acquire` loads of it.
//! - Every store to a slot is `Release`, paired with the reclaimer's `Acquire` loads of the
//!   slots: a reader's reads of a value happen before the drop of that value once the reclaimer
//!   saw the slot cleared *or filled again* (a later `Relaxed` fill would not carry the reads
//!   made before the clear: the loom model `a_row_reader_never_reads_a_freed_value` fails with
//!   it). The barriers (above) order the fill against the replacement; on x86 a `Release`
//!   store is a plain store.
//! - The retired list's push is a `Release` CAS, paired with the reclaimer's `Acquire` swap,
//!   which also carries the happens-before from the replacing CAS to the heavy barrier.
//! - A shared slot's claim is an `Acquire` CAS; as a read-modify-write it continues the
//!   release sequence of the previous holder's clear, so a reclaimer that reads the claim
//!   still sees that holder's reads.
//! - The `reclaiming` flag's `Acquire` CAS pairs with its `Release` store: one reclaimer at a
//!   time, each seeing the list as the previous left it.
//!
//! ABA is harmless: a reader whose second load sees an address reused by a newer value at the
//! same place published its slot before that load, so it protects the value it now reads.
#![allow(unreachable_pub)] // `pub` for the loom models (the module is crate-private otherwise)

use crate::sync::Arc;
use std::mem::ManuallyDrop;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Ordering, THREAD_ROWS};

/// Hazard slots per thread row: how many protected values one thread holds at once before it
/// falls back to reference counts (one under loom, so that models reach the fallback).
pub const SLOTS: usize = if cfg!(wkcore_loom) { 1 } else { 4 };
/// Shared slots per domain, held only to take a reference count (two under loom).
pub const SHARED_SLOTS: usize = if cfg!(wkcore_loom) { 2 } else { 16 };
/// The weight a retired value adds to the list beside its own: 64 retirements are one bound.
const RETIRE_WEIGHT: u64 = 16 << 10;
/// The list weight past which a retire runs a reclaim: at most about this many bytes wait.
const RECLAIM_AT: u64 = 1 << 20;

/// How heavy a value is when retired (the bytes it frees), so that a few large values are
/// reclaimed as soon as many small ones.
pub trait Weighed {
    /// Bytes freed with the value, roughly.
    fn weight(&self) -> u64;
}

struct Row {
    slots: [AtomicPtr<()>; SLOTS],
}

struct Retired {
    ptr: *mut (),
    drop: unsafe fn(*mut ()),
    weight: u64,
    next: *mut Retired,
}

/// A set of hazard slots and the values retired against them (module docs).
pub struct Domain {
    rows: Box<[CachePadded<Row>]>,
    shared: Box<[AtomicPtr<()>]>,
    retired: AtomicPtr<Retired>,
    pending: AtomicU64,
    reclaiming: AtomicBool,
    /// Whether the barriers are `membarrier(2)`'s (registered when the domain was made), read
    /// here rather than through the process-wide flag: one load on the reader's path.
    #[cfg(not(wkcore_loom))]
    expedited: bool,
    #[cfg(wkcore_loom)]
    barrier: AtomicU64,
}

// SAFETY: the raw pointers in the retired list are `Arc<T>`s of `T: Send + Sync` (`retire`
// asks for it), owned by the list and only dropped by one reclaimer at a time.
unsafe impl Send for Domain {}
// SAFETY: as above; every shared field is an atomic.
unsafe impl Sync for Domain {}

impl Default for Domain {
    fn default() -> Self {
        Self::new()
    }
}

impl Domain {
    /// An empty domain with one row per thread row.
    pub fn new() -> Self {
        Self::with_rows(THREAD_ROWS)
    }

    /// An empty domain with `rows` rows (the loom models use a few).
    pub fn with_rows(rows: usize) -> Self {
        Self {
            rows: (0..rows)
                .map(|_| {
                    CachePadded::new(Row {
                        slots: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
                    })
                })
                .collect(),
            shared: (0..SHARED_SLOTS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            retired: AtomicPtr::new(ptr::null_mut()),
            pending: AtomicU64::new(0),
            reclaiming: AtomicBool::new(false),
            #[cfg(not(wkcore_loom))]
            expedited: membarrier::expedited(),
            #[cfg(wkcore_loom)]
            barrier: AtomicU64::new(0),
        }
    }

    /// The process's domain, for values shared across every cache.
    #[cfg(not(wkcore_loom))]
    pub fn global() -> &'static Domain {
        static GLOBAL: std::sync::OnceLock<Domain> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(Domain::new)
    }

    #[inline]
    fn light_barrier(&self) {
        #[cfg(not(wkcore_loom))]
        {
            if self.expedited {
                std::sync::atomic::compiler_fence(Ordering::SeqCst);
            } else {
                std::sync::atomic::fence(Ordering::SeqCst);
            }
        }
        #[cfg(wkcore_loom)]
        {
            // Ordering: AcqRel on the one barrier word (module docs).
            self.barrier.fetch_add(0, Ordering::AcqRel);
        }
    }

    fn heavy_barrier(&self) {
        #[cfg(not(wkcore_loom))]
        {
            if self.expedited {
                membarrier::barrier();
            } else {
                std::sync::atomic::fence(Ordering::SeqCst);
            }
        }
        #[cfg(wkcore_loom)]
        {
            // Ordering: AcqRel on the one barrier word (module docs).
            self.barrier.fetch_add(0, Ordering::AcqRel);
        }
    }

    /// Protects the value `src` points to, in row `row` when the caller's thread owns it alone
    /// (`None`: a shared slot and a reference count).
    ///
    /// # Safety
    ///
    /// `row`, when given, is the calling thread's own row (no other thread fills its slots).
    /// `src` holds null or `Arc::into_raw` pointers, and a pointer replaced in `src` is retired
    /// to this domain ([`Domain::retire`]), never dropped otherwise.
    #[inline]
    pub unsafe fn protect<T>(&self, row: Option<usize>, src: &AtomicPtr<T>) -> Protected<'_, T> {
        if let Some(row) = row {
            let slots = &self.rows[row].slots;
            // Ordering: Relaxed; a slot reads null only once its holder cleared it, and only
            // this thread fills it.
            if let Some(slot) = slots.iter().find(|s| s.load(Ordering::Relaxed).is_null()) {
                // Ordering: Acquire; pairs with the publishing CAS (module docs).
                let mut p = src.load(Ordering::Acquire);
                loop {
                    if p.is_null() {
                        return Protected::empty();
                    }
                    // Ordering: Release, and the barrier (module docs).
                    slot.store(p.cast(), Ordering::Release);
                    self.light_barrier();
                    // Ordering: Acquire, as the first load.
                    let again = src.load(Ordering::Acquire);
                    if again == p {
                        // SAFETY: `p` is an `Arc::into_raw` pointer (caller) and protected from
                        // here until the slot is cleared; the `Arc` is never dropped.
                        let value = ManuallyDrop::new(Some(unsafe { Arc::from_raw(p) }));
                        return Protected {
                            value,
                            slot: Some(slot),
                        };
                    }
                    p = again;
                }
            }
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.protect_counted(src) }
    }

    /// [`Domain::protect`] through a shared slot: an owned reference count.
    ///
    /// # Safety
    ///
    /// As [`Domain::protect`]'s for `src`.
    #[cold]
    unsafe fn protect_counted<T>(&self, src: &AtomicPtr<T>) -> Protected<'_, T> {
        let mut at = 0usize;
        loop {
            // Ordering: Acquire; pairs with the publishing CAS (module docs).
            let mut p = src.load(Ordering::Acquire);
            if p.is_null() {
                return Protected::empty();
            }
            let slot = &self.shared[at % SHARED_SLOTS];
            at = at.wrapping_add(1);
            // Ordering: Acquire on success (module docs); a taken slot is skipped.
            if slot
                .compare_exchange(
                    ptr::null_mut(),
                    p.cast(),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_err()
            {
                if at % SHARED_SLOTS == 0 {
                    crate::sync::spin_loop();
                }
                continue;
            }
            loop {
                self.light_barrier();
                // Ordering: Acquire, as the first load.
                let again = src.load(Ordering::Acquire);
                if again == p {
                    break;
                }
                if again.is_null() {
                    // Ordering: Release (module docs).
                    slot.store(ptr::null_mut(), Ordering::Release);
                    return Protected::empty();
                }
                p = again;
                // Ordering: Release, and the barrier (module docs).
                slot.store(p.cast(), Ordering::Release);
            }
            // SAFETY: `p` is an `Arc::into_raw` pointer, protected by the slot, so its count
            // is at least the one the cell (or the retired list) holds.
            let owned = unsafe {
                Arc::increment_strong_count(p);
                Arc::from_raw(p)
            };
            // Ordering: Release (module docs).
            slot.store(ptr::null_mut(), Ordering::Release);
            return Protected {
                value: ManuallyDrop::new(Some(owned)),
                slot: None,
            };
        }
    }

    /// Gives `ptr`'s reference to the domain, which drops it once no slot names it; runs a
    /// reclaim when the list's weight passes its bound.
    ///
    /// # Safety
    ///
    /// `ptr` is an `Arc::into_raw` pointer whose reference the caller owns and gives up, and no
    /// source can hand it to a new reader any more (it was replaced).
    pub unsafe fn retire<T: Weighed + Send + Sync>(&self, ptr: *const T) {
        unsafe fn drop_arc<T>(p: *mut ()) {
            // SAFETY: `p` came from `Arc::into_raw::<T>` (`retire`'s contract), once.
            drop(unsafe { Arc::from_raw(p.cast::<T>().cast_const()) });
        }
        // SAFETY: the caller owns a reference, so the value is alive.
        let weight = RETIRE_WEIGHT + unsafe { (*ptr).weight() };
        let node = Box::into_raw(Box::new(Retired {
            ptr: ptr.cast_mut().cast(),
            drop: drop_arc::<T>,
            weight,
            next: ptr::null_mut(),
        }));
        // SAFETY: `node` is a fresh, whole chain of one.
        unsafe { self.push(node, node) };
        // Ordering: Relaxed; a heuristic counter.
        if self.pending.fetch_add(weight, Ordering::Relaxed) + weight >= RECLAIM_AT {
            self.reclaim();
        }
    }

    /// Pushes the chain `first ..= last` onto the retired list.
    ///
    /// # Safety
    ///
    /// The chain is the caller's, linked through `next` from `first` to `last`.
    unsafe fn push(&self, first: *mut Retired, last: *mut Retired) {
        // Ordering: Relaxed; the CAS below decides.
        let mut head = self.retired.load(Ordering::Relaxed);
        loop {
            // SAFETY: the caller owns the chain until the CAS publishes it.
            unsafe { (*last).next = head };
            // Ordering: Release on success (module docs); Relaxed on failure, to link again.
            match self.retired.compare_exchange_weak(
                head,
                first,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Drops every retired value no slot names; does nothing when another reclaim is running.
    pub fn reclaim(&self) {
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                // Ordering: Release (module docs).
                self.0.store(false, Ordering::Release);
            }
        }
        // Ordering: Acquire on success (module docs).
        if self
            .reclaiming
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let _done = Done(&self.reclaiming);
        // Ordering: Relaxed; a heuristic counter.
        self.pending.store(0, Ordering::Relaxed);
        // Ordering: Acquire (module docs).
        let mut node = self.retired.swap(ptr::null_mut(), Ordering::Acquire);
        if node.is_null() {
            return;
        }
        self.heavy_barrier();
        let mut held: Vec<*mut ()> = self
            .rows
            .iter()
            .flat_map(|r| r.slots.iter())
            .chain(self.shared.iter())
            // Ordering: Acquire (module docs).
            .map(|s| s.load(Ordering::Acquire))
            .filter(|p| !p.is_null())
            .collect();
        held.sort_unstable();
        let (mut kept_first, mut kept_last) = (ptr::null_mut::<Retired>(), ptr::null_mut());
        let mut kept_weight = 0;
        while !node.is_null() {
            // SAFETY: the swap made the whole chain this reclaimer's.
            let next = unsafe { (*node).next };
            // SAFETY: as above.
            let r = unsafe { &mut *node };
            if held.binary_search(&r.ptr).is_ok() {
                r.next = kept_first;
                if kept_first.is_null() {
                    kept_last = node;
                }
                kept_first = node;
                kept_weight += r.weight;
            } else {
                // SAFETY: no slot names the value after the barrier, and none can again (it
                // was replaced before it was retired); the node was boxed by `retire`.
                unsafe {
                    (r.drop)(r.ptr);
                    drop(Box::from_raw(node));
                }
            }
            node = next;
        }
        if !kept_first.is_null() {
            // SAFETY: the kept nodes form a chain of this reclaimer's.
            unsafe { self.push(kept_first, kept_last) };
            // Ordering: Relaxed; a heuristic counter.
            self.pending.fetch_add(kept_weight, Ordering::Relaxed);
        }
    }

    /// Retired values not yet dropped (a walk of the list; for tests and gauges).
    #[cfg(test)]
    pub(crate) fn retired_len(&self) -> usize {
        // Ordering: Acquire (module docs); tests call it with no reclaim running.
        let mut node = self.retired.load(Ordering::Acquire);
        let mut n = 0;
        while !node.is_null() {
            n += 1;
            // SAFETY: no reclaim runs concurrently (caller), so the nodes stay.
            node = unsafe { (*node).next };
        }
        n
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        // `&mut self`: no reader or writer is left, so every retired value goes.
        // Ordering: Relaxed; exclusive access.
        let mut node = self.retired.swap(ptr::null_mut(), Ordering::Relaxed);
        while !node.is_null() {
            // SAFETY: the list owns its nodes and their values; nothing else reaches them.
            unsafe {
                let r = Box::from_raw(node);
                (r.drop)(r.ptr);
                node = r.next;
            }
        }
    }
}

/// A protected value: derefs to the `Option<Arc<T>>` it read, alive while this lives.
pub struct Protected<'d, T> {
    /// A borrowed `Arc` (never dropped) while `slot` holds it; an owned one otherwise.
    value: ManuallyDrop<Option<Arc<T>>>,
    slot: Option<&'d AtomicPtr<()>>,
}

// SAFETY: the value is an `Arc<T>` (shared as `&Arc<T>`, sent as a slot that any thread may
// clear), so this is `Send` and `Sync` when `Arc<T>` is.
unsafe impl<T: Send + Sync> Send for Protected<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Protected<'_, T> {}

impl<T> Protected<'_, T> {
    fn empty() -> Self {
        Self {
            value: ManuallyDrop::new(None),
            slot: None,
        }
    }

    /// The value as an owned `Arc` (one reference-count increment when it was borrowed).
    pub fn into_inner(self) -> Option<Arc<T>> {
        if self.slot.is_some() {
            return (*self.value).clone();
        }
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the owned value moves out once.
        unsafe { ManuallyDrop::take(&mut this.value) }
    }
}

impl<T> std::ops::Deref for Protected<'_, T> {
    type Target = Option<Arc<T>>;
    #[inline]
    fn deref(&self) -> &Option<Arc<T>> {
        &self.value
    }
}

impl<T> Drop for Protected<'_, T> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            // Ordering: Release (module docs).
            Some(slot) => slot.store(ptr::null_mut(), Ordering::Release),
            // SAFETY: an owned value, dropped once, here.
            None => unsafe { ManuallyDrop::drop(&mut self.value) },
        }
    }
}

/// An atomically replaceable `Option<Arc<T>>` whose readers hold values through a [`Domain`]'s
/// hazard slots (module docs). Every value it lets go is retired to the domain passed in, which
/// must be the same for the cell's whole life.
pub struct RawCell<T: Weighed + Send + Sync> {
    ptr: AtomicPtr<T>,
}

fn into_raw<T>(value: Option<Arc<T>>) -> *mut T {
    value.map_or(ptr::null_mut(), |v| Arc::into_raw(v).cast_mut())
}

fn raw_of<T>(value: &Option<Arc<T>>) -> *mut T {
    value
        .as_ref()
        .map_or(ptr::null_mut(), |v| Arc::as_ptr(v).cast_mut())
}

impl<T: Weighed + Send + Sync> RawCell<T> {
    /// A cell holding `value`.
    pub fn new(value: Option<Arc<T>>) -> Self {
        Self {
            ptr: AtomicPtr::new(into_raw(value)),
        }
    }

    /// The current value, protected in `domain` (row as [`Domain::protect`]).
    ///
    /// # Safety
    ///
    /// `row`, when given, is the calling thread's own row; `domain` is this cell's.
    #[inline]
    pub unsafe fn load<'d>(&self, domain: &'d Domain, row: Option<usize>) -> Protected<'d, T> {
        // SAFETY: the cell only holds `Arc::into_raw` pointers and retires what it replaces
        // to its domain (caller); the row is forwarded.
        unsafe { domain.protect(row, &self.ptr) }
    }

    /// Replaces the value with `new` if it is still the one `current` read (pointer equality)
    /// and retires the replaced one; `false` (and `new` dropped) otherwise.
    ///
    /// # Safety
    ///
    /// `domain` is this cell's.
    pub unsafe fn compare_and_swap(
        &self,
        domain: &Domain,
        current: &Option<Arc<T>>,
        new: Option<Arc<T>>,
    ) -> bool {
        let expected = raw_of(current);
        let new = into_raw(new);
        // Ordering: AcqRel on success: Release publishes `new` (module docs), Acquire orders
        // the replaced value's retirement after its publication; Relaxed on failure.
        match self
            .ptr
            .compare_exchange(expected, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(old) => {
                if !old.is_null() {
                    // SAFETY: the cell owned `old`'s reference and no longer hands it out.
                    unsafe { domain.retire(old.cast_const()) };
                }
                true
            }
            Err(_) => {
                if !new.is_null() {
                    // SAFETY: `new` was never published: the reference is still ours.
                    drop(unsafe { Arc::from_raw(new.cast_const()) });
                }
                false
            }
        }
    }

    /// Replaces the value with `new` unconditionally and retires the replaced one.
    ///
    /// # Safety
    ///
    /// `domain` is this cell's.
    pub unsafe fn swap(&self, domain: &Domain, new: Option<Arc<T>>) {
        // Ordering: AcqRel, as a successful `compare_and_swap`'s.
        let old = self.ptr.swap(into_raw(new), Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: the cell owned `old`'s reference and no longer hands it out.
            unsafe { domain.retire(old.cast_const()) };
        }
    }

    /// Lets go of the value when the cell is dropped.
    ///
    /// # Safety
    ///
    /// `domain` is this cell's; called once, from the owner's `Drop`, with no other access left.
    pub unsafe fn retire_on_drop(&mut self, domain: &Domain) {
        // Ordering: Relaxed; exclusive access.
        let old = self.ptr.swap(ptr::null_mut(), Ordering::Relaxed);
        if !old.is_null() {
            // SAFETY: the cell owned `old`'s reference; readers that still hold it keep it.
            unsafe { domain.retire(old.cast_const()) };
        }
    }
}

/// A [`RawCell`] in the process's [`Domain::global`], read through this thread's row: what a
/// library structure embeds. Under loom, `crate::sync::ArcCell` (the models of the structures
/// that embed it check their own protocols; `loom-tests/tests/hazard.rs` models this one).
#[cfg(not(wkcore_loom))]
pub(crate) struct HazardCell<T: Weighed + Send + Sync> {
    raw: RawCell<T>,
}

/// What [`HazardCell::load`] read.
#[cfg(not(wkcore_loom))]
pub(crate) type HazardGuard<T> = Protected<'static, T>;

#[cfg(not(wkcore_loom))]
impl<T: Weighed + Send + Sync> HazardCell<T> {
    /// A cell holding `value`.
    pub(crate) fn new(value: Option<Arc<T>>) -> Self {
        Self {
            raw: RawCell::new(value),
        }
    }

    /// The current value.
    #[inline]
    pub(crate) fn load(&self) -> HazardGuard<T> {
        let (row, own) = crate::sync::thread_row();
        // SAFETY: `thread_row` says the row is this thread's alone when `own`; every cell of
        // this type lives in the global domain.
        unsafe { self.raw.load(Domain::global(), own.then_some(row)) }
    }

    /// Replaces the value with `new` if it is still the one `current` saw (pointer equality);
    /// otherwise gives back what it is now.
    pub(crate) fn compare_and_swap(
        &self,
        current: &HazardGuard<T>,
        new: Option<Arc<T>>,
    ) -> Result<(), HazardGuard<T>> {
        // SAFETY: the global domain is every such cell's.
        if unsafe { self.raw.compare_and_swap(Domain::global(), current, new) } {
            Ok(())
        } else {
            Err(self.load())
        }
    }
}

#[cfg(not(wkcore_loom))]
impl<T: Weighed + Send + Sync> HazardCell<T> {
    /// Replaces the value unconditionally, retiring the previous one.
    pub(crate) fn swap(&self, new: Option<Arc<T>>) {
        // SAFETY: the global domain is every such cell's.
        unsafe { self.raw.swap(Domain::global(), new) }
    }
}

#[cfg(not(wkcore_loom))]
impl<T: Weighed + Send + Sync> Drop for HazardCell<T> {
    fn drop(&mut self) {
        // SAFETY: the global domain; `&mut self` is the last access.
        unsafe { self.raw.retire_on_drop(Domain::global()) }
    }
}

/// Drops what the process's domain holds retired and no reader holds: a cache's periodic
/// cleanup calls it, so that an idle process does not keep replaced values until the next
/// writes pass the bound. Nothing under loom, where [`HazardCell`] is a stand-in.
pub(crate) fn reclaim_retired() {
    #[cfg(not(wkcore_loom))]
    Domain::global().reclaim();
}

#[cfg(wkcore_loom)]
pub(crate) type HazardCell<T> = crate::sync::ArcCell<T>;
#[cfg(wkcore_loom)]
pub(crate) type HazardGuard<T> = crate::sync::ArcGuard<T>;

/// `membarrier(2)`'s private expedited command: registered once, then one call per heavy
/// barrier.
#[cfg(not(wkcore_loom))]
mod membarrier {
    use std::sync::OnceLock;

    static EXPEDITED: OnceLock<bool> = OnceLock::new();

    /// True when the process is registered for the command (it registers on first use).
    #[inline]
    pub(super) fn expedited() -> bool {
        *EXPEDITED.get_or_init(register)
    }

    // `membarrier(2)`'s commands, from its man page.
    #[cfg(target_os = "linux")]
    const QUERY: libc::c_long = 0;
    #[cfg(target_os = "linux")]
    const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    #[cfg(target_os = "linux")]
    const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    #[cfg(target_os = "linux")]
    fn register() -> bool {
        // SAFETY: the system call reads no memory of ours; the commands are from the man page.
        unsafe {
            let supported = libc::syscall(libc::SYS_membarrier, QUERY, 0, 0);
            supported >= 0
                && supported & PRIVATE_EXPEDITED != 0
                && libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn register() -> bool {
        false
    }

    /// Every running thread of the process executes a full barrier before this returns.
    #[cfg(target_os = "linux")]
    pub(super) fn barrier() {
        let call = |command: libc::c_long| {
            // SAFETY: as in `register`.
            unsafe { libc::syscall(libc::SYS_membarrier, command, 0, 0) == 0 }
        };
        if call(PRIVATE_EXPEDITED) {
            return;
        }
        // Refused: the process is not registered any more, as a child of `fork` may find
        // itself. Registering again and then barrier covers every thread running now.
        if call(REGISTER_PRIVATE_EXPEDITED) && call(PRIVATE_EXPEDITED) {
            return;
        }
        // Readers skip their fence on the promise of this call: without it, freeing could race
        // them, so the process stops rather than free.
        std::process::abort();
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn barrier() {
        unreachable!("membarrier is Linux-only; `expedited` is false elsewhere")
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    struct Tracked {
        drops: Arc<AtomicU64>,
        weight: u64,
    }
    impl Weighed for Tracked {
        fn weight(&self) -> u64 {
            self.weight
        }
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn tracked(drops: &Arc<AtomicU64>) -> Arc<Tracked> {
        Arc::new(Tracked {
            drops: drops.clone(),
            weight: 0,
        })
    }

    #[test]
    fn a_replaced_value_outlives_its_readers_and_no_longer() {
        let domain = Domain::new();
        let drops = Arc::new(AtomicU64::new(0));
        let mut cell = RawCell::new(Some(tracked(&drops)));
        // SAFETY: row 0 is used by this test's thread only; the cell's domain is `domain`.
        let held = unsafe { cell.load(&domain, Some(0)) };
        let first = held.clone();
        // SAFETY: as above.
        assert!(unsafe { cell.compare_and_swap(&domain, &first, Some(tracked(&drops))) });
        drop(first);
        domain.reclaim();
        assert_eq!(drops.load(Ordering::Relaxed), 0, "held");
        assert_eq!(domain.retired_len(), 1);
        drop(held);
        domain.reclaim();
        assert_eq!(drops.load(Ordering::Relaxed), 1, "let go");
        assert_eq!(domain.retired_len(), 0);
        // SAFETY: the cell's domain; its last access.
        unsafe { cell.retire_on_drop(&domain) };
        drop(domain);
        assert_eq!(drops.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_thread_past_its_slots_holds_reference_counts() {
        let domain = Domain::new();
        let drops = Arc::new(AtomicU64::new(0));
        let mut cell = RawCell::new(Some(tracked(&drops)));
        // SAFETY: row 1 is this test's thread's only; the cell's domain is `domain`.
        let held: Vec<_> = (0..SLOTS + 2)
            .map(|_| unsafe { cell.load(&domain, Some(1)) })
            .collect();
        assert!(held[..SLOTS].iter().all(|h| h.slot.is_some()));
        assert!(held[SLOTS..].iter().all(|h| h.slot.is_none()));
        let value = held[0].clone().expect("a value");
        assert_eq!(
            Arc::strong_count(&value),
            1 + 1 + 2,
            "cell, this clone, two counted"
        );
        // The shared slots were given back.
        assert!(domain
            .shared
            .iter()
            .all(|s| s.load(Ordering::Relaxed).is_null()));
        drop(held);
        assert!(domain.rows[1]
            .slots
            .iter()
            .all(|s| s.load(Ordering::Relaxed).is_null()));
        // SAFETY: no row; the cell's domain is `domain`.
        let counted = unsafe { cell.load(&domain, None) };
        assert!(counted.slot.is_none());
        assert!(counted
            .into_inner()
            .is_some_and(|v| Arc::ptr_eq(&v, &value)));
        drop(value);
        // SAFETY: the cell's domain; its last access.
        unsafe { cell.retire_on_drop(&domain) };
        drop(domain);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn light_retires_wait_for_the_bound_and_a_weighty_one_reclaims_at_once() {
        let domain = Domain::new();
        let drops = Arc::new(AtomicU64::new(0));
        let mut cell = RawCell::new(Some(tracked(&drops)));
        let light = RECLAIM_AT / RETIRE_WEIGHT - 1;
        for _ in 0..light {
            // SAFETY: row 2 is this test's thread's only; the cell's domain is `domain`.
            let current = unsafe { cell.load(&domain, Some(2)) };
            // SAFETY: as above.
            assert!(unsafe { cell.compare_and_swap(&domain, &current, Some(tracked(&drops))) });
        }
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        assert_eq!(domain.retired_len() as u64, light);
        let heavy = Arc::new(Tracked {
            drops: drops.clone(),
            weight: RECLAIM_AT,
        });
        // SAFETY: as above.
        let current = unsafe { cell.load(&domain, Some(2)) };
        let expected = current.clone();
        drop(current);
        // SAFETY: as above.
        assert!(unsafe { cell.compare_and_swap(&domain, &expected, Some(heavy.clone())) });
        drop(expected);
        // Retiring the last light value passed the bound: everything retired went.
        assert_eq!(drops.load(Ordering::Relaxed), light + 1);
        assert_eq!(domain.retired_len(), 0);
        // SAFETY: as above.
        let current = unsafe { cell.load(&domain, Some(2)) };
        let expected = current.clone();
        drop(current);
        // SAFETY: as above.
        assert!(unsafe { cell.compare_and_swap(&domain, &expected, Some(tracked(&drops))) });
        // The weighty value alone passed the bound: the list let it go at once (this test's
        // own reference keeps it).
        assert_eq!(domain.retired_len(), 0);
        assert_eq!(Arc::strong_count(&heavy), 2, "this test's two");
        drop((expected, heavy));
        assert_eq!(drops.load(Ordering::Relaxed), light + 2);
        // SAFETY: the cell's domain; its last access.
        unsafe { cell.retire_on_drop(&domain) };
        drop(domain);
        assert_eq!(drops.load(Ordering::Relaxed), light + 3);
    }

    #[test]
    fn a_failed_swap_publishes_nothing_and_drops_the_new_value() {
        let domain = Domain::new();
        let drops = Arc::new(AtomicU64::new(0));
        let cell = RawCell::new(None);
        // SAFETY: the cell's domain is `domain`.
        assert!(!unsafe {
            cell.compare_and_swap(&domain, &Some(tracked(&drops)), Some(tracked(&drops)))
        });
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        // SAFETY: as above.
        assert!(unsafe { cell.load(&domain, Some(3)) }.is_none());
        assert_eq!(domain.retired_len(), 0);
    }

    /// A value that knows when it was freed (under ASan a read after the free is reported; the
    /// check word catches it otherwise, as long as the memory was not reused).
    struct Sequenced {
        seq: u64,
        check: AtomicU64,
        drops: Arc<AtomicU64>,
    }
    const MAGIC: u64 = 0x5eed_5eed_5eed_5eed;
    impl Weighed for Sequenced {
        fn weight(&self) -> u64 {
            4096
        }
    }
    impl Drop for Sequenced {
        fn drop(&mut self) {
            self.check.store(0, Ordering::Relaxed);
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn sequenced(seq: u64, drops: &Arc<AtomicU64>) -> Arc<Sequenced> {
        Arc::new(Sequenced {
            seq,
            check: AtomicU64::new(seq ^ MAGIC),
            drops: drops.clone(),
        })
    }
    fn checked(v: &Sequenced) -> u64 {
        assert_eq!(
            v.check.load(Ordering::Relaxed),
            v.seq ^ MAGIC,
            "read a freed value"
        );
        v.seq
    }

    /// Writers bump a chain of values (each CAS installs the loaded value's successor) while
    /// readers in rows, readers through shared slots and a reclaimer run; a mutex-guarded count
    /// of the successful swaps is the reference. Readers sample it while the threads run: a
    /// value read after the count said `n` is at least `n`. At the end every value made was
    /// dropped exactly once.
    #[test]
    fn readers_writers_and_reclaims_against_a_mutex_reference() {
        // Writers and the reclaimer stop when both readers are done, or at the bound.
        const WRITES: u64 = 1_000_000;
        const READS: u64 = 20_000;
        let domain = Domain::new();
        let drops = Arc::new(AtomicU64::new(0));
        let mut cell = RawCell::new(Some(sequenced(0, &drops)));
        let swaps = std::sync::Mutex::new(0u64);
        let made = AtomicU64::new(1);
        let readers_done = AtomicU64::new(0);
        let reading = || readers_done.load(Ordering::Relaxed) < 2;
        let read = |row: Option<usize>| {
            // SAFETY: `row` is the calling thread's (`thread_row`) or none; `domain` is the
            // cell's.
            unsafe { cell.load(&domain, row) }
        };
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let (row, own) = crate::sync::thread_row();
                    for _ in 0..WRITES {
                        if !reading() {
                            break;
                        }
                        let current = read(own.then_some(row));
                        let next = checked(current.as_ref().expect("a value")) + 1;
                        made.fetch_add(1, Ordering::Relaxed);
                        let fresh = Some(sequenced(next, &drops));
                        // SAFETY: the cell's domain.
                        if unsafe { cell.compare_and_swap(&domain, &current, fresh) } {
                            *swaps.lock().unwrap() += 1;
                        }
                    }
                });
            }
            for counted in [false, true] {
                let (read, swaps, readers_done) = (&read, &swaps, &readers_done);
                s.spawn(move || {
                    let (row, own) = crate::sync::thread_row();
                    let row = own.then_some(row).filter(|_| !counted);
                    let mut last = 0;
                    for i in 0..READS {
                        let floor = *swaps.lock().unwrap();
                        // Past its slots now and then: the fallback runs beside the fast path.
                        let held: Vec<_> = (0..if i % 64 == 0 { SLOTS + 2 } else { 1 })
                            .map(|_| read(row))
                            .collect();
                        for h in &held {
                            let seq = checked(h.as_ref().expect("a value"));
                            assert!(seq >= floor, "a value older than a counted swap");
                            assert!(seq >= last, "values go back");
                            last = seq;
                        }
                        // Held a while, and checked again: a reclaim that freed it shows.
                        for _ in 0..64 {
                            std::hint::spin_loop();
                        }
                        for h in &held {
                            checked(h.as_ref().expect("a value"));
                        }
                    }
                    readers_done.fetch_add(1, Ordering::Relaxed);
                });
            }
            s.spawn(|| {
                for _ in 0..WRITES {
                    if !reading() {
                        break;
                    }
                    domain.reclaim();
                    std::thread::yield_now();
                }
            });
        });
        let swaps = *swaps.lock().unwrap();
        let last = read(None).as_ref().map(|v| checked(v));
        assert_eq!(
            last,
            Some(swaps),
            "the chain is as long as the swaps counted"
        );
        domain.reclaim();
        let made = made.load(Ordering::Relaxed);
        assert_eq!(domain.retired_len(), 0, "nothing is held any more");
        assert_eq!(
            drops.load(Ordering::Relaxed),
            made - 1,
            "all but the current one"
        );
        // SAFETY: the cell's domain; its last access.
        unsafe { cell.retire_on_drop(&domain) };
        drop(domain);
        assert_eq!(drops.load(Ordering::Relaxed), made);
    }
}
