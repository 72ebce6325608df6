//! `wk_slot`: one Slot's proposal admission (`wkcore::admission::SlotAdmission<u64>`).
//!
//! The token (`uint64_t`) is the host's own reference to the queued action (Go uses an index
//! into its own table of payloads and futures); wkcore never interprets it.
//!
//! # Threads
//!
//! A `wk_slot` handle may be used from any number of threads at once, except that drains are
//! serialised (a second concurrent `wk_slot_drain` waits for the first). Each `wk_slot*` returned
//! by `_new`, `_clone` or `wk_admission_registry_get` must be freed exactly once with
//! `wk_slot_free`, after the last call that uses it has returned.

use std::sync::Arc;

use wkcore::admission::{
    AdmissionResult, Control, ControlKind, ProposalClass, SlotAdmission, SlotLimits,
};

use crate::handle::{check_in_slice, check_out, write_out, ArcCastPtr, Castable, Guarded};
use crate::metrics::wk_admission_counters;
use crate::panic::ffi_panic_boundary;
use crate::status::wk_status;

/// Largest `n` that `wk_slot_admit_batch` accepts (`1 << 24`, the ceiling of a queue limit).
const MAX_BATCH: usize = SlotLimits::MAX as usize;

/// Opaque, `Arc`-owned handle to one Slot's admission state.
#[allow(non_camel_case_types)]
pub struct wk_slot {
    _private: [u8; 0],
}

impl Castable for wk_slot {
    type RustType = Arc<SlotAdmission<u64>>;
    const MAGIC: u64 = 0x776b_534c_4f54_0001; // "wkSLOT" + generation
}

/// Borrows the slot behind a `*const wk_slot`, or returns its status from the enclosing body.
macro_rules! slot_ref {
    ($ptr:expr) => {
        // SAFETY: every exported function that uses this macro requires, in its `# Safety`
        // section, that the pointer be NULL or a live `wk_slot` handle kept alive by the caller
        // for the whole call; `try_ref` checks NULL, alignment and the magic word.
        match unsafe { wk_slot::try_ref($ptr) } {
            Ok(slot) => &***slot,
            Err(status) => return status,
        }
    };
}

/// Kinds of control action (`uint32_t kind` arguments, `wk_item.kind`). Values are fixed.
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

/// Proposal classes (`uint32_t proposal_class` arguments, `wk_item.proposal_class`).
/// Any value other than `WK_PROPOSAL_CLASS_BACKGROUND` means foreground.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_proposal_class {
    /// User-facing writes; the default.
    Foreground = 0,
    /// Retryable projection and maintenance writes; capped separately.
    Background = 1,
}

/// Admission results as counted by the metrics (label `result`).
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

impl From<AdmissionResult> for wk_admission_result {
    fn from(r: AdmissionResult) -> Self {
        match r {
            AdmissionResult::Ok => wk_admission_result::Ok,
            AdmissionResult::Busy => wk_admission_result::Busy,
            AdmissionResult::Throttled => wk_admission_result::Throttled,
            AdmissionResult::NotLeader => wk_admission_result::NotLeader,
        }
    }
}

/// Queue limits of a slot. 0 means the default: 8192 total; background `total / 2` (min 1).
/// Either limit may be at most `1 << 24`.
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
    /// A `wk_proposal_class` value (normalised: 0 or 1).
    pub proposal_class: u8,
    /// Zero.
    pub reserved: [u8; 6],
}

/// Outcome of `wk_slot_admit_batch`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_batch_result {
    /// How many leading tokens were admitted (in order).
    pub admitted: usize,
    /// Why the rest were refused; `WK_STATUS_OK` when all were admitted.
    pub refused: wk_status,
}

/// Point-in-time view of a slot (fields are read together but may change right after).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_slot_state {
    /// Control actions queued now.
    pub queued: u32,
    /// Background proposals admitted since the last drain.
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
}

const _: () = {
    assert!(std::mem::size_of::<wk_item>() == 16);
    assert!(std::mem::size_of::<wk_slot_state>() == 16);
    assert!(std::mem::size_of::<wk_slot_limits>() == 8);
};

/// Wraps a new core slot in a handle owned by the caller.
pub(crate) fn slot_into_raw(slot: Arc<SlotAdmission<u64>>) -> *mut wk_slot {
    wk_slot::into_raw(Arc::new(Guarded::new::<wk_slot>(slot)))
}

