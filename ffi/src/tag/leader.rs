//! `wk_tag_leader` (the channel leader's `TagLeader`) and `wk_tag_mutation` (one membership
//! change): builds (key reuse and the version-bump rule, fresh keys, ephemeral tags, and builds
//! that partition UIDs by their slots' nodes), the fence, the body by key, the usable check,
//! mutations with the dirty lifecycle, paged TTL cleanup and counts.

use std::sync::{Arc, Mutex};

use wkcore::clock::ManualClock;
use wkcore::tag::{
    partition_by_node, BuildRequest, DeliveryTag, FnTagKeys, LeaderOptions, Mutation,
    MutationOutcome, NodePartition, PartitionTopology, RandomTagKeys, SequentialTagKeys, TagError,
    TagKeys, TagLeader,
};

use super::cache::registry_arg;
use super::status::{
    status_of, WK_STATUS_TAG_DIRTY, WK_STATUS_TAG_INVALID_CONFIG, WK_STATUS_TAG_INVALID_UTF8,
    WK_STATUS_TAG_LAGGING,
};
use super::types::{
    check_view_out, clock_of, in_ref, key_arg, lookup_arg, partitions_arg, refs_arg, slice_arg,
    uids_arg, wk_tag_build_request, wk_tag_cleanup_page, wk_tag_counts, wk_tag_leader_options,
    wk_tag_lookup_request, WK_TAG_CLEANUP_LIMIT_MAX, WK_TAG_COUNTS_MIN_SIZE,
    WK_TAG_MUTATION_ALREADY_CURRENT, WK_TAG_MUTATION_APPLIED, WK_TAG_MUTATION_NO_TAG,
    WK_TAG_SLOTS_MAX, WK_TAG_STR_MAX, WK_TAG_UIDS_MAX,
};
use super::view::{give_view, wk_tag_view};
use crate::coord::ledger::tri;
use crate::handle::{
    check_out, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable, Guarded,
};
use crate::metrics::{wk_metrics_registry, wk_str};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NOT_FOUND, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a leader side. Every call may run on any thread, concurrently
/// with any other; builds and mutations of one channel are serialized inside.
#[allow(non_camel_case_types)]
pub struct wk_tag_leader {
    _private: [u8; 0],
}

/// The leader behind a handle, with its manual clock when it has one.
pub(crate) struct Leader {
    pub(crate) leader: TagLeader,
    pub(crate) manual: Option<Arc<ManualClock>>,
}

impl Castable for wk_tag_leader {
    type RustType = Leader;
    const MAGIC: u64 = 0x776b_5447_4c44_0003; // "wkTGLD" + ABI generation
}

/// Opaque handle to one open membership change of a channel (`wk_tag_leader_begin_mutation`).
/// Owned by one host: `wk_tag_mutation_commit` consumes it, `wk_tag_mutation_free` abandons it
/// (the channel stays dirty until a rebuild).
#[allow(non_camel_case_types)]
pub struct wk_tag_mutation {
    _private: [u8; 0],
}

impl Castable for wk_tag_mutation {
    type RustType = Mutex<Option<Mutation>>;
    const MAGIC: u64 = 0x776b_5447_4d55_0003; // "wkTGMU" + ABI generation
}

