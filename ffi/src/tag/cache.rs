//! `wk_tag_cache` (the follower's `PartitionCache`) and `wk_tag_channel` (a held channel cell):
//! stores, the look-up fence, batches, the current body, the body by key, source staleness,
//! paged TTL cleanup and counts.
//!
//! A look-up with `view_out` NULL allocates nothing and writes no shared memory on a hit beyond
//! the body's cleanup-tick mark (at most once per tick): it loads the snapshot, runs the fence
//! and writes the reason. Asking for a view costs one small allocation (the handle) and one
//! reference count.

use std::sync::Arc;

use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::{CacheOptions, ChannelHandle, LookupRequest, PartitionCache, StoreOutcome};

use super::status::WK_STATUS_TAG_INVALID_CONFIG;
use super::types::{
    check_view_out, clock_of, in_ref, key_arg, lookup_arg, parts_arg, slice_arg,
    wk_tag_cache_options, wk_tag_cleanup_page, wk_tag_counts, wk_tag_in, wk_tag_lookup_request,
    WK_TAG_BATCH_MAX, WK_TAG_CLEANUP_LIMIT_MAX, WK_TAG_COUNTS_MIN_SIZE,
};
use super::view::{give_view, wk_tag_view};
use crate::coord::ledger::tri;
use crate::handle::{
    check_out, check_ptr, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable, Guarded,
};
use crate::metrics::{wk_metrics_registry, wk_str};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NOT_FOUND, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a follower cache. Every call may run on any thread,
/// concurrently with any other.
#[allow(non_camel_case_types)]
pub struct wk_tag_cache {
    _private: [u8; 0],
}

/// The cache behind a handle, with its manual clock when it has one.
pub(crate) struct Cache {
    pub(crate) cache: PartitionCache,
    pub(crate) manual: Option<Arc<ManualClock>>,
}

impl Castable for wk_tag_cache {
    type RustType = Cache;
    const MAGIC: u64 = 0x776b_5447_4341_0003; // "wkTGCA" + ABI generation
}

/// Opaque, `Arc`-owned handle to one channel's cell of a cache: look-ups and stores that skip
/// the index. It stays valid across cleanups (a reclaimed cell answers through the index).
#[allow(non_camel_case_types)]
pub struct wk_tag_channel {
    _private: [u8; 0],
}

/// A channel handle with the node its cache keeps.
pub(crate) struct Channel {
    pub(crate) handle: ChannelHandle,
    pub(crate) local_node_id: u64,
}

impl Castable for wk_tag_channel {
    type RustType = Channel;
    const MAGIC: u64 = 0x776b_5447_4348_0003; // "wkTGCH" + ABI generation
}

/// The metrics registry argument (NULL: the process-wide one).
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle for `'a`.
pub(crate) unsafe fn registry_arg<'a>(
    metrics: *const wk_metrics_registry,
) -> Result<&'a Registry, wk_status> {
    if metrics.is_null() {
        return Ok(wkcore::metrics::global());
    }
    // SAFETY: forwarded contract.
    match unsafe { <wk_metrics_registry as ArcCastPtr>::try_ref(metrics) } {
        Ok(r) => Ok(r.registry()),
        Err(e) => Err(crate::handle::BadHandle::bad_handle(e)),
    }
}

