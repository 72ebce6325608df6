//! Opaque handles: the only module that casts between C pointers and Rust objects.
//!
//! In the shape of rustls-ffi's `Castable`: each opaque C type (`wk_slot`, …) is a zero-sized
//! marker struct that implements [`Castable`], naming the Rust object it stands for. Handles are
//! `Arc`-owned ([`ArcCastPtr`]): `_new` hands out `Arc::into_raw`, `_clone` adds a count,
//! `_free` drops one, and every other call borrows the object for the call's duration.
//!
//! # Use-after-free detector (best effort)
//!
//! The object behind a handle is a [`Guarded<T>`]: the value plus a magic word specific to the
//! handle type. `Drop` overwrites the word (volatile, so it is not optimised away) and every call
//! checks it, returning `WK_STATUS_INVALID_HANDLE` on mismatch. This catches many uses of a
//! freed handle and handles passed as the wrong type, and makes a double `_free` a no-op rather
//! than a double drop, **as long as the freed memory was not reused**. It is a diagnostic aid,
//! not a guarantee: using a freed handle is still undefined behaviour, and a detected one means
//! the host has a bug.
//!
//! # Pointer checks
//!
//! A handle that is NULL gives `WK_STATUS_NULL_ARGUMENT`; one that is misaligned, freed (as far
//! as the detector can tell) or of another handle type gives `WK_STATUS_INVALID_HANDLE`. Every
//! exported function borrows its handles with [`try_ref!`] (or [`try_clone!`]), which returns
//! the failure from the enclosing body as the body's return type: a status for fallible calls,
//! a neutral value ([`BadHandle`]) for getters that return a value. [`check_out!`] and
//! [`check_in_slice!`] check plain out-parameters and input arrays; [`write_sized`] writes a
//! snapshot struct whose size the caller passes, so the struct can grow.

use std::ptr;
use std::sync::Arc;

use crate::status::{
    wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_INVALID_HANDLE, WK_STATUS_NULL_ARGUMENT,
};

/// Why a handle pointer was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandleError {
    /// The pointer is NULL.
    Null,
    /// Misaligned, not live, or of another handle type.
    Invalid,
}

/// What an exported call returns when a handle argument is refused.
pub(crate) trait BadHandle {
    /// The value for `error`.
    fn bad_handle(error: HandleError) -> Self;
}

impl BadHandle for wk_status {
    fn bad_handle(error: HandleError) -> Self {
        match error {
            HandleError::Null => WK_STATUS_NULL_ARGUMENT,
            HandleError::Invalid => WK_STATUS_INVALID_HANDLE,
        }
    }
}

/// Value getters (`wk_<type>_<field>_get` returning the value) give 0 for a refused handle.
macro_rules! bad_handle_zero {
    ($($t:ty),*) => {$(
        impl BadHandle for $t {
            fn bad_handle(_: HandleError) -> Self {
                0
            }
        }
    )*};
}
bad_handle_zero!(u32, u64, usize);

impl BadHandle for () {
    fn bad_handle(_: HandleError) -> Self {}
}

/// A Rust object behind a handle, with the magic word of its handle type.
///
/// `repr(C)` puts the word at offset 0 for every `T`, so a handle of another type passed by
/// mistake is checked at the same place (and in bounds: every handle object starts with one).
#[repr(C)]
pub(crate) struct Guarded<T> {
    magic: u64,
    value: T,
}

/// The word `Drop` leaves behind ("wkDEAD!!").
const DEAD_MAGIC: u64 = 0x776b_4445_4144_2121;

impl<T> Guarded<T> {
    /// Wraps `value` for handle type `C`.
    pub(crate) fn new<C: Castable<RustType = T>>(value: T) -> Self {
        Guarded {
            magic: C::MAGIC,
            value,
        }
    }

    /// True while the object is live and belongs to handle type `C`.
    fn is<C: Castable<RustType = T>>(&self) -> bool {
        // SAFETY: `self.magic` is a valid, aligned, initialised u64 (we hold `&self`). The read
        // is volatile only so the check is not folded away because it "cannot" fail.
        unsafe { ptr::read_volatile(&self.magic) == C::MAGIC }
    }
}

