//! The slot's queue storage: a power-of-two ring indexed by admission tickets, allocated in
//! segments as positions are first used.
//!
//! There is no separate queue protocol. The admission CAS that reserves `n` items also hands out
//! their positions: the run starts at the old `admitted` counter (the *ticket*). Admission
//! guarantees `ticket + n - released <= limit <= capacity`, so the places a producer writes were
//! freed by the consumer, and it *knows* they are free; no push can fail and none needs an RMW.
//! A run is one queue element however many items it holds: the producer writes its items, then
//! publishes one [`Stamp`] in the run's first place; the consumer reads stamps only at run heads.
//!
//! The consumer never writes the ring: it recognizes the next run by its head stamp's ticket.
//! Every position gets a fresh stamp each lap (the run's head its stamp, the other positions
//! [`Stamp::EMPTY`]), so a stamp the consumer can read at a position is at most one lap old, and a
//! one-lap-old stamp carries a ticket that differs from the expected one by the capacity (less
//! than the ticket modulus). Keeping the consumer read-only matters in a tight producer →
//! consumer pipeline: a line the consumer only reads costs the producer an invalidation, not a
//! transfer back.
//!
//! # Segments
//!
//! The capacity (the total limit's next power of two, up to `2^25`) is split into segments that
//! double in size: segment 0 holds positions `[0, F)`, segment `k >= 1` holds `[F·2^(k-1), F·2^k)`,
//! with `F` = [`FIRST_SEGMENT`] places (or the whole capacity when it is smaller). The table of
//! segment pointers is a fixed array inside the ring (at most [`SEGMENTS`] entries, 18), so it
//! costs no allocation and no pointer hop, and an idle slot holds no segment at all; a slot that
//! has used positions up to `p` holds about `p` places (at most twice), and after one full lap
//! the whole capacity. Segments stay until the ring is dropped: a high-water mark, as upstream's
//! control slice keeps its spare backing array. (Equal-sized segments would force a choice
//! between a large table at `2^25` and a large first segment; doubling gives both small.)
//!
//! A producer that writes a position whose segment is missing allocates the segment (every stamp
//! [`Stamp::EMPTY`]) and installs it with a CAS from null; a producer that loses the race frees
//! its copy and uses the winner's. The consumer reads a missing segment as empty stamps: nothing
//! there is published yet. The consumer keeps the segment it last read in a *window* of its own
//! (a pointer and the segment's index range; only the consumer, holding the slot's consumer
//! gate, touches it), so it looks a segment up once per segment, not once per run: installed
//! pointers never change, so a cached one stays valid.
//!
//! # Orderings
//!
//! - The producer's `Release` store of a head stamp ([`Ring::publish`], [`Ring::write_one`])
//!   pairs with the consumer's `Acquire` load in [`Ring::stamp`]: the run's items, and its
//!   interior stamps, are written before the consumer reads them. Through that edge, a stamp the
//!   consumer reads later at an interior position is this lap's or newer (coherence), which is
//!   what bounds staleness to one lap.
//! - A segment's install CAS (`Release` on success) pairs with every `Acquire` load of the
//!   segment pointer (producers' in `segment_for_write`, the losing CAS's failure load, the
//!   consumer's in [`Ring::stamp`] and [`Ring::take_run`]): whoever uses a segment sees it
//!   initialized (every stamp empty). Everything a producer touched before its `Release` stamp
//!   store, segment installs included, happens before the consumer's reads past its `Acquire`
//!   stamp load, so the segments of a published run are never null to the consumer (coherence:
//!   a pointer goes from null to its segment once and never back).
//! - The consumer's reads of items happen before its `Release` store of the released counter
//!   (in `slot.rs`), which pairs with the producers' `Acquire` loads of it; a producer writes a
//!   place only after that chain, so a place is never written while it is read.
//! - Dropping the ring (`&mut self`: every other access happened before, through whatever handed
//!   over the last reference) reads the pointers with `Relaxed` loads and frees what is
//!   installed. Items still in the ring were drained by the slot's own `Drop` before.

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use super::limits::SlotLimits;
use super::state::Stamp;
use crate::sync::{AtomicPtr, AtomicU64, Ordering, UnsafeCell};