/// Creates an empty cache counting in `metrics` (NULL: the process-wide registry; the
/// `wukongim_delivery_tag_*` families). `WK_STATUS_INVALID_ARGUMENT` for a `struct_size` below
/// `sizeof(wk_tag_cache_options)` or an unknown clock; `WK_STATUS_TAG_INVALID_CONFIG` for a local
/// node of 0. On `WK_STATUS_OK` the caller owns `*cache_out`.
///
/// # Safety
///
/// `options` must be NULL or readable; `metrics` NULL or a live handle; `cache_out` NULL or
/// writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_new(
    options: *const wk_tag_cache_options,
    metrics: *const wk_metrics_registry,
    cache_out: *mut *mut wk_tag_cache,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let o = tri!(unsafe { in_ref(options) });
        // SAFETY: forwarded from this function's contract.
        let registry = tri!(unsafe { registry_arg(metrics) });
        let cache_out = check_out!(cache_out);
        if (o.struct_size as usize) < std::mem::size_of::<wk_tag_cache_options>() {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        let (clock, manual) = tri!(clock_of(o.clock, o.manual_start_ns));
        if o.local_node_id == 0 {
            return WK_STATUS_TAG_INVALID_CONFIG;
        }
        let cache = PartitionCache::with_metrics(
            CacheOptions {
                local_node_id: o.local_node_id,
                ttl_nanos: o.ttl_ns,
                clock,
            },
            registry,
        );
        let raw = wk_tag_cache::into_raw(Arc::new(Guarded::new::<wk_tag_cache>(Cache {
            cache,
            manual,
        })));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(cache_out, raw) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*cache_out` is a handle to the same cache, freed separately.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `cache_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_clone(
    cache: *const wk_tag_cache,
    cache_out: *mut *mut wk_tag_cache,
) -> wk_status {
    ffi_panic_boundary! {
        let cache_out = check_out!(cache_out);
        let arc = try_clone!(wk_tag_cache, cache);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(cache_out, wk_tag_cache::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the cache goes with the last one (channel handles and views keep what
/// they hold). NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `cache` must be NULL or a live handle not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_free(cache: *mut wk_tag_cache) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_cache::free(cache) }
    }
}

/// For tests: moves a manual-clock cache's clock forward by `ns`; `WK_STATUS_INVALID_ARGUMENT`
/// for a cache on the unix clock.
///
/// # Safety
///
/// `cache` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_advance_clock(
    cache: *const wk_tag_cache,
    ns: u64,
) -> wk_status {
    ffi_panic_boundary! {
        match &try_ref!(wk_tag_cache, cache).manual {
            Some(clock) => {
                clock.advance(ns);
                WK_STATUS_OK
            }
            None => WK_STATUS_INVALID_ARGUMENT,
        }
    }
}

/// Writes the cache clock's reading (unix nanoseconds): what a host timer passes to
/// `wk_tag_cache_cleanup`.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `now_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_now(
    cache: *const wk_tag_cache,
    now_out: *mut i64,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        let now_out = check_out!(now_out);
        let now = c.cache_now();
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(now_out, now) };
        WK_STATUS_OK
    }
}

impl Cache {
    /// The clock's reading as the core stamps it.
    fn cache_now(&self) -> i64 {
        match &self.manual {
            Some(m) => wkcore::clock::Clock::now_nanos(&**m) as i64,
            None => wkcore::clock::Clock::now_nanos(&wkcore::tag::UnixClock) as i64,
        }
    }
}

/// Writes a store's outcome.
///
/// # Safety
///
/// `stored_out` checked and writable; `view_out` NULL or checked and writable.
unsafe fn store_result(
    outcome: StoreOutcome,
    stored_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    let stored = u8::from(outcome.is_stored());
    let body = match outcome {
        StoreOutcome::Stored(t) | StoreOutcome::Stale(t) => t,
    };
    // SAFETY: per the contract.
    unsafe {
        write_out(stored_out, stored);
        give_view(view_out, Some(body));
    }
    WK_STATUS_OK
}

/// Upstream's `StoreFollowerPartition`: stores `tag`'s local partition (the first partition of
/// the cache's node, or an empty one) unless it is stale against the channel's current tag (a
/// lower subscriber version; the same source with a lower source version; the same key with a
/// lower tag version). `*stored_out` is 1 when stored, 0 when refused as stale; `*view_out`
/// (when `view_out` is not NULL) the stored body or, refused, the current one. Every string and
/// array is checked before anything is stored (`WK_STATUS_TAG_INVALID_UTF8`,
/// `WK_STATUS_INVALID_ARGUMENT` for counts over the limits, `WK_STATUS_NULL_ARGUMENT`).
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `tag` NULL or readable, its strings and arrays
/// readable for their lengths (during the call only); `stored_out` NULL or writable; `view_out`
/// NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_store(
    cache: *const wk_tag_cache,
    tag: *const wk_tag_in,
    stored_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let tag = tri!(unsafe { in_ref(tag) });
        let stored_out = check_out!(stored_out);
        tri!(check_view_out(view_out));
        // SAFETY: forwarded from this function's contract.
        let parts = tri!(unsafe { parts_arg(tag, Some(c.cache.local_node_id())) });
        // SAFETY: both checked; writable per this function's contract.
        unsafe { store_result(c.cache.store(&parts), stored_out, view_out) }
    }
}

