//! `wk_status`: the status every fallible call returns, numbered in ranges by system.
//!
//! | range   | system |
//! |---------|--------|
//! | 0–99    | generic to the ABI (this file): ok, bad arguments, panic, buffers, look-ups … |
//! | 100–199 | proposal admission (`admission/status.rs`) |
//! | 200–299 | owner registry (`owner/status.rs`) |
//! | 300–399 | delivery tags (`tag/status.rs`) |
//! | 400–499 | coordination (`coord/status.rs`) |
//!
//! A value is never reused; a retired one stays as a comment in its system's file. Generic codes
//! carry neutral texts; a system's codes carry upstream's error texts, each written once in
//! core. Each system declares its codes, texts and identity relations in one `StatusRange` in
//! its own module; `RANGES` lists the ranges, and is the only line here a new system adds.
//!
//! Identities follow Go's `errors.Is`: a status *is* itself and every identity it wraps (a busy
//! proposal is also `SLOT_BUSY` and `PROPOSAL_BACKPRESSURE`). [`wk_status_is`] answers that for
//! every host, so no language re-lists the relations.

use std::ffi::{c_char, CStr};
use std::fmt;

use crate::panic::ffi_panic_boundary;

/// Result of every fallible `wk_*` call (C: `typedef uint32_t wk_status`).
///
/// Any 32-bit value may cross the boundary (a newer library may return codes an older host does
/// not know); [`wk_status_str`] and [`wk_status_is`] accept them all.
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct wk_status(pub u32);

/// The call succeeded; out-parameters were written.
pub const WK_STATUS_OK: wk_status = wk_status(0);
/// A required pointer argument was NULL.
pub const WK_STATUS_NULL_ARGUMENT: wk_status = wk_status(1);
/// An argument was out of range: an unknown enum value, a zero or oversized length, a limit
/// above its ceiling, a misaligned pointer, a struct size below the first release's.
pub const WK_STATUS_INVALID_ARGUMENT: wk_status = wk_status(2);
/// Rust code panicked; the panic was caught at the boundary and no state was left half-changed.
pub const WK_STATUS_PANIC: wk_status = wk_status(3);
/// A handle argument is misaligned, already freed (best-effort detection) or of another type.
pub const WK_STATUS_INVALID_HANDLE: wk_status = wk_status(4);
/// The caller's buffer is too small; where documented, the needed length was written.
pub const WK_STATUS_BUFFER_TOO_SMALL: wk_status = wk_status(5);
/// No entry with that key.
pub const WK_STATUS_NOT_FOUND: wk_status = wk_status(6);
/// An entry with that key already exists.
pub const WK_STATUS_ALREADY_EXISTS: wk_status = wk_status(7);
/// A wait ran out of time.
pub const WK_STATUS_TIMEOUT: wk_status = wk_status(8);
/// A bounded structure is full.
pub const WK_STATUS_FULL: wk_status = wk_status(9);

/// The codes, texts and identities of one system's range.
pub(crate) struct StatusRange {
    /// The system, for diagnostics (`"generic"`, `"admission"` …).
    pub(crate) system: &'static str,
    /// The first and last value the range owns.
    pub(crate) first: u32,
    /// See `first`.
    pub(crate) last: u32,
    /// Every code the system defines, with its text.
    pub(crate) codes: &'static [(wk_status, &'static CStr)],
    /// `(status, identity)`: `status` also *is* `identity` (besides itself).
    pub(crate) wraps: &'static [(wk_status, wk_status)],
}

const GENERIC: StatusRange = StatusRange {
    system: "generic",
    first: 0,
    last: 99,
    codes: &[
        (WK_STATUS_OK, c"ok"),
        (WK_STATUS_NULL_ARGUMENT, c"wkcore: null argument"),
        (WK_STATUS_INVALID_ARGUMENT, c"wkcore: invalid argument"),
        (WK_STATUS_PANIC, c"wkcore: panic"),
        (WK_STATUS_INVALID_HANDLE, c"wkcore: invalid handle"),
        (WK_STATUS_BUFFER_TOO_SMALL, c"wkcore: buffer too small"),
        (WK_STATUS_NOT_FOUND, c"wkcore: not found"),
        (WK_STATUS_ALREADY_EXISTS, c"wkcore: already exists"),
        (WK_STATUS_TIMEOUT, c"wkcore: timeout"),
        (WK_STATUS_FULL, c"wkcore: full"),
    ],
    wraps: &[],
};

