//! Calls the coordination functions as a C host would: results beside `WK_STATUS_OK`, NULL and
//! bad arguments on every entry point (a status, out-parameters untouched, no state change),
//! freed and mistyped handles.

use std::ptr;

use crate::coord::anchor::*;
use crate::coord::handoff::*;
use crate::coord::ledger::*;
use crate::coord::status::*;
use crate::coord::types::*;
use crate::metrics::{
    wk_metrics_registry, wk_metrics_registry_free, wk_metrics_registry_new,
    wk_metrics_registry_render,
};
use crate::status::*;

const RECORD: usize = std::mem::size_of::<wk_ledger_record>();
const COUNTS: usize = std::mem::size_of::<wk_ledger_counts>();

/// Owns a metrics registry and a ledger of it.
struct Fixture {
    registry: *mut wk_metrics_registry,
    ledger: *mut wk_ledger,
}

impl Fixture {
    fn new(kind: u32, capacity: u64, retention: u64) -> Fixture {
        let mut registry = ptr::null_mut();
        let mut ledger = ptr::null_mut();
        // SAFETY: valid out-pointers to locals.
        unsafe {
            assert_eq!(wk_metrics_registry_new(&mut registry), WK_STATUS_OK);
            assert_eq!(
                wk_ledger_new(registry, kind, capacity, retention, &mut ledger),
                WK_STATUS_OK
            );
        }
        Fixture { registry, ledger }
    }

    fn insert(&self, key: &[u8], id: u64, deadline: u64) -> wk_coord_decision {
        let mut d = NO_DECISION;
        // SAFETY: live handle, valid key and out-pointer.
        let st = unsafe {
            wk_ledger_insert(
                self.ledger,
                key.as_ptr(),
                key.len(),
                id,
                0,
                deadline,
                0,
                &mut d,
            )
        };
        assert_eq!(st, WK_STATUS_OK);
        d
    }

    fn counts(&self) -> wk_ledger_counts {
        let mut c = wk_ledger_counts::default();
        // SAFETY: live handle, valid out-pointer of COUNTS bytes.
        let st = unsafe { wk_ledger_counts_get(self.ledger, &mut c, COUNTS) };
        assert_eq!(st, WK_STATUS_OK);
        c
    }

    fn len(&self) -> usize {
        // SAFETY: live handle.
        unsafe { wk_ledger_len(self.ledger) }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: handles owned by the fixture, freed once.
        unsafe {
            wk_ledger_free(self.ledger);
            wk_metrics_registry_free(self.registry);
        }
    }
}

/// A decision no call writes (the "untouched" marker).
const NO_DECISION: wk_coord_decision = wk_coord_decision {
    result: wk_coord_result::Mismatch,
    state: wk_record_state::Claimed,
    outcome: 0xdead,
    reserved: 0xbeef,
};

fn won(state: wk_record_state, outcome: u32) -> wk_coord_decision {
    wk_coord_decision {
        result: wk_coord_result::Won,
        state,
        outcome,
        reserved: 0,
    }
}

