//! `wk_handoff_ledger`: shard hand-off idempotency (`wkcore::coord::Ledger<HandoffKey>`).
//!
//! A leader → target-node shard task is keyed by the 6-tuple `wk_handoff_key`. The first claim
//! of a key wins (`WON`); a leader retry or a committed-log replay is told `LOST` (the hand-off
//! is in flight) or `DUPLICATE` (it completed, with its outcome) for as long as the record is
//! retained. The full tuple is stored, so two hand-offs whose hashes collide stay two records.
//! Records are completed with an outcome, timed out by the reconciler, and reclaimed after the
//! retention, exactly as in `wk_ledger`.
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other.

use std::sync::Arc;

use wkcore::coord::{FinalizeError, HandoffKey, InsertError, Ledger, LedgerKind, NewRecord};

use super::ledger::{check_time, get_counts, get_record, new_ledger, page_call, tri};
use super::types::{
    outcome, wk_coord_decision, wk_coord_page, wk_handoff_key, wk_ledger_counts, wk_ledger_record,
    WK_COORD_BATCH_MAX,
};
use crate::handle::{
    check_in_slice, check_out, check_ptr, try_clone, try_ref, write_out, ArcCastPtr, Castable,
    Guarded,
};
use crate::metrics::wk_metrics_registry;
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_OK};

/// Opaque, `Arc`-owned handle to a shard hand-off ledger.
#[allow(non_camel_case_types)]
pub struct wk_handoff_ledger {
    _private: [u8; 0],
}

impl Castable for wk_handoff_ledger {
    type RustType = Ledger<HandoffKey>;
    const MAGIC: u64 = 0x776b_484f_4646_0003; // "wkHOFF" + ABI generation
}

/// The core key of `*key`.
///
/// # Safety
///
/// `key` must be NULL or point to a readable `wk_handoff_key`.
unsafe fn key_of(key: *const wk_handoff_key) -> Result<HandoffKey, wk_status> {
    check_ptr(key)?;
    // SAFETY: non-NULL, aligned; readable per the contract (every bit pattern is valid).
    unsafe { &*key }.core_key()
}

/// Creates a hand-off ledger of at most `capacity` records (`1..=WK_LEDGER_CAPACITY_MAX`),
/// keeping completed ones for `retention`, counted in `metrics` (NULL: the process-wide
/// registry) under `ledger="handoff"`. On `WK_STATUS_OK` the caller owns `*ledger_out`.
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle; `ledger_out` must be NULL or
/// point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_new(
    metrics: *const wk_metrics_registry,
    capacity: u64,
    retention: u64,
    ledger_out: *mut *mut wk_handoff_ledger,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger_out = check_out!(ledger_out);
        // SAFETY: forwarded from this function's contract.
        let ledger = tri!(unsafe { new_ledger(metrics, LedgerKind::Handoff, capacity, retention) });
        let handle =
            wk_handoff_ledger::into_raw(Arc::new(Guarded::new::<wk_handoff_ledger>(ledger)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(ledger_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*ledger_out` is a handle to the same ledger, freed separately.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `ledger_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_clone(
    ledger: *const wk_handoff_ledger,
    ledger_out: *mut *mut wk_handoff_ledger,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger_out = check_out!(ledger_out);
        let arc = try_clone!(wk_handoff_ledger, ledger);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(ledger_out, wk_handoff_ledger::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_free(ledger: *mut wk_handoff_ledger) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_handoff_ledger::free(ledger) }
    }
}

/// Claims the hand-off `*key`, timed out by the reconciler from `deadline`: the first claim is
/// `WON`; a retry or replay is `LOST` (in flight) or `DUPLICATE` (completed; `outcome` says how)
/// while the record is retained; `FULL` when the ledger cannot hold it (nothing evicted).
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `key` NULL or a readable `wk_handoff_key`;
/// `decision_out` NULL or writable for one `wk_coord_decision`.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_claim(
    ledger: *const wk_handoff_ledger,
    key: *const wk_handoff_key,
    deadline: u64,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { key_of(key) });
        let decision_out = check_out!(decision_out);
        tri!(check_time(now));
        let record = NewRecord { id: 0, runner: 0, deadline };
        let d = wk_coord_decision::of_insert(ledger.insert(&key, record, now));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// `wk_handoff_ledger_claim` for `count` keys (`1..=WK_COORD_BATCH_MAX`), one decision each in
/// `decisions` (`decisions_len == count`); `*won_out` is how many won. Every key is checked
/// before any is claimed; a key repeated in the batch wins once.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `keys` NULL or `count` readable keys; `decisions`
/// NULL or `decisions_len` writable decisions; `won_out` NULL or writable for one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_claim_batch(
    ledger: *const wk_handoff_ledger,
    keys: *const wk_handoff_key,
    count: usize,
    deadline: u64,
    now: u64,
    decisions: *mut wk_coord_decision,
    decisions_len: usize,
    won_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        let keys = check_in_slice!(keys, count, WK_COORD_BATCH_MAX);
        let keys: Vec<HandoffKey> = tri!(keys.iter().map(wk_handoff_key::core_key).collect());
        let won_out = check_out!(won_out);
        tri!(check_time(now));
        // SAFETY: forwarded from this function's contract.
        let decisions = tri!(unsafe { super::ledger::decisions_out(decisions, decisions_len, count) });
        let record = NewRecord { id: 0, runner: 0, deadline };
        let mut won = 0;
        for (key, d) in keys.iter().zip(decisions.iter_mut()) {
            let r: Result<(), InsertError> = ledger.insert(key, record, now);
            won += usize::from(r.is_ok());
            *d = wk_coord_decision::of_insert(r);
        }
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(won_out, won) };
        WK_STATUS_OK
    }
}

