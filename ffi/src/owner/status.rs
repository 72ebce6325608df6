//! Owner statuses, 200–299: upstream's `mqttsession` errors, Go's two context errors and the
//! owner RPC's wire error, with upstream's texts (`wkcore::owner::error::texts`).

use wkcore::owner::error::texts;
use wkcore::owner::OwnerError;

use crate::status::{wk_status, StatusRange, WK_STATUS_TIMEOUT};

/// Upstream's `ErrOwnerInvalid`: a malformed request (a bad claim, identity, option, lease,
/// sweep limit). Nothing changed.
pub const WK_STATUS_OWNER_INVALID: wk_status = wk_status(200);
/// Upstream's `ErrOwnerFenced`: the owner admits nothing (fenced, expired, retired, or the
/// operation is done).
pub const WK_STATUS_OWNER_FENCED: wk_status = wk_status(201);
/// Upstream's `ErrOwnerUnknown`: the owner's isolation is unproved (another node or boot, an id
/// never issued, an identity that differs, an uncertain owner).
pub const WK_STATUS_OWNER_UNKNOWN: wk_status = wk_status(202);
/// Upstream's `ErrOwnerLimit`: the registry's capacity or the owner's operation limit is
/// reached (never queued).
pub const WK_STATUS_OWNER_LIMIT: wk_status = wk_status(203);
/// Upstream's `ErrOwnerStopped`: admission is stopped.
pub const WK_STATUS_OWNER_STOPPED: wk_status = wk_status(204);
/// Upstream's `ErrOwnerClose`: the transport close failed (the callback returned a failure);
/// the owner stays fenced and held, due again after `close_retry_ns`.
pub const WK_STATUS_OWNER_CLOSE: wk_status = wk_status(205);
/// Go's `context.Canceled`: the wait's `wk_cancel_token` was cancelled (or the close callback
/// reported cancellation).
pub const WK_STATUS_OWNER_CANCELED: wk_status = wk_status(206);
/// Go's `context.DeadlineExceeded`: the wait's timeout ran out (or the close callback reported
/// it). Also *is* `WK_STATUS_TIMEOUT`.
pub const WK_STATUS_OWNER_DEADLINE_EXCEEDED: wk_status = wk_status(207);
/// Upstream's `ErrInvalidIdentity`. The ABI reports a malformed identity as
/// `WK_STATUS_OWNER_INVALID`, as upstream's registry does; this code names the identity error
/// for hosts that keep upstream's sentinels.
pub const WK_STATUS_OWNER_INVALID_IDENTITY: wk_status = wk_status(208);
/// Upstream's `ErrOwnerSweeperInvalid` (a sweeper's configuration).
pub const WK_STATUS_OWNER_SWEEPER_INVALID: wk_status = wk_status(209);
/// Upstream's `ErrOwnerSweeperStopping` (a stopped sweeper run has not joined yet).
pub const WK_STATUS_OWNER_SWEEPER_STOPPING: wk_status = wk_status(210);
/// The owner RPC's wire error (`node: invalid MQTT owner frame`): a frame that does not encode
/// or decode.
pub const WK_STATUS_OWNER_INVALID_FRAME: wk_status = wk_status(211);

/// The owner range.
pub(crate) const RANGE: StatusRange = StatusRange {
    system: "owner",
    first: 200,
    last: 299,
    codes: &[
        (WK_STATUS_OWNER_INVALID, texts::OWNER_INVALID),
        (WK_STATUS_OWNER_FENCED, texts::OWNER_FENCED),
        (WK_STATUS_OWNER_UNKNOWN, texts::OWNER_UNKNOWN),
        (WK_STATUS_OWNER_LIMIT, texts::OWNER_LIMIT),
        (WK_STATUS_OWNER_STOPPED, texts::OWNER_STOPPED),
        (WK_STATUS_OWNER_CLOSE, texts::OWNER_CLOSE),
        (WK_STATUS_OWNER_CANCELED, texts::CANCELED),
        (WK_STATUS_OWNER_DEADLINE_EXCEEDED, texts::DEADLINE_EXCEEDED),
        (WK_STATUS_OWNER_INVALID_IDENTITY, texts::INVALID_IDENTITY),
        (WK_STATUS_OWNER_SWEEPER_INVALID, texts::SWEEPER_INVALID),
        (WK_STATUS_OWNER_SWEEPER_STOPPING, texts::SWEEPER_STOPPING),
        (WK_STATUS_OWNER_INVALID_FRAME, texts::INVALID_FRAME),
    ],
    wraps: &[(WK_STATUS_OWNER_DEADLINE_EXCEEDED, WK_STATUS_TIMEOUT)],
};

/// The status of a refused owner call.
pub(crate) fn status_of(error: OwnerError) -> wk_status {
    match error {
        OwnerError::Invalid => WK_STATUS_OWNER_INVALID,
        OwnerError::Fenced => WK_STATUS_OWNER_FENCED,
        OwnerError::Unknown => WK_STATUS_OWNER_UNKNOWN,
        OwnerError::Limit => WK_STATUS_OWNER_LIMIT,
        OwnerError::Stopped => WK_STATUS_OWNER_STOPPED,
        OwnerError::Close => WK_STATUS_OWNER_CLOSE,
        OwnerError::Canceled => WK_STATUS_OWNER_CANCELED,
        OwnerError::DeadlineExceeded => WK_STATUS_OWNER_DEADLINE_EXCEEDED,
    }
}

/// The owner error a status stands for (the inverse of [`status_of`]), `None` for any other.
pub(crate) fn error_of(status: wk_status) -> Option<OwnerError> {
    [
        OwnerError::Invalid,
        OwnerError::Fenced,
        OwnerError::Unknown,
        OwnerError::Limit,
        OwnerError::Stopped,
        OwnerError::Close,
        OwnerError::Canceled,
        OwnerError::DeadlineExceeded,
    ]
    .into_iter()
    .find(|&e| status_of(e) == status)
}

/// `Ok(())` or the status of the error.
pub(crate) fn result_status(result: Result<(), OwnerError>) -> wk_status {
    match result {
        Ok(()) => crate::status::WK_STATUS_OK,
        Err(e) => status_of(e),
    }
}
