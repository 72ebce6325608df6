//! The library's own heap, counted: the global allocator of `libwkcore` and
//! `wk_memory_stats_get`.
//!
//! Every allocation the library makes (any system's, on any thread) goes through
//! [`CountingAllocator`], which hands it to the system allocator (`malloc`) and counts the bytes
//! asked for. A host reads the sum with `wk_memory_stats_get`: the memory the library holds now,
//! as opposed to the process's resident set, which also holds the allocator's free lists, its
//! per-thread arenas and their fragmentation (`docs/ABI.md`, "The library's memory").
//!
//! # Cost
//!
//! A thread gets a row of its own on its first allocation (one of 255; each cache-line
//! padded), and counts into it with a plain load and store: no locked instruction, no line
//! shared with another thread. Threads beyond the first `OWN_ROWS` (a host that keeps starting
//! threads) share one row and count with `fetch_add`. A row is never given back: a row must not
//! change hands while its thread may still count into it, and telling when a thread has
//! finished would take a thread-exit hook, which itself allocates.
//!
//! # Orderings
//!
//! Every access is `Relaxed`, and nothing is published through these words: they are gauges,
//! not synchronisation. A row's own counts are written by one thread only, so its load-then-
//! store never loses an update; the shared row uses read-modify-writes for the same reason. A
//! reader sums the rows one by one while threads allocate, so the sum is not one moment's state:
//! it can miss the counts of allocations made during the read, and a block freed on another
//! thread than the one that allocated it can be subtracted in a row the reader has already
//! passed, or added in one it has not reached yet. Each row's value is one that row really had
//! (coherence), so once the threads stop the sum is exact; while they run it is off by at most
//! what was allocated and freed during the read. A negative sum (a free counted before its
//! allocation) is reported as 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::handle::{check_out, write_sized};
use crate::panic::ffi_panic_boundary;
use crate::status::wk_status;

/// Rows a thread owns alone; the next threads share row `OWN_ROWS`.
pub(crate) const OWN_ROWS: usize = 255;

/// One thread's counts (or the shared row's), on a cache line pair of its own.
#[repr(align(128))]
struct Row {
    /// Bytes allocated minus bytes freed through this row (negative when this thread frees more
    /// than it allocated: blocks allocated on other threads).
    bytes: AtomicI64,
    /// Blocks allocated minus blocks freed through this row.
    blocks: AtomicI64,
    /// Allocations through this row since the library was loaded (reallocations included).
    allocations: AtomicU64,
}

impl Row {
    const fn new() -> Self {
        Self {
            bytes: AtomicI64::new(0),
            blocks: AtomicI64::new(0),
            allocations: AtomicU64::new(0),
        }
    }
}

/// `OWN_ROWS` owned rows and the shared one.
static ROWS: [Row; OWN_ROWS + 1] = [const { Row::new() }; OWN_ROWS + 1];

/// The next row to give a thread.
static NEXT_ROW: AtomicU32 = AtomicU32::new(0);

/// `u32::MAX` until this thread's first allocation, then its row. No destructor, so reading it
/// never registers one (which would allocate inside the allocator).
const UNASSIGNED: u32 = u32::MAX;
thread_local! {
    static MY_ROW: Cell<u32> = const { Cell::new(UNASSIGNED) };
}

// The calling thread's own counts, exact whatever row it counts in: what this crate's tests
// measure a call by (a test binary starts more threads than there are rows).
#[cfg(test)]
thread_local! {
    static MINE: Cell<(i64, i64, u64)> = const { Cell::new((0, 0, 0)) };
}

/// This thread's bytes, blocks and allocations so far (tests only).
#[cfg(test)]
pub(crate) fn thread_counts() -> (i64, i64, u64) {
    MINE.with(Cell::get)
}

/// The row a thread that starts counting now gets from `next`: its own while there are rows
/// left, else the shared one.
#[inline]
fn assign_row(next: &AtomicU32) -> u32 {
    next.fetch_add(1, Relaxed).min(OWN_ROWS as u32)
}