fn kind_from_raw(kind: u32) -> Option<ControlKind> {
    ControlKind::from_raw(kind)
}

fn item_of(c: Control<u64>) -> wk_item {
    wk_item {
        token: c.item,
        kind: c.kind as u8,
        proposal_class: c.class as u8,
        reserved: [0; 6],
    }
}

/// Creates a slot: a follower, open, with nothing queued.
///
/// `limits` is read during the call (0 fields mean defaults). On `WK_STATUS_OK` the caller owns
/// `*slot_out` and frees it with `wk_slot_free`. A limit above `1 << 24` gives
/// `WK_STATUS_INVALID_ARGUMENT`. Any thread may call this.
///
/// # Safety
///
/// `limits` must be NULL or point to a readable `wk_slot_limits`; `slot_out` must be NULL or
/// point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_new(
    slot_id: u64,
    limits: *const wk_slot_limits,
    slot_out: *mut *mut wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        if let Err(status) = crate::handle::check_ptr(limits) {
            return status;
        }
        let slot_out = check_out!(slot_out);
        // SAFETY: checked non-NULL and aligned; readable per this function's contract.
        let limits = unsafe { limits.read() };
        let limits = SlotLimits::new(limits.max_queued_controls, limits.max_queued_background_controls);
        match SlotAdmission::builder(limits).slot_id(slot_id).build() {
            Ok(slot) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(slot_out, slot_into_raw(Arc::new(slot))) };
                wk_status::Ok
            }
            Err(e) => wk_status::from(e),
        }
    }
}

/// Adds a reference: on `WK_STATUS_OK`, `*slot_out` is a handle to the same slot that the caller
/// must free separately. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `slot_out` must be NULL or point to writable
/// storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_clone(
    slot: *const wk_slot,
    slot_out: *mut *mut wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        let slot_out = check_out!(slot_out);
        // SAFETY: forwarded from this function's contract.
        let arc = match unsafe { wk_slot::try_clone_arc(slot) } {
            Ok(arc) => arc,
            Err(status) => return status,
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(slot_out, wk_slot::into_raw(arc)) };
        wk_status::Ok
    }
}

/// Drops one reference; the slot is destroyed with its last handle (the registry holds its own).
/// NULL is a no-op; a handle that is detected as already freed is ignored (best effort).
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle that is not used again after this call; it
/// must not be freed twice.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_free(slot: *mut wk_slot) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_slot::free(slot) }
    }
}

/// Asks to queue one control action with the host's `token`.
///
/// Returns `WK_STATUS_OK` when queued; otherwise the refusal, checked in upstream order:
/// `CLOSED`, `FATAL`, `NOT_LEADER` (propose and config change only), `CONFIG_CHANGE_PENDING`,
/// `BUSY`, `THROTTLED` (background proposals only). An unknown `kind` gives
/// `WK_STATUS_INVALID_ARGUMENT` and changes nothing; an unknown class means foreground.
/// Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_admit(
    slot: *const wk_slot,
    kind: u32,
    proposal_class: u32,
    token: u64,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let Some(kind) = kind_from_raw(kind) else {
            return wk_status::InvalidArgument;
        };
        match slot.admit(kind, ProposalClass::from_raw(proposal_class), token) {
            Ok(()) => wk_status::Ok,
            Err(rejected) => wk_status::from(&rejected.error),
        }
    }
}

/// Asks to queue `n` actions of one kind and class, in order, with one decision per prefix.
///
/// `n == 0` or `n > 1 << 24` and an unknown kind give `WK_STATUS_INVALID_ARGUMENT`. On
/// `WK_STATUS_OK` (the call ran) `result_out->admitted` leading tokens were queued and
/// `result_out->refused` says why the rest were not (`WK_STATUS_OK` when all were). `tokens` is
/// read during the call only. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `tokens` must be NULL or point to `n`
/// readable `uint64_t`; `result_out` must be NULL or point to a writable `wk_batch_result`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_admit_batch(
    slot: *const wk_slot,
    kind: u32,
    proposal_class: u32,
    tokens: *const u64,
    n: usize,
    result_out: *mut wk_batch_result,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let result_out = check_out!(result_out);
        let tokens = check_in_slice!(tokens, n, MAX_BATCH);
        let Some(kind) = kind_from_raw(kind) else {
            return wk_status::InvalidArgument;
        };
        let outcome = slot.admit_batch_copied(kind, ProposalClass::from_raw(proposal_class), tokens);
        let result = wk_batch_result {
            admitted: outcome.admitted,
            refused: outcome.refused.as_ref().map_or(wk_status::Ok, wk_status::from),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, result) };
        wk_status::Ok
    }
}

