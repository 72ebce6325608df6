//! `wk_ledger`: a bounded ledger of byte-keyed records (`wkcore::coord::Ledger<ByteKey>`): the
//! claim ledger (`WK_LEDGER_KIND_CLAIM`: placeholders claimed by a real request id) and the
//! pending ledger (`WK_LEDGER_KIND_PENDING`: receipts, timeouts, runner marks, token pairs) are
//! the same structure; the kind names the metric series they count in.
//!
//! Keys are 1 to `WK_COORD_KEY_MAX` bytes. Batch calls take their keys as one buffer of
//! concatenated bytes and an array of lengths (no pointers inside host arrays). Times are the
//! host's (any unit, the same for every call on one ledger); `UINT64_MAX` is reserved.
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other; none blocks on another caller
//! (an insert and a reclaim take one shard lock of the key map briefly, and `wk_ledger_take` and
//! `wk_ledger_get` wait out the few stores of a writer that holds the record pinned: see the core
//! docs).

use std::sync::Arc;

use wkcore::coord::{
    ByteKey, ConfigError, FinalizeError, Ledger, LedgerConfig, LedgerKind, NewRecord, Outcome,
    RecordState, TakeError, TouchError,
};

use super::status::{
    WK_STATUS_COORD_INVALID_CAPACITY, WK_STATUS_COORD_INVALID_KEY, WK_STATUS_COORD_INVALID_TIME,
};
use super::types::{
    outcome, wk_coord_decision, wk_coord_page, wk_ledger_counts, wk_ledger_record,
    WK_COORD_BATCH_MAX, WK_COORD_KEY_MAX, WK_COORD_TIME_UNSET, WK_LEDGER_COUNTS_MIN_SIZE,
    WK_LEDGER_KIND_CLAIM, WK_LEDGER_KIND_PENDING, WK_LEDGER_RECORD_MIN_SIZE,
};
use crate::handle::{
    check_out, check_ptr, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable, Guarded,
};
use crate::metrics::wk_metrics_registry;
use crate::panic::ffi_panic_boundary;
use crate::status::{
    wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NOT_FOUND, WK_STATUS_NULL_ARGUMENT,
    WK_STATUS_OK,
};

/// Opaque, `Arc`-owned handle to a byte-keyed ledger.
#[allow(non_camel_case_types)]
pub struct wk_ledger {
    _private: [u8; 0],
}

impl Castable for wk_ledger {
    type RustType = Ledger<ByteKey>;
    const MAGIC: u64 = 0x776b_4c45_4447_0003; // "wkLEDG" + ABI generation
}

/// The key at `(ptr, len)`, or the status that refuses it.
///
/// # Safety
///
/// `ptr` must be NULL or point to `len` readable bytes.
pub(crate) unsafe fn byte_key(ptr: *const u8, len: usize) -> Result<ByteKey, wk_status> {
    if ptr.is_null() {
        return Err(WK_STATUS_NULL_ARGUMENT);
    }
    if len == 0 || len > WK_COORD_KEY_MAX {
        return Err(WK_STATUS_COORD_INVALID_KEY);
    }
    // SAFETY: non-NULL, `len` is at most WK_COORD_KEY_MAX, readable per the contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    ByteKey::new(bytes).map_err(|_| WK_STATUS_COORD_INVALID_KEY)
}

