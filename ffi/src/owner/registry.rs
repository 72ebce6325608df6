//! `wk_owner_registry`: reserve, the by-identity calls, stop, close, sweep, snapshot and the
//! retirement proof; and `wk_owner_isolation_quiesce`, which answers for any owner of this node.
//!
//! By-identity calls take a full `wk_owner_identity` and compare it exactly with the held
//! owner. There is no by-identity begin: hosts resolve (`wk_owner_registry_resolve`) and begin on
//! the handle.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use wkcore::clock::Clock;
use wkcore::owner::{
    Budget, Isolation, Owner, OwnerError, OwnerOptions, OwnerRegistry, SweepError, SweepTurn,
};

use super::cancel::{budget_of, wk_cancel_token};
use super::handle::{into_raw, quiesce_handle, wk_owner, HostClose};
use super::host::{HostClock, WordClock};
use super::status::{result_status, status_of, WK_STATUS_OWNER_INVALID};
use super::types::{
    claim_of, in_ref, owner_of, proof_of, text, wk_owner_claim, wk_owner_close_fn,
    wk_owner_identity, wk_owner_options, wk_owner_release_fn, wk_owner_snapshot,
    wk_owner_sweep_result, wk_retired_boot, WK_OWNER_BOOT_ID_MAX, WK_OWNER_PROOFS_MAX,
    WK_OWNER_SWEEP_LIMIT_MAX,
};
use crate::coord::ledger::tri;
use crate::handle::{
    check_out, check_ptr, try_clone, try_ref, write_out, ArcCastPtr, Castable, Guarded,
};
use crate::panic::ffi_panic_boundary;
use crate::status::{
    wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_NOT_FOUND, WK_STATUS_NULL_ARGUMENT,
    WK_STATUS_OK,
};

/// Opaque, `Arc`-owned handle to an owner registry. Freeing the last reference stops admission
/// and drops the registry's references to its owners (owner handles the host still holds stay
/// readable and admit nothing).
#[allow(non_camel_case_types)]
pub struct wk_owner_registry {
    _private: [u8; 0],
}

/// The registry behind a handle, with its clock as a host may read it (`host.rs`).
pub(crate) struct Registry {
    pub(crate) registry: OwnerRegistry,
    pub(crate) clock: HostClock,
}

impl Castable for wk_owner_registry {
    type RustType = Registry;
    const MAGIC: u64 = 0x776b_4f52_4547_0003; // "wkOREG" + ABI generation
}

/// The core options `o` describes, on `clock`.
///
/// # Safety
///
/// `o.boot_id` must be NULL or point to `o.boot_id_len` readable bytes.
unsafe fn options_of(
    o: &wk_owner_options,
    clock: Arc<dyn Clock>,
) -> Result<OwnerOptions, wk_status> {
    if (o.struct_size as usize) < std::mem::size_of::<wk_owner_options>() {
        return Err(WK_STATUS_INVALID_ARGUMENT);
    }
    // SAFETY: forwarded contract.
    let boot_id = unsafe { text(o.boot_id, o.boot_id_len, WK_OWNER_BOOT_ID_MAX) }?;
    Ok(OwnerOptions {
        node_id: o.node_id,
        boot_id: boot_id.into(),
        capacity: o.capacity,
        max_operations: o.max_operations,
        pending_timeout: Duration::from_nanos(o.pending_timeout_ns),
        max_lease: Duration::from_nanos(o.max_lease_ns),
        close_retry: Duration::from_nanos(o.close_retry_ns),
        clock,
    })
}

/// Builds a registry handle.
///
/// # Safety
///
/// `options` NULL or readable (its boot id too); `registry_out` NULL or writable.
unsafe fn new_registry(
    options: *const wk_owner_options,
    host_clock: HostClock,
    registry_out: *mut *mut wk_owner_registry,
) -> wk_status {
    // SAFETY: forwarded contract.
    let o = tri!(unsafe { in_ref(options) });
    let registry_out = check_out!(registry_out);
    let clock: Arc<dyn Clock> = host_clock.clock();
    // SAFETY: forwarded contract.
    let opts = tri!(unsafe { options_of(o, clock) });
    let registry = tri!(OwnerRegistry::new(opts).map_err(status_of));
    let raw = wk_owner_registry::into_raw(Arc::new(Guarded::new::<wk_owner_registry>(Registry {
        registry,
        clock: host_clock,
    })));
    // SAFETY: checked by `check_out!`; writable per the contract.
    unsafe { write_out(registry_out, raw) };
    WK_STATUS_OK
}

