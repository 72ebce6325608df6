//! The delivery-tag RPC (node service `WK_TAG_RPC_SERVICE_ID`, 44) over the core's codec
//! (`wkcore::codec::delivery_tag`) and rules (`wkcore::tag::rpc`): the channel leader's handler,
//! the follower's store of a fetched tag, and the request encoders.
//!
//! Decoders read at most `WK_TAG_FRAME_MAX` bytes (a longer frame is refused unread) and
//! allocate no more than the frame's own size on any input: every count is bounded by the bytes
//! left before anything is reserved. A decode error is its `WK_STATUS_TAG_*` status with
//! upstream's text (each *is* `WK_STATUS_TAG_INVALID_FRAME`). Encoders follow the ABI's buffer
//! convention: `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length to `*len_out` and nothing to
//! the buffer; `buf` may be NULL when `cap` is 0, to ask for the length.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Arc;

use wkcore::codec::delivery_tag::{
    self, TagRequest, TagResponse, WirePartition, WireSlotRef, WireTag, WireTopology,
    RESULT_TAG_NOT_CURRENT, RESULT_TAG_VERSION_MISMATCH, STATUS_NOT_LEADER, STATUS_OK,
    STATUS_RETRYABLE,
};
use wkcore::tag::rpc::{self, HandleError, NodeAuthority};
use wkcore::tag::TagParts;

use super::cache::wk_tag_cache;
use super::leader::wk_tag_leader;
use super::status::{
    decode_status_of, status_of, WK_STATUS_TAG_INVALID_CONFIG, WK_STATUS_TAG_INVALID_FRAME,
    WK_STATUS_TAG_UNKNOWN_OP,
};
use super::types::{
    array_out, bytes_arg, check_view_out, in_ref, key_arg, parts_arg, wk_tag_in, wk_tag_info,
    wk_tag_partition_in, wk_tag_request, wk_tag_response, wk_tag_response_head, wk_tag_slot_ref,
    WK_TAG_FRAME_MAX, WK_TAG_INFO_MIN_SIZE, WK_TAG_OP_GET, WK_TAG_OP_UPDATE,
    WK_TAG_RPC_RESULT_NONE, WK_TAG_RPC_RESULT_OTHER, WK_TAG_RPC_RESULT_TAG_NOT_CURRENT,
    WK_TAG_RPC_RESULT_TAG_VERSION_MISMATCH, WK_TAG_RPC_STATUS_NOT_LEADER, WK_TAG_RPC_STATUS_OK,
    WK_TAG_RPC_STATUS_OTHER, WK_TAG_RPC_STATUS_RETRYABLE,
};
use super::view::{give_view, wk_tag_view};
use crate::coord::ledger::tri;
use crate::handle::{
    check_out, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable, Guarded,
};
use crate::metrics::wk_str;
use crate::panic::ffi_panic_boundary;
use crate::status::{
    wk_status, WK_STATUS_BUFFER_TOO_SMALL, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NOT_FOUND,
    WK_STATUS_NULL_ARGUMENT, WK_STATUS_OK,
};

/// The frame at `(bytes, len)` as a slice, refusing NULL and over-long input unread.
///
/// # Safety
///
/// `bytes` NULL or `len` readable bytes for `'a`.
unsafe fn frame_arg<'a>(bytes: *const u8, len: usize) -> Result<&'a [u8], wk_status> {
    if bytes.is_null() {
        return Err(WK_STATUS_NULL_ARGUMENT);
    }
    if len > WK_TAG_FRAME_MAX {
        return Err(WK_STATUS_TAG_INVALID_FRAME);
    }
    // SAFETY: non-NULL, bounded, readable per the contract.
    Ok(unsafe { std::slice::from_raw_parts(bytes, len) })
}

