//! The slot's queue storage: a power-of-two ring indexed by admission tickets.
//!
//! There is no separate queue protocol. The admission CAS that reserves `n` items also hands out
//! their positions: the run starts at the old `admitted` counter (the *ticket*). Admission
//! guarantees `ticket + n - released <= limit <= capacity`, so the slots a producer writes were
//! freed by the consumer, and it *knows* they are free; no push can fail and none needs an RMW.
//! A run is one queue element however many items it holds: the producer writes its items, then
//! publishes one [`Stamp`] in the run's first slot; the consumer reads stamps only at run heads.
//!
//! The consumer never writes the ring: it recognizes the next run by its head stamp's ticket.
//! Every position gets a fresh stamp each lap (the run's head its stamp, the other positions
//! [`Stamp::EMPTY`]), so a stamp the consumer can read at a position is at most one lap old, and a
//! one-lap-old stamp carries a ticket that differs from the expected one by the capacity (less
//! than the ticket modulus). Keeping the consumer read-only matters in a tight producer →
//! consumer pipeline: a line the consumer only reads costs the producer an invalidation, not a
//! transfer back.
//!
//! # Orderings
//!
//! - The producer's `Release` store of a head stamp ([`Ring::publish`]) pairs with the consumer's
//!   `Acquire` load in [`Ring::stamp`]: the run's items, and its interior stamps, are written
//!   before the consumer reads them. Through that edge, a stamp the consumer reads later at an
//!   interior position is this lap's or newer (coherence), which is what bounds staleness to one lap.
//! - The consumer's reads of items happen before its `Release` store of the released counter
//!   (in `slot.rs`), which pairs with the producers' `Acquire` loads of it; a producer writes a
//!   slot only after that chain, so a slot is never written while it is read.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::state::Stamp;
use crate::sync::{AtomicU64, Ordering, UnsafeCell};

struct Cell<T> {
    stamp: AtomicU64,
    item: UnsafeCell<MaybeUninit<T>>,
}

/// Ring storage of `capacity` items (a power of two); see the module docs.
///
/// A stamp and its item share a cache line, so a producer's single admission touches one line.
///
/// `S` is the owning slot's decision strategy (`slot.rs`, `SlotStrategy`). The ring does not use
/// it: carrying it here is what lets the slot's type name its strategy without a marker field of
/// its own.
pub(crate) struct Ring<T, S> {
    cells: Box<[Cell<T>]>,
    mask: u64,
    strategy: PhantomData<fn() -> S>,
}

// SAFETY: items are moved in by one producer and out by the consumer, with the happens-before
// edges of the module docs; `T: Send` is all that moving them across threads needs (`S` is only
// a type marker).
unsafe impl<T: Send, S> Send for Ring<T, S> {}
// SAFETY: as above; no `&T` is ever shared between threads.
unsafe impl<T: Send, S> Sync for Ring<T, S> {}

impl<T, S> Ring<T, S> {
    /// A ring of `capacity` slots; `capacity` must be a power of two.
    pub(crate) fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two(),
            "ring capacity must be a power of two"
        );
        Self {
            cells: (0..capacity)
                .map(|_| Cell {
                    stamp: AtomicU64::new(Stamp::EMPTY.0),
                    item: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            mask: capacity as u64 - 1,
            strategy: PhantomData,
        }
    }

    /// The same storage, typed for another strategy.
    #[cfg(feature = "test-strategies")]
    pub(crate) fn with_strategy<S2>(self) -> Ring<T, S2> {
        Ring {
            cells: self.cells,
            mask: self.mask,
            strategy: PhantomData,
        }
    }

    #[inline]
    fn cell(&self, position: u64) -> &Cell<T> {
        let index = (position & self.mask) as usize;
        debug_assert!(index < self.cells.len());
        // SAFETY: `mask == cells.len() - 1` with `cells.len()` a power of two (see `new`), so
        // `position & mask` is in bounds.
        unsafe { self.cells.get_unchecked(index) }
    }

    /// Moves `item` into the slot of `position`.
    ///
    /// # Safety
    ///
    /// The caller holds the admission ticket for `position` (so the slot's previous item was
    /// taken and that is visible to this thread), and writes each position once.
    #[inline]
    pub(crate) unsafe fn write(&self, position: u64, item: T) {
        self.cell(position).item.with_mut(|slot| {
            // SAFETY: exclusive by the caller's ticket (see the function's contract).
            unsafe { (*slot).write(item) };
        });
    }

    /// Moves a run of items into the slots from `position` on, stamping every position but the
    /// head empty for this lap (the head is stamped by [`Ring::publish`]); returns how many.
    ///
    /// # Safety
    ///
    /// As [`Ring::write`], for every position the iterator fills.
    #[inline]
    pub(crate) unsafe fn write_run(
        &self,
        position: u64,
        mut items: impl Iterator<Item = T>,
    ) -> u64 {
        let mut n = 0u64;
        for item in items.by_ref() {
            let cell = self.cell(position.wrapping_add(n));
            cell.item.with_mut(|slot| {
                // SAFETY: exclusive by the caller's tickets (see the function's contract).
                unsafe { (*slot).write(item) };
            });
            // The head too: `publish` overwrites it with the run's stamp.
            // Ordering: Relaxed; published by the head's Release store in `publish`.
            cell.stamp.store(Stamp::EMPTY.0, Ordering::Relaxed);
            n += 1;
        }
        n
    }

    /// Publishes the run whose head is `position`.
    ///
    /// # Safety
    ///
    /// As [`Ring::write`]; every item of the run has been written by [`Ring::write`] (a run of
    /// one) or [`Ring::write_run`].
    #[inline]
    pub(crate) unsafe fn publish(&self, position: u64, stamp: Stamp) {
        // Ordering: Release; pairs with the Acquire load in `stamp`, publishing the run's items
        // and interior stamps.
        self.cell(position).stamp.store(stamp.0, Ordering::Release);
    }

    /// The stamp at `position`: a published run head of some lap, or [`Stamp::EMPTY`].
    #[inline]
    pub(crate) fn stamp(&self, position: u64) -> Stamp {
        // Ordering: Acquire; pairs with the Release store in `publish`.
        Stamp(self.cell(position).stamp.load(Ordering::Acquire))
    }

    /// Moves the `n` items from `position` on out, in order, handing each to `each`.
    ///
    /// # Safety
    ///
    /// As [`Ring::take`], for every position of `position..position + n`, and `n` is at most
    /// the capacity. If `each` unwinds, the items not yet handed over stay in the ring.
    #[inline]
    pub(crate) unsafe fn take_run(&self, position: u64, n: u64, mut each: impl FnMut(T)) {
        for i in 0..n {
            // SAFETY: forwarded contract.
            each(unsafe { self.take(position.wrapping_add(i)) });
        }
    }

    /// Moves the item at `position` out.
    ///
    /// # Safety
    ///
    /// Only the consumer calls this, once per position of a run it read as ready.
    #[inline]
    pub(crate) unsafe fn take(&self, position: u64) -> T {
        self.cell(position).item.with(|slot| {
            // SAFETY: the item was written and published (contract) and is read exactly once.
            unsafe { (*slot).assume_init_read() }
        })
    }
}
