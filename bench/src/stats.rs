//! Trials within a time budget, and the median over the trials worth keeping.

use std::time::{Duration, Instant};

use crate::{run_trial, Shape, TrialResult, Variant, ON_CPU_THRESHOLD};

/// What a run measures and for how long.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Shapes, measured one after the other.
    pub shapes: Vec<Shape>,
    /// Variants, interleaved trial by trial within a shape so that machine noise hits them alike.
    pub variants: Vec<Variant>,
    /// Items per trial.
    pub items_per_trial: u64,
    /// Total wall-time budget, split evenly over the shapes (what a shape overruns comes out of
    /// the shares of the shapes after it).
    pub budget: Duration,
    /// Rounds (one trial of every variant) run even past the budget.
    pub min_rounds: usize,
    /// Rounds never exceeded, whatever the budget.
    pub max_rounds: usize,
    /// A trial is kept only when every thread was on-CPU at least this share of its wall time.
    pub on_cpu_threshold: f64,
}

impl Plan {
    /// The default run: `shapes` × every variant, 2^20 items a trial, within `budget`.
    pub fn new(shapes: Vec<Shape>, budget: Duration) -> Self {
        Plan {
            shapes,
            variants: Variant::ALL.to_vec(),
            items_per_trial: 1 << 20,
            budget,
            min_rounds: 3,
            max_rounds: 201,
            on_cpu_threshold: ON_CPU_THRESHOLD,
        }
    }
}

/// The summary of one (shape, variant) cell.
#[derive(Clone, Debug)]
pub struct CellStats {
    /// Shape measured.
    pub shape: Shape,
    /// Variant measured.
    pub variant: Variant,
    /// Trials run (warm-up excluded).
    pub trials: usize,
    /// Trials in which every thread stayed on-CPU ≥ the threshold.
    pub kept: usize,
    /// No trial was kept, so the median is over all trials: treat the number with suspicion.
    pub fallback: bool,
    /// Median ns/item over the kept trials (over all trials when `fallback`).
    pub ns_per_item: f64,
    /// Lowest and highest ns/item over the trials the median was taken from.
    pub range: (f64, f64),
    /// Every trial moved every item exactly once.
    pub conserved: bool,
}

impl CellStats {
    /// Items per second at the median.
    pub fn items_per_sec(&self) -> f64 {
        1e9 / self.ns_per_item
    }
}

/// Median of `v` (mean of the middle two for an even count); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Summarizes the trials of one cell: median ns/item over the kept ones, or over all, flagged.
pub fn summarize(
    shape: Shape,
    variant: Variant,
    trials: &[TrialResult],
    threshold: f64,
) -> CellStats {
    let mut kept: Vec<f64> = trials
        .iter()
        .filter(|t| t.kept(threshold))
        .map(TrialResult::ns_per_item)
        .collect();
    let kept_n = kept.len();
    let fallback = kept.is_empty();
    if fallback {
        kept = trials.iter().map(TrialResult::ns_per_item).collect();
    }
    let range = kept
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    CellStats {
        shape,
        variant,
        trials: trials.len(),
        kept: kept_n,
        fallback,
        ns_per_item: median(&mut kept),
        range,
        conserved: trials.iter().all(TrialResult::conserved),
    }
}

/// Runs `plan`: per shape, one warm-up trial per variant, then rounds of one trial per variant
/// until the shape's share of what is left of the budget is spent (within
/// `min_rounds..=max_rounds`). When `min_rounds` rounds of `items_per_trial` would not fit the
/// share, the shape runs fewer items a trial ([`crate::budget::fit_size`], at least 4096; the
/// warm-up is the probe). `progress` hears one line per shape, with the items it ran at.
pub fn run_plan(plan: &Plan, mut progress: impl FnMut(&str)) -> Vec<CellStats> {
    let run_start = Instant::now();
    let mut cells = Vec::new();
    for (i, &shape) in plan.shapes.iter().enumerate() {
        let per_shape =
            crate::budget::share(plan.budget, run_start.elapsed(), plan.shapes.len() - i);
        let start = Instant::now();
        let items = crate::budget::fit_size(
            plan.items_per_trial,
            plan.items_per_trial.min(4096),
            per_shape,
            plan.min_rounds as u32,
            |items| {
                for &v in &plan.variants {
                    run_trial(v, shape, items);
                }
            },
        );
        let mut trials: Vec<Vec<TrialResult>> = vec![Vec::new(); plan.variants.len()];
        let (mut rounds, mut last) = (0, Duration::ZERO);
        while crate::budget::another_round(
            rounds,
            plan.min_rounds,
            plan.max_rounds,
            start.elapsed(),
            last,
            per_shape,
        ) {
            let round = Instant::now();
            for (i, &v) in plan.variants.iter().enumerate() {
                trials[i].push(run_trial(v, shape, items));
            }
            rounds += 1;
            last = round.elapsed();
        }
        progress(&format!(
            "{shape}: {rounds} rounds of {items} items in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        for (i, &v) in plan.variants.iter().enumerate() {
            cells.push(summarize(shape, v, &trials[i], plan.on_cpu_threshold));
        }
    }
    cells
}
