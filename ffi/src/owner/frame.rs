//! The MQTT owner RPC frame codec (`wkcore::codec::owner_frame`, node RPC service
//! `WK_OWNER_RPC_SERVICE_ID`): encode and decode quiesce requests and responses, the owner
//! node's status for a quiesce outcome, and the calling node's verdict on a response.
//!
//! Every frame failure, on encode and on decode, is `WK_STATUS_OWNER_INVALID_FRAME` (the
//! frame carries only a complete, valid owner). Encoders follow the ABI's buffer convention:
//! `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length to `*len_out` and nothing to the
//! buffer. Decoders copy nothing: the identity they write points into the caller's bytes.

use wkcore::codec::owner_frame::{self, QuiesceStatus};
use wkcore::owner::{Owner, OwnerError};

use super::status::{error_of, status_of, WK_STATUS_OWNER_INVALID_FRAME};
use super::types::{in_ref, owner_of, wk_owner_identity, WK_OWNER_FRAME_MAX, WK_OWNER_RPC_UNKNOWN};
use crate::coord::ledger::tri;
use crate::handle::{check_out, write_out};
use crate::panic::{ffi_panic_boundary, PanicDefault};
use crate::status::{wk_status, WK_STATUS_BUFFER_TOO_SMALL, WK_STATUS_NULL_ARGUMENT, WK_STATUS_OK};

impl PanicDefault for u8 {
    /// The only `u8` the ABI returns is a response status byte; a panic answers "unknown"
    /// (`WK_OWNER_RPC_UNKNOWN`), never a proof.
    fn panic_default() -> Self {
        WK_OWNER_RPC_UNKNOWN
    }
}

/// The owner an identity argument to an encoder names; a malformed one is the wire error.
///
/// # Safety
///
/// `identity` NULL or readable, its strings readable for their lengths.
unsafe fn frame_owner(identity: *const wk_owner_identity) -> Result<Owner, wk_status> {
    // SAFETY: forwarded contract.
    let owner = unsafe { owner_of(in_ref(identity)?) };
    owner.map_err(|s| {
        if s == WK_STATUS_NULL_ARGUMENT {
            s
        } else {
            WK_STATUS_OWNER_INVALID_FRAME
        }
    })
}

/// Writes `frame` to `buf[0..cap]` and its length to `*len_out` (the needed length and
/// `BUFFER_TOO_SMALL` when it does not fit).
///
/// # Safety
///
/// `buf` NULL (only with `cap == 0`) or `cap` writable bytes; `len_out` checked and writable.
unsafe fn write_frame(frame: &[u8], buf: *mut u8, cap: usize, len_out: *mut usize) -> wk_status {
    if frame.len() > cap {
        // SAFETY: per the contract.
        unsafe { write_out(len_out, frame.len()) };
        return WK_STATUS_BUFFER_TOO_SMALL;
    }
    // SAFETY: `buf` is non-NULL (cap >= len > 0: a frame is never empty) with `cap` writable
    // bytes per the contract; a fresh Vec cannot overlap it.
    unsafe {
        std::ptr::copy_nonoverlapping(frame.as_ptr(), buf, frame.len());
        write_out(len_out, frame.len());
    }
    WK_STATUS_OK
}

/// Encodes a quiesce request for `identity` into `buf[0..cap]` and writes its length to
/// `*len_out`. `WK_STATUS_OWNER_INVALID_FRAME` for an identity that is not a valid owner;
/// `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length (at most `WK_OWNER_FRAME_MAX`) to
/// `*len_out` and nothing to `buf` (the one exception to "out-parameters only on success").
/// `buf` may be NULL when `cap == 0`, to ask for the length.
///
/// # Safety
///
/// `identity` NULL or readable (strings for their lengths); `buf` NULL (only with `cap == 0`)
/// or `cap` writable bytes; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_frame_encode_request(
    identity: *const wk_owner_identity,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { frame_owner(identity) });
        let len_out = check_out!(len_out);
        if buf.is_null() && cap != 0 {
            return WK_STATUS_NULL_ARGUMENT;
        }
        let frame = tri!(owner_frame::encode_request(&owner)
            .map_err(|_| WK_STATUS_OWNER_INVALID_FRAME));
        // SAFETY: forwarded from this function's contract; `len_out` checked.
        unsafe { write_frame(&frame, buf, cap, len_out) }
    }
}