/// The leader options `o` describe.
///
/// # Safety
///
/// `o.key_prefix` must be readable for its length.
unsafe fn leader_options_of(
    o: &wk_tag_leader_options,
) -> Result<(LeaderOptions, Option<Arc<ManualClock>>), wk_status> {
    if (o.struct_size as usize) < std::mem::size_of::<wk_tag_leader_options>() {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    let (clock, manual) = clock_of(o.clock, o.manual_start_ns)?;
    if o.local_node_id == 0 || o.key_prefix.len > WK_TAG_STR_MAX {
        return Err(WK_STATUS_TAG_INVALID_CONFIG);
    }
    // SAFETY: forwarded contract.
    let prefix = unsafe { key_arg(o.key_prefix) }.map_err(|s| match s {
        WK_STATUS_TAG_INVALID_UTF8 => WK_STATUS_TAG_INVALID_CONFIG,
        other => other,
    })?;
    let keys: Arc<dyn TagKeys> = if prefix.is_empty() {
        Arc::new(RandomTagKeys::default())
    } else {
        Arc::new(SequentialTagKeys::new(prefix))
    };
    let options = LeaderOptions {
        local_node_id: o.local_node_id,
        ttl_nanos: o.ttl_ns,
        clock,
        keys,
    };
    Ok((options, manual))
}

/// Creates a leader side counting in `metrics` (NULL: the process-wide registry).
/// `WK_STATUS_INVALID_ARGUMENT` for a `struct_size` below `sizeof(wk_tag_leader_options)` or an
/// unknown clock; `WK_STATUS_TAG_INVALID_CONFIG` for a local node of 0 or a key prefix that is
/// not UTF-8 of at most `WK_TAG_STR_MAX` bytes. On `WK_STATUS_OK` the caller owns `*leader_out`.
///
/// # Safety
///
/// `options` must be NULL or readable (its key prefix for its length); `metrics` NULL or a
/// live handle; `leader_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_new(
    options: *const wk_tag_leader_options,
    metrics: *const wk_metrics_registry,
    leader_out: *mut *mut wk_tag_leader,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let o = tri!(unsafe { in_ref(options) });
        // SAFETY: forwarded from this function's contract.
        let registry = tri!(unsafe { registry_arg(metrics) });
        let leader_out = check_out!(leader_out);
        // SAFETY: forwarded from this function's contract.
        let (options, manual) = tri!(unsafe { leader_options_of(o) });
        let leader = TagLeader::with_metrics(options, registry);
        let raw = wk_tag_leader::into_raw(Arc::new(Guarded::new::<wk_tag_leader>(Leader {
            leader,
            manual,
        })));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(leader_out, raw) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*leader_out` is a handle to the same leader side, freed separately.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `leader_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_clone(
    leader: *const wk_tag_leader,
    leader_out: *mut *mut wk_tag_leader,
) -> wk_status {
    ffi_panic_boundary! {
        let leader_out = check_out!(leader_out);
        let arc = try_clone!(wk_tag_leader, leader);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(leader_out, wk_tag_leader::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the leader side goes with the last one (views and open mutations keep
/// what they hold). NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `leader` must be NULL or a live handle not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_free(leader: *mut wk_tag_leader) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_leader::free(leader) }
    }
}

/// For tests: moves a manual-clock leader's clock forward by `ns`; `WK_STATUS_INVALID_ARGUMENT`
/// for a leader on the unix clock.
///
/// # Safety
///
/// `leader` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_advance_clock(
    leader: *const wk_tag_leader,
    ns: u64,
) -> wk_status {
    ffi_panic_boundary! {
        match &try_ref!(wk_tag_leader, leader).manual {
            Some(clock) => {
                clock.advance(ns);
                WK_STATUS_OK
            }
            None => WK_STATUS_INVALID_ARGUMENT,
        }
    }
}

/// Writes the leader clock's reading (unix nanoseconds), for `wk_tag_leader_cleanup`.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `now_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_now(
    leader: *const wk_tag_leader,
    now_out: *mut i64,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        let now_out = check_out!(now_out);
        let now = match &l.manual {
            Some(m) => wkcore::clock::Clock::now_nanos(&**m),
            None => wkcore::clock::Clock::now_nanos(&wkcore::tag::UnixClock),
        } as i64;
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(now_out, now) };
        WK_STATUS_OK
    }
}

/// The build request `r` describes, with `partitions`.
///
/// # Safety
///
/// Every string and array of `r` must be readable for its length for `'a`.
unsafe fn build_arg<'a>(
    r: &wk_tag_build_request,
    partitions: Vec<NodePartition>,
) -> Result<BuildRequest<'a>, wk_status> {
    if r.mint_fresh_key > 1 {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    // SAFETY: forwarded contract.
    unsafe {
        Ok(BuildRequest {
            channel_key: key_arg(r.channel_key)?,
            subscriber_mutation_version: r.subscriber_mutation_version,
            source_channel_key: key_arg(r.source_channel_key)?,
            source_subscriber_mutation_version: r.source_subscriber_mutation_version,
            topology: PartitionTopology::new(
                r.hash_slot_table_version,
                refs_arg(r.refs, r.ref_count)?,
            ),
            partitions,
            mint_fresh_key: r.mint_fresh_key == 1,
        })
    }
}

