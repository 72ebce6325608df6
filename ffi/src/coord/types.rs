//! The coordination ABI's enums, structs and constants, and their conversions from core types.

use wkcore::coord::{
    ClaimError, FinalizeError, HandoffKey, InsertError, LedgerCounts, LedgerEvent, Outcome, Page,
    RecordState, RecordView, TakeError, TouchError,
};

use super::status::{WK_STATUS_COORD_INVALID_KEY, WK_STATUS_COORD_INVALID_OUTCOME};
use crate::status::wk_status;

/// The longest key of a `wk_ledger`, in bytes (keys are 1 to this many bytes).
pub const WK_COORD_KEY_MAX: usize = 64;
/// The longest `channel_id` of a `wk_handoff_key`, in bytes.
pub const WK_HANDOFF_CHANNEL_ID_MAX: usize = 128;
/// The longest `tag_key` of a `wk_handoff_key`, in bytes.
pub const WK_HANDOFF_TAG_KEY_MAX: usize = 64;
/// The largest ledger capacity.
pub const WK_LEDGER_CAPACITY_MAX: u64 = 1 << 22;
/// The largest anchor-table capacity.
pub const WK_ANCHOR_TABLE_CAPACITY_MAX: u64 = 1 << 22;
/// The most keys one batch call takes.
pub const WK_COORD_BATCH_MAX: usize = 4096;
/// The reserved time value: "unset" (an anchor never fired, a record not finalized). Refused
/// as an argument time.
pub const WK_COORD_TIME_UNSET: u64 = u64::MAX;
/// A deadline that never comes: the reconciler never times the record out.
pub const WK_COORD_DEADLINE_NEVER: u64 = u64::MAX;

/// Outcome code: the work succeeded.
pub const WK_OUTCOME_SUCCEEDED: u32 = 1;
/// Outcome code: the work failed.
pub const WK_OUTCOME_FAILED: u32 = 2;
/// Outcome code: the reconciler timed the record out.
pub const WK_OUTCOME_TIMED_OUT: u32 = 3;
/// Outcome code: the orphan sweep finalized a quiet runner's record.
pub const WK_OUTCOME_ORPHANED: u32 = 4;
/// The first host-defined outcome code (host codes are `WK_HOST_OUTCOME_MIN..=65535`).
pub const WK_HOST_OUTCOME_MIN: u32 = 256;

/// `wk_ledger_new` kind: a ledger of two-phase claims (its metric series say `ledger="claim"`).
pub const WK_LEDGER_KIND_CLAIM: u32 = 0;
/// `wk_ledger_new` kind: a ledger of pending records (`ledger="pending"`).
pub const WK_LEDGER_KIND_PENDING: u32 = 1;

// cbindgen writes only literal constants; these pin them to the core's.
const _: () = {
    assert!(WK_COORD_KEY_MAX == wkcore::coord::KEY_MAX);
    assert!(WK_LEDGER_CAPACITY_MAX == wkcore::coord::LEDGER_CAPACITY_MAX as u64);
    assert!(WK_ANCHOR_TABLE_CAPACITY_MAX == wkcore::coord::ANCHOR_TABLE_CAPACITY_MAX as u64);
    assert!(WK_HOST_OUTCOME_MIN == wkcore::coord::HOST_OUTCOME_MIN as u32);
    assert!(WK_HANDOFF_CHANNEL_ID_MAX == wkcore::coord::CHANNEL_ID_MAX);
    assert!(WK_HANDOFF_TAG_KEY_MAX == wkcore::coord::TAG_KEY_MAX);
    assert!(std::mem::size_of::<wk_coord_decision>() == 16);
    assert!(std::mem::size_of::<wk_ledger_record>() == 72);
    assert!(std::mem::size_of::<wk_ledger_counts>() == 56);
    assert!(std::mem::size_of::<wk_coord_page>() == 24);
    assert!(std::mem::size_of::<wk_fire>() == 16);
    assert!(std::mem::size_of::<wk_handoff_key>() == 224);
};

