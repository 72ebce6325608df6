//! Closed-name metric families with fixed label sets, and their Prometheus text exposition.
//!
//! Every decision increments a fixed-index atomic counter owned by the object that decided (a
//! slot's [`AdmissionCounts`] cells); a [`Registry`] sums them per family on demand, so the hot
//! path never touches shared metric state. Families (more arrive with later slices):
//!
//! - `wukongim_slot_proposal_admission_total{class,result}`: proposal admission outcomes summed
//!   over every slot ever registered; all eight series are present, at zero if need be.
//!
//! The registry's lock is taken when a slot is created and on each scrape: both cold paths.
//! Counts of dropped slots are folded into a retired total, so every series is monotonic.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use crate::admission::{AdmissionCounts, AdmissionResult, ProposalClass, SlotCore};
use crate::sync::Mutex;

/// The name of the admission family.
pub const SLOT_PROPOSAL_ADMISSION_TOTAL: &str = "wukongim_slot_proposal_admission_total";
const SLOT_PROPOSAL_ADMISSION_HELP: &str =
    "Slot proposal admission decisions, by proposal class and result.";

/// A copy of every family's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// `wukongim_slot_proposal_admission_total{class,result}`.
    pub slot_proposal_admission: AdmissionCounts,
}

#[derive(Default)]
struct AdmissionFamily {
    live: Vec<Arc<SlotCore>>,
    retired: AdmissionCounts,
    live_after_fold: usize,
}

impl AdmissionFamily {
    /// Sums live counters, folding those of dropped slots into `retired`.
    fn fold_and_sum(&mut self) -> AdmissionCounts {
        let mut total = AdmissionCounts::default();
        let retired = &mut self.retired;
        self.live.retain(|slot| {
            // `is_retired` first: if set, the counts read after it are final.
            let gone = slot.is_retired();
            let counts = slot.counts();
            if gone {
                retired.merge(&counts);
            } else {
                total.merge(&counts);
            }
            !gone
        });
        self.live_after_fold = self.live.len();
        total.merge(&self.retired);
        total
    }
}

/// A set of metric families; [`global`] is the process-wide one the C ABI renders.
pub struct Registry {
    admission: Mutex<AdmissionFamily>,
}

impl Registry {
    /// An empty registry (tests and embedders that want isolation use their own).
    pub fn new() -> Self {
        Self {
            admission: Mutex::new(AdmissionFamily::default()),
        }
    }

    pub(crate) fn register_admission(&self, slot: Arc<SlotCore>) {
        let mut family = self.admission.lock();
        family.live.push(slot);
        // Keep a process that creates and drops slots without scraping from growing the list.
        if family.live.len() >= 2 * family.live_after_fold + 64 {
            family.fold_and_sum();
        }
    }

    /// `wukongim_slot_proposal_admission_total`, summed over every slot ever registered.
    pub fn admission_totals(&self) -> AdmissionCounts {
        self.admission.lock().fold_and_sum()
    }

    /// Every family's values.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            slot_proposal_admission: self.admission_totals(),
        }
    }

    /// Appends every family in Prometheus text exposition format 0.0.4.
    pub fn render(&self, out: &mut String) {
        render_snapshot(&self.snapshot(), out);
    }
}

/// Writes `snapshot` in Prometheus text exposition format 0.0.4.
pub fn render_snapshot(snapshot: &MetricsSnapshot, out: &mut String) {
    let name = SLOT_PROPOSAL_ADMISSION_TOTAL;
    // Writing to a String cannot fail.
    let _ = writeln!(out, "# HELP {name} {SLOT_PROPOSAL_ADMISSION_HELP}");
    let _ = writeln!(out, "# TYPE {name} counter");
    for class in ProposalClass::ALL {
        for result in AdmissionResult::ALL {
            let value = snapshot.slot_proposal_admission.get(class, result);
            let _ = writeln!(
                out,
                "{name}{{class=\"{}\",result=\"{}\"}} {value}",
                class.label(),
                result.label()
            );
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// The process-wide registry: slots count here unless built with another.
pub fn global() -> &'static Registry {
    static GLOBAL: OnceLock<Registry> = OnceLock::new();
    GLOBAL.get_or_init(Registry::new)
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::admission::{ControlKind, SlotAdmission, SlotLimits};

    #[test]
    fn render_has_all_eight_series_at_zero() {
        let registry = Registry::new();
        let mut text = String::new();
        registry.render(&mut text);
        assert!(text.starts_with("# HELP wukongim_slot_proposal_admission_total "));
        assert!(text.contains("# TYPE wukongim_slot_proposal_admission_total counter\n"));
        let series: Vec<_> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(series.len(), 8);
        assert!(series.iter().all(|l| l.ends_with(" 0")));
        assert!(text.contains(
            "wukongim_slot_proposal_admission_total{class=\"background\",result=\"throttled\"} 0\n"
        ));
    }

    #[test]
    fn totals_sum_slots_and_survive_their_drop() {
        let registry = Registry::new();
        let build = || {
            SlotAdmission::<u64>::builder(SlotLimits::new(4, 1))
                .metrics(&registry)
                .build()
                .unwrap()
        };
        let (a, b) = (build(), build());
        for slot in [&a, &b] {
            slot.set_leader();
            slot.admit(ControlKind::Propose, ProposalClass::Background, 1)
                .unwrap();
            slot.admit(ControlKind::Propose, ProposalClass::Background, 2)
                .unwrap_err();
        }
        let totals = registry.admission_totals();
        assert_eq!(
            totals.get(ProposalClass::Background, AdmissionResult::Ok),
            2
        );
        assert_eq!(
            totals.get(ProposalClass::Background, AdmissionResult::Throttled),
            2
        );
        drop(a);
        assert_eq!(registry.admission_totals(), totals);
        b.admit(ControlKind::Propose, ProposalClass::Foreground, 3)
            .unwrap();
        drop(b);
        let after = registry.admission_totals();
        assert_eq!(after.get(ProposalClass::Foreground, AdmissionResult::Ok), 1);
        assert_eq!(after.total(), 5);
    }
}
