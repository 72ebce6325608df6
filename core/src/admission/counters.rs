//! Low-cardinality outcome counters: `[class][result]`, proposals only.

use std::fmt;

use crossbeam_utils::CachePadded;

use super::class::ProposalClass;
use super::result::AdmissionResult;
use crate::sync::{AtomicBool, AtomicU64, Ordering};

const CLASSES: usize = ProposalClass::ALL.len();
const RESULTS: usize = AdmissionResult::ALL.len();

/// A copy of outcome counts, indexed by class and result.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AdmissionCounts {
    counts: [[u64; RESULTS]; CLASSES],
}

impl AdmissionCounts {
    /// The count of proposals of `class` that got `result`.
    pub const fn get(&self, class: ProposalClass, result: AdmissionResult) -> u64 {
        self.counts[class.index()][result.index()]
    }

    /// The total over every class and result.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// Adds `n` to one count.
    pub fn add(&mut self, class: ProposalClass, result: AdmissionResult, n: u64) {
        self.counts[class.index()][result.index()] += n;
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &AdmissionCounts) {
        for class in ProposalClass::ALL {
            for result in AdmissionResult::ALL {
                self.add(class, result, other.get(class, result));
            }
        }
    }
}

impl fmt::Debug for AdmissionCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for class in ProposalClass::ALL {
            for result in AdmissionResult::ALL {
                let n = self.get(class, result);
                if n != 0 {
                    map.entry(&format_args!("{}:{}", class.label(), result.label()), &n);
                }
            }
        }
        map.finish()
    }
}

/// A slot's live counters, shared with the metrics registry.
///
/// # Orderings
///
/// Increments are `Relaxed`: each counter is an independent monotonic total and publishes
/// nothing. `retired` is stored with `Release` when the slot is dropped and loaded with
/// `Acquire` by the registry, so a registry that sees it also sees every final count (the
/// producers' increments happen before the slot's drop through `Arc`'s own synchronization).
pub(crate) struct AdmissionCounters {
    cells: CachePadded<[[AtomicU64; RESULTS]; CLASSES]>,
    retired: AtomicBool,
}

impl AdmissionCounters {
    pub(crate) fn new() -> Self {
        Self {
            cells: CachePadded::new(std::array::from_fn(|_| {
                std::array::from_fn(|_| AtomicU64::new(0))
            })),
            retired: AtomicBool::new(false),
        }
    }

    #[inline]
    pub(crate) fn add(&self, class: ProposalClass, result: AdmissionResult, n: u64) {
        // Ordering: Relaxed; an independent monotonic total (see the type's docs).
        self.cells[class.index()][result.index()].fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> AdmissionCounts {
        let mut counts = AdmissionCounts::default();
        for class in ProposalClass::ALL {
            for result in AdmissionResult::ALL {
                // Ordering: Relaxed; see the type's docs.
                let n = self.cells[class.index()][result.index()].load(Ordering::Relaxed);
                counts.add(class, result, n);
            }
        }
        counts
    }

    /// Marks the counters final: their slot is gone.
    pub(crate) fn retire(&self) {
        // Ordering: Release; pairs with the Acquire load in `is_retired`.
        self.retired.store(true, Ordering::Release);
    }

    pub(crate) fn is_retired(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `retire`.
        self.retired.load(Ordering::Acquire)
    }
}
