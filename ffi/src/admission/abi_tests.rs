//! Calls the exported functions as a C host would: NULL and bad arguments on every entry point,
//! out-parameters untouched on failure, and the upstream admission scenarios through the ABI.

use std::ptr;

use crate::admission::registry::*;
use crate::admission::slot::*;
use crate::admission::status::*;
use crate::admission::types::*;
use crate::status::*;

// ----------------------------------------------------------------------------------------------
// helpers

const STATE_SIZE: usize = std::mem::size_of::<wk_slot_state>();
const COUNTERS_SIZE: usize = std::mem::size_of::<wk_admission_counters>();
const PROPOSE: u32 = wk_control_kind::Propose as u32;
const CONFIG_CHANGE: u32 = wk_control_kind::ConfigChange as u32;
const TRANSFER_LEADER: u32 = wk_control_kind::TransferLeader as u32;
const FG: u32 = wk_proposal_class::Foreground as u32;
const BG: u32 = wk_proposal_class::Background as u32;

/// Owns one `wk_slot*` for a test.
struct Slot(*mut wk_slot);

impl Slot {
    fn new(id: u64, total: u32, bg: u32) -> Slot {
        let limits = wk_slot_limits {
            max_queued_controls: total,
            max_queued_background_controls: bg,
        };
        let mut out = ptr::null_mut();
        // SAFETY: valid pointers to locals.
        let st = unsafe { wk_slot_new(ptr::null(), id, &limits, &mut out) };
        assert_eq!(st, WK_STATUS_OK);
        assert!(!out.is_null());
        Slot(out)
    }

    fn leader(id: u64, total: u32, bg: u32) -> Slot {
        let s = Slot::new(id, total, bg);
        // SAFETY: live handle.
        assert_eq!(unsafe { wk_slot_set_leader(s.0) }, WK_STATUS_OK);
        s
    }

    fn admit(&self, kind: u32, class: u32, token: u64) -> wk_status {
        self.admit_at(kind, class, token).0
    }

    /// The status and, on success, the admission.
    fn admit_at(&self, kind: u32, class: u32, token: u64) -> (wk_status, Option<wk_admission>) {
        let mut out = wk_admission {
            position: u64::MAX,
            config_change: u64::MAX,
        };
        // SAFETY: live handle, valid out pointer.
        let st = unsafe { wk_slot_admit(self.0, kind, class, token, &mut out) };
        if st == WK_STATUS_OK {
            (st, Some(out))
        } else {
            assert_eq!(out.position, u64::MAX, "written only on OK");
            (st, None)
        }
    }

    fn batch(&self, kind: u32, class: u32, tokens: Option<&[u64]>, n: usize) -> wk_batch_result {
        let mut br = wk_batch_result {
            admitted: usize::MAX,
            refused: WK_STATUS_PANIC,
            first_position: u64::MAX,
            config_change: u64::MAX,
        };
        let ptr = tokens.map_or(ptr::null(), <[u64]>::as_ptr);
        // SAFETY: live handle; `tokens` has `n` elements when given.
        let st = unsafe { wk_slot_admit_batch(self.0, kind, class, ptr, n, &mut br) };
        assert_eq!(st, WK_STATUS_OK);
        br
    }

    fn resolve(&self, ticket: u64) -> wk_status {
        // SAFETY: live handle.
        unsafe { wk_slot_config_change_resolve(self.0, ticket) }
    }

    fn take(&self, max: usize) -> wk_drain_result {
        let mut r = wk_drain_result {
            count: usize::MAX,
            first_position: u64::MAX,
        };
        // SAFETY: live handle, valid out pointer.
        let st = unsafe { wk_slot_take(self.0, max, &mut r) };
        assert_eq!(st, WK_STATUS_OK);
        r
    }

    fn state(&self) -> wk_slot_state {
        let mut st = wk_slot_state::default();
        // SAFETY: live handle, valid out pointer.
        let status = unsafe { wk_slot_state_get(self.0, &mut st, STATE_SIZE) };
        assert_eq!(status, WK_STATUS_OK);
        st
    }

    fn counters(&self) -> wk_admission_counters {
        let mut c = wk_admission_counters::default();
        // SAFETY: live handle, valid out pointer.
        let status = unsafe { wk_slot_counters_get(self.0, &mut c, COUNTERS_SIZE) };
        assert_eq!(status, WK_STATUS_OK);
        c
    }

    fn drain(&self, cap: usize) -> Vec<wk_item> {
        self.drain_at(cap).0
    }

