//! The admission system's metric family, `wukongim_slot_proposal_admission_total{class,result}`,
//! and each slot's part in it.
//!
//! Every slot registers its [`SlotCore`] as a source when it is built; the registry sums them and
//! keeps the final counts of dropped slots, so all eight series are monotonic.

use std::sync::Arc;

use super::class::ProposalClass;
use super::counters::AdmissionCounts;
use super::result::AdmissionResult;
use super::slot::SlotCore;
use crate::metrics::{Family, MetricSource, MetricType, Registry};

/// The name of the admission family (upstream's).
pub const SLOT_PROPOSAL_ADMISSION_TOTAL: &str = "wukongim_slot_proposal_admission_total";

const CLASSES: usize = ProposalClass::ALL.len();
const RESULTS: usize = AdmissionResult::ALL.len();
const SERIES: usize = CLASSES * RESULTS;

/// `(class, result)` of series `i`: class-major, in the enums' index order.
const fn series_key(i: usize) -> (ProposalClass, AdmissionResult) {
    (
        ProposalClass::ALL[i / RESULTS],
        AdmissionResult::ALL[i % RESULTS],
    )
}

static SERIES_LABELS: [[&str; 2]; SERIES] = {
    let mut out = [["", ""]; SERIES];
    let mut i = 0;
    while i < SERIES {
        let (class, result) = series_key(i);
        out[i] = [class.label(), result.label()];
        i += 1;
    }
    out
};

static SERIES_REFS: [&[&str]; SERIES] = {
    let mut out: [&[&str]; SERIES] = [&[]; SERIES];
    let mut i = 0;
    while i < SERIES {
        out[i] = &SERIES_LABELS[i];
        i += 1;
    }
    out
};

/// `wukongim_slot_proposal_admission_total{class,result}`: proposal admission decisions (ok,
/// busy, throttled, not_leader) by proposal class, summed over every slot of a registry.
pub static SLOT_PROPOSAL_ADMISSION: Family = Family {
    name: SLOT_PROPOSAL_ADMISSION_TOTAL,
    help: "Slot proposal admission decisions, by proposal class and result.",
    metric_type: MetricType::Counter,
    labels: &["class", "result"],
    series: &SERIES_REFS,
};

impl MetricSource for SlotCore {
    fn collect(&self, values: &mut [u64]) {
        let counts = self.counts();
        for (i, value) in values.iter_mut().enumerate().take(SERIES) {
            let (class, result) = series_key(i);
            *value += counts.get(class, result);
        }
    }

    fn is_retired(&self) -> bool {
        SlotCore::is_retired(self)
    }
}

/// Registers a slot's counters with `registry`.
pub(crate) fn register(registry: &Registry, core: Arc<SlotCore>) {
    registry.register(&SLOT_PROPOSAL_ADMISSION, core);
}

/// The admission family of `registry` as counts (all zero if no slot ever registered there).
pub fn admission_totals(registry: &Registry) -> AdmissionCounts {
    let mut counts = AdmissionCounts::default();
    if let Some(family) = registry.family(SLOT_PROPOSAL_ADMISSION_TOTAL) {
        for (i, value) in family.values.iter().enumerate() {
            let (class, result) = series_key(i);
            counts.add(class, result, *value);
        }
    }
    counts
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::admission::{ControlKind, SlotAdmission, SlotLimits};

    #[test]
    fn series_are_every_class_and_result() {
        let mut expected = Vec::new();
        for class in ProposalClass::ALL {
            for result in AdmissionResult::ALL {
                expected.push(vec![class.label(), result.label()]);
            }
        }
        let got: Vec<Vec<&str>> = SLOT_PROPOSAL_ADMISSION
            .series
            .iter()
            .map(|s| s.to_vec())
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn render_has_all_eight_series_once_a_slot_counts() {
        let registry = Registry::new();
        let _slot = SlotAdmission::<u64>::builder(SlotLimits::default())
            .metrics(&registry)
            .build()
            .unwrap();
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
        let totals = admission_totals(&registry);
        assert_eq!(
            totals.get(ProposalClass::Background, AdmissionResult::Ok),
            2
        );
        assert_eq!(
            totals.get(ProposalClass::Background, AdmissionResult::Throttled),
            2
        );
        drop(a);
        assert_eq!(admission_totals(&registry), totals);
        b.admit(ControlKind::Propose, ProposalClass::Foreground, 3)
            .unwrap();
        drop(b);
        let after = admission_totals(&registry);
        assert_eq!(after.get(ProposalClass::Foreground, AdmissionResult::Ok), 1);
        assert_eq!(after.total(), 5);
    }
}
