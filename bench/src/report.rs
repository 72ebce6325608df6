//! The table, the JSON object and the targets (docs/PERFORMANCE.md).

use std::fmt::Write as _;

use crate::machine::Machine;
use crate::{CellStats, Shape, Variant};

/// The hot path these numbers belong to (`"path"` in the JSON).
pub const PATH: &str = "enqueue";

fn find(cells: &[CellStats], shape: Shape, variant: Variant) -> Option<&CellStats> {
    cells
        .iter()
        .find(|c| c.shape == shape && c.variant == variant)
}

/// `cell`'s ns/item divided by that of `other` in the same shape (lower is better).
fn ratio_to(cells: &[CellStats], cell: &CellStats, other: Variant) -> Option<f64> {
    let o = find(cells, cell.shape, other)?;
    Some(cell.ns_per_item / o.ns_per_item)
}

fn si(x: f64) -> String {
    match x {
        x if !x.is_finite() => "-".to_owned(),
        x if x >= 1e9 => format!("{:.2} G", x / 1e9),
        x if x >= 1e6 => format!("{:.1} M", x / 1e6),
        x if x >= 1e3 => format!("{:.1} k", x / 1e3),
        x => format!("{x:.0}"),
    }
}

fn opt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"))
}

/// The human-readable table (Markdown, so it pastes into `docs/PERFORMANCE.md` as is).
///
/// "vs mutex" is ns/item over the mutex equivalent's (wkcore over mutex, wkcore_batch64 over
/// mutex_batch64); "vs floor" is ns/item over `arrayqueue_floor`'s; both lower is better.
/// "kept" is trials in which every thread stayed on-CPU, of trials run; `*` marks a cell where
/// none was and the median is over all trials.
pub fn table(cells: &[CellStats], machine: &Machine) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "machine: {machine}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| shape | variant | ns/item | items/s | vs mutex | vs floor | kept | min..max ns |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|");
    for c in cells {
        let vs_mutex = c
            .variant
            .mutex_equivalent()
            .and_then(|m| ratio_to(cells, c, m));
        let vs_floor = if c.variant == Variant::ArrayQueueFloor {
            None
        } else {
            ratio_to(cells, c, Variant::ArrayQueueFloor)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {} | {} | {} | {}/{}{} | {:.2}..{:.2} |{}",
            c.shape,
            c.variant,
            c.ns_per_item,
            si(c.items_per_sec()),
            opt_ratio(vs_mutex),
            opt_ratio(vs_floor),
            c.kept,
            c.trials,
            if c.fallback { "*" } else { "" },
            c.range.0,
            c.range.1,
            if c.conserved { "" } else { " ITEMS LOST" },
        );
    }
    if cells.iter().any(|c| c.fallback) {
        let _ = writeln!(
            out,
            "\n`*`: no trial had every thread on-CPU ≥ 95 %; the median is over all trials \
             (a descheduled thread makes a contended shape partly serial)."
        );
    }
    out
}

fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "null".to_owned()
    }
}

/// Exactly one JSON object: `{"results":[{"path":"enqueue","shape":..,"variant":..,
/// "ns_per_item":F,"items_per_sec":F,"trials":N,"trials_kept":N,"all_trials_fallback":B,
/// "conserved":B}, ...]}`.
pub fn json(cells: &[CellStats]) -> String {
    let rows: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{{\"path\":\"{PATH}\",\"shape\":\"{}\",\"variant\":\"{}\",\"ns_per_item\":{},\
                 \"items_per_sec\":{},\"trials\":{},\"trials_kept\":{},\
                 \"all_trials_fallback\":{},\"conserved\":{}}}",
                c.shape,
                c.variant,
                json_f64(c.ns_per_item),
                json_f64(c.items_per_sec()),
                c.trials,
                c.kept,
                c.fallback,
                c.conserved
            )
        })
        .collect();
    format!("{{\"results\":[{}]}}", rows.join(","))
}

/// Whether a target holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Measured and met.
    Met,
    /// Measured and missed.
    NotMet,
    /// No target: reported for information.
    MeasuredOnly,
    /// A cell it needs was not measured in this run.
    NotMeasured,
}

