//! The main job with no table flag: one representative row per system, each beside its
//! mutex/upstream reference and its floor, in about a minute (`--seconds`, default 60, split
//! evenly over the four rows).
//!
//! - admission: `1t` single admit + drain, per item: wkcore, upstream's slot under one `Mutex`,
//!   a raw `ArrayQueue` push + pop ([`crate::run_plan`]);
//! - owner: begin + done by handle, 1 thread: wkcore, upstream's algorithm under one mutex, two
//!   uncontended atomic RMWs ([`crate::owner::run_rows`]);
//! - delivery tags: a hit by channel handle, 1 thread: wkcore, upstream's manager under one
//!   mutex (by key), one `Acquire` pointer load ([`crate::tag::HitSubjects`], as the
//!   `hit_by_handle` row of `--tag`);
//! - coordination: ledger finalize by key, 1 thread: wkcore, a mutex around a `HashMap`, one
//!   uncontended CAS ([`crate::coord::run_rows`]).
//!
//! Each figure is the median ns per operation over the kept trials (every thread on-CPU
//! ≥ [`crate::ON_CPU_THRESHOLD`] of its wall time), over all trials (marked `*`) when none was.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::coord::{self, CoordOp, CoordVariant};
use crate::machine::Machine;
use crate::owner::{self, OwnerOp, OwnerVariant};
use crate::tag::{HitSubjects, CHANNELS, HITS};
use crate::timed::{self, fmt_ns, Timed};
use crate::{run_plan, Plan, Shape, Variant};

/// One column of a summary row: a median and the trials behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    /// Median ns per operation.
    pub ns_per_op: f64,
    /// Trials kept (every thread on-CPU enough).
    pub kept: usize,
    /// Trials run.
    pub trials: usize,
}

/// One system's representative row.
#[derive(Clone, Debug)]
pub struct SummaryRow {
    /// The system (`admission`, `owner`, `delivery tags`, `coordination`).
    pub system: &'static str,
    /// The operation and its threads, e.g. `1t single admit + drain`.
    pub operation: &'static str,
    /// wkcore's figure.
    pub wkcore: Figure,
    /// The reference: the same contract as upstream WuKongIM does it, under one mutex.
    pub reference: Figure,
    /// What the reference is, in a few words.
    pub reference_name: &'static str,
    /// The floor: the least the operation could cost.
    pub floor: Figure,
    /// What the floor is, in a few words.
    pub floor_name: &'static str,
    /// The deeper table behind the row (its flag).
    pub flag: &'static str,
}

impl SummaryRow {
    /// wkcore ÷ reference: below 1, wkcore is faster.
    pub fn ratio(&self) -> f64 {
        self.wkcore.ns_per_op / self.reference.ns_per_op
    }
}

/// The rows, in the order they run: `(system, operation)`.
pub const ROWS: [(&str, &str); 4] = [
    ("admission", "1t single admit + drain"),
    ("owner", "1t begin + done by handle"),
    ("delivery tags", "1t hit by channel handle"),
    ("coordination", "1t ledger finalize by key"),
];

fn admission(share: Duration) -> SummaryRow {
    let mut plan = Plan::new(vec![Shape::OneThread], share);
    plan.variants = vec![Variant::Wkcore, Variant::Mutex, Variant::ArrayQueueFloor];
    let cells = run_plan(&plan, |_| {});
    let figure = |v: Variant| {
        let c = cells
            .iter()
            .find(|c| c.variant == v)
            .expect("every variant ran");
        assert!(c.conserved, "admission trials lost or duplicated items");
        Figure {
            ns_per_op: c.ns_per_item,
            kept: c.kept,
            trials: c.trials,
        }
    };
    SummaryRow {
        system: ROWS[0].0,
        operation: ROWS[0].1,
        wkcore: figure(Variant::Wkcore),
        reference: figure(Variant::Mutex),
        reference_name: "upstream's slot under one Mutex",
        floor: figure(Variant::ArrayQueueFloor),
        floor_name: "ArrayQueue push + pop",
        flag: "--admission",
    }
}

