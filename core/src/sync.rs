//! The one place that names concurrency primitives.
//!
//! Every other module imports atomics, `Arc`, `Mutex`, `UnsafeCell`, the spin hint and the
//! concurrent map from here. Built normally they are `std`'s (and dashmap's); built with
//! `RUSTFLAGS="--cfg wkcore_loom"` they are loom's, so the models in `loom-tests/` check the same
//! code that ships. `clippy.toml` (`disallowed-types`) keeps `std` atomics and `UnsafeCell` out of
//! every other file of this crate.
//!
//! # What loom sees
//!
//! loom sees only what passes through this module. Dependencies that use `core` atomics
//! internally (papaya, dashmap) are invisible to it, so under `wkcore_loom` they are
//! replaced by stand-ins with the same API built on loom primitives ([`ConcurrentMap`] is a loom
//! `Mutex` around a `HashMap`). The real ones are covered by stress and model tests instead.
//! Note loom's documented blind spots: it models `SeqCst` loads and stores as `AcqRel` (false
//! alarms) and never explores load buffering (missed bugs); code here uses no `SeqCst`.
//!
//! # Orderings
//!
//! The only atomics this module uses itself are the [`Gate`]'s: the `Acquire` CAS that enters
//! pairs with the `Release` store that leaves, so each holder sees what the previous one did.
#![allow(clippy::disallowed_types)]

#[cfg(not(wkcore_loom))]
pub(crate) use std::sync::atomic::{fence, Ordering};

/// Newtypes over `std`'s atomics: other files name these, never `std`'s, which is what lets
/// clippy's `disallowed-types` tell the two apart (a plain re-export would be the same type).
#[cfg(not(wkcore_loom))]
macro_rules! std_atomic {
    ($($name:ident($inner:ty, $value:ty)),* $(,)?) => {$(
        #[doc = concat!("`std::sync::atomic::", stringify!($name), "` (loom's under `wkcore_loom`).")]
        #[derive(Debug, Default)]
        #[repr(transparent)]
        pub(crate) struct $name($inner);

        impl $name {
            /// A new atomic holding `value`.
            #[allow(dead_code)]
            pub(crate) const fn new(value: $value) -> Self {
                Self(<$inner>::new(value))
            }
        }

        impl std::ops::Deref for $name {
            type Target = $inner;
            #[inline]
            fn deref(&self) -> &$inner {
                &self.0
            }
        }
    )*};
}
#[cfg(not(wkcore_loom))]
std_atomic!(
    AtomicBool(std::sync::atomic::AtomicBool, bool),
    AtomicU64(std::sync::atomic::AtomicU64, u64),
);
/// The atomic type a host sees: `std`'s (loom's under `wkcore_loom`), what [`AtomicU64`]
/// wraps. Only for words handed to a host (`admission::HostWords`).
#[cfg(not(wkcore_loom))]
pub(crate) type HostU64 = std::sync::atomic::AtomicU64;

/// `a` as the host's type (the newtype is `repr(transparent)`).
#[cfg(not(wkcore_loom))]
#[inline]
pub(crate) fn host_u64(a: &AtomicU64) -> &HostU64 {
    &a.0
}

/// A table of `a` as the host's type.
#[cfg(not(wkcore_loom))]
#[inline]
pub(crate) fn host_u64_table<const N: usize, const M: usize>(
    a: &[[AtomicU64; N]; M],
) -> &[[HostU64; N]; M] {
    // SAFETY: `AtomicU64` is a `repr(transparent)` newtype of `HostU64`, so the arrays have the
    // same layout, and the shared borrow is carried over.
    unsafe { &*(a as *const [[AtomicU64; N]; M]).cast::<[[HostU64; N]; M]>() }
}

/// `std::sync::atomic::AtomicPtr` (loom's under `wkcore_loom`); a newtype for the same reason
/// as the integer atomics above.
#[cfg(not(wkcore_loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct AtomicPtr<T>(std::sync::atomic::AtomicPtr<T>);

#[cfg(not(wkcore_loom))]
impl<T> AtomicPtr<T> {
    /// A new atomic holding `ptr`.
    pub(crate) const fn new(ptr: *mut T) -> Self {
        Self(std::sync::atomic::AtomicPtr::new(ptr))
    }
}