/// Checks an output buffer `(buf, cap)` and its `len_out` before anything runs.
fn check_buf(buf: *mut u8, cap: usize, len_out: *mut usize) -> Result<(), wk_status> {
    crate::handle::check_ptr(len_out.cast_const())?;
    if buf.is_null() && cap != 0 {
        return Err(WK_STATUS_NULL_ARGUMENT);
    }
    Ok(())
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

/// The channel leader's service-44 handler (upstream's `HandleRPC` after the transport): decodes
/// the request in `frame` (`len` bytes), answers it by upstream's rules against this node's
/// `leader` (a `get` reads the body by key) and `cache` (an `update` stores the request's tag as
/// a follower would), with `channel_leader` the channel's leader as the host's channel log knows
/// it (0: none, answered `retryable` + `tag_not_current`; another node: `not_leader` with its id),
/// and encodes the response into `buf[0..cap]`, its length to `*len_out`.
///
/// `WK_STATUS_TAG_UNKNOWN_OP` for an op other than `get`, `update` or empty (upstream returns an
/// error, no response); a decode status for a frame that does not decode;
/// `WK_STATUS_TAG_INVALID_CONFIG` when `leader` and `cache` serve different nodes. Nothing is
/// handled then. `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length: the request was handled
/// (an `update`'s store, a `get`'s access stamp), and handling it again with a larger buffer is
/// idempotent (the same tag stores over itself).
///
/// # Safety
///
/// `leader` and `cache` must be NULL or live handles; `frame` NULL or `len` readable bytes;
/// `buf` NULL (only with `cap` 0) or `cap` writable bytes; `len_out` NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wk_tag_rpc_handle(
    leader: *const wk_tag_leader,
    cache: *const wk_tag_cache,
    frame: *const u8,
    len: usize,
    channel_leader: u64,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(frame, len) });
        tri!(check_buf(buf, cap, len_out));
        if l.leader.local_node_id() != c.cache.local_node_id() {
            return WK_STATUS_TAG_INVALID_CONFIG;
        }
        let request = tri!(delivery_tag::decode_request(frame).map_err(|e| decode_status_of(&e)));
        let authority = NodeAuthority {
            leader: &l.leader,
            cache: &c.cache,
        };
        let local = l.leader.local_node_id();
        let response = match rpc::handle(&request, channel_leader, local, &authority) {
            Ok(response) => response,
            Err(HandleError::UnknownOp(_)) => return WK_STATUS_TAG_UNKNOWN_OP,
        };
        let encoded = delivery_tag::encode_response(&response);
        // SAFETY: checked by `check_buf`; writable per this function's contract.
        unsafe { write_frame(&encoded, buf, cap, len_out) }
    }
}

/// The head of `response`.
fn head_of(response: &TagResponse) -> wk_tag_response_head {
    let status = match &response.status[..] {
        s if s == STATUS_OK => WK_TAG_RPC_STATUS_OK,
        s if s == STATUS_NOT_LEADER => WK_TAG_RPC_STATUS_NOT_LEADER,
        s if s == STATUS_RETRYABLE => WK_TAG_RPC_STATUS_RETRYABLE,
        _ => WK_TAG_RPC_STATUS_OTHER,
    };
    let result = match &response.result[..] {
        [] => WK_TAG_RPC_RESULT_NONE,
        r if r == RESULT_TAG_NOT_CURRENT => WK_TAG_RPC_RESULT_TAG_NOT_CURRENT,
        r if r == RESULT_TAG_VERSION_MISMATCH => WK_TAG_RPC_RESULT_TAG_VERSION_MISMATCH,
        _ => WK_TAG_RPC_RESULT_OTHER,
    };
    wk_tag_response_head {
        leader_id: response.leader_id,
        status,
        result,
    }
}

/// The follower side of a fetch: decodes the response in `frame` (`len` bytes) and writes its
/// head (status, result, leader id) to `*head_out`. An `ok` response's tag is stored as
/// `wk_tag_cache_store` does (its local partition; `*stored_out` 1 when stored, 0 when refused
/// as stale; `*view_out`, when not NULL, the stored or current body). Any other status stores
/// nothing (`*stored_out` 0, `*view_out` NULL): the host retries, or follows one `not_leader` to
/// `leader_id` when that is neither 0 nor the node it called (upstream's client).
/// `WK_STATUS_TAG_INVALID_UTF8` for an `ok` tag whose keys are not UTF-8 (nothing stored); a
/// decode status for a frame that does not decode.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `frame` NULL or `len` readable bytes; `head_out` and
/// `stored_out` NULL or writable; `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_store_response(
    cache: *const wk_tag_cache,
    frame: *const u8,
    len: usize,
    head_out: *mut wk_tag_response_head,
    stored_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(frame, len) });
        let head_out = check_out!(head_out);
        let stored_out = check_out!(stored_out);
        tri!(check_view_out(view_out));
        let response = tri!(delivery_tag::decode_response(frame).map_err(|e| decode_status_of(&e)));
        let head = head_of(&response);
        let (stored, body) = if head.status == WK_TAG_RPC_STATUS_OK {
            let parts = tri!(rpc::parts_from_wire(&response.tag).map_err(status_of));
            let outcome = c.cache.store(&parts);
            (u8::from(outcome.is_stored()), Some(outcome.tag().clone()))
        } else {
            (0, None)
        };
        // SAFETY: all checked; writable per this function's contract.
        unsafe {
            write_out(head_out, head);
            write_out(stored_out, stored);
            give_view(view_out, body);
        }
        WK_STATUS_OK
    }
}