/// Creates a registry on the process's monotonic clock, counting into the process-wide metrics
/// registry (`wukongim_mqtt_owner_work`, `wukongim_mqtt_owner_sweep_total`). Bad options:
/// `WK_STATUS_OWNER_INVALID` (a `struct_size` below `sizeof(wk_owner_options)`:
/// `WK_STATUS_INVALID_ARGUMENT`). On `WK_STATUS_OK` the caller owns `*registry_out`.
///
/// # Safety
///
/// `options` must be NULL or point to a readable `wk_owner_options` whose `boot_id` points to
/// `boot_id_len` readable bytes (read during the call only); `registry_out` NULL or writable
/// for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_new(
    options: *const wk_owner_options,
    registry_out: *mut *mut wk_owner_registry,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { new_registry(options, HostClock::Private, registry_out) }
    }
}

/// As `wk_owner_registry_new`, on a clock the host can read itself, so that it can run begin
/// inline (`wk_owner_registry_words_get`): the x86-64 time-stamp counter where it is invariant
/// (`WK_OWNER_CLOCK_TSC`, scaled by the published `tsc_origin` and `tsc_mul`; the first such
/// registry of a process measures the scale, 5 ms), else the OS's `CLOCK_MONOTONIC`
/// (`WK_OWNER_CLOCK_MONOTONIC`), else `wk_owner_registry_new`'s clock
/// (`WK_OWNER_CLOCK_PRIVATE`: the host then calls `wk_owner_begin` for every begin).
///
/// # Safety
///
/// As `wk_owner_registry_new`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_new_hosted(
    options: *const wk_owner_options,
    registry_out: *mut *mut wk_owner_registry,
) -> wk_status {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { new_registry(options, HostClock::hosted(), registry_out) }
    }
}

/// For tests: as `wk_owner_registry_new`, on a manual clock that reads `start_ns` and moves
/// only by `wk_owner_registry_advance_clock`. (Timeouts of blocking calls still run on the
/// process's monotonic clock.)
///
/// # Safety
///
/// As `wk_owner_registry_new`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_new_with_manual_clock(
    options: *const wk_owner_options,
    start_ns: u64,
    registry_out: *mut *mut wk_owner_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let clock = HostClock::Word(Arc::new(WordClock::new(start_ns)));
        // SAFETY: forwarded from this function's contract.
        unsafe { new_registry(options, clock, registry_out) }
    }
}

/// For tests: moves a manual-clock registry's clock forward by `ns`.
/// `WK_STATUS_INVALID_ARGUMENT` for a registry on the real clock.
///
/// # Safety
///
/// `registry` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_advance_clock(
    registry: *const wk_owner_registry,
    ns: u64,
) -> wk_status {
    ffi_panic_boundary! {
        match &try_ref!(wk_owner_registry, registry).clock {
            HostClock::Word(clock) => {
                clock.advance(ns);
                WK_STATUS_OK
            }
            HostClock::Private | HostClock::Monotonic | HostClock::Tsc(_) => {
                WK_STATUS_INVALID_ARGUMENT
            }
        }
    }
}

/// Adds a reference: `*registry_out` is a handle to the same registry, freed separately.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `registry_out` NULL or writable for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_clone(
    registry: *const wk_owner_registry,
    registry_out: *mut *mut wk_owner_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let arc = try_clone!(wk_owner_registry, registry);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, wk_owner_registry::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference; the last one stops admission and releases the registry's owners (their
/// `release` callbacks run here for owners no host handle holds). NULL is a no-op; a handle
/// detected as already freed is ignored.
///
/// # Safety
///
/// `registry` must be NULL or a live handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_free(registry: *mut wk_owner_registry) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_owner_registry::free(registry) }
    }
}

/// Writes the registry clock's reading now (nanoseconds): leases and deadlines are on it.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `now_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_now(
    registry: *const wk_owner_registry,
    now_out: *mut u64,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let now_out = check_out!(now_out);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(now_out, r.registry.now()) };
        WK_STATUS_OK
    }
}

