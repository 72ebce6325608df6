//! `wk_anchor_table`: scheduled-trigger anchors by id (`wkcore::coord::AnchorTable`).
//!
//! Each trigger (a cron rule, a sweep turn, a monitor check) owns an anchor: the last-fired
//! value, or unset. `wk_anchor_table_try_fire` is the whole decision in one call: fired (this
//! caller advanced the anchor and must fire), not due, lost (another caller fired first), or
//! anchored first-seen (an unset anchor is anchored at `now` without firing; the first firing
//! comes one period later).
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other.

use std::sync::Arc;

use wkcore::coord::{AnchorTable, AnchorTableError, Fire};

use super::ledger::{check_time, tri};
use super::status::WK_STATUS_COORD_INVALID_CAPACITY;
use super::types::{wk_fire, wk_fire_kind, WK_COORD_TIME_UNSET};
use crate::handle::{check_out, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded};
use crate::panic::ffi_panic_boundary;
use crate::status::{
    wk_status, WK_STATUS_ALREADY_EXISTS, WK_STATUS_FULL, WK_STATUS_NOT_FOUND, WK_STATUS_OK,
};

/// Opaque, `Arc`-owned handle to an anchor table.
#[allow(non_camel_case_types)]
pub struct wk_anchor_table {
    _private: [u8; 0],
}

impl Castable for wk_anchor_table {
    type RustType = AnchorTable;
    const MAGIC: u64 = 0x776b_414e_4348_0003; // "wkANCH" + ABI generation
}

fn status_of(e: AnchorTableError) -> wk_status {
    match e {
        AnchorTableError::NotFound => WK_STATUS_NOT_FOUND,
        AnchorTableError::Exists => WK_STATUS_ALREADY_EXISTS,
        AnchorTableError::Full => WK_STATUS_FULL,
        AnchorTableError::InvalidCapacity => WK_STATUS_COORD_INVALID_CAPACITY,
        AnchorTableError::InvalidValue => super::status::WK_STATUS_COORD_INVALID_TIME,
    }
}

/// Creates an empty table of at most `capacity` anchors (`1..=WK_ANCHOR_TABLE_CAPACITY_MAX`,
/// else `WK_STATUS_COORD_INVALID_CAPACITY`). On `WK_STATUS_OK` the caller owns `*table_out`.
///
/// # Safety
///
/// `table_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_new(
    capacity: u64,
    table_out: *mut *mut wk_anchor_table,
) -> wk_status {
    ffi_panic_boundary! {
        let table_out = check_out!(table_out);
        let Ok(capacity) = usize::try_from(capacity) else {
            return WK_STATUS_COORD_INVALID_CAPACITY;
        };
        let table = tri!(AnchorTable::new(capacity).map_err(status_of));
        let handle = wk_anchor_table::into_raw(Arc::new(Guarded::new::<wk_anchor_table>(table)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(table_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*table_out` is a handle to the same table, freed separately.
///
/// # Safety
///
/// `table` must be NULL or a live handle; `table_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_clone(
    table: *const wk_anchor_table,
    table_out: *mut *mut wk_anchor_table,
) -> wk_status {
    ffi_panic_boundary! {
        let table_out = check_out!(table_out);
        let arc = try_clone!(wk_anchor_table, table);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(table_out, wk_anchor_table::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `table` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_free(table: *mut wk_anchor_table) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_anchor_table::free(table) }
    }
}

/// Adds trigger `id`, unset (`value == WK_COORD_TIME_UNSET`) or anchored at `value`.
/// `WK_STATUS_ALREADY_EXISTS`, `WK_STATUS_FULL` (capacity reached): nothing added.
///
/// # Safety
///
/// `table` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_insert(
    table: *const wk_anchor_table,
    id: u64,
    value: u64,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        let value = (value != WK_COORD_TIME_UNSET).then_some(value);
        match table.insert(id, value) {
            Ok(()) => WK_STATUS_OK,
            Err(e) => status_of(e),
        }
    }
}

/// Removes trigger `id`; `WK_STATUS_NOT_FOUND` if absent.
///
/// # Safety
///
/// `table` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_remove(
    table: *const wk_anchor_table,
    id: u64,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        match table.remove(id) {
            Ok(()) => WK_STATUS_OK,
            Err(e) => status_of(e),
        }
    }
}

/// Decides whether trigger `id` fires at `now` with `period` (module docs); `*fire_out` says
/// what happened. A set trigger is due at `anchor + max(period, 1)`: a firing always moves the
/// anchor, so of many callers exactly one fires. `WK_STATUS_NOT_FOUND` for an unknown id.
///
/// # Safety
///
/// `table` must be NULL or a live handle; `fire_out` NULL or writable for one `wk_fire`.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_try_fire(
    table: *const wk_anchor_table,
    id: u64,
    now: u64,
    period: u64,
    fire_out: *mut wk_fire,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        let fire_out = check_out!(fire_out);
        tri!(check_time(now));
        let fire = tri!(table.try_fire(id, now, period).map_err(status_of));
        let (kind, value) = match fire {
            Fire::Fired { previous } => (wk_fire_kind::Fired, previous),
            Fire::NotDue { due_at } => (wk_fire_kind::NotDue, due_at),
            Fire::Lost => (wk_fire_kind::Lost, 0),
            Fire::AnchoredFirstSeen => (wk_fire_kind::AnchoredFirstSeen, 0),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(fire_out, wk_fire { kind, reserved: 0, value }) };
        WK_STATUS_OK
    }
}

/// Advances trigger `id` from `expected` to `next`; `*won_out` is true for exactly one of many
/// racing callers with the same `expected` (never while unset: an unset anchor matches no
/// value; never when `next == expected`, which changes nothing).
///
/// # Safety
///
/// `table` must be NULL or a live handle; `won_out` NULL or writable for one `bool`.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_advance(
    table: *const wk_anchor_table,
    id: u64,
    expected: u64,
    next: u64,
    won_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        let won_out = check_out!(won_out);
        tri!(check_time(next));
        let won = tri!(table.advance(id, expected, next).map_err(status_of));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(won_out, won) };
        WK_STATUS_OK
    }
}

/// The first-seen transition: anchors an unset trigger `id` at `now` without firing;
/// `*won_out` is true for the one caller that did.
///
/// # Safety
///
/// As `wk_anchor_table_advance`.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_anchor_unset(
    table: *const wk_anchor_table,
    id: u64,
    now: u64,
    won_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        let won_out = check_out!(won_out);
        tri!(check_time(now));
        let won = tri!(table.anchor_unset(id, now).map_err(status_of));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(won_out, won) };
        WK_STATUS_OK
    }
}

/// The anchor of trigger `id`: `*value_out` is its value, or `WK_COORD_TIME_UNSET` while unset.
///
/// # Safety
///
/// `table` must be NULL or a live handle; `value_out` NULL or writable for one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_get(
    table: *const wk_anchor_table,
    id: u64,
    value_out: *mut u64,
) -> wk_status {
    ffi_panic_boundary! {
        let table = try_ref!(wk_anchor_table, table);
        let value_out = check_out!(value_out);
        let value = tri!(table.get(id).map_err(status_of));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(value_out, value.unwrap_or(WK_COORD_TIME_UNSET)) };
        WK_STATUS_OK
    }
}

/// Anchors held, a moment's view; 0 for a bad handle.
///
/// # Safety
///
/// `table` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_anchor_table_len(table: *const wk_anchor_table) -> usize {
    ffi_panic_boundary! {
        try_ref!(wk_anchor_table, table).len()
    }
}
