//! `wkcore-bench --owner`: the owner registry's paths, wkcore beside upstream's algorithm under
//! one mutex ([`MutexOwners`]) and a raw floor, in one run.
//!
//! Rows:
//!
//! - `begin_done`: one begin and one done on an active owner through its handle (wkcore), by
//!   identity under the registry mutex (the reference, as upstream does it), and the floor: two
//!   uncontended read-modify-writes of one word, what the lock-free path costs at the least. At
//!   2 threads each thread works on an owner of its own (different owners, one registry).
//! - `reserve_activate`: reserve and activate [`OWNERS_MANY`] owners, ns per owner (throughput
//!   is its inverse), from an empty registry.
//! - `sweep_visit` at 10⁴ / 10⁵ / 10⁶ held: ten `sweep(256)` calls over 2560 due owners among
//!   `n` held, ns per visited owner (fence, reschedule, close, retire): O(log n) per visit.
//! - `resident_bytes_per_owner`: the process's resident-set growth per held owner, measured
//!   around reserving and activating [`OWNERS_MANY`] owners.
//!
//! A trial is kept when every thread was on-CPU at least [`crate::ON_CPU_THRESHOLD`] of its
//! wall time; the median is over kept trials (over all, marked `*`, when none was). Timings are
//! reported, never asserted.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use wkcore::clock::{Clock, ManualClock};
use wkcore::metrics::Registry;
use wkcore::owner::{Budget, Claim, OwnerHandle, OwnerKey, OwnerOptions, OwnerRegistry};
use wkcore_references::owner::MutexOwners;

use crate::timed::{fmt_ns, summarize, timed, Timed};

/// Begin+done pairs per thread per trial.
pub const PAIRS: u64 = 1 << 20;
/// Owners of the `reserve_activate` row and of the resident-memory measurement.
pub const OWNERS_MANY: usize = 1_000_000;
/// Owners visited per `sweep_visit` trial.
const SWEEP_K: usize = 2560;
/// Owners visited per `sweep` call (the largest limit).
const SWEEP_LIMIT: usize = 256;
const SEC: u64 = 1_000_000_000;

/// What a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerOp {
    /// Begin + done.
    BeginDone,
    /// Begin + done on a registry reading the real (TSC) clock, as in production; the other
    /// rows read a manual clock (one load), so this one shows what the clock read adds.
    BeginDoneRealClock,
    /// Reserve + activate, per owner.
    ReserveActivate,
    /// One visited owner of a sweep, at this many held.
    SweepVisit(usize),
}

impl OwnerOp {
    /// The row's name.
    pub fn name(self) -> String {
        match self {
            OwnerOp::BeginDone => "begin_done".into(),
            OwnerOp::BeginDoneRealClock => "begin_done_real_clock".into(),
            OwnerOp::ReserveActivate => "reserve_activate".into(),
            OwnerOp::SweepVisit(n) => format!("sweep_visit@{n}"),
        }
    }
}

/// Who runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerVariant {
    /// wkcore's registry.
    Wkcore,
    /// Upstream's algorithm under one mutex.
    Mutex,
    /// Two uncontended read-modify-writes of one word.
    Floor,
}

impl OwnerVariant {
    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            OwnerVariant::Wkcore => "wkcore",
            OwnerVariant::Mutex => "mutex",
            OwnerVariant::Floor => "floor",
        }
    }
}

/// One measured cell.
#[derive(Clone, Debug)]
pub struct OwnerCell {
    /// The row's operation.
    pub op: OwnerOp,
    /// Threads.
    pub threads: usize,
    /// The column.
    pub variant: OwnerVariant,
    /// Median ns per operation.
    pub ns_per_op: f64,
    /// Trials run.
    pub trials: usize,
    /// Trials kept.
    pub kept: usize,
    /// The size each trial ran at: pairs per thread (`begin_done`), owners reserved
    /// (`reserve_activate`) or owners held (`sweep_visit`); below the default when the budget
    /// could not hold three trials at the default.
    pub size: u64,
}

fn options(clock: Arc<ManualClock>, capacity: u32) -> OwnerOptions {
    OwnerOptions {
        node_id: 1,
        boot_id: "bench".into(),
        capacity,
        max_operations: 8,
        pending_timeout: Duration::from_secs(5),
        max_lease: Duration::from_secs(60),
        close_retry: Duration::from_millis(250),
        clock,
    }
}

