//! Admission statuses, 100–199: upstream's `multiraft` error identities and the errors that
//! wrap them, with texts from `wkcore::admission::texts`.
//!
//! Two of upstream's sentinels are identities that no call returns by themselves
//! (`PROPOSAL_BACKPRESSURE`, `BACKGROUND_PROPOSAL_THROTTLED`); a refused proposal returns the
//! status of the error upstream returns, which wraps them (`wk_status_is`). A busy control
//! action of another kind returns plain `SLOT_BUSY`, as upstream.

use wkcore::admission::{texts, AdmissionError, ConfigChangeError, ControlKind};

use crate::status::{wk_status, StatusRange};

/// The slot is closed (`multiraft: slot closed`).
pub const WK_STATUS_SLOT_CLOSED: wk_status = wk_status(100);
/// The slot recorded a fatal error (`wk_slot_state.fatal_code` has the code); for
/// `wk_slot_fail`: a fatal error was already recorded.
pub const WK_STATUS_SLOT_FAILED: wk_status = wk_status(101);
/// This node is not the slot's leader (`multiraft: not leader`).
pub const WK_STATUS_NOT_LEADER: wk_status = wk_status(102);
/// A config change is already pending (`multiraft: config change pending`).
pub const WK_STATUS_CONFIG_CHANGE_PENDING: wk_status = wk_status(103);
/// The control queue is full (`multiraft: slot busy`); returned for kinds other than
/// proposals, and wrapped by `WK_STATUS_PROPOSAL_BUSY`.
pub const WK_STATUS_SLOT_BUSY: wk_status = wk_status(104);
/// Identity only (`multiraft: proposal backpressure`): the caller should back off and retry.
/// Wrapped by `WK_STATUS_PROPOSAL_BUSY` and `WK_STATUS_PROPOSAL_THROTTLED`.
pub const WK_STATUS_PROPOSAL_BACKPRESSURE: wk_status = wk_status(105);
/// Identity only (`multiraft: background proposal throttled`); wrapped by
/// `WK_STATUS_PROPOSAL_THROTTLED`.
pub const WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED: wk_status = wk_status(106);
/// A proposal was refused because the queue is full: is `SLOT_BUSY` and
/// `PROPOSAL_BACKPRESSURE` (`multiraft: proposal backpressure: multiraft: slot busy`).
pub const WK_STATUS_PROPOSAL_BUSY: wk_status = wk_status(107);
/// A background proposal was refused because the background quota is used up: is
/// `BACKGROUND_PROPOSAL_THROTTLED` and `PROPOSAL_BACKPRESSURE`.
pub const WK_STATUS_PROPOSAL_THROTTLED: wk_status = wk_status(108);
/// No slot with that id is registered (`multiraft: slot not found`).
pub const WK_STATUS_SLOT_NOT_FOUND: wk_status = wk_status(109);
/// `wk_slot_config_change_resolve` was given a ticket that is not the pending config change's:
/// it was resolved already, or the slot never issued it (`wkcore: config change already
/// resolved`; wkcore's own, no upstream identity). Nothing changed. Since ABI generation 3.
pub const WK_STATUS_CONFIG_CHANGE_STALE: wk_status = wk_status(110);

/// The admission range.
pub(crate) const RANGE: StatusRange = StatusRange {
    system: "admission",
    first: 100,
    last: 199,
    codes: &[
        (WK_STATUS_SLOT_CLOSED, texts::SLOT_CLOSED),
        (WK_STATUS_SLOT_FAILED, texts::SLOT_FAILED),
        (WK_STATUS_NOT_LEADER, texts::NOT_LEADER),
        (
            WK_STATUS_CONFIG_CHANGE_PENDING,
            texts::CONFIG_CHANGE_PENDING,
        ),
        (WK_STATUS_SLOT_BUSY, texts::SLOT_BUSY),
        (
            WK_STATUS_PROPOSAL_BACKPRESSURE,
            texts::PROPOSAL_BACKPRESSURE,
        ),
        (
            WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED,
            texts::BACKGROUND_PROPOSAL_THROTTLED,
        ),
        (WK_STATUS_PROPOSAL_BUSY, texts::PROPOSAL_BUSY),
        (WK_STATUS_PROPOSAL_THROTTLED, texts::PROPOSAL_THROTTLED),
        (WK_STATUS_SLOT_NOT_FOUND, texts::SLOT_NOT_FOUND),
        (WK_STATUS_CONFIG_CHANGE_STALE, texts::CONFIG_CHANGE_STALE),
    ],
    wraps: &[
        (WK_STATUS_PROPOSAL_BUSY, WK_STATUS_SLOT_BUSY),
        (WK_STATUS_PROPOSAL_BUSY, WK_STATUS_PROPOSAL_BACKPRESSURE),
        (
            WK_STATUS_PROPOSAL_THROTTLED,
            WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED,
        ),
        (
            WK_STATUS_PROPOSAL_THROTTLED,
            WK_STATUS_PROPOSAL_BACKPRESSURE,
        ),
    ],
};