/// The wire form of `parts`.
fn wire_of(parts: &TagParts) -> WireTag {
    WireTag {
        key: parts.key.as_bytes().to_vec(),
        channel_key: parts.channel_key.as_bytes().to_vec(),
        tag_version: parts.tag_version,
        subscriber_mutation_version: parts.subscriber_mutation_version,
        source_channel_key: parts.source_channel_key.as_bytes().to_vec(),
        source_subscriber_mutation_version: parts.source_subscriber_mutation_version,
        topology: WireTopology {
            hash_slot_table_version: parts.topology.hash_slot_table_version,
            refs: parts
                .topology
                .refs
                .iter()
                .map(|r| WireSlotRef {
                    slot_id: r.slot_id,
                    leader_node_id: r.leader_node_id,
                    config_epoch: r.config_epoch,
                    balance_version: r.balance_version,
                })
                .collect(),
        },
        partitions: parts
            .partitions
            .iter()
            .map(|p| WirePartition {
                node_id: p.node_id,
                uids: p.uids.iter().map(<[u8]>::to_vec).collect(),
            })
            .collect(),
        created_at_unix_ns: parts.created_at,
        last_access_unix_ns: parts.last_access,
    }
}

/// The request `r` names, with `tag`.
///
/// # Safety
///
/// Every string of `r` must be readable for its length.
unsafe fn request_of(r: &wk_tag_request, tag: WireTag) -> Result<TagRequest, wk_status> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok(TagRequest {
            op: bytes_arg(r.op)?.to_vec(),
            channel_id: bytes_arg(r.channel_id)?.to_vec(),
            channel_type: r.channel_type,
            tag_key: key_arg(r.tag_key)?.as_bytes().to_vec(),
            tag_version: r.tag_version,
            target_node_id: r.target_node_id,
            tag,
        })
    }
}

/// Encodes a service-44 request (upstream's `encodeDeliveryTagRequest`) of `request`'s fields
/// and `tag` (NULL: the empty tag, what a `get` sends; an `update` sends the full tag) into
/// `buf[0..cap]`, its length to `*len_out`. The tag key and the tag's keys must be UTF-8; every
/// partition is encoded. `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length.
///
/// # Safety
///
/// `request` NULL or readable (strings for their lengths); `tag` NULL or readable (strings and
/// arrays for their lengths); `buf` NULL (only with `cap` 0) or `cap` writable bytes; `len_out`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_request_encode(
    request: *const wk_tag_request,
    tag: *const wk_tag_in,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let r = tri!(unsafe { in_ref(request) });
        tri!(check_buf(buf, cap, len_out));
        let wire = if tag.is_null() {
            WireTag::default()
        } else {
            // SAFETY: forwarded from this function's contract.
            let t = tri!(unsafe { in_ref(tag) });
            // SAFETY: forwarded from this function's contract.
            wire_of(&tri!(unsafe { parts_arg(t, None) }))
        };
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { request_of(r, wire) });
        let encoded = delivery_tag::encode_request(&request);
        // SAFETY: checked by `check_buf`; writable per this function's contract.
        unsafe { write_frame(&encoded, buf, cap, len_out) }
    }
}

/// As `wk_tag_request_encode`, with the tag of `view` (NULL: the empty tag): what a leader sends
/// its followers after a build (`update`, every partition; each follower keeps its own).
///
/// # Safety
///
/// As `wk_tag_request_encode`; `view` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_request_encode_view(
    request: *const wk_tag_request,
    view: *const wk_tag_view,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let r = tri!(unsafe { in_ref(request) });
        tri!(check_buf(buf, cap, len_out));
        let wire = if view.is_null() {
            WireTag::default()
        } else {
            rpc::wire_from_tag(try_ref!(wk_tag_view, view))
        };
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { request_of(r, wire) });
        let encoded = delivery_tag::encode_request(&request);
        // SAFETY: checked by `check_buf`; writable per this function's contract.
        unsafe { write_frame(&encoded, buf, cap, len_out) }
    }
}

