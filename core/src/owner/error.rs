//! Why an owner call was refused, with upstream's texts.

use std::fmt;

/// Upstream's error texts (package `mqttsession`, and the node RPC's wire error), each written
/// once. The C ABI's status texts, the Go sentinels and the C++ statuses are these strings.
pub mod texts {
    use std::ffi::CStr;

    /// `ErrOwnerInvalid`.
    pub const OWNER_INVALID: &CStr = c"mqttsession: invalid owner execution request";
    /// `ErrOwnerFenced`.
    pub const OWNER_FENCED: &CStr = c"mqttsession: owner execution fenced";
    /// `ErrOwnerUnknown`.
    pub const OWNER_UNKNOWN: &CStr = c"mqttsession: owner isolation unproved";
    /// `ErrOwnerLimit`.
    pub const OWNER_LIMIT: &CStr = c"mqttsession: owner execution capacity reached";
    /// `ErrOwnerStopped`.
    pub const OWNER_STOPPED: &CStr = c"mqttsession: owner execution stopped";
    /// `ErrOwnerClose`.
    pub const OWNER_CLOSE: &CStr = c"mqttsession: transport close failed";
    /// `ErrInvalidIdentity`.
    pub const INVALID_IDENTITY: &CStr = c"mqttsession: invalid identity";
    /// `ErrOwnerSweeperInvalid`.
    pub const SWEEPER_INVALID: &CStr = c"mqttsession: invalid owner sweeper configuration";
    /// `ErrOwnerSweeperStopping`.
    pub const SWEEPER_STOPPING: &CStr = c"mqttsession: owner sweeper still draining";
    /// The owner RPC's wire error.
    pub const INVALID_FRAME: &CStr = c"node: invalid MQTT owner frame";
    /// Go's `context.Canceled`.
    pub const CANCELED: &CStr = c"context canceled";
    /// Go's `context.DeadlineExceeded`.
    pub const DEADLINE_EXCEEDED: &CStr = c"context deadline exceeded";

    /// `t` as `&str` (every text here is ASCII).
    pub(crate) fn text(t: &'static CStr) -> &'static str {
        t.to_str().unwrap_or("mqttsession: error")
    }
}

/// A refused owner call. Upstream's errors, plus the two ways a wait ends early (Go's context
/// errors: the host cancelled it, or its deadline passed).
///
/// Not `non_exhaustive`: the C ABI maps every variant with an exhaustive match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnerError {
    /// `mqttsession: invalid owner execution request`.
    Invalid,
    /// `mqttsession: owner execution fenced`.
    Fenced,
    /// `mqttsession: owner isolation unproved`.
    Unknown,
    /// `mqttsession: owner execution capacity reached`.
    Limit,
    /// `mqttsession: owner execution stopped`.
    Stopped,
    /// `mqttsession: transport close failed` (the callback's own error or panic text is dropped).
    Close,
    /// The wait was cancelled (or the close callback reported cancellation): `context canceled`.
    Canceled,
    /// The wait's deadline passed (or the close callback reported it): `context deadline
    /// exceeded`.
    DeadlineExceeded,
}

impl OwnerError {
    /// Upstream's text.
    pub fn text(self) -> &'static std::ffi::CStr {
        match self {
            OwnerError::Invalid => texts::OWNER_INVALID,
            OwnerError::Fenced => texts::OWNER_FENCED,
            OwnerError::Unknown => texts::OWNER_UNKNOWN,
            OwnerError::Limit => texts::OWNER_LIMIT,
            OwnerError::Stopped => texts::OWNER_STOPPED,
            OwnerError::Close => texts::OWNER_CLOSE,
            OwnerError::Canceled => texts::CANCELED,
            OwnerError::DeadlineExceeded => texts::DEADLINE_EXCEEDED,
        }
    }
}

impl fmt::Display for OwnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(texts::text(self.text()))
    }
}

impl std::error::Error for OwnerError {}

/// What a close callback reports when the transport did not close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseError {
    /// It failed; quiesce reports [`OwnerError::Close`].
    Failed,
    /// It gave up because its wait was cancelled; passed through as [`OwnerError::Canceled`].
    Canceled,
    /// It gave up because its deadline passed; passed through as
    /// [`OwnerError::DeadlineExceeded`].
    DeadlineExceeded,
}

impl From<CloseError> for OwnerError {
    fn from(e: CloseError) -> Self {
        match e {
            CloseError::Failed => OwnerError::Close,
            CloseError::Canceled => OwnerError::Canceled,
            CloseError::DeadlineExceeded => OwnerError::DeadlineExceeded,
        }
    }
}

/// Why a [`super::Sweeper`] call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SweeperError {
    /// `mqttsession: invalid owner sweeper configuration`.
    Invalid,
    /// `mqttsession: owner sweeper still draining`: a stopped run has not joined yet.
    Stopping,
    /// The call's wait ran out (`Stop` keeps the run).
    DeadlineExceeded,
    /// The call's wait was cancelled.
    Canceled,
}

impl fmt::Display for SweeperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(texts::text(match self {
            SweeperError::Invalid => texts::SWEEPER_INVALID,
            SweeperError::Stopping => texts::SWEEPER_STOPPING,
            SweeperError::DeadlineExceeded => texts::DEADLINE_EXCEEDED,
            SweeperError::Canceled => texts::CANCELED,
        }))
    }
}

impl std::error::Error for SweeperError {}
