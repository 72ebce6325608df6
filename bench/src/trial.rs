//! One timed trial: a fixed number of items through one variant in one shape.

use std::hint::{black_box, spin_loop};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use wkcore::admission::SlotAdmission;
use wkcore_references::admission::MutexSlot;

use crate::cputime::thread_cpu_time;
use crate::target::Target;
use crate::{Shape, Variant, BATCH};

/// What a thread did in a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The only thread of a `1t` trial.
    Solo,
    /// Producer number `n` of an `Np1c` trial.
    Producer(usize),
    /// The consumer of an `Np1c` trial.
    Consumer,
}

/// Wall and CPU time of one thread over its part of a trial.
#[derive(Clone, Copy, Debug)]
pub struct ThreadTiming {
    /// What the thread did.
    pub role: Role,
    /// Wall time from the trial's start (the earliest thread's release from the start gate)
    /// to this thread's last item. A thread descheduled right after the barrier is therefore
    /// seen as off-CPU, not as a thread that started late.
    pub wall: Duration,
    /// CPU time of this thread from its own release to its last item (`None` where the
    /// platform cannot tell).
    pub cpu: Option<Duration>,
}

impl ThreadTiming {
    /// Share of its wall time the thread spent on a CPU (`None` if unknown).
    pub fn on_cpu(&self) -> Option<f64> {
        let cpu = self.cpu?;
        if self.wall.is_zero() {
            return Some(1.0);
        }
        Some(cpu.as_secs_f64() / self.wall.as_secs_f64())
    }
}

/// One thread's raw span; turned into a [`ThreadTiming`] once the trial's start is known.
#[derive(Clone, Copy, Debug)]
struct Span {
    role: Role,
    start: Instant,
    end: Instant,
    cpu: Option<Duration>,
}

impl Span {
    /// Runs `f` on the current thread and records its span.
    fn measure<R>(role: Role, f: impl FnOnce() -> R) -> (Self, R) {
        let cpu0 = thread_cpu_time();
        let start = Instant::now();
        let r = f();
        let end = Instant::now();
        let cpu = thread_cpu_time()
            .zip(cpu0)
            .map(|(b, a)| b.saturating_sub(a));
        (
            Span {
                role,
                start,
                end,
                cpu,
            },
            r,
        )
    }

    /// The trial's wall time (earliest start to latest end) and each thread's timing from the
    /// earliest start.
    fn timings(spans: &[Span]) -> (Duration, Vec<ThreadTiming>) {
        let Some(start) = spans.iter().map(|s| s.start).min() else {
            return (Duration::ZERO, Vec::new());
        };
        let end = spans.iter().map(|s| s.end).max().unwrap_or(start);
        let threads = spans
            .iter()
            .map(|s| ThreadTiming {
                role: s.role,
                wall: s.end - start,
                cpu: s.cpu,
            })
            .collect();
        (end - start, threads)
    }
}

/// The outcome of one trial.
#[derive(Clone, Debug)]
pub struct TrialResult {
    /// Variant measured.
    pub variant: Variant,
    /// Shape measured.
    pub shape: Shape,
    /// Items the trial was asked to move.
    pub items: u64,
    /// Time from the earliest thread's release from the start gate until the last item was
    /// drained.
    pub wall: Duration,
    /// Items producers saw admitted.
    pub admitted: u64,
    /// Items the consumer drained.
    pub drained: u64,
    /// Wrapping sum of the admitted items' values.
    pub sum_admitted: u64,
    /// Wrapping sum of the drained items' values.
    pub sum_drained: u64,
    /// Each thread's timing.
    pub threads: Vec<ThreadTiming>,
}

impl TrialResult {
    /// Wall nanoseconds per item.
    pub fn ns_per_item(&self) -> f64 {
        self.wall.as_nanos() as f64 / self.items.max(1) as f64
    }

    /// The lowest on-CPU share of any thread (`None` if any is unknown).
    pub fn min_on_cpu(&self) -> Option<f64> {
        self.threads
            .iter()
            .map(ThreadTiming::on_cpu)
            .try_fold(f64::INFINITY, |m, s| s.map(|s| m.min(s)))
    }

    /// Whether every thread was on-CPU at least `threshold` of its wall time.
    pub fn kept(&self, threshold: f64) -> bool {
        self.min_on_cpu().is_some_and(|s| s >= threshold)
    }