/// `log2` of [`FIRST_SEGMENT`]: 256 places (4 KiB for the C ABI's 8-byte tokens). Under loom,
/// 2 places, so that small models cross segment boundaries and race on installs.
const FIRST_SEGMENT_SHIFT: u32 = if cfg!(wkcore_loom) { 1 } else { 8 };
/// Places in segment 0 (and in segment 1) of a ring at least this large.
pub(crate) const FIRST_SEGMENT: u64 = 1 << FIRST_SEGMENT_SHIFT;
/// Entries of the segment table: enough for the largest capacity, `2^25`.
pub(crate) const SEGMENTS: usize =
    (SlotLimits::MAX.trailing_zeros() - FIRST_SEGMENT_SHIFT + 1) as usize;
const _: () = assert!(SlotLimits::MAX.is_power_of_two());

struct Cell<T> {
    stamp: AtomicU64,
    item: UnsafeCell<MaybeUninit<T>>,
}

/// The consumer's cached segment: ring indices `[first, end)` live at `cells`. Empty
/// (`first == end`) until the consumer first reads an installed segment.
struct Window<T> {
    cells: *mut Cell<T>,
    first: u64,
    end: u64,
}

impl<T> Window<T> {
    const EMPTY: Self = Window {
        cells: ptr::null_mut(),
        first: 0,
        end: 0,
    };
}

/// Ring storage of `capacity` items (a power of two) in doubling segments; see the module docs.
///
/// A stamp and its item share a cache line, so a producer's single admission touches one line of
/// the ring.
///
/// `S` is the owning slot's decision strategy (`slot.rs`, `SlotStrategy`). The ring does not use
/// it: carrying it here is what lets the slot's type name its strategy without a marker field of
/// its own.
pub(crate) struct Ring<T, S> {
    /// Segment `k`'s places, or null until a producer first writes one of them.
    segments: [AtomicPtr<Cell<T>>; SEGMENTS],
    mask: u64,
    /// The consumer's window (module docs, "Segments"); only the consumer touches it.
    window: UnsafeCell<Window<T>>,
    /// The ring owns the segments' cells (and, while queued, their items).
    owns: PhantomData<Cell<T>>,
    strategy: PhantomData<fn() -> S>,
}

// SAFETY: items are moved in by one producer and out by the consumer, with the happens-before
// edges of the module docs; `T: Send` is all that moving them across threads needs (`S` is only
// a type marker). Segments are plain heap memory owned by the ring.
unsafe impl<T: Send, S> Send for Ring<T, S> {}
// SAFETY: as above; no `&T` is ever shared between threads.
unsafe impl<T: Send, S> Sync for Ring<T, S> {}