fn owner(share: Duration) -> SummaryRow {
    use OwnerVariant::*;
    let rows = [(OwnerOp::BeginDone, 1, vec![Wkcore, Mutex, Floor])];
    let cells = owner::run_rows(&rows, share, &owner::Scale::default(), |_| {});
    let figure = |v: OwnerVariant| {
        let c = cells
            .iter()
            .find(|c| c.variant == v)
            .expect("every variant ran");
        Figure {
            ns_per_op: c.ns_per_op,
            kept: c.kept,
            trials: c.trials,
        }
    };
    SummaryRow {
        system: ROWS[1].0,
        operation: ROWS[1].1,
        wkcore: figure(Wkcore),
        reference: figure(Mutex),
        reference_name: "upstream's registry under one mutex",
        floor: figure(Floor),
        floor_name: "two uncontended atomic RMWs",
        flag: "--owner",
    }
}

/// One trial of `hits` hits by `hit` over the subjects' channels in turn, as `--tag`'s
/// `hit_by_handle` row runs it; every look-up must hit.
fn tag_trial(
    s: &HitSubjects,
    hits: u64,
    hit: impl Fn(&HitSubjects, usize) -> bool + Sync,
) -> Timed {
    timed::timed(
        1,
        hits,
        |_| {},
        |_| {
            let n = s.len();
            let (mut c, mut hit_count) = (0, 0u64);
            for _ in 0..hits {
                hit_count += u64::from(hit(s, std::hint::black_box(c)));
                c += 1;
                if c == n {
                    c = 0;
                }
            }
            assert_eq!(hit_count, hits, "every look-up hits");
        },
    )
}

fn tag(share: Duration, hits: u64, channels: usize) -> SummaryRow {
    let start = Instant::now();
    let s = HitSubjects::new(channels);
    // Each column's hit is passed as a function item, not a pointer, so that it is inlined
    // into the loop as in `--tag`.
    let column = |i: usize, hits: u64| match i {
        0 => tag_trial(&s, hits, HitSubjects::hit_by_handle),
        1 => tag_trial(&s, hits, HitSubjects::hit_mutex),
        _ => tag_trial(&s, hits, HitSubjects::hit_floor),
    };
    let hits = crate::budget::fit_size(hits, hits.min(10_000), share, 3, |size| {
        for i in 0..3 {
            column(i, size);
        }
    });
    let mut results: Vec<Vec<Timed>> = vec![Vec::new(), Vec::new(), Vec::new()];
    let mut last = Duration::ZERO;
    while crate::budget::another_round(results[0].len(), 3, 200, start.elapsed(), last, share) {
        let round = Instant::now();
        for (i, r) in results.iter_mut().enumerate() {
            r.push(column(i, hits));
        }
        last = round.elapsed();
    }
    let figure = |i: usize| {
        let (ns_per_op, kept) = timed::summarize(&results[i]);
        Figure {
            ns_per_op,
            kept,
            trials: results[i].len(),
        }
    };
    SummaryRow {
        system: ROWS[2].0,
        operation: ROWS[2].1,
        wkcore: figure(0),
        reference: figure(1),
        reference_name: "upstream's manager under one mutex, by key",
        floor: figure(2),
        floor_name: "one Acquire pointer load",
        flag: "--tag",
    }
}

fn coordination(share: Duration) -> SummaryRow {
    use CoordVariant::*;
    let rows = [(CoordOp::Finalize, 1, vec![Wkcore, Mutex, Floor])];
    let cells = coord::run_rows(&rows, share, |_| {});
    let figure = |v: CoordVariant| {
        let c = cells
            .iter()
            .find(|c| c.variant == v)
            .expect("every variant ran");
        Figure {
            ns_per_op: c.ns_per_op,
            kept: c.kept,
            trials: c.trials,
        }
    };
    SummaryRow {
        system: ROWS[3].0,
        operation: ROWS[3].1,
        wkcore: figure(Wkcore),
        reference: figure(Mutex),
        reference_name: "a mutex around a HashMap",
        floor: figure(Floor),
        floor_name: "one uncontended CAS",
        flag: "--coord",
    }
}

/// Runs the four rows within `budget` (an even share of what is left each); `progress` hears
/// one line per row as it finishes.
pub fn run(budget: Duration, progress: impl Fn(&str)) -> Vec<SummaryRow> {
    run_scaled(budget, HITS, CHANNELS, progress)
}

