//! `wk_admission_registry`: slots by id (`wkcore::admission::AdmissionRegistry<u64>`).
//!
//! The registry holds its own reference to each inserted slot; handles given out by
//! `wk_admission_registry_get` are new references that the caller frees. Use it for look-ups
//! by id, not on the per-proposal path (keep the `wk_slot` handle for that).
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other.

use std::sync::Arc;

use wkcore::admission::AdmissionRegistry;

use super::slot::{wk_slot, SlotRef};
use super::status::WK_STATUS_SLOT_NOT_FOUND;
use crate::handle::{check_out, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_ALREADY_EXISTS, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a registry of slots.
#[allow(non_camel_case_types)]
pub struct wk_admission_registry {
    _private: [u8; 0],
}

impl Castable for wk_admission_registry {
    type RustType = AdmissionRegistry<u64, SlotRef>;
    const MAGIC: u64 = 0x776b_5245_4749_0002; // "wkREGI" + ABI generation
}

/// Creates an empty registry. On `WK_STATUS_OK` the caller owns `*registry_out` and frees it
/// with `wk_admission_registry_free`.
///
/// # Safety
///
/// `registry_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_new(
    registry_out: *mut *mut wk_admission_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let registry = Arc::new(Guarded::new::<wk_admission_registry>(AdmissionRegistry::new()));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, wk_admission_registry::into_raw(registry)) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*registry_out` is a handle to the same registry, freed separately.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle; `registry_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_clone(
    registry: *const wk_admission_registry,
    registry_out: *mut *mut wk_admission_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let arc = try_clone!(wk_admission_registry, registry);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, wk_admission_registry::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the registry (and its references to slots) goes with the last one.
/// NULL is a no-op; a handle detected as already freed is ignored (best effort).
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_free(registry: *mut wk_admission_registry) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_admission_registry::free(registry) }
    }
}

/// Inserts `slot` under its id (the registry takes its own reference; the caller keeps its
/// handle). `WK_STATUS_ALREADY_EXISTS` when a slot with that id is registered.
///
/// # Safety
///
/// `registry` and `slot` must each be NULL or a live handle of their type.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_insert(
    registry: *const wk_admission_registry,
    slot: *const wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = try_ref!(wk_admission_registry, registry);
        let slot = SlotRef(try_clone!(wk_slot, slot));
        match registry.insert(slot) {
            Ok(()) => WK_STATUS_OK,
            Err(_existing) => WK_STATUS_ALREADY_EXISTS,
        }
    }
}

/// Looks up a slot by id. On `WK_STATUS_OK`, `*slot_out` is a new handle the caller frees with
/// `wk_slot_free`; `WK_STATUS_SLOT_NOT_FOUND` when no slot has that id.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle; `slot_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_get(
    registry: *const wk_admission_registry,
    slot_id: u64,
    slot_out: *mut *mut wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = try_ref!(wk_admission_registry, registry);
        let slot_out = check_out!(slot_out);
        match registry.get(slot_id) {
            Some(slot) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(slot_out, wk_slot::into_raw(slot.0)) };
                WK_STATUS_OK
            }
            None => WK_STATUS_SLOT_NOT_FOUND,
        }
    }
}

/// Removes the registry's reference to slot `slot_id` (handles the host holds stay valid).
/// `WK_STATUS_SLOT_NOT_FOUND` when no slot has that id.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle.
#[no_mangle]
pub unsafe extern "C" fn wk_admission_registry_remove(
    registry: *const wk_admission_registry,
    slot_id: u64,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = try_ref!(wk_admission_registry, registry);
        match registry.remove(slot_id) {
            Some(_slot) => WK_STATUS_OK,
            None => WK_STATUS_SLOT_NOT_FOUND,
        }
    }
}
