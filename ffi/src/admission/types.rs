//! The admission ABI's enums and structs, and their conversions from core.
//!
//! Each ABI enum mirrors a core enum: the conversions are exhaustive matches both ways and a
//! `const` block checks that the numbers agree, so a variant added on either side fails the
//! build until the other side has it.

use wkcore::admission::{AdmissionCounts, AdmissionResult, Control, ControlKind, ProposalClass};

/// Kinds of control action (`wk_item.kind`, the `kind` arguments). Values are fixed.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_control_kind {
    /// A proposal (`controlPropose`): role-checked, counted by the admission metrics.
    Propose = 1,
    /// A campaign.
    Campaign = 2,
    /// A config change: role-checked; only one may be pending.
    ConfigChange = 3,
    /// A leader transfer.
    TransferLeader = 4,
    /// A log compaction.
    CompactLog = 5,
    /// A hash-slot snapshot capture.
    CaptureHashSlotSnapshot = 6,
    /// A fresh-status request.
    FreshStatus = 7,
}

/// How `kind` arguments cross the boundary: any 32-bit value (C sees `wk_control_kind`), so an
/// unknown one is refused with `WK_STATUS_INVALID_ARGUMENT` rather than being undefined
/// behaviour in Rust.
#[allow(non_camel_case_types)]
pub type wk_control_kind_raw = u32;

/// Proposal classes (`wk_item.proposal_class`, the `proposal_class` arguments). Any value other
/// than `WK_PROPOSAL_CLASS_BACKGROUND` means foreground, as upstream normalizes.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_proposal_class {
    /// User-facing writes; the default.
    Foreground = 0,
    /// Retryable projection and maintenance writes; capped separately.
    Background = 1,
}

/// How `proposal_class` arguments cross the boundary: any 32-bit value (C sees
/// `wk_proposal_class`); unknown values mean foreground.
#[allow(non_camel_case_types)]
pub type wk_proposal_class_raw = u32;

/// Admission outcomes as the metrics count them (label `result`).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_admission_result {
    /// Admitted.
    Ok = 0,
    /// Refused: queue full.
    Busy = 1,
    /// Refused: background quota used up.
    Throttled = 2,
    /// Refused: not leader.
    NotLeader = 3,
}

pub(crate) const fn kind_to_core(kind: wk_control_kind) -> ControlKind {
    match kind {
        wk_control_kind::Propose => ControlKind::Propose,
        wk_control_kind::Campaign => ControlKind::Campaign,
        wk_control_kind::ConfigChange => ControlKind::ConfigChange,
        wk_control_kind::TransferLeader => ControlKind::TransferLeader,
        wk_control_kind::CompactLog => ControlKind::CompactLog,
        wk_control_kind::CaptureHashSlotSnapshot => ControlKind::CaptureHashSlotSnapshot,
        wk_control_kind::FreshStatus => ControlKind::FreshStatus,
    }
}

pub(crate) const fn kind_from_core(kind: ControlKind) -> wk_control_kind {
    match kind {
        ControlKind::Propose => wk_control_kind::Propose,
        ControlKind::Campaign => wk_control_kind::Campaign,
        ControlKind::ConfigChange => wk_control_kind::ConfigChange,
        ControlKind::TransferLeader => wk_control_kind::TransferLeader,
        ControlKind::CompactLog => wk_control_kind::CompactLog,
        ControlKind::CaptureHashSlotSnapshot => wk_control_kind::CaptureHashSlotSnapshot,
        ControlKind::FreshStatus => wk_control_kind::FreshStatus,
    }
}

const fn class_to_core(class: wk_proposal_class) -> ProposalClass {
    match class {
        wk_proposal_class::Foreground => ProposalClass::Foreground,
        wk_proposal_class::Background => ProposalClass::Background,
    }
}

pub(crate) const fn class_from_core(class: ProposalClass) -> wk_proposal_class {
    match class {
        ProposalClass::Foreground => wk_proposal_class::Foreground,
        ProposalClass::Background => wk_proposal_class::Background,
    }
}

const fn result_to_core(result: wk_admission_result) -> AdmissionResult {
    match result {
        wk_admission_result::Ok => AdmissionResult::Ok,
        wk_admission_result::Busy => AdmissionResult::Busy,
        wk_admission_result::Throttled => AdmissionResult::Throttled,
        wk_admission_result::NotLeader => AdmissionResult::NotLeader,
    }
}

