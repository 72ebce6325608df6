//! `wkcore-bench --coord`: the coordination hot paths, wkcore beside a mutex-and-HashMap
//! equivalent ([`MutexLedger`], [`MutexAnchor`]) and a raw floor (one uncontended CAS), in one
//! run.
//!
//! Rows (each an operation and a thread count):
//!
//! - `anchor_advance`: one runner advancing one anchor (every advance wins); at 2 threads each
//!   advances its own, so the floor row shows how far independent atomics scale here;
//! - `claim`, `finalize`: one of [`KEYS`] distinct placed records per call, by key (a look-up in
//!   the key map, then the record's CAS); `finalize_batch64`: the same finalizations 64 keys a
//!   call, per receipt;
//! - `finalize` at 2 threads: each thread finalizes its own half of the keys (different keys,
//!   one ledger); ns per finalization of the whole run, so `1t / 2t` is the scaling. Its floor
//!   column is `wkcore_own_ledger`: the same work with a ledger per thread, nothing shared, which
//!   is as far as this machine lets that work scale.
//!
//! - `finalize_handover` at 1 and 2 threads: as `finalize`, but the trial's main thread placed
//!   every record before the workers started (each still claims its own): the lines a
//!   finalization reads come from another core's cache at one thread as at two, where in
//!   `finalize` the one thread placed everything itself and two threads each placed half,
//!   interleaved in the index with the other's.
//!
//! Each thread places (and for `finalize`, claims) its own records before the timed part, so
//! the timed part finds them in its own cache; between trials the records are reclaimed. A
//! trial is kept when every thread was on-CPU at least [`crate::ON_CPU_THRESHOLD`] of its wall
//! time; the median is over kept trials (over all, marked `*`, when none was). Timings are
//! reported, never asserted.

use std::hint::black_box;

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wkcore::coord::{
    Anchor, ByteKey, FinalizeError, Ledger, LedgerConfig, LedgerKind, NewRecord, Outcome,
};
use wkcore::metrics::Registry;
use wkcore_references::coord::{MutexAnchor, MutexLedger};

use crate::timed::{fmt_ns, summarize, timed, Timed};

/// Records per trial (the ledgers' capacity): 4096, so that both ledgers' working sets stay in
/// the L2 cache and the rows compare the algorithms, not the memory (at 65 536 records both
/// structures are memory-bound and within a few percent of each other).
pub const KEYS: usize = 1 << 12;
/// Keys per `finalize_batch64` call.
pub const BATCH: usize = 64;
/// Anchor advances per trial.
const ADVANCES: u64 = 1 << 22;
/// The placeholder every placed record holds (deadline 3: `clear` times out what is left).
const PLACEHOLDER: u64 = 1;

/// What a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordOp {
    /// `Anchor::advance`, every call winning.
    AnchorAdvance,
    /// `Ledger::claim` of a placed record.
    Claim,
    /// `Ledger::finalize` of a claimed record.
    Finalize,
    /// `Ledger::finalize_batch` of 64 claimed records, per record.
    FinalizeBatch64,
    /// `Ledger::finalize` of a claimed record that another thread placed (the trial's main
    /// thread, before the workers start): a receipt path meeting records a request path made.
    /// Every worker then finds the record's and the index's lines in another core's cache, at
    /// one thread as at two.
    FinalizeHandover,
}

impl CoordOp {
    /// The row's name.
    pub fn name(self) -> &'static str {
        match self {
            CoordOp::AnchorAdvance => "anchor_advance",
            CoordOp::Claim => "claim",
            CoordOp::Finalize => "finalize",
            CoordOp::FinalizeBatch64 => "finalize_batch64",
            CoordOp::FinalizeHandover => "finalize_handover",
        }
    }
}

/// Who runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordVariant {
    /// wkcore's lock-free structure.
    Wkcore,
    /// The same contract under one mutex around a `HashMap` (or one word).
    Mutex,
    /// One uncontended CAS per operation: the floor.
    Floor,
    /// wkcore with a ledger of its own per thread: how far this machine lets the same work
    /// scale when nothing at all is shared (the 2-thread rows' floor).
    WkcoreOwnLedger,
}

