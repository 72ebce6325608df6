//! Calls the exported functions as a C host would: NULL and bad arguments on every entry point,
//! out-parameters untouched on failure, and the upstream admission scenarios through the ABI.

use std::ptr;

use crate::metrics::*;
use crate::registry::*;
use crate::slot::*;
use crate::status::wk_status;

// ----------------------------------------------------------------------------------------------
// helpers

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
        assert_eq!(unsafe { wk_slot_new(id, &limits, &mut out) }, wk_status::Ok);
        assert!(!out.is_null());
        Slot(out)
    }

    fn leader(id: u64, total: u32, bg: u32) -> Slot {
        let s = Slot::new(id, total, bg);
        // SAFETY: live handle.
        assert_eq!(unsafe { wk_slot_set_leader(s.0) }, wk_status::Ok);
        s
    }

    fn admit(&self, kind: u32, class: u32, token: u64) -> wk_status {
        // SAFETY: live handle.
        unsafe { wk_slot_admit(self.0, kind, class, token) }
    }

    fn state(&self) -> wk_slot_state {
        let mut st = wk_slot_state::default();
        // SAFETY: live handle, valid out pointer.
        assert_eq!(unsafe { wk_slot_state_get(self.0, &mut st) }, wk_status::Ok);
        st
    }

    fn counters(&self) -> wk_admission_counters {
        let mut c = wk_admission_counters::default();
        // SAFETY: live handle, valid out pointer.
        assert_eq!(unsafe { wk_slot_counters(self.0, &mut c) }, wk_status::Ok);
        c
    }

    fn drain(&self, cap: usize) -> Vec<wk_item> {
        let mut items = vec![wk_item::default(); cap];
        let mut n = usize::MAX;
        // SAFETY: live handle; `items` has `cap` elements.
        let st = unsafe { wk_slot_drain(self.0, items.as_mut_ptr(), cap, &mut n) };
        assert_eq!(st, wk_status::Ok);
        assert!(n <= cap);
        items.truncate(n);
        items
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
            wk_slot_new(1, ptr::null(), &mut out),
            wk_status::NullArgument
        );
        assert_eq!(out, sentinel);
        assert_eq!(
            wk_slot_new(1, &limits, ptr::null_mut()),
            wk_status::NullArgument
        );
        let too_big = wk_slot_limits {
            max_queued_controls: (1 << 24) + 1,
            max_queued_background_controls: 0,
        };
        assert_eq!(
            wk_slot_new(1, &too_big, &mut out),
            wk_status::InvalidArgument
        );
        let too_big_bg = wk_slot_limits {
            max_queued_controls: 0,
            max_queued_background_controls: u32::MAX,
        };
        assert_eq!(
            wk_slot_new(1, &too_big_bg, &mut out),
            wk_status::InvalidArgument
        );
        assert_eq!(out, sentinel);
    }
}

#[test]
fn null_handle_everywhere() {
    let mut st = wk_slot_state::default();
    let mut c = wk_admission_counters::default();
    let mut id = 0u64;
    let mut items = [wk_item::default(); 4];
    let mut n = 0usize;
    let tokens = [1u64, 2];
    let mut br = wk_batch_result {
        admitted: 99,
        refused: wk_status::Panic,
    };
    let mut out = ptr::null_mut();
    let null: *const wk_slot = ptr::null();
    // SAFETY: NULL handle; all other pointers valid.
    unsafe {
        assert_eq!(wk_slot_clone(null, &mut out), wk_status::NullArgument);
        assert!(out.is_null());
        assert_eq!(wk_slot_admit(null, PROPOSE, FG, 1), wk_status::NullArgument);
        assert_eq!(
            wk_slot_admit_batch(null, PROPOSE, FG, tokens.as_ptr(), 2, &mut br),
            wk_status::NullArgument
        );
        assert_eq!(br.admitted, 99);
        assert_eq!(
            wk_slot_drain(null, items.as_mut_ptr(), 4, &mut n),
            wk_status::NullArgument
        );
        assert_eq!(wk_slot_set_leader(null), wk_status::NullArgument);
        assert_eq!(wk_slot_demote(null), wk_status::NullArgument);
        assert_eq!(wk_slot_close(null), wk_status::NullArgument);
        assert_eq!(wk_slot_fail(null, 1), wk_status::NullArgument);
        assert_eq!(
            wk_slot_config_change_resolved(null),
            wk_status::NullArgument
        );
        assert_eq!(wk_slot_state_get(null, &mut st), wk_status::NullArgument);
        assert_eq!(wk_slot_counters(null, &mut c), wk_status::NullArgument);
        assert_eq!(wk_slot_id(null, &mut id), wk_status::NullArgument);
        wk_slot_free(ptr::null_mut());
        wk_admission_registry_free(ptr::null_mut());
    }
}