/// Writes a look-up's reason and, when the host asked, a view of the current body (NULL for
/// `missing_ref`).
///
/// # Safety
///
/// `reason_out` checked and writable; `view_out` NULL or checked and writable.
unsafe fn lookup_result(
    lookup: wkcore::tag::Lookup,
    reason_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    // SAFETY: per the contract.
    unsafe { write_out(reason_out, lookup.reason() as u8) };
    if !view_out.is_null() {
        // SAFETY: per the contract.
        unsafe { give_view(view_out, lookup.into_tag()) };
    }
    WK_STATUS_OK
}

/// Upstream's `LookupLocalPartitionRef`: the fence of `request` against `channel`'s current tag,
/// in upstream's order (key, tag version, subscriber version, source key, source version,
/// topology). Writes the reason (`WK_TAG_LOOKUP_*`) to `*reason_out`; with `view_out` not NULL,
/// also a view of the current body on a hit and on every miss from the key check on (NULL for
/// `missing_ref`), which is what a resolver adopts on `stale_request` and `tag_key_mismatch`.
/// With `view_out` NULL nothing is allocated and no reference count is touched.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` readable for its length; `request` NULL or
/// readable (its strings and refs for their lengths); `reason_out` NULL or writable; `view_out`
/// NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_lookup(
    cache: *const wk_tag_cache,
    channel: wk_str,
    request: *const wk_tag_lookup_request,
    reason_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { in_ref(request).and_then(|r| lookup_arg(r)) });
        let reason_out = check_out!(reason_out);
        tri!(check_view_out(view_out));
        // SAFETY: both checked; writable per this function's contract.
        unsafe { lookup_result(c.cache.lookup(channel, &request), reason_out, view_out) }
    }
}

/// `n` look-ups (`1..=WK_TAG_BATCH_MAX`): `channels[i]` with `requests[i]`, reason to
/// `reasons_out[i]` and, when `views_out` is not NULL, the view (or NULL) to `views_out[i]`, as
/// `wk_tag_cache_lookup` each. Every channel and request is checked before any look-up runs: a
/// refused one returns its status and writes nothing.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channels` and `requests` NULL or `n` readable
/// entries (strings and refs readable for their lengths); `reasons_out` NULL or `n` writable
/// bytes; `views_out` NULL or `n` writable pointers.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_lookup_batch(
    cache: *const wk_tag_cache,
    channels: *const wk_str,
    requests: *const wk_tag_lookup_request,
    n: usize,
    reasons_out: *mut u8,
    views_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        tri!(check_ptr(channels));
        tri!(check_ptr(requests));
        tri!(check_ptr(reasons_out.cast_const()));
        tri!(check_view_out(views_out));
        if n == 0 || n > WK_TAG_BATCH_MAX {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        // SAFETY: non-NULL, aligned, `n` bounded; readable per this function's contract.
        let (channels, requests) = tri!(unsafe {
            slice_arg(channels, n, WK_TAG_BATCH_MAX)
                .and_then(|ch| slice_arg(requests, n, WK_TAG_BATCH_MAX).map(|rq| (ch, rq)))
        });
        let mut checked: Vec<(&str, LookupRequest<'_>)> = Vec::with_capacity(n);
        for (channel, request) in channels.iter().zip(requests) {
            // SAFETY: forwarded from this function's contract.
            let entry = tri!(unsafe {
                key_arg(*channel).and_then(|ch| Ok((ch, lookup_arg(request)?)))
            });
            checked.push(entry);
        }
        for (i, (channel, request)) in checked.iter().enumerate() {
            let lookup = c.cache.lookup(channel, request);
            // SAFETY: `i < n`: the host's `n` writable entries (checked non-NULL and aligned).
            unsafe {
                write_out(reasons_out.add(i), lookup.reason() as u8);
                if !views_out.is_null() {
                    give_view(views_out.add(i), lookup.into_tag());
                }
            }
        }
        WK_STATUS_OK
    }
}

