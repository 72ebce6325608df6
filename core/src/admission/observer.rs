//! The Rust observer of admission outcomes (upstream `ProposalAdmissionObserver`).

use super::class::ProposalClass;
use super::result::AdmissionResult;

/// Receives one event per proposal admission decision, after the decision, outside every
/// critical section (never inside a CAS loop). Closed, fatal and config-change-pending refusals
/// emit nothing, as upstream.
///
/// It runs on the admitting thread: keep it cheap. A panic in it propagates to the caller of
/// `admit`; the admission itself is already complete and consistent.
pub trait AdmissionObserver: Send + Sync {
    /// One proposal of `class` got `result` on slot `slot_id`.
    fn observe_admission(&self, slot_id: u64, class: ProposalClass, result: AdmissionResult);

    /// `n` proposals of `class` got `result` (batch admission). The default reports them one by one.
    fn observe_admission_batch(
        &self,
        slot_id: u64,
        class: ProposalClass,
        result: AdmissionResult,
        n: usize,
    ) {
        for _ in 0..n {
            self.observe_admission(slot_id, class, result);
        }
    }
}