/// Which build a call makes.
#[derive(Clone, Copy)]
enum Build {
    /// The channel's current tag (`TagLeader::build`).
    Current,
    /// A body reachable only by key (`TagLeader::build_ephemeral`).
    Ephemeral,
}

impl Build {
    fn run(self, leader: &TagLeader, request: BuildRequest<'_>) -> Arc<DeliveryTag> {
        match self {
            Build::Current => leader.build(request),
            Build::Ephemeral => leader.build_ephemeral(request),
        }
    }
}

/// A build from a request with partitions.
///
/// # Safety
///
/// As `wk_tag_leader_build`.
unsafe fn build_with(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    view_out: *mut *mut wk_tag_view,
    kind: Build,
) -> wk_status {
    let l = try_ref!(wk_tag_leader, leader);
    // SAFETY: forwarded contract.
    let r = tri!(unsafe { in_ref(request) });
    let view_out = check_out!(view_out);
    // SAFETY: forwarded contract.
    let partitions = tri!(unsafe { partitions_arg(r.partitions, r.partition_count, None) });
    // SAFETY: forwarded contract.
    let request = tri!(unsafe { build_arg(r, partitions) });
    let body = kind.run(&l.leader, request);
    // SAFETY: checked by `check_out!`; writable per the contract.
    unsafe { give_view(view_out, Some(body)) };
    WK_STATUS_OK
}

/// Upstream's `BuildLeaderTag`: makes the channel's current tag from `request`, reusing its key
/// and version (bumped by one iff the subscriber version, source key, source version or
/// topology changed; partition contents are not compared), or a fresh key and version 1 when
/// the channel has none or `mint_fresh_key` is 1. Clears a failed mutation's mark when no
/// mutation is pending. Writes a view of the new body to `*view_out`. Every argument is checked
/// before the build.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `request` NULL or readable (strings and arrays for
/// their lengths, during the call only); `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_build(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { build_with(leader, request, view_out, Build::Current) }
    }
}

/// Upstream's `BuildEphemeralTag`: a body under a fresh key, version 1, reachable only by key
/// (`wk_tag_leader_lookup_tag`); the channel's current tag is not touched (`mint_fresh_key` is
/// checked but not used). As `wk_tag_leader_build` otherwise.
///
/// # Safety
///
/// As `wk_tag_leader_build`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_build_ephemeral(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { build_with(leader, request, view_out, Build::Ephemeral) }
    }
}

/// A build that partitions for the host.
///
/// # Safety
///
/// As `wk_tag_leader_build_by_slot`.
#[allow(clippy::too_many_arguments)]
unsafe fn build_by_slot_with(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    uids: *const wk_str,
    slots: *const u32,
    uid_count: usize,
    slot_nodes: *const u64,
    slot_count: usize,
    view_out: *mut *mut wk_tag_view,
    kind: Build,
) -> wk_status {
    let l = try_ref!(wk_tag_leader, leader);
    // SAFETY: forwarded contract.
    let r = tri!(unsafe { in_ref(request) });
    let view_out = check_out!(view_out);
    if !r.partitions.is_null() || r.partition_count != 0 {
        return WK_STATUS_INVALID_ARGUMENT;
    }
    // SAFETY: forwarded contract.
    let uids = tri!(unsafe { uids_arg(uids, uid_count) });
    // SAFETY: forwarded contract.
    let slots = tri!(unsafe { slice_arg(slots, uid_count, WK_TAG_UIDS_MAX) });
    // SAFETY: forwarded contract.
    let slot_nodes = tri!(unsafe { slice_arg(slot_nodes, slot_count, WK_TAG_SLOTS_MAX) });
    // Checked before partitioning, so a refused request is refused whatever its UIDs.
    // SAFETY: forwarded contract.
    tri!(unsafe { build_arg(r, Vec::new()) });
    let partitions = tri!(partition_by_node(&uids, slots, slot_nodes).map_err(status_of));
    // SAFETY: forwarded contract.
    let request = tri!(unsafe { build_arg(r, partitions) });
    let body = kind.run(&l.leader, request);
    // SAFETY: checked by `check_out!`; writable per the contract.
    unsafe { give_view(view_out, Some(body)) };
    WK_STATUS_OK
}