#[cfg(not(wkcore_loom))]
impl<T> std::ops::Deref for AtomicPtr<T> {
    type Target = std::sync::atomic::AtomicPtr<T>;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

#[cfg(not(wkcore_loom))]
#[allow(unused_imports)] // for objects shared inside modeled algorithms (later slices)
pub(crate) use std::sync::Arc;

#[cfg(wkcore_loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// The atomic type a host sees (loom's here).
#[cfg(wkcore_loom)]
pub(crate) type HostU64 = loom::sync::atomic::AtomicU64;

/// `a` as the host's type (the same type under loom).
#[cfg(wkcore_loom)]
#[inline]
pub(crate) fn host_u64(a: &AtomicU64) -> &HostU64 {
    a
}

/// A table of `a` as the host's type (the same type under loom).
#[cfg(wkcore_loom)]
#[inline]
pub(crate) fn host_u64_table<const N: usize, const M: usize>(
    a: &[[AtomicU64; N]; M],
) -> &[[HostU64; N]; M] {
    a
}
#[cfg(wkcore_loom)]
#[allow(unused_imports)] // as above
pub(crate) use loom::sync::Arc;

/// Hints the processor that this thread is spinning; under loom, yields to the model scheduler.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(not(wkcore_loom))]
    std::hint::spin_loop();
    #[cfg(wkcore_loom)]
    loom::thread::yield_now();
}

/// Yields this thread's time slice (a spinning waiter whose holder may be descheduled).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(wkcore_loom))]
    std::thread::yield_now();
    #[cfg(wkcore_loom)]
    loom::thread::yield_now();
}

/// A mutual-exclusion lock whose `lock` ignores poisoning.
///
/// Every user of this lock keeps its protected state consistent across unwinding (with drop
/// guards), so a panic in another holder is not a reason to refuse the state.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T> {
    #[cfg(not(wkcore_loom))]
    inner: std::sync::Mutex<T>,
    #[cfg(wkcore_loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard of [`Mutex`].
#[cfg(not(wkcore_loom))]
pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
/// The guard of [`Mutex`].
#[cfg(wkcore_loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// Creates an unlocked mutex.
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(wkcore_loom))]
            inner: std::sync::Mutex::new(value),
            #[cfg(wkcore_loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Locks, waiting for the current holder; a poisoned lock is entered anyway.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A condition variable over [`Mutex`]; loom's under `wkcore_loom`, where a timed wait is an
/// untimed one (loom has no clock, so models wait without deadlines).
#[derive(Debug, Default)]
pub(crate) struct Condvar {
    #[cfg(not(wkcore_loom))]
    inner: std::sync::Condvar,
    #[cfg(wkcore_loom)]
    inner: loom::sync::Condvar,
}

impl Condvar {
    /// A condition variable nobody waits on.
    #[allow(dead_code)] // `Default` is what the owner events use
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(wkcore_loom))]
            inner: std::sync::Condvar::new(),
            #[cfg(wkcore_loom)]
            inner: loom::sync::Condvar::new(),
        }
    }

    /// Releases `guard`, waits for a notification (or a spurious wake-up), locks again.
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.inner
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// As [`Condvar::wait`], for at most `timeout` (under loom: untimed).
    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner
                .wait_timeout(guard, timeout)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0)
        }
        #[cfg(wkcore_loom)]
        {
            let _ = timeout;
            self.wait(guard)
        }
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        self.inner.notify_all();
    }
}

/// The number of [`thread_row`] rows: rows `0..THREAD_ROWS - 1` each belong to one live thread;
/// the last row is shared by every thread beyond that.
pub(crate) const THREAD_ROWS: usize = 64;

/// This thread's row of a per-thread counter table, and whether the row is this thread's alone
/// (its counters may then be bumped with a plain load and store instead of a read-modify-write).
///
/// A thread takes the lowest free row on first use and gives it back when it exits, so rows
/// are reused and a program with at most `THREAD_ROWS - 1` live threads never shares one.
/// Under loom every thread shares row `THREAD_ROWS - 1`.
#[cfg(not(wkcore_loom))]
#[inline]
pub(crate) fn thread_row() -> (usize, bool) {
    // A const thread-local without a destructor: reading it is one load from the thread's block,
    // with no first-use registration, and it stays readable while other destructors run.
    let row = thread_rows::ROW.with(std::cell::Cell::get);
    if row != usize::MAX {
        return (row, row != thread_rows::SHARED);
    }
    thread_rows::take()
}

#[cfg(not(wkcore_loom))]
mod thread_rows {
    use std::cell::Cell;

    pub(super) const SHARED: usize = super::THREAD_ROWS - 1;

