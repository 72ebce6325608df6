//! Timed multi-thread trials and their summary, shared by the `--coord` and `--owner` tables.

use std::sync::atomic::{AtomicUsize, Ordering};
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
/// started together; the wall time is from the first thread's start to the last one's finish.
/// Each thread prepares its own data, so the timed part finds it in its own cache.
///
/// The threads meet at a barrier and then spin until every one of them is past it, and each
/// reads the clock itself, after that rendezvous and after its work: a thread woken from the
/// barrier's futex starts tens of microseconds after the one that woke it, and a thread's exit
/// and its join take as long again, which in a trial of ~100 µs would be counted as work (or,
/// when the timing thread was the late one, as negative work).
pub fn timed(
    threads: usize,
    ops: u64,
    prepare: impl Fn(usize) + Sync,
    work: impl Fn(usize) + Sync,
) -> Timed {
    let barrier = Barrier::new(threads);
    let arrived = AtomicUsize::new(0);
    let spans: Vec<(Instant, Instant, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, arrived, prepare, work) = (&barrier, &arrived, &prepare, &work);
                s.spawn(move || {
                    prepare(t);
                    barrier.wait();
                    // Ordering: Relaxed; the rendezvous publishes nothing (each thread's data is
                    // its own), it only lines the starts up.
                    arrived.fetch_add(1, Ordering::Relaxed);
                    let mut spins = 0u32;
                    // Ordering: as above.
                    while arrived.load(Ordering::Relaxed) < threads {
                        spins += 1;
                        if spins % 1024 == 0 {
                            // More threads than CPUs: let the late one run.
                            std::thread::yield_now();
                        }
                        std::hint::spin_loop();
                    }
                    let (cpu0, start) = (thread_cpu_time(), Instant::now());
                    work(t);
                    let end = Instant::now();
                    let wall = end - start;
                    let share = match (cpu0, thread_cpu_time()) {
                        (Some(a), Some(b)) => (b - a).as_secs_f64() / wall.as_secs_f64().max(1e-9),
                        _ => 1.0,
                    };
                    (start, end, share)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let start = spans
        .iter()
        .map(|s| s.0)
        .min()
        .expect("at least one thread");
    let end = spans
        .iter()
        .map(|s| s.1)
        .max()
        .expect("at least one thread");
    Timed {
        wall: end - start,
        ops,
        on_cpu: spans.iter().map(|s| s.2).fold(f64::MAX, f64::min),
    }
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