impl CoordVariant {
    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            CoordVariant::Wkcore => "wkcore",
            CoordVariant::Mutex => "mutex",
            CoordVariant::Floor => "cas_floor",
            CoordVariant::WkcoreOwnLedger => "wkcore_own_ledger",
        }
    }
}

/// One measured cell.
#[derive(Clone, Debug)]
pub struct CoordCell {
    /// The row's operation.
    pub op: CoordOp,
    /// Threads.
    pub threads: usize,
    /// The column.
    pub variant: CoordVariant,
    /// Median ns per operation (whole run: wall time / operations).
    pub ns_per_op: f64,
    /// Trials run and kept.
    pub trials: usize,
    /// Trials kept (every thread on-CPU enough).
    pub kept: usize,
}

fn keys() -> Vec<ByteKey> {
    (0..KEYS)
        .map(|i| ByteKey::new(format!("receipt:{i:08}").as_bytes()).unwrap())
        .collect()
}

/// The two ledgers under test, behind one interface.
trait Subject: Sync {
    fn place_all(&self, keys: &[ByteKey]);
    fn claim(&self, key: &ByteKey) -> bool;
    fn finalize(&self, key: &ByteKey) -> bool;
    fn finalize_batch(&self, keys: &[ByteKey]) -> usize;
    fn clear(&self);
}

struct WkLedger(Ledger<ByteKey>);

struct MxLedger(MutexLedger<ByteKey>);

/// The same [`Subject`] over both ledgers, whose methods share names and signatures; only
/// `clear` differs (the reference scans whole passes).
macro_rules! subject {
    ($ty:ty, |$l:ident| $clear:block) => {
        impl Subject for $ty {
            fn place_all(&self, keys: &[ByteKey]) {
                for key in keys {
                    let record = NewRecord {
                        id: PLACEHOLDER,
                        runner: 0,
                        deadline: 3,
                    };
                    self.0.insert(key, record, 0).unwrap();
                }
            }
            fn claim(&self, key: &ByteKey) -> bool {
                self.0.claim(key, PLACEHOLDER, 2, 1, 1).is_ok()
            }
            fn finalize(&self, key: &ByteKey) -> bool {
                self.0.finalize(key, Outcome::Succeeded, 0, 2).is_ok()
            }
            fn finalize_batch(&self, keys: &[ByteKey]) -> usize {
                let payloads = [0u64; BATCH];
                let mut out = [Ok::<(), FinalizeError>(()); BATCH];
                self.0.finalize_batch(
                    keys,
                    &payloads[..keys.len()],
                    Outcome::Succeeded,
                    2,
                    &mut out[..keys.len()],
                )
            }
            fn clear(&self) {
                let $l = &self.0;
                $clear
            }
        }
    };
}

subject!(WkLedger, |l| {
    l.reconcile(3, KEYS);
    l.reclaim(3, KEYS);
    assert!(l.is_empty());
});
subject!(MxLedger, |l| {
    l.reconcile_all(3);
    l.reclaim_all(3);
    assert!(l.is_empty());
});

fn config() -> LedgerConfig {
    LedgerConfig {
        capacity: KEYS,
        retention: 0,
        kind: LedgerKind::Claim,
    }
}