#[test]
fn null_out_params_change_nothing() {
    let s = Slot::leader(7, 4, 2);
    let tokens = [1u64, 2, 3];
    let mut items = [wk_item::default(); 4];
    let mut n = 0usize;
    // SAFETY: live handle; NULL out-pointers.
    unsafe {
        assert_eq!(wk_slot_clone(s.0, ptr::null_mut()), wk_status::NullArgument);
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, BG, tokens.as_ptr(), 3, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(s.state().queued, 0, "a refused call admitted nothing");
        assert_eq!(s.counters(), wk_admission_counters::default());
        let mut br = wk_batch_result {
            admitted: 5,
            refused: wk_status::Panic,
        };
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, BG, ptr::null(), 3, &mut br),
            wk_status::NullArgument
        );
        assert_eq!(br.admitted, 5);
        assert_eq!(s.admit(PROPOSE, FG, 10), wk_status::Ok);
        assert_eq!(
            wk_slot_drain(s.0, ptr::null_mut(), 4, &mut n),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_slot_drain(s.0, items.as_mut_ptr(), 4, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(s.state().queued, 1, "a refused drain took nothing");
        assert_eq!(
            wk_slot_state_get(s.0, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_slot_counters(s.0, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(wk_slot_id(s.0, ptr::null_mut()), wk_status::NullArgument);
    }
}

#[test]
fn bad_lengths_and_kinds() {
    let s = Slot::leader(8, 4, 2);
    let tokens = [1u64, 2, 3];
    let mut br = wk_batch_result {
        admitted: 77,
        refused: wk_status::Panic,
    };
    let mut items = [wk_item::default(); 4];
    let mut n = 1234usize;
    // SAFETY: live handle; pointers valid for the lengths that are actually read.
    unsafe {
        for kind in [0u32, 8, 255, u32::MAX] {
            assert_eq!(s.admit(kind, FG, 1), wk_status::InvalidArgument);
            assert_eq!(
                wk_slot_admit_batch(s.0, kind, FG, tokens.as_ptr(), 3, &mut br),
                wk_status::InvalidArgument
            );
        }
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, FG, tokens.as_ptr(), 0, &mut br),
            wk_status::InvalidArgument
        );
        // An oversized n is refused before anything is read.
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, FG, tokens.as_ptr(), (1 << 24) + 1, &mut br),
            wk_status::InvalidArgument
        );
        assert_eq!(
            wk_slot_admit_batch(s.0, PROPOSE, FG, tokens.as_ptr(), usize::MAX, &mut br),
            wk_status::InvalidArgument
        );
        assert_eq!(br.admitted, 77);
        assert_eq!(br.refused, wk_status::Panic);
        assert_eq!(
            wk_slot_drain(s.0, items.as_mut_ptr(), 0, &mut n),
            wk_status::InvalidArgument
        );
        assert_eq!(n, 1234);
        // Misaligned out-pointer.
        let mut raw = [0u8; 32];
        let misaligned = raw.as_mut_ptr().add(1).cast::<wk_slot_state>();
        assert_eq!(
            wk_slot_state_get(s.0, misaligned),
            wk_status::InvalidArgument
        );
        // Misaligned handle.
        let bad_handle = (s.0 as *mut u8).wrapping_add(1).cast::<wk_slot>();
        assert_eq!(
            wk_slot_admit(bad_handle, PROPOSE, FG, 1),
            wk_status::InvalidArgument
        );
    }
    assert_eq!(s.state().queued, 0);
    assert_eq!(s.counters(), wk_admission_counters::default());
}

#[test]
fn unknown_class_is_foreground() {
    let s = Slot::leader(9, 4, 1);
    assert_eq!(s.admit(PROPOSE, 7, 1), wk_status::Ok);
    assert_eq!(s.admit(PROPOSE, u32::MAX, 2), wk_status::Ok);
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
    assert_eq!(st, wk_status::Ok);
    // Every handle object starts with its magic word (`Guarded` is `repr(C)`), so the check
    // reads in bounds and sees the registry's word.
    let as_slot = reg.cast::<wk_slot>();
    // SAFETY: deliberately passes a registry where a slot is expected (the detector's case).
    unsafe {
        assert_eq!(
            wk_slot_admit(as_slot, PROPOSE, FG, 1),
            wk_status::InvalidArgument
        );
        wk_slot_free(as_slot); // ignored: not a live slot
        wk_admission_registry_free(reg);
    }
}

