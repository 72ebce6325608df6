//! Criterion: the coordination primitives uncontended, each beside its mutex reference
//! (`wkcore-references`) and the floor of one uncontended atomic RMW, in one group per
//! primitive.
//!
//! `cargo bench -p wkcore-bench --bench coord -- --warm-up-time 1 --measurement-time 3`

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use wkcore::coord::{Anchor, Counter, ExclusiveTrigger, Flip};
use wkcore_references::coord::{MutexAnchor, MutexExclusiveTrigger, MutexFlip};

fn floor(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let (word, v) = (AtomicU64::new(0), Cell::new(0u64));
    group.bench_function("atomic_cas_floor", |b| {
        b.iter(|| {
            let current = v.get();
            v.set(current + 1);
            // Ordering: AcqRel, the ordering of a winning transition, on a word nobody else uses.
            black_box(&word)
                .compare_exchange(current, current + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
    });
}

fn anchor(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/anchor_try_fire");
    // The clock lives beside the anchor, outside criterion's closures (which it calls more than
    // once), so every iteration is due and fires.
    let (a, now) = (Anchor::at(0).unwrap(), Cell::new(0u64));
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            now.set(now.get() + 1);
            black_box(&a).try_fire(now.get(), 1)
        })
    });
    let (m, now) = (MutexAnchor::new(Some(0)), Cell::new(0u64));
    group.bench_function("mutex", |b| {
        b.iter(|| {
            now.set(now.get() + 1);
            black_box(&m).try_fire(now.get(), 1)
        })
    });
    floor(&mut group);
    group.finish();
}

fn trigger(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/exclusive_trigger_and_finish");
    let t = ExclusiveTrigger::default();
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            let run = black_box(&t).trigger().unwrap();
            t.finish(run)
        })
    });
    let m = MutexExclusiveTrigger::default();
    group.bench_function("mutex", |b| {
        b.iter(|| {
            let run = black_box(&m).trigger().unwrap();
            m.finish(run)
        })
    });
    floor(&mut group);
    group.finish();
}

fn flip(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/flip");
    // As above: the expected state lives beside the flip, so every flip wins.
    let (f, state) = (Flip::new(0), Cell::new(0u64));
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            let s = state.get();
            state.set(s ^ 1);
            black_box(&f).flip(s, s ^ 1)
        })
    });
    let (m, state) = (MutexFlip::new(0), Cell::new(0u64));
    group.bench_function("mutex", |b| {
        b.iter(|| {
            let s = state.get();
            state.set(s ^ 1);
            black_box(&m).flip(s, s ^ 1)
        })
    });
    let c = Counter::default();
    group.bench_function("counter_increment", |b| {
        b.iter(|| black_box(&c).increment())
    });
    floor(&mut group);
    group.finish();
}

criterion_group!(benches, anchor, trigger, flip);
criterion_main!(benches);
