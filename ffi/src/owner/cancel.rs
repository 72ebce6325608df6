//! `wk_cancel_token`: a cancellation signal for blocking owner calls, and the `Budget` a
//! blocking call's `(timeout_ns, cancel)` arguments stand for.

use std::sync::Arc;
use std::time::Duration;

use wkcore::owner::{Budget, CancelToken};

use super::types::WK_OWNER_WAIT_FOREVER;
use crate::handle::{check_out, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a cancellation token. Every wait that carries it ends with
/// `WK_STATUS_OWNER_CANCELED` once it is cancelled, now or later.
#[allow(non_camel_case_types)]
pub struct wk_cancel_token {
    _private: [u8; 0],
}

impl Castable for wk_cancel_token {
    type RustType = CancelToken;
    const MAGIC: u64 = 0x776b_4341_4e43_0003; // "wkCANC" + ABI generation
}

/// The budget of a blocking call: `timeout_ns` from now (`WK_OWNER_WAIT_FOREVER`: none), the
/// optional token, and the host's `call_data` for the close callbacks the call runs.
///
/// # Safety
///
/// `cancel` must be NULL or a live `wk_cancel_token` handle.
pub(crate) unsafe fn budget_of(
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut std::ffi::c_void,
) -> Result<Budget, wk_status> {
    let mut budget = if timeout_ns == WK_OWNER_WAIT_FOREVER {
        Budget::unbounded()
    } else {
        Budget::timeout(Duration::from_nanos(timeout_ns))
    }
    .with_host_context(call_data as usize);
    if !cancel.is_null() {
        // SAFETY: forwarded from this function's contract.
        match unsafe { <wk_cancel_token as ArcCastPtr>::try_ref(cancel) } {
            Ok(token) => budget = budget.with_cancel((**token).clone()),
            Err(error) => return Err(crate::handle::BadHandle::bad_handle(error)),
        }
    }
    Ok(budget)
}

/// Creates a token, not cancelled. On `WK_STATUS_OK` the caller owns `*token_out`.
///
/// # Safety
///
/// `token_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_cancel_token_new(token_out: *mut *mut wk_cancel_token) -> wk_status {
    ffi_panic_boundary! {
        let token_out = check_out!(token_out);
        let raw = wk_cancel_token::into_raw(Arc::new(Guarded::new::<wk_cancel_token>(
            CancelToken::new(),
        )));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(token_out, raw) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*token_out` is a handle to the same token, freed separately.
///
/// # Safety
///
/// `token` must be NULL or a live handle; `token_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_cancel_token_clone(
    token: *const wk_cancel_token,
    token_out: *mut *mut wk_cancel_token,
) -> wk_status {
    ffi_panic_boundary! {
        let token_out = check_out!(token_out);
        let arc = try_clone!(wk_cancel_token, token);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(token_out, wk_cancel_token::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Cancels every wait that carries the token, now and later. Idempotent; any thread may call
/// it, also while another thread waits with the token.
///
/// # Safety
///
/// `token` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_cancel_token_cancel(token: *const wk_cancel_token) -> wk_status {
    ffi_panic_boundary! {
        try_ref!(wk_cancel_token, token).cancel();
        WK_STATUS_OK
    }
}

/// True once the token was cancelled; false for a NULL or invalid handle.
///
/// # Safety
///
/// `token` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_cancel_token_is_cancelled(token: *const wk_cancel_token) -> bool {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { <wk_cancel_token as ArcCastPtr>::try_ref(token) } {
            Ok(t) => t.is_cancelled(),
            Err(_) => false,
        }
    }
}

/// Drops one reference (a wait in progress keeps its own). NULL is a no-op; a handle detected
/// as already freed is ignored.
///
/// # Safety
///
/// `token` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_cancel_token_free(token: *mut wk_cancel_token) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_cancel_token::free(token) }
    }
}