    /// Whether every item asked for was admitted once and drained once.
    pub fn conserved(&self) -> bool {
        self.admitted == self.items
            && self.drained == self.items
            && self.sum_admitted == self.sum_drained
    }
}

/// Runs one trial of `items` items of `variant` in `shape`, on a fresh queue.
///
/// Threads are spawned (and the queue built) before the clock starts; they start together on a
/// start gate (a `Barrier`, then a spin rendezvous). The trial's wall time runs from the gate to the
/// last item drained.
pub fn run_trial(variant: Variant, shape: Shape, items: u64) -> TrialResult {
    let batch = variant.is_batch();
    let mut result = match variant {
        Variant::Wkcore | Variant::WkcoreBatch64 => {
            run_on(&SlotAdmission::<u64>::fresh(), batch, shape, items)
        }
        Variant::Mutex | Variant::MutexBatch64 => {
            run_on(&MutexSlot::<u64>::fresh(), batch, shape, items)
        }
        Variant::ArrayQueueFloor => run_on(&ArrayQueue::<u64>::fresh(), batch, shape, items),
    };
    result.variant = variant;
    result
}

fn run_on<T: Target>(target: &T, batch: bool, shape: Shape, items: u64) -> TrialResult {
    match shape {
        Shape::OneThread => one_thread(target, batch, items),
        Shape::Producers(n) => producers_consumer(target, batch, n.max(1), items),
    }
}

/// Writes `first, first + 1, ...` into `buf`.
#[inline]
fn fill(buf: &mut [u64], first: u64) {
    for (item, v) in buf.iter_mut().zip(first..) {
        *item = v;
    }
}

/// Wrapping sum of `first, first + 1, ..., first + n - 1`.
#[inline]
fn series_sum(first: u64, n: usize) -> u64 {
    let n = n as u64;
    // n * first + n * (n - 1) / 2, with the division done on whichever factor is even.
    let tri = if n % 2 == 0 {
        (n / 2).wrapping_mul(n.wrapping_sub(1))
    } else {
        n.wrapping_mul(n.wrapping_sub(1) / 2)
    };
    n.wrapping_mul(first).wrapping_add(tri)
}

/// `1t`: admit a run of [`BATCH`] items (single admits, or one batch), drain it, repeat.
fn one_thread<T: Target>(target: &T, batch: bool, items: u64) -> TrialResult {
    let mut buf = [0u64; BATCH];
    let (span, (admitted, sum_admitted, drained, sum_drained)) = Span::measure(Role::Solo, || {
        let (mut admitted, mut sum_in, mut drained, mut sum_out) = (0u64, 0u64, 0u64, 0u64);
        let mut next = 0u64;
        while next < items {
            let run = (items - next).min(BATCH as u64) as usize;
            if batch {
                fill(&mut buf[..run], next);
                let n = target.admit_slice(black_box(&buf[..run]));
                admitted += n as u64;
                sum_in = sum_in.wrapping_add(series_sum(next, n));
            } else {
                for v in next..next + run as u64 {
                    // Each item is tried once: in `1t` nothing else fills the queue.
                    if target.admit_one(black_box(v)) {
                        admitted += 1;
                        sum_in = sum_in.wrapping_add(v);
                    }
                }
            }
            next += run as u64;
            drained += target.drain_all(&mut sum_out) as u64;
        }
        (admitted, sum_in, drained, black_box(sum_out))
    });
    let (wall, threads) = Span::timings(&[span]);
    TrialResult {
        variant: Variant::Wkcore,
        shape: Shape::OneThread,
        items,
        wall,
        admitted,
        drained,
        sum_admitted,
        sum_drained,
        threads,
    }
}

/// Start gate: a `Barrier` (threads sleep until all exist), then a spin rendezvous, so that the
/// clock starts only once every thread is awake and running. Without the spin, threads woken from
/// the barrier's futex arrive tens of microseconds apart, which dominates short criterion samples.
struct StartGate {
    barrier: Barrier,
    arrived: AtomicUsize,
    threads: usize,
}

impl StartGate {
    fn new(threads: usize) -> Self {
        StartGate {
            barrier: Barrier::new(threads),
            arrived: AtomicUsize::new(0),
            threads,
        }
    }

    fn wait(&self, abort: &AtomicBool) {
        self.barrier.wait();
        // Ordering: the gate publishes no data (the queue is built before the threads start);
        // Relaxed is enough to count arrivals.
        self.arrived.fetch_add(1, Ordering::Relaxed);
        // Ordering: as above.
        while self.arrived.load(Ordering::Relaxed) < self.threads && !abort.load(Ordering::Relaxed)
        {
            spin_loop();
        }
    }
}

