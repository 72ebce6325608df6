//! Lock-free coordination: the conditional updates that make duplicate work harmless.
//!
//! When several actors may do the same thing (two host threads running the same sweep turn, a
//! receipt that arrives twice, a leader retry), the answer is a conditional update, "change X to
//! Y only if it is still Z", where exactly one caller learns that it won. This module holds those
//! primitives, built once, for the later systems (the owner registry's sweep turns, the delivery
//! tags' hand-offs) and for hosts:
//!
//! - [`Anchor`]: the last-fired value of a trigger in one word, with a distinct *unset* state and
//!   the explicit first-seen transition that anchors without firing.
//! - [`Flip`]: a fire-once state transition (ONLINE → OFFLINE and the recovery flip) that tells
//!   the caller whether *it* flipped, and [`Counter`], whose increment returns the new value.
//! - [`ExclusiveTrigger`]: "no active run" → "run N + 1 active" in one transition, so the check
//!   and the act cannot be split; every concurrent trigger but one is told which run holds it.
//! - The shared-subscription topic helpers ([`build_share_topic`], [`split_share_topic`],
//!   [`acl_filter`]): pure functions, so that an ACL check matches the real filter of a
//!   `$share/{group}/{filter}` subscription instead of silently refusing the whole group.
//!
//! # Rules
//!
//! - Every transition is one atomic conditional update and returns whether the caller won; no
//!   operation waits for another caller (a lost CAS is reported, or retried only when the word
//!   changed in a way that leaves the caller's decision open).
//! - Time is always an argument; nothing here reads a clock. The transition functions are pure
//!   over (state, command, now), with the atomics around them, so the same decisions can be
//!   replayed deterministically.
//!
//! # Orderings
//!
//! Each primitive's word guards the decision only, not data; but hosts act on "won" (fire the
//! alert, start the run), so a winning transition is `AcqRel`: it synchronizes with the previous
//! winning transition on the same word, and whatever the previous winner wrote before its
//! transition is visible to the next winner. Loads that only decide whether to try are
//! `Acquire` for the same reason (a caller that sees a state also sees what its writer did
//! before writing it); failed CASes load with `Acquire`.

mod anchor;
mod counts;
mod exclusive;
mod flip;
mod index;
mod key;
mod ledger;
mod share;
mod table;
mod window;

pub use anchor::{Anchor, Fire};
pub use counts::{
    coord_families, declare_coord_families, LedgerCounts, LedgerEvent, LedgerKind,
    COORD_CLAIMS_TOTAL, COORD_FINALIZATIONS_TOTAL, COORD_RECLAIMED_TOTAL,
    COORD_RECONCILED_TIMEOUTS_TOTAL, COORD_REJECTED_TOTAL,
};
pub use exclusive::{ExclusiveTrigger, TriggerError};
pub use flip::{Counter, Flip};
pub use index::LedgerKey;
pub use key::{ByteKey, HandoffKey, KeyError, CHANNEL_ID_MAX, KEY_MAX, TAG_KEY_MAX};
pub use ledger::{
    ClaimError, ConfigError, FinalizeError, HostCode, InsertError, Ledger, LedgerConfig, NewRecord,
    Outcome, Page, RecordState, RecordView, TakeError, TouchError, HOST_OUTCOME_MIN,
    LEDGER_CAPACITY_MAX,
};
pub use share::{
    acl_filter, build as build_share_topic, build_len as share_topic_len, check_filter,
    check_group, split as split_share_topic, ShareError, SplitTopic, SHARE_LEVEL, SHARE_PREFIX,
    SHARE_TOPIC_MAX,
};
pub use table::{AnchorTable, AnchorTableError, ANCHOR_TABLE_CAPACITY_MAX};
pub use window::{WindowError, WindowedCounter, WINDOW_COUNT_MAX, WINDOW_TIME_MAX};

/// A ledger of byte-keyed records: two-phase claims, pending receipts, token pairs.
pub type ByteLedger = Ledger<ByteKey>;
/// The shard hand-off ledger, keyed by the 6-tuple.
pub type HandoffLedger = Ledger<HandoffKey>;