/// Reserves a pending owner for `claim`, minting the next connection id; `close` is its
/// transport's close (required), called with `user_data`. `WK_STATUS_OWNER_INVALID` (a bad
/// claim), `WK_STATUS_OWNER_STOPPED` or `WK_STATUS_OWNER_LIMIT`. On `WK_STATUS_OK` the caller owns
/// `*owner_out`, and `release` (nullable) will be called exactly once with `user_data` when the
/// owner's last reference is dropped (see `wk_owner_release_fn`); on any other status neither
/// callback is ever called and `user_data` stays the host's.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `claim` NULL or a readable claim whose strings are
/// readable for their lengths (read during the call only); `close` and `release` callable from
/// any thread with `user_data` until `release` runs; `owner_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_reserve(
    registry: *const wk_owner_registry,
    claim: *const wk_owner_claim,
    close: wk_owner_close_fn,
    user_data: *mut std::ffi::c_void,
    release: wk_owner_release_fn,
    owner_out: *mut *mut wk_owner,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        // SAFETY: forwarded from this function's contract.
        let claim = tri!(unsafe { in_ref(claim) });
        let Some(close) = close else {
            return WK_STATUS_NULL_ARGUMENT;
        };
        let owner_out = check_out!(owner_out);
        // SAFETY: forwarded from this function's contract.
        let claim = tri!(unsafe { claim_of(claim) });
        let host = Arc::new(HostClose::new(close, user_data, release));
        match r.registry.reserve_with(&claim, host.clone()) {
            Ok(h) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(owner_out, into_raw(h)) };
                WK_STATUS_OK
            }
            Err(e) => {
                host.disarm();
                status_of(e)
            }
        }
    }
}

/// The owner an identity argument names.
///
/// # Safety
///
/// `identity` NULL or readable, its strings readable for their lengths.
unsafe fn identity_arg(
    identity: *const wk_owner_identity,
) -> Result<wkcore::owner::Owner, wk_status> {
    // SAFETY: forwarded contract.
    unsafe { owner_of(in_ref(identity)?) }
}

/// Looks up the held owner `identity` names (exact compare) and writes a new handle to it:
/// `WK_STATUS_NOT_FOUND` for an id issued here and retired since; `WK_STATUS_OWNER_INVALID` for
/// a malformed identity; `WK_STATUS_OWNER_UNKNOWN` for another node or boot, an id never
/// issued, or an identity that differs from the held owner's.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `identity` NULL or readable (strings for their
/// lengths, during the call only); `owner_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_resolve(
    registry: *const wk_owner_registry,
    identity: *const wk_owner_identity,
    owner_out: *mut *mut wk_owner,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { identity_arg(identity) });
        let owner_out = check_out!(owner_out);
        match r.registry.resolve(&owner) {
            Ok(Some(h)) => {
                // SAFETY: checked by `check_out!`; writable per this function's contract.
                unsafe { write_out(owner_out, into_raw(h)) };
                WK_STATUS_OK
            }
            Ok(None) => WK_STATUS_NOT_FOUND,
            Err(e) => status_of(e),
        }
    }
}

/// Fences the owner `identity` names (as `wk_owner_fence`); a retired one: `WK_STATUS_OK`.
/// Identity errors as `wk_owner_registry_resolve`.
///
/// # Safety
///
/// As `wk_owner_registry_resolve`, without `owner_out`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_fence(
    registry: *const wk_owner_registry,
    identity: *const wk_owner_identity,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { identity_arg(identity) });
        result_status(r.registry.fence(&owner))
    }
}

/// The registry's quiesce with the ABI's order: the identity first (a malformed one is `Invalid`,
/// one never issued here `Unknown`, whatever the budget), then the budget, only when there is
/// something to wait for (a retired owner is `Ok`, an already quiesced one answers at once).
fn quiesce_identity(
    registry: &OwnerRegistry,
    owner: &Owner,
    budget: &Budget,
) -> Result<(), OwnerError> {
    match registry.resolve(owner)? {
        Some(h) => quiesce_handle(&h, budget),
        None => Ok(()),
    }
}

