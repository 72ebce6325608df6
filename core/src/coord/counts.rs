//! Striped event counters of one ledger, and the `wkcore_coord_*` metric families they feed.
//!
//! A ledger counts every decided transition (claims won and lost, finalizations won and
//! duplicate, reconciled timeouts, inserts refused as full, reclaimed records). Threads working
//! on different keys must not meet on one counter line, so each ledger keeps one cache-padded
//! row per thread row ([`thread_row`]) and a thread counts in its own; a read sums the rows.
//!
//! A row that belongs to one thread is bumped with a plain `Relaxed` load and store, no
//! read-modify-write: only that thread writes it, so no count is lost, and the decision it
//! counts pays for one atomic RMW (its own CAS) instead of two. The shared overflow row (threads
//! beyond the rows there are; every thread under loom) is bumped with `fetch_add`. Both are
//! `Relaxed`: the counters are statistics, ordered by nothing, and a read is a moment's sum
//! (each counter is exact once its writers are done).

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::metrics::{Family, MetricSource, MetricType, Registry};
use crate::sync::{thread_row, AtomicBool, AtomicU64, Ordering, THREAD_ROWS};

/// Rows of counters per ledger: one per thread row. Under loom every thread shares the last
/// thread row, so one row is enough there.
#[cfg(not(wkcore_loom))]
const ROWS: usize = THREAD_ROWS;
#[cfg(wkcore_loom)]
const ROWS: usize = 1;

/// A decided transition a ledger counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedgerEvent {
    /// A two-phase claim (or a hand-off claim) won.
    ClaimWon,
    /// A claim lost: the record was already claimed, or the hand-off already recorded.
    ClaimLost,
    /// A finalization (a receipt, a runner's own clean-up, the orphan sweep, a
    /// compare-and-delete) won the PENDING record.
    FinalizeWon,
    /// A finalization found the record already terminal: a duplicate.
    FinalizeDuplicate,
    /// The reconciler timed out a PENDING record past its deadline.
    ReconciledTimeout,
    /// An insert was refused because the ledger was full.
    RejectedFull,
    /// A terminal record past its retention was reclaimed (or a compare-and-delete removed it).
    Reclaimed,
}

impl LedgerEvent {
    /// Every event, in counter index order.
    pub const ALL: [LedgerEvent; 7] = [
        LedgerEvent::ClaimWon,
        LedgerEvent::ClaimLost,
        LedgerEvent::FinalizeWon,
        LedgerEvent::FinalizeDuplicate,
        LedgerEvent::ReconciledTimeout,
        LedgerEvent::RejectedFull,
        LedgerEvent::Reclaimed,
    ];

    const fn index(self) -> usize {
        self as usize
    }
}

/// Which kind of ledger a ledger is: the `ledger` label of its metric series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedgerKind {
    /// Two-phase claims (placeholders claimed by a real request id).
    Claim,
    /// Pending-only finalization (receipts, timeouts).
    Pending,
    /// Shard hand-offs keyed by the 6-tuple.
    Handoff,
}

impl LedgerKind {
    /// Every kind, in label order.
    pub const ALL: [LedgerKind; 3] = [LedgerKind::Claim, LedgerKind::Pending, LedgerKind::Handoff];

    /// The `ledger` label value.
    pub const fn label(self) -> &'static str {
        match self {
            LedgerKind::Claim => "claim",
            LedgerKind::Pending => "pending",
            LedgerKind::Handoff => "handoff",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// A moment's totals of a ledger's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LedgerCounts {
    counts: [u64; LedgerEvent::ALL.len()],
}

impl LedgerCounts {
    /// The count of `event`.
    pub fn get(&self, event: LedgerEvent) -> u64 {
        self.counts[event.index()]
    }
}

/// One ledger's counters; registered with a metrics registry as the source of its series.
pub(crate) struct LedgerCounters {
    kind: LedgerKind,
    rows: Box<[CachePadded<[AtomicU64; LedgerEvent::ALL.len()]>]>,
    retired: AtomicBool,
}

impl LedgerCounters {
    pub(crate) fn new(kind: LedgerKind) -> Self {
        Self {
            kind,
            rows: (0..ROWS)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
            retired: AtomicBool::new(false),
        }
    }