fn claim(i: usize) -> Claim {
    Claim {
        key: OwnerKey::new("bench", format!("client-{i}")),
        uid: format!("uid-{i}"),
        session_generation: 1,
        owner_generation: 1,
    }
}

/// The begin/done subjects: a registry of each kind with two active owners.
struct BeginDone {
    /// Kept alive: dropping a registry stops its admission.
    _wk: OwnerRegistry,
    wk_owners: Vec<OwnerHandle>,
    /// Kept alive, as `_wk`.
    _real: OwnerRegistry,
    real_owners: Vec<OwnerHandle>,
    mx: MutexOwners,
    mx_owners: Vec<wkcore::owner::Owner>,
    words: Vec<CachePadded<AtomicU64>>,
}

impl BeginDone {
    fn new(metrics: &Registry) -> Self {
        let clock = Arc::new(ManualClock::new(SEC));
        let wk = OwnerRegistry::with_metrics(options(clock.clone(), 16), metrics).unwrap();
        let mx = MutexOwners::new(options(clock.clone(), 16)).unwrap();
        let until = clock.now_nanos() + 50 * SEC;
        let wk_owners = (0..2)
            .map(|i| {
                let h = wk.reserve(&claim(i), |_: &Budget| Ok(())).unwrap();
                h.activate(1, until).unwrap();
                h
            })
            .collect();
        let production = OwnerOptions::production(1, "bench", 16);
        let real = OwnerRegistry::with_metrics(production, metrics).unwrap();
        let real_owners = (0..2)
            .map(|i| {
                let h = real.reserve(&claim(i), |_: &Budget| Ok(())).unwrap();
                h.activate(1, real.now() + 50 * SEC).unwrap();
                h
            })
            .collect();
        let mx_owners = (0..2)
            .map(|i| {
                let o = mx.reserve(&claim(i), |_: &Budget| Ok(())).unwrap();
                mx.activate(&o, 1, until).unwrap();
                o
            })
            .collect();
        Self {
            _wk: wk,
            wk_owners,
            _real: real,
            real_owners,
            mx,
            mx_owners,
            words: (0..2)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    fn trial(&self, variant: OwnerVariant, threads: usize, pairs: u64, real: bool) -> Timed {
        let owners = if real {
            &self.real_owners
        } else {
            &self.wk_owners
        };
        timed(
            threads,
            pairs * threads as u64,
            |_| {},
            |t| match variant {
                OwnerVariant::Wkcore => {
                    let h = &owners[t];
                    for _ in 0..pairs {
                        let op = black_box(h).begin().unwrap();
                        op.done();
                    }
                }
                OwnerVariant::Mutex => {
                    let o = &self.mx_owners[t];
                    for _ in 0..pairs {
                        let op = self.mx.begin(black_box(o)).unwrap();
                        self.mx.done(op);
                    }
                }
                OwnerVariant::Floor => {
                    let w = &*self.words[t];
                    for _ in 0..pairs {
                        // Ordering: AcqRel, as the registry's begin and done CASes.
                        black_box(black_box(w).fetch_add(1, Ordering::AcqRel));
                        black_box(black_box(w).fetch_sub(1, Ordering::AcqRel));
                    }
                }
            },
        )
    }
}

fn reserve_activate_trial(variant: OwnerVariant, n: usize) -> Timed {
    let clock = Arc::new(ManualClock::new(SEC));
    let claims: Vec<Claim> = (0..n).map(claim).collect();
    let until = clock.now_nanos() + 50 * SEC;
    let metrics = Registry::new();
    match variant {
        OwnerVariant::Wkcore => {
            let r = OwnerRegistry::with_metrics(options(clock, n as u32), &metrics).unwrap();
            timed(
                1,
                n as u64,
                |_| {},
                |_| {
                    for c in &claims {
                        let h = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                        h.activate(1, until).unwrap();
                    }
                },
            )
        }
        _ => {
            let r = MutexOwners::new(options(clock, n as u32)).unwrap();
            timed(
                1,
                n as u64,
                |_| {},
                |_| {
                    for c in &claims {
                        let o = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                        r.activate(&o, 1, until).unwrap();
                    }
                },
            )
        }
    }
}

fn sweep_trial(variant: OwnerVariant, held: usize) -> Timed {
    let clock = Arc::new(ManualClock::new(SEC));
    let metrics = Registry::new();
    let far = clock.now_nanos() + 50 * SEC;
    match variant {
        OwnerVariant::Wkcore => {
            let r =
                OwnerRegistry::with_metrics(options(clock.clone(), held as u32), &metrics).unwrap();
            for i in 0..held {
                let h = r.reserve(&claim(i), |_: &Budget| Ok(())).unwrap();
                if i >= SWEEP_K {
                    h.activate(1, far).unwrap();
                }
            }
            clock.advance(6 * SEC);
            let t = timed(
                1,
                SWEEP_K as u64,
                |_| {},
                |_| {
                    for _ in 0..SWEEP_K / SWEEP_LIMIT {
                        assert_eq!(r.sweep(SWEEP_LIMIT, &Budget::unbounded()), Ok(SWEEP_LIMIT));
                    }
                },
            );
            assert_eq!(r.snapshot().held, (held - SWEEP_K) as u64);
            t
        }
        _ => {
            let r = MutexOwners::new(options(clock.clone(), held as u32)).unwrap();
            for i in 0..held {
                let o = r.reserve(&claim(i), |_: &Budget| Ok(())).unwrap();
                if i >= SWEEP_K {
                    r.activate(&o, 1, far).unwrap();
                }
            }
            clock.advance(6 * SEC);
            timed(
                1,
                SWEEP_K as u64,
                |_| {},
                |_| {
                    for _ in 0..SWEEP_K / SWEEP_LIMIT {
                        assert_eq!(
                            r.sweep(SWEEP_LIMIT, &Budget::unbounded())
                                .map_err(|e| e.error),
                            Ok(SWEEP_LIMIT)
                        );
                    }
                },
            )
        }
    }
}

/// Resident bytes per held owner: RSS growth around reserving and activating `n` owners.
pub fn resident_bytes_per_owner(n: usize) -> Option<f64> {
    let clock = Arc::new(ManualClock::new(SEC));
    let metrics = Registry::new();
    let claims: Vec<Claim> = (0..n).map(claim).collect();
    let until = clock.now_nanos() + 50 * SEC;
    let r = OwnerRegistry::with_metrics(options(clock, n as u32), &metrics).unwrap();
    let before = resident_bytes()?;
    for c in &claims {
        let h = r.reserve(c, |_: &Budget| Ok(())).unwrap();
        h.activate(1, until).unwrap();
    }
    let after = resident_bytes()?;
    black_box(&r);
    Some((after.saturating_sub(before)) as f64 / n as f64)
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// The rows, in table order.
pub fn plan(sizes: &[usize]) -> Vec<(OwnerOp, usize, Vec<OwnerVariant>)> {
    use OwnerVariant::*;
    let mut rows = vec![
        (OwnerOp::BeginDone, 1, vec![Wkcore, Mutex, Floor]),
        (OwnerOp::BeginDone, 2, vec![Wkcore, Mutex, Floor]),
        (OwnerOp::BeginDoneRealClock, 1, vec![Wkcore]),
        (OwnerOp::ReserveActivate, 1, vec![Wkcore, Mutex]),
    ];
    for &n in sizes {
        rows.push((OwnerOp::SweepVisit(n), 1, vec![Wkcore, Mutex]));
    }
    rows
}

/// The registry sizes of the sweep rows and the owners of `reserve_activate`.
#[derive(Clone, Debug)]
pub struct Scale {
    /// Held owners of each sweep row.
    pub sweep_sizes: Vec<usize>,
    /// Owners reserved per `reserve_activate` trial.
    pub owners: usize,
    /// Begin+done pairs per thread per `begin_done` trial.
    pub pairs: u64,
}

impl Default for Scale {
    fn default() -> Self {
        Self {
            sweep_sizes: vec![10_000, 100_000, 1_000_000],
            owners: OWNERS_MANY,
            pairs: PAIRS,
        }
    }
}

/// A row of the table: its operation, its thread count and its columns.
pub type OwnerRow = (OwnerOp, usize, Vec<OwnerVariant>);

/// Trials every row runs whatever its share of the budget.
const MIN_TRIALS: u32 = 3;

/// Runs every row of [`plan`] within `budget`.
pub fn run(budget: Duration, scale: &Scale, progress: impl Fn(&str)) -> Vec<OwnerCell> {
    run_rows(&plan(&scale.sweep_sizes), budget, scale, progress)
}

/// The row's default size (pairs per thread, owners, or owners held) and the smallest it may
/// be fitted down to.
fn sizes(op: OwnerOp, scale: &Scale) -> (u64, u64) {
    match op {
        OwnerOp::BeginDone | OwnerOp::BeginDoneRealClock => (scale.pairs, scale.pairs.min(1_000)),
        OwnerOp::ReserveActivate => (scale.owners as u64, (scale.owners as u64).min(1_000)),
        // At least twice the due owners, so that most held owners are not due.
        OwnerOp::SweepVisit(n) => (n as u64, (2 * SWEEP_K as u64).min(n as u64)),
    }
}

/// Runs `rows` within `budget`: each row gets an even share of what is left, runs at least 3
/// trials of each column, and when 3 trials at its default size would not fit its share it runs
/// at a smaller size ([`crate::budget::fit_size`]): fewer pairs, fewer owners reserved, or fewer
/// owners held (the row is then named after the size it ran at, e.g. `sweep_visit@131072`).
pub fn run_rows(
    rows: &[OwnerRow],
    budget: Duration,
    scale: &Scale,
    progress: impl Fn(&str),
) -> Vec<OwnerCell> {
    let run_start = Instant::now();
    let metrics = Registry::new();
    let subjects = BeginDone::new(&metrics);
    let mut cells = Vec::new();
    for (row, (op, threads, variants)) in rows.iter().enumerate() {
        let (op, threads) = (*op, *threads);
        let share = crate::budget::share(budget, run_start.elapsed(), rows.len() - row);
        let start = Instant::now();
        let trial = |v: OwnerVariant, size: u64| match op {
            OwnerOp::BeginDone => subjects.trial(v, threads, size, false),
            OwnerOp::BeginDoneRealClock => subjects.trial(v, threads, size, true),
            OwnerOp::ReserveActivate => reserve_activate_trial(v, size as usize),
            OwnerOp::SweepVisit(_) => sweep_trial(v, size as usize),
        };
        let (default, smallest) = sizes(op, scale);
        let size = crate::budget::fit_size(default, smallest, share, MIN_TRIALS, |size| {
            for &v in variants {
                trial(v, size);
            }
        });
        let op = match op {
            OwnerOp::SweepVisit(_) => OwnerOp::SweepVisit(size as usize),
            op => op,
        };
        let mut results: Vec<Vec<Timed>> = variants.iter().map(|_| Vec::new()).collect();
        let max_trials = match op {
            OwnerOp::BeginDone | OwnerOp::BeginDoneRealClock => 200,
            _ => 5,
        };
        let mut last = Duration::ZERO;
        while crate::budget::another_round(
            results[0].len(),
            MIN_TRIALS as usize,
            max_trials,
            start.elapsed(),
            last,
            share,
        ) {
            let round = Instant::now();
            for (i, &v) in variants.iter().enumerate() {
                results[i].push(trial(v, size));
            }
            last = round.elapsed();
        }
        for (v, trials) in variants.iter().zip(results) {
            let (ns_per_op, kept) = summarize(&trials);
            let cell = OwnerCell {
                op,
                threads,
                variant: *v,
                ns_per_op,
                trials: trials.len(),
                kept,
                size,
            };
            progress(&format!(
                "{} {}t {}: {:.2} ns/op ({} of {} trials kept, size {size}, {:.1} s)",
                op.name(),
                threads,
                v.name(),
                cell.ns_per_op,
                cell.kept,
                cell.trials,
                start.elapsed().as_secs_f64()
            ));
            cells.push(cell);
        }
    }
    drop(subjects);
    cells
}

fn cell(cells: &[OwnerCell], op: OwnerOp, threads: usize, v: OwnerVariant) -> Option<&OwnerCell> {
    cells
        .iter()
        .find(|c| c.op == op && c.threads == threads && c.variant == v)
}

fn fmt_cell(c: Option<&OwnerCell>) -> String {
    c.map_or_else(|| "-".into(), |c| fmt_ns(c.ns_per_op, c.kept))
}

/// The (op, threads) rows of `cells`, in the order they ran.
fn rows_of(cells: &[OwnerCell]) -> Vec<(OwnerOp, usize)> {
    let mut rows = Vec::new();
    for c in cells {
        if !rows.contains(&(c.op, c.threads)) {
            rows.push((c.op, c.threads));
        }
    }
    rows
}

/// The table: one row per (op, threads) measured, ns/op per variant, wkcore / mutex.
pub fn table(cells: &[OwnerCell]) -> String {
    use OwnerVariant::*;
    let mut out = format!(
        "{:<22} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
        "op", "threads", "wkcore ns/op", "mutex ns/op", "floor ns/op", "wkcore/mutex"
    );
    for (op, threads) in rows_of(cells) {
        let (w, m) = (
            cell(cells, op, threads, Wkcore),
            cell(cells, op, threads, Mutex),
        );
        let ratio = match (w, m) {
            (Some(w), Some(m)) => format!("{:.2}", w.ns_per_op / m.ns_per_op),
            _ => "-".into(),
        };
        out += &format!(
            "{:<22} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
            op.name(),
            threads,
            fmt_cell(w),
            fmt_cell(m),
            fmt_cell(cell(cells, op, threads, Floor)),
            ratio
        );
    }
    out
}

/// The targets (docs/PERFORMANCE.md), measured: `(target, measured, met)`.
pub fn targets(cells: &[OwnerCell]) -> Vec<(String, String, bool)> {
    use OwnerVariant::*;
    let mut out = Vec::new();
    let ns = |op, t, v| cell(cells, op, t, v).map(|c| c.ns_per_op);
    if let Some(w) = ns(OwnerOp::BeginDone, 1, Wkcore) {
        out.push((
            "begin+done <= 30 ns".into(),
            format!("{w:.2} ns"),
            w <= 30.0,
        ));
        if let Some(f) = ns(OwnerOp::BeginDone, 1, Floor) {
            let x = w / f;
            out.push((
                "begin+done <= 1.5x the two-atomic floor".into(),
                format!("{x:.2}x"),
                x <= 1.5,
            ));
        }
        if let Some(two) = ns(OwnerOp::BeginDone, 2, Wkcore) {
            let x = w / two;
            out.push((
                "2 threads on different owners >= 1.8x one thread".into(),
                format!("{x:.2}x"),
                x >= 1.8,
            ));
        }
    }
    if let (Some(one), Some(two)) = (
        ns(OwnerOp::BeginDone, 1, Floor),
        ns(OwnerOp::BeginDone, 2, Floor),
    ) {
        out.push((
            "(the machine: 2 threads on own words, x one thread)".into(),
            format!("{:.2}x", one / two),
            true,
        ));
    }
    if let Some(r) = ns(OwnerOp::BeginDoneRealClock, 1, Wkcore) {
        out.push((
            "begin+done <= 30 ns, real clock".into(),
            format!("{r:.2} ns"),
            r <= 30.0,
        ));
    }
    if let Some(r) = ns(OwnerOp::ReserveActivate, 1, Wkcore) {
        let per_s = 1e9 / r;
        out.push((
            "reserve+activate >= 1M/s".into(),
            format!("{:.2}M/s", per_s / 1e6),
            per_s >= 1e6,
        ));
    }
    out
}

/// The JSON object (`{"owner":[...]}`), one entry per cell.
pub fn json(cells: &[OwnerCell]) -> String {
    let items: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{{\"op\":\"{}\",\"threads\":{},\"variant\":\"{}\",\"ns_per_op\":{:.3},\"trials\":{},\"kept\":{},\"size\":{}}}",
                c.op.name(),
                c.threads,
                c.variant.name(),
                c.ns_per_op,
                c.trials,
                c.kept,
                c.size
            )
        })
        .collect();
    format!("{{\"owner\":[{}]}}", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_fills_every_cell() {
        let scale = Scale {
            sweep_sizes: vec![3_000],
            owners: 1_000,
            pairs: 1_000,
        };
        let cells = run(Duration::from_millis(1), &scale, |_| {});
        let expected: usize = plan(&scale.sweep_sizes)
            .iter()
            .map(|(_, _, v)| v.len())
            .sum();
        assert_eq!(cells.len(), expected);
        assert!(cells
            .iter()
            .all(|c| c.ns_per_op.is_finite() && c.trials >= 3));
        assert_eq!(
            table(&cells).lines().count(),
            plan(&scale.sweep_sizes).len() + 1
        );
        assert!(json(&cells).starts_with("{\"owner\":["));
        assert!(resident_bytes_per_owner(1_000).is_some());
    }
}
