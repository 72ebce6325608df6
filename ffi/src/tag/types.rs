//! The delivery-tag ABI's constants and structs, and their conversions: strings (`wk_str`,
//! checked for UTF-8 where they are keys), slot refs (the core's own layout, borrowed without a
//! copy), partitions, tags, look-up requests and the C forms of what the core reports.

use std::sync::Arc;

use wkcore::clock::{Clock, ManualClock};
use wkcore::tag::{
    CleanupPage, DeliveryTag, LookupRequest, NodePartition, PartitionTopology, SlotAuthorityRef,
    TagCounts, TagParts, TopologyView, UnixClock,
};

use super::status::WK_STATUS_TAG_INVALID_UTF8;
use crate::handle::check_ptr;
use crate::metrics::wk_str;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT};

/// The longest key (channel, tag, source), key prefix, UID, op or channel id, in bytes.
pub const WK_TAG_STR_MAX: usize = 1 << 16;
/// The most slot refs a topology carries.
pub const WK_TAG_REFS_MAX: usize = 1 << 16;
/// The most partitions a tag carries.
pub const WK_TAG_PARTITIONS_MAX: usize = 1 << 16;
/// The most UIDs one partition, one mutation call or one partitioning build takes.
pub const WK_TAG_UIDS_MAX: usize = 1 << 25;
/// The most entries of a slot table (`slot_nodes`) a partitioning build takes.
pub const WK_TAG_SLOTS_MAX: usize = 1 << 20;
/// The most look-ups one `wk_tag_cache_lookup_batch` takes.
pub const WK_TAG_BATCH_MAX: usize = 4096;
/// The most channels (cache) or bodies (leader) one cleanup page visits.
pub const WK_TAG_CLEANUP_LIMIT_MAX: u32 = 4096;
/// The longest service-44 frame the decoders read (longer ones: `WK_STATUS_TAG_INVALID_FRAME`,
/// unread).
pub const WK_TAG_FRAME_MAX: usize = 1 << 30;
/// Node RPC service id of the delivery-tag RPC.
pub const WK_TAG_RPC_SERVICE_ID: u8 = 44;

/// `clock` of the options: wall-clock unix nanoseconds (production).
pub const WK_TAG_CLOCK_UNIX: u32 = 0;
/// `clock` of the options: a manual clock starting at `manual_start_ns`, moved only by
/// `wk_tag_{cache,leader}_advance_clock` (tests).
pub const WK_TAG_CLOCK_MANUAL: u32 = 1;

/// Look-up reason: the request matches the current tag.
pub const WK_TAG_LOOKUP_HIT: u8 = 0;
/// Look-up reason: no tag is current for the channel.
pub const WK_TAG_LOOKUP_MISSING_REF: u8 = 1;
/// Look-up reason: the reference has no body (upstream parity; never reported here).
pub const WK_TAG_LOOKUP_MISSING_TAG: u8 = 2;
/// Look-up reason: the request names another incarnation.
pub const WK_TAG_LOOKUP_TAG_KEY_MISMATCH: u8 = 3;
/// Look-up reason: the request is older than the current tag.
pub const WK_TAG_LOOKUP_STALE_REQUEST: u8 = 4;
/// Look-up reason: the request is newer than the current tag (fetch it).
pub const WK_TAG_LOOKUP_NEWER_REQUEST: u8 = 5;
/// Look-up reason: the request was built against another topology (fetch again).
pub const WK_TAG_LOOKUP_TOPOLOGY_MISMATCH: u8 = 6;

/// `*outcome_out` of `wk_tag_mutation_commit`: the tag was updated (same key, version + 1).
pub const WK_TAG_MUTATION_APPLIED: u8 = 1;
/// `*outcome_out` of `wk_tag_mutation_commit`: the channel has no tag; nothing was recorded.
pub const WK_TAG_MUTATION_NO_TAG: u8 = 2;
/// `*outcome_out` of `wk_tag_mutation_commit`: the tag already carries this store version or a
/// later one; unchanged.
pub const WK_TAG_MUTATION_ALREADY_CURRENT: u8 = 3;

