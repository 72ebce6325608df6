//! Hosted slots: a `wk_slot` whose admissions and takes the host runs inline on the slot's own
//! words (the futex shape), so the hot path costs the host its own atomic instructions and no
//! call at all.
//!
//! `wk_slot_new_hosted` creates the slot and hands out `wk_slot_words`: the address of every word
//! the admission decides on, alive until the last handle of the slot is freed. The words' bits
//! are the `WK_SLOT_WORD_*` constants; the transitions are documented in `docs/ABI.md` ("Hosted
//! slots") and are the library's own, in the same orders. Everything else — `wk_slot_state_get`,
//! `wk_slot_counters_get`, the metrics registry, `wk_slot_set_leader`, `wk_slot_demote`,
//! `wk_slot_close`, `wk_slot_fail` and `wk_slot_config_change_resolve` — works on a hosted slot
//! as on any other, over the same words. Its ring is never used: `wk_slot_admit`,
//! `wk_slot_admit_batch`, `wk_slot_drain` and `wk_slot_take` refuse a hosted slot with
//! `WK_STATUS_INVALID_ARGUMENT` and change nothing.
//!
//! The high bits of the state word from `WK_SLOT_WORD_HOST_SHIFT` are the host's own: the library
//! never sets or reads them.

use std::sync::Arc;

use wkcore::admission::{host_layout, SlotAdmission};

use super::slot::{wk_slot, SlotInputs};
use super::types::wk_slot_limits;
use crate::handle::{check_out, write_out, ArcCastPtr, Guarded};
use crate::metrics::wk_metrics_registry;
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_OK};

/// The version of the hosted words' layout (`wk_slot_words.layout_version`): a host written for
/// another one must refuse to start.
pub const WK_SLOT_WORDS_LAYOUT_VERSION: u32 = 1;
/// Width of the state word's admitted counters; positions count modulo `1 << 27`.
pub const WK_SLOT_WORD_COUNT_BITS: u32 = 27;
/// Mask of one admitted counter (`(1 << 27) - 1`).
pub const WK_SLOT_WORD_COUNT_MASK: u64 = 0x07ff_ffff;
/// Shift of the background proposals' admitted counter in the state word.
pub const WK_SLOT_WORD_BACKGROUND_SHIFT: u32 = 27;
/// The state word's leader bit.
pub const WK_SLOT_WORD_LEADER: u64 = 0x0040_0000_0000_0000;
/// The state word's closed bit.
pub const WK_SLOT_WORD_CLOSED: u64 = 0x0080_0000_0000_0000;
/// The state word's fatal bit (the code is in `wk_slot_words.fatal_code`).
pub const WK_SLOT_WORD_FATAL: u64 = 0x0100_0000_0000_0000;
/// The state word's config-change-pending bit.
pub const WK_SLOT_WORD_CONFIG_CHANGE_PENDING: u64 = 0x0200_0000_0000_0000;
/// The first of the host's own bits of the state word (58 to 63).
pub const WK_SLOT_WORD_HOST_SHIFT: u32 = 58;
/// Set in `*fatal_code`, beside the code, by the first `wk_slot_fail`.
pub const WK_SLOT_WORD_FATAL_PRESENT: u64 = 0x0001_0000_0000;

const _: () = {
    assert!(WK_SLOT_WORDS_LAYOUT_VERSION == host_layout::VERSION);
    assert!(WK_SLOT_WORD_COUNT_BITS == host_layout::COUNT_BITS_);
    assert!(WK_SLOT_WORD_COUNT_MASK == host_layout::COUNT_MASK);
    assert!(WK_SLOT_WORD_BACKGROUND_SHIFT == host_layout::BACKGROUND_SHIFT);
    assert!(WK_SLOT_WORD_LEADER == host_layout::LEADER);
    assert!(WK_SLOT_WORD_CLOSED == host_layout::CLOSED);
    assert!(WK_SLOT_WORD_FATAL == host_layout::FATAL);
    assert!(WK_SLOT_WORD_CONFIG_CHANGE_PENDING == host_layout::CONFIG_CHANGE_PENDING);
    assert!(WK_SLOT_WORD_HOST_SHIFT == host_layout::HOST_SHIFT);
    assert!(WK_SLOT_WORD_FATAL_PRESENT == host_layout::FATAL_PRESENT);
};

