//! `wk_slot`: one Slot's proposal admission (`wkcore::admission::SlotAdmission<u64>`).
//!
//! The token (`uint64_t`) is the host's own reference to the queued action; wkcore never
//! interprets it. A host may instead keep its values itself, in an array indexed by each
//! action's *position* (`WK_SLOT_POSITION_MODULUS`), which every admission, drain and take
//! reports: it then admits batches without tokens and takes without copying items out.
//!
//! An action is published to the consumer by the admission itself: a host that stores its value
//! for a position after `wk_slot_admit` returns must make its consumer wait for that store
//! (a per-position flag of its own, say) before reading the value of a taken position.
//!
//! # Threads
//!
//! A `wk_slot` handle may be used from any number of threads at once, except that drains and
//! takes are serialised (a second concurrent `wk_slot_drain` or `wk_slot_take` waits for the
//! first). Each `wk_slot*` returned
//! by `_new`, `_clone` or `wk_admission_registry_get` must be freed exactly once with
//! `wk_slot_free`, after the last call that uses it has returned.

use std::sync::Arc;

use wkcore::admission::{ConfigChangeTicket, Drained, SlotAdmission, SlotLimits};

use super::status::{
    resolve_status_of, status_of, WK_STATUS_CONFIG_CHANGE_STALE, WK_STATUS_SLOT_FAILED,
};
use super::types::{
    class_from_raw, kind_from_raw, wk_admission, wk_admission_counters, wk_batch_result,
    wk_control_kind_raw, wk_drain_result, wk_item, wk_proposal_class_raw, wk_slot_limits,
    wk_slot_state, ADMISSION_COUNTERS_MIN_SIZE, SLOT_STATE_MIN_SIZE,
};
use crate::handle::{
    check_in_slice, check_out, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable,
    Guarded,
};
use crate::metrics::wk_metrics_registry;
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_OK};

/// Largest `n` that `wk_slot_admit_batch` accepts (`1 << 25`, the ceiling of a queue limit).
const MAX_BATCH: usize = SlotLimits::MAX as usize;

/// Opaque, `Arc`-owned handle to one Slot's admission state.
///
/// The handle points at the slot itself (one allocation holds the handle's magic word and the
/// slot): an admission follows the handle, then the slot's state-word line.
#[allow(non_camel_case_types)]
pub struct wk_slot {
    _private: [u8; 0],
}

impl Castable for wk_slot {
    type RustType = SlotAdmission<u64>;
    const MAGIC: u64 = 0x776b_534c_4f54_0003; // "wkSLOT" + ABI generation
}

/// A registry's reference to a slot: the same allocation the host's handles point at.
#[derive(Clone)]
pub(crate) struct SlotRef(pub(crate) Arc<Guarded<SlotAdmission<u64>>>);

impl wkcore::admission::SlotHandle for SlotRef {
    fn slot_id(&self) -> u64 {
        self.0.slot_id()
    }
}

/// The checked inputs of a new slot (`wk_slot_new`, `wk_slot_new_hosted`): its registry and the
/// limits as read.
pub(crate) struct SlotInputs<'a> {
    metrics: &'a wkcore::metrics::Registry,
    limits: SlotLimits,
}

impl SlotInputs<'_> {
    /// Checks `metrics` (NULL: the process-wide registry) and `limits` and reads the limits;
    /// the status to return for a bad one.
    ///
    /// # Safety
    ///
    /// As `wk_slot_new`'s `metrics` and `limits`.
    pub(crate) unsafe fn read(
        metrics: *const wk_metrics_registry,
        limits: *const wk_slot_limits,
    ) -> Result<Self, wk_status> {
        let metrics = if metrics.is_null() {
            wkcore::metrics::global()
        } else {
            // SAFETY: NULL, alignment and the magic word are checked by `try_ref`; live per
            // the caller's contract.
            match unsafe { <wk_metrics_registry as ArcCastPtr>::try_ref(metrics) } {
                Ok(registry) => registry.registry(),
                Err(error) => return Err(crate::handle::BadHandle::bad_handle(error)),
            }
        };
        crate::handle::check_ptr(limits)?;
        // SAFETY: checked non-NULL and aligned; readable per the caller's contract.
        let limits = unsafe { limits.read() };
        let limits = SlotLimits::new(
            limits.max_queued_controls,
            limits.max_queued_background_controls,
        );
        Ok(Self { metrics, limits })
    }

    /// Builds the slot (hosted or not); every limits error is an argument out of range.
    pub(crate) fn build(self, slot_id: u64, hosted: bool) -> Result<SlotAdmission<u64>, wk_status> {
        let builder = SlotAdmission::builder(self.limits)
            .slot_id(slot_id)
            .metrics(self.metrics);
        let builder = if hosted { builder.hosted() } else { builder };
        builder.build().map_err(|_| WK_STATUS_INVALID_ARGUMENT)
    }
}