/// [`run`] with the tag row's hits per trial and channels given (the tests run a tiny one).
pub fn run_scaled(
    budget: Duration,
    tag_hits: u64,
    tag_channels: usize,
    progress: impl Fn(&str),
) -> Vec<SummaryRow> {
    let start = Instant::now();
    let mut rows = Vec::new();
    for i in 0..ROWS.len() {
        let share = crate::budget::share(budget, start.elapsed(), ROWS.len() - i);
        let row_start = Instant::now();
        let row = match i {
            0 => admission(share),
            1 => owner(share),
            2 => tag(share, tag_hits, tag_channels),
            _ => coordination(share),
        };
        progress(&format!(
            "[{}/{}] {} {}: wkcore {} ns, reference {} ns, floor {} ns ({:.1} s)",
            i + 1,
            ROWS.len(),
            row.system,
            row.operation,
            fmt_ns(row.wkcore.ns_per_op, row.wkcore.kept),
            fmt_ns(row.reference.ns_per_op, row.reference.kept),
            fmt_ns(row.floor.ns_per_op, row.floor.kept),
            row_start.elapsed().as_secs_f64()
        ));
        rows.push(row);
    }
    rows
}

fn kept(f: &Figure) -> String {
    format!("{}/{}", f.kept, f.trials)
}

/// The table: a header and one Markdown row per system.
pub fn table(rows: &[SummaryRow]) -> String {
    let mut out = String::from(
        "| system | operation | wkcore ns/op | reference ns/op | floor ns/op | ratio | kept (w/r/f) |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} ({}) | {} ({}) | {:.2} | {} {} {} |",
            r.system,
            r.operation,
            fmt_ns(r.wkcore.ns_per_op, r.wkcore.kept),
            fmt_ns(r.reference.ns_per_op, r.reference.kept),
            r.reference_name,
            fmt_ns(r.floor.ns_per_op, r.floor.kept),
            r.floor_name,
            r.ratio(),
            kept(&r.wkcore),
            kept(&r.reference),
            kept(&r.floor),
        );
    }
    out
}

/// What the table's words mean, for a reader who has not read `--help`.
pub const LEGEND: &str = "\
1t: one thread does the operation (admission: admits a run of 64 items one call each, then
    drains them); the deeper tables also run 1p1c (one producer thread, one consumer thread)
    and 2 threads.
reference: the same contract done as upstream WuKongIM does it, under one mutex (the
    admission slot, owner registry and tag manager's algorithms; for coordination, a mutex
    around a HashMap).
floor: the bare primitive under the operation, with no bookkeeping around it (a raw
    ArrayQueue push + pop, two atomic RMWs, one pointer load, one CAS): a lower bound for
    owner, tags and coordination; for admission a yardstick that wkcore's ring can beat.
ratio: wkcore ns/op / reference ns/op; below 1 wkcore is faster (0.25 = 4x faster).
kept: trials in which every thread stayed on-CPU >= 95 % of its wall time, of trials run,
    for wkcore/reference/floor; medians are over kept trials (* : none was, over all).
targets: docs/PERFORMANCE.md states each system's targets and their verdicts; the deeper
    tables (--admission, --owner, --tag, --coord, or --all) print them; see --help.";

fn json_figure(f: &Figure, name: Option<&str>) -> String {
    let ns = if f.ns_per_op.is_finite() {
        format!("{:.3}", f.ns_per_op)
    } else {
        "null".into()
    };
    let name = name.map_or_else(String::new, |n| format!("\"name\":\"{n}\","));
    format!(
        "{{{name}\"ns_per_op\":{ns},\"kept\":{},\"trials\":{}}}",
        f.kept, f.trials
    )
}

/// Exactly one JSON object: `{"summary":[{"system":..,"operation":..,"wkcore":{..},
/// "reference":{"name":..,..},"floor":{"name":..,..},"ratio":F}, ...],"machine":"..",
/// "budget_s":F,"wall_s":F}`.
pub fn json(rows: &[SummaryRow], machine: &Machine, budget: Duration, wall: Duration) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"system\":\"{}\",\"operation\":\"{}\",\"wkcore\":{},\"reference\":{},\"floor\":{},\"ratio\":{:.4}}}",
                r.system,
                r.operation,
                json_figure(&r.wkcore, None),
                json_figure(&r.reference, Some(r.reference_name)),
                json_figure(&r.floor, Some(r.floor_name)),
                r.ratio()
            )
        })
        .collect();
    format!(
        "{{\"summary\":[{}],\"machine\":\"{}\",\"budget_s\":{:.1},\"wall_s\":{:.1}}}",
        items.join(","),
        machine.model.replace('\\', "\\\\").replace('"', "\\\""),
        budget.as_secs_f64(),
        wall.as_secs_f64()
    )
}
