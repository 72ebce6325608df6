//! The coordination words through the C ABI: `wk_flip`, `wk_counter`, `wk_exclusive_trigger`,
//! `wk_windowed_counter` (`wkcore::coord::{Flip, Counter, ExclusiveTrigger, WindowedCounter}`).
//!
//! Each is one atomic word behind an `Arc`-owned handle, so hosts without a native atomic (or
//! that want the exact transitions the ledgers use) get the same one-winner decisions. A C++ or
//! Go host that only needs a flip may use its own atomics; the semantics are documented in
//! `docs/COORD.md`.
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other; none blocks.

use std::sync::Arc;

use wkcore::coord::{Counter, ExclusiveTrigger, Flip, TriggerError, WindowedCounter};

use super::ledger::tri;
use super::status::WK_STATUS_COORD_INVALID_TIME;
use crate::handle::{check_out, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a fire-once state flip.
#[allow(non_camel_case_types)]
pub struct wk_flip {
    _private: [u8; 0],
}

impl Castable for wk_flip {
    type RustType = Flip;
    const MAGIC: u64 = 0x776b_464c_4950_0003; // "wkFLIP" + ABI generation
}

/// Opaque, `Arc`-owned handle to a counter whose increment returns the new value.
#[allow(non_camel_case_types)]
pub struct wk_counter {
    _private: [u8; 0],
}

impl Castable for wk_counter {
    type RustType = Counter;
    const MAGIC: u64 = 0x776b_434e_5452_0003; // "wkCNTR" + ABI generation
}

/// Opaque, `Arc`-owned handle to an exclusive trigger (`{run number, active}` in one word).
#[allow(non_camel_case_types)]
pub struct wk_exclusive_trigger {
    _private: [u8; 0],
}

impl Castable for wk_exclusive_trigger {
    type RustType = ExclusiveTrigger;
    const MAGIC: u64 = 0x776b_5452_4947_0003; // "wkTRIG" + ABI generation
}

/// Opaque, `Arc`-owned handle to a windowed counter (increment-and-expire).
#[allow(non_camel_case_types)]
pub struct wk_windowed_counter {
    _private: [u8; 0],
}

impl Castable for wk_windowed_counter {
    type RustType = WindowedCounter;
    const MAGIC: u64 = 0x776b_5749_4e44_0003; // "wkWIND" + ABI generation
}

/// What `wk_exclusive_trigger_trigger` decided (`wk_trigger.result`). Values are fixed.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_trigger_result {
    /// This call started run `run`.
    Started = 0,
    /// Run `run` holds the key: refused.
    Busy = 1,
    /// The run numbers are used up (`2^63 - 1` runs): refused, `run` is 0.
    Exhausted = 2,
}

/// The outcome of `wk_exclusive_trigger_trigger`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_trigger {
    /// What happened.
    pub result: wk_trigger_result,
    /// Always 0.
    pub reserved: u32,
    /// The run this call started (`STARTED`) or the run that holds the key (`BUSY`).
    pub run: u64,
}

const _: () = assert!(std::mem::size_of::<wk_trigger>() == 16);

/// Creates a flip in `state`. On `WK_STATUS_OK` the caller owns `*flip_out`.
///
/// # Safety
///
/// `flip_out` must be NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_flip_new(state: u64, flip_out: *mut *mut wk_flip) -> wk_status {
    ffi_panic_boundary! {
        let flip_out = check_out!(flip_out);
        let handle = wk_flip::into_raw(Arc::new(Guarded::new::<wk_flip>(Flip::new(state))));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(flip_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*flip_out` is a handle to the same flip, freed separately.
///
/// # Safety
///
/// `flip` must be NULL or a live handle; `flip_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_flip_clone(
    flip: *const wk_flip,
    flip_out: *mut *mut wk_flip,
) -> wk_status {
    ffi_panic_boundary! {
        let flip_out = check_out!(flip_out);
        let arc = try_clone!(wk_flip, flip);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(flip_out, wk_flip::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `flip` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_flip_free(flip: *mut wk_flip) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_flip::free(flip) }
    }
}

/// Moves the state from `from` to `to`; `*flipped_out` is true only for the one caller that did
/// (false when the state is not `from`, and when `from == to`).
///
/// # Safety
///
/// `flip` must be NULL or a live handle; `flipped_out` NULL or writable for one `bool`.
#[no_mangle]
pub unsafe extern "C" fn wk_flip_flip(
    flip: *const wk_flip,
    from: u64,
    to: u64,
    flipped_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let flip = try_ref!(wk_flip, flip);
        let flipped_out = check_out!(flipped_out);
        let flipped = flip.flip(from, to);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(flipped_out, flipped) };
        WK_STATUS_OK
    }
}

