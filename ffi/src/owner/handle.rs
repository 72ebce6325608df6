//! `wk_owner`: a handle to one held owner (what hot callers keep so begin and done skip the
//! map), the host's close callback, and operation scopes kept in host memory (`wk_owner_op`).
//!
//! `wk_owner_begin` and `wk_owner_op_done` are lock-free and allocate nothing: begin is one CAS
//! on the owner's state word, done one CAS on the host's `wk_owner_op.state` (the once-only
//! done flag) and one on the owner's word.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use wkcore::owner::{Budget, CloseError, CloseTransport, OwnerError, OwnerHandle};

use super::cancel::{budget_of, wk_cancel_token};
use super::status::{
    result_status, status_of, WK_STATUS_OWNER_CANCELED, WK_STATUS_OWNER_DEADLINE_EXCEEDED,
    WK_STATUS_OWNER_FENCED,
};
use super::types::{
    wk_owner_info, wk_owner_op, wk_owner_release_fn, WK_OWNER_OP_BATCH_MAX, WK_OWNER_OP_DONE,
    WK_OWNER_OP_LIVE, WK_OWNER_WAIT_FOREVER,
};
use crate::coord::ledger::tri;
use crate::handle::{
    check_out, check_ptr, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded,
};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to one owner. The identity and UID stay readable after the owner
/// retired; the registry keeps its own reference while the owner is held.
#[allow(non_camel_case_types)]
pub struct wk_owner {
    _private: [u8; 0],
}

impl Castable for wk_owner {
    type RustType = OwnerHandle;
    const MAGIC: u64 = 0x776b_4f57_4e52_0003; // "wkOWNR" + ABI generation
}

/// The host's close callback, its `user_data` and the optional release of `user_data`.
pub(crate) struct HostClose {
    close: unsafe extern "C" fn(*mut c_void, *mut c_void, u64) -> wk_status,
    user_data: *mut c_void,
    release: wk_owner_release_fn,
    /// False when the reservation failed: `user_data` then stays the host's, unreleased.
    armed: AtomicBool,
}

// SAFETY: Rust never dereferences `user_data`; it only passes it back to the host's callbacks,
// which the host (per `wk_owner_reserve`'s contract) makes callable from any thread.
unsafe impl Send for HostClose {}
// SAFETY: as for `Send`: the callbacks are the host's, callable from any thread concurrently.
unsafe impl Sync for HostClose {}

impl HostClose {
    pub(crate) fn new(
        close: unsafe extern "C" fn(*mut c_void, *mut c_void, u64) -> wk_status,
        user_data: *mut c_void,
        release: wk_owner_release_fn,
    ) -> Self {
        Self {
            close,
            user_data,
            release,
            armed: AtomicBool::new(true),
        }
    }

    /// The reservation failed: never call `release`.
    pub(crate) fn disarm(&self) {
        self.armed.store(false, Ordering::Relaxed);
    }
}

impl CloseTransport for HostClose {
    fn close(&self, budget: &Budget) -> Result<(), CloseError> {
        let timeout_ns = match budget.deadline() {
            None => WK_OWNER_WAIT_FOREVER,
            Some(d) => u64::try_from(d.saturating_duration_since(Instant::now()).as_nanos())
                .unwrap_or(u64::MAX)
                .min(WK_OWNER_WAIT_FOREVER - 1),
        };
        // SAFETY: the host's callback with the host's `user_data` (`wk_owner_reserve`'s
        // contract); a C callback cannot unwind into Rust.
        let call_data = budget.host_context() as *mut c_void;
        // SAFETY: as above.
        let status = unsafe { (self.close)(self.user_data, call_data, timeout_ns) };
        match status {
            WK_STATUS_OK => Ok(()),
            WK_STATUS_OWNER_CANCELED => Err(CloseError::Canceled),
            WK_STATUS_OWNER_DEADLINE_EXCEEDED => Err(CloseError::DeadlineExceeded),
            _ => Err(CloseError::Failed),
        }
    }
}

impl Drop for HostClose {
    fn drop(&mut self) {
        if let (true, Some(release)) = (self.armed.load(Ordering::Relaxed), self.release) {
            // SAFETY: the host's release with the host's `user_data`, called exactly once (the
            // one drop of the one `HostClose` of this owner).
            unsafe { release(self.user_data) }
        }
    }
}

