//! Process-wide metrics: a versioned counter snapshot and the Prometheus text exposition.
//!
//! Counters are summed over every slot ever created in the process (`wkcore::metrics::global`).
//! Both calls may run on any thread, concurrently with anything.

use wkcore::admission::{AdmissionCounts, AdmissionResult, ProposalClass};

use crate::handle::{check_out, write_out};
use crate::panic::ffi_panic_boundary;
use crate::status::wk_status;

/// Version of `wk_metrics_snapshot` this library writes.
pub const WK_METRICS_SNAPSHOT_VERSION: u32 = 1;

/// Proposal admission decisions by class and result (proposals only, as upstream's observer).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_admission_counters {
    /// Foreground proposals admitted.
    pub foreground_ok: u64,
    /// Foreground proposals refused: queue full.
    pub foreground_busy: u64,
    /// Foreground proposals refused: throttled (always 0; only background is throttled).
    pub foreground_throttled: u64,
    /// Foreground proposals refused: not leader.
    pub foreground_not_leader: u64,
    /// Background proposals admitted.
    pub background_ok: u64,
    /// Background proposals refused: queue full.
    pub background_busy: u64,
    /// Background proposals refused: background quota used up.
    pub background_throttled: u64,
    /// Background proposals refused: not leader.
    pub background_not_leader: u64,
}

impl From<&AdmissionCounts> for wk_admission_counters {
    fn from(c: &AdmissionCounts) -> Self {
        use AdmissionResult::{Busy, NotLeader, Ok, Throttled};
        use ProposalClass::{Background, Foreground};
        wk_admission_counters {
            foreground_ok: c.get(Foreground, Ok),
            foreground_busy: c.get(Foreground, Busy),
            foreground_throttled: c.get(Foreground, Throttled),
            foreground_not_leader: c.get(Foreground, NotLeader),
            background_ok: c.get(Background, Ok),
            background_busy: c.get(Background, Busy),
            background_throttled: c.get(Background, Throttled),
            background_not_leader: c.get(Background, NotLeader),
        }
    }
}

/// Process-wide counter snapshot. New fields are only ever appended, with a new `version`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct wk_metrics_snapshot {
    /// `WK_METRICS_SNAPSHOT_VERSION`.
    pub version: u32,
    /// Zero.
    pub reserved: u32,
    /// `wukongim_slot_proposal_admission_total{class,result}`, summed over all slots.
    pub slot_proposal_admission: wk_admission_counters,
}

/// Writes the process-wide counters to `*out`.
///
/// # Safety
///
/// `out` must be NULL or point to a writable `wk_metrics_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_get(out: *mut wk_metrics_snapshot) -> wk_status {
    ffi_panic_boundary! {
        let out = check_out!(out);
        let snapshot = wk_metrics_snapshot {
            version: WK_METRICS_SNAPSHOT_VERSION,
            reserved: 0,
            slot_proposal_admission: wk_admission_counters::from(
                &wkcore::metrics::global().admission_totals(),
            ),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(out, snapshot) };
        wk_status::Ok
    }
}

/// Writes the metrics as Prometheus text format 0.0.4 (UTF-8, not NUL-terminated) into
/// `buf[0..cap]` and its length to `*len_out`.
///
/// When `cap` is too small the call returns `WK_STATUS_BUFFER_TOO_SMALL`, writes nothing to
/// `buf` and writes the needed length to `*len_out` (the one documented exception to
/// "out-parameters only on success"); retry with a larger buffer (the text may grow in
/// between). `buf` may be NULL when `cap == 0`, to ask for the length.
///
/// # Safety
///
/// `buf` must be NULL (only with `cap == 0`) or point to `cap` writable bytes; `len_out` must be
/// NULL or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_render(
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let len_out = check_out!(len_out);
        if buf.is_null() && cap != 0 {
            return wk_status::NullArgument;
        }
        let mut text = String::new();
        wkcore::metrics::global().render(&mut text);
        let bytes = text.as_bytes();
        if bytes.len() > cap {
            // SAFETY: checked by `check_out!`; writable per this function's contract.
            unsafe { write_out(len_out, bytes.len()) };
            return wk_status::BufferTooSmall;
        }
        if !bytes.is_empty() {
            // SAFETY: `buf` is non-NULL here (cap >= len > 0), the caller provides `cap >= len`
            // writable bytes, and a fresh `String` cannot overlap the caller's buffer.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        }
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(len_out, bytes.len()) };
        wk_status::Ok
    }
}