/// One trial of a ledger row on `subject`.
/// One trial of a ledger row: thread `t` works on `subjects[t % subjects.len()]`.
fn ledger_trial(subjects: &[&dyn Subject], keys: &[ByteKey], op: CoordOp, threads: usize) -> Timed {
    let subject = |t: usize| subjects[t % subjects.len()];
    let part = keys.len() / threads;
    let mine = |t: usize| &keys[t * part..(t + 1) * part];
    let handover = op == CoordOp::FinalizeHandover;
    if handover {
        for t in 0..threads {
            subject(t).place_all(mine(t));
        }
    }
    let t = timed(
        threads,
        keys.len() as u64,
        |t| {
            if !handover {
                subject(t).place_all(mine(t));
            }
            if op != CoordOp::Claim {
                for key in mine(t) {
                    assert!(subject(t).claim(key));
                }
            }
        },
        |t| match op {
            CoordOp::Claim => {
                for key in mine(t) {
                    black_box(subject(t).claim(black_box(key)));
                }
            }
            CoordOp::Finalize | CoordOp::FinalizeHandover => {
                for key in mine(t) {
                    black_box(subject(t).finalize(black_box(key)));
                }
            }
            CoordOp::FinalizeBatch64 => {
                for chunk in mine(t).chunks(BATCH) {
                    black_box(subject(t).finalize_batch(black_box(chunk)));
                }
            }
            CoordOp::AnchorAdvance => unreachable!(),
        },
    );
    for s in subjects {
        s.clear();
    }
    t
}

/// One trial of `anchor_advance`: each thread advances its own anchor (on its own cache line),
/// so at 2 threads the row shows how far independent atomics scale on this machine.
fn anchor_trial(variant: CoordVariant, threads: usize) -> Timed {
    let ops = ADVANCES * threads as u64;
    match variant {
        // Each thread has its own anchor already.
        CoordVariant::Wkcore | CoordVariant::WkcoreOwnLedger => {
            let anchors: Vec<CachePadded<Anchor>> = (0..threads)
                .map(|_| CachePadded::new(Anchor::at(0).unwrap()))
                .collect();
            timed(
                threads,
                ops,
                |_| {},
                |t| {
                    let a = &anchors[t];
                    for v in 0..ADVANCES {
                        black_box(black_box(&**a).advance(v, v + 1));
                    }
                },
            )
        }
        CoordVariant::Mutex => {
            let anchors: Vec<CachePadded<MutexAnchor>> = (0..threads)
                .map(|_| CachePadded::new(MutexAnchor::new(Some(0))))
                .collect();
            timed(
                threads,
                ops,
                |_| {},
                |t| {
                    let a = &anchors[t];
                    for v in 0..ADVANCES {
                        black_box(black_box(&**a).advance(v, v + 1));
                    }
                },
            )
        }
        CoordVariant::Floor => {
            let words: Vec<CachePadded<AtomicU64>> = (0..threads)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect();
            timed(
                threads,
                ops,
                |_| {},
                |t| {
                    let word = &words[t];
                    for v in 0..ADVANCES {
                        // Ordering: AcqRel, the ordering of a winning transition, on a word nobody
                        // else uses: the floor of one decided transition.
                        black_box(
                            black_box(&**word)
                                .compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Acquire)
                                .is_ok(),
                        );
                    }
                },
            )
        }
    }
}

/// The rows, in table order: `(op, threads, variants)`.
pub fn plan() -> Vec<(CoordOp, usize, Vec<CoordVariant>)> {
    use CoordVariant::*;
    vec![
        (CoordOp::AnchorAdvance, 1, vec![Wkcore, Mutex, Floor]),
        (CoordOp::AnchorAdvance, 2, vec![Wkcore, Mutex, Floor]),
        (CoordOp::Claim, 1, vec![Wkcore, Mutex]),
        (CoordOp::Finalize, 1, vec![Wkcore, Mutex]),
        (CoordOp::FinalizeBatch64, 1, vec![Wkcore, Mutex]),
        (CoordOp::Finalize, 2, vec![Wkcore, Mutex, WkcoreOwnLedger]),
        (CoordOp::FinalizeHandover, 1, vec![Wkcore, Mutex]),
        (
            CoordOp::FinalizeHandover,
            2,
            vec![Wkcore, Mutex, WkcoreOwnLedger],
        ),
    ]
}

/// A row of the table: its operation, its thread count and its columns.
pub type CoordRow = (CoordOp, usize, Vec<CoordVariant>);

/// Runs every row of [`plan`] within `budget`, trials round-robin over each row's variants.
pub fn run(budget: Duration, progress: impl Fn(&str)) -> Vec<CoordCell> {
    run_rows(&plan(), budget, progress)
}