/// As `wk_tag_leader_build`, partitioning for the host: `uids[i]` (any bytes) belongs to hash
/// slot `slots[i]` (`uid_count` of each, `0..=WK_TAG_UIDS_MAX`), and `slot_nodes[s]` is slot
/// `s`'s node (`slot_count` entries, `0..=WK_TAG_SLOTS_MAX`; 0: unknown). Partitions come
/// ordered by node. A UID whose slot has no known node (0, or past the table) refuses the build
/// with `WK_STATUS_TAG_UNASSIGNED_SLOT` (retryable; nothing built). `request` must carry no
/// partitions (NULL and 0, else `WK_STATUS_INVALID_ARGUMENT`).
///
/// # Safety
///
/// As `wk_tag_leader_build`; `uids` (each string for its length) and `slots` NULL or
/// `uid_count` readable entries; `slot_nodes` NULL or `slot_count` readable entries.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_build_by_slot(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    uids: *const wk_str,
    slots: *const u32,
    uid_count: usize,
    slot_nodes: *const u64,
    slot_count: usize,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            build_by_slot_with(
                leader, request, uids, slots, uid_count, slot_nodes, slot_count, view_out,
                Build::Current,
            )
        }
    }
}

/// As `wk_tag_leader_build_by_slot`, for an ephemeral body (`wk_tag_leader_build_ephemeral`).
///
/// # Safety
///
/// As `wk_tag_leader_build_by_slot`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_build_ephemeral_by_slot(
    leader: *const wk_tag_leader,
    request: *const wk_tag_build_request,
    uids: *const wk_str,
    slots: *const u32,
    uid_count: usize,
    slot_nodes: *const u64,
    slot_count: usize,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            build_by_slot_with(
                leader, request, uids, slots, uid_count, slot_nodes, slot_count, view_out,
                Build::Ephemeral,
            )
        }
    }
}

/// The fence of `request` against `channel`'s current tag (the leader's reuse check), as
/// `wk_tag_cache_lookup`: reason to `*reason_out`, the current body to `*view_out` when
/// `view_out` is not NULL (NULL: nothing allocated).
///
/// # Safety
///
/// As `wk_tag_cache_lookup`, with `leader` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_lookup(
    leader: *const wk_tag_leader,
    channel: wk_str,
    request: *const wk_tag_lookup_request,
    reason_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { in_ref(request).and_then(|r| lookup_arg(r)) });
        let reason_out = check_out!(reason_out);
        tri!(check_view_out(view_out));
        let lookup = l.leader.lookup(channel, &request);
        // SAFETY: both checked; writable per this function's contract.
        unsafe {
            write_out(reason_out, lookup.reason() as u8);
            if !view_out.is_null() {
                give_view(view_out, lookup.into_tag());
            }
        }
        WK_STATUS_OK
    }
}

/// Writes a view of `found` or returns `NOT_FOUND`.
///
/// # Safety
///
/// `view_out` checked and writable.
unsafe fn found(found: Option<Arc<DeliveryTag>>, view_out: *mut *mut wk_tag_view) -> wk_status {
    match found {
        Some(tag) => {
            // SAFETY: per the contract.
            unsafe { give_view(view_out, Some(tag)) };
            WK_STATUS_OK
        }
        None => WK_STATUS_NOT_FOUND,
    }
}

/// Upstream's `LookupTag`: a view of the body under `tag_key` (the current one, an ephemeral
/// one, or an older incarnation's not yet reclaimed), refreshing its access time, for the
/// authority fetch; `WK_STATUS_NOT_FOUND` when there is none.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `tag_key` readable for its length; `view_out` NULL or
/// writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_lookup_tag(
    leader: *const wk_tag_leader,
    tag_key: wk_str,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let tag_key = tri!(unsafe { key_arg(tag_key) });
        let view_out = check_out!(view_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { found(l.leader.lookup_tag(tag_key), view_out) }
    }
}

