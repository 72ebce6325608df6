//! Why an admission was refused.

use std::ffi::CStr;
use std::fmt;

use super::result::AdmissionResult;

/// Upstream's error texts (package `multiraft`), each written once.
///
/// The C ABI's status texts, and through them the Go sentinels and the C++ statuses, are these
/// strings; [`AdmissionError`]'s `Display` prints them. They are NUL-terminated so the ABI can
/// hand them out as they are.
pub mod texts {
    use std::ffi::CStr;

    /// `ErrSlotClosed`.
    pub const SLOT_CLOSED: &CStr = c"multiraft: slot closed";
    /// `ErrNotLeader`.
    pub const NOT_LEADER: &CStr = c"multiraft: not leader";
    /// `ErrConfigChangePending`.
    pub const CONFIG_CHANGE_PENDING: &CStr = c"multiraft: config change pending";
    /// `ErrSlotBusy`.
    pub const SLOT_BUSY: &CStr = c"multiraft: slot busy";
    /// `ErrProposalBackpressure`.
    pub const PROPOSAL_BACKPRESSURE: &CStr = c"multiraft: proposal backpressure";
    /// `ErrBackgroundProposalThrottled`.
    pub const BACKGROUND_PROPOSAL_THROTTLED: &CStr = c"multiraft: background proposal throttled";
    /// The error a busy *proposal* returns: `ErrProposalBackpressure` wrapping `ErrSlotBusy`.
    pub const PROPOSAL_BUSY: &CStr = c"multiraft: proposal backpressure: multiraft: slot busy";
    /// The error a throttled background proposal returns: `ErrBackgroundProposalThrottled`
    /// wrapping `ErrProposalBackpressure`.
    pub const PROPOSAL_THROTTLED: &CStr =
        c"multiraft: background proposal throttled: multiraft: proposal backpressure";
    /// `ErrSlotNotFound`.
    pub const SLOT_NOT_FOUND: &CStr = c"multiraft: slot not found";
    /// A slot that recorded a fatal error. Upstream stores the host's own error; this text
    /// stands for it where only a code is known (`Display` adds ` (fatal code N)`).
    pub const SLOT_FAILED: &CStr = c"multiraft: slot failed";
    /// wkcore's own, with no upstream counterpart (upstream resolves its config futures under
    /// its lock): a config change ticket that is not the pending change's, already resolved or
    /// never issued.
    pub const CONFIG_CHANGE_STALE: &CStr = c"wkcore: config change already resolved";
}

fn text(t: &'static CStr) -> &'static str {
    // Every text above is ASCII.
    t.to_str().unwrap_or("multiraft: error")
}

/// A refused admission, in upstream's check order.
///
/// `Busy` and `Throttled` are both *backpressure* ([`AdmissionError::is_backpressure`]), as
/// upstream's errors match both `ErrProposalBackpressure` and their own identity.
///
/// Not `non_exhaustive`: the C ABI maps every variant with an exhaustive match, so a new refusal
/// fails its build until it has a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdmissionError {
    /// The slot is closed (`multiraft: slot closed`).
    Closed,
    /// The slot failed with this host-defined fatal code.
    Fatal(u32),
    /// This node is not the slot's leader (`multiraft: not leader`); Propose and ConfigChange only.
    NotLeader,
    /// A config change is already pending (`multiraft: config change pending`).
    ConfigChangePending,
    /// The queue is full (`multiraft: slot busy`).
    Busy,
    /// The background limit is reached (`multiraft: background proposal throttled`).
    Throttled,
}

impl AdmissionError {
    /// True for `Busy` and `Throttled`: the caller should back off and retry.
    pub const fn is_backpressure(&self) -> bool {
        matches!(self, AdmissionError::Busy | AdmissionError::Throttled)
    }

    /// The observed outcome this refusal reports for a proposal, if any (closed, fatal and
    /// config-change-pending refusals report none).
    pub const fn result(&self) -> Option<AdmissionResult> {
        match self {
            AdmissionError::Busy => Some(AdmissionResult::Busy),
            AdmissionError::Throttled => Some(AdmissionResult::Throttled),
            AdmissionError::NotLeader => Some(AdmissionResult::NotLeader),
            AdmissionError::Closed
            | AdmissionError::Fatal(_)
            | AdmissionError::ConfigChangePending => None,
        }
    }
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmissionError::Closed => f.write_str(text(texts::SLOT_CLOSED)),
            AdmissionError::Fatal(code) => {
                write!(f, "{} (fatal code {code})", text(texts::SLOT_FAILED))
            }
            AdmissionError::NotLeader => f.write_str(text(texts::NOT_LEADER)),
            AdmissionError::ConfigChangePending => f.write_str(text(texts::CONFIG_CHANGE_PENDING)),
            AdmissionError::Busy => f.write_str(text(texts::SLOT_BUSY)),
            AdmissionError::Throttled => f.write_str(text(texts::BACKGROUND_PROPOSAL_THROTTLED)),
        }
    }
}

impl std::error::Error for AdmissionError {}

/// A refused config change resolve
/// ([`SlotAdmission::resolve_config_change`](super::SlotAdmission::resolve_config_change)).
///
/// Not `non_exhaustive`, as [`AdmissionError`]: the C ABI maps every variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigChangeError {
    /// The ticket is not the pending config change's: it was resolved already, or this slot
    /// never issued it (`wkcore: config change already resolved`). Nothing changed.
    Stale,
}

impl fmt::Display for ConfigChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigChangeError::Stale => f.write_str(text(texts::CONFIG_CHANGE_STALE)),
        }
    }
}

impl std::error::Error for ConfigChangeError {}

/// A refused single admission: the reason, and the item given back to the caller.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Rejected<T> {
    /// Why the item was refused.
    pub error: AdmissionError,
    /// The item, untouched.
    pub item: T,
}

impl<T> Rejected<T> {
    /// The item, dropping the reason.
    pub fn into_inner(self) -> T {
        self.item
    }
}

impl<T> fmt::Debug for Rejected<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejected")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for Rejected<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl<T> std::error::Error for Rejected<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_and_throttled_are_backpressure() {
        assert!(AdmissionError::Busy.is_backpressure());
        assert!(AdmissionError::Throttled.is_backpressure());
        for e in [
            AdmissionError::Closed,
            AdmissionError::Fatal(3),
            AdmissionError::NotLeader,
            AdmissionError::ConfigChangePending,
        ] {
            assert!(!e.is_backpressure());
        }
    }

    #[test]
    fn texts_are_upstream() {
        assert_eq!(AdmissionError::Closed.to_string(), "multiraft: slot closed");
        assert_eq!(
            AdmissionError::NotLeader.to_string(),
            "multiraft: not leader"
        );
        assert_eq!(AdmissionError::Busy.to_string(), "multiraft: slot busy");
        assert_eq!(
            AdmissionError::Throttled.to_string(),
            "multiraft: background proposal throttled"
        );
        assert_eq!(
            AdmissionError::ConfigChangePending.to_string(),
            "multiraft: config change pending"
        );
        assert_eq!(
            ConfigChangeError::Stale.to_string(),
            "wkcore: config change already resolved"
        );
    }
}