/// `wk_tag_response_head.status`: a status other than the three below (carried as is).
pub const WK_TAG_RPC_STATUS_OTHER: u8 = 0;
/// `wk_tag_response_head.status`: `ok`.
pub const WK_TAG_RPC_STATUS_OK: u8 = 1;
/// `wk_tag_response_head.status`: `not_leader` (`leader_id` names the leader it knows, or 0).
pub const WK_TAG_RPC_STATUS_NOT_LEADER: u8 = 2;
/// `wk_tag_response_head.status`: `retryable`.
pub const WK_TAG_RPC_STATUS_RETRYABLE: u8 = 3;
/// `wk_tag_response_head.result`: empty.
pub const WK_TAG_RPC_RESULT_NONE: u8 = 0;
/// `wk_tag_response_head.result`: `tag_not_current`.
pub const WK_TAG_RPC_RESULT_TAG_NOT_CURRENT: u8 = 1;
/// `wk_tag_response_head.result`: `tag_version_mismatch`.
pub const WK_TAG_RPC_RESULT_TAG_VERSION_MISMATCH: u8 = 2;
/// `wk_tag_response_head.result`: another, non-empty result.
pub const WK_TAG_RPC_RESULT_OTHER: u8 = 3;

/// `op` of an authority callback and `*called_out` of `wk_tag_rpc_handle_with`: a `get` (or an
/// empty op).
pub const WK_TAG_OP_GET: u8 = 1;
/// `op` of an authority callback and `*called_out` of `wk_tag_rpc_handle_with`: an `update`.
pub const WK_TAG_OP_UPDATE: u8 = 2;

/// The size of `wk_tag_info`'s first release (`wk_tag_view_info` refuses less).
pub const WK_TAG_INFO_MIN_SIZE: usize = 128;
/// The size of `wk_tag_counts`' first release (`wk_tag_*_counts` refuse less).
pub const WK_TAG_COUNTS_MIN_SIZE: usize = 112;

// cbindgen writes only literal constants; these pin them to the core's.
const _: () = {
    assert!(WK_TAG_CLEANUP_LIMIT_MAX as usize == wkcore::tag::CLEANUP_LIMIT_MAX);
    assert!(WK_TAG_RPC_SERVICE_ID == wkcore::codec::delivery_tag::SERVICE_ID);
    assert!(WK_TAG_LOOKUP_HIT == wkcore::tag::LookupReason::Hit as u8);
    assert!(WK_TAG_LOOKUP_MISSING_REF == wkcore::tag::LookupReason::MissingRef as u8);
    assert!(WK_TAG_LOOKUP_MISSING_TAG == wkcore::tag::LookupReason::MissingTag as u8);
    assert!(WK_TAG_LOOKUP_TAG_KEY_MISMATCH == wkcore::tag::LookupReason::TagKeyMismatch as u8);
    assert!(WK_TAG_LOOKUP_STALE_REQUEST == wkcore::tag::LookupReason::StaleRequest as u8);
    assert!(WK_TAG_LOOKUP_NEWER_REQUEST == wkcore::tag::LookupReason::NewerRequest as u8);
    assert!(WK_TAG_LOOKUP_TOPOLOGY_MISMATCH == wkcore::tag::LookupReason::TopologyMismatch as u8);
    // `wk_tag_slot_ref` is the core's `SlotAuthorityRef` (both `repr(C)`): arrays of one are
    // read as arrays of the other.
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<wk_tag_slot_ref>() == size_of::<SlotAuthorityRef>());
    assert!(align_of::<wk_tag_slot_ref>() == align_of::<SlotAuthorityRef>());
    assert!(offset_of!(wk_tag_slot_ref, slot_id) == offset_of!(SlotAuthorityRef, slot_id));
    assert!(
        offset_of!(wk_tag_slot_ref, leader_node_id) == offset_of!(SlotAuthorityRef, leader_node_id)
    );
    assert!(
        offset_of!(wk_tag_slot_ref, config_epoch) == offset_of!(SlotAuthorityRef, config_epoch)
    );
    assert!(
        offset_of!(wk_tag_slot_ref, balance_version)
            == offset_of!(SlotAuthorityRef, balance_version)
    );
};
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::size_of;
    assert!(size_of::<wk_tag_slot_ref>() == 32);
    assert!(size_of::<wk_tag_cache_options>() == 40);
    assert!(size_of::<wk_tag_leader_options>() == 56);
    assert!(size_of::<wk_tag_partition_in>() == 24);
    assert!(size_of::<wk_tag_in>() == 128);
    assert!(size_of::<wk_tag_lookup_request>() == 80);
    assert!(size_of::<wk_tag_build_request>() == 96);
    assert!(size_of::<wk_tag_info>() == WK_TAG_INFO_MIN_SIZE);
    assert!(size_of::<wk_tag_partition_view>() == 40);
    assert!(size_of::<wk_tag_counts>() == WK_TAG_COUNTS_MIN_SIZE);
    assert!(size_of::<wk_tag_cleanup_page>() == 16);
    assert!(size_of::<wk_tag_request>() == 72);
    assert!(size_of::<wk_tag_response_head>() == 16);
    assert!(size_of::<wk_tag_response>() == 40);
};

