//! Handle generations, measured: what borrowing a handle costs today (a pointer and the magic word
//! at its start, `ffi/src/handle.rs`) and with the cheapest credible generation design (a handle
//! table of index + generation words, so that a freed handle whose memory was reused is always
//! refused), side by side in one run.
//!
//!   cargo bench -p wkcore-ffi --bench handle_generation -- --warm-up-time 1 --measurement-time 3
//!
//! With `WK_HANDLE_LOOP=N` the binary skips criterion and runs N borrows of each kind (for
//! `valgrind --tool=callgrind`: instructions per borrow are each function's cost / N).
//!
//! Neither design is the library's code: the pointer check is a copy of `ArcCastPtr::try_ref` (the
//! crate builds no rlib for a bench to link), and the table is a prototype. Both borrow the same
//! object and read the same atomic, so the difference is the check alone.

#![allow(missing_docs, unreachable_pub)]

use std::hint::black_box;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use criterion::{Criterion, Throughput};

// --- Today: the pointer + magic word check of ffi/src/handle.rs ---------------------------------

/// As `Guarded<T>`: the magic word at offset 0, then the value.
#[repr(C)]
struct Guarded<T> {
    magic: u64,
    value: T,
}

const MAGIC: u64 = 0x776b_434e_5452_0003; // "wkCNTR" + generation, as wk_counter's
const DEAD_MAGIC: u64 = 0x776b_4445_4144_2121;

impl<T> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: `self.magic` is a valid, aligned u64 we own exclusively (`&mut self`).
        unsafe { ptr::write_volatile(&mut self.magic, DEAD_MAGIC) }
    }
}

/// `try_ref` + the getter's body (`wk_counter_get`): NULL, alignment, the magic word, the load.
#[inline(never)]
fn magic_borrow(p: *const Guarded<AtomicU64>) -> Result<u64, u32> {
    if p.is_null() {
        return Err(1);
    }
    if !p.is_aligned() {
        return Err(4);
    }
    // SAFETY: non-NULL and aligned; the bench passes live objects only (as a host must), except
    // the detection check's stale pointer, whose block the allocator has reused for a live object
    // of the same type (checked before the call).
    let g = unsafe { &*p };
    // SAFETY: `g.magic` is an initialised, aligned u64 of the object `g` borrows.
    if unsafe { ptr::read_volatile(&g.magic) } != MAGIC {
        return Err(4);
    }
    Ok(g.value.load(Ordering::Acquire))
}

// --- The prototype: a handle table of index + generation words ----------------------------------

/// A handle is `generation << 32 | index`; generation 0 is never issued, so a zeroed handle is
/// always refused.
type Handle = u64;

const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;
/// 4096 chunks of 1024 entries: 4 Mi live handles, allocated a chunk at a time (stable addresses,
/// no resize under readers).
const CHUNKS: usize = 1 << 12;

struct Entry {
    /// The generation of the live handle in this entry; bumped when it is freed, so every older
    /// handle of the entry mismatches (until 2^32 reuses of this one entry).
    generation: AtomicU32,
    object: AtomicPtr<Guarded<AtomicU64>>,
}

struct Table {
    chunks: Box<[AtomicPtr<Entry>]>,
    /// Cold: insertion and removal (handle creation and the last free).
    free: Mutex<(Vec<u32>, u32)>,
}

impl Table {
    fn new() -> Self {
        Self {
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            free: Mutex::new((Vec::new(), 0)),
        }
    }

