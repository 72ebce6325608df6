//! Timed multi-thread trials and their summary, shared by the `--coord` and `--owner` tables.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::cputime::thread_cpu_time;
use crate::stats::median;
use crate::ON_CPU_THRESHOLD;

/// One trial's wall time, its operation count and its threads' lowest on-CPU share.
pub struct Timed {
    /// From the common start to the last thread's finish.
    pub wall: Duration,
    /// Operations of the whole trial.
    pub ops: u64,
    /// The lowest on-CPU share of any thread (1.0 where CPU time is not measurable).
    pub on_cpu: f64,
}

impl Timed {
    /// Nanoseconds per operation.
    pub fn ns_per_op(&self) -> f64 {
        self.wall.as_secs_f64() * 1e9 / self.ops as f64
    }
}

/// Runs `prepare(thread index)` (untimed), then `work(thread index)` on `threads` threads
/// started together; the wall time is from the common start to the last finish. Each thread
/// prepares its own data, so the timed part finds it in its own cache.
pub fn timed(
    threads: usize,
    ops: u64,
    prepare: impl Fn(usize) + Sync,
    work: impl Fn(usize) + Sync,
) -> Timed {
    let barrier = Barrier::new(threads + 1);
    let (wall, on_cpu) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, prepare, work) = (&barrier, &prepare, &work);
                s.spawn(move || {
                    prepare(t);
                    barrier.wait();
                    let (cpu0, wall0) = (thread_cpu_time(), Instant::now());
                    work(t);
                    let wall = wall0.elapsed();
                    match (cpu0, thread_cpu_time()) {
                        (Some(a), Some(b)) => (b - a).as_secs_f64() / wall.as_secs_f64().max(1e-9),
                        _ => 1.0,
                    }
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let shares: Vec<f64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        (start.elapsed(), shares.into_iter().fold(f64::MAX, f64::min))
    });
    Timed { wall, ops, on_cpu }
}

/// The median ns/op over the trials in which every thread was on-CPU at least
/// [`ON_CPU_THRESHOLD`] (over all of them when none was), and how many were kept.
pub fn summarize(trials: &[Timed]) -> (f64, usize) {
    let mut kept: Vec<f64> = trials
        .iter()
        .filter(|t| t.on_cpu >= ON_CPU_THRESHOLD)
        .map(Timed::ns_per_op)
        .collect();
    if kept.is_empty() {
        let mut all: Vec<f64> = trials.iter().map(Timed::ns_per_op).collect();
        return (median(&mut all), 0);
    }
    let n = kept.len();
    (median(&mut kept), n)
}

/// A cell's figure, `*` marking a median over unkept trials.
pub fn fmt_ns(ns_per_op: f64, kept: usize) -> String {
    format!("{ns_per_op:.2}{}", if kept == 0 { "*" } else { "" })
}