/// The host's `state` word of `op`, as an atomic.
///
/// # Safety
///
/// `op` must be NULL or point to a `wk_owner_op` valid for reads and atomic writes for `'a`.
unsafe fn op_state<'a>(op: *const wk_owner_op) -> Result<&'a AtomicU64, wk_status> {
    check_ptr(op)?;
    // SAFETY: non-NULL and aligned; the field's address is in bounds.
    let state = unsafe { std::ptr::addr_of!((*op).state) };
    if !state.cast::<AtomicU64>().is_aligned() {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    // SAFETY: aligned for `AtomicU64`, valid per the contract, and every concurrent access by
    // the library is atomic (the host does not write `state` while the op is shared).
    Ok(unsafe { AtomicU64::from_ptr(state.cast_mut()) })
}

/// The owner pointer of `op`.
///
/// # Safety
///
/// `op` must have passed [`op_state`].
unsafe fn op_owner(op: *const wk_owner_op) -> *const wk_owner {
    // SAFETY: non-NULL, aligned and readable (checked by `op_state`, the contract).
    unsafe { std::ptr::addr_of!((*op).owner).read() }
}

/// Checks `op` for a done: `Ok(None)` when already done, `Ok(Some(handle))` when live with a
/// valid owner handle, else the refusal.
///
/// # Safety
///
/// As [`op_state`]; a live op's owner must be NULL or a live `wk_owner` handle.
unsafe fn op_check<'a>(
    op: *const wk_owner_op,
) -> Result<(&'a AtomicU64, Option<&'a OwnerHandle>), wk_status> {
    // SAFETY: forwarded contract.
    let state = unsafe { op_state(op) }?;
    // Ordering: Acquire; pairs with the AcqRel CAS of the done that won.
    match state.load(Ordering::Acquire) {
        WK_OWNER_OP_DONE => Ok((state, None)),
        WK_OWNER_OP_LIVE => {
            // SAFETY: forwarded contract; `try_ref` checks NULL, alignment and the magic word.
            match unsafe { <wk_owner as ArcCastPtr>::try_ref(op_owner(op)) } {
                Ok(h) => Ok((state, Some(&**h))),
                Err(e) => Err(crate::handle::BadHandle::bad_handle(e)),
            }
        }
        _ => Err(WK_STATUS_INVALID_ARGUMENT),
    }
}

/// Ends a checked live op: the winning CAS ends the scope.
fn op_finish(state: &AtomicU64, handle: &OwnerHandle) -> wk_status {
    // Ordering: AcqRel; the winning CAS releases the scope's effects (the owner word's CAS in
    // `end_detached` publishes them to quiesce).
    match state.compare_exchange(
        WK_OWNER_OP_LIVE,
        WK_OWNER_OP_DONE,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            handle.end_detached();
            WK_STATUS_OK
        }
        Err(WK_OWNER_OP_DONE) => WK_STATUS_OK,
        Err(_) => WK_STATUS_INVALID_ARGUMENT,
    }
}

/// Adds a reference: `*owner_out` is a handle to the same owner, freed separately.
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `owner_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_clone(
    owner: *const wk_owner,
    owner_out: *mut *mut wk_owner,
) -> wk_status {
    ffi_panic_boundary! {
        let owner_out = check_out!(owner_out);
        let arc = try_clone!(wk_owner, owner);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(owner_out, wk_owner::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. The owner itself stays held until it retires; when the last
/// reference (the registry's included) goes, the reservation's `release` runs on this thread.
/// NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `owner` must be NULL or a live handle that is not used again after this call (nor by any
/// live `wk_owner_op` that names it).
#[no_mangle]
pub unsafe extern "C" fn wk_owner_free(owner: *mut wk_owner) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_owner::free(owner) }
    }
}

/// Writes the owner's identity numbers and its state now to `*info_out`.
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `info_out` NULL or writable for one `wk_owner_info`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_info_get(
    owner: *const wk_owner,
    info_out: *mut wk_owner_info,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_owner, owner);
        let info_out = check_out!(info_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(info_out, wk_owner_info::of(h)) };
        WK_STATUS_OK
    }
}

/// Writes the UID reserved with the owner (UTF-8, not NUL-terminated): `*ptr_out` points into
/// the owner, valid while this handle (or another reference to the owner) lives.
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `ptr_out` and `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_uid_get(
    owner: *const wk_owner,
    ptr_out: *mut *const u8,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_owner, owner);
        let ptr_out = check_out!(ptr_out);
        let len_out = check_out!(len_out);
        let uid = h.uid();
        // SAFETY: both checked by `check_out!`; writable per this function's contract.
        unsafe {
            write_out(ptr_out, uid.as_ptr());
            write_out(len_out, uid.len());
        }
        WK_STATUS_OK
    }
}