/// Encodes a service-44 response (upstream's `encodeDeliveryTagResponse`) of `response`'s fields
/// and `tag` (NULL: the empty tag) into `buf[0..cap]`, its length to `*len_out`, as
/// `wk_tag_request_encode`. The tag's keys must be UTF-8; status and result are any bytes.
///
/// # Safety
///
/// `response` NULL or readable (strings for their lengths); `tag` NULL or readable (strings and
/// arrays for their lengths); `buf` NULL (only with `cap` 0) or `cap` writable bytes; `len_out`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_response_encode(
    response: *const wk_tag_response,
    tag: *const wk_tag_in,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let r = tri!(unsafe { in_ref(response) });
        tri!(check_buf(buf, cap, len_out));
        let wire = if tag.is_null() {
            WireTag::default()
        } else {
            // SAFETY: forwarded from this function's contract.
            let t = tri!(unsafe { in_ref(tag) });
            // SAFETY: forwarded from this function's contract.
            wire_of(&tri!(unsafe { parts_arg(t, None) }))
        };
        // SAFETY: forwarded from this function's contract.
        let (status, result) = tri!(unsafe {
            bytes_arg(r.status).and_then(|s| Ok((s, bytes_arg(r.result)?)))
        });
        let response = TagResponse {
            status: status.to_vec(),
            leader_id: r.leader_id,
            result: result.to_vec(),
            tag: wire,
        };
        let encoded = delivery_tag::encode_response(&response);
        // SAFETY: checked by `check_buf`; writable per this function's contract.
        unsafe { write_frame(&encoded, buf, cap, len_out) }
    }
}

/// Opaque, `Arc`-owned handle to one decoded service-44 frame (a request or a response): its
/// fields, tag and partitions, read through `wk_tag_frame_*`. Every string is a copy the frame
/// holds (any bytes, as on the wire), valid until the frame's last handle is freed.
#[allow(non_camel_case_types)]
pub struct wk_tag_frame {
    _private: [u8; 0],
}

/// Which frame a handle holds.
pub(crate) enum Decoded {
    Request(TagRequest),
    Response(TagResponse),
}

/// A decoded frame with the C arrays its accessors lend.
pub(crate) struct Frame {
    decoded: Decoded,
    refs: Vec<wk_tag_slot_ref>,
    /// Per partition, its UIDs as `wk_str`s pointing into the decoded tag's buffers.
    uids: Vec<Vec<wk_str>>,
}

// SAFETY: the `wk_str`s point into buffers of `decoded`, owned by the frame and never mutated
// after construction; the frame is read-only, so sharing it across threads is sharing immutable
// bytes.
unsafe impl Send for Frame {}
// SAFETY: as for `Send`.
unsafe impl Sync for Frame {}

impl Castable for wk_tag_frame {
    type RustType = Frame;
    const MAGIC: u64 = 0x776b_5447_4652_0003; // "wkTGFR" + ABI generation
}

impl Frame {
    fn new(decoded: Decoded) -> Self {
        let tag = match &decoded {
            Decoded::Request(r) => &r.tag,
            Decoded::Response(r) => &r.tag,
        };
        let refs = tag
            .topology
            .refs
            .iter()
            .map(|r| wk_tag_slot_ref {
                slot_id: r.slot_id,
                leader_node_id: r.leader_node_id,
                config_epoch: r.config_epoch,
                balance_version: r.balance_version,
            })
            .collect();
        let uids = tag
            .partitions
            .iter()
            .map(|p| p.uids.iter().map(|u| bytes_out(u)).collect())
            .collect();
        Self {
            decoded,
            refs,
            uids,
        }
    }

    fn tag(&self) -> &WireTag {
        match &self.decoded {
            Decoded::Request(r) => &r.tag,
            Decoded::Response(r) => &r.tag,
        }
    }

    fn request(&self) -> Option<&TagRequest> {
        match &self.decoded {
            Decoded::Request(r) => Some(r),
            Decoded::Response(_) => None,
        }
    }
}