    /// Counts `n` occurrences of `event`.
    #[inline]
    pub(crate) fn add(&self, event: LedgerEvent, n: u64) {
        if n != 0 {
            let (row, own) = thread_row();
            let counter = &self.rows[row % ROWS][event.index()];
            if own && ROWS == THREAD_ROWS {
                // Ordering: Relaxed, both; a statistic (module docs). Only this thread writes
                // its own row, so the load and the store lose no count.
                counter.store(
                    counter.load(Ordering::Relaxed).wrapping_add(n),
                    Ordering::Relaxed,
                );
            } else {
                // Ordering: Relaxed; a statistic, in the shared row (module docs).
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The sums of every row.
    pub(crate) fn totals(&self) -> LedgerCounts {
        let mut out = LedgerCounts::default();
        for row in &self.rows {
            for (sum, counter) in out.counts.iter_mut().zip(row.iter()) {
                // Ordering: Relaxed; a statistic (module docs).
                *sum += counter.load(Ordering::Relaxed);
            }
        }
        out
    }

    /// Marks the ledger dropped; the registry keeps its final counts.
    pub(crate) fn retire(&self) {
        // Ordering: Release; pairs with the Acquire load in `is_retired`, so a registry that
        // sees the flag also sees every count made before the ledger was dropped.
        self.retired.store(true, Ordering::Release);
    }
}

/// `wkcore_coord_claims_total{ledger,result}`.
pub const COORD_CLAIMS_TOTAL: &str = "wkcore_coord_claims_total";
/// `wkcore_coord_finalizations_total{ledger,result}`.
pub const COORD_FINALIZATIONS_TOTAL: &str = "wkcore_coord_finalizations_total";
/// `wkcore_coord_reconciled_timeouts_total{ledger}`.
pub const COORD_RECONCILED_TIMEOUTS_TOTAL: &str = "wkcore_coord_reconciled_timeouts_total";
/// `wkcore_coord_rejected_total{ledger,reason}`.
pub const COORD_REJECTED_TOTAL: &str = "wkcore_coord_rejected_total";
/// `wkcore_coord_reclaimed_total{ledger}`.
pub const COORD_RECLAIMED_TOTAL: &str = "wkcore_coord_reclaimed_total";

/// One family: its declaration and which event each `(ledger, …)` series column counts.
struct FamilySpec {
    family: &'static Family,
    events: &'static [LedgerEvent],
}

static CLAIMS: Family = Family {
    name: COORD_CLAIMS_TOTAL,
    help: "Coordination ledger claims, by ledger and result (won, lost).",
    metric_type: MetricType::Counter,
    labels: &["ledger", "result"],
    series: &[
        &["claim", "won"],
        &["claim", "lost"],
        &["pending", "won"],
        &["pending", "lost"],
        &["handoff", "won"],
        &["handoff", "lost"],
    ],
};

static FINALIZATIONS: Family = Family {
    name: COORD_FINALIZATIONS_TOTAL,
    help: "Coordination ledger finalizations, by ledger and result (won, duplicate).",
    metric_type: MetricType::Counter,
    labels: &["ledger", "result"],
    series: &[
        &["claim", "won"],
        &["claim", "duplicate"],
        &["pending", "won"],
        &["pending", "duplicate"],
        &["handoff", "won"],
        &["handoff", "duplicate"],
    ],
};

static RECONCILED: Family = Family {
    name: COORD_RECONCILED_TIMEOUTS_TOTAL,
    help: "PENDING records the reconciler timed out, by ledger.",
    metric_type: MetricType::Counter,
    labels: &["ledger"],
    series: &[&["claim"], &["pending"], &["handoff"]],
};

static REJECTED: Family = Family {
    name: COORD_REJECTED_TOTAL,
    help: "Inserts a coordination ledger refused, by ledger and reason (full).",
    metric_type: MetricType::Counter,
    labels: &["ledger", "reason"],
    series: &[
        &["claim", "full"],
        &["pending", "full"],
        &["handoff", "full"],
    ],
};

static RECLAIMED: Family = Family {
    name: COORD_RECLAIMED_TOTAL,
    help: "Terminal records reclaimed after their retention (or removed by compare-and-delete), by ledger.",
    metric_type: MetricType::Counter,
    labels: &["ledger"],
    series: &[&["claim"], &["pending"], &["handoff"]],
};

static FAMILIES: [FamilySpec; 5] = [
    FamilySpec {
        family: &CLAIMS,
        events: &[LedgerEvent::ClaimWon, LedgerEvent::ClaimLost],
    },
    FamilySpec {
        family: &FINALIZATIONS,
        events: &[LedgerEvent::FinalizeWon, LedgerEvent::FinalizeDuplicate],
    },
    FamilySpec {
        family: &RECONCILED,
        events: &[LedgerEvent::ReconciledTimeout],
    },
    FamilySpec {
        family: &REJECTED,
        events: &[LedgerEvent::RejectedFull],
    },
    FamilySpec {
        family: &RECLAIMED,
        events: &[LedgerEvent::Reclaimed],
    },
];

/// Every `wkcore_coord_*` family.
pub fn coord_families() -> impl Iterator<Item = &'static Family> {
    FAMILIES.iter().map(|spec| spec.family)
}

/// Declares every coordination family in `registry` (all series at zero until a ledger counts).
pub fn declare_coord_families(registry: &Registry) {
    for family in coord_families() {
        registry.declare(family);
    }
}

/// The source of one family: a ledger's counters seen through that family's columns.
struct FamilySource {
    counters: Arc<LedgerCounters>,
    spec: &'static FamilySpec,
}

impl MetricSource for FamilySource {
    fn collect(&self, values: &mut [u64]) {
        let totals = self.counters.totals();
        let width = self.spec.events.len();
        let base = self.counters.kind.index() * width;
        for (i, event) in self.spec.events.iter().enumerate() {
            values[base + i] += totals.get(*event);
        }
    }

    fn is_retired(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `LedgerCounters::retire`.
        self.counters.retired.load(Ordering::Acquire)
    }
}

/// Registers a ledger's counters as a source of every coordination family of `registry`.
pub(crate) fn register(registry: &Registry, counters: &Arc<LedgerCounters>) {
    for spec in &FAMILIES {
        registry.register(
            spec.family,
            Arc::new(FamilySource {
                counters: counters.clone(),
                spec,
            }),
        );
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn series_are_kind_major_with_the_spec_columns() {
        for spec in &FAMILIES {
            let width = spec.events.len();
            assert_eq!(spec.family.series.len(), LedgerKind::ALL.len() * width);
            for kind in LedgerKind::ALL {
                for i in 0..width {
                    assert_eq!(
                        spec.family.series[kind.index() * width + i][0],
                        kind.label(),
                        "{}",
                        spec.family.name
                    );
                }
            }
        }
    }

    #[test]
    fn declared_families_render_zero_series() {
        let registry = Registry::new();
        declare_coord_families(&registry);
        let mut text = String::new();
        registry.render(&mut text);
        assert!(text.contains("wkcore_coord_claims_total{ledger=\"handoff\",result=\"lost\"} 0"));
        assert!(text.contains("wkcore_coord_rejected_total{ledger=\"pending\",reason=\"full\"} 0"));
        assert!(text.contains("wkcore_coord_reclaimed_total{ledger=\"claim\"} 0"));
    }

    #[test]
    fn counts_from_many_threads_sum_and_survive_retirement() {
        let registry = Registry::new();
        let counters = Arc::new(LedgerCounters::new(LedgerKind::Pending));
        register(&registry, &counters);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        counters.add(LedgerEvent::FinalizeWon, 1);
                    }
                });
            }
        });
        counters.add(LedgerEvent::Reclaimed, 3);
        counters.retire();
        drop(counters);
        let fin = registry.family(COORD_FINALIZATIONS_TOTAL).unwrap();
        assert_eq!(fin.value(&["pending", "won"]), Some(4000));
        assert_eq!(fin.value(&["claim", "won"]), Some(0));
        let rec = registry.family(COORD_RECLAIMED_TOTAL).unwrap();
        assert_eq!(rec.value(&["pending"]), Some(3));
    }
}