/// The keys of a batch: `count` lengths at `lens`, their bytes concatenated at `bytes`
/// (`bytes_len` in all, which must be exactly the sum).
///
/// # Safety
///
/// `bytes` must be NULL or point to `bytes_len` readable bytes; `lens` NULL or `count` readable
/// `u32`s.
pub(crate) unsafe fn batch_keys(
    bytes: *const u8,
    bytes_len: usize,
    lens: *const u32,
    count: usize,
) -> Result<Vec<ByteKey>, wk_status> {
    check_ptr(bytes)?;
    check_ptr(lens)?;
    if count == 0 || count > WK_COORD_BATCH_MAX {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    if bytes_len > count * WK_COORD_KEY_MAX {
        return Err(WK_STATUS_COORD_INVALID_KEY);
    }
    // SAFETY: non-NULL, aligned, bounded; readable per the contract.
    let lens = unsafe { std::slice::from_raw_parts(lens, count) };
    // SAFETY: non-NULL, bounded by count * WK_COORD_KEY_MAX; readable per the contract.
    let bytes = unsafe { std::slice::from_raw_parts(bytes, bytes_len) };
    let mut keys = Vec::with_capacity(count);
    let mut at = 0usize;
    for &len in lens {
        let len = len as usize;
        let end = at
            .checked_add(len)
            .filter(|&end| end <= bytes.len())
            .ok_or(WK_STATUS_COORD_INVALID_KEY)?;
        keys.push(ByteKey::new(&bytes[at..end]).map_err(|_| WK_STATUS_COORD_INVALID_KEY)?);
        at = end;
    }
    if at != bytes.len() {
        return Err(WK_STATUS_COORD_INVALID_KEY);
    }
    Ok(keys)
}

/// `count` writable decisions at `out`, checked.
///
/// # Safety
///
/// `out` must be NULL or point to `count` writable `wk_coord_decision`s.
pub(crate) unsafe fn decisions_out<'a>(
    out: *mut wk_coord_decision,
    out_len: usize,
    count: usize,
) -> Result<&'a mut [wk_coord_decision], wk_status> {
    check_ptr(out.cast_const())?;
    if out_len != count {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    // SAFETY: non-NULL, aligned, `count` bounded by WK_COORD_BATCH_MAX by the caller's check;
    // writable per the contract. The bytes may be uninitialised, so initialise before use.
    unsafe {
        for i in 0..count {
            out.add(i).write(wk_coord_decision::new(
                super::types::wk_coord_result::NotFound,
                None,
            ));
        }
        Ok(std::slice::from_raw_parts_mut(out, count))
    }
}

/// Refuses the reserved time.
pub(crate) fn check_time(now: u64) -> Result<(), wk_status> {
    if now == WK_COORD_TIME_UNSET {
        Err(WK_STATUS_COORD_INVALID_TIME)
    } else {
        Ok(())
    }
}

/// A ledger counted in `metrics` (NULL: the process-wide registry), or the status that refuses
/// the arguments.
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle.
pub(crate) unsafe fn new_ledger<K: wkcore::coord::LedgerKey>(
    metrics: *const wk_metrics_registry,
    kind: LedgerKind,
    capacity: u64,
    retention: u64,
) -> Result<Ledger<K>, wk_status> {
    let registry = if metrics.is_null() {
        wkcore::metrics::global()
    } else {
        // SAFETY: forwarded from this function's contract.
        match unsafe { <wk_metrics_registry as ArcCastPtr>::try_ref(metrics) } {
            Ok(registry) => registry.registry(),
            Err(error) => return Err(crate::handle::BadHandle::bad_handle(error)),
        }
    };
    let capacity = usize::try_from(capacity).map_err(|_| WK_STATUS_COORD_INVALID_CAPACITY)?;
    let config = LedgerConfig {
        capacity,
        retention,
        kind,
    };
    Ledger::with_metrics(config, registry).map_err(
        |(ConfigError::ZeroCapacity | ConfigError::CapacityAboveMax { .. })| {
            WK_STATUS_COORD_INVALID_CAPACITY
        },
    )
}

/// Writes the view of `key`'s record (`WK_STATUS_NOT_FOUND` when there is none).
///
/// # Safety
///
/// `record_out` must be NULL or point to `record_size` writable bytes.
pub(crate) unsafe fn get_record<K: wkcore::coord::LedgerKey>(
    ledger: &Ledger<K>,
    key: &K,
    record_out: *mut wk_ledger_record,
    record_size: usize,
) -> wk_status {
    let record_out = check_out!(record_out);
    if record_size < WK_LEDGER_RECORD_MIN_SIZE {
        return WK_STATUS_INVALID_ARGUMENT;
    }
    match ledger.get(key) {
        // SAFETY: checked by `check_out!`; `record_size` writable bytes per the contract.
        Some(view) => unsafe {
            write_sized(
                record_out,
                record_size,
                WK_LEDGER_RECORD_MIN_SIZE,
                wk_ledger_record::from(view),
            )
        },
        None => WK_STATUS_NOT_FOUND,
    }
}

