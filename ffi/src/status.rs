//! `wk_status`: the one status enum of the C ABI, and its mapping from core errors.
//!
//! Values are fixed and never reused; a retired value stays here as a comment.

use std::ffi::{c_char, CStr};

use wkcore::admission::{AdmissionError, LimitsError};

use crate::panic::ffi_panic_boundary;

/// Result of every fallible `wk_*` call.
///
/// C sees `WK_STATUS_OK`, `WK_STATUS_NULL_ARGUMENT`, …; the type is 32 bits wide.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum wk_status {
    /// The call succeeded; out-parameters were written.
    Ok = 0,
    /// A required pointer argument was NULL.
    NullArgument = 1,
    /// An argument was out of range (unknown kind, zero or oversized length, limit above
    /// `1 << 24`, misaligned pointer, handle that is not live or of another type).
    InvalidArgument = 2,
    /// Rust code panicked; the panic was caught at the boundary. Nothing else is known.
    Panic = 3,
    /// The slot is closed (`multiraft: slot closed`).
    Closed = 4,
    /// The slot recorded a fatal error (see `wk_slot_state.fatal_code`); for `wk_slot_fail`:
    /// a fatal error was already recorded.
    Fatal = 5,
    /// The slot is not leader (`multiraft: not leader`).
    NotLeader = 6,
    /// A config change is already pending (`multiraft: config change pending`).
    ConfigChangePending = 7,
    /// The control queue is full (`multiraft: slot busy`); backpressure.
    Busy = 8,
    /// The background proposal quota is used up (`multiraft: background proposal
    /// throttled`); backpressure.
    Throttled = 9,
    /// The caller's buffer is too small; the needed length was written where documented.
    BufferTooSmall = 10,
    /// No entry with that id.
    NotFound = 11,
    /// An entry with that id already exists.
    AlreadyExists = 12,
}

/// The raw 32-bit form in which `wk_status_str` receives a status (C sees `wk_status`; see
/// `ffi/cbindgen.toml`), so that a value outside the enum is not undefined behaviour in Rust.
#[allow(non_camel_case_types)]
pub type wk_status_raw = u32;

/// Text for values that are not a `wk_status`.
pub(crate) const UNKNOWN_STATUS: &CStr = c"unknown status";

/// Every status, in numeric order (index == value). Not an associated const: cbindgen would
/// export it into the header.
const ALL_STATUSES: [wk_status; 13] = [
    wk_status::Ok,
    wk_status::NullArgument,
    wk_status::InvalidArgument,
    wk_status::Panic,
    wk_status::Closed,
    wk_status::Fatal,
    wk_status::NotLeader,
    wk_status::ConfigChangePending,
    wk_status::Busy,
    wk_status::Throttled,
    wk_status::BufferTooSmall,
    wk_status::NotFound,
    wk_status::AlreadyExists,
];

impl wk_status {
    /// Every status, in numeric order (index == value).
    pub fn all() -> &'static [wk_status] {
        &ALL_STATUSES
    }

    /// The status with this raw value, if any.
    pub fn from_raw(raw: u32) -> Option<Self> {
        ALL_STATUSES.get(usize::try_from(raw).ok()?).copied()
    }

    /// Static text of the status: upstream's error text where one exists.
    pub fn as_cstr(self) -> &'static CStr {
        match self {
            wk_status::Ok => c"ok",
            wk_status::NullArgument => c"wkcore: null argument",
            wk_status::InvalidArgument => c"wkcore: invalid argument",
            wk_status::Panic => c"wkcore: rust panic",
            wk_status::Closed => c"multiraft: slot closed",
            wk_status::Fatal => c"multiraft: slot fatal error",
            wk_status::NotLeader => c"multiraft: not leader",
            wk_status::ConfigChangePending => c"multiraft: config change pending",
            wk_status::Busy => c"multiraft: slot busy",
            wk_status::Throttled => c"multiraft: background proposal throttled",
            wk_status::BufferTooSmall => c"wkcore: buffer too small",
            wk_status::NotFound => c"multiraft: slot not found",
            wk_status::AlreadyExists => c"wkcore: already exists",
        }
    }

    /// True for `Busy` and `Throttled`, the statuses that match upstream's
    /// `ErrProposalBackpressure`.
    pub fn is_backpressure(self) -> bool {
        matches!(self, wk_status::Busy | wk_status::Throttled)
    }
}