/// Creates a slot counted in `metrics`: a follower, open, with nothing queued.
///
/// `metrics` may be NULL: the process-wide registry (`wk_metrics_registry_global`). `limits` is
/// read during the call (0 fields mean defaults); a limit above `1 << 25` gives
/// `WK_STATUS_INVALID_ARGUMENT`. On `WK_STATUS_OK` the caller owns `*slot_out` and frees it
/// with `wk_slot_free`. The slot's ring is allocated as positions are first used, so a new slot
/// is small whatever its limits. Any thread may call this.
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle; `limits` must be NULL or
/// point to a readable `wk_slot_limits`; `slot_out` must be NULL or point to writable storage
/// for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_new(
    metrics: *const wk_metrics_registry,
    slot_id: u64,
    limits: *const wk_slot_limits,
    slot_out: *mut *mut wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let inputs = match unsafe { SlotInputs::read(metrics, limits) } {
            Ok(inputs) => inputs,
            Err(status) => return status,
        };
        let slot_out = check_out!(slot_out);
        let slot = match inputs.build(slot_id, false) {
            Ok(slot) => slot,
            Err(status) => return status,
        };
        let handle = wk_slot::into_raw(Arc::new(Guarded::new::<wk_slot>(slot)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(slot_out, handle) };
        WK_STATUS_OK
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
        let arc = try_clone!(wk_slot, slot);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(slot_out, wk_slot::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the slot is destroyed with its last handle (a registry holds its own).
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
/// Returns `WK_STATUS_OK` when queued, with `*admission_out` set: the action's position and, for
/// a config change, the ticket that resolves it (`wk_slot_config_change_resolve`; 0 for other
/// kinds). Otherwise the refusal, checked in upstream order: `SLOT_CLOSED`, `SLOT_FAILED`,
/// `NOT_LEADER` (propose and config change only), `CONFIG_CHANGE_PENDING`, then a full queue —
/// `PROPOSAL_BUSY` for a proposal, `SLOT_BUSY` for other kinds — and `PROPOSAL_THROTTLED`
/// (background proposals only). An unknown `kind` gives `WK_STATUS_INVALID_ARGUMENT` and a NULL
/// `admission_out` `WK_STATUS_NULL_ARGUMENT`, and neither admits anything; an unknown class means
/// foreground. `*admission_out` is written only on `WK_STATUS_OK`. Any thread may call this.
///
/// A hosted slot (`wk_slot_new_hosted`) refuses it with `WK_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `admission_out` must be NULL or point to a
/// writable `wk_admission`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_admit(
    slot: *const wk_slot,
    kind: wk_control_kind_raw,
    proposal_class: wk_proposal_class_raw,
    token: u64,
    admission_out: *mut wk_admission,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        if let Some(status) = super::hosted::refuse_hosted(slot) {
            return status;
        }
        let admission_out = check_out!(admission_out);
        let Some(kind) = kind_from_raw(kind) else {
            return WK_STATUS_INVALID_ARGUMENT;
        };
        match slot.admit(kind, class_from_raw(proposal_class), token) {
            Ok(admission) => {
                let admission = wk_admission {
                    position: admission.position,
                    config_change: admission.config_change.map_or(0, ConfigChangeTicket::get),
                };
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(admission_out, admission) };
                WK_STATUS_OK
            }
            Err(rejected) => status_of(&rejected.error, kind),
        }
    }
}