/// Writes the ledger's counters.
///
/// # Safety
///
/// `counts_out` must be NULL or point to `counts_size` writable bytes.
pub(crate) unsafe fn get_counts<K: wkcore::coord::LedgerKey>(
    ledger: &Ledger<K>,
    counts_out: *mut wk_ledger_counts,
    counts_size: usize,
) -> wk_status {
    let counts_out = check_out!(counts_out);
    let counts = wk_ledger_counts::from(ledger.counts());
    // SAFETY: checked by `check_out!`; `counts_size` writable bytes per the contract.
    unsafe { write_sized(counts_out, counts_size, WK_LEDGER_COUNTS_MIN_SIZE, counts) }
}

/// Returns `$status` from the enclosing body when `$r` is an error.
macro_rules! tri {
    ($r:expr) => {
        match $r {
            Ok(v) => v,
            Err(status) => return status,
        }
    };
}
pub(crate) use tri;

/// Creates a ledger of `kind` (`WK_LEDGER_KIND_CLAIM` or `WK_LEDGER_KIND_PENDING`) holding at
/// most `capacity` records (`1..=WK_LEDGER_CAPACITY_MAX`; the slots are allocated now), keeping
/// terminal records for `retention` after their finalization, counted in `metrics` (NULL: the
/// process-wide registry). An unknown kind or a capacity out of range gives
/// `WK_STATUS_COORD_INVALID_CAPACITY`. On `WK_STATUS_OK` the caller owns `*ledger_out` and frees
/// it with `wk_ledger_free`.
///
/// # Safety
///
/// `metrics` must be NULL or a live `wk_metrics_registry` handle; `ledger_out` must be NULL or
/// point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_new(
    metrics: *const wk_metrics_registry,
    kind: u32,
    capacity: u64,
    retention: u64,
    ledger_out: *mut *mut wk_ledger,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger_out = check_out!(ledger_out);
        let kind = match kind {
            WK_LEDGER_KIND_CLAIM => LedgerKind::Claim,
            WK_LEDGER_KIND_PENDING => LedgerKind::Pending,
            _ => return WK_STATUS_COORD_INVALID_CAPACITY,
        };
        // SAFETY: forwarded from this function's contract.
        let ledger = tri!(unsafe { new_ledger(metrics, kind, capacity, retention) });
        let handle = wk_ledger::into_raw(Arc::new(Guarded::new::<wk_ledger>(ledger)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(ledger_out, handle) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*ledger_out` is a handle to the same ledger, freed separately.
///
/// # Safety
///
/// `ledger` must be NULL or a live `wk_ledger` handle; `ledger_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_clone(
    ledger: *const wk_ledger,
    ledger_out: *mut *mut wk_ledger,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger_out = check_out!(ledger_out);
        let arc = try_clone!(wk_ledger, ledger);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(ledger_out, wk_ledger::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the ledger goes with the last one (its metric series keep their final
/// counts). NULL is a no-op; a handle detected as already freed is ignored (best effort).
///
/// # Safety
///
/// `ledger` must be NULL or a live `wk_ledger` handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_free(ledger: *mut wk_ledger) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_ledger::free(ledger) }
    }
}

/// Inserts a PENDING record under the key, holding `id` and `runner` (0: none), timed out by the
/// reconciler from `deadline` (`WK_COORD_DEADLINE_NEVER`: never). `*decision_out`: `WON`;
/// `LOST` (a PENDING record has the key) or `DUPLICATE` (a retained terminal one has it), with
/// its state; or `FULL` (nothing inserted, nothing evicted).
///
/// # Safety
///
/// `ledger` must be NULL or a live `wk_ledger` handle; `key` NULL or `key_len` readable bytes;
/// `decision_out` NULL or writable for one `wk_coord_decision`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_insert(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    id: u64,
    runner: u64,
    deadline: u64,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        let decision_out = check_out!(decision_out);
        tri!(check_time(now));
        let d = wk_coord_decision::of_insert(ledger.insert(&key, NewRecord { id, runner, deadline }, now));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// Phase one of a two-phase claim: places one PENDING record holding `placeholder` per key of
/// the batch (`count` keys, `1..=WK_COORD_BATCH_MAX`, their lengths at `key_lens` and their bytes
/// concatenated at `key_bytes`). One slot per key is reserved first (keys already present
/// included; their slots go back after): if fewer slots are free than keys, nothing is placed
/// and every decision is `FULL`. Otherwise `decisions[i]` is `WON`, or
/// `LOST` / `DUPLICATE` for a key already present. `decisions_len` must equal `count`.
/// `*placed_out` is how many were placed.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `key_bytes` NULL or `key_bytes_len` readable bytes;
/// `key_lens` NULL or `count` readable `uint32_t`s; `decisions` NULL or `decisions_len` writable
/// decisions; `placed_out` NULL or writable for one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_place(
    ledger: *const wk_ledger,
    key_bytes: *const u8,
    key_bytes_len: usize,
    key_lens: *const u32,
    count: usize,
    placeholder: u64,
    deadline: u64,
    now: u64,
    decisions: *mut wk_coord_decision,
    decisions_len: usize,
    placed_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let keys = tri!(unsafe { batch_keys(key_bytes, key_bytes_len, key_lens, count) });
        let placed_out = check_out!(placed_out);
        tri!(check_time(now));
        // SAFETY: forwarded from this function's contract.
        let decisions = tri!(unsafe { decisions_out(decisions, decisions_len, count) });
        let mut results = vec![Ok(()); count];
        let placed = match ledger.place(&keys, placeholder, deadline, now, &mut results) {
            Ok(placed) => {
                for (d, r) in decisions.iter_mut().zip(results) {
                    *d = wk_coord_decision::of_insert(r);
                }
                placed
            }
            Err(e) => {
                for d in decisions.iter_mut() {
                    *d = wk_coord_decision::of_insert(Err(e));
                }
                0
            }
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(placed_out, placed) };
        WK_STATUS_OK
    }
}

/// Phase two: claims the placed record of the key, swapping `placeholder` for `request_id` and
/// recording `runner`, only if it still holds `placeholder` and is still PENDING and unclaimed.
/// Of many racing claims exactly one is `WON`; the others are `LOST` ("claim lost"). A record
/// holding another placeholder is `MISMATCH`; a terminal one `DUPLICATE` (with its outcome); no
/// record `NOT_FOUND`.
///
/// # Safety
///
/// As `wk_ledger_insert`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_claim(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    placeholder: u64,
    request_id: u64,
    runner: u64,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        let decision_out = check_out!(decision_out);
        tri!(check_time(now));
        let d = wk_coord_decision::of_claim(ledger.claim(&key, placeholder, request_id, runner, now));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// Moves the PENDING record of the key to `outcome` (a `WK_OUTCOME_*` code or a host code
/// `WK_HOST_OUTCOME_MIN..=65535`; others give `WK_STATUS_COORD_INVALID_OUTCOME`), only from
/// PENDING: the first terminal write is `WON`; every later one `DUPLICATE` with the outcome that
/// won (its `payload` is kept as the record's latest duplicate, for audit); `NOT_FOUND` when no
/// record has the key.
///
/// # Safety
///
/// As `wk_ledger_insert`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_finalize(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    outcome_code: u32,
    payload: u64,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        let decision_out = check_out!(decision_out);
        let outcome = tri!(outcome(outcome_code));
        tri!(check_time(now));
        let d = wk_coord_decision::of_finalize(ledger.finalize(&key, outcome, payload, now), outcome);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// `wk_ledger_finalize` for a batch of receipts with one outcome and time: `count` keys
/// (`1..=WK_COORD_BATCH_MAX`, lengths at `key_lens`, bytes concatenated at `key_bytes`),
/// `payloads` NULL (all 0) or `count` payloads, one decision each in `decisions`
/// (`decisions_len == count`). `*won_out` is how many won. The whole batch is checked before any
/// record changes.
///
/// # Safety
///
/// As `wk_ledger_place`; `payloads` NULL or `count` readable `uint64_t`s; `won_out` NULL or
/// writable for one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_finalize_batch(
    ledger: *const wk_ledger,
    key_bytes: *const u8,
    key_bytes_len: usize,
    key_lens: *const u32,
    payloads: *const u64,
    count: usize,
    outcome_code: u32,
    now: u64,
    decisions: *mut wk_coord_decision,
    decisions_len: usize,
    won_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let keys = tri!(unsafe { batch_keys(key_bytes, key_bytes_len, key_lens, count) });
        let payloads: Vec<u64> = if payloads.is_null() {
            vec![0; count]
        } else {
            tri!(check_ptr(payloads));
            // SAFETY: non-NULL, aligned, `count` bounded above; readable per the contract.
            unsafe { std::slice::from_raw_parts(payloads, count) }.to_vec()
        };
        let won_out = check_out!(won_out);
        let outcome = tri!(outcome(outcome_code));
        tri!(check_time(now));
        // SAFETY: forwarded from this function's contract.
        let decisions = tri!(unsafe { decisions_out(decisions, decisions_len, count) });
        let mut results: Vec<Result<(), FinalizeError>> = vec![Ok(()); count];
        let won = ledger.finalize_batch(&keys, &payloads, outcome, now, &mut results);
        for (d, r) in decisions.iter_mut().zip(results) {
            *d = wk_coord_decision::of_finalize(r, outcome);
        }
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(won_out, won) };
        WK_STATUS_OK
    }
}

