//! The follower hit as a host runs it inline (the futex shape, `wkcore::tag::hot`): the layout
//! of the words a host reads and writes with its own atomics, and the one call it crosses for
//! when its inline hit cannot answer, `wk_tag_cache_lookup_hot`.
//!
//! # What a host holds
//!
//! Per channel: a `wk_tag_channel` handle (keeps the cell and its generation word alive), a
//! `wk_tag_view` of the body it hits on (keeps the body, its marks and every pointer into it
//! alive), the generation that body belongs to, and copies of the body's fence fields (or
//! pointers into the view). Per cache: the tick word and the hit rows (alive while any handle
//! of the cache is).
//!
//! # The inline hit
//!
//! 1. Load `*generation_word` (at least acquire). Not equal to the held generation (a swap in
//!    flight, a newer snapshot, a retired cell: `WK_TAG_GEN_WRITERS_MASK`, `WK_TAG_GEN_RETIRED`):
//!    call `wk_tag_cache_lookup_hot` and hold what it returns instead.
//! 2. Run the fence (docs/TAG.md: key, tag version, subscriber version, source key, source
//!    version, topology, in that order) on the held fields.
//! 3. On a hit, mark it: load `*tick` and `*touched` (relaxed) and store the tick into
//!    `*touched` only when they differ.
//! 4. Add 1 (relaxed) to counter `reason` of one of the `WK_TAG_HOT_HIT_ROWS` hit rows (row `r`
//!    starts at `hit_rows + r * hit_row_stride`): the cache's counts and metrics include them.
//!
//! A miss on the held body is answered the same way (its reason, the held body), after the
//! checks `wk_tag_cache_lookup` makes of a request (a hit's request matches the held body, so it
//! passes them).
//!
//! Everything else crosses: stores, cleanups, the current body, the body by key.

use std::sync::Arc;

use wkcore::tag::host_layout;

use super::cache::{wk_tag_cache, wk_tag_channel, Channel};
use super::types::{in_ref, key_arg, lookup_arg, wk_tag_lookup_request, wk_tag_partition_view};
use super::view::{view_raw, wk_tag_view};
use crate::coord::ledger::tri;
use crate::handle::{check_out, try_ref, write_out, ArcCastPtr, Guarded};
use crate::metrics::wk_str;
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_OK};

/// The version of the inline hit's layout and protocol; a host built for another refuses to
/// start (it compares this constant, compiled in, with `wk_tag_hot_layout_version()`).
pub const WK_TAG_HOT_LAYOUT_VERSION: u32 = 1;
/// The generation word's count of swaps in flight (its low 16 bits).
pub const WK_TAG_GEN_WRITERS_MASK: u64 = 0xffff;
/// One swap done, in the generation word.
pub const WK_TAG_GEN_VERSION_ONE: u64 = 0x1_0000;
/// The generation word's retired bit: the cell was reclaimed (never cleared).
pub const WK_TAG_GEN_RETIRED: u64 = 0x8000_0000_0000_0000;
/// How many hit rows a cache has.
pub const WK_TAG_HOT_HIT_ROWS: u32 = 32;
/// Counters in a hit row: one per `WK_TAG_LOOKUP_*` reason, by value, and one unused.
pub const WK_TAG_HOT_HIT_ROW_COUNTERS: u32 = 8;

// cbindgen writes only literal constants; these pin them to the core's layout.
const _: () = {
    assert!(WK_TAG_HOT_LAYOUT_VERSION == host_layout::VERSION);
    assert!(WK_TAG_GEN_WRITERS_MASK == host_layout::GEN_WRITERS_MASK);
    assert!(WK_TAG_GEN_VERSION_ONE == host_layout::GEN_VERSION_ONE);
    assert!(WK_TAG_GEN_RETIRED == host_layout::GEN_RETIRED);
    assert!(WK_TAG_HOT_HIT_ROWS as usize == host_layout::HIT_ROWS);
    assert!(WK_TAG_HOT_HIT_ROW_COUNTERS as usize == host_layout::HIT_ROW_COUNTERS);
};
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<wk_tag_hot>() == 112);