/// A view of `channel`'s current tag (upstream's `CurrentRef` through `wk_tag_view_info`);
/// `WK_STATUS_NOT_FOUND` when it has none.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `channel` readable for its length; `view_out` NULL
/// or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_current(
    leader: *const wk_tag_leader,
    channel: wk_str,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let view_out = check_out!(view_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { found(l.leader.current(channel), view_out) }
    }
}

/// The current tag if a message may use it: no mutation of the channel pending or failed since
/// its last build, and its subscriber mutation version not below `authoritative_version` (the
/// store's). Otherwise (rebuild): `WK_STATUS_TAG_DIRTY`, `WK_STATUS_NOT_FOUND` (no tag) or
/// `WK_STATUS_TAG_LAGGING`, and nothing written. The decision is the core's one read; the reason
/// is read just after it (a racing build or mutation may make it another one).
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `channel` readable for its length; `view_out` NULL
/// or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_usable(
    leader: *const wk_tag_leader,
    channel: wk_str,
    authoritative_version: u64,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let view_out = check_out!(view_out);
        if let Some(tag) = l.leader.usable(channel, authoritative_version) {
            // SAFETY: checked by `check_out!`; writable per this function's contract.
            unsafe { give_view(view_out, Some(tag)) };
            return WK_STATUS_OK;
        }
        if l.leader.is_dirty(channel) {
            WK_STATUS_TAG_DIRTY
        } else if l.leader.current(channel).is_none() {
            WK_STATUS_NOT_FOUND
        } else {
            WK_STATUS_TAG_LAGGING
        }
    }
}

/// Writes to `*dirty_out` whether a mutation of `channel` is pending or one failed since its
/// last build.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `channel` readable for its length; `dirty_out` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_is_dirty(
    leader: *const wk_tag_leader,
    channel: wk_str,
    dirty_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let dirty_out = check_out!(dirty_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(dirty_out, l.leader.is_dirty(channel)) };
        WK_STATUS_OK
    }
}

/// Upstream's `IsSourceStale`, on the leader's current tag (as `wk_tag_cache_is_source_stale`).
///
/// # Safety
///
/// As `wk_tag_cache_is_source_stale`, with `leader` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_is_source_stale(
    leader: *const wk_tag_leader,
    channel: wk_str,
    source_channel: wk_str,
    source_version: u64,
    stale_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let source = tri!(unsafe { key_arg(source_channel) });
        let stale_out = check_out!(stale_out);
        let stale = l.leader.is_source_stale(channel, source, source_version);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(stale_out, stale) };
        WK_STATUS_OK
    }
}

/// Opens a membership change of `channel`, marking it dirty before the host writes the change
/// to its store: `*mutation_out` collects the change (`_reset`, `_add`, `_remove`) until
/// `wk_tag_mutation_commit` with the store's version (or `wk_tag_mutation_free`, which leaves
/// the channel dirty until a rebuild).
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `channel` readable for its length; `mutation_out`
/// NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_begin_mutation(
    leader: *const wk_tag_leader,
    channel: wk_str,
    mutation_out: *mut *mut wk_tag_mutation,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let mutation_out = check_out!(mutation_out);
        let m = l.leader.begin_mutation(channel);
        let raw = wk_tag_mutation::into_raw(Arc::new(Guarded::new::<wk_tag_mutation>(Mutex::new(
            Some(m),
        ))));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(mutation_out, raw) };
        WK_STATUS_OK
    }
}

/// Runs `f` on the open mutation behind `mutation` (`WK_STATUS_INVALID_HANDLE` once committed).
fn with_mutation(m: &Mutex<Option<Mutation>>, f: impl FnOnce(&mut Mutation)) -> wk_status {
    let mut guard = m.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match guard.as_mut() {
        Some(m) => {
            f(m);
            WK_STATUS_OK
        }
        None => crate::status::WK_STATUS_INVALID_HANDLE,
    }
}

/// Clears every partition (reset / remove-all), dropping this mutation's earlier adds and
/// removes; later adds apply after it.
///
/// # Safety
///
/// `mutation` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_mutation_reset(mutation: *const wk_tag_mutation) -> wk_status {
    ffi_panic_boundary! {
        with_mutation(try_ref!(wk_tag_mutation, mutation), Mutation::reset)
    }
}