/// The words of a hosted slot (`wk_slot_new_hosted`). Every pointer is 8-byte aligned, points
/// into the library's memory and stays valid, at the same address, until the last handle of
/// the slot is freed; the host accesses them only with atomic operations.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct wk_slot_words {
    /// `WK_SLOT_WORDS_LAYOUT_VERSION` of the library that made the slot.
    pub layout_version: u32,
    /// The slot's normalized total limit.
    pub max_queued_controls: u32,
    /// The slot's normalized background limit.
    pub max_queued_background_controls: u32,
    /// Padding; 0.
    pub reserved: u32,
    /// The state word: admitted counters (all kinds; background proposals), flags, host bits.
    pub state: *mut u64,
    /// The producers' view of `released` (raised with a max RMW).
    pub released_view: *mut u64,
    /// The producers' view of `released_background`.
    pub released_background_view: *mut u64,
    /// Items taken, cumulative (the consumer's, stored last).
    pub released: *mut u64,
    /// Background proposals taken, cumulative.
    pub released_background: *mut u64,
    /// Items of kinds other than proposals taken, cumulative (stored first).
    pub released_other: *mut u64,
    /// Non-proposal items admitted or being admitted (raised before the admission CAS).
    pub admitted_other: *mut u64,
    /// Non-proposal items admitted (raised after the admission CAS).
    pub committed_other: *mut u64,
    /// The config change serial: a config change's admission `fetch_add`s 1 to it after its CAS
    /// and its ticket is the new (odd) value.
    pub config_serial: *mut u64,
    /// The fatal record (`WK_SLOT_WORD_FATAL_PRESENT | code` once failed).
    pub fatal_code: *mut u64,
    /// Refused proposals: 8 counters, `[class][result]` (foreground 0, background 1; ok 0, busy
    /// 1, throttled 2, not leader 3). The host adds to the busy, throttled and not-leader cells;
    /// the ok cells are the library's.
    pub outcomes: *mut u64,
}

/// Creates a hosted slot counted in `metrics` (module docs): a follower, open, with nothing
/// queued, and writes its words to `*words_out` and its handle to `*slot_out`.
///
/// `metrics` may be NULL: the process-wide registry. `limits` is read during the call (0 fields
/// mean defaults; above `1 << 25` gives `WK_STATUS_INVALID_ARGUMENT`). On `WK_STATUS_OK` the
/// caller owns `*slot_out`, frees it with `wk_slot_free`, and may use the words until then.
/// Any thread may call this.
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle; `limits` must be NULL or
/// point to a readable `wk_slot_limits`; `words_out` must be NULL or point to a writable
/// `wk_slot_words`; `slot_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_slot_new_hosted(
    metrics: *const wk_metrics_registry,
    slot_id: u64,
    limits: *const wk_slot_limits,
    words_out: *mut wk_slot_words,
    slot_out: *mut *mut wk_slot,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        let inputs = match unsafe { SlotInputs::read(metrics, limits) } {
            Ok(inputs) => inputs,
            Err(status) => return status,
        };
        let words_out = check_out!(words_out);
        let slot_out = check_out!(slot_out);
        let slot = match inputs.build(slot_id, true) {
            Ok(slot) => slot,
            Err(status) => return status,
        };
        let arc = Arc::new(Guarded::new::<wk_slot>(slot));
        let words = {
            let w = arc.host_words().expect("built hosted");
            let ptr = |a: &std::sync::atomic::AtomicU64| a.as_ptr();
            let limits = arc.limits();
            wk_slot_words {
                layout_version: WK_SLOT_WORDS_LAYOUT_VERSION,
                max_queued_controls: limits.max_queued_controls,
                max_queued_background_controls: limits.max_queued_background_controls,
                reserved: 0,
                state: ptr(w.state),
                released_view: ptr(w.released_view),
                released_background_view: ptr(w.released_background_view),
                released: ptr(w.released),
                released_background: ptr(w.released_background),
                released_other: ptr(w.released_other),
                admitted_other: ptr(w.admitted_other),
                committed_other: ptr(w.committed_other),
                config_serial: ptr(w.config_serial),
                fatal_code: ptr(w.fatal_code),
                outcomes: ptr(&w.outcomes[0][0]),
            }
        };
        let handle = wk_slot::into_raw(arc);
        // SAFETY: both checked by `check_out!`; writable per this function's contract.
        unsafe {
            write_out(words_out, words);
            write_out(slot_out, handle);
        }
        WK_STATUS_OK
    }
}

/// `WK_STATUS_INVALID_ARGUMENT` for a hosted slot: its ring is the host's business.
#[inline]
pub(crate) fn refuse_hosted<T>(slot: &SlotAdmission<T>) -> Option<wk_status> {
    slot.is_hosted().then_some(WK_STATUS_INVALID_ARGUMENT)
}

#[cfg(test)]
mod tests {
    use std::ptr;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::admission::slot::{
        wk_slot_admit, wk_slot_drain, wk_slot_free, wk_slot_set_leader, wk_slot_state_get,
        wk_slot_take,
    };
    use crate::admission::types::{wk_admission, wk_drain_result, wk_item, wk_slot_state};
    use crate::status::WK_STATUS_NULL_ARGUMENT;

    fn hosted(limits: wk_slot_limits) -> (*mut wk_slot, wk_slot_words) {
        let mut slot = ptr::null_mut();
        let mut words = std::mem::MaybeUninit::<wk_slot_words>::uninit();
        // SAFETY: valid out-pointers.
        let st =
            unsafe { wk_slot_new_hosted(ptr::null(), 9, &limits, words.as_mut_ptr(), &mut slot) };
        assert_eq!(st, WK_STATUS_OK);
        // SAFETY: written on OK.
        (slot, unsafe { words.assume_init() })
    }

