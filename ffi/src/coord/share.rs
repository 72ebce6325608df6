//! The shared-subscription topic helpers through the C ABI (`wkcore::coord::share`):
//! `wk_share_topic_build` writes `$share/{group}/{filter}` into the caller's buffer, and
//! `wk_share_topic_split` tells where the group and the real filter lie in the caller's topic, so
//! that an ACL check matches the filter instead of the whole string (which silently refuses every
//! member of the group).
//!
//! Strings are bytes + length and must be UTF-8. Both calls are pure: no handle, no state; any
//! thread may call them at any time.

use wkcore::coord::{self, ShareError};

use super::ledger::tri;
use super::status::{WK_STATUS_COORD_INVALID_SHARE_GROUP, WK_STATUS_COORD_INVALID_TOPIC_FILTER};
use crate::handle::{check_out, write_out};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_BUFFER_TOO_SMALL, WK_STATUS_NULL_ARGUMENT, WK_STATUS_OK};

/// The longest topic the helpers build or split, in bytes (an MQTT string's limit); a buffer of
/// this many bytes always holds what `wk_share_topic_build` writes.
pub const WK_SHARE_TOPIC_MAX: usize = 65535;
/// The length of the prefix `$share/` that every built topic starts with.
pub const WK_SHARE_PREFIX_LEN: usize = 7;

const _: () = {
    assert!(WK_SHARE_TOPIC_MAX == coord::SHARE_TOPIC_MAX);
    assert!(WK_SHARE_PREFIX_LEN == coord::SHARE_PREFIX.len());
    assert!(std::mem::size_of::<wk_share_split>() == 8 + 4 * std::mem::size_of::<usize>());
};

/// Where the parts of a topic lie, as offsets into the caller's own bytes (nothing is copied).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_share_split {
    /// 1 for a shared subscription (`$share/{group}/{filter}`), 0 for a plain filter.
    pub shared: u32,
    /// Always 0.
    pub reserved: u32,
    /// Where the group starts (0 for a plain filter).
    pub group_offset: usize,
    /// The group's length (0 for a plain filter).
    pub group_len: usize,
    /// Where the real filter starts: what an ACL must match (0 for a plain filter).
    pub filter_offset: usize,
    /// The real filter's length (the whole topic's for a plain filter).
    pub filter_len: usize,
}

/// The status of a refused group, filter or topic.
fn status_of(e: ShareError) -> wk_status {
    if e.is_group() {
        WK_STATUS_COORD_INVALID_SHARE_GROUP
    } else {
        WK_STATUS_COORD_INVALID_TOPIC_FILTER
    }
}

/// The bytes at `(ptr, len)`: NULL is empty when `len` is 0 (else `NULL_ARGUMENT`); a length
/// beyond `isize::MAX` cannot be a real buffer and is `too_long`.
///
/// # Safety
///
/// `ptr` NULL or `len` readable bytes, unchanged for `'a`.
unsafe fn bytes<'a>(
    ptr: *const u8,
    len: usize,
    too_long: wk_status,
) -> Result<&'a [u8], wk_status> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(WK_STATUS_NULL_ARGUMENT)
        };
    }
    if len > isize::MAX as usize {
        return Err(too_long);
    }
    // SAFETY: non-NULL, `len` at most isize::MAX, readable per the contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `bytes` as UTF-8, else `invalid`.
fn utf8(bytes: &[u8], invalid: wk_status) -> Result<&str, wk_status> {
    std::str::from_utf8(bytes).map_err(|_| invalid)
}