/// Compare-and-delete: removes the PENDING record of the key if its id is `expected_id`, in one
/// transition (a refresh token and the access token it pairs with). Of two racing takes with one
/// id exactly one is `WON`; the other finds the record `DUPLICATE` (terminal) or `NOT_FOUND`
/// (gone). Another id is `MISMATCH`. `state` is the record's PENDING state as found on
/// `MISMATCH`, and `NONE` after a `WON` (the record is gone). A won take ends the record as a
/// finalization does, and is counted as one: `wkcore_coord_finalizations_total{ledger,
/// result="won"}`.
///
/// # Safety
///
/// As `wk_ledger_insert`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_take(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    expected_id: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        let decision_out = check_out!(decision_out);
        let d = take_decision(ledger.take_with_state(&key, expected_id));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// A runner's heartbeat on its PENDING record: `WON` (refreshed) or `MISMATCH` (another
/// runner's), both with the record's PENDING state (`PLACED` or `CLAIMED`); `DUPLICATE`
/// (terminal, with its outcome) or `NOT_FOUND`. The orphan sweep measures quiet from the latest
/// one.
///
/// # Safety
///
/// As `wk_ledger_insert`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_touch(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    runner: u64,
    now: u64,
    decision_out: *mut wk_coord_decision,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        let decision_out = check_out!(decision_out);
        tri!(check_time(now));
        let d = touch_decision(ledger.touch_with_state(&key, runner, now));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(decision_out, d) };
        WK_STATUS_OK
    }
}