/// Asks to queue `n` actions of one kind and class, in order, with one decision per prefix.
///
/// `tokens` is read during the call only; NULL means `n` zero tokens (for hosts that keep their
/// values by position). `n == 0` or `n > 1 << 25` and an unknown kind give
/// `WK_STATUS_INVALID_ARGUMENT`. On `WK_STATUS_OK` (the call ran) `result_out->admitted` leading
/// actions were queued, at consecutive positions from `result_out->first_position`, and
/// `result_out->refused` says why the rest were not, as `wk_slot_admit` would (`WK_STATUS_OK`
/// when all were); a config change batch admits at most one action, and its ticket is in
/// `result_out->config_change`. Any thread may call this.
///
/// A hosted slot (`wk_slot_new_hosted`) refuses it with `WK_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `tokens` must be NULL or point to `n`
/// readable `uint64_t`; `result_out` must be NULL or point to a writable `wk_batch_result`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_admit_batch(
    slot: *const wk_slot,
    kind: wk_control_kind_raw,
    proposal_class: wk_proposal_class_raw,
    tokens: *const u64,
    n: usize,
    result_out: *mut wk_batch_result,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        if let Some(status) = super::hosted::refuse_hosted(slot) {
            return status;
        }
        let result_out = check_out!(result_out);
        let tokens = if tokens.is_null() {
            if n == 0 || n > MAX_BATCH {
                return WK_STATUS_INVALID_ARGUMENT;
            }
            None
        } else {
            Some(check_in_slice!(tokens, n, MAX_BATCH))
        };
        let Some(kind) = kind_from_raw(kind) else {
            return WK_STATUS_INVALID_ARGUMENT;
        };
        let class = class_from_raw(proposal_class);
        let outcome = match tokens {
            Some(tokens) => slot.admit_batch_copied(kind, class, tokens),
            None => slot.admit_batch_repeat(kind, class, n, 0),
        };
        let result = wk_batch_result {
            admitted: outcome.admitted,
            refused: outcome.refused.as_ref().map_or(WK_STATUS_OK, |e| status_of(e, kind)),
            first_position: outcome.first_position,
            config_change: outcome.config_change.map_or(0, ConfigChangeTicket::get),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, result) };
        WK_STATUS_OK
    }
}

fn drain_result(drained: Drained) -> wk_drain_result {
    wk_drain_result {
        count: drained.count,
        first_position: drained.first_position,
    }
}

/// Takes up to `cap` queued actions in FIFO order into `items_out` and writes how many, and the
/// position of the first, to `*result_out` (possibly none). Taking frees their places and their
/// background quota, as upstream's batch take resets its counter.
///
/// `cap == 0` gives `WK_STATUS_INVALID_ARGUMENT`. Drains and takes are serialized: a concurrent
/// call waits. Any thread may call this.
///
/// A hosted slot (`wk_slot_new_hosted`) refuses it with `WK_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `items_out` must be NULL or point to `cap`
/// writable `wk_item` (they may be uninitialised); `result_out` must be NULL or point to a
/// writable `wk_drain_result`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_drain(
    slot: *const wk_slot,
    items_out: *mut wk_item,
    cap: usize,
    result_out: *mut wk_drain_result,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        if let Some(status) = super::hosted::refuse_hosted(slot) {
            return status;
        }
        let items_out = check_out!(items_out);
        let result_out = check_out!(result_out);
        if cap == 0 {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        let mut n = 0usize;
        let drained = slot.drain_with(cap, |control| {
            // Never write past the caller's buffer, whatever the core hands us.
            assert!(n < cap, "drain_with returned more than `max` items");
            // SAFETY: `n < cap` and the caller provides `cap` writable, aligned (checked)
            // `wk_item`s at `items_out`.
            unsafe { items_out.add(n).write(wk_item::from(control)) };
            n += 1;
        });
        debug_assert_eq!(drained.count, n);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, drain_result(drained)) };
        WK_STATUS_OK
    }
}

/// Takes up to `max` queued actions in FIFO order without copying them out, for hosts that keep
/// their values by position, and writes how many, and the position of the first, to
/// `*result_out` (possibly none). Taking frees their places and quota as `wk_slot_drain` does;
/// the cost is per admitted batch, not per action.
///
/// `max == 0` gives `WK_STATUS_INVALID_ARGUMENT`. Serialized with drains. Any thread may call
/// this.
///
/// A hosted slot (`wk_slot_new_hosted`) refuses it with `WK_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `result_out` must be NULL or point to a
/// writable `wk_drain_result`.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_take(
    slot: *const wk_slot,
    max: usize,
    result_out: *mut wk_drain_result,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        if let Some(status) = super::hosted::refuse_hosted(slot) {
            return status;
        }
        let result_out = check_out!(result_out);
        if max == 0 {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        let taken = drain_result(slot.take(max));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, taken) };
        WK_STATUS_OK
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
        let slot = try_ref!(wk_slot, slot);
        slot.set_leader();
        WK_STATUS_OK
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
        let slot = try_ref!(wk_slot, slot);
        slot.demote();
        WK_STATUS_OK
    }
}