    /// The items and the first one's position.
    fn drain_at(&self, cap: usize) -> (Vec<wk_item>, u64) {
        let mut items = vec![wk_item::default(); cap];
        let mut r = wk_drain_result {
            count: usize::MAX,
            first_position: u64::MAX,
        };
        // SAFETY: live handle; `items` has `cap` elements.
        let st = unsafe { wk_slot_drain(self.0, items.as_mut_ptr(), cap, &mut r) };
        assert_eq!(st, WK_STATUS_OK);
        assert!(r.count <= cap);
        items.truncate(r.count);
        (items, r.first_position)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { wk_slot_free(self.0) }
    }
}

// ----------------------------------------------------------------------------------------------
// NULL and bad arguments

#[test]
fn slot_new_checks_arguments() {
    let limits = wk_slot_limits::default();
    let sentinel = ptr::dangling_mut::<wk_slot>();
    let mut out = sentinel;
    // SAFETY: NULL/valid pointers only.
    unsafe {
        assert_eq!(
            wk_slot_new(ptr::null(), 1, ptr::null(), &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(out, sentinel);
        assert_eq!(
            wk_slot_new(ptr::null(), 1, &limits, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let too_big = wk_slot_limits {
            max_queued_controls: (1 << 25) + 1,
            max_queued_background_controls: 0,
        };
        assert_eq!(
            wk_slot_new(ptr::null(), 1, &too_big, &mut out),
            WK_STATUS_INVALID_ARGUMENT
        );
        let too_big_bg = wk_slot_limits {
            max_queued_controls: 0,
            max_queued_background_controls: u32::MAX,
        };
        assert_eq!(
            wk_slot_new(ptr::null(), 1, &too_big_bg, &mut out),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(out, sentinel);
    }
}

#[test]
fn null_handle_everywhere() {
    let mut st = wk_slot_state::default();
    let mut c = wk_admission_counters::default();
    let mut items = [wk_item::default(); 4];
    let mut dr = wk_drain_result::default();
    let mut adm = wk_admission::default();
    let tokens = [1u64, 2];
    let mut br = wk_batch_result {
        admitted: 99,
        refused: WK_STATUS_PANIC,
        first_position: 0,
        config_change: 0,
    };
    let mut out = ptr::null_mut();
    let null: *const wk_slot = ptr::null();
    // SAFETY: NULL handle; all other pointers valid.
    unsafe {
        assert_eq!(wk_slot_clone(null, &mut out), WK_STATUS_NULL_ARGUMENT);
        assert!(out.is_null());
        assert_eq!(
            wk_slot_admit(null, PROPOSE, FG, 1, &mut adm),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_admit_batch(null, PROPOSE, FG, tokens.as_ptr(), 2, &mut br),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_admit_batch(null, PROPOSE, FG, ptr::null(), 2, &mut br),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(br.admitted, 99);
        assert_eq!(
            wk_slot_drain(null, items.as_mut_ptr(), 4, &mut dr),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(wk_slot_take(null, 4, &mut dr), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_slot_config_change_resolve(null, 1),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(wk_slot_set_leader(null), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(wk_slot_demote(null), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(wk_slot_close(null), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(wk_slot_fail(null, 1), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_slot_state_get(null, &mut st, STATE_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_counters_get(null, &mut c, COUNTERS_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(wk_slot_id_get(null), 0);
        wk_slot_free(ptr::null_mut());
        wk_admission_registry_free(ptr::null_mut());
    }
}

#[test]
fn null_out_params_change_nothing() {
    let s = Slot::leader(7, 4, 2);
    let tokens = [1u64, 2, 3];
    let mut items = [wk_item::default(); 4];
    let mut dr = wk_drain_result::default();
    // SAFETY: live handle; NULL out-pointers.
    unsafe {
        assert_eq!(wk_slot_clone(s.0, ptr::null_mut()), WK_STATUS_NULL_ARGUMENT);
        for kind in [PROPOSE, CONFIG_CHANGE, TRANSFER_LEADER, 0] {
            assert_eq!(
                wk_slot_admit(s.0, kind, FG, 1, ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
        }
        assert_eq!(s.state().queued, 0, "a refused admit admitted nothing");
        assert_eq!(s.state().config_change_pending, 0);
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, BG, tokens.as_ptr(), 3, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(s.state().queued, 0, "a refused call admitted nothing");
        assert_eq!(s.counters(), wk_admission_counters::default());
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, BG, ptr::null(), 3, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(s.state().queued, 0, "a refused call admitted nothing");
        assert_eq!(s.admit(PROPOSE, FG, 10), WK_STATUS_OK);
        assert_eq!(
            wk_slot_drain(s.0, ptr::null_mut(), 4, &mut dr),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_drain(s.0, items.as_mut_ptr(), 4, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_take(s.0, 4, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(s.state().queued, 1, "a refused drain or take took nothing");
        assert_eq!(
            wk_slot_state_get(s.0, ptr::null_mut(), STATE_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_slot_counters_get(s.0, ptr::null_mut(), COUNTERS_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
    }
}

#[test]
fn bad_lengths_and_kinds() {
    let s = Slot::leader(8, 4, 2);
    let tokens = [1u64, 2, 3];
    let mut br = wk_batch_result {
        admitted: 77,
        refused: WK_STATUS_PANIC,
        first_position: 5,
        config_change: 6,
    };
    let mut items = [wk_item::default(); 4];
    let mut dr = wk_drain_result {
        count: 1234,
        first_position: 4321,
    };
    // SAFETY: live handle; pointers valid for the lengths that are actually read.
    unsafe {
        for kind in [0u32, 8, 255, u32::MAX] {
            assert_eq!(s.admit(kind, FG, 1), WK_STATUS_INVALID_ARGUMENT);
            assert_eq!(
                wk_slot_admit_batch(s.0, kind, FG, tokens.as_ptr(), 3, &mut br),
                WK_STATUS_INVALID_ARGUMENT
            );
            assert_eq!(
                wk_slot_admit_batch(s.0, kind, FG, ptr::null(), 3, &mut br),
                WK_STATUS_INVALID_ARGUMENT
            );
        }
        for tokens in [tokens.as_ptr(), ptr::null()] {
            assert_eq!(
                wk_slot_admit_batch(s.0, PROPOSE, FG, tokens, 0, &mut br),
                WK_STATUS_INVALID_ARGUMENT
            );
            // An oversized n is refused before anything is read.
            assert_eq!(
                wk_slot_admit_batch(s.0, PROPOSE, FG, tokens, (1 << 25) + 1, &mut br),
                WK_STATUS_INVALID_ARGUMENT
            );
            assert_eq!(
                wk_slot_admit_batch(s.0, PROPOSE, FG, tokens, usize::MAX, &mut br),
                WK_STATUS_INVALID_ARGUMENT
            );
        }
        // Misaligned tokens.
        let raw = [0u64; 4];
        let misaligned_tokens = raw.as_ptr().cast::<u8>().add(1).cast::<u64>();
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, FG, misaligned_tokens, 2, &mut br),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            (br.admitted, br.refused, br.first_position, br.config_change),
            (77, WK_STATUS_PANIC, 5, 6)
        );
        assert_eq!(
            wk_slot_drain(s.0, items.as_mut_ptr(), 0, &mut dr),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(wk_slot_take(s.0, 0, &mut dr), WK_STATUS_INVALID_ARGUMENT);
        assert_eq!((dr.count, dr.first_position), (1234, 4321));
        // Misaligned out-pointers of the new calls.
        let mut raw = [0u64; 8];
        let misaligned_admission = raw.as_mut_ptr().cast::<u8>().add(1).cast::<wk_admission>();
        assert_eq!(
            wk_slot_admit(s.0, PROPOSE, FG, 1, misaligned_admission),
            WK_STATUS_INVALID_ARGUMENT
        );
        let misaligned_drain = raw
            .as_mut_ptr()
            .cast::<u8>()
            .add(1)
            .cast::<wk_drain_result>();
        assert_eq!(
            wk_slot_take(s.0, 1, misaligned_drain),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Misaligned out-pointer.
        let mut raw = [0u8; 32];
        let misaligned = raw.as_mut_ptr().add(1).cast::<wk_slot_state>();
        assert_eq!(
            wk_slot_state_get(s.0, misaligned, STATE_SIZE),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Misaligned handle.
        let bad_handle = (s.0 as *mut u8).wrapping_add(1).cast::<wk_slot>();
        let mut adm = wk_admission::default();
        assert_eq!(
            wk_slot_admit(bad_handle, PROPOSE, FG, 1, &mut adm),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            wk_slot_config_change_resolve(bad_handle, 1),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            wk_slot_take(bad_handle, 1, &mut dr),
            WK_STATUS_INVALID_HANDLE
        );
    }
    assert_eq!(s.state().queued, 0);
    assert_eq!(s.counters(), wk_admission_counters::default());
}

#[test]
fn unknown_class_is_foreground() {
    let s = Slot::leader(9, 4, 1);
    assert_eq!(s.admit(PROPOSE, 7, 1), WK_STATUS_OK);
    assert_eq!(s.admit(PROPOSE, u32::MAX, 2), WK_STATUS_OK);
    let c = s.counters();
    assert_eq!(c.foreground_ok, 2);
    assert_eq!(c.background_ok, 0);
    let items = s.drain(4);
    assert!(items.iter().all(|i| i.proposal_class == 0));
}

#[test]
fn wrong_handle_type_is_detected() {
    let mut reg = ptr::null_mut();
    // SAFETY: valid out pointer.
    let st = unsafe { wk_admission_registry_new(&mut reg) };
    assert_eq!(st, WK_STATUS_OK);
    // Every handle object starts with its magic word (`Guarded` is `repr(C)`), so the check
    // reads in bounds and sees the registry's word.
    let as_slot = reg.cast::<wk_slot>();
    let mut adm = wk_admission::default();
    let mut dr = wk_drain_result::default();
    // SAFETY: deliberately passes a registry where a slot is expected (the detector's case).
    unsafe {
        assert_eq!(
            wk_slot_admit(as_slot, PROPOSE, FG, 1, &mut adm),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            wk_slot_config_change_resolve(as_slot, 1),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(wk_slot_take(as_slot, 1, &mut dr), WK_STATUS_INVALID_HANDLE);
        assert_eq!(wk_slot_id_get(as_slot), 0);
        wk_slot_free(as_slot); // ignored: not a live slot
        wk_admission_registry_free(reg);
    }
}

#[test]
fn status_strings_from_the_abi() {
    let text = |raw: u32| {
        let p = crate::status::wk_status_str(wk_status(raw));
        assert!(!p.is_null());
        // SAFETY: static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(text(WK_STATUS_SLOT_BUSY.0), "multiraft: slot busy");
    assert_eq!(
        text(WK_STATUS_PROPOSAL_BUSY.0),
        "multiraft: proposal backpressure: multiraft: slot busy"
    );
    assert_eq!(text(99), "unknown status");
}

// ----------------------------------------------------------------------------------------------
// upstream scenarios

#[test]
fn defaults_are_8192_and_4096() {
    let s = Slot::leader(10, 0, 0);
    let tokens: Vec<u64> = (0..5000).collect();
    let br = s.batch(PROPOSE, BG, Some(&tokens), 5000);
    assert_eq!(br.admitted, 4096);
    assert_eq!(br.refused, WK_STATUS_PROPOSAL_THROTTLED);
    assert_eq!(br.first_position, 0);
    let br = s.batch(PROPOSE, FG, Some(&tokens), 5000);
    assert_eq!(br.admitted, 8192 - 4096);
    assert_eq!(br.refused, WK_STATUS_PROPOSAL_BUSY);
    assert_eq!(br.first_position, 4096);
}

#[test]
fn background_leaves_foreground_reserve() {
    let s = Slot::leader(11, 4, 1);
    assert_eq!(s.admit(PROPOSE, BG, 1), WK_STATUS_OK);
    assert_eq!(s.admit(PROPOSE, BG, 2), WK_STATUS_PROPOSAL_THROTTLED);
    assert_eq!(s.admit(PROPOSE, FG, 3), WK_STATUS_OK);
    let c = s.counters();
    assert_eq!((c.background_ok, c.background_throttled), (1, 1));
    assert_eq!(c.foreground_ok, 1);
}

#[test]
fn control_queue_limit_busy() {
    let s = Slot::new(12, 1, 0);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 1), WK_STATUS_OK);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 2), WK_STATUS_SLOT_BUSY);
    assert_eq!(
        s.counters(),
        wk_admission_counters::default(),
        "not a proposal"
    );
}

#[test]
fn close_demote_fail_and_config_change() {
    let s = Slot::leader(13, 8, 0);
    let (st, first) = s.admit_at(CONFIG_CHANGE, FG, 1);
    assert_eq!(st, WK_STATUS_OK);
    let first = first.unwrap().config_change;
    assert_ne!(first, 0);
    assert_eq!(
        s.admit(CONFIG_CHANGE, FG, 2),
        WK_STATUS_CONFIG_CHANGE_PENDING
    );
    assert_eq!(s.state().config_change_pending, 1);
    assert_eq!(s.resolve(first), WK_STATUS_OK);
    assert_eq!(s.state().config_change_pending, 0);
    assert_eq!(s.admit(CONFIG_CHANGE, FG, 3), WK_STATUS_OK);

    // SAFETY: live handle.
    assert_eq!(unsafe { wk_slot_demote(s.0) }, WK_STATUS_OK);
    assert_eq!(s.admit(PROPOSE, FG, 4), WK_STATUS_NOT_LEADER);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 5), WK_STATUS_OK);
    assert_eq!(s.counters().foreground_not_leader, 1);

    // SAFETY: live handle.
    unsafe {
        assert_eq!(wk_slot_fail(s.0, 42), WK_STATUS_OK);
        assert_eq!(wk_slot_fail(s.0, 43), WK_STATUS_SLOT_FAILED);
    }
    let st = s.state();
    assert_eq!((st.fatal, st.fatal_code), (1, 42));
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 6), WK_STATUS_SLOT_FAILED);

    let c = Slot::leader(14, 8, 0);
    // SAFETY: live handle.
    assert_eq!(unsafe { wk_slot_close(c.0) }, WK_STATUS_OK);
    assert_eq!(c.admit(PROPOSE, FG, 1), WK_STATUS_SLOT_CLOSED);
    assert_eq!(c.admit(TRANSFER_LEADER, FG, 1), WK_STATUS_SLOT_CLOSED);
    assert_eq!(c.state().closed, 1);
    assert_eq!(
        c.counters(),
        wk_admission_counters::default(),
        "closed emits nothing"
    );
}

#[test]
fn drain_is_fifo_with_partial_drains() {
    let s = Slot::leader(15, 64, 0);
    let tokens: Vec<u64> = (100..110).collect();
    assert_eq!(s.admit(PROPOSE, FG, 1), WK_STATUS_OK);
    let br = s.batch(PROPOSE, BG, Some(&tokens), 10);
    assert_eq!((br.admitted, br.refused), (10, WK_STATUS_OK));
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 2), WK_STATUS_OK);
    let a = s.drain(4);
    let b = s.drain(100);
    assert_eq!(s.drain(4).len(), 0);
    let got: Vec<u64> = a.iter().chain(&b).map(|i| i.token).collect();
    let mut want = vec![1];
    want.extend(100..110);
    want.push(2);
    assert_eq!(got, want);
    assert_eq!(a[0].kind as u32, PROPOSE);
    assert_eq!(a[1].proposal_class as u32, BG);
    assert_eq!(b.last().unwrap().kind as u32, TRANSFER_LEADER);
    assert!(a.iter().chain(&b).all(|i| i.reserved == [0; 6]));
}

#[test]
fn clone_id_and_registry() {
    let s = Slot::new(21, 0, 0);
    let mut c = ptr::null_mut();
    let mut reg = ptr::null_mut();
    let mut got = ptr::null_mut();
    // SAFETY: live handles and valid out pointers throughout.
    unsafe {
        assert_eq!(wk_slot_clone(s.0, &mut c), WK_STATUS_OK);
        assert_eq!(c, s.0, "an Arc clone is the same object");
        assert_eq!(wk_slot_id_get(c), 21);
        wk_slot_free(c);

        assert_eq!(wk_admission_registry_new(&mut reg), WK_STATUS_OK);
        assert_eq!(wk_admission_registry_insert(reg, s.0), WK_STATUS_OK);
        assert_eq!(
            wk_admission_registry_insert(reg, s.0),
            WK_STATUS_ALREADY_EXISTS
        );
        assert_eq!(
            wk_admission_registry_insert(reg, ptr::null()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_admission_registry_insert(ptr::null(), s.0),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_admission_registry_get(reg, 21, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_admission_registry_get(reg, 22, &mut got),
            WK_STATUS_SLOT_NOT_FOUND
        );
        assert!(got.is_null());
        assert_eq!(wk_admission_registry_get(reg, 21, &mut got), WK_STATUS_OK);
        // The handle from the registry is the same slot.
        assert_eq!(wk_slot_set_leader(got), WK_STATUS_OK);
        assert_eq!(s.state().leader, 1);
        let mut reg2 = ptr::null_mut();
        assert_eq!(wk_admission_registry_clone(reg, &mut reg2), WK_STATUS_OK);
        assert_eq!(
            wk_admission_registry_clone(ptr::null(), &mut reg2),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_admission_registry_clone(reg, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        wk_admission_registry_free(reg);
        assert_eq!(wk_admission_registry_remove(reg2, 21), WK_STATUS_OK);
        assert_eq!(
            wk_admission_registry_remove(reg2, 21),
            WK_STATUS_SLOT_NOT_FOUND
        );
        assert_eq!(
            wk_admission_registry_remove(ptr::null(), 21),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_admission_registry_new(ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        wk_admission_registry_free(reg2);
        // Still usable: the host's own handles keep the slot alive.
        let mut adm = wk_admission::default();
        assert_eq!(wk_slot_admit(got, PROPOSE, FG, 1, &mut adm), WK_STATUS_OK);
        wk_slot_free(got);
    }
}

#[test]
fn version_calls() {
    assert_eq!(crate::version::wk_abi_version(), crate::WK_ABI_VERSION);
    crate::version::wk_abi_v3();
}

#[test]
fn concurrent_producers_one_consumer() {
    const PRODUCERS: u64 = 4;
    const PER: u64 = 20_000;
    let s = Slot::leader(41, 1024, 0);
    let handle = s.0 as usize;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut seen: Vec<Vec<u64>> = vec![Vec::new(); PRODUCERS as usize];
    std::thread::scope(|scope| {
        for p in 0..PRODUCERS {
            let done = &done;
            scope.spawn(move || {
                let slot = handle as *const wk_slot;
                for i in 0..PER {
                    let token = (p << 32) | i;
                    let mut adm = wk_admission::default();
                    loop {
                        // SAFETY: the handle outlives the scope.
                        match unsafe { wk_slot_admit(slot, PROPOSE, FG, token, &mut adm) } {
                            WK_STATUS_OK => break,
                            WK_STATUS_PROPOSAL_BUSY => std::thread::yield_now(),
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                }
                done.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
        }
        let mut items = vec![wk_item::default(); 256];
        loop {
            let finished = done.load(std::sync::atomic::Ordering::Acquire) == PRODUCERS as usize;
            let mut r = wk_drain_result::default();
            // SAFETY: live handle, `items` has 256 elements.
            let st = unsafe { wk_slot_drain(s.0, items.as_mut_ptr(), items.len(), &mut r) };
            assert_eq!(st, WK_STATUS_OK);
            let n = r.count;
            for it in &items[..n] {
                seen[(it.token >> 32) as usize].push(it.token & 0xffff_ffff);
            }
            if finished && n == 0 {
                break;
            }
        }
    });
    for per in &seen {
        assert_eq!(per.len() as u64, PER, "nothing lost or duplicated");
        assert!(
            per.windows(2).all(|w| w[0] + 1 == w[1]),
            "per-producer FIFO"
        );
    }
}

#[test]
fn caller_sized_structs() {
    let s = Slot::leader(51, 4, 1);
    assert_eq!(s.admit(PROPOSE, BG, 1), WK_STATUS_OK);
    // SAFETY: live handle; every out pointer is valid for the size passed.
    unsafe {
        // Below the first release's size: refused, nothing written.
        let mut st = wk_slot_state {
            queued: 77,
            ..Default::default()
        };
        assert_eq!(
            wk_slot_state_get(s.0, &mut st, WK_SLOT_STATE_MIN_SIZE - 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(st.queued, 77);
        let mut c = wk_admission_counters::default();
        assert_eq!(
            wk_slot_counters_get(s.0, &mut c, 8),
            WK_STATUS_INVALID_ARGUMENT
        );
        // A newer caller's bigger struct: this library's fields are written, the rest kept.
        #[repr(C)]
        struct Bigger {
            state: wk_slot_state,
            future_field: u64,
        }
        let mut big = Bigger {
            state: wk_slot_state::default(),
            future_field: 0xfeed,
        };
        assert_eq!(
            wk_slot_state_get(
                s.0,
                (&mut big as *mut Bigger).cast(),
                std::mem::size_of::<Bigger>()
            ),
            WK_STATUS_OK
        );
        assert_eq!((big.state.queued, big.state.queued_background), (1, 1));
        assert_eq!(big.state.leader, 1);
        assert_eq!(big.state.queued_proposals, 1);
        assert!(big.state.memory_bytes > 0);
        assert_eq!(big.future_field, 0xfeed);
        // A generation-2 caller's 16 bytes: the fields it knows, nothing past them.
        #[repr(C)]
        struct Gen2 {
            state: [u32; 4],
            after: [u64; 2],
        }
        let mut old = Gen2 {
            state: [0; 4],
            after: [7, 7],
        };
        assert_eq!(
            wk_slot_state_get(s.0, (&mut old as *mut Gen2).cast(), WK_SLOT_STATE_MIN_SIZE),
            WK_STATUS_OK
        );
        assert_eq!((old.state[0], old.state[1]), (1, 1));
        assert_eq!(old.after, [7, 7]);
    }
}

#[test]
fn getters_return_neutral_values_for_bad_handles() {
    let s = Slot::new(61, 0, 0);
    // SAFETY: NULL, a live handle and a deliberately misaligned one.
    unsafe {
        assert_eq!(wk_slot_id_get(ptr::null()), 0);
        assert_eq!(wk_slot_id_get(s.0), 61);
        let misaligned = (s.0 as *const u8).wrapping_add(1).cast::<wk_slot>();
        assert_eq!(wk_slot_id_get(misaligned), 0);
    }
}

#[test]
fn status_identities_follow_upstream() {
    assert!(wk_status_is(WK_STATUS_PROPOSAL_BUSY, WK_STATUS_SLOT_BUSY));
    assert!(wk_status_is(
        WK_STATUS_PROPOSAL_BUSY,
        WK_STATUS_PROPOSAL_BACKPRESSURE
    ));
    assert!(wk_status_is(
        WK_STATUS_PROPOSAL_THROTTLED,
        WK_STATUS_PROPOSAL_BACKPRESSURE
    ));
    assert!(wk_status_is(
        WK_STATUS_PROPOSAL_THROTTLED,
        WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED
    ));
    assert!(!wk_status_is(
        WK_STATUS_SLOT_BUSY,
        WK_STATUS_PROPOSAL_BACKPRESSURE
    ));
    assert!(!wk_status_is(
        WK_STATUS_PROPOSAL_THROTTLED,
        WK_STATUS_SLOT_BUSY
    ));
    assert!(wk_status_is(WK_STATUS_NOT_LEADER, WK_STATUS_NOT_LEADER));
}

// ----------------------------------------------------------------------------------------------
// generation 3: positions, tickets, takes, batches without tokens, state

#[test]
fn positions_are_consecutive_across_admit_batch_drain_and_take() {
    let s = Slot::leader(71, 8, 0);
    let mut next = 0u64;
    let mut expect_taken = 0u64;
    // Several laps of an 8-place ring, mixing every entry point.
    for round in 0..20u64 {
        let (st, a) = s.admit_at(PROPOSE, FG, round);
        assert_eq!(st, WK_STATUS_OK);
        let a = a.unwrap();
        assert_eq!((a.position, a.config_change), (next, 0));
        next += 1;
        let tokens = [round, round + 1, round + 2];
        let br = s.batch(TRANSFER_LEADER, FG, Some(&tokens), 3);
        assert_eq!(
            (br.admitted, br.first_position, br.config_change),
            (3, next, 0)
        );
        next += 3;
        let br = s.batch(PROPOSE, BG, None, 2);
        assert_eq!((br.admitted, br.first_position), (2, next));
        next += 2;
        let (items, first) = s.drain_at(4);
        assert_eq!((items.len(), first), (4, expect_taken));
        expect_taken += 4;
        let t = s.take(100);
        assert_eq!((t.count, t.first_position), (2, expect_taken));
        expect_taken += 2;
        // Nothing left: a drain and a take report the next position.
        assert_eq!(s.drain_at(4).1, expect_taken);
        assert_eq!(s.take(1).first_position, expect_taken);
    }
    assert_eq!(next, expect_taken);
    assert_eq!(WK_SLOT_POSITION_MODULUS, 1 << 27);
}

#[test]
fn a_batch_without_tokens_queues_zero_tokens() {
    let s = Slot::leader(72, 4, 1);
    let br = s.batch(PROPOSE, FG, None, 3);
    assert_eq!(
        (br.admitted, br.refused, br.first_position),
        (3, WK_STATUS_OK, 0)
    );
    let br = s.batch(PROPOSE, BG, None, 5);
    assert_eq!(
        (br.admitted, br.refused, br.first_position),
        (1, WK_STATUS_PROPOSAL_BUSY, 3)
    );
    let br = s.batch(PROPOSE, FG, None, 1);
    assert_eq!(
        (br.admitted, br.refused, br.first_position),
        (0, WK_STATUS_PROPOSAL_BUSY, 0)
    );
    let items = s.drain(8);
    assert_eq!(items.len(), 4);
    assert!(items.iter().all(|i| i.token == 0));
    assert_eq!(items[3].proposal_class as u32, BG);
    let c = s.counters();
    assert_eq!((c.foreground_ok, c.background_ok), (3, 1));
    assert_eq!((c.background_busy, c.foreground_busy), (4, 1));
}

#[test]
fn config_changes_resolve_by_ticket_once() {
    let s = Slot::leader(73, 8, 0);
    // No change admitted yet: nothing to resolve, whatever the number.
    for ticket in [0, 1, 2, 3, u64::MAX] {
        assert_eq!(s.resolve(ticket), WK_STATUS_CONFIG_CHANGE_STALE);
    }
    let (st, a) = s.admit_at(CONFIG_CHANGE, FG, 1);
    assert_eq!(st, WK_STATUS_OK);
    let first = a.unwrap().config_change;
    assert!(first != 0 && first % 2 == 1, "tickets are odd: {first}");
    // Wrong tickets change nothing.
    for ticket in [0, first + 1, first + 2, first.wrapping_sub(1)] {
        assert_eq!(s.resolve(ticket), WK_STATUS_CONFIG_CHANGE_STALE, "{ticket}");
        assert_eq!(s.state().config_change_pending, 1);
    }
    assert_eq!(
        s.admit(CONFIG_CHANGE, FG, 2),
        WK_STATUS_CONFIG_CHANGE_PENDING
    );
    assert_eq!(s.resolve(first), WK_STATUS_OK);
    assert_eq!(s.state().config_change_pending, 0);
    // A second resolve is refused ...
    assert_eq!(s.resolve(first), WK_STATUS_CONFIG_CHANGE_STALE);
    // ... also once a newer change is pending, which it must not clear.
    let tokens = [5u64, 6, 7];
    let br = s.batch(CONFIG_CHANGE, FG, Some(&tokens), 3);
    assert_eq!(
        (br.admitted, br.refused),
        (1, WK_STATUS_CONFIG_CHANGE_PENDING)
    );
    let second = br.config_change;
    assert!(second > first && second % 2 == 1);
    assert_eq!(s.resolve(first), WK_STATUS_CONFIG_CHANGE_STALE);
    assert_eq!(s.state().config_change_pending, 1);
    // Draining the change does not resolve it (upstream: its future is still pending).
    assert_eq!(s.drain(8).len(), 2);
    assert_eq!(s.state().config_change_pending, 1);
    assert_eq!(s.resolve(second), WK_STATUS_OK);
    assert_eq!(s.resolve(second), WK_STATUS_CONFIG_CHANGE_STALE);
    // Other kinds never carry a ticket; a refused config change neither.
    let (_, a) = s.admit_at(TRANSFER_LEADER, FG, 9);
    assert_eq!(a.unwrap().config_change, 0);
    // SAFETY: live handle.
    assert_eq!(unsafe { wk_slot_demote(s.0) }, WK_STATUS_OK);
    let br = s.batch(CONFIG_CHANGE, FG, None, 1);
    assert_eq!(
        (br.admitted, br.refused, br.config_change),
        (0, WK_STATUS_NOT_LEADER, 0)
    );
    assert_eq!(
        crate::status::wk_status_str(WK_STATUS_CONFIG_CHANGE_STALE),
        texts_ptr("wkcore: config change already resolved")
    );
}

/// `wk_status_str`'s pointer when its text is `want` (so the assertion prints the text).
fn texts_ptr(want: &str) -> *const std::ffi::c_char {
    let p = crate::status::wk_status_str(WK_STATUS_CONFIG_CHANGE_STALE);
    // SAFETY: static NUL-terminated string.
    let got = unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
    assert_eq!(got, want);
    p
}

#[test]
fn state_reports_queued_proposals_and_memory() {
    let s = Slot::leader(74, 0, 0);
    let idle = s.state().memory_bytes;
    assert!(
        idle > 0 && idle < 2048,
        "an idle slot is small: {idle} bytes"
    );
    assert_eq!(s.admit(PROPOSE, FG, 1), WK_STATUS_OK);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 2), WK_STATUS_OK);
    assert_eq!(s.admit(PROPOSE, BG, 3), WK_STATUS_OK);
    let st = s.state();
    assert_eq!(
        (
            st.queued,
            st.queued_background,
            st.queued_proposals,
            st.reserved
        ),
        (3, 1, 2, 0)
    );
    // The first segment: 256 places of 16 bytes.
    assert_eq!(st.memory_bytes, idle + 256 * 16);
    assert_eq!(s.take(1).count, 1);
    assert_eq!(s.state().queued_proposals, 1);
    assert_eq!(s.take(1).count, 1);
    assert_eq!(
        s.state().queued_proposals,
        1,
        "a transfer is not a proposal"
    );
    assert_eq!(s.take(1).count, 1);
    assert_eq!(s.state().queued_proposals, 0);
    // One full lap of the default 8192 places: the whole ring, 128 KiB, and no more after.
    let br = s.batch(TRANSFER_LEADER, FG, None, 8192);
    assert_eq!(br.admitted, 8192);
    assert_eq!(s.state().queued_proposals, 0);
    assert_eq!(s.take(usize::MAX).count, 8192);
    let full = s.state().memory_bytes;
    assert_eq!(full, idle + 8192 * 16);
    assert_eq!(s.batch(PROPOSE, FG, None, 8192).admitted, 8192);
    assert_eq!(s.state().queued_proposals, 8192);
    assert_eq!(s.state().memory_bytes, full);
    println!("wk_slot_state.memory_bytes at the default limits: idle {idle}, after one lap {full}");
}