/// Every system's range. A new system adds its one line here.
pub(crate) const RANGES: &[&StatusRange] = &[
    &GENERIC,
    &crate::admission::status::RANGE,
    &crate::owner::status::RANGE,
    &crate::tag::status::RANGE,
    &crate::coord::status::RANGE,
];

/// Text for values no range defines.
pub(crate) const UNKNOWN_STATUS: &CStr = c"unknown status";

impl wk_status {
    /// The range that owns this value, if any.
    fn range(self) -> Option<&'static StatusRange> {
        RANGES
            .iter()
            .copied()
            .find(|r| (r.first..=r.last).contains(&self.0))
    }

    /// Static text: upstream's error text for a system's code, a neutral one for generic codes,
    /// `None` for values no system defines.
    pub fn text(self) -> Option<&'static CStr> {
        let range = self.range()?;
        range
            .codes
            .iter()
            .find(|(code, _)| *code == self)
            .map(|(_, text)| *text)
    }

    /// Go's `errors.Is`: `self` is `identity` itself or wraps it.
    pub fn is(self, identity: wk_status) -> bool {
        self == identity
            || self.range().is_some_and(|r| {
                r.wraps
                    .iter()
                    .any(|&(status, wrapped)| status == self && wrapped == identity)
            })
    }

    /// True for `WK_STATUS_OK`.
    pub fn is_ok(self) -> bool {
        self == WK_STATUS_OK
    }
}

impl fmt::Debug for wk_status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.range(), self.text()) {
            (Some(range), Some(text)) => {
                write!(f, "wk_status({} {} {:?})", self.0, range.system, text)
            }
            _ => write!(f, "wk_status({} unknown)", self.0),
        }
    }
}

/// Returns a static, NUL-terminated description of `status`; never NULL.
///
/// A system's code gives upstream's error text (`"multiraft: slot busy"`); a generic code a
/// neutral one (`"wkcore: not found"`); any other value, including codes of a newer library,
/// `"unknown status"`. The string lives for the whole program and must not be freed. Any thread
/// may call this.
#[no_mangle]
pub extern "C" fn wk_status_str(status: wk_status) -> *const c_char {
    ffi_panic_boundary! {
        status.text().unwrap_or(UNKNOWN_STATUS).as_ptr()
    }
}