impl<T, S> Ring<T, S> {
    /// A ring of `capacity` places (a power of two, at most `2^25`); allocates nothing.
    pub(crate) fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two() && capacity <= SlotLimits::MAX as usize,
            "ring capacity must be a power of two, at most SlotLimits::MAX"
        );
        Self {
            segments: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            mask: capacity as u64 - 1,
            window: UnsafeCell::new(Window::EMPTY),
            owns: PhantomData,
            strategy: PhantomData,
        }
    }

    /// The same storage, typed for another strategy.
    #[cfg(feature = "test-strategies")]
    pub(crate) fn with_strategy<S2>(self) -> Ring<T, S2> {
        Ring {
            // Ordering: Relaxed; `self` is owned here, nothing races.
            segments: std::array::from_fn(|k| {
                AtomicPtr::new(self.segments[k].swap(ptr::null_mut(), Ordering::Relaxed))
            }),
            mask: self.mask,
            window: UnsafeCell::new(Window::EMPTY),
            owns: PhantomData,
            strategy: PhantomData,
        }
        // `self` drops with every pointer null: it frees nothing.
    }

    /// The ring's capacity.
    #[inline]
    fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// The segment of `position` and the place's offset in it.
    #[inline]
    fn locate(&self, position: u64) -> (usize, usize) {
        let index = position & self.mask;
        // Segment k >= 1 holds the indices whose top bit is bit FIRST_SEGMENT_SHIFT + k - 1;
        // with the low bits set, every index of segment 0 has the top bit of segment 1 less one.
        let zeros = (index | (FIRST_SEGMENT - 1)).leading_zeros();
        let segment = (u64::BITS - FIRST_SEGMENT_SHIFT - zeros) as usize;
        // Its first index: that top bit, and 0 for segment 0 (whose "top bit",
        // FIRST_SEGMENT / 2, the mask clears).
        let start = ((1u64 << 63) >> zeros) & !(FIRST_SEGMENT - 1);
        debug_assert!(segment < SEGMENTS && start <= index);
        (segment, (index - start) as usize)
    }

    /// The number of places in segment `segment` of this ring.
    #[inline]
    fn segment_len(&self, segment: usize) -> usize {
        if segment == 0 {
            FIRST_SEGMENT.min(self.capacity()) as usize
        } else {
            (FIRST_SEGMENT << (segment - 1)) as usize
        }
    }

    #[inline]
    fn slot(&self, segment: usize) -> &AtomicPtr<Cell<T>> {
        debug_assert!(segment < SEGMENTS);
        // SAFETY: `locate` returns segments below SEGMENTS: an index below the capacity
        // (at most 2^25) has at most 25 bits, so its bit length past FIRST_SEGMENT_SHIFT is at
        // most SEGMENTS - 1.
        unsafe { self.segments.get_unchecked(segment) }
    }

    /// Segment `segment`, installed (by this call if nobody did yet), for a producer.
    #[inline]
    fn segment_for_write(&self, segment: usize) -> *mut Cell<T> {
        // Ordering: Acquire; pairs with the Release install CAS in `install`, so the segment's
        // initial stamps are visible.
        let cells = self.slot(segment).load(Ordering::Acquire);
        if cells.is_null() {
            self.install(segment)
        } else {
            cells
        }
    }

    /// Allocates segment `segment` and installs it unless another producer did; returns the
    /// installed one.
    #[cold]
    #[inline(never)]
    fn install(&self, segment: usize) -> *mut Cell<T> {
        let len = self.segment_len(segment);
        let fresh: Box<[Cell<T>]> = (0..len)
            .map(|_| Cell {
                stamp: AtomicU64::new(Stamp::EMPTY.0),
                item: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        let fresh = Box::into_raw(fresh).cast::<Cell<T>>();
        // Ordering: Release on success; pairs with the Acquire loads of the pointer (module
        // docs), publishing the initialized stamps. Acquire on failure; pairs with the winner's
        // Release, for the same reason.
        match self.slot(segment).compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::Release,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(winner) => {
                // SAFETY: `fresh` came from `Box::into_raw` of `len` cells just above and was
                // never shared; its items are uninitialized, so dropping drops no item.
                drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(fresh, len)) });
                winner
            }
        }
    }

    /// The cell at `offset` of an installed segment of this ring.
    ///
    /// # Safety
    ///
    /// `cells` is a non-null pointer loaded from this ring's table, and `offset` is below that
    /// segment's length.
    #[inline]
    unsafe fn cell(&self, cells: *mut Cell<T>, offset: usize) -> &Cell<T> {
        // SAFETY: in bounds by the contract; a segment lives as long as the ring.
        unsafe { &*cells.add(offset) }
    }

    /// Moves `item` into the place of `position` and publishes it as a run of one.
    ///
    /// # Safety
    ///
    /// The caller holds the admission ticket for `position` (so the place's previous item was
    /// taken and that is visible to this thread), and writes each position once.
    #[inline]
    pub(crate) unsafe fn write_one(&self, position: u64, item: T, stamp: Stamp) {
        let (segment, offset) = self.locate(position);
        let cells = self.segment_for_write(segment);
        // SAFETY: installed segment, offset from `locate`.
        let cell = unsafe { self.cell(cells, offset) };
        cell.item.with_mut(|place| {
            // SAFETY: exclusive by the caller's ticket (see the function's contract).
            unsafe { (*place).write(item) };
        });
        // Ordering: Release; pairs with the Acquire load in `stamp`, publishing the item.
        cell.stamp.store(stamp.0, Ordering::Release);
    }

    /// Moves `n` items into the places from `position` on, stamping every position but the head
    /// empty for this lap (the head is stamped by [`Ring::publish`]); returns how many it moved
    /// (fewer than `n` only if `items` ran out).
    ///
    /// # Safety
    ///
    /// As [`Ring::write_one`], for every position of `position..position + n`.
    #[inline]
    pub(crate) unsafe fn write_run(
        &self,
        position: u64,
        n: u64,
        mut items: impl Iterator<Item = T>,
    ) -> u64 {
        let mut written = 0u64;
        while written < n {
            let (segment, offset) = self.locate(position.wrapping_add(written));
            let cells = self.segment_for_write(segment);
            let room = (self.segment_len(segment) - offset) as u64;
            let chunk = room.min(n - written) as usize;
            let mut moved = 0usize;
            for item in items.by_ref().take(chunk) {
                // SAFETY: installed segment; `offset + moved < offset + room`, the segment's end.
                let cell = unsafe { self.cell(cells, offset + moved) };
                cell.item.with_mut(|place| {
                    // SAFETY: exclusive by the caller's tickets (see the function's contract).
                    unsafe { (*place).write(item) };
                });
                // The head too: `publish` overwrites it with the run's stamp.
                // Ordering: Relaxed; published by the head's Release store in `publish`.
                cell.stamp.store(Stamp::EMPTY.0, Ordering::Relaxed);
                moved += 1;
            }
            written += moved as u64;
            if moved < chunk {
                break;
            }
        }
        written
    }

    /// Publishes the run whose head is `position`.
    ///
    /// # Safety
    ///
    /// As [`Ring::write_one`]; every item of the run has been written by [`Ring::write_run`].
    #[inline]
    pub(crate) unsafe fn publish(&self, position: u64, stamp: Stamp) {
        let (segment, offset) = self.locate(position);
        // The head's segment was installed by `write_run`, in this thread.
        let cells = self.segment_for_write(segment);
        // SAFETY: installed segment, offset from `locate`.
        let cell = unsafe { self.cell(cells, offset) };
        // Ordering: Release; pairs with the Acquire load in `stamp`, publishing the run's items
        // and interior stamps.
        cell.stamp.store(stamp.0, Ordering::Release);
    }

    /// For the consumer: the cell of `position` and how many places from it on are in the same
    /// segment, or `None` where the segment is not installed yet.
    ///
    /// # Safety
    ///
    /// Only the consumer calls this: the thread that holds the slot's consumer gate, which
    /// orders it after every previous holder (it owns the window).
    #[inline]
    unsafe fn consumer_cell(&self, position: u64) -> Option<(&Cell<T>, u64)> {
        let index = position & self.mask;
        self.window.with_mut(|window| {
            // SAFETY: only the consumer touches the window (contract).
            let window = unsafe { &mut *window };
            if index.wrapping_sub(window.first) >= window.end - window.first
                && !self.refill(window, index)
            {
                return None;
            }
            // SAFETY: `first <= index < end`, the window's installed segment.
            let cell = unsafe { &*window.cells.add((index - window.first) as usize) };
            Some((cell, window.end - index))
        })
    }

    /// Points `window` at the segment of `index`, if it is installed.
    #[cold]
    #[inline(never)]
    fn refill(&self, window: &mut Window<T>, index: u64) -> bool {
        let (segment, offset) = self.locate(index);
        // Ordering: Acquire; pairs with the Release install CAS in `install`. Once installed, a
        // pointer never changes until the ring is dropped, so the window may keep it.
        let cells = self.slot(segment).load(Ordering::Acquire);
        if cells.is_null() {
            return false;
        }
        let first = index - offset as u64;
        *window = Window {
            cells,
            first,
            end: first + self.segment_len(segment) as u64,
        };
        true
    }

    /// The place of `position`, for the consumer to read its stamp and the stamps of the places
    /// after it in the same segment ([`Head::next`]) without looking each up; `None` where the
    /// segment is not installed yet (nothing there is published).
    ///
    /// # Safety
    ///
    /// Only the consumer calls this (as [`Ring::consumer_cell`]).
    #[inline]
    pub(crate) unsafe fn head(&self, position: u64) -> Option<Head<'_, T>> {
        // SAFETY: forwarded contract.
        unsafe { self.consumer_cell(position) }.map(|(cell, left)| Head {
            cell,
            following: left - 1,
        })
    }

    /// Moves the `n` items from `position` on out, in order, handing each to `each`.
    ///
    /// # Safety
    ///
    /// Only the consumer calls this (as [`Ring::consumer_cell`]), once per position of a run it
    /// read as ready ([`Ring::stamp`]), and `n` is at most the capacity. If `each` unwinds, the
    /// items not yet handed over stay in the ring.
    #[inline]
    pub(crate) unsafe fn take_run(&self, position: u64, n: u64, mut each: impl FnMut(T)) {
        let mut taken = 0u64;
        while taken < n {
            // SAFETY: forwarded contract. Not `None`: the run's producer installed its segments
            // before its Release stamp store, which this thread's Acquire stamp load read
            // (module docs, "Orderings").
            let Some((first, left)) = (unsafe { self.consumer_cell(position.wrapping_add(taken)) })
            else {
                debug_assert!(false, "a published run's segment is installed");
                return;
            };
            let chunk = left.min(n - taken) as usize;
            let cells: *const Cell<T> = first;
            for i in 0..chunk {
                // SAFETY: `i < left`: in the same installed segment as `first`.
                let cell = unsafe { &*cells.add(i) };
                let item = cell.item.with(|place| {
                    // SAFETY: the item was written and published (contract) and is read once.
                    unsafe { (*place).assume_init_read() }
                });
                each(item);
            }
            taken += chunk as u64;
        }
    }

    /// Bytes of the segments installed so far (the ring's own struct not included).
    pub(crate) fn allocated_bytes(&self) -> usize {
        (0..SEGMENTS)
            // Ordering: Relaxed; only whether a segment is installed is read, nothing behind it.
            .filter(|&k| !self.segments[k].load(Ordering::Relaxed).is_null())
            .map(|k| self.segment_len(k) * std::mem::size_of::<Cell<T>>())
            .sum()
    }
}

