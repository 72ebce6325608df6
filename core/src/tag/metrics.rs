//! The delivery-tag families (`wukongim_delivery_tag_*`) and one cache's or leader's counts.
//!
//! # Orderings
//!
//! The look-up and store counters live in per-thread rows (`sync::thread_row`): a hit bumps its own
//! row with a plain load and store, so readers never meet on a counter line. Every counter and
//! gauge is `Relaxed`: statistics, ordered by nothing; a scrape sums the rows at some moment.
//! The gauges (cached tags and UIDs) change on stores and cleanups only. A host that runs hits
//! inline (`hot`) adds to its own rows, which the counts sum with the library's.

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use super::fence::LookupReason;
use super::hot::host_layout::{HIT_ROWS, HIT_ROW_COUNTERS};
use crate::metrics::{Family, MetricSource, MetricType, Registry};
use crate::sync::{thread_row, AtomicBool, AtomicU64, HostU64, Ordering, THREAD_ROWS};

/// `wukongim_delivery_tag_lookups_total{result}`.
pub static TAG_LOOKUPS: Family = Family {
    name: "wukongim_delivery_tag_lookups_total",
    help: "Delivery tag look-ups, by result.",
    metric_type: MetricType::Counter,
    labels: &["result"],
    series: &[
        &["hit"],
        &["missing_ref"],
        &["missing_tag"],
        &["tag_key_mismatch"],
        &["stale_request"],
        &["newer_request"],
        &["topology_mismatch"],
    ],
};

/// `wukongim_delivery_tag_stores_total{result}`.
pub static TAG_STORES: Family = Family {
    name: "wukongim_delivery_tag_stores_total",
    help: "Delivery tag stores and builds: stored, or refused as stale.",
    metric_type: MetricType::Counter,
    labels: &["result"],
    series: &[&["stored"], &["stale"]],
};

/// `wukongim_delivery_tag_cached{kind}`.
pub static TAG_CACHED: Family = Family {
    name: "wukongim_delivery_tag_cached",
    help: "Delivery tag bodies and subscriber UIDs held.",
    metric_type: MetricType::Gauge,
    labels: &["kind"],
    series: &[&["tags"], &["uids"]],
};

/// `wukongim_delivery_tag_reclaimed_total{kind}`.
pub static TAG_RECLAIMED: Family = Family {
    name: "wukongim_delivery_tag_reclaimed_total",
    help: "Delivery tag bodies reclaimed by TTL cleanup, and channel references unlinked.",
    metric_type: MetricType::Counter,
    labels: &["kind"],
    series: &[&["bodies"], &["refs"]],
};

/// Every delivery-tag family.
pub fn tag_families() -> impl Iterator<Item = &'static Family> {
    [&TAG_LOOKUPS, &TAG_STORES, &TAG_CACHED, &TAG_RECLAIMED].into_iter()
}

/// Declares every delivery-tag family in `registry`, so they render at zero.
pub fn declare_tag_families(registry: &Registry) {
    tag_families().for_each(|f| registry.declare(f));
}

/// A store's result, in series order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreResult {
    /// Stored (or built).
    Stored = 0,
    /// Refused as stale.
    Stale = 1,
}

const ROW_COUNTERS: usize = 9;

/// Counts of one cache or leader.
pub(crate) struct TagStats {
    rows: Box<[CachePadded<[AtomicU64; ROW_COUNTERS]>]>,
    /// The host's hit rows (`hot`): a host that runs the hit inline counts there.
    host: Box<[CachePadded<[AtomicU64; HIT_ROW_COUNTERS]>]>,
    tags: AtomicU64,
    uids: AtomicU64,
    reclaimed: [AtomicU64; 2],
    retired: AtomicBool,
}

/// The counts of `TagStats` at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TagCounts {
    /// Look-ups by reason, in [`LookupReason::ALL`] order.
    pub lookups: [u64; 7],
    /// Stores: stored, stale.
    pub stores: [u64; 2],
    /// Bodies held.
    pub tags: u64,
    /// UIDs held.
    pub uids: u64,
    /// Bodies reclaimed.
    pub reclaimed_bodies: u64,
    /// Channel references unlinked.
    pub reclaimed_refs: u64,
}

impl TagCounts {
    /// Look-ups with `reason`.
    pub fn lookups(&self, reason: LookupReason) -> u64 {
        self.lookups[reason as usize]
    }
}

impl TagStats {
    pub(crate) fn new() -> Self {
        Self {
            rows: (0..THREAD_ROWS)
                .map(|_| CachePadded::new(Default::default()))
                .collect(),
            host: (0..HIT_ROWS)
                .map(|_| CachePadded::new(Default::default()))
                .collect(),
            tags: AtomicU64::new(0),
            uids: AtomicU64::new(0),
            reclaimed: Default::default(),
            retired: AtomicBool::new(false),
        }
    }