/// One hash slot's authority when a tag was built: the core's `SlotAuthorityRef`, same layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_tag_slot_ref {
    /// The hash slot.
    pub slot_id: u32,
    /// Its leader node.
    pub leader_node_id: u64,
    /// Its configuration epoch.
    pub config_epoch: u64,
    /// Its balance version.
    pub balance_version: u64,
}

/// A follower cache's configuration (`wk_tag_cache_new`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_cache_options {
    /// `sizeof(wk_tag_cache_options)`; a smaller value gives `WK_STATUS_INVALID_ARGUMENT` (the
    /// struct may grow: a larger value from a newer header is accepted).
    pub struct_size: u32,
    /// The node this cache serves (non-zero, else `WK_STATUS_TAG_INVALID_CONFIG`): the only
    /// partition it keeps.
    pub local_node_id: u64,
    /// How long a body may stay idle before a cleanup reclaims it, in the clock's nanoseconds (0:
    /// never). Production: one minute.
    pub ttl_ns: u64,
    /// `WK_TAG_CLOCK_UNIX` or `WK_TAG_CLOCK_MANUAL` (else `WK_STATUS_INVALID_ARGUMENT`): the clock
    /// of creation and access stamps.
    pub clock: u32,
    /// Where a manual clock starts, unix nanoseconds (ignored for `WK_TAG_CLOCK_UNIX`).
    pub manual_start_ns: u64,
}

/// A leader side's configuration (`wk_tag_leader_new`): the cache's fields and the keys.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_leader_options {
    /// `sizeof(wk_tag_leader_options)`; smaller: `WK_STATUS_INVALID_ARGUMENT`.
    pub struct_size: u32,
    /// This node (non-zero, else `WK_STATUS_TAG_INVALID_CONFIG`).
    pub local_node_id: u64,
    /// Idle time before a cleanup reclaims a body, ns (0: never).
    pub ttl_ns: u64,
    /// `WK_TAG_CLOCK_UNIX` or `WK_TAG_CLOCK_MANUAL`.
    pub clock: u32,
    /// Where a manual clock starts, unix nanoseconds.
    pub manual_start_ns: u64,
    /// Empty: random keys (32 lowercase hex characters, production). Otherwise keys
    /// `<prefix>-1`, `<prefix>-2`, … (tests): UTF-8, at most `WK_TAG_STR_MAX` bytes (else
    /// `WK_STATUS_TAG_INVALID_CONFIG`).
    pub key_prefix: wk_str,
}

/// One node's share of an input tag's subscribers. UIDs are any bytes (not checked for UTF-8),
/// each at most `WK_TAG_STR_MAX`; `uids` may be NULL when `uid_count` is 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_partition_in {
    /// The node that delivers to these UIDs.
    pub node_id: u64,
    /// `uid_count` UIDs (`0..=WK_TAG_UIDS_MAX`).
    pub uids: *const wk_str,
    /// How many.
    pub uid_count: usize,
}

/// A tag as a host hands it over (`wk_tag_cache_store`, `wk_tag_request_encode`). Every string
/// and array is read during the call only. Keys are UTF-8 (else `WK_STATUS_TAG_INVALID_UTF8`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_in {
    /// The incarnation key.
    pub key: wk_str,
    /// The channel.
    pub channel_key: wk_str,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version.
    pub subscriber_mutation_version: u64,
    /// The source channel of a derived tag (empty: none).
    pub source_channel_key: wk_str,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology's hash-slot table version.
    pub hash_slot_table_version: u64,
    /// `ref_count` slot refs, in order (`0..=WK_TAG_REFS_MAX`; NULL when 0).
    pub refs: *const wk_tag_slot_ref,
    /// How many.
    pub ref_count: usize,
    /// `partition_count` partitions (`0..=WK_TAG_PARTITIONS_MAX`; NULL when 0).
    pub partitions: *const wk_tag_partition_in,
    /// How many.
    pub partition_count: usize,
    /// Creation time, unix nanoseconds (0: unset; a store stamps now).
    pub created_at_ns: i64,
    /// Last access, unix nanoseconds (0: unset).
    pub last_access_ns: i64,
}