/// Quiesces the owner `identity` names (as `wk_owner_quiesce`); `WK_STATUS_OK` also for one
/// issued here and retired since. Identity errors as `wk_owner_registry_resolve`, and before the
/// budget: a malformed or never-issued identity is refused as such even with timeout 0; a spent
/// budget is `_DEADLINE_EXCEEDED` / `_CANCELED` only when there is something to wait for.
///
/// # Safety
///
/// As `wk_owner_registry_fence`; `cancel` NULL or a live token; `call_data` is passed, unread, to the
/// close callbacks this call runs.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_quiesce(
    registry: *const wk_owner_registry,
    identity: *const wk_owner_identity,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { identity_arg(identity) });
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        result_status(quiesce_identity(&r.registry, &owner, &budget))
    }
}

/// Stops admission: reserve, activate, renew and begin fail with `WK_STATUS_OWNER_STOPPED` from
/// now on, and every operation's cancellation is raised. Idempotent.
///
/// # Safety
///
/// `registry` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_stop_admission(
    registry: *const wk_owner_registry,
) -> wk_status {
    ffi_panic_boundary! {
        try_ref!(wk_owner_registry, registry).registry.stop_admission();
        WK_STATUS_OK
    }
}

/// Stops admission, then quiesces every held owner until none is left (close callbacks run on
/// this thread); returns the first error (an uncertain owner makes it `WK_STATUS_OWNER_UNKNOWN`
/// for good). Admission is stopped even when the wait is already spent. A registry that holds
/// no owner has nothing to wait for: `WK_STATUS_OK` whatever the budget.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `cancel` NULL or a live token; `call_data` is passed, unread, to the
/// close callbacks this call runs.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_close(
    registry: *const wk_owner_registry,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        // Admission stops first, so no owner is reserved after the count below.
        r.registry.stop_admission();
        if r.registry.snapshot().held == 0 {
            return WK_STATUS_OK;
        }
        result_status(r.registry.close(&budget))
    }
}

/// The C form of a sweep's outcome.
fn sweep_result(result: Result<usize, SweepError>) -> wk_owner_sweep_result {
    let (visited, error) = match result {
        Ok(n) => (n, WK_STATUS_OK),
        Err(e) => (e.visited, status_of(e.error)),
    };
    wk_owner_sweep_result {
        visited: u32::try_from(visited).unwrap_or(u32::MAX),
        error,
        ran: true,
    }
}

/// Fences, reschedules and quiesces due owners, earliest deadline first, visiting at most
/// `limit` (`1..=WK_OWNER_SWEEP_LIMIT_MAX`, else `WK_STATUS_OWNER_INVALID` and nothing written).
/// Otherwise `WK_STATUS_OK` with `*result_out` = {visited, the status it stopped on or
/// `WK_STATUS_OK`, ran = true}. Close callbacks run on this thread.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `cancel` NULL or a live token (`call_data` is passed, unread, to the close
/// callbacks this call runs); `result_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_sweep(
    registry: *const wk_owner_registry,
    limit: u32,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
    result_out: *mut wk_owner_sweep_result,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let result_out = check_out!(result_out);
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        if !(1..=WK_OWNER_SWEEP_LIMIT_MAX).contains(&limit) {
            return WK_STATUS_OWNER_INVALID;
        }
        let result = sweep_result(r.registry.sweep(limit as usize, &budget));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, result) };
        WK_STATUS_OK
    }
}

/// One sweep turn per `interval_ns` (registry clock) however many threads call this: the first
/// call, and the first after each interval, sweeps as `wk_owner_registry_sweep` (ran = true);
/// every other call writes {0, `WK_STATUS_OK`, ran = false}. Arguments as
/// `wk_owner_registry_sweep`.
///
/// # Safety
///
/// As `wk_owner_registry_sweep`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_sweep_turn(
    registry: *const wk_owner_registry,
    interval_ns: u64,
    limit: u32,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
    result_out: *mut wk_owner_sweep_result,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let result_out = check_out!(result_out);
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        if !(1..=WK_OWNER_SWEEP_LIMIT_MAX).contains(&limit) {
            return WK_STATUS_OWNER_INVALID;
        }
        let turn = r
            .registry
            .sweep_turn(Duration::from_nanos(interval_ns), limit as usize, &budget);
        let result = match turn {
            Ok(SweepTurn::Ran(n)) => sweep_result(Ok(n)),
            Ok(SweepTurn::Skipped) => wk_owner_sweep_result {
                visited: 0,
                error: WK_STATUS_OK,
                ran: false,
            },
            Err(e) => sweep_result(Err(e)),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(result_out, result) };
        WK_STATUS_OK
    }
}

