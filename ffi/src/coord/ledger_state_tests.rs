//! `wk_coord_decision.state` of `wk_ledger_touch` and `wk_ledger_take`, through the ABI: the
//! record's state after a win, or as the call found it, for every result (a refused heartbeat or
//! compare-and-delete names the PENDING state it found, never `NONE`).

use std::ptr;

use crate::coord::ledger::*;
use crate::coord::types::*;
use crate::metrics::{wk_metrics_registry, wk_metrics_registry_free, wk_metrics_registry_new};
use crate::status::*;

/// Owns a metrics registry and a pending ledger of it.
struct Fixture {
    registry: *mut wk_metrics_registry,
    ledger: *mut wk_ledger,
}

impl Fixture {
    fn new() -> Fixture {
        let mut registry = ptr::null_mut();
        let mut ledger = ptr::null_mut();
        // SAFETY: valid out-pointers to locals.
        unsafe {
            assert_eq!(wk_metrics_registry_new(&mut registry), WK_STATUS_OK);
            assert_eq!(
                wk_ledger_new(registry, WK_LEDGER_KIND_PENDING, 8, 100, &mut ledger),
                WK_STATUS_OK
            );
        }
        Fixture { registry, ledger }
    }

    fn insert(&self, key: &[u8], id: u64, runner: u64) -> wk_coord_decision {
        let mut d = UNTOUCHED;
        // SAFETY: live handle, valid key and out-pointer.
        let st = unsafe {
            wk_ledger_insert(
                self.ledger,
                key.as_ptr(),
                key.len(),
                id,
                runner,
                WK_COORD_DEADLINE_NEVER,
                0,
                &mut d,
            )
        };
        assert_eq!(st, WK_STATUS_OK);
        d
    }

    fn claim(
        &self,
        key: &[u8],
        placeholder: u64,
        request_id: u64,
        runner: u64,
    ) -> wk_coord_decision {
        let mut d = UNTOUCHED;
        // SAFETY: live handle, valid key and out-pointer.
        let st = unsafe {
            wk_ledger_claim(
                self.ledger,
                key.as_ptr(),
                key.len(),
                placeholder,
                request_id,
                runner,
                1,
                &mut d,
            )
        };
        assert_eq!(st, WK_STATUS_OK);
        d
    }

    fn finalize(&self, key: &[u8]) -> wk_coord_decision {
        let mut d = UNTOUCHED;
        // SAFETY: live handle, valid key and out-pointer.
        let st = unsafe {
            wk_ledger_finalize(
                self.ledger,
                key.as_ptr(),
                key.len(),
                WK_OUTCOME_FAILED,
                0,
                2,
                &mut d,
            )
        };
        assert_eq!(st, WK_STATUS_OK);
        d
    }

    fn touch(&self, key: &[u8], runner: u64) -> wk_coord_decision {
        let mut d = UNTOUCHED;
        // SAFETY: live handle, valid key and out-pointer.
        let st =
            unsafe { wk_ledger_touch(self.ledger, key.as_ptr(), key.len(), runner, 3, &mut d) };
        assert_eq!(st, WK_STATUS_OK);
        d
    }

    fn take(&self, key: &[u8], expected_id: u64) -> wk_coord_decision {
        let mut d = UNTOUCHED;
        // SAFETY: live handle, valid key and out-pointer.
        let st =
            unsafe { wk_ledger_take(self.ledger, key.as_ptr(), key.len(), expected_id, &mut d) };
        assert_eq!(st, WK_STATUS_OK);
        d
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: both handles are owned by this fixture and not used after.
        unsafe {
            wk_ledger_free(self.ledger);
            wk_metrics_registry_free(self.registry);
        }
    }
}

/// A decision no call writes.
const UNTOUCHED: wk_coord_decision = wk_coord_decision {
    result: wk_coord_result::Full,
    state: wk_record_state::Finalized,
    outcome: 0xdead,
    reserved: 0xbeef,
};

fn decision(result: wk_coord_result, state: wk_record_state, outcome: u32) -> wk_coord_decision {
    wk_coord_decision {
        result,
        state,
        outcome,
        reserved: 0,
    }
}

#[test]
fn touch_names_the_pending_state_it_left_or_found() {
    let f = Fixture::new();
    let placed = |r| decision(r, wk_record_state::Placed, 0);
    let claimed = |r| decision(r, wk_record_state::Claimed, 0);
    assert_eq!(f.insert(b"job", 5, 7), placed(wk_coord_result::Won));
    // A placed record: refreshed by its runner, refused for another.
    assert_eq!(f.touch(b"job", 7), placed(wk_coord_result::Won));
    assert_eq!(f.touch(b"job", 8), placed(wk_coord_result::Mismatch));
    // A claimed one: the claim's runner now.
    assert_eq!(f.insert(b"batch", 900, 0), placed(wk_coord_result::Won));
    assert_eq!(f.claim(b"batch", 900, 42, 9), claimed(wk_coord_result::Won));
    assert_eq!(f.touch(b"batch", 9), claimed(wk_coord_result::Won));
    assert_eq!(f.touch(b"batch", 7), claimed(wk_coord_result::Mismatch));
    // Terminal and missing records, as before.
    f.finalize(b"batch");
    assert_eq!(
        f.touch(b"batch", 9),
        decision(
            wk_coord_result::Duplicate,
            wk_record_state::Finalized,
            WK_OUTCOME_FAILED
        )
    );
    assert_eq!(
        f.touch(b"nope", 9),
        decision(wk_coord_result::NotFound, wk_record_state::None, 0)
    );
}

#[test]
fn take_names_the_pending_state_it_found() {
    let f = Fixture::new();
    assert_eq!(f.insert(b"tok", 77, 0).result, wk_coord_result::Won);
    assert_eq!(
        f.take(b"tok", 78),
        decision(wk_coord_result::Mismatch, wk_record_state::Placed, 0)
    );
    assert_eq!(f.insert(b"pair", 900, 0).result, wk_coord_result::Won);
    assert_eq!(f.claim(b"pair", 900, 42, 1).result, wk_coord_result::Won);
    // The placeholder is no longer the record's id.
    assert_eq!(
        f.take(b"pair", 900),
        decision(wk_coord_result::Mismatch, wk_record_state::Claimed, 0)
    );
    // A won take removed the record: no state after it.
    assert_eq!(
        f.take(b"pair", 42),
        decision(wk_coord_result::Won, wk_record_state::None, 0)
    );
    assert_eq!(
        f.take(b"pair", 42),
        decision(wk_coord_result::NotFound, wk_record_state::None, 0)
    );
    f.finalize(b"tok");
    assert_eq!(
        f.take(b"tok", 77),
        decision(
            wk_coord_result::Duplicate,
            wk_record_state::Finalized,
            WK_OUTCOME_FAILED
        )
    );
}