/// Activates the pending owner with committed lease receipt `revision` (non-zero), admitting
/// operations until `until_ns` (registry clock; after now, at most `max_lease_ns` ahead).
/// `WK_STATUS_OWNER_STOPPED`; `WK_STATUS_OWNER_FENCED` for an owner closing or past its
/// deadline (fenced here) or not pending; `WK_STATUS_OWNER_INVALID` for a bad revision or
/// lease; an exact retry of the installed lease is `WK_STATUS_OK`.
///
/// # Safety
///
/// `owner` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_activate(
    owner: *const wk_owner,
    revision: u64,
    until_ns: u64,
) -> wk_status {
    ffi_panic_boundary! {
        result_status(try_ref!(wk_owner, owner).activate(revision, until_ns))
    }
}

/// Renews the active owner's lease: as `wk_owner_activate`, but needs an active owner and a
/// higher `revision` (else `WK_STATUS_OWNER_FENCED`, without fencing).
///
/// # Safety
///
/// `owner` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_renew(
    owner: *const wk_owner,
    revision: u64,
    until_ns: u64,
) -> wk_status {
    ffi_panic_boundary! {
        result_status(try_ref!(wk_owner, owner).renew(revision, until_ns))
    }
}

/// Begins an operation scope and writes `{owner, WK_OWNER_OP_LIVE}` to `*op_out`:
/// `WK_STATUS_OWNER_STOPPED`, `WK_STATUS_OWNER_FENCED` (not active, or the lease expired,
/// which fences the owner here) or `WK_STATUS_OWNER_LIMIT` at `max_operations` (never queued).
/// Lock-free, no allocation. The op holds no reference: keep `owner` alive until the op is
/// done, and end it exactly through `wk_owner_op_done` (or `_done_batch`).
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `op_out` NULL or writable for one `wk_owner_op`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_begin(
    owner: *const wk_owner,
    op_out: *mut wk_owner_op,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_owner, owner);
        let op_out = check_out!(op_out);
        tri!(h.begin_detached().map_err(status_of));
        let op = wk_owner_op { owner, state: WK_OWNER_OP_LIVE };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(op_out, op) };
        WK_STATUS_OK
    }
}

/// Ends the operation: the one call that moves `op->state` from `WK_OWNER_OP_LIVE` to
/// `WK_OWNER_OP_DONE` (an atomic CAS, so racing calls are safe) releases its place, and if it
/// was the owner's last scope while its quiescence was pending, retires the owner. A done op:
/// `WK_STATUS_OK`, nothing happens (its owner is not touched). `WK_STATUS_INVALID_ARGUMENT` for
/// a misaligned op or a state that is neither; `WK_STATUS_INVALID_HANDLE` for a live op whose
/// owner is not a live handle. Lock-free, no allocation.
///
/// # Safety
///
/// `op` must be NULL or point to a `wk_owner_op` written by `wk_owner_begin` (or a copy the
/// host does not write meanwhile); a live op's owner handle must be alive.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_op_done(op: *mut wk_owner_op) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { op_check(op) } {
            Ok((_, None)) => WK_STATUS_OK,
            Ok((state, Some(h))) => op_finish(state, h),
            Err(status) => status,
        }
    }
}

/// Ends `n` operations (`1..=WK_OWNER_OP_BATCH_MAX`), as `wk_owner_op_done` each. Every entry
/// is checked first: if any is refused, the call returns that status and ends none.
///
/// # Safety
///
/// `ops` must be NULL or point to `n` `wk_owner_op`s, each as for `wk_owner_op_done`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_op_done_batch(ops: *mut wk_owner_op, n: usize) -> wk_status {
    ffi_panic_boundary! {
        if let Err(status) = check_ptr(ops.cast_const()) {
            return status;
        }
        if n == 0 || n > WK_OWNER_OP_BATCH_MAX {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        for i in 0..n {
            // SAFETY: `i < n`, the host's array of `n` ops per this function's contract.
            if let Err(status) = unsafe { op_check(ops.add(i)) } {
                return status;
            }
        }
        for i in 0..n {
            // SAFETY: as above.
            if let Ok((state, Some(h))) = unsafe { op_check(ops.add(i)) } {
                let _ = op_finish(state, h);
            }
        }
        WK_STATUS_OK
    }
}