/// What a look-up is fenced against: the reference a delivery was planned with. Read during the
/// call only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_lookup_request {
    /// The tag key (UTF-8).
    pub tag_key: wk_str,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version (0: not checked).
    pub subscriber_mutation_version: u64,
    /// The source channel (empty: not checked; UTF-8).
    pub source_channel_key: wk_str,
    /// The source's subscriber mutation version (0: not checked).
    pub source_subscriber_mutation_version: u64,
    /// The topology's hash-slot table version.
    pub hash_slot_table_version: u64,
    /// `ref_count` slot refs, in order (NULL when 0).
    pub refs: *const wk_tag_slot_ref,
    /// How many (`0..=WK_TAG_REFS_MAX`).
    pub ref_count: usize,
}

/// What a leader build materializes (`wk_tag_leader_build*`). Read during the call only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_build_request {
    /// The channel (UTF-8).
    pub channel_key: wk_str,
    /// The subscriber mutation version the subscribers were read at (the store's).
    pub subscriber_mutation_version: u64,
    /// The source channel of a derived tag (empty: none; UTF-8).
    pub source_channel_key: wk_str,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology's hash-slot table version.
    pub hash_slot_table_version: u64,
    /// `ref_count` slot refs, in order (NULL when 0).
    pub refs: *const wk_tag_slot_ref,
    /// How many (`0..=WK_TAG_REFS_MAX`).
    pub ref_count: usize,
    /// The subscribers by node (NULL when 0); must be NULL and 0 for the `_by_slot` builds.
    pub partitions: *const wk_tag_partition_in,
    /// How many (`0..=WK_TAG_PARTITIONS_MAX`).
    pub partition_count: usize,
    /// 1: a new leader incarnation (a fresh key and version 1 even if the channel has a tag);
    /// 0: reuse the key. Other values: `WK_STATUS_INVALID_ARGUMENT`. Ignored by ephemeral builds.
    pub mint_fresh_key: u8,
}

/// A tag's fields (`wk_tag_view_info`). Every pointer points into the view's body and stays
/// valid until that view is freed (other views of the same body keep it alive too). Written with
/// the caller's size (`WK_TAG_INFO_MIN_SIZE` at least), so the struct may grow.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_info {
    /// The incarnation key.
    pub key: wk_str,
    /// The channel.
    pub channel_key: wk_str,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version.
    pub subscriber_mutation_version: u64,
    /// The source channel (empty: none).
    pub source_channel_key: wk_str,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology's hash-slot table version.
    pub hash_slot_table_version: u64,
    /// The topology's slot refs, in order (NULL when none).
    pub refs: *const wk_tag_slot_ref,
    /// How many.
    pub ref_count: usize,
    /// How many partitions (`wk_tag_view_partition` reads them; a follower's tag has one).
    pub partition_count: usize,
    /// How many UIDs across the partitions.
    pub uid_count: usize,
    /// Creation time, unix nanoseconds.
    pub created_at_ns: i64,
    /// The latest exact access (store, build, fetch by key) when this call read it, unix ns.
    pub last_access_ns: i64,
}

/// One partition of a view, zero-copy (`wk_tag_view_partition`): UID `i` is the bytes
/// `bytes[ends[i-1] .. ends[i]]` (with `ends[-1]` = 0). Valid until the view is freed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_partition_view {
    /// The node that delivers to these UIDs.
    pub node_id: u64,
    /// Every UID's bytes, back to back (NULL when there are none).
    pub bytes: *const u8,
    /// Length of `bytes`.
    pub bytes_len: usize,
    /// The end offset of each UID in `bytes` (NULL when `uid_count` is 0).
    pub ends: *const u32,
    /// How many UIDs.
    pub uid_count: usize,
}