    fn word(p: *mut u64) -> &'static AtomicU64 {
        // SAFETY: the tests keep the slot alive while they use its words.
        unsafe { AtomicU64::from_ptr(p) }
    }

    #[test]
    fn a_host_admission_on_the_words_is_what_the_library_reads() {
        let (slot, w) = hosted(wk_slot_limits {
            max_queued_controls: 4,
            max_queued_background_controls: 2,
        });
        assert_eq!(w.layout_version, WK_SLOT_WORDS_LAYOUT_VERSION);
        assert_eq!(
            (w.max_queued_controls, w.max_queued_background_controls),
            (4, 2)
        );
        // SAFETY: a live handle.
        assert_eq!(unsafe { wk_slot_set_leader(slot) }, WK_STATUS_OK);
        let state = word(w.state);
        assert_eq!(state.load(Ordering::Acquire), WK_SLOT_WORD_LEADER);
        // The host's admission of two background proposals and its host bits.
        let host = 5u64 << WK_SLOT_WORD_HOST_SHIFT;
        let next = WK_SLOT_WORD_LEADER | host | 2 | (2 << WK_SLOT_WORD_BACKGROUND_SHIFT);
        state.store(next, Ordering::Release);
        // A refusal the host counted: background (1), busy (1).
        word(w.outcomes).fetch_add(0, Ordering::Relaxed);
        // SAFETY: the outcomes table has 8 cells.
        word(unsafe { w.outcomes.add(4 + 1) }).fetch_add(3, Ordering::Relaxed);
        let mut s = wk_slot_state::default();
        // SAFETY: a live handle and a writable struct of the given size.
        let st = unsafe { wk_slot_state_get(slot, &mut s, std::mem::size_of::<wk_slot_state>()) };
        assert_eq!(st, WK_STATUS_OK);
        assert_eq!(
            (s.queued, s.queued_background, s.queued_proposals, s.leader),
            (2, 2, 2, 1)
        );
        // The host's take of both.
        word(w.released_background).store(2, Ordering::Release);
        word(w.released).store(2, Ordering::Release);
        // SAFETY: as above.
        unsafe { wk_slot_state_get(slot, &mut s, std::mem::size_of::<wk_slot_state>()) };
        assert_eq!((s.queued, s.queued_background), (0, 0));
        // The library's flag RMWs leave the host's bits alone.
        // SAFETY: a live handle.
        unsafe { crate::admission::slot::wk_slot_close(slot) };
        assert_eq!(
            state.load(Ordering::Acquire) & (63 << WK_SLOT_WORD_HOST_SHIFT),
            host
        );
        // SAFETY: freed once.
        unsafe { wk_slot_free(slot) };
    }

    #[test]
    fn the_ring_calls_refuse_a_hosted_slot_and_change_nothing() {
        let (slot, w) = hosted(wk_slot_limits {
            max_queued_controls: 0,
            max_queued_background_controls: 0,
        });
        assert_eq!(
            (w.max_queued_controls, w.max_queued_background_controls),
            (8192, 4096)
        );
        // SAFETY: live handle, valid out-pointers.
        unsafe {
            wk_slot_set_leader(slot);
            let before = word(w.state).load(Ordering::Acquire);
            let mut adm = wk_admission::default();
            assert_eq!(
                wk_slot_admit(slot, 1, 0, 7, &mut adm),
                WK_STATUS_INVALID_ARGUMENT
            );
            let mut res = wk_drain_result::default();
            assert_eq!(wk_slot_take(slot, 4, &mut res), WK_STATUS_INVALID_ARGUMENT);
            let mut items = [wk_item::default(); 2];
            assert_eq!(
                wk_slot_drain(slot, items.as_mut_ptr(), 2, &mut res),
                WK_STATUS_INVALID_ARGUMENT
            );
            assert_eq!(word(w.state).load(Ordering::Acquire), before);
            wk_slot_free(slot);
        }
    }

    #[test]
    fn bad_arguments_write_nothing() {
        let limits = wk_slot_limits {
            max_queued_controls: 1 << 26,
            max_queued_background_controls: 0,
        };
        let mut slot = ptr::null_mut();
        let mut words = std::mem::MaybeUninit::<wk_slot_words>::uninit();
        // SAFETY: valid pointers or NULL, as each case says.
        unsafe {
            let st = wk_slot_new_hosted(ptr::null(), 1, &limits, words.as_mut_ptr(), &mut slot);
            assert_eq!(st, WK_STATUS_INVALID_ARGUMENT);
            assert!(slot.is_null());
            let ok = wk_slot_limits {
                max_queued_controls: 8,
                max_queued_background_controls: 4,
            };
            let st = wk_slot_new_hosted(ptr::null(), 1, &ok, ptr::null_mut(), &mut slot);
            assert_eq!(st, WK_STATUS_NULL_ARGUMENT);
            let st = wk_slot_new_hosted(ptr::null(), 1, &ok, words.as_mut_ptr(), ptr::null_mut());
            assert_eq!(st, WK_STATUS_NULL_ARGUMENT);
            assert!(slot.is_null());
            let st = wk_slot_new_hosted(ptr::null(), 1, ptr::null(), words.as_mut_ptr(), &mut slot);
            assert_eq!(st, WK_STATUS_NULL_ARGUMENT);
        }
    }
}
