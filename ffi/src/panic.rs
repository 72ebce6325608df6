//! The one panic boundary.
//!
//! Every exported body runs inside [`ffi_panic_boundary!`]: the body is a closure under
//! `catch_unwind`, and any panic, whatever its payload type (`&str`, `String`, a custom struct…),
//! becomes the return type's [`PanicDefault`]: `WK_STATUS_PANIC` for fallible calls, a neutral
//! value for the few infallible ones. An unwind that escaped an `extern "C"` function would abort
//! the whole host process (the Go server included), so nothing is allowed to escape.
//!
//! `return` inside the body returns from the closure, i.e. from the exported call, which is what
//! the early-exit check macros in [`crate::handle`] rely on.
//!
//! The release profile must keep `panic = "unwind"` (never `"abort"`), or this boundary is moot.

use std::ffi::c_char;

use crate::status::wk_status;

/// The value an exported call returns when its body panicked.
pub(crate) trait PanicDefault {
    /// The value returned instead of the body's result.
    fn panic_default() -> Self;
}

impl PanicDefault for wk_status {
    fn panic_default() -> Self {
        crate::status::WK_STATUS_PANIC
    }
}

impl PanicDefault for bool {
    fn panic_default() -> Self {
        false
    }
}

impl PanicDefault for u64 {
    fn panic_default() -> Self {
        0
    }
}

impl PanicDefault for usize {
    fn panic_default() -> Self {
        0
    }
}

impl PanicDefault for () {
    fn panic_default() -> Self {}
}

impl PanicDefault for u32 {
    fn panic_default() -> Self {
        0
    }
}

impl PanicDefault for *const c_char {
    fn panic_default() -> Self {
        // `wk_status_str` promises a static, never-NULL string.
        crate::status::UNKNOWN_STATUS.as_ptr()
    }
}

/// Runs the body under `catch_unwind`; a panic yields `PanicDefault::panic_default()`.
///
/// The body is wrapped in `AssertUnwindSafe`: after a panic we never touch the body's state
/// again (the call returns at once), and shared core objects are lock-free state words whose
/// invariants hold between atomic steps, so there is no poisoned half-update to observe.
macro_rules! ffi_panic_boundary {
    ( $($body:tt)* ) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(move || { $($body)* })) {
            Ok(value) => value,
            Err(_payload) => $crate::panic::PanicDefault::panic_default(),
        }
    };
}
pub(crate) use ffi_panic_boundary;

#[cfg(test)]
mod tests {
    use super::*;

    fn boundary_status(f: impl Fn() -> wk_status) -> wk_status {
        ffi_panic_boundary! { f() }
    }

    fn quiet<R>(f: impl FnOnce() -> R) -> R {
        // The default hook would print each expected panic; silence it for these tests only.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = f();
        std::panic::set_hook(hook);
        r
    }

    #[test]
    fn passes_values_through() {
        assert_eq!(
            boundary_status(|| crate::status::WK_STATUS_FULL),
            crate::status::WK_STATUS_FULL
        );
        let n: u32 = ffi_panic_boundary! { 7 };
        assert_eq!(n, 7);
    }

    #[test]
    fn early_return_leaves_the_body() {
        let f = |x: u32| -> wk_status {
            ffi_panic_boundary! {
                if x == 0 {
                    return crate::status::WK_STATUS_INVALID_ARGUMENT;
                }
                crate::status::WK_STATUS_OK
            }
        };
        assert_eq!(f(0), crate::status::WK_STATUS_INVALID_ARGUMENT);
        assert_eq!(f(1), crate::status::WK_STATUS_OK);
    }

    #[test]
    fn any_payload_becomes_panic_status() {
        quiet(|| {
            assert_eq!(
                boundary_status(|| panic!("static str")),
                crate::status::WK_STATUS_PANIC
            );
            assert_eq!(
                boundary_status(|| panic!("formatted {}", 42)),
                crate::status::WK_STATUS_PANIC
            );
            assert_eq!(
                boundary_status(|| std::panic::panic_any(17_u64)),
                crate::status::WK_STATUS_PANIC
            );
            struct Custom;
            assert_eq!(
                boundary_status(|| std::panic::panic_any(Custom)),
                crate::status::WK_STATUS_PANIC
            );
            #[allow(clippy::unnecessary_literal_unwrap)]
            let s = boundary_status(|| {
                None::<wk_status>.unwrap();
                crate::status::WK_STATUS_OK
            });
            assert_eq!(s, crate::status::WK_STATUS_PANIC);
        });
    }

    #[test]
    fn infallible_defaults() {
        quiet(|| {
            let unit: () = ffi_panic_boundary! { panic!("x") };
            let () = unit;
            let n: u32 = ffi_panic_boundary! { panic!("x") };
            assert_eq!(n, 0);
            let p: *const c_char = ffi_panic_boundary! { panic!("x") };
            assert!(!p.is_null());
        });
    }
}