/// Bytes for C: NULL when empty.
fn bytes_out(b: &[u8]) -> wk_str {
    wk_str {
        ptr: if b.is_empty() {
            std::ptr::null()
        } else {
            b.as_ptr()
        },
        len: b.len(),
    }
}

/// A new frame handle for the host.
fn frame_raw(frame: Frame) -> *mut wk_tag_frame {
    wk_tag_frame::into_raw(Arc::new(Guarded::new::<wk_tag_frame>(frame)))
}

/// Decodes a request frame (`len` bytes at `bytes`, at most `WK_TAG_FRAME_MAX`) into
/// `*frame_out`. A decode status (each *is* `WK_STATUS_TAG_INVALID_FRAME`) for anything but a
/// whole request; the decoder allocates no more than the frame's size.
///
/// # Safety
///
/// `bytes` NULL or `len` readable bytes; `frame_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_decode_request(
    bytes: *const u8,
    len: usize,
    frame_out: *mut *mut wk_tag_frame,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(bytes, len) });
        let frame_out = check_out!(frame_out);
        let request = tri!(delivery_tag::decode_request(frame).map_err(|e| decode_status_of(&e)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(frame_out, frame_raw(Frame::new(Decoded::Request(request)))) };
        WK_STATUS_OK
    }
}

/// Decodes a response frame into `*frame_out`, as `wk_tag_frame_decode_request`.
///
/// # Safety
///
/// As `wk_tag_frame_decode_request`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_decode_response(
    bytes: *const u8,
    len: usize,
    frame_out: *mut *mut wk_tag_frame,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let frame = tri!(unsafe { frame_arg(bytes, len) });
        let frame_out = check_out!(frame_out);
        let response = tri!(delivery_tag::decode_response(frame).map_err(|e| decode_status_of(&e)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(frame_out, frame_raw(Frame::new(Decoded::Response(response)))) };
        WK_STATUS_OK
    }
}

/// Writes a request frame's fields to `*request_out` (strings pointing into the frame);
/// `WK_STATUS_INVALID_ARGUMENT` for a response frame.
///
/// # Safety
///
/// `frame` must be NULL or a live handle; `request_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_request(
    frame: *const wk_tag_frame,
    request_out: *mut wk_tag_request,
) -> wk_status {
    ffi_panic_boundary! {
        let f = try_ref!(wk_tag_frame, frame);
        let request_out = check_out!(request_out);
        let Some(r) = f.request() else {
            return WK_STATUS_INVALID_ARGUMENT;
        };
        let out = wk_tag_request {
            op: bytes_out(&r.op),
            channel_id: bytes_out(&r.channel_id),
            channel_type: r.channel_type,
            tag_key: bytes_out(&r.tag_key),
            tag_version: r.tag_version,
            target_node_id: r.target_node_id,
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(request_out, out) };
        WK_STATUS_OK
    }
}

/// Writes a response frame's fields to `*response_out` (strings pointing into the frame);
/// `WK_STATUS_INVALID_ARGUMENT` for a request frame.
///
/// # Safety
///
/// `frame` must be NULL or a live handle; `response_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_response(
    frame: *const wk_tag_frame,
    response_out: *mut wk_tag_response,
) -> wk_status {
    ffi_panic_boundary! {
        let f = try_ref!(wk_tag_frame, frame);
        let response_out = check_out!(response_out);
        let Decoded::Response(r) = &f.decoded else {
            return WK_STATUS_INVALID_ARGUMENT;
        };
        let out = wk_tag_response {
            status: bytes_out(&r.status),
            leader_id: r.leader_id,
            result: bytes_out(&r.result),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(response_out, out) };
        WK_STATUS_OK
    }
}

