//! Criterion: admission enqueue, every variant side by side in one group per shape.
//!
//! One criterion iteration is one item. Each sample is one trial of the shared harness
//! ([`wkcore_bench::run_trial`]): a fresh queue, threads spawned before the clock starts and
//! released together by a `Barrier`, timed from the barrier to the last item drained. Unlike the
//! `wkcore-bench` binary, criterion cannot drop trials in which a thread was descheduled, so on a
//! 2-vCPU machine the multi-thread groups mix contended and serialized samples.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wkcore_bench::{run_trial, Shape, Variant};

fn enqueue(c: &mut Criterion) {
    for shape in Shape::DEFAULT {
        let mut group = c.benchmark_group(format!("enqueue/{shape}"));
        group.throughput(Throughput::Elements(1));
        for variant in Variant::ALL {
            group.bench_function(variant.name(), |b| {
                b.iter_custom(|iters| {
                    let trial = run_trial(variant, shape, iters);
                    assert!(trial.conserved(), "{variant} {shape}: items lost");
                    trial.wall
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, enqueue);
criterion_main!(benches);