    thread_local! {
        /// This thread's row; `usize::MAX` until taken.
        pub(super) static ROW: Cell<usize> = const { Cell::new(usize::MAX) };
        /// Gives the row back when the thread exits.
        static GUARD: Guard = const { Guard };
    }

    /// Rows in use, as bits; taken and given back under the lock (once per thread).
    static TAKEN: std::sync::Mutex<u64> = std::sync::Mutex::new(0);

    struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            let row = ROW.with(Cell::get);
            // Anything this thread still counts from a later destructor goes to the shared row.
            ROW.with(|r| r.set(SHARED));
            if row < SHARED {
                let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
                *taken &= !(1u64 << row);
            }
        }
    }

    #[cold]
    pub(super) fn take() -> (usize, bool) {
        // Registering the guard fails only while this thread is being torn down: then share.
        if GUARD.try_with(|_| ()).is_err() {
            ROW.with(|r| r.set(SHARED));
            return (SHARED, false);
        }
        let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        let free = (!*taken).trailing_zeros() as usize;
        let row = if free < SHARED {
            *taken |= 1u64 << free;
            free
        } else {
            SHARED
        };
        ROW.with(|r| r.set(row));
        (row, row != SHARED)
    }
}

/// Under loom every thread shares the last row.
#[cfg(wkcore_loom)]
pub(crate) fn thread_row() -> (usize, bool) {
    (THREAD_ROWS - 1, false)
}

/// A role held by one thread at a time across a short batch of work (the consumer role of a
/// queue): entering costs one CAS, leaving one `Release` store, so it is cheaper than a mutex
/// when uncontended. A waiter spins on loads briefly, then yields, and retries the CAS when the
/// gate looks open.
///
/// The same code runs under loom, on loom's atomics (the spin hint and the yield become loom
/// yields), so the models check the gate's protocol together with what it guards. Entering is a
/// CAS rather than a swap because a failed swap still writes: loom sees every failed attempt as
/// a new store and never lets a waiter's spin settle.
///
/// # Orderings
///
/// The `Acquire` CAS that enters pairs with the `Release` store that leaves: each holder sees
/// everything the previous holder did while it held the gate.
pub(crate) struct Gate {
    held: AtomicBool,
}

/// Proof of holding a [`Gate`]; leaving is dropping it (also while unwinding).
pub(crate) struct GateGuard<'a> {
    gate: &'a Gate,
}

impl Gate {
    /// An open gate.
    pub(crate) fn new() -> Self {
        Self {
            held: AtomicBool::new(false),
        }
    }

    /// Enters, waiting for the current holder to leave.
    pub(crate) fn enter(&self) -> GateGuard<'_> {
        // Ordering: Acquire on success; pairs with the Release store in `GateGuard::drop`, so
        // this holder sees what the previous one left. Relaxed on failure: nothing is read.
        while self
            .held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            let mut spins = 0u32;
            // Ordering: Relaxed; only a hint to retry the CAS, which synchronizes.
            while self.held.load(Ordering::Relaxed) {
                if spins < 64 {
                    spins += 1;
                    spin_loop();
                } else {
                    yield_now();
                }
            }
        }
        GateGuard { gate: self }
    }
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        // Ordering: Release; pairs with the Acquire CAS in `Gate::enter`.
        self.gate.held.store(false, Ordering::Release);
    }
}

/// `UnsafeCell` with loom's `with`/`with_mut` API, so call sites read the same both ways.
#[cfg(not(wkcore_loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(wkcore_loom))]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared raw pointer to the contents.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a mutable raw pointer to the contents.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(wkcore_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// Why [`ConcurrentMap::insert_with`] inserted nothing.
pub(crate) enum InsertError<V, E> {
    /// The key is present; its value.
    Exists(V),
    /// The constructor refused.
    Refused(E),
}

/// A concurrent hash map: dashmap with ahash, or under loom a loom `Mutex` around a `HashMap`.
///
/// Only the operations wkcore uses are offered, with the same signatures both ways.
pub(crate) struct ConcurrentMap<K, V> {
    #[cfg(not(wkcore_loom))]
    inner: dashmap::DashMap<K, V, ahash::RandomState>,
    #[cfg(wkcore_loom)]
    inner: loom::sync::Mutex<std::collections::HashMap<K, V>>,
}