impl<T> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: `self.magic` is a valid, aligned u64 we own exclusively (`&mut self`). The
        // store is volatile so it is not eliminated as dead before the deallocation.
        unsafe { ptr::write_volatile(&mut self.magic, DEAD_MAGIC) }
    }
}

impl<T> std::ops::Deref for Guarded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// Ties an opaque C type to the Rust object its pointers stand for.
pub(crate) trait Castable: Sized {
    /// The Rust object a `*const Self` points at (inside its `Arc`).
    type RustType;
    /// Magic word that identifies live objects of this handle type; distinct per type.
    const MAGIC: u64;
}

/// Arc-owned handles: the one place where their pointers are cast.
pub(crate) trait ArcCastPtr: Castable {
    /// Gives up one strong count of `arc` to C as a `*mut Self`.
    fn into_raw(arc: Arc<Guarded<Self::RustType>>) -> *mut Self {
        Arc::into_raw(arc).cast_mut().cast::<Self>()
    }

    /// Borrows the object behind `ptr` for the current call.
    ///
    /// # Safety
    ///
    /// `ptr` must be NULL or come from [`ArcCastPtr::into_raw`] for this type with at least one
    /// strong count that the caller keeps for the lifetime `'a` (the host's handle, held across
    /// the call). The magic check catches some violations; it does not make them sound.
    unsafe fn try_ref<'a>(ptr: *const Self) -> Result<&'a Guarded<Self::RustType>, HandleError> {
        if ptr.is_null() {
            return Err(HandleError::Null);
        }
        let obj = ptr.cast::<Guarded<Self::RustType>>();
        if !obj.is_aligned() {
            return Err(HandleError::Invalid);
        }
        // SAFETY: non-null and aligned; per this function's contract it points at a live
        // `Guarded<RustType>` inside an `Arc` that the caller keeps alive for 'a.
        let obj = unsafe { &*obj };
        if obj.is::<Self>() {
            Ok(obj)
        } else {
            Err(HandleError::Invalid)
        }
    }

    /// A new strong count of the object behind `ptr`.
    ///
    /// # Safety
    ///
    /// As [`ArcCastPtr::try_ref`].
    unsafe fn try_clone_arc(ptr: *const Self) -> Result<Arc<Guarded<Self::RustType>>, HandleError> {
        // SAFETY: forwarded contract; `try_ref` checks NULL, alignment and the magic word.
        let _live = unsafe { Self::try_ref(ptr) }?;
        let raw = ptr.cast::<Guarded<Self::RustType>>();
        // SAFETY: `raw` came from `Arc::into_raw` for this exact type (contract) and its count
        // is at least one for the duration of the call, so bumping it and then taking ownership
        // of the bumped count is balanced.
        unsafe {
            Arc::increment_strong_count(raw);
            Ok(Arc::from_raw(raw))
        }
    }

    /// Drops the strong count that `ptr` represents. NULL, misaligned or not-live pointers are
    /// ignored (a best-effort guard against a double free).
    ///
    /// # Safety
    ///
    /// `ptr` must be NULL or come from [`ArcCastPtr::into_raw`] for this type, and the count it
    /// represents must not be used again after this call.
    unsafe fn free(ptr: *mut Self) {
        // SAFETY: forwarded contract.
        if unsafe { Self::try_ref(ptr) }.is_err() {
            return;
        }
        // SAFETY: `ptr` came from `Arc::into_raw` for this type and owns one count, which the
        // caller gives up here.
        drop(unsafe { Arc::from_raw(ptr.cast_const().cast::<Guarded<Self::RustType>>()) });
    }
}

impl<C: Castable> ArcCastPtr for C {}

/// Borrows the object behind handle `$ptr` of type `$ty` for the current call, or returns the
/// refusal from the enclosing body ([`BadHandle`] of its return type). Use inside
/// `ffi_panic_boundary!`.
///
/// Every exported function that uses it requires, in its `# Safety` section, that the pointer
/// be NULL or a live handle of that type kept alive by the caller for the whole call.
macro_rules! try_ref {
    ($ty:ty, $ptr:expr) => {
        // SAFETY: the exported function's contract (see the macro's docs); `try_ref` checks NULL,
        // alignment and the magic word.
        match unsafe { <$ty as $crate::handle::ArcCastPtr>::try_ref($ptr) } {
            Ok(value) => &**value,
            Err(error) => return $crate::handle::BadHandle::bad_handle(error),
        }
    };
}
pub(crate) use try_ref;