/// A take's decision: its result, and the state of the record it decided on (none after a win:
/// the record is gone; the PENDING state a mismatch found; the outcome of a terminal record).
fn take_decision(
    (result, state): (Result<(), TakeError>, Option<RecordState>),
) -> wk_coord_decision {
    let result = wk_coord_decision::of_take(result).result;
    wk_coord_decision::new(result, state)
}

/// A heartbeat's decision: its result, and the state of the record it decided on (the PENDING
/// state it refreshed or found for another runner, the outcome of a terminal record).
fn touch_decision(
    (result, state): (Result<(), TouchError>, Option<RecordState>),
) -> wk_coord_decision {
    let result = wk_coord_decision::of_touch(result).result;
    wk_coord_decision::new(result, state)
}

/// Writes a page result, or refuses the reserved time.
///
/// # Safety
///
/// `page_out` must be NULL or writable for one `wk_coord_page`.
pub(crate) unsafe fn page_call(
    now: u64,
    page_out: *mut wk_coord_page,
    run: impl FnOnce() -> wkcore::coord::Page,
) -> wk_status {
    let page_out = check_out!(page_out);
    tri!(check_time(now));
    let page = wk_coord_page::from(run());
    // SAFETY: checked by `check_out!`; writable per this function's contract.
    unsafe { write_out(page_out, page) };
    WK_STATUS_OK
}