/// A cache's or leader's counts (`wk_tag_*_counts`), written with the caller's size
/// (`WK_TAG_COUNTS_MIN_SIZE` at least).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_tag_counts {
    /// Look-ups by reason, indexed by `WK_TAG_LOOKUP_*`.
    pub lookups: [u64; 7],
    /// Stores (and builds) stored.
    pub stored: u64,
    /// Stores refused as stale.
    pub stale: u64,
    /// Bodies held.
    pub tags: u64,
    /// UIDs held.
    pub uids: u64,
    /// Bodies reclaimed by cleanups.
    pub reclaimed_bodies: u64,
    /// Channel references unlinked by cleanups.
    pub reclaimed_refs: u64,
    /// Channels with a cell (cache) or bodies held by key (leader), a moment's view.
    pub entries: u64,
}

/// What one cleanup page did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_tag_cleanup_page {
    /// Channels (cache) or bodies (leader) visited.
    pub visited: u32,
    /// Bodies reclaimed.
    pub reclaimed: u32,
    /// Channel references unlinked.
    pub unlinked: u32,
    /// The page finished a pass over every entry.
    pub wrapped: bool,
}

/// A service-44 request's fields besides its tag (`wk_tag_request_encode*`). `op` and
/// `channel_id` are any bytes (the codec carries them as is); `tag_key` is UTF-8.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_request {
    /// `get`, `update` (or anything: the handler refuses other ops).
    pub op: wk_str,
    /// The channel id.
    pub channel_id: wk_str,
    /// The channel type.
    pub channel_type: u8,
    /// The tag key asked for.
    pub tag_key: wk_str,
    /// The tag version asked for (0: any).
    pub tag_version: u64,
    /// The node whose partition a `get` returns (0: every partition).
    pub target_node_id: u64,
}

/// A service-44 response's fields besides its tag (`wk_tag_response_encode`,
/// `wk_tag_frame_response`). Any bytes; the status is normally `ok`, `not_leader` or
/// `retryable`, the result empty, `tag_not_current` or `tag_version_mismatch`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_response {
    /// The status.
    pub status: wk_str,
    /// The leader the responder knows (0: none).
    pub leader_id: u64,
    /// The result.
    pub result: wk_str,
}

/// A decoded response's head (`wk_tag_cache_store_response`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct wk_tag_response_head {
    /// The leader the responder knows (the channel's leader, or a `not_leader`'s redirect).
    pub leader_id: u64,
    /// `WK_TAG_RPC_STATUS_*`.
    pub status: u8,
    /// `WK_TAG_RPC_RESULT_*`.
    pub result: u8,
}

/// Borrows an input struct: NULL → `NULL_ARGUMENT`, misaligned → `INVALID_ARGUMENT`.
///
/// # Safety
///
/// `ptr` must be NULL or point to a readable, initialised `T` for `'a`.
pub(crate) unsafe fn in_ref<'a, T>(ptr: *const T) -> Result<&'a T, wk_status> {
    check_ptr(ptr)?;
    // SAFETY: non-NULL and aligned; readable per the contract.
    Ok(unsafe { &*ptr })
}

/// An input array `(ptr, len)` of `0..=max` elements: over `max` → `INVALID_ARGUMENT` (nothing
/// read); NULL with 0 is empty; NULL with a length → `NULL_ARGUMENT`; misaligned →
/// `INVALID_ARGUMENT`.
///
/// # Safety
///
/// `ptr` must be NULL or point to `len` readable elements for `'a`.
pub(crate) unsafe fn slice_arg<'a, T>(
    ptr: *const T,
    len: usize,
    max: usize,
) -> Result<&'a [T], wk_status> {
    if len > max {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    if len == 0 {
        if !ptr.is_null() && !ptr.is_aligned() {
            return Err(WK_STATUS_INVALID_ARGUMENT);
        }
        return Ok(&[]);
    }
    check_ptr(ptr)?;
    // SAFETY: non-NULL, aligned, `len` bounded (far below `isize::MAX` bytes for every `T` used
    // here); readable per the contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The bytes of `s` (any bytes, at most `WK_TAG_STR_MAX`): over → `INVALID_ARGUMENT`; NULL with
/// a length → `NULL_ARGUMENT`.
///
/// # Safety
///
/// `s.ptr` must be NULL or point to `s.len` readable bytes for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(s: wk_str) -> Result<&'a [u8], wk_status> {
    // SAFETY: forwarded contract.
    unsafe { slice_arg(s.ptr, s.len, WK_TAG_STR_MAX) }
}