/// The status of a refusal of an action of `kind`: exhaustive, so a new refusal in core fails
/// this build until it has a status.
pub(crate) fn status_of(error: &AdmissionError, kind: ControlKind) -> wk_status {
    let proposal = kind == ControlKind::Propose;
    match error {
        AdmissionError::Closed => WK_STATUS_SLOT_CLOSED,
        AdmissionError::Fatal(_) => WK_STATUS_SLOT_FAILED,
        AdmissionError::NotLeader => WK_STATUS_NOT_LEADER,
        AdmissionError::ConfigChangePending => WK_STATUS_CONFIG_CHANGE_PENDING,
        AdmissionError::Busy if proposal => WK_STATUS_PROPOSAL_BUSY,
        AdmissionError::Busy => WK_STATUS_SLOT_BUSY,
        AdmissionError::Throttled => WK_STATUS_PROPOSAL_THROTTLED,
    }
}

/// The status of a refused config change resolve: exhaustive, as `status_of`.
pub(crate) fn resolve_status_of(error: &ConfigChangeError) -> wk_status {
    match error {
        ConfigChangeError::Stale => WK_STATUS_CONFIG_CHANGE_STALE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_map_to_upstream_identities() {
        use AdmissionError::*;
        let propose = ControlKind::Propose;
        let other = ControlKind::TransferLeader;
        assert_eq!(status_of(&Closed, propose), WK_STATUS_SLOT_CLOSED);
        assert_eq!(status_of(&Fatal(9), propose), WK_STATUS_SLOT_FAILED);
        assert_eq!(status_of(&NotLeader, propose), WK_STATUS_NOT_LEADER);
        assert_eq!(
            status_of(&ConfigChangePending, ControlKind::ConfigChange),
            WK_STATUS_CONFIG_CHANGE_PENDING
        );
        let busy = status_of(&Busy, propose);
        assert_eq!(busy, WK_STATUS_PROPOSAL_BUSY);
        assert!(busy.is(WK_STATUS_SLOT_BUSY) && busy.is(WK_STATUS_PROPOSAL_BACKPRESSURE));
        let plain_busy = status_of(&Busy, other);
        assert_eq!(plain_busy, WK_STATUS_SLOT_BUSY);
        assert!(!plain_busy.is(WK_STATUS_PROPOSAL_BACKPRESSURE));
        let throttled = status_of(&Throttled, propose);
        assert!(throttled.is(WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED));
        assert!(throttled.is(WK_STATUS_PROPOSAL_BACKPRESSURE));
        assert!(!throttled.is(WK_STATUS_SLOT_BUSY));
        assert!(!WK_STATUS_NOT_LEADER.is(WK_STATUS_PROPOSAL_BACKPRESSURE));
    }

    #[test]
    fn texts_are_cores() {
        for error in [
            AdmissionError::Closed,
            AdmissionError::NotLeader,
            AdmissionError::ConfigChangePending,
            AdmissionError::Busy,
        ] {
            let status = status_of(&error, ControlKind::TransferLeader);
            assert_eq!(
                status.text().unwrap().to_str().unwrap(),
                error.to_string(),
                "{error:?}"
            );
        }
        let stale = resolve_status_of(&ConfigChangeError::Stale);
        assert_eq!(
            stale.text().unwrap().to_str().unwrap(),
            ConfigChangeError::Stale.to_string()
        );
        assert!(!stale.is(WK_STATUS_CONFIG_CHANGE_PENDING));
    }
}