/// Writes a handle on `channel`'s cell to `*channel_out` (made if the channel has none yet).
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` readable for its length; `channel_out` NULL
/// or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_channel(
    cache: *const wk_tag_cache,
    channel: wk_str,
    channel_out: *mut *mut wk_tag_channel,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let channel_out = check_out!(channel_out);
        let handle = Channel {
            handle: c.cache.handle(channel),
            local_node_id: c.cache.local_node_id(),
        };
        let raw = wk_tag_channel::into_raw(Arc::new(Guarded::new::<wk_tag_channel>(handle)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(channel_out, raw) };
        WK_STATUS_OK
    }
}

/// As `wk_tag_cache_lookup`, on the channel's cell (no index look-up).
///
/// # Safety
///
/// `channel` must be NULL or a live handle; the rest as `wk_tag_cache_lookup`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_channel_lookup(
    channel: *const wk_tag_channel,
    request: *const wk_tag_lookup_request,
    reason_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_tag_channel, channel);
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { in_ref(request).and_then(|r| lookup_arg(r)) });
        let reason_out = check_out!(reason_out);
        tri!(check_view_out(view_out));
        // SAFETY: both checked; writable per this function's contract.
        unsafe { lookup_result(h.handle.lookup(&request), reason_out, view_out) }
    }
}

/// As `wk_tag_cache_store`, for this channel (`tag->channel_key` is checked but not used: the
/// body is stored under the handle's channel).
///
/// # Safety
///
/// `channel` must be NULL or a live handle; the rest as `wk_tag_cache_store`.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_channel_store(
    channel: *const wk_tag_channel,
    tag: *const wk_tag_in,
    stored_out: *mut u8,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_tag_channel, channel);
        // SAFETY: forwarded from this function's contract.
        let tag = tri!(unsafe { in_ref(tag) });
        let stored_out = check_out!(stored_out);
        tri!(check_view_out(view_out));
        // SAFETY: forwarded from this function's contract.
        let parts = tri!(unsafe { parts_arg(tag, Some(h.local_node_id)) });
        // SAFETY: both checked; writable per this function's contract.
        unsafe { store_result(h.handle.store(&parts), stored_out, view_out) }
    }
}

/// Writes a view of the channel's current body to `*view_out`; `WK_STATUS_NOT_FOUND` when it
/// has none.
///
/// # Safety
///
/// `channel` must be NULL or a live handle; `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_channel_current(
    channel: *const wk_tag_channel,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_tag_channel, channel);
        let view_out = check_out!(view_out);
        match h.handle.current() {
            Some(tag) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { give_view(view_out, Some(tag)) };
                WK_STATUS_OK
            }
            None => WK_STATUS_NOT_FOUND,
        }
    }
}