/// Writes the frame's tag to `*info_out` as a `wk_tag_info` (the first `info_size` bytes, at
/// least `WK_TAG_INFO_MIN_SIZE`): its strings are the wire's bytes (not checked for UTF-8), its
/// refs and partitions the frame's; valid while the frame lives.
///
/// # Safety
///
/// `frame` must be NULL or a live handle; `info_out` NULL or writable for `info_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_tag(
    frame: *const wk_tag_frame,
    info_out: *mut wk_tag_info,
    info_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let f = try_ref!(wk_tag_frame, frame);
        let info_out = check_out!(info_out);
        let t = f.tag();
        let info = wk_tag_info {
            key: bytes_out(&t.key),
            channel_key: bytes_out(&t.channel_key),
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            source_channel_key: bytes_out(&t.source_channel_key),
            source_subscriber_mutation_version: t.source_subscriber_mutation_version,
            hash_slot_table_version: t.topology.hash_slot_table_version,
            refs: array_out(&f.refs),
            ref_count: f.refs.len(),
            partition_count: t.partitions.len(),
            uid_count: t.partitions.iter().map(|p| p.uids.len()).sum(),
            created_at_ns: t.created_at_unix_ns,
            last_access_ns: t.last_access_unix_ns,
        };
        // SAFETY: checked by `check_out!`; `info_size` writable bytes per the contract.
        unsafe { write_sized(info_out, info_size, WK_TAG_INFO_MIN_SIZE, info) }
    }
}

