//! Observed admission outcomes: the `result` label of
//! `wukongim_slot_proposal_admission_total{class,result}`.

/// The outcome of one proposal's admission, as upstream's observer reports it. Closed, fatal and
/// config-change-pending refusals are not outcomes: upstream emits no event for them.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdmissionResult {
    /// Admitted.
    Ok = 0,
    /// Refused: the slot's queue is full.
    Busy = 1,
    /// Refused: the background limit is reached (background proposals only).
    Throttled = 2,
    /// Refused: this node is not the slot's leader.
    NotLeader = 3,
}

impl AdmissionResult {
    /// All outcomes, in index order.
    pub const ALL: [AdmissionResult; 4] = [
        AdmissionResult::Ok,
        AdmissionResult::Busy,
        AdmissionResult::Throttled,
        AdmissionResult::NotLeader,
    ];

    /// The metric label value: `ok`, `busy`, `throttled` or `not_leader`.
    pub const fn label(self) -> &'static str {
        match self {
            AdmissionResult::Ok => "ok",
            AdmissionResult::Busy => "busy",
            AdmissionResult::Throttled => "throttled",
            AdmissionResult::NotLeader => "not_leader",
        }
    }

    /// The outcome's index in [`AdmissionResult::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}