/// The key `s` names: as [`bytes_arg`], and not UTF-8 → `WK_STATUS_TAG_INVALID_UTF8`.
///
/// # Safety
///
/// As [`bytes_arg`].
pub(crate) unsafe fn key_arg<'a>(s: wk_str) -> Result<&'a str, wk_status> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { bytes_arg(s) }?;
    std::str::from_utf8(bytes).map_err(|_| WK_STATUS_TAG_INVALID_UTF8)
}

/// The slot refs at `(ptr, len)`, as the core's type (no copy).
///
/// # Safety
///
/// As [`slice_arg`].
pub(crate) unsafe fn refs_arg<'a>(
    ptr: *const wk_tag_slot_ref,
    len: usize,
) -> Result<&'a [SlotAuthorityRef], wk_status> {
    // SAFETY: forwarded contract.
    let refs = unsafe { slice_arg(ptr, len, WK_TAG_REFS_MAX) }?;
    // SAFETY: the two types have one layout (checked at compile time above), so the same memory
    // read as the core's type is the same values.
    Ok(unsafe { std::slice::from_raw_parts(refs.as_ptr().cast::<SlotAuthorityRef>(), refs.len()) })
}

/// The UIDs at `(ptr, len)` (`0..=WK_TAG_UIDS_MAX`), each checked.
///
/// # Safety
///
/// `ptr` must be NULL or point to `len` readable `wk_str`s, each readable for its length, for
/// `'a`.
pub(crate) unsafe fn uids_arg<'a>(
    ptr: *const wk_str,
    len: usize,
) -> Result<Vec<&'a [u8]>, wk_status> {
    // SAFETY: forwarded contract.
    let uids = unsafe { slice_arg(ptr, len, WK_TAG_UIDS_MAX) }?;
    // SAFETY: forwarded contract (each string readable for its length).
    uids.iter().map(|&u| unsafe { bytes_arg(u) }).collect()
}

/// Checks every partition at `(ptr, len)` and builds those `keep` selects (`None`: all; `Some(n)`:
/// only the first of node `n`, what a follower keeps), in order.
///
/// # Safety
///
/// `ptr` must be NULL or point to `len` readable partitions whose arrays are readable as
/// [`uids_arg`] says.
pub(crate) unsafe fn partitions_arg(
    ptr: *const wk_tag_partition_in,
    len: usize,
    keep: Option<u64>,
) -> Result<Vec<NodePartition>, wk_status> {
    // SAFETY: forwarded contract.
    let parts = unsafe { slice_arg(ptr, len, WK_TAG_PARTITIONS_MAX) }?;
    let mut checked = Vec::with_capacity(if keep.is_some() { 1 } else { parts.len() });
    for p in parts {
        // SAFETY: forwarded contract.
        let uids = unsafe { uids_arg(p.uids, p.uid_count) }?;
        let wanted = match keep {
            None => true,
            Some(node) => p.node_id == node && checked.is_empty(),
        };
        if wanted {
            checked.push((p.node_id, uids));
        }
    }
    checked
        .into_iter()
        .map(|(node_id, uids)| NodePartition::new(node_id, uids).map_err(super::status::status_of))
        .collect()
}

/// The tag `t` describes, with the partitions `keep` selects (see [`partitions_arg`]).
///
/// # Safety
///
/// Every string and array of `t` must be readable for its length.
pub(crate) unsafe fn parts_arg(t: &wk_tag_in, keep: Option<u64>) -> Result<TagParts, wk_status> {
    // SAFETY: forwarded contract.
    unsafe {
        let key = key_arg(t.key)?;
        let channel_key = key_arg(t.channel_key)?;
        let source_channel_key = key_arg(t.source_channel_key)?;
        let refs = refs_arg(t.refs, t.ref_count)?;
        let partitions = partitions_arg(t.partitions, t.partition_count, keep)?;
        Ok(TagParts {
            key: key.into(),
            channel_key: channel_key.into(),
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            source_channel_key: source_channel_key.into(),
            source_subscriber_mutation_version: t.source_subscriber_mutation_version,
            topology: PartitionTopology::new(t.hash_slot_table_version, refs),
            partitions,
            created_at: t.created_at_ns,
            last_access: t.last_access_ns,
        })
    }
}