    fn entry(&self, index: u32) -> Option<&Entry> {
        let chunk = self.chunks.get((index >> CHUNK_BITS) as usize)?;
        // Ordering: Acquire; pairs with the Release store that published the chunk.
        let chunk = chunk.load(Ordering::Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: a published chunk holds CHUNK initialised entries and is never freed while the
        // table lives; the offset is masked below CHUNK.
        Some(unsafe { &*chunk.add(index as usize & (CHUNK - 1)) })
    }

    fn insert(&self, object: Arc<Guarded<AtomicU64>>) -> Handle {
        let mut free = self.free.lock().unwrap();
        let index = match free.0.pop() {
            Some(i) => i,
            None => {
                let i = free.1;
                free.1 += 1;
                let c = (i >> CHUNK_BITS) as usize;
                if self.chunks[c].load(Ordering::Relaxed).is_null() {
                    let chunk: Box<[Entry]> = (0..CHUNK)
                        .map(|_| Entry {
                            generation: AtomicU32::new(0),
                            object: AtomicPtr::new(ptr::null_mut()),
                        })
                        .collect();
                    let raw = Box::into_raw(chunk) as *mut Entry;
                    self.chunks[c].store(raw, Ordering::Release);
                }
                i
            }
        };
        let e = self.entry(index).unwrap();
        e.object
            .store(Arc::into_raw(object).cast_mut(), Ordering::Release);
        let generation = e.generation.load(Ordering::Relaxed).wrapping_add(1).max(1);
        e.generation.store(generation, Ordering::Release);
        (u64::from(generation) << 32) | u64::from(index)
    }

    /// The last free: bumps the generation first, so a stale handle fails before the object goes.
    fn remove(&self, h: Handle) {
        let mut free = self.free.lock().unwrap();
        let e = self.entry(h as u32).unwrap();
        assert_eq!(e.generation.load(Ordering::Relaxed), (h >> 32) as u32);
        e.generation.store(
            e.generation.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Release,
        );
        let object = e.object.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: the entry held the count `insert` gave up with `Arc::into_raw`; it was swapped
        // out, so it is dropped once.
        drop(unsafe { Arc::from_raw(object) });
        free.0.push(h as u32);
    }
}

/// The same getter over the table: the index in range and its chunk allocated, the generation
/// equal, then the object's load.
#[inline(never)]
fn generation_borrow(table: &Table, h: Handle) -> Result<u64, u32> {
    let Some(e) = table.entry(h as u32) else {
        return Err(4);
    };
    // Ordering: Acquire; pairs with the Release store in `insert`.
    if e.generation.load(Ordering::Acquire) != (h >> 32) as u32 {
        return Err(4);
    }
    let object = e.object.load(Ordering::Acquire);
    // SAFETY: the generation matched, so the entry holds the live object of this handle, whose
    // count the table keeps until `remove` (which the bench never runs concurrently).
    Ok(unsafe { &*object }.value.load(Ordering::Acquire))
}

// --- Detection: what each design says about a freed handle whose memory was reused --------------

fn check_detection() {
    // Today: free a counter, allocate another of the same type; the allocator commonly hands the
    // same block back, and then the stale pointer answers for the new object.
    let first = Arc::new(Guarded {
        magic: MAGIC,
        value: AtomicU64::new(1),
    });
    let stale = Arc::into_raw(first);
    // SAFETY: `stale` came from `Arc::into_raw` just above and is dropped once.
    drop(unsafe { Arc::from_raw(stale) });
    let second = Arc::new(Guarded {
        magic: MAGIC,
        value: AtomicU64::new(2),
    });
    let reused = ptr::eq(Arc::as_ptr(&second), stale);
    if reused {
        assert_eq!(
            magic_borrow(stale),
            Ok(2),
            "the stale pointer reads the new object"
        );
    }
    eprintln!(
        "detection: today, a freed handle whose memory was reused (here: {}) answers for the new \
         object; with generations it is refused",
        if reused {
            "reused"
        } else {
            "not reused this time"
        }
    );
    // The table: free, insert again into the same entry: the old handle is refused.
    let table = Table::new();
    let h1 = table.insert(Arc::new(Guarded {
        magic: MAGIC,
        value: AtomicU64::new(1),
    }));
    table.remove(h1);
    let h2 = table.insert(Arc::new(Guarded {
        magic: MAGIC,
        value: AtomicU64::new(2),
    }));
    assert_eq!(h1 as u32, h2 as u32, "the entry is reused");
    assert_eq!(generation_borrow(&table, h1), Err(4));
    assert_eq!(generation_borrow(&table, h2), Ok(2));
    assert_eq!(generation_borrow(&table, 0), Err(4));
    table.remove(h2);
}

/// Many live handles, borrowed in a shuffled order, so the table's entries are not all in cache.
fn setup(n: usize) -> (Vec<Arc<Guarded<AtomicU64>>>, Table, Vec<Handle>) {
    let objects: Vec<_> = (0..n)
        .map(|i| {
            Arc::new(Guarded {
                magic: MAGIC,
                value: AtomicU64::new(i as u64),
            })
        })
        .collect();
    let table = Table::new();
    let handles = objects.iter().map(|o| table.insert(o.clone())).collect();
    (objects, table, handles)
}

fn order(n: usize) -> Vec<usize> {
    // A fixed permutation (multiplicative step coprime with n's powers of two).
    (0..n).map(|i| (i * 2_654_435_761) % n).collect()
}

fn bench(c: &mut Criterion) {
    check_detection();
    for n in [1usize, 1 << 16] {
        let (objects, table, handles) = setup(n);
        let pointers: Vec<*const Guarded<AtomicU64>> = objects.iter().map(Arc::as_ptr).collect();
        let idx = order(n);
        let mut g = c.benchmark_group(format!("handle_borrow/{n}_live"));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("pointer_magic", |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &i in &idx {
                    sum = sum.wrapping_add(magic_borrow(black_box(pointers[i])).unwrap());
                }
                sum
            })
        });
        g.bench_function("generation_table", |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &i in &idx {
                    sum =
                        sum.wrapping_add(generation_borrow(&table, black_box(handles[i])).unwrap());
                }
                sum
            })
        });
        g.finish();
        for h in handles {
            table.remove(h);
        }
    }
}

fn main() {
    if let Ok(n) = std::env::var("WK_HANDLE_LOOP") {
        let n: usize = n.parse().expect("WK_HANDLE_LOOP=N");
        let (objects, table, handles) = setup(1);
        let p = Arc::as_ptr(&objects[0]);
        let mut sum = 0u64;
        for _ in 0..n {
            sum = sum.wrapping_add(magic_borrow(black_box(p)).unwrap());
        }
        for _ in 0..n {
            sum = sum.wrapping_add(generation_borrow(&table, black_box(handles[0])).unwrap());
        }
        black_box(sum);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