/// Sets the flag if the thread unwinds, so that the others stop waiting for its items.
struct AbortOnPanic<'a>(&'a AtomicBool);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            // Ordering: a plain flag; nothing is published through it.
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// One producer: admits `quota` items valued `base, base + 1, ...`, spinning on backpressure.
/// Returns (admitted, wrapping sum of admitted values).
fn produce<T: Target>(
    target: &T,
    batch: bool,
    base: u64,
    quota: u64,
    abort: &AtomicBool,
) -> (u64, u64) {
    let (mut admitted, mut sum) = (0u64, 0u64);
    if batch {
        let mut buf = [0u64; BATCH];
        while admitted < quota {
            let run = (quota - admitted).min(BATCH as u64) as usize;
            let first = base + admitted;
            fill(&mut buf[..run], first);
            let mut off = 0;
            while off < run {
                let n = target.admit_slice(black_box(&buf[off..run]));
                if n == 0 {
                    // Ordering: a plain flag, see `AbortOnPanic`.
                    if abort.load(Ordering::Relaxed) {
                        return (admitted, sum);
                    }
                    spin_loop();
                    continue;
                }
                sum = sum.wrapping_add(series_sum(first + off as u64, n));
                off += n;
                admitted += n as u64;
            }
        }
    } else {
        while admitted < quota {
            let v = base + admitted;
            if target.admit_one(black_box(v)) {
                sum = sum.wrapping_add(v);
                admitted += 1;
            } else {
                // Ordering: a plain flag, see `AbortOnPanic`.
                if abort.load(Ordering::Relaxed) {
                    break;
                }
                spin_loop();
            }
        }
    }
    (admitted, sum)
}

/// `Np1c`: `producers` threads admit `items` in all; one consumer drains until it has them all.
fn producers_consumer<T: Target>(
    target: &T,
    batch: bool,
    producers: usize,
    items: u64,
) -> TrialResult {
    let gate = StartGate::new(producers + 1);
    let abort = AtomicBool::new(false);
    let (gate, abort) = (&gate, &abort);
    thread::scope(|s| {
        let consumer = s.spawn(move || {
            let _guard = AbortOnPanic(abort);
            gate.wait(abort);
            Span::measure(Role::Consumer, || {
                let (mut drained, mut sum) = (0u64, 0u64);
                while drained < items {
                    let n = target.drain_all(&mut sum);
                    drained += n as u64;
                    if n == 0 {
                        // Ordering: a plain flag, see `AbortOnPanic`.
                        if abort.load(Ordering::Relaxed) {
                            break;
                        }
                        spin_loop();
                    }
                }
                (drained, black_box(sum))
            })
        });
        let workers: Vec<_> = (0..producers)
            .map(|p| {
                // Split the items as evenly as possible; the first `items % producers` get one more.
                let quota =
                    items / producers as u64 + u64::from((p as u64) < items % producers as u64);
                let base = (p as u64) << 40;
                s.spawn(move || {
                    let _guard = AbortOnPanic(abort);
                    gate.wait(abort);
                    Span::measure(Role::Producer(p), || {
                        produce(target, batch, base, quota, abort)
                    })
                })
            })
            .collect();
        let mut spans = Vec::with_capacity(producers + 1);
        let (mut admitted, mut sum_admitted) = (0u64, 0u64);
        for w in workers {
            let (span, (n, sum)) = w.join().expect("producer panicked");
            admitted += n;
            sum_admitted = sum_admitted.wrapping_add(sum);
            spans.push(span);
        }
        let (span, (drained, sum_drained)) = consumer.join().expect("consumer panicked");
        spans.push(span);
        let (wall, threads) = Span::timings(&spans);
        TrialResult {
            variant: Variant::Wkcore,
            shape: Shape::Producers(producers),
            items,
            wall,
            admitted,
            drained,
            sum_admitted,
            sum_drained,
            threads,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::series_sum;

    #[test]
    fn series_sum_matches_a_loop() {
        for first in [0u64, 1, 7, (3 << 40) + 5, u64::MAX - 10] {
            for n in 0..70usize {
                let naive = (0..n as u64).fold(0u64, |s, i| s.wrapping_add(first.wrapping_add(i)));
                assert_eq!(series_sum(first, n), naive, "first {first} n {n}");
            }
        }
    }
}
