//! Low-cardinality outcome counters: `[class][result]`, proposals only.

use std::fmt;

use super::class::ProposalClass;
use super::result::AdmissionResult;
use crate::sync::{AtomicU64, Ordering};

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

/// A slot's outcome cells, on a cold cache line of their own.
///
/// Refusals (`busy`, `throttled`, `not_leader`) are counted here with one `fetch_add` each: they
/// are the slow path. Admissions are *not* counted here: the state word's admitted counters
/// already count them, and `SlotCore::counts` derives `ok` from those, so an admission costs
/// no second atomic RMW. The `ok` cells only hold the highest `ok` value reported so far, which
/// keeps reported values monotonic while a concurrent non-proposal admission is in flight.
///
/// # Orderings
///
/// All `Relaxed`: each cell is an independent monotonic total and publishes nothing.
pub(crate) struct OutcomeCells {
    cells: [[AtomicU64; RESULTS]; CLASSES],
}

impl OutcomeCells {
    pub(crate) fn new() -> Self {
        Self {
            cells: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
        }
    }

    /// The cells, for a host that counts its refusals inline (`host.rs`).
    pub(crate) fn cells(&self) -> &[[AtomicU64; RESULTS]; CLASSES] {
        &self.cells
    }

    /// Counts `n` refusals of `class` with `result` (never `Ok`).
    #[inline]
    pub(crate) fn add_refused(&self, class: ProposalClass, result: AdmissionResult, n: u64) {
        debug_assert_ne!(result, AdmissionResult::Ok);
        // Ordering: Relaxed; an independent monotonic total (see the type's docs).
        self.cells[class.index()][result.index()].fetch_add(n, Ordering::Relaxed);
    }

    /// The counts, with `ok` as derived by the caller, raised to the highest reported before.
    pub(crate) fn snapshot(&self, ok: [u64; CLASSES]) -> AdmissionCounts {
        let mut counts = AdmissionCounts::default();
        for class in ProposalClass::ALL {
            for result in AdmissionResult::ALL {
                let cell = &self.cells[class.index()][result.index()];
                let n = if result == AdmissionResult::Ok {
                    let derived = ok[class.index()];
                    // Ordering: Relaxed; see the type's docs.
                    cell.fetch_max(derived, Ordering::Relaxed).max(derived)
                } else {
                    // Ordering: Relaxed; see the type's docs.
                    cell.load(Ordering::Relaxed)
                };
                counts.add(class, result, n);
            }
        }
        counts
    }
}