/// The smallest `record_size` `wk_ledger_get` / `wk_handoff_ledger_get` accept (the first
/// release's size).
pub const WK_LEDGER_RECORD_MIN_SIZE: usize = 72;
/// The smallest `counts_size` the `_counts_get` calls accept (the first release's size).
pub const WK_LEDGER_COUNTS_MIN_SIZE: usize = 56;

/// What a coordination call decided (`wk_coord_decision.result`). Values are fixed.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_coord_result {
    /// This call won the transition (inserted, claimed, finalized, removed, refreshed).
    Won = 0,
    /// A claim lost: another claim won first (or, for a hand-off, it was already claimed).
    Lost = 1,
    /// The record is already terminal; `outcome` is what won (a duplicate receipt, a second
    /// placement, a claim or take on a finalized record).
    Duplicate = 2,
    /// No record with this key (never inserted, or reclaimed after its retention).
    NotFound = 3,
    /// The ledger is full: nothing was inserted and nothing evicted.
    Full = 4,
    /// The record holds another placeholder or id (claim, take), or another runner (touch).
    Mismatch = 5,
}

/// A record's state (`wk_coord_decision.state`, `wk_ledger_record.state`). Values are fixed.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_record_state {
    /// No record (not found, full).
    None = 0,
    /// PENDING, holding the id it was placed with.
    Placed = 1,
    /// PENDING, claimed by a request id.
    Claimed = 2,
    /// Terminal; `outcome` says which.
    Finalized = 3,
}

/// One decision: the result, and the record's state as the call left or found it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_coord_decision {
    /// What the call decided.
    pub result: wk_coord_result,
    /// The record's state after a win, or as found by a loser.
    pub state: wk_record_state,
    /// With `state == WK_RECORD_STATE_FINALIZED`: the outcome code that won; else 0.
    pub outcome: u32,
    /// Always 0.
    pub reserved: u32,
}

impl wk_coord_decision {
    pub(crate) const fn new(result: wk_coord_result, state: Option<RecordState>) -> Self {
        let (state, outcome) = match state {
            None => (wk_record_state::None, 0),
            Some(RecordState::Placed) => (wk_record_state::Placed, 0),
            Some(RecordState::Claimed) => (wk_record_state::Claimed, 0),
            Some(RecordState::Finalized(o)) => (wk_record_state::Finalized, o.code() as u32),
        };
        wk_coord_decision {
            result,
            state,
            outcome,
            reserved: 0,
        }
    }

    pub(crate) const fn won(state: RecordState) -> Self {
        Self::new(wk_coord_result::Won, Some(state))
    }

    pub(crate) fn of_insert(r: Result<(), InsertError>) -> Self {
        match r {
            Ok(()) => Self::won(RecordState::Placed),
            Err(InsertError::Full) => Self::new(wk_coord_result::Full, None),
            Err(InsertError::Exists(state)) => Self::new(
                if state.is_pending() {
                    wk_coord_result::Lost
                } else {
                    wk_coord_result::Duplicate
                },
                Some(state),
            ),
            // Refused before the call (the argument check); never reaches a decision.
            Err(InsertError::InvalidTime) => Self::new(wk_coord_result::NotFound, None),
        }
    }

