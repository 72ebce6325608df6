//! Criterion: the owner registry's hot path uncontended — begin + done through a handle — beside
//! upstream's algorithm under one mutex (`wkcore_references::owner::MutexOwners`, begin + done by
//! identity) and the floor of two uncontended atomic RMWs; and `Operation::check`.
//!
//! `cargo bench -p wkcore-bench --bench owner -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use wkcore::clock::{Clock, ManualClock};
use wkcore::metrics::Registry;
use wkcore::owner::{Budget, Claim, OwnerKey, OwnerOptions, OwnerRegistry};
use wkcore_references::owner::MutexOwners;

const SEC: u64 = 1_000_000_000;

fn options(clock: Arc<ManualClock>) -> OwnerOptions {
    OwnerOptions {
        node_id: 1,
        boot_id: "bench".into(),
        capacity: 16,
        max_operations: 8,
        pending_timeout: Duration::from_secs(5),
        max_lease: Duration::from_secs(60),
        close_retry: Duration::from_millis(250),
        clock,
    }
}

fn claim() -> Claim {
    Claim {
        key: OwnerKey::new("bench", "client"),
        uid: "uid".into(),
        session_generation: 1,
        owner_generation: 1,
    }
}

fn begin_done(c: &mut Criterion) {
    let mut group = c.benchmark_group("owner/begin_done");
    let clock = Arc::new(ManualClock::new(SEC));
    let until = clock.now_nanos() + 50 * SEC;
    let metrics = Registry::new();
    let registry = OwnerRegistry::with_metrics(options(clock.clone()), &metrics).unwrap();
    let handle = registry.reserve(&claim(), |_: &Budget| Ok(())).unwrap();
    handle.activate(1, until).unwrap();
    group.bench_function("wkcore", |b| {
        b.iter(|| black_box(&handle).begin().unwrap().done())
    });
    let m = MutexOwners::new(options(clock)).unwrap();
    let owner = m.reserve(&claim(), |_: &Budget| Ok(())).unwrap();
    m.activate(&owner, 1, until).unwrap();
    group.bench_function("mutex", |b| {
        b.iter(|| m.done(m.begin(black_box(&owner)).unwrap()))
    });
    let word = AtomicU64::new(0);
    group.bench_function("two_atomic_floor", |b| {
        b.iter(|| {
            // Ordering: AcqRel, as the registry's begin and done CASes, on a word nobody else uses.
            black_box(&word).fetch_add(1, Ordering::AcqRel);
            black_box(&word).fetch_sub(1, Ordering::AcqRel)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("owner/check");
    let op = handle.begin().unwrap();
    group.bench_function("wkcore", |b| b.iter(|| black_box(&op).check()));
    group.finish();
}

criterion_group!(benches, begin_done);
criterion_main!(benches);