/// Adds `n` UIDs (`0..=WK_TAG_UIDS_MAX`, any bytes) to `node_id`'s partition (the node that owns
/// each UID's slot). Every UID is checked before any is added.
///
/// # Safety
///
/// `mutation` must be NULL or a live handle; `uids` NULL or `n` readable strings, each readable
/// for its length.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_mutation_add(
    mutation: *const wk_tag_mutation,
    node_id: u64,
    uids: *const wk_str,
    n: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let m = try_ref!(wk_tag_mutation, mutation);
        // SAFETY: forwarded from this function's contract.
        let uids = tri!(unsafe { uids_arg(uids, n) });
        with_mutation(m, |m| m.add(node_id, uids))
    }
}

/// Removes `n` UIDs (`0..=WK_TAG_UIDS_MAX`) from whichever partition holds them, as
/// `wk_tag_mutation_add` checks them.
///
/// # Safety
///
/// As `wk_tag_mutation_add`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_mutation_remove(
    mutation: *const wk_tag_mutation,
    uids: *const wk_str,
    n: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let m = try_ref!(wk_tag_mutation, mutation);
        // SAFETY: forwarded from this function's contract.
        let uids = tri!(unsafe { uids_arg(uids, n) });
        with_mutation(m, |m| m.remove(uids))
    }
}

/// Applies the mutation with the version the store returned and **consumes** it (the handle is
/// freed; do not free it again): one tag version bump however many chunks it had, same key, the
/// store's subscriber version; clears this mutation's dirty mark. `*outcome_out` is
/// `WK_TAG_MUTATION_APPLIED` (with `*view_out`, when not NULL, the new body),
/// `WK_TAG_MUTATION_NO_TAG` (nothing recorded; `*view_out` NULL) or
/// `WK_TAG_MUTATION_ALREADY_CURRENT` (the tag already carries this store version or a later
/// one; `*view_out` the current body). `WK_STATUS_TAG_TOO_LARGE` when a partition would pass
/// `u32::MAX` bytes: the mutation is consumed and the channel left dirty (rebuild). A refused
/// argument (NULL or misaligned out-pointers, an invalid handle) consumes nothing.
///
/// # Safety
///
/// `mutation` must be NULL or a live handle, not used again after a call that consumed it;
/// `outcome_out` NULL or writable; `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_mutation_commit(
    mutation: *mut wk_tag_mutation,
    store_version: u64,
    outcome_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let m = try_ref!(wk_tag_mutation, mutation);
        let outcome_out = check_out!(outcome_out);
        tri!(check_view_out(view_out));
        let taken = m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        let Some(open) = taken else {
            return crate::status::WK_STATUS_INVALID_HANDLE;
        };
        let outcome = open.commit(store_version);
        // The host's reference: consumed here, on every outcome.
        // SAFETY: `mutation` is a live handle (checked above) whose one count the host gives up
        // by this call (the function's contract); nothing below uses it.
        unsafe { wk_tag_mutation::free(mutation) };
        let (code, body) = match tri!(outcome.map_err(status_of)) {
            MutationOutcome::Applied(t) => (WK_TAG_MUTATION_APPLIED, Some(t)),
            MutationOutcome::NoTag => (WK_TAG_MUTATION_NO_TAG, None),
            MutationOutcome::AlreadyCurrent(t) => (WK_TAG_MUTATION_ALREADY_CURRENT, Some(t)),
        };
        // SAFETY: both checked; writable per this function's contract.
        unsafe {
            write_out(outcome_out, code);
            give_view(view_out, body);
        }
        WK_STATUS_OK
    }
}

/// Abandons the mutation (a failed or partial store write): the channel stays dirty, so its tag
/// is rebuilt before its next use. NULL is a no-op; a handle detected as already freed (or
/// consumed by a commit) is ignored.
///
/// # Safety
///
/// `mutation` must be NULL or a live handle not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_mutation_free(mutation: *mut wk_tag_mutation) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_mutation::free(mutation) }
    }
}