/// What `wk_tag_cache_lookup_hot` writes, whole, on `WK_STATUS_OK`. Every pointer is 8-byte
/// aligned and points into the library's memory; the host touches the words only with atomic
/// operations. The caller owns `channel` and `view` (free them with `wk_tag_channel_free` and
/// `wk_tag_view_free`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct wk_tag_hot {
    /// A new handle on the channel's cell; NULL when the channel has no live cell, or when the
    /// cell is the one `known_generation_word` names (`same_cell` 1).
    pub channel: *mut wk_tag_channel,
    /// A new view of the current body, on a hit and on every miss from the key check on (NULL
    /// for `missing_ref`).
    pub view: *mut wk_tag_view,
    /// The cell's generation word (NULL without a live cell), valid while a handle of the cell
    /// is.
    pub generation_word: *mut u64,
    /// The cache's tick word (NULL without a live cell), valid while a handle of the cache or
    /// of one of its channels is.
    pub tick: *mut u64,
    /// The cache's first hit row (NULL without a live cell), valid as `tick`.
    pub hit_rows: *mut u64,
    /// The body's hit mark (NULL without a body), valid while a view of the body is.
    pub touched: *mut u64,
    /// The body's exact access time, unix ns (read only; NULL without a body), valid as
    /// `touched`.
    pub last_access: *mut u64,
    /// The generation `view`'s body belongs to, when `stable` is 1 (else 0).
    pub generation: u64,
    /// The body's first partition, zero-copy (all zero when it has none or there is no body).
    pub partition: wk_tag_partition_view,
    /// The distance between two hit rows, in 64-bit words.
    pub hit_row_stride: u32,
    /// The look-up's reason (`WK_TAG_LOOKUP_*`), counted by the library.
    pub reason: u8,
    /// 1 when the body and `generation` belong together: while `*generation_word` equals
    /// `generation`, the body is the channel's current one. 0: do not hold it for inline hits.
    pub stable: u8,
    /// 1 when the cell is the one `known_generation_word` names (`channel` is then NULL).
    pub same_cell: u8,
    /// 1 when `partition` is the body's first partition.
    pub has_partition: u8,
}

/// The layout version of the library (`WK_TAG_HOT_LAYOUT_VERSION` of the header it was built
/// with). Any thread may call it. (It cannot panic; under the boundary, a panic would answer a
/// value no layout has, which a host refuses as it refuses any other mismatch.)
#[no_mangle]
pub extern "C" fn wk_tag_hot_layout_version() -> u32 {
    ffi_panic_boundary! { WK_TAG_HOT_LAYOUT_VERSION }
}

/// The look-up a host that runs hits inline crosses for (module docs): `wk_tag_cache_lookup`
/// through the index, which makes no cell for an unknown channel, and writes `*hot_out` whole:
/// the reason, a view of the current body, the cell's words and, when they belong together, the
/// generation of that body. `known_generation_word` is the generation word of the cell the host
/// holds, or NULL: it is only compared, never read. Checks `channel` and `request` as
/// `wk_tag_cache_lookup` does, before looking.
///
/// # Safety
///
/// `cache` must be NULL or a live handle; `channel` readable for its length; `request` NULL or
/// readable (its strings and refs for their lengths, during the call only); `hot_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_cache_lookup_hot(
    cache: *const wk_tag_cache,
    channel: wk_str,
    request: *const wk_tag_lookup_request,
    known_generation_word: *const u64,
    hot_out: *mut wk_tag_hot,
) -> wk_status {
    ffi_panic_boundary! {
        let c = try_ref!(wk_tag_cache, cache);
        // SAFETY: forwarded from this function's contract.
        let channel = tri!(unsafe { key_arg(channel) });
        // SAFETY: forwarded from this function's contract.
        let request = tri!(unsafe { in_ref(request).and_then(|r| lookup_arg(r)) });
        let hot_out = check_out!(hot_out);
        let found = c.cache.lookup_hosted(channel, &request);
        let mut hot = wk_tag_hot {
            channel: std::ptr::null_mut(),
            view: std::ptr::null_mut(),
            generation_word: std::ptr::null_mut(),
            tick: std::ptr::null_mut(),
            hit_rows: std::ptr::null_mut(),
            touched: std::ptr::null_mut(),
            last_access: std::ptr::null_mut(),
            generation: found.generation.unwrap_or(0),
            partition: wk_tag_partition_view {
                node_id: 0,
                bytes: std::ptr::null(),
                bytes_len: 0,
                ends: std::ptr::null(),
                uid_count: 0,
            },
            hit_row_stride: 0,
            reason: found.lookup.reason() as u8,
            stable: u8::from(found.generation.is_some()),
            same_cell: 0,
            has_partition: 0,
        };
        if let Some(handle) = found.channel {
            let words = handle.host_words();
            hot.generation_word = words.generation.as_ptr();
            hot.tick = words.tick.as_ptr();
            hot.hit_rows = words.hit_rows[0].as_ptr().cast_mut().cast();
            hot.hit_row_stride = (std::mem::size_of_val(&words.hit_rows[0])
                / std::mem::size_of::<u64>()) as u32;
            if std::ptr::eq(hot.generation_word.cast_const(), known_generation_word) {
                hot.same_cell = 1;
            } else {
                let local_node_id = c.cache.local_node_id();
                hot.channel = wk_tag_channel::into_raw(Arc::new(Guarded::new::<wk_tag_channel>(
                    Channel { handle, local_node_id },
                )));
            }
        }
        if let Some(body) = found.lookup.into_tag() {
            let marks = body.host_marks();
            hot.touched = marks.touched.as_ptr();
            hot.last_access = marks.last_access.as_ptr();
            if let Some(p) = body.partitions().first() {
                hot.partition = wk_tag_partition_view::of(p);
                hot.has_partition = 1;
            }
            hot.view = view_raw(body);
        }
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(hot_out, hot) };
        WK_STATUS_OK
    }
}