/// Adds `bytes`, `blocks` and `allocations` to the calling thread's row.
#[inline]
fn count(bytes: i64, blocks: i64, allocations: u64) {
    // `try_with`: during thread teardown the slot may be gone; count in the shared row then.
    let row = MY_ROW
        .try_with(|mine| {
            let mut row = mine.get();
            if row == UNASSIGNED {
                row = assign_row(&NEXT_ROW);
                mine.set(row);
            }
            row as usize
        })
        .unwrap_or(OWN_ROWS);
    #[cfg(test)]
    let _ = MINE.try_with(|m| {
        let (b, n, a) = m.get();
        m.set((b + bytes, n + blocks, a + allocations));
    });
    count_in(&ROWS[row], row < OWN_ROWS, bytes, blocks, allocations);
}

/// Adds to `r`, which the calling thread alone writes when `owned`.
#[inline]
fn count_in(r: &Row, owned: bool, bytes: i64, blocks: i64, allocations: u64) {
    if owned {
        // This thread is the row's only writer: a load and a store lose nothing.
        r.bytes.store(r.bytes.load(Relaxed) + bytes, Relaxed);
        r.blocks.store(r.blocks.load(Relaxed) + blocks, Relaxed);
        if allocations != 0 {
            r.allocations
                .store(r.allocations.load(Relaxed) + allocations, Relaxed);
        }
    } else {
        r.bytes.fetch_add(bytes, Relaxed);
        r.blocks.fetch_add(blocks, Relaxed);
        if allocations != 0 {
            r.allocations.fetch_add(allocations, Relaxed);
        }
    }
}

/// The library's global allocator: the system allocator, counted per thread.
pub struct CountingAllocator;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and returns
// its result; the counting touches only this module's statics and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64, 1, 1);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as i64, 1, 1);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64), -1, 0);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64, 0, 1);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The library's heap at one moment (see `wk_memory_stats_get`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_memory_stats {
    /// Bytes the library has allocated and not freed (the sizes it asked for: the allocator's
    /// own headers, free lists and fragmentation are not included).
    pub live_bytes: u64,
    /// Blocks the library has allocated and not freed.
    pub live_blocks: u64,
    /// Allocations (reallocations included) since the library was loaded; never decreases.
    pub allocations_total: u64,
    /// Threads that have allocated through the library since it was loaded (counted up to 256;
    /// the 256th and later share one counting row).
    pub threads: u64,
}

/// `sizeof(wk_memory_stats)` of the first release.
pub const WK_MEMORY_STATS_MIN_SIZE: usize = 32;
const _: () = assert!(std::mem::size_of::<wk_memory_stats>() == WK_MEMORY_STATS_MIN_SIZE);

/// The sum over every row, read now.
pub(crate) fn read() -> wk_memory_stats {
    let (mut bytes, mut blocks, mut allocations) = (0i64, 0i64, 0u64);
    for r in &ROWS {
        bytes = bytes.wrapping_add(r.bytes.load(Relaxed));
        blocks = blocks.wrapping_add(r.blocks.load(Relaxed));
        allocations = allocations.wrapping_add(r.allocations.load(Relaxed));
    }
    wk_memory_stats {
        live_bytes: bytes.max(0) as u64,
        live_blocks: blocks.max(0) as u64,
        allocations_total: allocations,
        threads: u64::from(NEXT_ROW.load(Relaxed).min(OWN_ROWS as u32 + 1)),
    }
}