/// The current state; 0 for a bad handle.
///
/// # Safety
///
/// `flip` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_flip_get(flip: *const wk_flip) -> u64 {
    ffi_panic_boundary! {
        try_ref!(wk_flip, flip).get()
    }
}

/// Creates a counter at `value`. On `WK_STATUS_OK` the caller owns `*counter_out`.
///
/// # Safety
///
/// `counter_out` must be NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_counter_new(
    value: u64,
    counter_out: *mut *mut wk_counter,
) -> wk_status {
    ffi_panic_boundary! {
        let counter_out = check_out!(counter_out);
        let handle = wk_counter::into_raw(Arc::new(Guarded::new::<wk_counter>(Counter::new(value))));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(counter_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*counter_out` is a handle to the same counter, freed separately.
///
/// # Safety
///
/// `counter` must be NULL or a live handle; `counter_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_counter_clone(
    counter: *const wk_counter,
    counter_out: *mut *mut wk_counter,
) -> wk_status {
    ffi_panic_boundary! {
        let counter_out = check_out!(counter_out);
        let arc = try_clone!(wk_counter, counter);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(counter_out, wk_counter::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `counter` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_counter_free(counter: *mut wk_counter) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_counter::free(counter) }
    }
}

/// Adds one; `*value_out` is the new value (unique to this call; wraps at `2^64`).
///
/// # Safety
///
/// `counter` must be NULL or a live handle; `value_out` NULL or writable for one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_counter_increment(
    counter: *const wk_counter,
    value_out: *mut u64,
) -> wk_status {
    ffi_panic_boundary! {
        let counter = try_ref!(wk_counter, counter);
        let value_out = check_out!(value_out);
        let value = counter.increment();
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(value_out, value) };
        WK_STATUS_OK
    }
}

/// The current value; 0 for a bad handle.
///
/// # Safety
///
/// `counter` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_counter_get(counter: *const wk_counter) -> u64 {
    ffi_panic_boundary! {
        try_ref!(wk_counter, counter).get()
    }
}

/// Creates an inactive exclusive trigger whose last run was `last_run` (0: none); the next
/// trigger starts `last_run + 1`. On `WK_STATUS_OK` the caller owns `*trigger_out`. A `last_run`
/// of `2^63` or more (more than the trigger's word holds) gives `WK_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `trigger_out` must be NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_new(
    last_run: u64,
    trigger_out: *mut *mut wk_exclusive_trigger,
) -> wk_status {
    ffi_panic_boundary! {
        let trigger_out = check_out!(trigger_out);
        if last_run >= 1 << 63 {
            return crate::status::WK_STATUS_INVALID_ARGUMENT;
        }
        let trigger = ExclusiveTrigger::new(last_run);
        let handle = wk_exclusive_trigger::into_raw(Arc::new(Guarded::new::<wk_exclusive_trigger>(trigger)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(trigger_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*trigger_out` is a handle to the same trigger, freed separately.
///
/// # Safety
///
/// `trigger` must be NULL or a live handle; `trigger_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_clone(
    trigger: *const wk_exclusive_trigger,
    trigger_out: *mut *mut wk_exclusive_trigger,
) -> wk_status {
    ffi_panic_boundary! {
        let trigger_out = check_out!(trigger_out);
        let arc = try_clone!(wk_exclusive_trigger, trigger);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(trigger_out, wk_exclusive_trigger::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `trigger` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_free(trigger: *mut wk_exclusive_trigger) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_exclusive_trigger::free(trigger) }
    }
}

/// "No active run" → "run N + 1 active" in one transition: `STARTED` with the new run for
/// exactly one of many concurrent callers; every other is `BUSY` with the run that holds the key.
///
/// # Safety
///
/// `trigger` must be NULL or a live handle; `trigger_out` NULL or writable for one `wk_trigger`.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_trigger(
    trigger: *const wk_exclusive_trigger,
    trigger_out: *mut wk_trigger,
) -> wk_status {
    ffi_panic_boundary! {
        let trigger = try_ref!(wk_exclusive_trigger, trigger);
        let trigger_out = check_out!(trigger_out);
        let (result, run) = match trigger.trigger() {
            Ok(run) => (wk_trigger_result::Started, run),
            Err(TriggerError::Busy { run }) => (wk_trigger_result::Busy, run),
            Err(TriggerError::Exhausted) => (wk_trigger_result::Exhausted, 0),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(trigger_out, wk_trigger { result, reserved: 0, run }) };
        WK_STATUS_OK
    }
}

/// Ends run `run`; `*finished_out` is true only when `run` held the key (and now nothing does).
///
/// # Safety
///
/// `trigger` must be NULL or a live handle; `finished_out` NULL or writable for one `bool`.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_finish(
    trigger: *const wk_exclusive_trigger,
    run: u64,
    finished_out: *mut bool,
) -> wk_status {
    ffi_panic_boundary! {
        let trigger = try_ref!(wk_exclusive_trigger, trigger);
        let finished_out = check_out!(finished_out);
        let finished = trigger.finish(run);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(finished_out, finished) };
        WK_STATUS_OK
    }
}

/// The active run, or 0 when none is (runs start at 1); 0 for a bad handle.
///
/// # Safety
///
/// `trigger` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_active_get(
    trigger: *const wk_exclusive_trigger,
) -> u64 {
    ffi_panic_boundary! {
        try_ref!(wk_exclusive_trigger, trigger).active().unwrap_or(0)
    }
}

/// The last run started (active or finished; 0 before the first); 0 for a bad handle.
///
/// # Safety
///
/// `trigger` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_exclusive_trigger_last_run_get(
    trigger: *const wk_exclusive_trigger,
) -> u64 {
    ffi_panic_boundary! {
        try_ref!(wk_exclusive_trigger, trigger).last_run()
    }
}

