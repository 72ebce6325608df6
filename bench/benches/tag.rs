//! Criterion: a delivery tag hit uncontended — through a channel handle and through the channel
//! index (wkcore) — beside upstream's manager under one mutex
//! (`wkcore_references::tag::MutexTagManager`, `LookupLocalPartitionRef` by key) and the floor
//! of one pointer load; first, the allocations per hit of each, counted by this binary's
//! counting allocator (upstream asserts 0 for its `Ref` look-up).
//!
//! `cargo bench -p wkcore-bench --bench tag -- --warm-up-time 1 --measurement-time 3`

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use wkcore_bench::tag::HitSubjects;

/// The system allocator, counting allocations (and reallocations).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Ordering: Relaxed; a count read after the counted code, on the same thread.
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System::dealloc`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Ordering: Relaxed, as in `alloc`.
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System::alloc_zeroed`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Ordering: Relaxed, as in `alloc`.
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System::realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const CHANNELS: usize = 256;

/// Allocations per call of `hit` over every channel, after a warm-up round.
fn allocations_per_hit(subjects: &HitSubjects, hit: impl Fn(&HitSubjects, usize) -> bool) -> f64 {
    const ROUNDS: usize = 64;
    for c in 0..subjects.len() {
        assert!(hit(subjects, c));
    }
    // Ordering: Relaxed (`alloc`).
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..ROUNDS {
        for c in 0..subjects.len() {
            black_box(hit(subjects, black_box(c)));
        }
    }
    // Ordering: Relaxed (`alloc`).
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    (after - before) as f64 / (ROUNDS * subjects.len()) as f64
}

/// Benchmarks `f` (a fn item: monomorphized and inlined, no indirect call) over every channel in
/// turn.
fn bench_hit<F: Fn(&HitSubjects, usize) -> bool>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    subjects: &HitSubjects,
    name: &str,
    f: F,
) {
    let mut next = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            next = (next + 1) % subjects.len();
            f(subjects, black_box(next))
        })
    });
}

fn hit(c: &mut Criterion) {
    let subjects = HitSubjects::new(CHANNELS);
    println!("allocations per hit ({CHANNELS} channels in turn):");
    let counted = [
        (
            "wkcore_handle",
            allocations_per_hit(&subjects, HitSubjects::hit_by_handle),
        ),
        (
            "wkcore_key",
            allocations_per_hit(&subjects, HitSubjects::hit_by_key),
        ),
        (
            "mutex",
            allocations_per_hit(&subjects, HitSubjects::hit_mutex),
        ),
        (
            "floor_pointer_load",
            allocations_per_hit(&subjects, HitSubjects::hit_floor),
        ),
        (
            "floor_hashmap_get",
            allocations_per_hit(&subjects, HitSubjects::hit_floor_key),
        ),
    ];
    for (name, n) in counted {
        println!("  {name:<20} {n:.3}");
    }
    let mut group = c.benchmark_group("tag/hit");
    bench_hit(
        &mut group,
        &subjects,
        "wkcore_handle",
        HitSubjects::hit_by_handle,
    );
    bench_hit(&mut group, &subjects, "wkcore_key", HitSubjects::hit_by_key);
    bench_hit(&mut group, &subjects, "mutex", HitSubjects::hit_mutex);
    bench_hit(
        &mut group,
        &subjects,
        "floor_pointer_load",
        HitSubjects::hit_floor,
    );
    bench_hit(
        &mut group,
        &subjects,
        "floor_hashmap_get",
        HitSubjects::hit_floor_key,
    );
    group.finish();
}

criterion_group!(benches, hit);
criterion_main!(benches);