/// Closes the slot: every later admission gives `WK_STATUS_SLOT_CLOSED`. Queued actions stay
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
        let slot = try_ref!(wk_slot, slot);
        slot.close();
        WK_STATUS_OK
    }
}

/// The config change admitted with `ticket` (`wk_admission.config_change`,
/// `wk_batch_result.config_change`) has resolved: clears the pending flag, so another may be
/// admitted.
///
/// Returns `WK_STATUS_OK` when `ticket` is the pending change's; `WK_STATUS_CONFIG_CHANGE_STALE`,
/// changing nothing, for any other value: a ticket resolved already (a second resolve), one of an
/// earlier change, one this slot never issued, and 0. Only this call clears the flag, once per
/// ticket. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_config_change_resolve(
    slot: *const wk_slot,
    ticket: u64,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        let Some(ticket) = ConfigChangeTicket::from_raw(ticket) else {
            return WK_STATUS_CONFIG_CHANGE_STALE;
        };
        match slot.resolve_config_change(ticket) {
            Ok(()) => WK_STATUS_OK,
            Err(error) => resolve_status_of(&error),
        }
    }
}

/// Records a fatal error `code`: later admissions give `WK_STATUS_SLOT_FAILED`. The first code
/// wins: returns `WK_STATUS_OK` when this call recorded it, `WK_STATUS_SLOT_FAILED` when one was
/// already recorded. Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_fail(slot: *const wk_slot, code: u32) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        if slot.fail(code) {
            WK_STATUS_OK
        } else {
            WK_STATUS_SLOT_FAILED
        }
    }
}

/// Writes a moment's view of the slot to `*state_out`, whose size the caller passes
/// (`sizeof(wk_slot_state)`): the library writes the fields both sides know, so the struct can
/// grow. A size below the first release's (`WK_SLOT_STATE_MIN_SIZE`, 16: without
/// `queued_proposals` and `memory_bytes`) gives `WK_STATUS_INVALID_ARGUMENT`. Any thread may
/// call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `state_out` must be NULL or point to
/// `state_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_state_get(
    slot: *const wk_slot,
    state_out: *mut wk_slot_state,
    state_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
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
            queued_proposals: s.queued_proposals,
            reserved: 0,
            memory_bytes: memory_bytes(slot),
        };
        // SAFETY: checked by `check_out!`; `state_size` writable bytes per this function's
        // contract.
        unsafe { write_sized(state_out, state_size, SLOT_STATE_MIN_SIZE, state) }
    }
}

/// The slot's memory as the host sees it: the core's count, plus the handle's own header (its
/// magic word and the `Arc`'s counts) around the slot.
fn memory_bytes(slot: &SlotAdmission<u64>) -> u64 {
    let header = std::mem::size_of::<Guarded<SlotAdmission<u64>>>()
        - std::mem::size_of::<SlotAdmission<u64>>()
        + 2 * std::mem::size_of::<usize>();
    (slot.memory_bytes() + header) as u64
}

/// Writes this slot's proposal admission counters (class × result) to `*counters_out`, whose
/// size the caller passes (`sizeof(wk_admission_counters)`; at least 64). Any thread may call
/// this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle; `counters_out` must be NULL or point to
/// `counters_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_counters_get(
    slot: *const wk_slot,
    counters_out: *mut wk_admission_counters,
    counters_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let slot = try_ref!(wk_slot, slot);
        let counters_out = check_out!(counters_out);
        let counters = wk_admission_counters::from(&slot.counters());
        // SAFETY: checked by `check_out!`; `counters_size` writable bytes per this function's
        // contract.
        unsafe { write_sized(counters_out, counters_size, ADMISSION_COUNTERS_MIN_SIZE, counters) }
    }
}

/// The slot's id; 0 for a NULL or invalid handle (ids are the host's: use a non-zero id if it
/// must be told apart). Any thread may call this.
///
/// # Safety
///
/// `slot` must be NULL or a live `wk_slot` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_id_get(slot: *const wk_slot) -> u64 {
    ffi_panic_boundary! {
        try_ref!(wk_slot, slot).slot_id()
    }
}