const fn result_from_core(result: AdmissionResult) -> wk_admission_result {
    match result {
        AdmissionResult::Ok => wk_admission_result::Ok,
        AdmissionResult::Busy => wk_admission_result::Busy,
        AdmissionResult::Throttled => wk_admission_result::Throttled,
        AdmissionResult::NotLeader => wk_admission_result::NotLeader,
    }
}

// The numbers agree both ways, for every variant of every core enum.
const _: () = {
    let mut i = 0;
    while i < ControlKind::ALL.len() {
        let k = ControlKind::ALL[i];
        assert!(kind_from_core(k) as u32 == k as u32);
        assert!(kind_to_core(kind_from_core(k)) as u32 == k as u32);
        i += 1;
    }
    let mut i = 0;
    while i < ProposalClass::ALL.len() {
        let c = ProposalClass::ALL[i];
        assert!(class_from_core(c) as u32 == c as u32);
        assert!(class_to_core(class_from_core(c)) as u32 == c as u32);
        i += 1;
    }
    let mut i = 0;
    while i < AdmissionResult::ALL.len() {
        let r = AdmissionResult::ALL[i];
        assert!(result_from_core(r) as u32 == r as u32);
        assert!(result_to_core(result_from_core(r)) as u32 == r as u32);
        i += 1;
    }
};

/// The kind a raw argument names, if any (core and ABI numbers agree, checked above).
pub(crate) fn kind_from_raw(raw: wk_control_kind_raw) -> Option<ControlKind> {
    ControlKind::from_raw(raw)
}

/// The class a raw argument means (unknown values are foreground).
pub(crate) fn class_from_raw(raw: wk_proposal_class_raw) -> ProposalClass {
    ProposalClass::from_raw(raw)
}

/// Queue limits of a slot. 0 means the default: 8192 total; background `total / 2` (min 1).
/// Either limit may be at most `1 << 25`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_slot_limits {
    /// Most control actions queued at once (all kinds); 0 = 8192.
    pub max_queued_controls: u32,
    /// Most background proposals admitted between two drains; 0 = half the total (min 1).
    pub max_queued_background_controls: u32,
}

/// One drained control action (16 bytes).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_item {
    /// The token passed to `wk_slot_admit` / `wk_slot_admit_batch`.
    pub token: u64,
    /// A `wk_control_kind` value.
    pub kind: u8,
    /// A `wk_proposal_class` value (normalized: 0 or 1).
    pub proposal_class: u8,
    /// Zero.
    pub reserved: [u8; 6],
}

impl From<Control<u64>> for wk_item {
    fn from(c: Control<u64>) -> Self {
        wk_item {
            token: c.item,
            kind: kind_from_core(c.kind) as u8,
            proposal_class: class_from_core(c.class) as u8,
            reserved: [0; 6],
        }
    }
}

/// Positions count modulo `1 << 27`: an admission's position is the number of items the slot
/// admitted before it, modulo this. Consecutive items of a batch, and consecutive items a drain
/// or take returns, have consecutive positions (modulo this). The items queued at one time have
/// distinct positions modulo the slot's ring capacity (the total limit rounded up to a power of
/// two, which divides this), so a host may keep its own values in an array of that size.
pub const WK_SLOT_POSITION_MODULUS: u64 = 1 << 27;
const _: () = assert!(WK_SLOT_POSITION_MODULUS == wkcore::admission::POSITION_MODULUS);

/// Outcome of `wk_slot_admit`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_admission {
    /// The action's ring position (modulo `WK_SLOT_POSITION_MODULUS`).
    pub position: u64,
    /// For an admitted config change, its ticket (odd, never 0): resolve it once with
    /// `wk_slot_config_change_resolve`. 0 for other kinds.
    pub config_change: u64,
}

/// Outcome of `wk_slot_admit_batch`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_batch_result {
    /// How many leading tokens were admitted (in order).
    pub admitted: usize,
    /// Why the rest were refused (the status a single admission would return); `WK_STATUS_OK`
    /// when all were admitted.
    pub refused: crate::status::wk_status,
    /// The position of the first admitted action, when `admitted > 0` (the others follow it,
    /// modulo `WK_SLOT_POSITION_MODULUS`); 0 otherwise.
    pub first_position: u64,
    /// For a config change batch that admitted its one action, the change's ticket; else 0.
    pub config_change: u64,
}