    pub(crate) fn of_claim(r: Result<(), ClaimError>) -> Self {
        match r {
            Ok(()) => Self::won(RecordState::Claimed),
            Err(ClaimError::Lost) => Self::new(wk_coord_result::Lost, Some(RecordState::Claimed)),
            Err(ClaimError::PlaceholderMismatch) => {
                Self::new(wk_coord_result::Mismatch, Some(RecordState::Placed))
            }
            Err(ClaimError::Finalized(o)) => {
                Self::new(wk_coord_result::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(ClaimError::NotFound) => Self::new(wk_coord_result::NotFound, None),
        }
    }

    pub(crate) fn of_finalize(r: Result<(), FinalizeError>, outcome: Outcome) -> Self {
        match r {
            Ok(()) => Self::won(RecordState::Finalized(outcome)),
            Err(FinalizeError::Duplicate(o)) => {
                Self::new(wk_coord_result::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(FinalizeError::NotFound) => Self::new(wk_coord_result::NotFound, None),
        }
    }

    pub(crate) fn of_take(r: Result<(), TakeError>) -> Self {
        match r {
            Ok(()) => Self::new(wk_coord_result::Won, None),
            Err(TakeError::Mismatch) => Self::new(wk_coord_result::Mismatch, None),
            Err(TakeError::Finalized(o)) => {
                Self::new(wk_coord_result::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(TakeError::NotFound) => Self::new(wk_coord_result::NotFound, None),
        }
    }

    pub(crate) fn of_touch(r: Result<(), TouchError>) -> Self {
        match r {
            Ok(()) => Self::new(wk_coord_result::Won, None),
            Err(TouchError::NotRunner) => Self::new(wk_coord_result::Mismatch, None),
            Err(TouchError::Finalized(o)) => {
                Self::new(wk_coord_result::Duplicate, Some(RecordState::Finalized(o)))
            }
            Err(TouchError::NotFound) => Self::new(wk_coord_result::NotFound, None),
        }
    }
}

/// A moment's view of one record (`wk_ledger_get`). The struct may grow: callers pass its size.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_ledger_record {
    /// The record's state.
    pub state: wk_record_state,
    /// With `state == WK_RECORD_STATE_FINALIZED`: the outcome code that won; else 0.
    pub outcome: u32,
    /// Its id: the placeholder, or the claim's request id once claimed.
    pub id: u64,
    /// Its runner (0: none).
    pub runner: u64,
    /// Its deadline (`WK_COORD_DEADLINE_NEVER`: none).
    pub deadline: u64,
    /// When its runner last refreshed it.
    pub refreshed_at: u64,
    /// When it was finalized; `WK_COORD_TIME_UNSET` while PENDING.
    pub finalized_at: u64,
    /// The winning finalization's payload (0 while PENDING).
    pub payload: u64,
    /// How many finalizations were told they were duplicates.
    pub duplicates: u64,
    /// The payload of the latest duplicate (0: none).
    pub last_duplicate_payload: u64,
}

impl From<RecordView> for wk_ledger_record {
    fn from(v: RecordView) -> Self {
        let d = wk_coord_decision::new(wk_coord_result::Won, Some(v.state));
        wk_ledger_record {
            state: d.state,
            outcome: d.outcome,
            id: v.id,
            runner: v.runner,
            deadline: v.deadline,
            refreshed_at: v.refreshed_at,
            finalized_at: v.finalized_at.unwrap_or(WK_COORD_TIME_UNSET),
            payload: v.payload,
            duplicates: v.duplicates,
            last_duplicate_payload: v.last_duplicate_payload,
        }
    }
}

/// A ledger's event counters (the sums its `wkcore_coord_*` series count). May grow: callers
/// pass its size.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_ledger_counts {
    /// Claims won (hand-offs: first claims).
    pub claims_won: u64,
    /// Claims lost (hand-offs: duplicates).
    pub claims_lost: u64,
    /// Finalizations won.
    pub finalizations_won: u64,
    /// Finalizations that were duplicates.
    pub finalizations_duplicate: u64,
    /// PENDING records the reconciler timed out.
    pub reconciled_timeouts: u64,
    /// Inserts refused as full.
    pub rejected_full: u64,
    /// Records reclaimed (or removed by compare-and-delete).
    pub reclaimed: u64,
}

impl From<LedgerCounts> for wk_ledger_counts {
    fn from(c: LedgerCounts) -> Self {
        wk_ledger_counts {
            claims_won: c.get(LedgerEvent::ClaimWon),
            claims_lost: c.get(LedgerEvent::ClaimLost),
            finalizations_won: c.get(LedgerEvent::FinalizeWon),
            finalizations_duplicate: c.get(LedgerEvent::FinalizeDuplicate),
            reconciled_timeouts: c.get(LedgerEvent::ReconciledTimeout),
            rejected_full: c.get(LedgerEvent::RejectedFull),
            reclaimed: c.get(LedgerEvent::Reclaimed),
        }
    }
}

/// What one scan page did (reconcile, reclaim, the runner sweeps).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_coord_page {
    /// Slots examined.
    pub scanned: u64,
    /// Records changed (timed out, reclaimed, finalized).
    pub changed: u64,
    /// 1 when the page ended a pass over the whole ledger, else 0.
    pub wrapped: u32,
    /// Always 0.
    pub reserved: u32,
}

impl From<Page> for wk_coord_page {
    fn from(p: Page) -> Self {
        wk_coord_page {
            scanned: p.scanned as u64,
            changed: p.changed as u64,
            wrapped: u32::from(p.wrapped),
            reserved: 0,
        }
    }
}

/// What `wk_anchor_table_try_fire` decided (`wk_fire.kind`). Values are fixed.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_fire_kind {
    /// This call advanced the anchor from `value` to `now`: fire.
    Fired = 0,
    /// Not due before `value`.
    NotDue = 1,
    /// Another caller changed the anchor first: skip.
    Lost = 2,
    /// The anchor was unset; this call anchored it at `now` without firing (first seen).
    AnchoredFirstSeen = 3,
}

/// The outcome of `wk_anchor_table_try_fire`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_fire {
    /// What happened.
    pub kind: wk_fire_kind,
    /// Always 0.
    pub reserved: u32,
    /// `FIRED`: the anchor advanced from; `NOT_DUE`: when it is due; else 0.
    pub value: u64,
}

/// The identity of one delivery shard hand-off, stored inline (no pointers, so arrays of it can
/// be built in any host's memory): `(channel_id, channel_type, message_id, target_node_id,
/// tag_key, tag_version)`. Bytes of `channel_id` / `tag_key` past their length are ignored.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_handoff_key {
    /// The message id.
    pub message_id: u64,
    /// The node the shard is handed to.
    pub target_node_id: u64,
    /// The delivery tag's version.
    pub tag_version: u64,
    /// The channel type.
    pub channel_type: u8,
    /// Bytes used in `channel_id`: 1 to `WK_HANDOFF_CHANNEL_ID_MAX`.
    pub channel_id_len: u8,
    /// Bytes used in `tag_key`: 0 to `WK_HANDOFF_TAG_KEY_MAX`.
    pub tag_key_len: u8,
    /// Always 0: a key with any other value here is refused (`WK_STATUS_COORD_INVALID_KEY`).
    pub reserved: [u8; 5],
    /// The channel id.
    pub channel_id: [u8; WK_HANDOFF_CHANNEL_ID_MAX],
    /// The delivery tag's key.
    pub tag_key: [u8; WK_HANDOFF_TAG_KEY_MAX],
}

impl wk_handoff_key {
    /// The core key, or `WK_STATUS_COORD_INVALID_KEY`.
    pub(crate) fn core_key(&self) -> Result<HandoffKey, wk_status> {
        let (c, t) = (self.channel_id_len as usize, self.tag_key_len as usize);
        if c > WK_HANDOFF_CHANNEL_ID_MAX || t > WK_HANDOFF_TAG_KEY_MAX || self.reserved != [0; 5] {
            return Err(WK_STATUS_COORD_INVALID_KEY);
        }
        HandoffKey::new(
            &self.channel_id[..c],
            self.channel_type,
            self.message_id,
            self.target_node_id,
            &self.tag_key[..t],
            self.tag_version,
        )
        .map_err(|_| WK_STATUS_COORD_INVALID_KEY)
    }
}

/// The outcome of a host's code, or `WK_STATUS_COORD_INVALID_OUTCOME`.
pub(crate) fn outcome(code: u32) -> Result<Outcome, wk_status> {
    u16::try_from(code)
        .ok()
        .and_then(Outcome::from_code)
        .ok_or(WK_STATUS_COORD_INVALID_OUTCOME)
}