impl<K: Eq + std::hash::Hash, V: Clone> ConcurrentMap<K, V> {
    /// Creates an empty map.
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(wkcore_loom))]
            inner: dashmap::DashMap::with_hasher(ahash::RandomState::new()),
            #[cfg(wkcore_loom)]
            inner: loom::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Inserts `value` unless `key` is present; on conflict gives `value` back.
    pub(crate) fn insert_if_absent(&self, key: K, value: V) -> Result<(), V> {
        #[cfg(not(wkcore_loom))]
        {
            match self.inner.entry(key) {
                dashmap::mapref::entry::Entry::Occupied(_) => Err(value),
                dashmap::mapref::entry::Entry::Vacant(slot) => {
                    slot.insert(value);
                    Ok(())
                }
            }
        }
        #[cfg(wkcore_loom)]
        {
            let mut map = self.inner.lock().unwrap();
            if map.contains_key(&key) {
                return Err(value);
            }
            map.insert(key, value);
            Ok(())
        }
    }

    /// Inserts the value `make` builds unless `key` is present, with the entry (shard) lock held
    /// while `make` runs, so the check and the insert are one step. Gives back the existing
    /// value on conflict, or `make`'s error.
    pub(crate) fn insert_with<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<(), InsertError<V, E>> {
        #[cfg(not(wkcore_loom))]
        {
            match self.inner.entry(key) {
                dashmap::mapref::entry::Entry::Occupied(entry) => {
                    Err(InsertError::Exists(entry.get().clone()))
                }
                dashmap::mapref::entry::Entry::Vacant(slot) => {
                    slot.insert(make().map_err(InsertError::Refused)?);
                    Ok(())
                }
            }
        }
        #[cfg(wkcore_loom)]
        {
            let mut map = self.inner.lock().unwrap();
            if let Some(existing) = map.get(&key) {
                return Err(InsertError::Exists(existing.clone()));
            }
            let value = make().map_err(InsertError::Refused)?;
            map.insert(key, value);
            Ok(())
        }
    }

    /// Runs `f` on the value under `key` with the entry's shard read lock held (so the value
    /// cannot be removed meanwhile).
    pub(crate) fn with<R>(&self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.get(key).map(|entry| f(entry.value()))
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().get(key).map(f)
        }
    }

    /// A clone of the value under `key`.
    pub(crate) fn get_cloned(&self, key: &K) -> Option<V> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.get(key).map(|entry| entry.value().clone())
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().get(key).cloned()
        }
    }

    /// Removes and returns the value under `key`.
    pub(crate) fn remove(&self, key: &K) -> Option<V> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.remove(key).map(|(_, value)| value)
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().remove(key)
        }
    }

    /// Clones of up to `limit` values, in the map's iteration order.
    pub(crate) fn values(&self, limit: usize) -> Vec<V> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner
                .iter()
                .take(limit)
                .map(|entry| entry.value().clone())
                .collect()
        }
        #[cfg(wkcore_loom)]
        {
            self.inner
                .lock()
                .unwrap()
                .values()
                .take(limit)
                .cloned()
                .collect()
        }
    }

    /// The number of entries (a moment's view).
    pub(crate) fn len(&self) -> usize {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.len()
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().len()
        }
    }
}

/// Under loom, the stand-in for `hazard::HazardCell`: a loom `Mutex` around an
/// `Option<Arc<T>>`. The tag models check the protocols built on the cell; the cell's own
/// protocol has its model in `loom-tests/tests/hazard.rs`, on the real hazard domain.
#[cfg(wkcore_loom)]
pub(crate) struct ArcCell<T> {
    inner: loom::sync::Mutex<Option<std::sync::Arc<T>>>,
}

/// What [`ArcCell::load`] saw: derefs to the `Option<std::sync::Arc<T>>` it loaded.
#[cfg(wkcore_loom)]
pub(crate) struct ArcGuard<T> {
    inner: Option<std::sync::Arc<T>>,
}

#[cfg(wkcore_loom)]
impl<T> std::ops::Deref for ArcGuard<T> {
    type Target = Option<std::sync::Arc<T>>;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

#[cfg(wkcore_loom)]
impl<T> ArcGuard<T> {
    /// The loaded value as an owned `Arc`.
    pub(crate) fn into_inner(self) -> Option<std::sync::Arc<T>> {
        self.inner
    }
}

#[cfg(wkcore_loom)]
fn same<T>(a: &Option<std::sync::Arc<T>>, b: &Option<std::sync::Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
        _ => false,
    }
}

