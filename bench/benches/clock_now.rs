//! Criterion: the cost of reading a clock on the admission path.
//!
//! `wkcore::clock::RealClock::now_nanos()` (quanta's calibrated TSC: `Clock::raw()` plus a
//! scaled delta) against `std::time::Instant::now()` (vDSO `clock_gettime`), beside an
//! uncontended `AtomicU64::fetch_add` as the floor of "one shared-memory operation".

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use wkcore::clock::{Clock, RealClock};

fn clock_now(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock_now");
    let clock = RealClock::new();
    group.bench_function("wkcore_realclock_now_nanos", |b| {
        b.iter(|| black_box(&clock).now_nanos())
    });
    group.bench_function("std_instant_now", |b| b.iter(Instant::now));
    let counter = AtomicU64::new(0);
    group.bench_function("atomic_fetch_add_floor", |b| {
        // Ordering: a counter read by nobody; Relaxed is the cheapest RMW, which is the point.
        b.iter(|| black_box(&counter).fetch_add(1, Ordering::Relaxed))
    });
    group.finish();
}

criterion_group!(benches, clock_now);
criterion_main!(benches);