/// Adds a reference: `*channel_out` is a handle to the same cell, freed separately.
///
/// # Safety
///
/// `channel` must be NULL or a live handle; `channel_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_channel_clone(
    channel: *const wk_tag_channel,
    channel_out: *mut *mut wk_tag_channel,
) -> wk_status {
    ffi_panic_boundary! {
        let channel_out = check_out!(channel_out);
        let arc = try_clone!(wk_tag_channel, channel);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(channel_out, wk_tag_channel::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops the channel handle (the cache keeps the channel). NULL is a no-op; a handle detected
/// as already freed is ignored.
///
/// # Safety
///
/// `channel` must be NULL or a live handle not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_channel_free(channel: *mut wk_tag_channel) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_channel::free(channel) }
    }
}

/// Writes a view of `channel`'s current body to `*view_out` (what upstream's `CurrentRef`
/// reads: `wk_tag_view_info` gives the reference); `WK_STATUS_NOT_FOUND` when it has none.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` readable for its length; `view_out` NULL or
/// writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_current(
    cache: *const wk_tag_cache,
    channel: wk_str,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        let view_out = check_out!(view_out);
        match c.cache.current(channel) {
            Some(tag) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { give_view(view_out, Some(tag)) };
                WK_STATUS_OK
            }
            None => WK_STATUS_NOT_FOUND,
        }
    }
}

/// Upstream's `LookupTag`: a view of `channel`'s body if its key is `tag_key`, refreshing its
/// access time; `WK_STATUS_NOT_FOUND` otherwise.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` and `tag_key` readable for their lengths;
/// `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_lookup_tag(
    cache: *const wk_tag_cache,
    channel: wk_str,
    tag_key: wk_str,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let tag_key = tri!(unsafe { key_arg(tag_key) });
        let view_out = check_out!(view_out);
        match c.cache.lookup_tag(channel, tag_key) {
            Some(tag) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { give_view(view_out, Some(tag)) };
                WK_STATUS_OK
            }
            None => WK_STATUS_NOT_FOUND,
        }
    }
}

/// Upstream's `IsSourceStale`: writes true to `*stale_out` when `channel`'s current tag records
/// `source_channel` with a source version below `source_version` (false with no tag or no
/// source).
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` and `source_channel` readable for their
/// lengths; `stale_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_is_source_stale(
    cache: *const wk_tag_cache,
    channel: wk_str,
    source_channel: wk_str,
    source_version: u64,
    stale_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let source = tri!(unsafe { key_arg(source_channel) });
        let stale_out = check_out!(stale_out);
        let stale = c.cache.is_source_stale(channel, source, source_version);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(stale_out, stale) };
        WK_STATUS_OK
    }
}

/// One cleanup page, for a host timer: visits up to `limit` channels (at most
/// `WK_TAG_CLEANUP_LIMIT_MAX`, else `WK_STATUS_INVALID_ARGUMENT`) from where the last page
/// stopped, reclaiming bodies idle past the TTL at `now_ns` (the clock's unix nanoseconds,
/// `wk_tag_cache_now`) and unlinking channels without a body. A hit marks its body with the
/// current cleanup tick, which pages end: a body hit in the running tick is never reclaimed, one
/// hit in an ended tick counts as hit at its end. A TTL of 0 or a limit of 0 does nothing (an
/// all-zero page). Pages run one at a time (a second caller waits).
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `page_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_cleanup(
    cache: *const wk_tag_cache,
    now_ns: i64,
    limit: u32,
    page_out: *mut wk_tag_cleanup_page,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        let page_out = check_out!(page_out);
        if limit > WK_TAG_CLEANUP_LIMIT_MAX {
            return WK_STATUS_INVALID_ARGUMENT;
        }
        let page = wk_tag_cleanup_page::from(c.cache.cleanup_expired(now_ns, limit as usize));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(page_out, page) };
        WK_STATUS_OK
    }
}

/// Writes the cache's counts (`entries`: channels with a cell) as the first `counts_size` bytes
/// of a `wk_tag_counts` (at least `WK_TAG_COUNTS_MIN_SIZE`, else `WK_STATUS_INVALID_ARGUMENT`).
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `counts_out` NULL or writable for `counts_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_counts(
    cache: *const wk_tag_cache,
    counts_out: *mut wk_tag_counts,
    counts_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        let counts_out = check_out!(counts_out);
        let counts = wk_tag_counts::of(c.cache.counts(), c.cache.channels());
        // SAFETY: checked by `check_out!`; `counts_size` writable bytes per the contract.
        unsafe { write_sized(counts_out, counts_size, WK_TAG_COUNTS_MIN_SIZE, counts) }
    }
}