/// The look-up request `r` describes, borrowing its strings and refs.
///
/// # Safety
///
/// Every string and array of `r` must be readable for its length for `'a`.
pub(crate) unsafe fn lookup_arg<'a>(
    r: &wk_tag_lookup_request,
) -> Result<LookupRequest<'a>, wk_status> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok(LookupRequest {
            tag_key: key_arg(r.tag_key)?,
            tag_version: r.tag_version,
            subscriber_mutation_version: r.subscriber_mutation_version,
            source_channel_key: key_arg(r.source_channel_key)?,
            source_subscriber_mutation_version: r.source_subscriber_mutation_version,
            topology: TopologyView {
                hash_slot_table_version: r.hash_slot_table_version,
                refs: refs_arg(r.refs, r.ref_count)?,
            },
        })
    }
}

/// A borrowed string for C: NULL when empty.
pub(crate) fn str_out(s: &str) -> wk_str {
    wk_str {
        ptr: if s.is_empty() {
            std::ptr::null()
        } else {
            s.as_ptr()
        },
        len: s.len(),
    }
}

/// The first element of `items`, or NULL when there is none.
pub(crate) fn array_out<T, U>(items: &[T]) -> *const U {
    if items.is_empty() {
        std::ptr::null()
    } else {
        items.as_ptr().cast()
    }
}

impl wk_tag_info {
    /// The info of `tag` now.
    pub(crate) fn of(tag: &DeliveryTag) -> Self {
        let refs = &tag.topology().refs;
        Self {
            key: str_out(tag.key()),
            channel_key: str_out(tag.channel_key()),
            tag_version: tag.tag_version(),
            subscriber_mutation_version: tag.subscriber_mutation_version(),
            source_channel_key: str_out(tag.source_channel_key()),
            source_subscriber_mutation_version: tag.source_subscriber_mutation_version(),
            hash_slot_table_version: tag.topology().hash_slot_table_version,
            refs: array_out(refs),
            ref_count: refs.len(),
            partition_count: tag.partitions().len(),
            uid_count: tag.uid_count(),
            created_at_ns: tag.created_at(),
            last_access_ns: tag.last_access(),
        }
    }
}

impl wk_tag_partition_view {
    /// The zero-copy view of `p`.
    pub(crate) fn of(p: &NodePartition) -> Self {
        Self {
            node_id: p.node_id,
            bytes: array_out(p.uids.bytes()),
            bytes_len: p.uids.bytes().len(),
            ends: array_out(p.uids.ends()),
            uid_count: p.uids.len(),
        }
    }
}

impl wk_tag_counts {
    /// The C form of `c`, with `entries`.
    pub(crate) fn of(c: TagCounts, entries: usize) -> Self {
        Self {
            lookups: c.lookups,
            stored: c.stores[0],
            stale: c.stores[1],
            tags: c.tags,
            uids: c.uids,
            reclaimed_bodies: c.reclaimed_bodies,
            reclaimed_refs: c.reclaimed_refs,
            entries: entries as u64,
        }
    }
}

impl From<CleanupPage> for wk_tag_cleanup_page {
    fn from(p: CleanupPage) -> Self {
        let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Self {
            visited: n(p.visited),
            reclaimed: n(p.reclaimed),
            unlinked: n(p.unlinked),
            wrapped: p.wrapped,
        }
    }
}

/// A handle's clock, and the same clock as a manual one when it is one.
pub(crate) type Clocks = (Arc<dyn Clock>, Option<Arc<ManualClock>>);

/// The clock options name: the core's unix clock, or a manual one (kept for
/// `wk_tag_*_advance_clock`). An unknown kind → `INVALID_ARGUMENT`.
pub(crate) fn clock_of(kind: u32, manual_start_ns: u64) -> Result<Clocks, wk_status> {
    match kind {
        WK_TAG_CLOCK_UNIX => Ok((Arc::new(UnixClock), None)),
        WK_TAG_CLOCK_MANUAL => {
            let manual = Arc::new(ManualClock::new(manual_start_ns));
            Ok((manual.clone(), Some(manual)))
        }
        _ => Err(WK_STATUS_INVALID_ARGUMENT),
    }
}

/// Checks a view out-pointer that may be NULL (the caller wants no view).
pub(crate) fn check_view_out<T>(ptr: *mut T) -> Result<(), wk_status> {
    if ptr.is_null() || ptr.is_aligned() {
        Ok(())
    } else {
        Err(WK_STATUS_INVALID_ARGUMENT)
    }
}
