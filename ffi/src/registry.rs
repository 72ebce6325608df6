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

use crate::handle::{check_out, write_out, ArcCastPtr, Castable, Guarded};
use crate::panic::ffi_panic_boundary;
use crate::slot::{slot_into_raw, wk_slot};
use crate::status::wk_status;

/// Opaque, `Arc`-owned handle to a registry of slots.
#[allow(non_camel_case_types)]
pub struct wk_admission_registry {
    _private: [u8; 0],
}

impl Castable for wk_admission_registry {
    type RustType = AdmissionRegistry<u64>;
    const MAGIC: u64 = 0x776b_5245_4749_0001; // "wkREGI" + generation
}

/// Borrows the registry behind a pointer, or returns its status from the enclosing body.
macro_rules! registry_ref {
    ($ptr:expr) => {
        // SAFETY: every exported function that uses this macro requires, in its `# Safety`
        // section, that the pointer be NULL or a live registry handle kept alive by the caller
        // for the whole call; `try_ref` checks NULL, alignment and the magic word.
        match unsafe { wk_admission_registry::try_ref($ptr) } {
            Ok(registry) => &**registry,
            Err(status) => return status,
        }
    };
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
        wk_status::Ok
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
        // SAFETY: forwarded from this function's contract.
        let arc = match unsafe { wk_admission_registry::try_clone_arc(registry) } {
            Ok(arc) => arc,
            Err(status) => return status,
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, wk_admission_registry::into_raw(arc)) };
        wk_status::Ok
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
        let registry = registry_ref!(registry);
        // SAFETY: forwarded from this function's contract.
        let slot = match unsafe { wk_slot::try_ref(slot) } {
            Ok(slot) => Arc::clone(&**slot),
            Err(status) => return status,
        };
        match registry.insert(slot) {
            Ok(()) => wk_status::Ok,
            Err(_existing) => wk_status::AlreadyExists,
        }
    }
}

/// Looks up a slot by id. On `WK_STATUS_OK`, `*slot_out` is a new handle the caller frees with
/// `wk_slot_free`; `WK_STATUS_NOT_FOUND` when no slot has that id.
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
        let registry = registry_ref!(registry);
        let slot_out = check_out!(slot_out);
        match registry.get(slot_id) {
            Some(slot) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(slot_out, slot_into_raw(slot)) };
                wk_status::Ok
            }
            None => wk_status::NotFound,
        }
    }
}

/// Removes the registry's reference to slot `slot_id` (handles the host holds stay valid).
/// `WK_STATUS_NOT_FOUND` when no slot has that id.
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
        let registry = registry_ref!(registry);
        match registry.remove(slot_id) {
            Some(_slot) => wk_status::Ok,
            None => wk_status::NotFound,
        }
    }
}