/// Outcome of `wk_slot_drain` and `wk_slot_take`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_drain_result {
    /// How many actions were taken (possibly 0).
    pub count: usize,
    /// The position of the first action taken (the others follow it, modulo
    /// `WK_SLOT_POSITION_MODULUS`); when none was, the position the next action taken will have.
    pub first_position: u64,
}

/// A moment's view of a slot (`wk_slot_state_get`). It may grow: callers pass its size.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_slot_state {
    /// Control actions queued and not yet drained.
    pub queued: u32,
    /// Background proposals queued and not yet drained (upstream's counter when drains take
    /// everything).
    pub queued_background: u32,
    /// The recorded fatal code when `fatal` is 1, else 0.
    pub fatal_code: u32,
    /// 1 when leader.
    pub leader: u8,
    /// 1 when closed.
    pub closed: u8,
    /// 1 when a fatal error was recorded.
    pub fatal: u8,
    /// 1 when a config change is pending.
    pub config_change_pending: u8,
    /// Proposals (both classes) queued and not yet drained: never below the truth, exact when
    /// no admission is in flight. 0 means no proposal is queued (upstream's
    /// `ProposalsQuiescent`); other kinds do not count. Since ABI generation 3.
    pub queued_proposals: u32,
    /// Zero.
    pub reserved: u32,
    /// Bytes the slot holds now (its structs and the ring segments allocated so far; the ring
    /// grows as positions are first used and keeps its high-water mark). Since ABI generation 3.
    pub memory_bytes: u64,
}

/// Proposal admission decisions by class and result (proposals only, as upstream's observer),
/// for `wk_slot_counters_get`. It may grow: callers pass its size.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_admission_counters {
    /// Foreground proposals admitted.
    pub foreground_ok: u64,
    /// Foreground proposals refused: queue full.
    pub foreground_busy: u64,
    /// Foreground proposals refused: throttled (always 0; only background is throttled).
    pub foreground_throttled: u64,
    /// Foreground proposals refused: not leader.
    pub foreground_not_leader: u64,
    /// Background proposals admitted.
    pub background_ok: u64,
    /// Background proposals refused: queue full.
    pub background_busy: u64,
    /// Background proposals refused: background quota used up.
    pub background_throttled: u64,
    /// Background proposals refused: not leader.
    pub background_not_leader: u64,
}

impl From<&AdmissionCounts> for wk_admission_counters {
    fn from(c: &AdmissionCounts) -> Self {
        use AdmissionResult::{Busy, NotLeader, Ok, Throttled};
        use ProposalClass::{Background, Foreground};
        wk_admission_counters {
            foreground_ok: c.get(Foreground, Ok),
            foreground_busy: c.get(Foreground, Busy),
            foreground_throttled: c.get(Foreground, Throttled),
            foreground_not_leader: c.get(Foreground, NotLeader),
            background_ok: c.get(Background, Ok),
            background_busy: c.get(Background, Busy),
            background_throttled: c.get(Background, Throttled),
            background_not_leader: c.get(Background, NotLeader),
        }
    }
}

/// The smallest `state_size` `wk_slot_state_get` accepts: the size of the struct's first
/// release (ABI generation 2, without `queued_proposals` and `memory_bytes`).
pub const WK_SLOT_STATE_MIN_SIZE: usize = 16;
/// The smallest `counters_size` `wk_slot_counters_get` accepts (first release's size).
pub const WK_ADMISSION_COUNTERS_MIN_SIZE: usize = 64;
pub(crate) const SLOT_STATE_MIN_SIZE: usize = WK_SLOT_STATE_MIN_SIZE;
pub(crate) const ADMISSION_COUNTERS_MIN_SIZE: usize = WK_ADMISSION_COUNTERS_MIN_SIZE;

const _: () = {
    assert!(std::mem::size_of::<wk_item>() == 16);
    assert!(std::mem::size_of::<wk_slot_state>() == 32);
    assert!(std::mem::offset_of!(wk_slot_state, queued_proposals) == SLOT_STATE_MIN_SIZE);
    assert!(std::mem::size_of::<wk_admission>() == 16);
    assert!(std::mem::size_of::<wk_batch_result>() == 32);
    assert!(std::mem::size_of::<wk_drain_result>() == 16);
    assert!(std::mem::size_of::<wk_admission_counters>() == ADMISSION_COUNTERS_MIN_SIZE);
    assert!(std::mem::size_of::<wk_slot_limits>() == 8);
};