/// A new strong count of handle `$ptr` of type `$ty`, or the refusal returned from the
/// enclosing body, as [`try_ref!`].
macro_rules! try_clone {
    ($ty:ty, $ptr:expr) => {
        // SAFETY: as in `try_ref!`.
        match unsafe { <$ty as $crate::handle::ArcCastPtr>::try_clone_arc($ptr) } {
            Ok(arc) => arc,
            Err(error) => return $crate::handle::BadHandle::bad_handle(error),
        }
    };
}
pub(crate) use try_clone;

/// Checks an out-parameter: NULL → `NULL_ARGUMENT`, misaligned → `INVALID_ARGUMENT`; otherwise
/// evaluates to the pointer. Use inside `ffi_panic_boundary!` (it `return`s).
macro_rules! check_out {
    ($ptr:expr) => {
        match $crate::handle::check_ptr($ptr.cast_const()) {
            Ok(()) => $ptr,
            Err(status) => return status,
        }
    };
}
pub(crate) use check_out;

/// Checks an input array `(ptr, len)` and evaluates to the slice; `len` must be in
/// `1..=max` (else `INVALID_ARGUMENT`), the pointer non-NULL and aligned. Use inside
/// `ffi_panic_boundary!` (it `return`s).
///
/// The caller of the exported function promises `len` readable elements at `ptr`.
macro_rules! check_in_slice {
    ($ptr:expr, $len:expr, $max:expr) => {{
        let (ptr, len) = ($ptr, $len);
        if let Err(status) = $crate::handle::check_ptr(ptr) {
            return status;
        }
        if len == 0 || len > $max {
            return $crate::status::WK_STATUS_INVALID_ARGUMENT;
        }
        // SAFETY: non-NULL, aligned, and `len` is bounded by `max` (far below isize::MAX bytes);
        // the exported function's contract makes the host promise `len` readable, initialised
        // elements that nothing mutates during the call.
        unsafe { ::std::slice::from_raw_parts(ptr, len) }
    }};
}
pub(crate) use check_in_slice;

/// NULL → `NULL_ARGUMENT`; misaligned → `INVALID_ARGUMENT`.
pub(crate) fn check_ptr<T>(ptr: *const T) -> Result<(), wk_status> {
    if ptr.is_null() {
        Err(WK_STATUS_NULL_ARGUMENT)
    } else if !ptr.is_aligned() {
        Err(WK_STATUS_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

/// Writes `value` through an out-pointer already checked by [`check_out!`].
///
/// # Safety
///
/// `ptr` must be non-NULL, aligned and valid for a write of `T` (it may be uninitialised).
pub(crate) unsafe fn write_out<T>(ptr: *mut T, value: T) {
    // SAFETY: forwarded contract; `ptr::write` does not read or drop the old (maybe
    // uninitialised) contents.
    unsafe { ptr.write(value) }
}

/// Writes the first `out_size` bytes of `value` (at most `size_of::<T>()`) through `out`, for
/// snapshot structs that may grow: a caller built against an older header passes its smaller
/// size and gets the fields it knows; one built against a newer header gets this library's
/// fields and keeps its own initialisation of the rest. `out_size` below `min_size` (the size
/// of the struct's first release) gives `INVALID_ARGUMENT` and writes nothing.
///
/// # Safety
///
/// `out` must be non-NULL and aligned (checked by [`check_out!`]) and valid for writes of
/// `out_size` bytes.
pub(crate) unsafe fn write_sized<T: Copy>(
    out: *mut T,
    out_size: usize,
    min_size: usize,
    value: T,
) -> wk_status {
    if out_size < min_size {
        return WK_STATUS_INVALID_ARGUMENT;
    }
    let n = out_size.min(std::mem::size_of::<T>());
    // SAFETY: `value` is a live local of `size_of::<T>() >= n` bytes; the caller provides
    // `out_size >= n` writable bytes at `out`, which cannot overlap a local.
    unsafe { ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), out.cast::<u8>(), n) };
    crate::status::WK_STATUS_OK
}