#[test]
fn receipts_claims_and_takes_through_the_abi() {
    let f = Fixture::new(WK_LEDGER_KIND_PENDING, 4, 100);
    assert_eq!(f.insert(b"r1", 1, 50), won(wk_record_state::Placed, 0));
    let mut d = NO_DECISION;
    // SAFETY: live handle, valid pointers throughout.
    unsafe {
        assert_eq!(
            wk_ledger_finalize(
                f.ledger,
                b"r1".as_ptr(),
                2,
                WK_OUTCOME_SUCCEEDED,
                7,
                10,
                &mut d
            ),
            WK_STATUS_OK
        );
        assert_eq!(d, won(wk_record_state::Finalized, WK_OUTCOME_SUCCEEDED));
        assert_eq!(
            wk_ledger_finalize(f.ledger, b"r1".as_ptr(), 2, 300, 8, 11, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Duplicate);
        assert_eq!(d.outcome, WK_OUTCOME_SUCCEEDED);
        let mut rec = std::mem::MaybeUninit::<wk_ledger_record>::uninit();
        assert_eq!(
            wk_ledger_get(f.ledger, b"r1".as_ptr(), 2, rec.as_mut_ptr(), RECORD),
            WK_STATUS_OK
        );
        let rec = rec.assume_init();
        assert_eq!(
            (rec.payload, rec.duplicates, rec.last_duplicate_payload),
            (7, 1, 8)
        );
        assert_eq!(rec.finalized_at, 10);

        // A batch of receipts: concatenated keys and their lengths.
        f.insert(b"a", 1, WK_COORD_DEADLINE_NEVER);
        f.insert(b"bb", 1, WK_COORD_DEADLINE_NEVER);
        let bytes = b"abbzz";
        let lens = [1u32, 2, 2];
        let mut ds = [NO_DECISION; 3];
        let mut n = 99usize;
        assert_eq!(
            wk_ledger_finalize_batch(
                f.ledger,
                bytes.as_ptr(),
                bytes.len(),
                lens.as_ptr(),
                ptr::null(),
                3,
                WK_OUTCOME_FAILED,
                20,
                ds.as_mut_ptr(),
                3,
                &mut n
            ),
            WK_STATUS_OK
        );
        assert_eq!(n, 2);
        assert_eq!(ds[2].result, wk_coord_result::NotFound);

        // Compare-and-delete.
        f.insert(b"tok", 77, WK_COORD_DEADLINE_NEVER);
        assert_eq!(
            wk_ledger_take(f.ledger, b"tok".as_ptr(), 3, 78, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Mismatch);
        assert_eq!(
            wk_ledger_take(f.ledger, b"tok".as_ptr(), 3, 77, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Won);
        assert_eq!(f.insert(b"x", 1, 0).result, wk_coord_result::Won);
        assert_eq!(f.insert(b"y", 1, 0).result, wk_coord_result::Full);
    }
    let c = f.counts();
    assert_eq!((c.finalizations_won, c.finalizations_duplicate), (4, 1));
    assert_eq!((c.rejected_full, c.reclaimed), (1, 1));
}

#[test]
fn two_phase_claims_through_the_abi() {
    let f = Fixture::new(WK_LEDGER_KIND_CLAIM, 8, 0);
    let bytes = b"p:1:ap:1:b";
    let lens = [5u32, 5];
    let mut ds = [NO_DECISION; 2];
    let mut placed = 0usize;
    let mut d = NO_DECISION;
    // SAFETY: live handle, valid pointers throughout.
    unsafe {
        assert_eq!(
            wk_ledger_place(
                f.ledger,
                bytes.as_ptr(),
                bytes.len(),
                lens.as_ptr(),
                2,
                900,
                WK_COORD_DEADLINE_NEVER,
                0,
                ds.as_mut_ptr(),
                2,
                &mut placed
            ),
            WK_STATUS_OK
        );
        assert_eq!(placed, 2);
        assert_eq!(
            wk_ledger_claim(f.ledger, bytes.as_ptr(), 5, 900, 1, 7, 1, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d, won(wk_record_state::Claimed, 0));
        assert_eq!(
            wk_ledger_claim(f.ledger, bytes.as_ptr(), 5, 900, 2, 8, 1, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Lost);
        let mut page = wk_coord_page::default();
        assert_eq!(
            wk_ledger_finalize_own(f.ledger, 7, WK_OUTCOME_FAILED, 5, 8, &mut page),
            WK_STATUS_OK
        );
        assert_eq!((page.scanned, page.changed, page.wrapped), (8, 1, 1));
    }
}

#[test]
fn handoffs_and_anchors_through_the_abi() {
    let mut key = wk_handoff_key {
        message_id: 1001,
        target_node_id: 3,
        tag_version: 8,
        channel_type: 2,
        channel_id_len: 7,
        tag_key_len: 5,
        reserved: [0; 5],
        channel_id: [0; WK_HANDOFF_CHANNEL_ID_MAX],
        tag_key: [0; WK_HANDOFF_TAG_KEY_MAX],
    };
    key.channel_id[..7].copy_from_slice(b"group-1");
    key.tag_key[..5].copy_from_slice(b"tag-1");
    let mut h = ptr::null_mut();
    let mut d = NO_DECISION;
    // SAFETY: valid pointers throughout; handles freed once at the end.
    unsafe {
        assert_eq!(
            wk_handoff_ledger_new(ptr::null(), 4, 10, &mut h),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_handoff_ledger_claim(h, &key, 100, 0, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Won);
        let keys = [key, key];
        let mut ds = [NO_DECISION; 2];
        let mut won_n = 9usize;
        assert_eq!(
            wk_handoff_ledger_claim_batch(
                h,
                keys.as_ptr(),
                2,
                100,
                1,
                ds.as_mut_ptr(),
                2,
                &mut won_n
            ),
            WK_STATUS_OK
        );
        assert_eq!(won_n, 0);
        assert_eq!(ds[0].result, wk_coord_result::Lost);
        assert_eq!(
            wk_handoff_ledger_complete(h, &key, WK_OUTCOME_SUCCEEDED, 2, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(d.result, wk_coord_result::Won);
        assert_eq!(
            wk_handoff_ledger_claim(h, &key, 100, 3, &mut d),
            WK_STATUS_OK
        );
        assert_eq!(
            (d.result, d.outcome),
            (wk_coord_result::Duplicate, WK_OUTCOME_SUCCEEDED)
        );
        let mut bad = key;
        bad.channel_id_len = 0;
        assert_eq!(
            wk_handoff_ledger_claim(h, &bad, 100, 3, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        bad.channel_id_len = 200;
        assert_eq!(
            wk_handoff_ledger_claim(h, &bad, 100, 3, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        // `reserved` is documented "always 0": any other value is refused.
        let mut bad = key;
        bad.reserved[4] = 1;
        assert_eq!(
            wk_handoff_ledger_claim(h, &bad, 100, 3, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(wk_handoff_ledger_len(h), 1);
        wk_handoff_ledger_free(h);

        let mut t = ptr::null_mut();
        let mut fire = wk_fire {
            kind: wk_fire_kind::Lost,
            reserved: 0,
            value: 0,
        };
        let mut won = false;
        assert_eq!(
            wk_anchor_table_new(0, &mut t),
            WK_STATUS_COORD_INVALID_CAPACITY
        );
        assert!(t.is_null());
        assert_eq!(wk_anchor_table_new(2, &mut t), WK_STATUS_OK);
        assert_eq!(
            wk_anchor_table_insert(t, 7, WK_COORD_TIME_UNSET),
            WK_STATUS_OK
        );
        assert_eq!(wk_anchor_table_insert(t, 7, 1), WK_STATUS_ALREADY_EXISTS);
        assert_eq!(
            wk_anchor_table_try_fire(t, 7, 100, 60, &mut fire),
            WK_STATUS_OK
        );
        assert_eq!(fire.kind, wk_fire_kind::AnchoredFirstSeen);
        assert_eq!(
            wk_anchor_table_try_fire(t, 7, 160, 60, &mut fire),
            WK_STATUS_OK
        );
        assert_eq!((fire.kind, fire.value), (wk_fire_kind::Fired, 100));
        assert_eq!(
            wk_anchor_table_advance(t, 7, 160, 220, &mut won),
            WK_STATUS_OK
        );
        assert!(won);
        assert_eq!(
            wk_anchor_table_anchor_unset(t, 9, 1, &mut won),
            WK_STATUS_NOT_FOUND
        );
        let mut v = 0u64;
        assert_eq!(wk_anchor_table_get(t, 7, &mut v), WK_STATUS_OK);
        assert_eq!(v, 220);
        assert_eq!(
            wk_anchor_table_try_fire(t, 7, u64::MAX, 1, &mut fire),
            WK_STATUS_COORD_INVALID_TIME
        );
        assert_eq!(wk_anchor_table_remove(t, 7), WK_STATUS_OK);
        assert_eq!(wk_anchor_table_len(t), 0);
        wk_anchor_table_free(t);
    }
}

#[test]
fn bad_arguments_change_nothing() {
    let f = Fixture::new(WK_LEDGER_KIND_PENDING, 2, 0);
    f.insert(b"k", 1, 10);
    let before = (f.len(), f.counts());
    let long = [b'x'; WK_COORD_KEY_MAX + 1];
    let mut d = NO_DECISION;
    let mut page = wk_coord_page {
        scanned: 9,
        changed: 9,
        wrapped: 9,
        reserved: 9,
    };
    let mut n = 99usize;
    let mut ds = [NO_DECISION; 2];
    let mut out = ptr::null_mut();
    // SAFETY: every pointer is valid or deliberately NULL; handles are live.
    unsafe {
        let l = f.ledger;
        // Constructors.
        for (kind, cap) in [
            (2, 4),
            (WK_LEDGER_KIND_CLAIM, 0),
            (WK_LEDGER_KIND_CLAIM, WK_LEDGER_CAPACITY_MAX + 1),
        ] {
            assert_eq!(
                wk_ledger_new(ptr::null(), kind, cap, 0, &mut out),
                WK_STATUS_COORD_INVALID_CAPACITY
            );
        }
        assert_eq!(
            wk_ledger_new(ptr::null(), 0, 4, 0, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(out.is_null());
        // Keys.
        assert_eq!(
            wk_ledger_insert(l, ptr::null(), 1, 1, 0, 1, 0, &mut d),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_ledger_insert(l, b"k".as_ptr(), 0, 1, 0, 1, 0, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_insert(l, long.as_ptr(), long.len(), 1, 0, 1, 0, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_claim(l, long.as_ptr(), long.len(), 1, 2, 3, 0, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_take(l, b"".as_ptr(), 0, 1, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_touch(l, long.as_ptr(), long.len(), 1, 0, &mut d),
            WK_STATUS_COORD_INVALID_KEY
        );
        // Out-pointers.
        assert_eq!(
            wk_ledger_insert(l, b"n".as_ptr(), 1, 1, 0, 1, 0, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_ledger_finalize(l, b"k".as_ptr(), 1, 1, 0, 0, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_ledger_reconcile(l, 100, 2, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        // Outcomes and times.
        for code in [0u32, 5, 255, 65536] {
            assert_eq!(
                wk_ledger_finalize(l, b"k".as_ptr(), 1, code, 0, 0, &mut d),
                WK_STATUS_COORD_INVALID_OUTCOME
            );
            assert_eq!(
                wk_ledger_finalize_own(l, 1, code, 0, 2, &mut page),
                WK_STATUS_COORD_INVALID_OUTCOME
            );
        }
        assert_eq!(
            wk_ledger_finalize(l, b"k".as_ptr(), 1, 1, 0, u64::MAX, &mut d),
            WK_STATUS_COORD_INVALID_TIME
        );
        assert_eq!(
            wk_ledger_reconcile(l, u64::MAX, 2, &mut page),
            WK_STATUS_COORD_INVALID_TIME
        );
        assert_eq!(
            wk_ledger_reclaim(l, u64::MAX, 2, &mut page),
            WK_STATUS_COORD_INVALID_TIME
        );
        assert_eq!(
            wk_ledger_sweep_orphans(l, u64::MAX, 1, 2, &mut page),
            WK_STATUS_COORD_INVALID_TIME
        );
        // Batches.
        let lens = [1u32, 1];
        let b = b"ab";
        assert_eq!(
            wk_ledger_place(
                l,
                b.as_ptr(),
                2,
                lens.as_ptr(),
                0,
                1,
                1,
                0,
                ds.as_mut_ptr(),
                0,
                &mut n
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_ledger_place(
                l,
                b.as_ptr(),
                2,
                lens.as_ptr(),
                WK_COORD_BATCH_MAX + 1,
                1,
                1,
                0,
                ds.as_mut_ptr(),
                2,
                &mut n
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_ledger_place(
                l,
                b.as_ptr(),
                3,
                lens.as_ptr(),
                2,
                1,
                1,
                0,
                ds.as_mut_ptr(),
                2,
                &mut n
            ),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_place(
                l,
                b.as_ptr(),
                1,
                lens.as_ptr(),
                2,
                1,
                1,
                0,
                ds.as_mut_ptr(),
                2,
                &mut n
            ),
            WK_STATUS_COORD_INVALID_KEY
        );
        assert_eq!(
            wk_ledger_place(
                l,
                b.as_ptr(),
                2,
                lens.as_ptr(),
                2,
                1,
                1,
                0,
                ds.as_mut_ptr(),
                1,
                &mut n
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_ledger_finalize_batch(
                l,
                b.as_ptr(),
                2,
                lens.as_ptr(),
                ptr::null(),
                2,
                9,
                0,
                ds.as_mut_ptr(),
                2,
                &mut n
            ),
            WK_STATUS_COORD_INVALID_OUTCOME
        );
        assert_eq!(
            wk_ledger_finalize_batch(
                l,
                b.as_ptr(),
                2,
                ptr::null(),
                ptr::null(),
                2,
                1,
                0,
                ds.as_mut_ptr(),
                2,
                &mut n
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        // Sizes.
        let mut rec = std::mem::MaybeUninit::<wk_ledger_record>::uninit();
        assert_eq!(
            wk_ledger_get(
                l,
                b"k".as_ptr(),
                1,
                rec.as_mut_ptr(),
                WK_LEDGER_RECORD_MIN_SIZE - 1
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut c = wk_ledger_counts::default();
        assert_eq!(
            wk_ledger_counts_get(l, &mut c, WK_LEDGER_COUNTS_MIN_SIZE - 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Handles: NULL, mistyped.
        assert_eq!(
            wk_ledger_insert(ptr::null(), b"n".as_ptr(), 1, 1, 0, 1, 0, &mut d),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(wk_ledger_len(ptr::null()), 0);
        let mut t = ptr::null_mut();
        assert_eq!(wk_anchor_table_new(2, &mut t), WK_STATUS_OK);
        assert_eq!(
            wk_ledger_reconcile(t.cast(), 1, 1, &mut page),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            wk_anchor_table_insert(l.cast(), 1, 1),
            WK_STATUS_INVALID_HANDLE
        );
        wk_anchor_table_free(t);
        wk_ledger_free(ptr::null_mut());
    }
    assert_eq!(d, NO_DECISION, "out-parameter written by a refused call");
    assert_eq!(n, 99);
    assert_eq!((page.scanned, page.changed, page.wrapped), (9, 9, 9));
    assert_eq!(ds, [NO_DECISION; 2]);
    assert_eq!((f.len(), f.counts()), before);
}

fn render(registry: *const wk_metrics_registry) -> String {
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0usize;
    // SAFETY: a live registry handle and a buffer of the given capacity.
    let st = unsafe { wk_metrics_registry_render(registry, buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(st, WK_STATUS_OK);
    buf.truncate(len);
    String::from_utf8(buf).unwrap()
}

#[test]
fn metrics_render_the_coord_families_at_zero_then_counted() {
    let f = Fixture::new(WK_LEDGER_KIND_CLAIM, 2, 0);
    let text = render(f.registry);
    assert!(
        text.contains("wkcore_coord_claims_total{ledger=\"claim\",result=\"won\"} 0"),
        "{text}"
    );
    assert!(
        text.contains("wkcore_coord_reclaimed_total{ledger=\"handoff\"} 0"),
        "{text}"
    );
    f.insert(b"a", 1, 0);
    f.insert(b"b", 1, 0);
    f.insert(b"c", 1, 0);
    let text = render(f.registry);
    assert!(
        text.contains("wkcore_coord_rejected_total{ledger=\"claim\",reason=\"full\"} 1"),
        "{text}"
    );
}