    #[inline]
    fn bump(&self, index: usize) {
        let (row, own) = thread_row();
        let c = &self.rows[row][index];
        if own {
            // Ordering: Relaxed; only this thread writes its own row (module docs).
            c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        } else {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[inline]
    pub(crate) fn lookup(&self, reason: LookupReason) {
        self.bump(reason as usize);
    }

    pub(crate) fn store(&self, result: StoreResult) {
        self.bump(7 + result as usize);
    }

    /// A body of `uids` UIDs became held (`+`) or was let go (`-`).
    pub(crate) fn hold(&self, tags: i64, uids: i64) {
        // Ordering: Relaxed (module docs).
        self.tags.fetch_add(tags as u64, Ordering::Relaxed);
        self.uids.fetch_add(uids as u64, Ordering::Relaxed);
    }

    pub(crate) fn reclaimed(&self, bodies: u64, refs: u64) {
        // Ordering: Relaxed (module docs).
        self.reclaimed[0].fetch_add(bodies, Ordering::Relaxed);
        self.reclaimed[1].fetch_add(refs, Ordering::Relaxed);
    }

    pub(crate) fn counts(&self) -> TagCounts {
        let mut c = TagCounts::default();
        for row in self.rows.iter() {
            for i in 0..7 {
                // Ordering: Relaxed (module docs).
                c.lookups[i] += row[i].load(Ordering::Relaxed);
            }
            for i in 0..2 {
                c.stores[i] += row[7 + i].load(Ordering::Relaxed);
            }
        }
        for row in self.host.iter() {
            for i in 0..7 {
                // Ordering: Relaxed (module docs); the host adds with its own atomics.
                c.lookups[i] += row[i].load(Ordering::Relaxed);
            }
        }
        // Ordering: Relaxed (module docs).
        // A store counts its body after its CAS; a cleanup that retires that body first makes
        // the sum dip below zero for a moment: read it as zero.
        c.tags = non_negative(self.tags.load(Ordering::Relaxed));
        c.uids = non_negative(self.uids.load(Ordering::Relaxed));
        c.reclaimed_bodies = self.reclaimed[0].load(Ordering::Relaxed);
        c.reclaimed_refs = self.reclaimed[1].load(Ordering::Relaxed);
        c
    }

    /// The host's hit rows, as the host's atomic type.
    pub(crate) fn host_rows(&self) -> &[CachePadded<[HostU64; HIT_ROW_COUNTERS]>] {
        let rows: &[CachePadded<[AtomicU64; HIT_ROW_COUNTERS]>] = &self.host;
        // SAFETY: `sync::AtomicU64` is `HostU64` or a `repr(transparent)` newtype of it, so the
        // rows have the same layout; the shared borrow is carried over.
        unsafe {
            &*(rows as *const [CachePadded<[AtomicU64; HIT_ROW_COUNTERS]>]
                as *const [CachePadded<[HostU64; HIT_ROW_COUNTERS]>])
        }
    }

    /// The owner was dropped: gauges stop contributing, counters are folded.
    pub(crate) fn retire(&self) {
        // Ordering: Release; pairs with the Acquire in `is_retired`, so a registry that sees the
        // flag also sees the final counts.
        self.retired.store(true, Ordering::Release);
    }
}

fn non_negative(gauge: u64) -> u64 {
    if gauge > i64::MAX as u64 {
        0
    } else {
        gauge
    }
}

struct Source(Arc<TagStats>, &'static Family);

impl MetricSource for Source {
    fn collect(&self, values: &mut [u64]) {
        let c = self.0.counts();
        let own: &[u64] = match self.1.name {
            n if n == TAG_LOOKUPS.name => &c.lookups,
            n if n == TAG_STORES.name => &c.stores,
            n if n == TAG_CACHED.name => &[c.tags, c.uids],
            _ => &[c.reclaimed_bodies, c.reclaimed_refs],
        };
        for (v, x) in values.iter_mut().zip(own) {
            *v += x;
        }
    }

    fn is_retired(&self) -> bool {
        // Ordering: Acquire; pairs with `retire`.
        self.0.retired.load(Ordering::Acquire)
    }
}

/// Registers `stats` as a source of every delivery-tag family.
pub(crate) fn register(registry: &Registry, stats: &Arc<TagStats>) {
    for family in tag_families() {
        registry.register(family, Arc::new(Source(stats.clone(), family)));
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn series_follow_the_reasons() {
        for (i, r) in LookupReason::ALL.iter().enumerate() {
            assert_eq!(TAG_LOOKUPS.series[i], &[r.as_str()]);
        }
    }
}