/// Completes the hand-off `*key` with `outcome` (as `wk_ledger_finalize`): `WON` the first time,
/// `DUPLICATE` with the winner's outcome after, `NOT_FOUND` when no record has the key.
///
/// # Safety
///
/// As `wk_handoff_ledger_claim`.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_complete(
    ledger: *const wk_handoff_ledger,
    key: *const wk_handoff_key,
    outcome_code: u32,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { key_of(key) });
        let decision_out = check_out!(decision_out);
        let outcome = tri!(outcome(outcome_code));
        tri!(check_time(now));
        let r: Result<(), FinalizeError> = ledger.finalize(&key, outcome, 0, now);
        let d = wk_coord_decision::of_finalize(r, outcome);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// The reconciler of hand-offs (as `wk_ledger_reconcile`).
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `page_out` NULL or writable for one `wk_coord_page`.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_reconcile(
    ledger: *const wk_handoff_ledger,
    now: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.reconcile(now, limit)) }
    }
}

/// Reclaims hand-offs past their retention (as `wk_ledger_reclaim`): the claim table expires old
/// keys here, a bounded page at a time.
///
/// # Safety
///
/// As `wk_handoff_ledger_reconcile`.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_reclaim(
    ledger: *const wk_handoff_ledger,
    now: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.reclaim(now, limit)) }
    }
}

/// A moment's view of the hand-off `*key` (as `wk_ledger_get`).
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `key` NULL or a readable key; `record_out` NULL or
/// `record_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_get(
    ledger: *const wk_handoff_ledger,
    key: *const wk_handoff_key,
    record_out: *mut wk_ledger_record,
    record_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { key_of(key) });
        // SAFETY: forwarded from this function's contract.
        unsafe { get_record(ledger, &key, record_out, record_size) }
    }
}

/// Hand-offs held, a moment's view; 0 for a bad handle.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_len(ledger: *const wk_handoff_ledger) -> usize {
    ffi_panic_boundary! {
        try_ref!(wk_handoff_ledger, ledger).len()
    }
}

/// The ledger's event counters (as `wk_ledger_counts_get`).
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `counts_out` NULL or `counts_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_handoff_ledger_counts_get(
    ledger: *const wk_handoff_ledger,
    counts_out: *mut wk_ledger_counts,
    counts_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_handoff_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { get_counts(ledger, counts_out, counts_size) }
    }
}