/// The reconciler: times out (`WK_OUTCOME_TIMED_OUT`) every PENDING record of the next `limit`
/// slots whose deadline is `<= now`, through the pending-only transition (a receipt racing it:
/// exactly one wins). Call it repeatedly; `wrapped` says a pass over the ledger ended.
///
/// # Safety
///
/// `ledger` must be NULL or a live `wk_ledger` handle; `page_out` NULL or writable for one
/// `wk_coord_page`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_reconcile(
    ledger: *const wk_ledger,
    now: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.reconcile(now, limit)) }
    }
}

/// Reclaims every terminal record of the next `limit` slots finalized at least the retention
/// before `now`: a later duplicate of its key is `NOT_FOUND`, and its slot is free again.
///
/// # Safety
///
/// As `wk_ledger_reconcile`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_reclaim(
    ledger: *const wk_ledger,
    now: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.reclaim(now, limit)) }
    }
}

/// A restarting runner's clean-up: finalizes with `outcome` the PENDING records of the next
/// `limit` slots that name `runner`, and only those (runner 0 finalizes nothing).
///
/// # Safety
///
/// As `wk_ledger_reconcile`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_finalize_own(
    ledger: *const wk_ledger,
    runner: u64,
    outcome_code: u32,
    now: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        let outcome: Outcome = tri!(outcome(outcome_code));
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.finalize_own(runner, outcome, now, limit)) }
    }
}

/// The orphan sweep: finalizes as `WK_OUTCOME_ORPHANED` the PENDING records of the next `limit`
/// slots that name a runner not heard from for `quiet` (last refreshed at or before
/// `now - quiet`).
///
/// # Safety
///
/// As `wk_ledger_reconcile`.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_sweep_orphans(
    ledger: *const wk_ledger,
    now: u64,
    quiet: u64,
    limit: usize,
    page_out: *mut wk_coord_page,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { page_call(now, page_out, || ledger.sweep_orphans(now, quiet, limit)) }
    }
}

/// Writes a view of the key's record as it was at one moment to `*record_out`, whose size the
/// caller passes (`sizeof(wk_ledger_record)`; below `WK_LEDGER_RECORD_MIN_SIZE` gives
/// `WK_STATUS_INVALID_ARGUMENT`): one state the record held, whole (never a claimed record with
/// its placeholder, nor a terminal one without its time). It waits out a writer that holds the
/// record pinned (a few stores). `WK_STATUS_NOT_FOUND` when no record has the key or it is being
/// removed.
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `key` NULL or `key_len` readable bytes;
/// `record_out` NULL or `record_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_get(
    ledger: *const wk_ledger,
    key: *const u8,
    key_len: usize,
    record_out: *mut wk_ledger_record,
    record_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        let key = tri!(unsafe { byte_key(key, key_len) });
        // SAFETY: forwarded from this function's contract.
        unsafe { get_record(ledger, &key, record_out, record_size) }
    }
}

/// Records held (PENDING and retained), a moment's view; 0 for a bad handle.
///
/// # Safety
///
/// `ledger` must be NULL or a live `wk_ledger` handle.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_len(ledger: *const wk_ledger) -> usize {
    ffi_panic_boundary! {
        try_ref!(wk_ledger, ledger).len()
    }
}

/// Writes the ledger's event counters to `*counts_out` (size passed by the caller; below
/// `WK_LEDGER_COUNTS_MIN_SIZE` gives `WK_STATUS_INVALID_ARGUMENT`).
///
/// # Safety
///
/// `ledger` must be NULL or a live handle; `counts_out` NULL or `counts_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_ledger_counts_get(
    ledger: *const wk_ledger,
    counts_out: *mut wk_ledger_counts,
    counts_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let ledger = try_ref!(wk_ledger, ledger);
        // SAFETY: forwarded from this function's contract.
        unsafe { get_counts(ledger, counts_out, counts_size) }
    }
}