impl From<&AdmissionError> for wk_status {
    fn from(e: &AdmissionError) -> Self {
        match e {
            AdmissionError::Closed => wk_status::Closed,
            AdmissionError::Fatal(_) => wk_status::Fatal,
            AdmissionError::NotLeader => wk_status::NotLeader,
            AdmissionError::ConfigChangePending => wk_status::ConfigChangePending,
            AdmissionError::Busy => wk_status::Busy,
            AdmissionError::Throttled => wk_status::Throttled,
            // `AdmissionError` is non_exhaustive: a future refusal the ABI does not name yet is
            // reported as a refusal of the argument rather than as success.
            #[allow(unreachable_patterns)]
            _ => wk_status::InvalidArgument,
        }
    }
}

impl From<AdmissionError> for wk_status {
    fn from(e: AdmissionError) -> Self {
        wk_status::from(&e)
    }
}

impl From<&LimitsError> for wk_status {
    fn from(_: &LimitsError) -> Self {
        // The only variant today is `TooLarge` (a limit above `SlotLimits::MAX`).
        wk_status::InvalidArgument
    }
}

impl From<LimitsError> for wk_status {
    fn from(e: LimitsError) -> Self {
        wk_status::from(&e)
    }
}

/// Returns a static, NUL-terminated description of `status`; never NULL.
///
/// Values that are not a `wk_status` give `"unknown status"`. The string lives for the whole
/// program and must not be freed. Any thread may call this.
#[no_mangle]
pub extern "C" fn wk_status_str(status: wk_status_raw) -> *const c_char {
    ffi_panic_boundary! {
        match wk_status::from_raw(status) {
            Some(s) => s.as_cstr().as_ptr(),
            None => UNKNOWN_STATUS.as_ptr(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_fixed() {
        for (i, s) in wk_status::all().iter().enumerate() {
            assert_eq!(*s as u32 as usize, i);
            assert_eq!(wk_status::from_raw(i as u32), Some(*s));
        }
        assert_eq!(wk_status::AlreadyExists as u32, 12);
        assert_eq!(wk_status::from_raw(13), None);
        assert_eq!(wk_status::from_raw(u32::MAX), None);
        assert_eq!(std::mem::size_of::<wk_status>(), 4);
    }

    fn text(raw: u32) -> &'static str {
        let p = wk_status_str(raw);
        assert!(!p.is_null());
        // SAFETY: `wk_status_str` returns pointers to 'static NUL-terminated literals.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn status_strings() {
        assert_eq!(text(0), "ok");
        assert_eq!(text(wk_status::Busy as u32), "multiraft: slot busy");
        assert_eq!(
            text(wk_status::Throttled as u32),
            "multiraft: background proposal throttled"
        );
        assert_eq!(text(wk_status::Closed as u32), "multiraft: slot closed");
        assert_eq!(text(wk_status::NotLeader as u32), "multiraft: not leader");
        assert_eq!(
            text(wk_status::ConfigChangePending as u32),
            "multiraft: config change pending"
        );
        assert_eq!(text(13), "unknown status");
        assert_eq!(text(u32::MAX), "unknown status");
        let mut seen = std::collections::HashSet::new();
        for &s in wk_status::all() {
            assert!(seen.insert(text(s as u32)), "duplicate text for {s:?}");
        }
    }

    #[test]
    fn maps_core_errors() {
        assert_eq!(wk_status::from(AdmissionError::Closed), wk_status::Closed);
        assert_eq!(wk_status::from(AdmissionError::Fatal(9)), wk_status::Fatal);
        assert_eq!(
            wk_status::from(AdmissionError::NotLeader),
            wk_status::NotLeader
        );
        assert_eq!(
            wk_status::from(AdmissionError::ConfigChangePending),
            wk_status::ConfigChangePending
        );
        assert_eq!(wk_status::from(AdmissionError::Busy), wk_status::Busy);
        assert_eq!(
            wk_status::from(AdmissionError::Throttled),
            wk_status::Throttled
        );
        assert!(wk_status::Busy.is_backpressure());
        assert!(wk_status::Throttled.is_backpressure());
        assert!(!wk_status::NotLeader.is_backpressure());
        let too_large =
            wkcore::admission::SlotLimits::new(wkcore::admission::SlotLimits::MAX + 1, 0)
                .validate()
                .unwrap_err();
        assert_eq!(wk_status::from(too_large), wk_status::InvalidArgument);
    }
}