/// Creates a windowed counter at zero. On `WK_STATUS_OK` the caller owns `*counter_out`.
///
/// # Safety
///
/// `counter_out` must be NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_windowed_counter_new(
    counter_out: *mut *mut wk_windowed_counter,
) -> wk_status {
    ffi_panic_boundary! {
        let counter_out = check_out!(counter_out);
        let handle = wk_windowed_counter::into_raw(Arc::new(Guarded::new::<wk_windowed_counter>(WindowedCounter::new())));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(counter_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*counter_out` is a handle to the same counter, freed separately.
///
/// # Safety
///
/// `counter` must be NULL or a live handle; `counter_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_windowed_counter_clone(
    counter: *const wk_windowed_counter,
    counter_out: *mut *mut wk_windowed_counter,
) -> wk_status {
    ffi_panic_boundary! {
        let counter_out = check_out!(counter_out);
        let arc = try_clone!(wk_windowed_counter, counter);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(counter_out, wk_windowed_counter::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `counter` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_windowed_counter_free(counter: *mut wk_windowed_counter) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_windowed_counter::free(counter) }
    }
}

/// Counts one at `now` in a window of `window` (the same unit, e.g. milliseconds): a new window
/// (count 1, ending `now + window`) when the last one ended, else one more (saturating at
/// `WK_WINDOW_COUNT_MAX`). `*count_out` is the new count: "the fifth failure locks the account"
/// is decided on it. `window == 0` or `now + window > WK_WINDOW_TIME_MAX` gives
/// `WK_STATUS_COORD_INVALID_TIME`.
///
/// # Safety
///
/// `counter` must be NULL or a live handle; `count_out` NULL or writable for one `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_windowed_counter_increment(
    counter: *const wk_windowed_counter,
    now: u64,
    window: u64,
    count_out: *mut u32,
) -> wk_status {
    ffi_panic_boundary! {
        let counter = try_ref!(wk_windowed_counter, counter);
        let count_out = check_out!(count_out);
        let count = tri!(counter.increment(now, window).map_err(|_| WK_STATUS_COORD_INVALID_TIME));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(count_out, count) };
        WK_STATUS_OK
    }
}

/// The count at `now`: 0 once the window has ended; 0 for a bad handle.
///
/// # Safety
///
/// `counter` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_windowed_counter_count_get(
    counter: *const wk_windowed_counter,
    now: u64,
) -> u32 {
    ffi_panic_boundary! {
        try_ref!(wk_windowed_counter, counter).count(now)
    }
}

/// The largest time a windowed counter accepts (`2^44 - 1`).
pub const WK_WINDOW_TIME_MAX: u64 = 0xFFF_FFFF_FFFF; // 2^44 - 1, written out: cbindgen copies expressions, and C would shift an int
/// The largest count; increments beyond it saturate.
pub const WK_WINDOW_COUNT_MAX: u32 = (1 << 20) - 1;