/// Runs `rows` within `budget`: each row gets an even share of what is left and runs at least
/// 3 trials of each column (a trial is small: [`KEYS`] records, or 2^22 advances). A
/// [`CoordVariant::Floor`] column of a ledger row is one uncontended CAS per operation, as in
/// `anchor_advance`: the floor of one decided transition, which a finalization by key is plus
/// its look-up.
pub fn run_rows(rows: &[CoordRow], budget: Duration, progress: impl Fn(&str)) -> Vec<CoordCell> {
    let run_start = Instant::now();
    let keys = keys();
    let registry = Registry::new();
    let wk = WkLedger(Ledger::with_metrics(config(), &registry).unwrap());
    let wk2 = WkLedger(Ledger::with_metrics(config(), &registry).unwrap());
    let mx = MxLedger(MutexLedger::new(config()).unwrap());
    let mut cells = Vec::new();
    for (row, (op, threads, variants)) in rows.iter().enumerate() {
        let (op, threads) = (*op, *threads);
        let per_row = crate::budget::share(budget, run_start.elapsed(), rows.len() - row);
        let mut results: Vec<Vec<Timed>> = variants.iter().map(|_| Vec::new()).collect();
        let start = Instant::now();
        let mut last = Duration::ZERO;
        while crate::budget::another_round(results[0].len(), 3, 200, start.elapsed(), last, per_row)
        {
            let round = Instant::now();
            for (i, &v) in variants.iter().enumerate() {
                let t = match (op, v) {
                    (CoordOp::AnchorAdvance, v) => anchor_trial(v, threads),
                    (_, CoordVariant::Wkcore) => ledger_trial(&[&wk], &keys, op, threads),
                    (_, CoordVariant::Mutex) => ledger_trial(&[&mx], &keys, op, threads),
                    (_, CoordVariant::WkcoreOwnLedger) => {
                        ledger_trial(&[&wk, &wk2], &keys, op, threads)
                    }
                    (_, CoordVariant::Floor) => anchor_trial(CoordVariant::Floor, threads),
                };
                results[i].push(t);
            }
            last = round.elapsed();
        }
        for (v, trials) in variants.iter().zip(results) {
            let (ns_per_op, kept) = summarize(&trials);
            let cell = CoordCell {
                op,
                threads,
                variant: *v,
                ns_per_op,
                trials: trials.len(),
                kept,
            };
            progress(&format!(
                "{} {}t {}: {:.2} ns/op ({} of {} trials kept)",
                op.name(),
                threads,
                v.name(),
                cell.ns_per_op,
                cell.kept,
                cell.trials
            ));
            cells.push(cell);
        }
    }
    cells
}

fn cell(cells: &[CoordCell], op: CoordOp, threads: usize, v: CoordVariant) -> Option<&CoordCell> {
    cells
        .iter()
        .find(|c| c.op == op && c.threads == threads && c.variant == v)
}

fn fmt_cell(c: Option<&CoordCell>) -> String {
    c.map_or_else(|| "-".into(), |c| fmt_ns(c.ns_per_op, c.kept))
}

/// The table: one row per (op, threads), ns/op per variant, wkcore / mutex.
pub fn table(cells: &[CoordCell]) -> String {
    use CoordVariant::*;
    let mut out = format!(
        "{:<18} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
        "op", "threads", "wkcore ns/op", "mutex ns/op", "floor ns/op", "wkcore/mutex"
    );
    let floor_of = |op, threads| {
        cell(cells, op, threads, Floor).or_else(|| cell(cells, op, threads, WkcoreOwnLedger))
    };
    for (op, threads, _) in plan() {
        let (w, m) = (
            cell(cells, op, threads, Wkcore),
            cell(cells, op, threads, Mutex),
        );
        let ratio = match (w, m) {
            (Some(w), Some(m)) => format!("{:.2}", w.ns_per_op / m.ns_per_op),
            _ => "-".into(),
        };
        out += &format!(
            "{:<18} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
            op.name(),
            threads,
            fmt_cell(w),
            fmt_cell(m),
            fmt_cell(floor_of(op, threads)),
            ratio
        );
    }
    out
}

