//! `wk_tag_view`: one held tag body (`Arc<DeliveryTag>`), the immutable snapshot a look-up,
//! store or build returned. Its fields and partitions are read zero-copy: every pointer
//! `wk_tag_view_info` and `wk_tag_view_partition` write points into the body, which the view
//! keeps alive until `wk_tag_view_free` (a later store or cleanup never changes it).

use std::sync::Arc;

use wkcore::tag::DeliveryTag;

use super::types::{wk_tag_info, wk_tag_partition_view, WK_TAG_INFO_MIN_SIZE};
use crate::handle::Guarded;
use crate::handle::{check_out, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_NOT_FOUND, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to one tag body. Any thread may read it, concurrently.
#[allow(non_camel_case_types)]
pub struct wk_tag_view {
    _private: [u8; 0],
}

impl Castable for wk_tag_view {
    type RustType = Arc<DeliveryTag>;
    const MAGIC: u64 = 0x776b_5447_5657_0003; // "wkTGVW" + ABI generation
}

/// A new view handle of `tag` for the host (one small allocation).
pub(crate) fn view_raw(tag: Arc<DeliveryTag>) -> *mut wk_tag_view {
    wk_tag_view::into_raw(Arc::new(Guarded::new::<wk_tag_view>(tag)))
}

/// A new view of `tag`, or NULL for none.
pub(crate) fn view_raw_opt(tag: Option<Arc<DeliveryTag>>) -> *mut wk_tag_view {
    tag.map_or(std::ptr::null_mut(), view_raw)
}

/// Writes a view of `tag` (or NULL) to `out` when the host asked for one (`out` non-NULL; it
/// was checked aligned).
///
/// # Safety
///
/// `out` must be NULL or aligned and writable for one pointer.
pub(crate) unsafe fn give_view(out: *mut *mut wk_tag_view, tag: Option<Arc<DeliveryTag>>) {
    if !out.is_null() {
        // SAFETY: non-NULL, checked aligned by the caller, writable per the contract.
        unsafe { write_out(out, view_raw_opt(tag)) };
    }
}

/// Writes the body's fields to `*info_out` (the first `info_size` bytes of a `wk_tag_info`, at
/// least `WK_TAG_INFO_MIN_SIZE`, else `WK_STATUS_INVALID_ARGUMENT`). Strings and refs point into
/// the body, valid until the view is freed.
///
/// # Safety
///
/// `view` must be NULL or a live handle; `info_out` NULL or writable for `info_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_info(
    view: *const wk_tag_view,
    info_out: *mut wk_tag_info,
    info_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let tag = try_ref!(wk_tag_view, view);
        let info_out = check_out!(info_out);
        // SAFETY: checked by `check_out!`; `info_size` writable bytes per the contract.
        unsafe { write_sized(info_out, info_size, WK_TAG_INFO_MIN_SIZE, wk_tag_info::of(tag)) }
    }
}

/// Writes partition `index` (`0..partition_count`, else `WK_STATUS_NOT_FOUND`) to
/// `*partition_out`, zero-copy: its UIDs' bytes and end offsets point into the body, valid until
/// the view is freed. Allocates nothing.
///
/// # Safety
///
/// `view` must be NULL or a live handle; `partition_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_partition(
    view: *const wk_tag_view,
    index: usize,
    partition_out: *mut wk_tag_partition_view,
) -> wk_status {
    ffi_panic_boundary! {
        let tag = try_ref!(wk_tag_view, view);
        let partition_out = check_out!(partition_out);
        let Some(p) = tag.partitions().get(index) else {
            return WK_STATUS_NOT_FOUND;
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(partition_out, wk_tag_partition_view::of(p)) };
        WK_STATUS_OK
    }
}

/// Writes the index of `node_id`'s partition to `*index_out` (`WK_STATUS_NOT_FOUND` when the
/// tag has none for it).
///
/// # Safety
///
/// `view` must be NULL or a live handle; `index_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_find_partition(
    view: *const wk_tag_view,
    node_id: u64,
    index_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let tag = try_ref!(wk_tag_view, view);
        let index_out = check_out!(index_out);
        let Some(i) = tag.partitions().iter().position(|p| p.node_id == node_id) else {
            return WK_STATUS_NOT_FOUND;
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(index_out, i) };
        WK_STATUS_OK
    }
}

/// True when both views hold the same body (the same snapshot, not merely equal fields); false
/// for a NULL or invalid handle.
///
/// # Safety
///
/// Each of `a` and `b` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_same(a: *const wk_tag_view, b: *const wk_tag_view) -> bool {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        match unsafe { (wk_tag_view::try_ref(a), wk_tag_view::try_ref(b)) } {
            (Ok(a), Ok(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Adds a reference: `*view_out` is another view of the same body, freed separately.
///
/// # Safety
///
/// `view` must be NULL or a live handle; `view_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_clone(
    view: *const wk_tag_view,
    view_out: *mut *mut wk_tag_view,
) -> wk_status {
    ffi_panic_boundary! {
        let view_out = check_out!(view_out);
        let arc = try_clone!(wk_tag_view, view);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(view_out, wk_tag_view::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops the view; the body goes with its last holder (views, the cache or leader). NULL is a
/// no-op; a view detected as already freed is ignored.
///
/// # Safety
///
/// `view` must be NULL or a live handle not used again after this call (nor any pointer its
/// info or partitions gave, unless another view of the body lives).
#[no_mangle]
pub unsafe extern "C" fn wk_tag_view_free(view: *mut wk_tag_view) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_tag_view::free(view) }
    }
}
