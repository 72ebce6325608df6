//! The slot's queue storage: a power-of-two ring indexed by admission tickets.
//!
//! There is no separate queue protocol. The admission CAS that reserves `n` items also hands out
//! their positions: the run starts at the old `admitted` counter (the *ticket*). Admission
//! guarantees `ticket + n - released <= limit <= capacity`, so the slots a producer writes were
//! freed by the consumer, and it *knows* they are free; no push can fail and none needs an RMW.
//! A run is one queue element however many items it holds: the producer writes its items, then
//! publishes one [`Stamp`] in the run's first slot; the consumer reads stamps only at run heads.
//!
//! Every non-empty stamp is the head of a run not yet taken: the consumer clears a head's stamp
//! when it starts taking that run, before it releases the run's slots, so a stale stamp can never
//! be mistaken for a new run on a later lap.
//!
//! # Orderings
//!
//! - The producer's `Release` store of a stamp ([`Ring::publish`]) pairs with the consumer's
//!   `Acquire` load in [`Ring::stamp`]: the run's items are written before the consumer reads them.
//! - The consumer's reads of items and its `Relaxed` clear of a stamp happen before its
//!   `Release` store of the released counter (in `slot.rs`), which pairs with the producers'
//!   `Acquire` loads of it; a producer writes a slot only after that chain, so a slot is never
//!   written while it is read, and a cleared stamp is never overwritten by a stale clear.

use std::mem::MaybeUninit;

use super::state::Stamp;
use crate::sync::{AtomicU64, Ordering, UnsafeCell};

struct Cell<T> {
    stamp: AtomicU64,
    item: UnsafeCell<MaybeUninit<T>>,
}

/// Ring storage of `capacity` items (a power of two); see the module docs.
pub(crate) struct Ring<T> {
    cells: Box<[Cell<T>]>,
    mask: u64,
}

// SAFETY: items are moved in by one producer and out by the consumer, with the happens-before
// edges of the module docs; `T: Send` is all that moving them across threads needs.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; no `&T` is ever shared between threads.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring of `capacity` slots; `capacity` must be a power of two.
    pub(crate) fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two(),
            "ring capacity must be a power of two"
        );
        let cells = (0..capacity)
            .map(|_| Cell {
                stamp: AtomicU64::new(Stamp::EMPTY.0),
                item: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Self {
            cells,
            mask: capacity as u64 - 1,
        }
    }

    #[inline]
    fn cell(&self, position: u64) -> &Cell<T> {
        // The mask keeps the index in bounds; `get_unchecked` is not worth an unsafe block.
        &self.cells[(position & self.mask) as usize]
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

    /// Publishes the run whose head is `position`.
    ///
    /// # Safety
    ///
    /// As [`Ring::write`]; every item of the run has been written.
    #[inline]
    pub(crate) unsafe fn publish(&self, position: u64, stamp: Stamp) {
        // Ordering: Release; pairs with the Acquire load in `stamp`, publishing the run's items.
        self.cell(position).stamp.store(stamp.0, Ordering::Release);
    }

    /// The stamp at `position`: [`Stamp::EMPTY`] or a published run head.
    #[inline]
    pub(crate) fn stamp(&self, position: u64) -> Stamp {
        // Ordering: Acquire; pairs with the Release store in `publish`.
        Stamp(self.cell(position).stamp.load(Ordering::Acquire))
    }

    /// Clears the head stamp at `position` (the consumer has started taking its run).
    ///
    /// # Safety
    ///
    /// Only the consumer calls this, on a run head it read as ready and has not released.
    #[inline]
    pub(crate) unsafe fn clear(&self, position: u64) {
        // Ordering: Relaxed; ordered before the next write of this slot by the consumer's
        // Release store of the released counter (module docs).
        self.cell(position)
            .stamp
            .store(Stamp::EMPTY.0, Ordering::Relaxed);
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