/// The targets (docs/PERFORMANCE.md), measured: `(target, measured, met)`.
pub fn targets(cells: &[CoordCell]) -> Vec<(String, String, bool)> {
    use CoordVariant::*;
    let mut out = Vec::new();
    let ns = |op, t| cell(cells, op, t, Wkcore).map(|c| c.ns_per_op);
    if let Some(a) = ns(CoordOp::AnchorAdvance, 1) {
        out.push((
            "anchor advance <= 10 ns".into(),
            format!("{a:.2} ns"),
            a <= 10.0,
        ));
    }
    let mutex = |op, t| cell(cells, op, t, Mutex).map(|c| c.ns_per_op);
    for op in [CoordOp::Claim, CoordOp::Finalize] {
        if let Some(v) = ns(op, 1) {
            out.push((
                format!("{} by key <= 25 ns", op.name()),
                format!("{v:.2} ns"),
                v <= 25.0,
            ));
        }
        if let (Some(v), Some(m)) = (ns(op, 1), mutex(op, 1)) {
            let x = v / m;
            out.push((
                format!("{} by key <= 0.6x the mutex ledger", op.name()),
                format!("{x:.2}x"),
                x <= 0.6,
            ));
        }
    }
    if let (Some(one), Some(two)) = (ns(CoordOp::Finalize, 1), ns(CoordOp::Finalize, 2)) {
        let x = one / two;
        out.push((
            "2 threads on different keys >= 1.6x one thread".into(),
            format!("{x:.2}x"),
            x >= 1.6,
        ));
    }
    let floor = |t| cell(cells, CoordOp::AnchorAdvance, t, Floor).map(|c| c.ns_per_op);
    if let (Some(one), Some(two)) = (floor(1), floor(2)) {
        let x = one / two;
        out.push((
            "(the machine: 2 threads on own words, x one thread)".into(),
            format!("{x:.2}x"),
            true,
        ));
    }
    let own = cell(cells, CoordOp::Finalize, 2, WkcoreOwnLedger).map(|c| c.ns_per_op);
    if let (Some(one), Some(two)) = (ns(CoordOp::Finalize, 1), own) {
        let x = one / two;
        out.push((
            "(the machine: 2 threads on own ledgers, x one thread)".into(),
            format!("{x:.2}x"),
            true,
        ));
    }
    let handover = |t| ns(CoordOp::FinalizeHandover, t);
    if let (Some(one), Some(two)) = (handover(1), handover(2)) {
        let x = one / two;
        out.push((
            "(records placed by another thread: 2 threads, x one)".into(),
            format!("{x:.2}x"),
            true,
        ));
    }
    out
}

/// The JSON object (`{"coord":[...]}`), one entry per cell.
pub fn json(cells: &[CoordCell]) -> String {
    let items: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{{\"op\":\"{}\",\"threads\":{},\"variant\":\"{}\",\"ns_per_op\":{:.3},\"trials\":{},\"kept\":{}}}",
                c.op.name(),
                c.threads,
                c.variant.name(),
                c.ns_per_op,
                c.trials,
                c.kept
            )
        })
        .collect();
    format!("{{\"coord\":[{}]}}", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_fills_every_cell_and_the_ledgers_end_empty() {
        let cells = run(Duration::from_millis(1), |_| {});
        let expected: usize = plan().iter().map(|(_, _, v)| v.len()).sum();
        assert_eq!(cells.len(), expected);
        assert!(cells
            .iter()
            .all(|c| c.ns_per_op.is_finite() && c.trials >= 3));
        let t = table(&cells);
        assert_eq!(t.lines().count(), plan().len() + 1);
        assert!(json(&cells).starts_with("{\"coord\":["));
        assert_eq!(targets(&cells).len(), 9);
    }
}