/// Writes the library's heap, read now, to `*stats_out`, whose size the caller passes
/// (`sizeof(wk_memory_stats)`; at least `WK_MEMORY_STATS_MIN_SIZE`, 32). It counts every
/// allocation of every system of this copy of the library, on every thread; the process's
/// resident set also holds what the allocator keeps for itself (its per-thread arenas and their
/// fragmentation), which this does not. While other threads allocate, the fields are each
/// some recent value, not one moment's state (`docs/ABI.md`, "The library's memory"). Any
/// thread may call this; it allocates nothing.
///
/// # Safety
///
/// `stats_out` must be NULL or point to `stats_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_memory_stats_get(
    stats_out: *mut wk_memory_stats,
    stats_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let stats_out = check_out!(stats_out);
        // SAFETY: checked by `check_out!`; `stats_size` writable bytes per this function's
        // contract.
        unsafe { write_sized(stats_out, stats_size, WK_MEMORY_STATS_MIN_SIZE, read()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NULL_ARGUMENT, WK_STATUS_OK};

    fn stats() -> wk_memory_stats {
        let mut s = wk_memory_stats::default();
        // SAFETY: a local of the full size.
        let st = unsafe { wk_memory_stats_get(&mut s, std::mem::size_of_val(&s)) };
        assert_eq!(st, WK_STATUS_OK);
        s
    }

    fn my_row() -> (i64, i64, u64) {
        thread_counts()
    }

    #[test]
    fn counts_allocations_frees_and_reallocations_on_the_thread_that_makes_them() {
        std::thread::spawn(|| {
            drop(std::hint::black_box(vec![0u8; 1]));
            let before = my_row();
            let mut v: Vec<u8> = Vec::with_capacity(1000);
            assert_eq!(my_row(), (before.0 + 1000, before.1 + 1, before.2 + 1));
            v.reserve_exact(3000);
            assert_eq!(my_row(), (before.0 + 3000, before.1 + 1, before.2 + 2));
            let z = vec![0u64; 16]; // alloc_zeroed
            assert_eq!(my_row(), (before.0 + 3128, before.1 + 2, before.2 + 3));
            drop(v);
            drop(z);
            assert_eq!(my_row(), (before.0, before.1, before.2 + 3));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_block_freed_on_another_thread_is_subtracted_there_and_the_sum_stays_right() {
        // Blocks allocated here and freed by another thread: this row goes up, the other down,
        // and the process-wide sum sees the block once while it lives and never after.
        let blocks: Vec<Box<[u8; 4096]>> = (0..64).map(|_| Box::new([7u8; 4096])).collect();
        let held = stats();
        assert!(held.live_bytes >= 64 * 4096, "{held:?}");
        let freer = std::thread::spawn(move || {
            let before = my_row();
            drop(blocks);
            let after = my_row();
            (before.0 - after.0, before.1 - after.1)
        });
        let (bytes, blocks) = freer.join().unwrap();
        assert_eq!(
            bytes,
            64 * 4096 + 64 * std::mem::size_of::<Box<[u8; 4096]>>() as i64
        );
        assert_eq!(blocks, 65);
    }

    #[test]
    fn threads_past_the_owned_rows_share_one_row_and_lose_nothing() {
        let next = AtomicU32::new(0);
        let rows: Vec<u32> = (0..OWN_ROWS + 3).map(|_| assign_row(&next)).collect();
        assert_eq!(
            rows[..OWN_ROWS],
            (0..OWN_ROWS as u32).collect::<Vec<_>>()[..]
        );
        assert_eq!(rows[OWN_ROWS..], [OWN_ROWS as u32; 3]);
        // Four threads counting into one shared row at once lose nothing.
        let shared = Row::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        count_in(&shared, false, 24, 1, 1);
                        count_in(&shared, false, -8, 0, 0);
                    }
                });
            }
        });
        let counts = |r: &Row| {
            let load = |a: &AtomicI64| a.load(Relaxed);
            (load(&r.bytes), load(&r.blocks), r.allocations.load(Relaxed))
        };
        assert_eq!(counts(&shared), (640_000, 40_000, 40_000));
    }

    #[test]
    fn checks_its_out_pointer_and_size() {
        // SAFETY: NULL is allowed by the contract.
        let st = unsafe { wk_memory_stats_get(std::ptr::null_mut(), 32) };
        assert_eq!(st, WK_STATUS_NULL_ARGUMENT);
        let mut s = wk_memory_stats {
            live_bytes: 9,
            ..Default::default()
        };
        // SAFETY: a local of the full size; the size passed is smaller.
        let st = unsafe { wk_memory_stats_get(&mut s, 31) };
        assert_eq!(st, WK_STATUS_INVALID_ARGUMENT);
        assert_eq!(s.live_bytes, 9, "nothing written on a refused call");
        let s = stats();
        assert!(
            s.allocations_total >= s.live_blocks && s.threads >= 1,
            "{s:?}"
        );
    }
}