/// Encodes a response echoing `identity` with status byte `status` (`WK_OWNER_RPC_QUIESCED`
/// … `WK_OWNER_RPC_DEADLINE_EXCEEDED`, 1..=5; else `WK_STATUS_OWNER_INVALID_FRAME`), as
/// `wk_owner_frame_encode_request`.
///
/// # Safety
///
/// As `wk_owner_frame_encode_request`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_frame_encode_response(
    identity: *const wk_owner_identity,
    status: u8,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { frame_owner(identity) });
        let len_out = check_out!(len_out);
        if buf.is_null() && cap != 0 {
            return WK_STATUS_NULL_ARGUMENT;
        }
        let Some(status) = QuiesceStatus::from_u8(status) else {
            return WK_STATUS_OWNER_INVALID_FRAME;
        };
        let frame = tri!(owner_frame::encode_response(&owner, status)
            .map_err(|_| WK_STATUS_OWNER_INVALID_FRAME));
        // SAFETY: forwarded from this function's contract; `len_out` checked.
        unsafe { write_frame(&frame, buf, cap, len_out) }
    }
}

/// The frame at `(bytes, len)` as a slice, refusing NULL and over-long input unread.
///
/// # Safety
///
/// `bytes` NULL or `len` readable bytes for `'a`.
unsafe fn frame_arg<'a>(bytes: *const u8, len: usize) -> Result<&'a [u8], wk_status> {
    if bytes.is_null() {
        return Err(WK_STATUS_NULL_ARGUMENT);
    }
    if len > WK_OWNER_FRAME_MAX {
        return Err(WK_STATUS_OWNER_INVALID_FRAME);
    }
    // SAFETY: non-NULL, bounded, readable per the contract.
    Ok(unsafe { std::slice::from_raw_parts(bytes, len) })
}

/// The identity of decoded `owner`, its strings pointing into `frame` at the offsets of the
/// frame layout (magic 4, format 1, code 1, then `u16`-prefixed namespace, client id, three
/// `u64`s, `u16`-prefixed boot id, `u64` connection id).
fn zero_copy(frame: &[u8], owner: &Owner) -> wk_owner_identity {
    let ns_len = owner.key.namespace.len();
    let cid_len = owner.key.client_id.len();
    let boot_len = owner.boot_id.len();
    let ns_at = 6 + 2;
    let cid_at = ns_at + ns_len + 2;
    let boot_at = cid_at + cid_len + 24 + 2;
    debug_assert_eq!(
        &frame[ns_at..ns_at + ns_len],
        owner.key.namespace.as_bytes()
    );
    debug_assert_eq!(
        &frame[cid_at..cid_at + cid_len],
        owner.key.client_id.as_bytes()
    );
    debug_assert_eq!(
        &frame[boot_at..boot_at + boot_len],
        owner.boot_id.as_bytes()
    );
    let base = frame.as_ptr();
    // `wrapping_add` keeps this safe code; every offset is inside `frame` (the decoder consumed
    // exactly these fields).
    wk_owner_identity {
        namespace_ptr: base.wrapping_add(ns_at),
        namespace_len: ns_len,
        client_id: base.wrapping_add(cid_at),
        client_id_len: cid_len,
        session_generation: owner.session_generation,
        owner_generation: owner.owner_generation,
        node_id: owner.node_id,
        boot_id: base.wrapping_add(boot_at),
        boot_id_len: boot_len,
        connection_id: owner.connection_id,
    }
}