/// Writes partition `index` of the frame's tag to `*partition_out` (`WK_STATUS_NOT_FOUND` past
/// the last): its node and UIDs as the input form (`wk_tag_partition_in`), so it can be passed
/// on; the UIDs point into the frame.
///
/// # Safety
///
/// `frame` must be NULL or a live handle; `partition_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_partition(
    frame: *const wk_tag_frame,
    index: usize,
    partition_out: *mut wk_tag_partition_in,
) -> wk_status {
    ffi_panic_boundary! {
        let f = try_ref!(wk_tag_frame, frame);
        let partition_out = check_out!(partition_out);
        let (Some(p), Some(uids)) = (f.tag().partitions.get(index), f.uids.get(index)) else {
            return WK_STATUS_NOT_FOUND;
        };
        let out = wk_tag_partition_in {
            node_id: p.node_id,
            uids: array_out(uids),
            uid_count: uids.len(),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(partition_out, out) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*frame_out` is a handle to the same frame, freed separately (an authority
/// callback that keeps the request past its call clones it).
///
/// # Safety
///
/// `frame` must be NULL or a live handle; `frame_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_clone(
    frame: *const wk_tag_frame,
    frame_out: *mut *mut wk_tag_frame,
) -> wk_status {
    ffi_panic_boundary! {
        let frame_out = check_out!(frame_out);
        let arc = try_clone!(wk_tag_frame, frame);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(frame_out, wk_tag_frame::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `frame` must be NULL or a live handle not used again after this call (nor any pointer its
/// accessors gave, unless another handle of it lives).
#[no_mangle]
pub unsafe extern "C" fn wk_tag_frame_free(frame: *mut wk_tag_frame) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_frame::free(frame) }
    }
}

/// A host's authority for `wk_tag_rpc_handle_with`: answers the request `request` (a request
/// frame, borrowed for the call; clone it to keep it) for `op` (`WK_TAG_OP_GET` or
/// `WK_TAG_OP_UPDATE`) by pointing `*response_out` at an encoded response frame
/// (`wk_tag_response_encode`) of `*response_len_out` bytes that stays valid until the handler
/// returns. `WK_STATUS_OK`, or any other status, which the handler returns as is (upstream's
/// authority error). Called synchronously, at most once, on the handler's thread; it must not
/// unwind.
pub type wk_tag_authority_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        op: u8,
        request: *const wk_tag_frame,
        response_out: *mut *const u8,
        response_len_out: *mut usize,
    ) -> wk_status,
>;

/// The host's authority behind `wk_tag_rpc_handle_with`.
struct HostAuthority {
    call: unsafe extern "C" fn(
        *mut c_void,
        u8,
        *const wk_tag_frame,
        *mut *const u8,
        *mut usize,
    ) -> wk_status,
    user_data: *mut c_void,
    request: *const wk_tag_frame,
    called: Cell<u8>,
    failed: Cell<Option<wk_status>>,
}

impl HostAuthority {
    fn ask(&self, op: u8) -> TagResponse {
        self.called.set(op);
        let (mut ptr, mut len) = (std::ptr::null::<u8>(), 0usize);
        // SAFETY: the host's callback with the host's `user_data` and a live request frame
        // (`wk_tag_rpc_handle_with`'s contract); a C callback cannot unwind into Rust.
        let status = unsafe { (self.call)(self.user_data, op, self.request, &mut ptr, &mut len) };
        if status != WK_STATUS_OK {
            self.failed.set(Some(status));
            return TagResponse::default();
        }
        // SAFETY: the callback's contract: `len` readable bytes at `ptr` until the handler
        // returns.
        let decoded = unsafe { frame_arg(ptr, len) }
            .and_then(|f| delivery_tag::decode_response(f).map_err(|e| decode_status_of(&e)));
        match decoded {
            Ok(r) => r,
            Err(status) => {
                self.failed.set(Some(status));
                TagResponse::default()
            }
        }
    }
}

impl rpc::TagAuthority for HostAuthority {
    fn get(&self, _: &TagRequest) -> TagResponse {
        self.ask(WK_TAG_OP_GET)
    }
    fn update(&self, _: &TagRequest) -> TagResponse {
        self.ask(WK_TAG_OP_UPDATE)
    }
}

/// Upstream's service-44 handler with the host's own authority: decodes the request in `frame`,
/// routes it (a `channel_leader` of 0: `retryable` + `tag_not_current`; another node than
/// `local_node_id`: `not_leader` with its id; neither calls `authority`), calls `authority` for
/// `get` (or an empty op) and `update` (`WK_STATUS_TAG_UNKNOWN_OP` for any other op, not called),
/// keeps only the target node's partition (a synthetic empty one when it has none), normalizes
/// the status (spec steps 6 and 7) and encodes the response into `buf[0..cap]`, its length to
/// `*len_out`. `*called_out` (when not NULL) is the op the authority was called for, or 0.
/// `WK_STATUS_BUFFER_TOO_SMALL` writes the needed length (the authority was called).
///
/// # Safety
///
/// `frame` NULL or `len` readable bytes; `authority` callable with `user_data` as its contract
/// says; `called_out` NULL or writable; `buf` NULL (only with `cap` 0) or `cap` writable bytes;
/// `len_out` NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wk_tag_rpc_handle_with(
    frame: *const u8,
    len: usize,
    channel_leader: u64,
    local_node_id: u64,
    authority: wk_tag_authority_fn,
    user_data: *mut c_void,
    called_out: *mut u8,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let bytes = tri!(unsafe { frame_arg(frame, len) });
        let Some(call) = authority else {
            return WK_STATUS_NULL_ARGUMENT;
        };
        tri!(check_view_out(called_out));
        tri!(check_buf(buf, cap, len_out));
        let request = tri!(delivery_tag::decode_request(bytes).map_err(|e| decode_status_of(&e)));
        let held = Arc::new(Guarded::new::<wk_tag_frame>(Frame::new(Decoded::Request(request))));
        let host = HostAuthority {
            call,
            user_data,
            request: Arc::as_ptr(&held).cast(),
            called: Cell::new(0),
            failed: Cell::new(None),
        };
        let Some(request) = held.request() else {
            return WK_STATUS_INVALID_ARGUMENT;
        };
        let handled = rpc::handle(request, channel_leader, local_node_id, &host);
        if !called_out.is_null() {
            // SAFETY: checked aligned (a byte) and non-NULL; writable per the contract.
            unsafe { write_out(called_out, host.called.get()) };
        }
        let response = match handled {
            Ok(response) => response,
            Err(HandleError::UnknownOp(_)) => return WK_STATUS_TAG_UNKNOWN_OP,
        };
        if let Some(status) = host.failed.get() {
            return status;
        }
        let encoded = delivery_tag::encode_response(&response);
        // SAFETY: checked by `check_buf`; writable per this function's contract.
        unsafe { write_frame(&encoded, buf, cap, len_out) }
    }
}

/// The client's redirect rule (upstream's `GetDeliveryTag` / `UpdateDeliveryTag`): writes to
/// `*next_out` the node to call next for a response with `status` and `leader_id` from
/// `called_node_id` — the leader of a `not_leader` when it is neither 0 nor the node called —
/// or 0 (no redirect).
///
/// # Safety
///
/// `status` readable for its length; `next_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_rpc_redirect(
    called_node_id: u64,
    status: wk_str,
    leader_id: u64,
    next_out: *mut u64,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let status = tri!(unsafe { bytes_arg(status) });
        let next_out = check_out!(next_out);
        let response = TagResponse {
            status: status.to_vec(),
            leader_id,
            ..TagResponse::default()
        };
        let next = rpc::redirect(called_node_id, &response).unwrap_or(0);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(next_out, next) };
        WK_STATUS_OK
    }
}