/// A place the consumer found with [`Ring::head`], and how many places follow it in the same
/// installed segment.
pub(crate) struct Head<'a, T> {
    cell: &'a Cell<T>,
    following: u64,
}

impl<'a, T> Head<'a, T> {
    /// The places after this one in its segment: how many times [`Head::next`] may be called
    /// in a row, so a consumer walks a segment without looking each place up.
    #[inline]
    pub(crate) fn following(&self) -> u64 {
        self.following
    }

    /// The place of the next position.
    ///
    /// # Safety
    ///
    /// [`Head::following`] is not zero, and only the consumer calls this (as [`Ring::head`]).
    #[inline]
    pub(crate) unsafe fn next(&self) -> Head<'a, T> {
        debug_assert!(self.following > 0);
        let cell: *const Cell<T> = self.cell;
        Head {
            // SAFETY: `following > 0`: the next place is in the same installed segment, which
            // lives as long as the ring.
            cell: unsafe { &*cell.add(1) },
            following: self.following - 1,
        }
    }

    /// The place's stamp.
    #[inline]
    pub(crate) fn stamp(&self) -> Stamp {
        // Ordering: Acquire; pairs with the Release stores in `publish` and `write_one`.
        Stamp(self.cell.stamp.load(Ordering::Acquire))
    }
}