/// Decodes a quiesce request (`len` bytes at `bytes`, at most `WK_OWNER_FRAME_MAX`) and writes
/// the owner to `*identity_out`, whose string pointers point into `bytes` (no copy: valid while
/// the caller's buffer is). `WK_STATUS_OWNER_INVALID_FRAME` for anything but a well-formed
/// request of a valid owner.
///
/// # Safety
///
/// `bytes` NULL or `len` readable bytes; `identity_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_frame_decode_request(
    bytes: *const u8,
    len: usize,
    identity_out: *mut wk_owner_identity,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(bytes, len) });
        let identity_out = check_out!(identity_out);
        let owner = tri!(owner_frame::decode_request(frame)
            .map_err(|_| WK_STATUS_OWNER_INVALID_FRAME));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(identity_out, zero_copy(frame, &owner)) };
        WK_STATUS_OK
    }
}

/// Decodes a quiesce response: the echoed owner to `*identity_out` (pointing into `bytes`, as
/// `wk_owner_frame_decode_request`) and its status byte (1..=5) to `*status_out`.
///
/// # Safety
///
/// `bytes` NULL or `len` readable bytes; `identity_out` and `status_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_frame_decode_response(
    bytes: *const u8,
    len: usize,
    identity_out: *mut wk_owner_identity,
    status_out: *mut u8,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(bytes, len) });
        let identity_out = check_out!(identity_out);
        let status_out = check_out!(status_out);
        let (owner, status) = tri!(owner_frame::decode_response(frame)
            .map_err(|_| WK_STATUS_OWNER_INVALID_FRAME));
        // SAFETY: both checked by `check_out!`; writable per this function's contract.
        unsafe {
            write_out(identity_out, zero_copy(frame, &owner));
            write_out(status_out, status.code());
        }
        WK_STATUS_OK
    }
}

/// The owner node's response status byte for a quiesce that returned `quiesce_result`
/// (upstream `MQTTOwnerRPC.HandleRPC`): `WK_STATUS_OK` → `WK_OWNER_RPC_QUIESCED` (1),
/// `WK_STATUS_OWNER_CLOSE` → 3, `WK_STATUS_OWNER_CANCELED` → 4,
/// `WK_STATUS_OWNER_DEADLINE_EXCEEDED` → 5, anything else → `WK_OWNER_RPC_UNKNOWN` (2). A node
/// without an owner runtime answers 2 too. Any thread may call this.
#[no_mangle]
pub extern "C" fn wk_owner_rpc_status_for(quiesce_result: wk_status) -> u8 {
    ffi_panic_boundary! {
        let result = if quiesce_result == WK_STATUS_OK {
            Ok(())
        } else {
            Err(error_of(quiesce_result).unwrap_or(OwnerError::Unknown))
        };
        owner_frame::status_for_result(Some(result)).code()
    }
}

/// The calling node's verdict on `response` (`len` bytes), the owner node's answer to a quiesce
/// request for `request` (upstream `MQTTOwnerClient.Quiesce`): `WK_STATUS_OK` when it proves the
/// owner quiesced; `WK_STATUS_OWNER_INVALID_FRAME` when it does not decode;
/// `WK_STATUS_OWNER_UNKNOWN` when the echo names another owner; otherwise the status's error
/// (`_UNKNOWN`, `_CLOSE`, `_CANCELED`, `_DEADLINE_EXCEEDED`). A `request` whose strings are not
/// UTF-8 or too long: `WK_STATUS_OWNER_INVALID`.
///
/// # Safety
///
/// `request` NULL or readable (strings for their lengths); `response` NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_rpc_client_result(
    request: *const wk_owner_identity,
    response: *const u8,
    len: usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { in_ref(request).and_then(|r| owner_of(r)) });
        // SAFETY: forwarded from this function's contract.
        let response = tri!(unsafe { frame_arg(response, len) });
        match owner_frame::client_result(&request, response) {
            Ok(()) => WK_STATUS_OK,
            Err(owner_frame::ClientError::Frame(_)) => WK_STATUS_OWNER_INVALID_FRAME,
            Err(owner_frame::ClientError::Owner(e)) => status_of(e),
        }
    }
}
