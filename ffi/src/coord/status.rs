//! Coordination statuses, 400–499: arguments the coordination calls refuse. Each *is* also
//! `WK_STATUS_INVALID_ARGUMENT` (`wk_status_is`), so a host that only knows the generic code
//! still recognises them. Upstream has no such errors; the texts are wkcore's.

use crate::status::{wk_status, StatusRange, WK_STATUS_INVALID_ARGUMENT};

/// A key is empty or longer than its maximum (`WK_COORD_KEY_MAX`; in a hand-off key,
/// `WK_HANDOFF_CHANNEL_ID_MAX` / `WK_HANDOFF_TAG_KEY_MAX`), or a batch's key lengths do not add
/// up to its buffer. Nothing changed.
pub const WK_STATUS_COORD_INVALID_KEY: wk_status = wk_status(400);
/// An outcome code is not an outcome: 0, 5–255, or above 65535. Nothing changed.
pub const WK_STATUS_COORD_INVALID_OUTCOME: wk_status = wk_status(401);
/// A capacity of 0 or above its maximum (`WK_LEDGER_CAPACITY_MAX`,
/// `WK_ANCHOR_TABLE_CAPACITY_MAX`), or an unknown ledger kind.
pub const WK_STATUS_COORD_INVALID_CAPACITY: wk_status = wk_status(402);
/// A time (or anchor value) of `UINT64_MAX`, which is reserved for "unset". Nothing changed.
pub const WK_STATUS_COORD_INVALID_TIME: wk_status = wk_status(403);
/// A share group is empty, not UTF-8, or holds `/`, `+`, `#` or U+0000
/// (`wk_share_topic_build`, `wk_share_topic_split`).
pub const WK_STATUS_COORD_INVALID_SHARE_GROUP: wk_status = wk_status(404);
/// A topic filter (or a whole topic) is empty, not UTF-8, malformed (a `+` or `#` that is not a
/// whole level, a `#` before the last level, a U+0000), itself a shared subscription, or longer
/// than `WK_SHARE_TOPIC_MAX` bytes.
pub const WK_STATUS_COORD_INVALID_TOPIC_FILTER: wk_status = wk_status(405);

/// The coordination range.
pub(crate) const RANGE: StatusRange = StatusRange {
    system: "coord",
    first: 400,
    last: 499,
    codes: &[
        (WK_STATUS_COORD_INVALID_KEY, c"coord: invalid key"),
        (WK_STATUS_COORD_INVALID_OUTCOME, c"coord: invalid outcome"),
        (WK_STATUS_COORD_INVALID_CAPACITY, c"coord: invalid capacity"),
        (WK_STATUS_COORD_INVALID_TIME, c"coord: invalid time"),
        (
            WK_STATUS_COORD_INVALID_SHARE_GROUP,
            c"coord: invalid share group",
        ),
        (
            WK_STATUS_COORD_INVALID_TOPIC_FILTER,
            c"coord: invalid topic filter",
        ),
    ],
    wraps: &[
        (WK_STATUS_COORD_INVALID_KEY, WK_STATUS_INVALID_ARGUMENT),
        (WK_STATUS_COORD_INVALID_OUTCOME, WK_STATUS_INVALID_ARGUMENT),
        (WK_STATUS_COORD_INVALID_CAPACITY, WK_STATUS_INVALID_ARGUMENT),
        (WK_STATUS_COORD_INVALID_TIME, WK_STATUS_INVALID_ARGUMENT),
        (
            WK_STATUS_COORD_INVALID_SHARE_GROUP,
            WK_STATUS_INVALID_ARGUMENT,
        ),
        (
            WK_STATUS_COORD_INVALID_TOPIC_FILTER,
            WK_STATUS_INVALID_ARGUMENT,
        ),
    ],
};