/// One cleanup page, for a host timer: visits up to `limit` bodies (at most
/// `WK_TAG_CLEANUP_LIMIT_MAX`, else `WK_STATUS_INVALID_ARGUMENT`), reclaiming those idle past the
/// TTL at `now_ns` (ephemeral ones and older incarnations' included) and clearing a channel's
/// current tag when it was the body reclaimed (`unlinked`). As `wk_tag_cache_cleanup` otherwise.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `page_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_cleanup(
    leader: *const wk_tag_leader,
    now_ns: i64,
    limit: u32,
    page_out: *mut wk_tag_cleanup_page,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        let page_out = check_out!(page_out);
        if limit > WK_TAG_CLEANUP_LIMIT_MAX {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        let page = wk_tag_cleanup_page::from(l.leader.cleanup_expired(now_ns, limit as usize));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(page_out, page) };
        WK_STATUS_OK
    }
}

/// Writes the leader's counts (`entries`: bodies held by key), as `wk_tag_cache_counts`.
///
/// # Safety
///
/// `leader` must be NULL or a live handle; `counts_out` NULL or writable for `counts_size`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_leader_counts(
    leader: *const wk_tag_leader,
    counts_out: *mut wk_tag_counts,
    counts_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let l = try_ref!(wk_tag_leader, leader);
        let counts_out = check_out!(counts_out);
        let counts = wk_tag_counts::of(l.leader.counts(), l.leader.bodies());
        // SAFETY: checked by `check_out!`; `counts_size` writable bytes per the contract.
        unsafe { write_sized(counts_out, counts_size, WK_TAG_COUNTS_MIN_SIZE, counts) }
    }
}

/// Upstream's partitioning (`partition_by_node`), for hosts that build elsewhere: `uids[i]` is in
/// hash slot `slots[i]` (`n` of each), slot `s` on node `slot_nodes[s]` (`slot_count` entries;
/// 0: unknown). On `WK_STATUS_OK`, `*view_out` holds a body whose partitions are the result
/// (ordered by node, each node's UIDs in input order; its other fields are empty: no key, no
/// channel, version 1, no topology, times 0). A UID whose slot has no known node gives
/// `WK_STATUS_TAG_UNASSIGNED_SLOT` and, when `unassigned_slot_out` is not NULL, writes the first
/// such slot there (the one exception to "out-parameters only on success"). Limits as
/// `wk_tag_leader_build_by_slot`.
///
/// # Safety
///
/// `uids` (each string for its length) and `slots` NULL or `n` readable entries; `slot_nodes`
/// NULL or `slot_count` readable entries; `view_out` NULL or writable for one pointer;
/// `unassigned_slot_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_partition_by_node(
    uids: *const wk_str,
    slots: *const u32,
    n: usize,
    slot_nodes: *const u64,
    slot_count: usize,
    view_out: *mut *mut wk_tag_view,
    unassigned_slot_out: *mut u32,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let uids = tri!(unsafe { uids_arg(uids, n) });
        // SAFETY: forwarded from this function's contract.
        let slots = tri!(unsafe { slice_arg(slots, n, WK_TAG_UIDS_MAX) });
        // SAFETY: forwarded from this function's contract.
        let slot_nodes = tri!(unsafe { slice_arg(slot_nodes, slot_count, WK_TAG_SLOTS_MAX) });
        let view_out = check_out!(view_out);
        tri!(check_view_out(unassigned_slot_out));
        let partitions = match partition_by_node(&uids, slots, slot_nodes) {
            Ok(p) => p,
            Err(e) => {
                if let (TagError::UnassignedSlot { slot_id }, false) =
                    (e, unassigned_slot_out.is_null())
                {
                    // SAFETY: non-NULL, checked aligned; writable per the contract.
                    unsafe { write_out(unassigned_slot_out, slot_id) };
                }
                return status_of(e);
            }
        };
        // A body holds the partitions: a throwaway leader side builds it (its metrics, clock and
        // keys go with it).
        let scratch = TagLeader::with_metrics(
            LeaderOptions {
                local_node_id: 1,
                ttl_nanos: 0,
                clock: Arc::new(ManualClock::new(0)),
                keys: Arc::new(FnTagKeys(Box::<str>::default)),
            },
            &wkcore::metrics::Registry::new(),
        );
        let body = scratch.build_ephemeral(BuildRequest {
            partitions,
            ..BuildRequest::default()
        });
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { give_view(view_out, Some(body)) };
        WK_STATUS_OK
    }
}