#[cfg(wkcore_loom)]
impl<T> ArcCell<T> {
    /// A cell holding `value`.
    pub(crate) fn new(value: Option<std::sync::Arc<T>>) -> Self {
        Self {
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// The current value.
    pub(crate) fn load(&self) -> ArcGuard<T> {
        ArcGuard {
            inner: self.inner.lock().unwrap().clone(),
        }
    }

    /// Replaces the value with `new` if it is still the one `current` saw (pointer equality);
    /// otherwise gives back what it is now.
    pub(crate) fn compare_and_swap(
        &self,
        current: &ArcGuard<T>,
        new: Option<std::sync::Arc<T>>,
    ) -> Result<(), ArcGuard<T>> {
        let mut value = self.inner.lock().unwrap();
        if same(&value, &current.inner) {
            *value = new;
            Ok(())
        } else {
            Err(ArcGuard {
                inner: value.clone(),
            })
        }
    }

    /// Replaces the value unconditionally.
    pub(crate) fn swap(&self, new: Option<std::sync::Arc<T>>) {
        *self.inner.lock().unwrap() = new;
    }
}

/// A concurrent map for read-mostly indexes whose readers must scale: papaya (lock-free reads
/// behind an epoch guard, no shared write per read), or under loom a loom `Mutex` around a
/// `HashMap`. `docs/TAG.md` has the benchmark that chose it over dashmap and an RCU map.
pub(crate) struct ReadMap<K, V> {
    #[cfg(not(wkcore_loom))]
    inner: papaya::HashMap<K, V, ahash::RandomState>,
    #[cfg(wkcore_loom)]
    inner: loom::sync::Mutex<std::collections::HashMap<K, V>>,
}

impl<K: Eq + std::hash::Hash, V: Clone> ReadMap<K, V> {
    /// An empty map.
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(wkcore_loom))]
            inner: papaya::HashMap::builder()
                .hasher(ahash::RandomState::new())
                // Incremental resizing: no insert pays for copying the whole table at once.
                .resize_mode(papaya::ResizeMode::Incremental(1024))
                .build(),
            #[cfg(wkcore_loom)]
            inner: loom::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Runs `f` on the value under `key`, if any, while it cannot be reclaimed.
    #[inline]
    pub(crate) fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.pin().get(key).map(f)
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().get(key).map(f)
        }
    }

    /// A clone of the value under `key`.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        self.with(key, V::clone)
    }

    /// The value under `key`, inserting the one `make` builds if there is none (`make` runs
    /// first, and its value is dropped when the key is present: callers look the key up first).
    pub(crate) fn get_or_insert_with(&self, key: K, make: impl FnOnce() -> V) -> V {
        #[cfg(not(wkcore_loom))]
        {
            // `try_insert`, not papaya's `get_or_insert_with`: with incremental resizing, keys
            // inserted through the latter left later gets probing ~100 slots (measured with
            // callgrind, bench/examples/tag_instructions.rs: 1054 → see docs/PERFORMANCE.md).
            match self.inner.pin().try_insert(key, make()) {
                Ok(value) => value.clone(),
                Err(occupied) => occupied.current.clone(),
            }
        }
        #[cfg(wkcore_loom)]
        {
            self.inner
                .lock()
                .unwrap()
                .entry(key)
                .or_insert_with(make)
                .clone()
        }
    }

    /// Inserts or replaces; the previous value.
    pub(crate) fn insert(&self, key: K, value: V) -> Option<V> {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.pin().insert(key, value).cloned()
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().insert(key, value)
        }
    }

    /// Removes the entry under `key` if `matches` accepts its value; whether it did.
    pub(crate) fn remove_if<Q>(&self, key: &Q, matches: impl FnMut(&V) -> bool) -> bool
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + std::hash::Hash + ?Sized,
    {
        let mut matches = matches;
        #[cfg(not(wkcore_loom))]
        {
            matches!(
                self.inner.pin().remove_if(key, |_, v| matches(v)),
                Ok(Some(_))
            )
        }
        #[cfg(wkcore_loom)]
        {
            let mut map = self.inner.lock().unwrap();
            if map.get(key).is_some_and(&mut matches) {
                map.remove(key);
                true
            } else {
                false
            }
        }
    }

    /// The number of entries (a moment's view).
    pub(crate) fn len(&self) -> usize {
        #[cfg(not(wkcore_loom))]
        {
            self.inner.len()
        }
        #[cfg(wkcore_loom)]
        {
            self.inner.lock().unwrap().len()
        }
    }
}