#[test]
fn status_strings_from_the_abi() {
    let text = |raw: u32| {
        let p = crate::status::wk_status_str(raw);
        assert!(!p.is_null());
        // SAFETY: static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(text(wk_status::Busy as u32), "multiraft: slot busy");
    assert_eq!(text(99), "unknown status");
}

// ----------------------------------------------------------------------------------------------
// upstream scenarios

#[test]
fn defaults_are_8192_and_4096() {
    let s = Slot::leader(10, 0, 0);
    let tokens: Vec<u64> = (0..5000).collect();
    let mut br = wk_batch_result {
        admitted: 0,
        refused: wk_status::Ok,
    };
    // SAFETY: live handle, `tokens` has 5000 elements.
    let st = unsafe { wk_slot_admit_batch(s.0, PROPOSE, BG, tokens.as_ptr(), 5000, &mut br) };
    assert_eq!(st, wk_status::Ok);
    assert_eq!(br.admitted, 4096);
    assert_eq!(br.refused, wk_status::Throttled);
    // SAFETY: as above.
    let st = unsafe { wk_slot_admit_batch(s.0, PROPOSE, FG, tokens.as_ptr(), 5000, &mut br) };
    assert_eq!(st, wk_status::Ok);
    assert_eq!(br.admitted, 8192 - 4096);
    assert_eq!(br.refused, wk_status::Busy);
}

#[test]
fn background_leaves_foreground_reserve() {
    let s = Slot::leader(11, 4, 1);
    assert_eq!(s.admit(PROPOSE, BG, 1), wk_status::Ok);
    assert_eq!(s.admit(PROPOSE, BG, 2), wk_status::Throttled);
    assert_eq!(s.admit(PROPOSE, FG, 3), wk_status::Ok);
    let c = s.counters();
    assert_eq!((c.background_ok, c.background_throttled), (1, 1));
    assert_eq!(c.foreground_ok, 1);
}

#[test]
fn control_queue_limit_busy() {
    let s = Slot::new(12, 1, 0);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 1), wk_status::Ok);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 2), wk_status::Busy);
    assert_eq!(
        s.counters(),
        wk_admission_counters::default(),
        "not a proposal"
    );
}

#[test]
fn close_demote_fail_and_config_change() {
    let s = Slot::leader(13, 8, 0);
    assert_eq!(s.admit(CONFIG_CHANGE, FG, 1), wk_status::Ok);
    assert_eq!(
        s.admit(CONFIG_CHANGE, FG, 2),
        wk_status::ConfigChangePending
    );
    assert_eq!(s.state().config_change_pending, 1);
    // SAFETY: live handle.
    let st = unsafe { wk_slot_config_change_resolved(s.0) };
    assert_eq!(st, wk_status::Ok);
    assert_eq!(s.admit(CONFIG_CHANGE, FG, 3), wk_status::Ok);

    // SAFETY: live handle.
    assert_eq!(unsafe { wk_slot_demote(s.0) }, wk_status::Ok);
    assert_eq!(s.admit(PROPOSE, FG, 4), wk_status::NotLeader);
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 5), wk_status::Ok);
    assert_eq!(s.counters().foreground_not_leader, 1);

    // SAFETY: live handle.
    unsafe {
        assert_eq!(wk_slot_fail(s.0, 42), wk_status::Ok);
        assert_eq!(wk_slot_fail(s.0, 43), wk_status::Fatal);
    }
    let st = s.state();
    assert_eq!((st.fatal, st.fatal_code), (1, 42));
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 6), wk_status::Fatal);

    let c = Slot::leader(14, 8, 0);
    // SAFETY: live handle.
    assert_eq!(unsafe { wk_slot_close(c.0) }, wk_status::Ok);
    assert_eq!(c.admit(PROPOSE, FG, 1), wk_status::Closed);
    assert_eq!(c.admit(TRANSFER_LEADER, FG, 1), wk_status::Closed);
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
    let mut br = wk_batch_result {
        admitted: 0,
        refused: wk_status::Ok,
    };
    assert_eq!(s.admit(PROPOSE, FG, 1), wk_status::Ok);
    // SAFETY: live handle, 10 tokens.
    let st = unsafe { wk_slot_admit_batch(s.0, PROPOSE, BG, tokens.as_ptr(), 10, &mut br) };
    assert_eq!(
        (st, br.admitted, br.refused),
        (wk_status::Ok, 10, wk_status::Ok)
    );
    assert_eq!(s.admit(TRANSFER_LEADER, FG, 2), wk_status::Ok);
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
    let mut id = 0;
    let mut reg = ptr::null_mut();
    let mut got = ptr::null_mut();
    // SAFETY: live handles and valid out pointers throughout.
    unsafe {
        assert_eq!(wk_slot_clone(s.0, &mut c), wk_status::Ok);
        assert_eq!(c, s.0, "an Arc clone is the same object");
        assert_eq!(wk_slot_id(c, &mut id), wk_status::Ok);
        assert_eq!(id, 21);
        wk_slot_free(c);

        assert_eq!(wk_admission_registry_new(&mut reg), wk_status::Ok);
        assert_eq!(wk_admission_registry_insert(reg, s.0), wk_status::Ok);
        assert_eq!(
            wk_admission_registry_insert(reg, s.0),
            wk_status::AlreadyExists
        );
        assert_eq!(
            wk_admission_registry_insert(reg, ptr::null()),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_admission_registry_insert(ptr::null(), s.0),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_admission_registry_get(reg, 21, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_admission_registry_get(reg, 22, &mut got),
            wk_status::NotFound
        );
        assert!(got.is_null());
        assert_eq!(wk_admission_registry_get(reg, 21, &mut got), wk_status::Ok);
        // The handle from the registry is the same slot.
        assert_eq!(wk_slot_set_leader(got), wk_status::Ok);
        assert_eq!(s.state().leader, 1);
        let mut reg2 = ptr::null_mut();
        assert_eq!(wk_admission_registry_clone(reg, &mut reg2), wk_status::Ok);
        assert_eq!(
            wk_admission_registry_clone(ptr::null(), &mut reg2),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_admission_registry_clone(reg, ptr::null_mut()),
            wk_status::NullArgument
        );
        wk_admission_registry_free(reg);
        assert_eq!(wk_admission_registry_remove(reg2, 21), wk_status::Ok);
        assert_eq!(wk_admission_registry_remove(reg2, 21), wk_status::NotFound);
        assert_eq!(
            wk_admission_registry_remove(ptr::null(), 21),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_admission_registry_new(ptr::null_mut()),
            wk_status::NullArgument
        );
        wk_admission_registry_free(reg2);
        // Still usable: the host's own handles keep the slot alive.
        assert_eq!(wk_slot_admit(got, PROPOSE, FG, 1), wk_status::Ok);
        wk_slot_free(got);
    }
}