/// Takes up to `cap` queued actions in FIFO order into `items_out` and writes how many to
/// `*n_out` (possibly 0). Taking resets the background quota, as upstream's batch take does.
///
/// `cap == 0` gives `WK_STATUS_INVALID_ARGUMENT`. Drains are serialised: a concurrent call
/// waits. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `items_out` must be NULL or point to `cap`
/// writable `wk_item` (they may be uninitialised); `n_out` must be NULL or point to a writable
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_drain(
    slot: *const wk_slot,
    items_out: *mut wk_item,
    cap: usize,
    n_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let items_out = check_out!(items_out);
        let n_out = check_out!(n_out);
        if cap == 0 {
            return wk_status::InvalidArgument;
        }
        let mut n = 0usize;
        slot.drain_with(cap, |control| {
            // Never write past the caller's buffer, whatever the core hands us.
            assert!(n < cap, "drain_with returned more than `max` items");
            // SAFETY: `n < cap` and the caller provides `cap` writable, aligned (checked)
            // `wk_item`s at `items_out`.
            unsafe { items_out.add(n).write(item_of(control)) };
            n += 1;
        });
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(n_out, n) };
        wk_status::Ok
    }
}

// Written out one by one (no macro): cbindgen does not see functions generated by macros.

/// Makes the slot leader (proposals and config changes are admitted again).
///
/// Returns `WK_STATUS_OK`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_set_leader(slot: *const wk_slot) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        slot.set_leader();
        wk_status::Ok
    }
}

/// Makes the slot a follower, visible to the very next admission (upstream: a queued
/// higher-term message demotes at once).
///
/// Returns `WK_STATUS_OK`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_demote(slot: *const wk_slot) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        slot.demote();
        wk_status::Ok
    }
}

/// Closes the slot: every later admission gives `WK_STATUS_CLOSED`. Queued actions stay
/// drainable.
///
/// Returns `WK_STATUS_OK`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_close(slot: *const wk_slot) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        slot.close();
        wk_status::Ok
    }
}

/// Marks the pending config change as resolved, so another may be admitted.
///
/// Returns `WK_STATUS_OK`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_config_change_resolved(slot: *const wk_slot) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        slot.config_change_resolved();
        wk_status::Ok
    }
}

/// Records a fatal error `code`: later admissions give `WK_STATUS_FATAL`. The first code wins:
/// returns `WK_STATUS_OK` when this call recorded it, `WK_STATUS_FATAL` when one was already
/// recorded. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_fail(slot: *const wk_slot, code: u32) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        if slot.fail(code) {
            wk_status::Ok
        } else {
            wk_status::Fatal
        }
    }
}

/// Writes a snapshot of the slot's state to `*state_out`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `state_out` must be NULL or point to a
/// writable `wk_slot_state`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_state_get(
    slot: *const wk_slot,
    state_out: *mut wk_slot_state,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let state_out = check_out!(state_out);
        let s = slot.snapshot();
        let state = wk_slot_state {
            queued: s.queued,
            queued_background: s.queued_background,
            fatal_code: s.fatal.unwrap_or(0),
            leader: u8::from(s.leader),
            closed: u8::from(s.closed),
            fatal: u8::from(s.fatal.is_some()),
            config_change_pending: u8::from(s.config_change_pending),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(state_out, state) };
        wk_status::Ok
    }
}

/// Writes this slot's proposal admission counters (class × result) to `*counters_out`.
/// Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `counters_out` must be NULL or point to a
/// writable `wk_admission_counters`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_counters(
    slot: *const wk_slot,
    counters_out: *mut wk_admission_counters,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let counters_out = check_out!(counters_out);
        let counters = wk_admission_counters::from(&slot.counters());
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(counters_out, counters) };
        wk_status::Ok
    }
}

/// Writes the slot's id to `*id_out`. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `id_out` must be NULL or point to a writable
/// `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_id(slot: *const wk_slot, id_out: *mut u64) -> wk_status {
    ffi_panic_boundary! {
        let slot = slot_ref!(slot);
        let id_out = check_out!(id_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(id_out, slot.slot_id()) };
        wk_status::Ok
    }
}