const _: () = {
    assert!(WK_WINDOW_TIME_MAX == wkcore::coord::WINDOW_TIME_MAX);
    assert!(WK_WINDOW_COUNT_MAX == wkcore::coord::WINDOW_COUNT_MAX);
};

#[cfg(test)]
mod tests {
    use std::ptr;

    use super::*;

    #[test]
    fn words_through_the_abi() {
        // SAFETY: valid pointers to locals; each handle freed once.
        unsafe {
            let mut f = ptr::null_mut();
            let mut b = false;
            assert_eq!(wk_flip_new(1, &mut f), WK_STATUS_OK);
            assert_eq!(wk_flip_flip(f, 1, 2, &mut b), WK_STATUS_OK);
            assert!(b);
            assert_eq!(wk_flip_flip(f, 1, 2, &mut b), WK_STATUS_OK);
            assert!(!b);
            assert_eq!(wk_flip_get(f), 2);
            assert_eq!(
                wk_flip_flip(ptr::null(), 1, 2, &mut b),
                crate::status::WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_flip_flip(f, 2, 1, ptr::null_mut()),
                crate::status::WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(wk_flip_get(f), 2);

            let mut c = ptr::null_mut();
            let mut v = 0;
            assert_eq!(wk_counter_new(41, &mut c), WK_STATUS_OK);
            assert_eq!(wk_counter_increment(c, &mut v), WK_STATUS_OK);
            assert_eq!((v, wk_counter_get(c)), (42, 42));
            assert_eq!(
                wk_counter_increment(f.cast(), &mut v),
                crate::status::WK_STATUS_INVALID_HANDLE
            );

            let mut t = ptr::null_mut();
            let mut out = wk_trigger {
                result: wk_trigger_result::Exhausted,
                reserved: 0,
                run: 0,
            };
            // A last run the trigger's word cannot hold (2^63 and above) is refused, not
            // clamped, and writes nothing.
            for bad in [1u64 << 63, u64::MAX] {
                assert_eq!(
                    wk_exclusive_trigger_new(bad, &mut t),
                    crate::status::WK_STATUS_INVALID_ARGUMENT
                );
                assert!(t.is_null());
            }
            assert_eq!(wk_exclusive_trigger_new(6, &mut t), WK_STATUS_OK);
            assert_eq!(wk_exclusive_trigger_trigger(t, &mut out), WK_STATUS_OK);
            assert_eq!((out.result, out.run), (wk_trigger_result::Started, 7));
            assert_eq!(wk_exclusive_trigger_trigger(t, &mut out), WK_STATUS_OK);
            assert_eq!((out.result, out.run), (wk_trigger_result::Busy, 7));
            assert_eq!(wk_exclusive_trigger_active_get(t), 7);
            assert_eq!(wk_exclusive_trigger_finish(t, 6, &mut b), WK_STATUS_OK);
            assert!(!b);
            assert_eq!(wk_exclusive_trigger_finish(t, 7, &mut b), WK_STATUS_OK);
            assert!(b);
            assert_eq!(
                (
                    wk_exclusive_trigger_active_get(t),
                    wk_exclusive_trigger_last_run_get(t)
                ),
                (0, 7)
            );

            let mut w = ptr::null_mut();
            let mut n = 0u32;
            assert_eq!(wk_windowed_counter_new(&mut w), WK_STATUS_OK);
            for i in 1..=5 {
                assert_eq!(
                    wk_windowed_counter_increment(w, 1000 + i, 900_000, &mut n),
                    WK_STATUS_OK
                );
                assert_eq!(n, i as u32);
            }
            assert_eq!(wk_windowed_counter_count_get(w, 900_999), 5);
            assert_eq!(wk_windowed_counter_count_get(w, 901_001), 0);
            n = 99;
            assert_eq!(
                wk_windowed_counter_increment(w, 1, 0, &mut n),
                WK_STATUS_COORD_INVALID_TIME
            );
            assert_eq!(
                wk_windowed_counter_increment(w, WK_WINDOW_TIME_MAX, 1, &mut n),
                WK_STATUS_COORD_INVALID_TIME
            );
            assert_eq!(n, 99);
            assert_eq!(wk_windowed_counter_count_get(w, 900_999), 5);

            wk_flip_free(f);
            wk_counter_free(c);
            wk_exclusive_trigger_free(t);
            wk_windowed_counter_free(w);
        }
    }
}