impl<T, S> Drop for Ring<T, S> {
    fn drop(&mut self) {
        for k in 0..SEGMENTS {
            // Ordering: Relaxed; `&mut self` (module docs, "Orderings").
            let cells = self.segments[k].load(Ordering::Relaxed);
            if !cells.is_null() {
                let len = self.segment_len(k);
                // SAFETY: installed by `install` from `Box::into_raw` of `len` cells (the length
                // is a function of `k` and the capacity alone), freed once, here. Items left in it
                // were taken by the slot's `Drop`, or are not initialized: cells drop no item.
                drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(cells, len)) });
            }
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_the_capacity() {
        for shift in 0..=SlotLimits::MAX.trailing_zeros() {
            let ring = Ring::<u64, ()>::new(1 << shift);
            let capacity = ring.capacity();
            // Segment k starts where k - 1 ends, and the last one ends at the capacity.
            let mut start = 0u64;
            let mut k = 0;
            while start < capacity {
                let len = ring.segment_len(k) as u64;
                assert_eq!(ring.locate(start), (k, 0), "capacity 2^{shift}");
                assert_eq!(ring.locate(start + len - 1), (k, len as usize - 1));
                start += len;
                k += 1;
            }
            assert_eq!(start, capacity, "segments tile the capacity 2^{shift}");
            assert!(k <= SEGMENTS);
            // Positions wrap onto the same places.
            assert_eq!(ring.locate(capacity + 3), ring.locate(3));
        }
        assert_eq!(SEGMENTS, 18);
        // Every index of a small ring, one by one.
        let ring = Ring::<u64, ()>::new(2048);
        let mut expect = (0, 0);
        for index in 0..2048 {
            assert_eq!(ring.locate(index), expect);
            expect.1 += 1;
            if expect.1 == ring.segment_len(expect.0) {
                expect = (expect.0 + 1, 0);
            }
        }
    }

    #[test]
    fn segments_are_allocated_as_positions_are_written() {
        let ring = Ring::<u64, ()>::new(1024);
        let cell = std::mem::size_of::<Cell<u64>>();
        assert_eq!(cell, 16);
        assert_eq!(ring.allocated_bytes(), 0);
        // SAFETY: this thread is the only consumer.
        assert!(unsafe { ring.head(5) }.is_none(), "no segment yet");
        // SAFETY: single-threaded; each position written once and taken once.
        unsafe {
            ring.write_one(0, 7, Stamp(1 << 63));
            assert_eq!(ring.allocated_bytes(), 256 * cell);
            // A run across segments 0, 1 and 2.
            assert_eq!(ring.write_run(250, 300, 0..300), 300);
            assert_eq!(ring.allocated_bytes(), 1024 * cell);
            let mut got = Vec::new();
            ring.take_run(250, 300, |x| got.push(x));
            assert_eq!(got, (0..300).collect::<Vec<_>>());
            ring.take_run(0, 1, |x| assert_eq!(x, 7));
        }
        // A short iterator is reported, never padded.
        // SAFETY: as above (positions not written before on this lap).
        assert_eq!(unsafe { ring.write_run(600, 10, 0..4) }, 4);
        // SAFETY: the four items written just above.
        unsafe { ring.take_run(600, 4, drop) };
    }
}