/// `WK_STATUS_OK` while the owner is active, its lease holds and the op is live (uses no extra
/// place). In this order: `WK_STATUS_OWNER_FENCED` if the op is done (its owner is then not
/// touched); `WK_STATUS_OWNER_CANCELED` once the op's cancellation is raised (the owner fenced,
/// or admission stopped); `WK_STATUS_OWNER_FENCED` if the lease has expired (which fences the
/// owner here).
///
/// # Safety
///
/// As `wk_owner_op_done`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_op_check(op: *const wk_owner_op) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { op_check(op) } {
            // The core's `check_detached(true)` answer, without touching a maybe-freed owner.
            Ok((_, None)) => WK_STATUS_OWNER_FENCED,
            Ok((_, Some(h))) => result_status(h.check_detached(false)),
            Err(status) => status,
        }
    }
}

/// Marks the owner's effect uncertain, for good, and fences it: its quiescence can never be
/// proven (`WK_STATUS_OWNER_UNKNOWN`) and it keeps its place. Idempotent;
/// `WK_STATUS_OWNER_FENCED` once the op is done (its owner is then not touched) or the owner
/// retired.
///
/// # Safety
///
/// As `wk_owner_op_done`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_op_mark_uncertain(op: *const wk_owner_op) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { op_check(op) } {
            // The core's `mark_uncertain_detached(true)` answer, as in `wk_owner_op_check`.
            Ok((_, None)) => WK_STATUS_OWNER_FENCED,
            Ok((_, Some(h))) => result_status(h.mark_uncertain_detached(false)),
            Err(status) => status,
        }
    }
}

/// Fences the owner: it admits nothing more, its operations' cancellation is raised, and it is
/// due for closing after `close_retry_ns`. No callback, no wait. A retired owner: `WK_STATUS_OK`.
///
/// # Safety
///
/// `owner` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_fence(owner: *const wk_owner) -> wk_status {
    ffi_panic_boundary! {
        try_ref!(wk_owner, owner).fence();
        WK_STATUS_OK
    }
}

/// Proves the owner isolated: fences it; unless its transport is already closed, joins the
/// close attempt in flight or runs one (the close callback, on this thread); then waits until
/// every admitted operation is done. A failed close keeps the owner fenced and held and returns
/// `WK_STATUS_OWNER_CLOSE` (or the callback's `_CANCELED` / `_DEADLINE_EXCEEDED`); an uncertain
/// owner gives `WK_STATUS_OWNER_UNKNOWN`; a wait that runs out gives `_DEADLINE_EXCEEDED` or
/// `_CANCELED` and leaves the attempt and the owner as they are. A spent budget (timeout 0, a
/// cancelled token) is reported only when there is something to wait for: an owner already
/// quiesced answers `WK_STATUS_OK` (or `_UNKNOWN` if uncertain) whatever the budget.
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `cancel` NULL or a live token; `call_data` is passed, unread, to the
/// close callbacks this call runs.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_quiesce(
    owner: *const wk_owner,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_owner, owner);
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        result_status(quiesce_handle(h, &budget))
    }
}

/// Quiesces `h` within `budget`, where a spent budget (a zero timeout, a cancelled token) counts
/// only when there is something to wait for: an owner whose quiescence is already complete
/// answers at once (`Ok`, or `Unknown` if uncertain), as it does with an unbounded budget. Such
/// an owner runs no close callback and admits nothing, so the unbounded call cannot block.
pub(crate) fn quiesce_handle(h: &OwnerHandle, budget: &Budget) -> Result<(), OwnerError> {
    if h.is_complete() {
        h.quiesce(&Budget::unbounded())
    } else {
        h.quiesce(budget)
    }
}

/// A new handle of `h` for the host.
pub(crate) fn into_raw(h: OwnerHandle) -> *mut wk_owner {
    wk_owner::into_raw(Arc::new(Guarded::new::<wk_owner>(h)))
}