impl Verdict {
    /// `met` | `NOT met` | `measured only` | `not measured`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "NOT met",
            Verdict::MeasuredOnly => "measured only",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// One of the targets, checked against a run.
#[derive(Clone, Debug)]
pub struct TargetCheck {
    /// The target as docs/PERFORMANCE.md states it.
    pub target: &'static str,
    /// What was measured, in words.
    pub measured: String,
    /// Whether it holds.
    pub verdict: Verdict,
    /// A cell it rests on had no trial with every thread on-CPU.
    pub unfiltered: bool,
}

/// Checks the targets: `1t` single wkcore ≤ 0.75× mutex; `1p1c` wkcore ≤ 1.0×
/// `arrayqueue_floor` and ≥ 5× faster than mutex; `1t` batch64 ≤ 2 ns/item and ≥ 2.5× faster
/// than mutex batch64; `2p1c` measured only.
pub fn targets(cells: &[CellStats]) -> Vec<TargetCheck> {
    use Variant::*;
    let cell = |shape, v| find(cells, shape, v);
    let (one, p1, p2) = (Shape::OneThread, Shape::Producers(1), Shape::Producers(2));
    vec![
        compare(
            "1t single: wkcore <= 0.75x mutex",
            cell(one, Wkcore),
            cell(one, Mutex),
            Goal::RatioAtMost(0.75),
        ),
        compare(
            "1p1c: wkcore <= 1.0x arrayqueue_floor",
            cell(p1, Wkcore),
            cell(p1, ArrayQueueFloor),
            Goal::RatioAtMost(1.0),
        ),
        compare(
            "1p1c: wkcore >= 5x faster than mutex",
            cell(p1, Wkcore),
            cell(p1, Mutex),
            Goal::SpeedupAtLeast(5.0),
        ),
        compare(
            "1t batch64: wkcore_batch64 <= 2 ns/item",
            cell(one, WkcoreBatch64),
            cell(one, WkcoreBatch64),
            Goal::NsAtMost(2.0),
        ),
        compare(
            "1t batch64: wkcore_batch64 >= 2.5x faster than mutex_batch64",
            cell(one, WkcoreBatch64),
            cell(one, MutexBatch64),
            Goal::SpeedupAtLeast(2.5),
        ),
        compare(
            "2p1c: measured only (wkcore vs mutex)",
            cell(p2, Wkcore),
            cell(p2, Mutex),
            Goal::None,
        ),
    ]
}

/// What a target asks of cell `a` (compared with cell `b`).
#[derive(Clone, Copy)]
enum Goal {
    /// a's ns/item ≤ limit × b's.
    RatioAtMost(f64),
    /// b's ns/item ≥ limit × a's.
    SpeedupAtLeast(f64),
    /// a's ns/item ≤ limit.
    NsAtMost(f64),
    /// Reported only.
    None,
}

fn compare(
    target: &'static str,
    a: Option<&CellStats>,
    b: Option<&CellStats>,
    goal: Goal,
) -> TargetCheck {
    let (Some(a), Some(b)) = (a, b) else {
        return TargetCheck {
            target,
            measured: "-".to_owned(),
            verdict: Verdict::NotMeasured,
            unfiltered: false,
        };
    };
    let (x, y) = (a.ns_per_item, b.ns_per_item);
    let (measured, ok) = match goal {
        Goal::RatioAtMost(limit) => (
            format!("{x:.2} vs {y:.2} ns/item = {:.2}x", x / y),
            x / y <= limit,
        ),
        Goal::SpeedupAtLeast(limit) => (
            format!("{y:.2} / {x:.2} ns/item = {:.2}x faster", y / x),
            y / x >= limit,
        ),
        Goal::NsAtMost(limit) => (format!("{x:.2} ns/item"), x <= limit),
        Goal::None => (format!("{x:.2} vs {y:.2} ns/item = {:.2}x", x / y), true),
    };
    let verdict = match (goal, ok) {
        (Goal::None, _) => Verdict::MeasuredOnly,
        (_, true) => Verdict::Met,
        (_, false) => Verdict::NotMet,
    };
    TargetCheck {
        target,
        measured,
        verdict,
        unfiltered: a.fallback || b.fallback,
    }
}

/// The targets as a Markdown table.
pub fn targets_table(checks: &[TargetCheck]) -> String {
    let mut out = String::from("| target | measured | verdict |\n|---|---|---|\n");
    for c in checks {
        let _ = writeln!(
            out,
            "| {} | {} | {}{} |",
            c.target,
            c.measured,
            c.verdict.label(),
            if c.unfiltered { " (unfiltered*)" } else { "" }
        );
    }
    out
}