#[test]
fn metrics_snapshot_and_render() {
    let s = Slot::leader(31, 4, 1);
    assert_eq!(s.admit(PROPOSE, BG, 1), wk_status::Ok);
    assert_eq!(s.admit(PROPOSE, BG, 2), wk_status::Throttled);

    let mut snap = wk_metrics_snapshot::default();
    let mut len = 0usize;
    // SAFETY: valid pointers and lengths throughout.
    unsafe {
        assert_eq!(
            wk_metrics_snapshot_get(ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(wk_metrics_snapshot_get(&mut snap), wk_status::Ok);
        assert_eq!(snap.version, WK_METRICS_SNAPSHOT_VERSION);
        assert!(snap.slot_proposal_admission.background_throttled >= 1);

        assert_eq!(
            wk_metrics_render(ptr::null_mut(), 0, ptr::null_mut()),
            wk_status::NullArgument
        );
        assert_eq!(
            wk_metrics_render(ptr::null_mut(), 10, &mut len),
            wk_status::NullArgument
        );
        assert_eq!(len, 0);
        assert_eq!(
            wk_metrics_render(ptr::null_mut(), 0, &mut len),
            wk_status::BufferTooSmall
        );
        assert!(len > 0);
        let mut small = [0u8; 8];
        let mut len2 = 0;
        assert_eq!(
            wk_metrics_render(small.as_mut_ptr(), 8, &mut len2),
            wk_status::BufferTooSmall
        );
        assert_eq!(small, [0u8; 8], "nothing written on BUFFER_TOO_SMALL");
        assert!(len2 > 8);
        let mut buf = vec![0u8; len2 + 4096];
        assert_eq!(
            wk_metrics_render(buf.as_mut_ptr(), buf.len(), &mut len),
            wk_status::Ok
        );
        buf.truncate(len);
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains(
            "wukongim_slot_proposal_admission_total{class=\"background\",result=\"throttled\"}"
        ));
    }
}

#[test]
fn version_calls() {
    assert_eq!(crate::version::wk_abi_version(), crate::WK_ABI_VERSION);
    crate::version::wk_abi_v1();
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
                    loop {
                        // SAFETY: the handle outlives the scope.
                        match unsafe { wk_slot_admit(slot, PROPOSE, FG, token) } {
                            wk_status::Ok => break,
                            wk_status::Busy => std::thread::yield_now(),
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
            let mut n = 0;
            // SAFETY: live handle, `items` has 256 elements.
            let st = unsafe { wk_slot_drain(s.0, items.as_mut_ptr(), items.len(), &mut n) };
            assert_eq!(st, wk_status::Ok);
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