/// Writes the registry's counts (stage counts, held, deadlines and stopped are one moment's;
/// operations is exact whenever no begin or done is in flight).
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `snapshot_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_snapshot(
    registry: *const wk_owner_registry,
    snapshot_out: *mut wk_owner_snapshot,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let snapshot_out = check_out!(snapshot_out);
        let s = wk_owner_snapshot::from(r.registry.snapshot());
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(snapshot_out, s) };
        WK_STATUS_OK
    }
}

/// Writes the proof that this boot holds nothing more; `WK_STATUS_OWNER_UNKNOWN` unless
/// admission is stopped and no owner is held.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `proof_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_retirement(
    registry: *const wk_owner_registry,
    proof_out: *mut wk_retired_boot,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let proof_out = check_out!(proof_out);
        let proof = tri!(r.registry.retirement().map_err(status_of));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(proof_out, wk_retired_boot::of(&proof)) };
        WK_STATUS_OK
    }
}

/// Upstream's `Isolation.Quiesce`: whether `identity` is isolated, answered by this boot's
/// `registry` (nullable: the node runs none) and the persisted proofs of earlier boots (`n` of
/// them at `proofs`, `0..=WK_OWNER_PROOFS_MAX`; `proofs` may be NULL when `n` is 0; a proof whose
/// boot id is not UTF-8 of at most `WK_OWNER_BOOT_ID_MAX` bytes: `WK_STATUS_OWNER_INVALID`).
/// `WK_STATUS_OWNER_INVALID` for a malformed identity; `WK_STATUS_OWNER_UNKNOWN` for another
/// node, or an owner of another boot no proof covers; this boot's owners are quiesced by the
/// registry (as `wk_owner_registry_quiesce`: arguments before the budget).
///
/// # Safety
///
/// `registry` NULL or a live handle; `proofs` NULL or `n` readable proofs; `identity` as for
/// `wk_owner_registry_resolve`; `cancel` NULL or a live token; `call_data` is passed, unread, to the
/// close callbacks this call runs.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_isolation_quiesce(
    registry: *const wk_owner_registry,
    proofs: *const wk_retired_boot,
    n: usize,
    identity: *const wk_owner_identity,
    timeout_ns: u64,
    cancel: *const wk_cancel_token,
    call_data: *mut c_void,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = if registry.is_null() {
            None
        } else {
            Some(&try_ref!(wk_owner_registry, registry).registry)
        };
        let proofs: &[wk_retired_boot] = if n == 0 {
            if !proofs.is_null() {
                tri!(check_ptr(proofs));
            }
            &[]
        } else {
            tri!(check_ptr(proofs));
            if n > WK_OWNER_PROOFS_MAX {
                return WK_STATUS_INVALID_ARGUMENT;
            }
            // SAFETY: non-NULL, aligned, `n` bounded; readable per this function's contract.
            unsafe { std::slice::from_raw_parts(proofs, n) }
        };
        // SAFETY: forwarded from this function's contract.
        let owner = tri!(unsafe { identity_arg(identity) });
        // SAFETY: forwarded from this function's contract.
        let budget = tri!(unsafe { budget_of(timeout_ns, cancel, call_data) });
        let retired = tri!(proofs.iter().map(proof_of).collect::<Result<Vec<_>, _>>());
        // This boot's owners are the registry's, answered in the ABI's order (identity, then a
        // budget only when there is something to wait for); other owners need no wait at all.
        if let Some(r) = registry {
            if owner.validate().is_ok()
                && owner.node_id == r.node_id()
                && *owner.boot_id == *r.boot_id()
            {
                return result_status(quiesce_identity(r, &owner, &budget));
            }
        }
        let isolation = Isolation {
            registry,
            retired: &retired,
        };
        result_status(isolation.quiesce(&owner, &budget))
    }
}