/// Writes `$share/{group}/{filter}` to `buf[0..cap]` and its length to `*len_out`.
///
/// `group` is `group_len` bytes of UTF-8: at least one, none of them `/`, `+`, `#` or U+0000
/// (else `WK_STATUS_COORD_INVALID_SHARE_GROUP`). `filter` is `filter_len` bytes of UTF-8: a
/// topic filter, not empty, `+` and `#` only as whole levels, `#` only last, no U+0000, and not
/// itself a shared subscription (else `WK_STATUS_COORD_INVALID_TOPIC_FILTER`, also when the topic
/// would exceed `WK_SHARE_TOPIC_MAX` bytes). A NULL string with length 0 is empty (and so
/// refused); with a length above 0, `WK_STATUS_NULL_ARGUMENT`. Pointers are checked first,
/// then the group, then the filter.
///
/// The topic is `WK_SHARE_PREFIX_LEN + group_len + 1 + filter_len` bytes, not NUL-terminated;
/// when `cap` is smaller, `WK_STATUS_BUFFER_TOO_SMALL`, and nothing is written anywhere (a
/// buffer of `WK_SHARE_TOPIC_MAX` bytes is always enough). The group and filter are checked
/// before the buffer. `buf` may be NULL only when `cap` is 0.
///
/// # Safety
///
/// `group` NULL or `group_len` readable bytes; `filter` NULL or `filter_len` readable bytes;
/// `buf` NULL or `cap` writable bytes that overlap neither input; `len_out` NULL or writable.
/// Any thread.
#[no_mangle]
pub unsafe extern "C" fn wk_share_topic_build(
    group: *const u8,
    group_len: usize,
    filter: *const u8,
    filter_len: usize,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let len_out = check_out!(len_out);
        if buf.is_null() && cap != 0 {
            return WK_STATUS_NULL_ARGUMENT;
        }
        // SAFETY: forwarded from this function's contract.
        let group = tri!(unsafe { bytes(group, group_len, WK_STATUS_COORD_INVALID_SHARE_GROUP) });
        // SAFETY: forwarded from this function's contract.
        let filter = tri!(unsafe { bytes(filter, filter_len, WK_STATUS_COORD_INVALID_TOPIC_FILTER) });
        // Pointers first, then the group, then the filter (the order the Go package keeps).
        let group = tri!(utf8(group, WK_STATUS_COORD_INVALID_SHARE_GROUP));
        tri!(coord::check_group(group).map_err(status_of));
        let filter = tri!(utf8(filter, WK_STATUS_COORD_INVALID_TOPIC_FILTER));
        let len = tri!(coord::share_topic_len(group, filter).map_err(status_of));
        if len > cap {
            return WK_STATUS_BUFFER_TOO_SMALL;
        }
        let parts = [coord::SHARE_PREFIX.as_bytes(), group.as_bytes(), b"/", filter.as_bytes()];
        let mut at = 0;
        for part in parts {
            // SAFETY: `buf` is non-NULL (cap >= len > 0) with `cap >= len` writable bytes per the
            // contract, which also rules out an overlap with the inputs; the parts add up to
            // `len`, so `at + part.len() <= len`.
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), buf.add(at), part.len()) };
            at += part.len();
        }
        debug_assert_eq!(at, len);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(len_out, len) };
        WK_STATUS_OK
    }
}

/// Splits the subscription topic `topic[0..topic_len]` (UTF-8) for ACL matching and writes where
/// its parts lie to `*split_out`: for `$share/{group}/{filter}`, `shared` 1 and the group's and
/// the real filter's offsets and lengths in `topic`; for any other topic, `shared` 0 and the whole
/// topic as the filter. An ACL must match the filter, never the whole `$share/...` string.
///
/// A topic whose first level is `$share` must have a group (`$share`, `$share/`, `$share//f`:
/// `WK_STATUS_COORD_INVALID_SHARE_GROUP`, as a group with `+`, `#` or U+0000) and a filter
/// (`$share/g`, `$share/g/`: `WK_STATUS_COORD_INVALID_TOPIC_FILTER`). The filter, or a plain
/// topic, follows the rules of `wk_share_topic_build`; a topic that is not UTF-8, empty, or longer
/// than `WK_SHARE_TOPIC_MAX` bytes is `WK_STATUS_COORD_INVALID_TOPIC_FILTER`. `topic` may be NULL
/// only with length 0 (then refused as empty).
///
/// # Safety
///
/// `topic` NULL or `topic_len` readable bytes; `split_out` NULL or writable. Any thread.
#[no_mangle]
pub unsafe extern "C" fn wk_share_topic_split(
    topic: *const u8,
    topic_len: usize,
    split_out: *mut wk_share_split,
) -> wk_status {
    ffi_panic_boundary! {
        let split_out = check_out!(split_out);
        // SAFETY: forwarded from this function's contract.
        let topic = tri!(unsafe { bytes(topic, topic_len, WK_STATUS_COORD_INVALID_TOPIC_FILTER) });
        let text = tri!(utf8(topic, WK_STATUS_COORD_INVALID_TOPIC_FILTER));
        let split = tri!(coord::split_share_topic(text).map_err(status_of));
        let base = text.as_ptr() as usize;
        let offset = |s: &str| s.as_ptr() as usize - base;
        let out = match split.group {
            Some(group) => wk_share_split {
                shared: 1,
                reserved: 0,
                group_offset: offset(group),
                group_len: group.len(),
                filter_offset: offset(split.filter),
                filter_len: split.filter.len(),
            },
            None => wk_share_split {
                shared: 0,
                reserved: 0,
                group_offset: 0,
                group_len: 0,
                filter_offset: 0,
                filter_len: split.filter.len(),
            },
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(split_out, out) };
        WK_STATUS_OK
    }
}