/// True when `status` is `identity` or wraps it, as Go's `errors.Is`: e.g. a busy proposal
/// (`WK_STATUS_PROPOSAL_BUSY`) is also `WK_STATUS_SLOT_BUSY` and
/// `WK_STATUS_PROPOSAL_BACKPRESSURE`. Unknown values are only themselves. Any thread may call
/// this.
#[no_mangle]
pub extern "C" fn wk_status_is(status: wk_status, identity: wk_status) -> bool {
    ffi_panic_boundary! {
        status.is(identity)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn text(status: wk_status) -> &'static str {
        let p = wk_status_str(status);
        assert!(!p.is_null());
        // SAFETY: `wk_status_str` returns pointers to 'static NUL-terminated literals.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn ranges_are_disjoint_and_own_their_codes() {
        let mut values = HashSet::new();
        let mut texts = HashSet::new();
        for (i, r) in RANGES.iter().enumerate() {
            assert!(r.first <= r.last, "{}", r.system);
            for other in &RANGES[i + 1..] {
                assert!(
                    r.last < other.first || other.last < r.first,
                    "{} overlaps {}",
                    r.system,
                    other.system
                );
            }
            for (code, t) in r.codes {
                assert!(
                    (r.first..=r.last).contains(&code.0),
                    "{code:?} outside {}",
                    r.system
                );
                assert!(values.insert(code.0), "{code:?} defined twice");
                assert!(texts.insert(*t), "text {t:?} used twice");
                assert!(!t.to_bytes().is_empty());
            }
            for (status, identity) in r.wraps {
                assert!(r.codes.iter().any(|(c, _)| c == status), "{status:?}");
                assert!(identity.text().is_some(), "{identity:?} is not defined");
                assert_ne!(status, identity);
            }
        }
    }

    /// Every status of every range against `testdata/<system>/statuses.json`, the record of the
    /// upstream texts that the Go and C++ suites check too: value, text and identities, and no
    /// code without an entry.
    #[test]
    fn every_status_matches_testdata() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");
        let mut seen = HashSet::new();
        let mut files = Vec::new();
        for entry in std::fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path().join("statuses.json");
            if path.exists() {
                let file: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                files.push((path, file));
            }
        }
        // An identity may be another range's status (a system's code that is also a generic one).
        let by_name = |name: &str| -> wk_status {
            let entry = files
                .iter()
                .flat_map(|(_, f)| f["statuses"].as_array().unwrap())
                .find(|e| e["name"] == name);
            match entry {
                Some(e) => wk_status(e["code"].as_u64().unwrap() as u32),
                None => panic!("{name} is in no testdata/<system>/statuses.json"),
            }
        };
        for (path, file) in &files {
            let system = file["system"].as_str().unwrap();
            let range = RANGES.iter().find(|r| r.system == system).unwrap();
            assert_eq!(file["range"][0].as_u64(), Some(u64::from(range.first)));
            assert_eq!(file["range"][1].as_u64(), Some(u64::from(range.last)));
            for e in file["statuses"].as_array().unwrap() {
                let code = wk_status(e["code"].as_u64().unwrap() as u32);
                assert_eq!(text(code), e["text"].as_str().unwrap(), "{}", e["name"]);
                for identity in e["is"].as_array().unwrap() {
                    assert!(
                        code.is(by_name(identity.as_str().unwrap())),
                        "{}",
                        e["name"]
                    );
                }
                let wraps = range.wraps.iter().filter(|(s, _)| *s == code).count();
                assert_eq!(wraps, e["is"].as_array().unwrap().len(), "{}", e["name"]);
                seen.insert(code);
            }
            for (code, _) in range.codes {
                assert!(
                    seen.contains(code),
                    "{code:?} has no entry in {}",
                    path.display()
                );
            }
        }
        for r in RANGES {
            assert!(
                r.codes.iter().all(|(c, _)| seen.contains(c)),
                "no testdata/<system>/statuses.json for {}",
                r.system
            );
        }
    }

    #[test]
    fn generic_values_are_fixed() {
        let fixed = [
            (WK_STATUS_OK, 0),
            (WK_STATUS_NULL_ARGUMENT, 1),
            (WK_STATUS_INVALID_ARGUMENT, 2),
            (WK_STATUS_PANIC, 3),
            (WK_STATUS_INVALID_HANDLE, 4),
            (WK_STATUS_BUFFER_TOO_SMALL, 5),
            (WK_STATUS_NOT_FOUND, 6),
            (WK_STATUS_ALREADY_EXISTS, 7),
            (WK_STATUS_TIMEOUT, 8),
            (WK_STATUS_FULL, 9),
        ];
        for (status, value) in fixed {
            assert_eq!(status.0, value);
        }
        assert_eq!(GENERIC.codes.len(), fixed.len());
        assert_eq!(std::mem::size_of::<wk_status>(), 4);
    }

    #[test]
    fn generic_texts_are_neutral_and_unknown_values_are_safe() {
        assert_eq!(text(WK_STATUS_OK), "ok");
        assert_eq!(text(WK_STATUS_NOT_FOUND), "wkcore: not found");
        for (_, t) in GENERIC.codes {
            assert!(!t.to_str().unwrap().contains("multiraft"));
        }
        for raw in [10, 99, 199, 250, 1000, u32::MAX] {
            assert_eq!(text(wk_status(raw)), "unknown status");
            assert!(wk_status_is(wk_status(raw), wk_status(raw)));
            assert!(!wk_status_is(wk_status(raw), WK_STATUS_OK));
        }
    }
}
