//! Calls the owner functions as a C host would: NULLs, bad lengths, invalid UTF-8, freed and
//! mistyped handles, bad operation records (out-parameters untouched, no state change), a full
//! lifecycle, the close callback's statuses, release exactly once, and the frame golden vector.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::cancel::*;
use super::frame::*;
use super::handle::*;
use super::registry::*;
use super::status::*;
use super::types::*;
use crate::status::*;

const SEC: u64 = 1_000_000_000;
const BOOT: &[u8] = b"boot-1";

fn options() -> wk_owner_options {
    wk_owner_options {
        struct_size: std::mem::size_of::<wk_owner_options>() as u32,
        node_id: 7,
        boot_id: BOOT.as_ptr(),
        boot_id_len: BOOT.len(),
        capacity: 4,
        max_operations: 2,
        pending_timeout_ns: 5 * SEC,
        max_lease_ns: 60 * SEC,
        close_retry_ns: SEC / 4,
    }
}

fn claim(client: &'static [u8]) -> wk_owner_claim {
    wk_owner_claim {
        namespace_ptr: b"ns".as_ptr(),
        namespace_len: 2,
        client_id: client.as_ptr(),
        client_id_len: client.len(),
        uid: b"alice".as_ptr(),
        uid_len: 5,
        session_generation: 1,
        owner_generation: 2,
    }
}

/// What a test close callback counts and answers.
struct Host {
    closes: AtomicU32,
    releases: AtomicU32,
    answer: AtomicU32,
    call_data: AtomicUsize,
}

impl Host {
    /// Leaked: a release may run as late as the registry's free, after the test's locals.
    fn new(answer: wk_status) -> &'static Host {
        Box::leak(Box::new(Host {
            closes: AtomicU32::new(0),
            releases: AtomicU32::new(0),
            answer: AtomicU32::new(answer.0),
            call_data: AtomicUsize::new(0),
        }))
    }
    fn data(&self) -> *mut c_void {
        (self as *const Host).cast_mut().cast()
    }
}

unsafe extern "C" fn close_cb(
    user_data: *mut c_void,
    call_data: *mut c_void,
    _timeout_ns: u64,
) -> wk_status {
    // SAFETY: every test passes a live `Host`.
    let host = unsafe { &*user_data.cast::<Host>() };
    host.closes.fetch_add(1, Ordering::SeqCst);
    host.call_data.store(call_data as usize, Ordering::SeqCst);
    wk_status(host.answer.load(Ordering::SeqCst))
}

unsafe extern "C" fn release_cb(user_data: *mut c_void) {
    // SAFETY: every test passes a live `Host`.
    let host = unsafe { &*user_data.cast::<Host>() };
    host.releases.fetch_add(1, Ordering::SeqCst);
}

struct Fixture {
    reg: *mut wk_owner_registry,
}

impl Fixture {
    fn new() -> Fixture {
        let mut reg = ptr::null_mut();
        // SAFETY: valid options and out-pointer.
        let st = unsafe { wk_owner_registry_new_with_manual_clock(&options(), 1000, &mut reg) };
        assert_eq!(st, WK_STATUS_OK);
        Fixture { reg }
    }

    fn reserve(&self, client: &'static [u8], host: &Host) -> *mut wk_owner {
        let mut owner = ptr::null_mut();
        let c = claim(client);
        // SAFETY: live registry, valid claim, callbacks and out-pointer.
        let st = unsafe {
            wk_owner_reserve(
                self.reg,
                &c,
                Some(close_cb),
                host.data(),
                Some(release_cb),
                &mut owner,
            )
        };
        assert_eq!(st, WK_STATUS_OK);
        owner
    }

    fn now(&self) -> u64 {
        let mut now = 0;
        // SAFETY: live registry, valid out-pointer.
        let st = unsafe { wk_owner_registry_now(self.reg, &mut now) };
        assert_eq!(st, WK_STATUS_OK);
        now
    }

    fn active(&self, client: &'static [u8], host: &Host) -> *mut wk_owner {
        let owner = self.reserve(client, host);
        // SAFETY: live owner.
        let st = unsafe { wk_owner_activate(owner, 1, self.now() + 10 * SEC) };
        assert_eq!(st, WK_STATUS_OK);
        owner
    }

    fn snapshot(&self) -> wk_owner_snapshot {
        let mut s = wk_owner_snapshot::default();
        // SAFETY: live registry, valid out-pointer.
        let st = unsafe { wk_owner_registry_snapshot(self.reg, &mut s) };
        assert_eq!(st, WK_STATUS_OK);
        s
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: owned by the fixture, freed once.
        unsafe { wk_owner_registry_free(self.reg) };
    }
}

fn info(owner: *const wk_owner) -> wk_owner_info {
    let mut i = wk_owner_info::default();
    // SAFETY: live owner, valid out-pointer.
    assert_eq!(unsafe { wk_owner_info_get(owner, &mut i) }, WK_STATUS_OK);
    i
}

fn identity_of_owner(owner: *const wk_owner) -> wk_owner_identity {
    let i = info(owner);
    wk_owner_identity {
        namespace_ptr: b"ns".as_ptr(),
        namespace_len: 2,
        client_id: b"c1".as_ptr(),
        client_id_len: 2,
        session_generation: i.session_generation,
        owner_generation: i.owner_generation,
        node_id: i.node_id,
        boot_id: BOOT.as_ptr(),
        boot_id_len: BOOT.len(),
        connection_id: i.connection_id,
    }
}

#[test]
fn statuses_map_every_owner_error_and_deadline_is_timeout() {
    use wkcore::owner::OwnerError::*;
    for e in [
        Invalid,
        Fenced,
        Unknown,
        Limit,
        Stopped,
        Close,
        Canceled,
        DeadlineExceeded,
    ] {
        let st = status_of(e);
        assert_eq!(error_of(st), Some(e));
        assert_eq!(st.text(), Some(e.text()));
    }
    assert!(wk_status_is(
        WK_STATUS_OWNER_DEADLINE_EXCEEDED,
        WK_STATUS_TIMEOUT
    ));
    assert!(!wk_status_is(WK_STATUS_OWNER_CANCELED, WK_STATUS_TIMEOUT));
}

#[test]
fn full_lifecycle_through_the_abi() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OK);
    let owner = f.reserve(b"c1", host);
    assert_eq!(info(owner).stage, WK_OWNER_STAGE_PENDING);
    assert_eq!(info(owner).connection_id, 1);
    let (mut p, mut n) = (ptr::null(), 0usize);
    // SAFETY: live handles and valid pointers throughout.
    unsafe {
        assert_eq!(wk_owner_uid_get(owner, &mut p, &mut n), WK_STATUS_OK);
        assert_eq!(std::slice::from_raw_parts(p, n), b"alice");
        let mut op = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        assert_eq!(wk_owner_begin(owner, &mut op), WK_STATUS_OWNER_FENCED);
        assert!(op.owner.is_null(), "untouched on error");
        assert_eq!(
            wk_owner_activate(owner, 1, f.now() + 10 * SEC),
            WK_STATUS_OK
        );
        assert_eq!(wk_owner_renew(owner, 2, f.now() + 20 * SEC), WK_STATUS_OK);
        assert_eq!(info(owner).stage, WK_OWNER_STAGE_ACTIVE);
        assert_eq!(wk_owner_begin(owner, &mut op), WK_STATUS_OK);
        assert_eq!(op.state, WK_OWNER_OP_LIVE);
        assert_eq!(op.owner, owner.cast_const());
        let mut op2 = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        assert_eq!(wk_owner_begin(owner, &mut op2), WK_STATUS_OK);
        let mut op3 = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        assert_eq!(wk_owner_begin(owner, &mut op3), WK_STATUS_OWNER_LIMIT);
        assert_eq!(wk_owner_op_check(&op), WK_STATUS_OK);
        assert_eq!(f.snapshot().operations, 2);
        assert_eq!(wk_owner_op_done(&mut op2), WK_STATUS_OK);
        assert_eq!(
            wk_owner_op_done(&mut op2),
            WK_STATUS_OK,
            "second done is a no-op"
        );
        assert_eq!(wk_owner_op_check(&op2), WK_STATUS_OWNER_FENCED);
        assert_eq!(wk_owner_op_mark_uncertain(&op2), WK_STATUS_OWNER_FENCED);
        // Resolve by identity.
        let id = identity_of_owner(owner);
        let mut again = ptr::null_mut();
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, &mut again),
            WK_STATUS_OK
        );
        assert_eq!(info(again).connection_id, 1);
        wk_owner_free(again);
        // Quiesce with a live op times out and keeps the attempt.
        let mut context = 0u64;
        let call_data: *mut c_void = (&mut context as *mut u64).cast();
        assert_eq!(
            wk_owner_quiesce(owner, 1_000_000, ptr::null(), call_data),
            WK_STATUS_OWNER_DEADLINE_EXCEEDED
        );
        assert_eq!(host.closes.load(Ordering::SeqCst), 1);
        assert_eq!(
            host.call_data.load(Ordering::SeqCst),
            call_data as usize,
            "the call's call_data reaches the close callback"
        );
        assert_eq!(wk_owner_op_check(&op), WK_STATUS_OWNER_CANCELED);
        assert_eq!(wk_owner_op_done(&mut op), WK_STATUS_OK);
        assert_eq!(
            wk_owner_quiesce(owner, WK_OWNER_WAIT_FOREVER, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(host.closes.load(Ordering::SeqCst), 1, "one close");
        assert!(info(owner).complete);
        let mut gone = ptr::null_mut();
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, &mut gone),
            WK_STATUS_NOT_FOUND
        );
        assert!(gone.is_null());
        // Retired: nothing to wait for, so even a zero timeout is no deadline exceeded.
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, SEC, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(wk_owner_registry_fence(f.reg, &id), WK_STATUS_OK);
        assert_eq!(host.releases.load(Ordering::SeqCst), 0);
        wk_owner_free(owner);
        assert_eq!(host.releases.load(Ordering::SeqCst), 1, "released once");
        // Retirement and isolation.
        let mut proof = wk_retired_boot {
            node_id: 0,
            last_connection_id: 0,
            boot_id: [0; 128],
            boot_id_len: 0,
        };
        assert_eq!(
            wk_owner_registry_retirement(f.reg, &mut proof),
            WK_STATUS_OWNER_UNKNOWN
        );
        assert_eq!(proof.node_id, 0);
        assert_eq!(
            wk_owner_registry_close(f.reg, SEC, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_registry_retirement(f.reg, &mut proof),
            WK_STATUS_OK
        );
        assert_eq!((proof.node_id, proof.last_connection_id), (7, 1));
        assert_eq!(&proof.boot_id[..proof.boot_id_len], BOOT);
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                &proof,
                1,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                ptr::null(),
                0,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_OWNER_UNKNOWN
        );
        let s = f.snapshot();
        assert!(s.stopped);
        assert_eq!(s.held, 0);
    }
}

#[test]
fn close_callback_statuses() {
    for (answer, want) in [
        (WK_STATUS_OWNER_CANCELED, WK_STATUS_OWNER_CANCELED),
        (
            WK_STATUS_OWNER_DEADLINE_EXCEEDED,
            WK_STATUS_OWNER_DEADLINE_EXCEEDED,
        ),
        (WK_STATUS_OWNER_CLOSE, WK_STATUS_OWNER_CLOSE),
        (WK_STATUS_PANIC, WK_STATUS_OWNER_CLOSE),
        (wk_status(12345), WK_STATUS_OWNER_CLOSE),
    ] {
        let f = Fixture::new();
        let host = Host::new(answer);
        let owner = f.active(b"c1", host);
        // SAFETY: live handles.
        unsafe {
            assert_eq!(
                wk_owner_quiesce(owner, SEC, ptr::null(), ptr::null_mut()),
                want
            );
            let i = info(owner);
            assert_eq!(i.stage, WK_OWNER_STAGE_CLOSING, "failed close stays fenced");
            assert!(!i.complete);
            assert_eq!(f.snapshot().held, 1, "and holds capacity");
            host.answer.store(0, Ordering::SeqCst);
            assert_eq!(
                wk_owner_quiesce(owner, SEC, ptr::null(), ptr::null_mut()),
                WK_STATUS_OK
            );
            assert_eq!(host.closes.load(Ordering::SeqCst), 2);
            wk_owner_free(owner);
        }
        assert_eq!(host.releases.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn release_runs_once_on_registry_free_and_never_for_a_failed_reserve() {
    let host = Host::new(WK_STATUS_OK);
    {
        let f = Fixture::new();
        let _owner = f.reserve(b"c1", host);
        // SAFETY: live handle.
        unsafe { wk_owner_free(_owner) };
        assert_eq!(
            host.releases.load(Ordering::SeqCst),
            0,
            "the registry still holds it"
        );
    }
    assert_eq!(host.releases.load(Ordering::SeqCst), 1);
    let f = Fixture::new();
    let refused = Host::new(WK_STATUS_OK);
    let mut bad = claim(b" ");
    let mut out = ptr::null_mut();
    // SAFETY: live registry, valid pointers.
    unsafe {
        assert_eq!(
            wk_owner_reserve(
                f.reg,
                &bad,
                Some(close_cb),
                refused.data(),
                Some(release_cb),
                &mut out
            ),
            WK_STATUS_OWNER_INVALID
        );
        wk_owner_registry_stop_admission(f.reg);
        bad = claim(b"c1");
        assert_eq!(
            wk_owner_reserve(
                f.reg,
                &bad,
                Some(close_cb),
                refused.data(),
                Some(release_cb),
                &mut out
            ),
            WK_STATUS_OWNER_STOPPED
        );
    }
    assert!(out.is_null());
    assert_eq!(refused.releases.load(Ordering::SeqCst), 0);
    assert_eq!(refused.closes.load(Ordering::SeqCst), 0);
}

#[test]
fn bad_arguments_change_nothing() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OK);
    let owner = f.active(b"c1", host);
    let sentinel = 0xdead_beef_u64;
    // SAFETY: NULL, bad and valid pointers only; nothing here is read out of bounds.
    unsafe {
        // Registry creation.
        let mut reg = ptr::null_mut();
        assert_eq!(
            wk_owner_registry_new(ptr::null(), &mut reg),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_new(&options(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let mut o = options();
        o.struct_size = 8;
        assert_eq!(
            wk_owner_registry_new(&o, &mut reg),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut o = options();
        o.boot_id_len = 129;
        assert_eq!(wk_owner_registry_new(&o, &mut reg), WK_STATUS_OWNER_INVALID);
        let mut o = options();
        o.boot_id = ptr::null();
        assert_eq!(wk_owner_registry_new(&o, &mut reg), WK_STATUS_NULL_ARGUMENT);
        o.boot_id_len = 0;
        assert_eq!(wk_owner_registry_new(&o, &mut reg), WK_STATUS_OWNER_INVALID);
        let mut o = options();
        o.boot_id = b"\xff".as_ptr();
        o.boot_id_len = 1;
        assert_eq!(wk_owner_registry_new(&o, &mut reg), WK_STATUS_OWNER_INVALID);
        let mut o = options();
        o.capacity = 0;
        assert_eq!(wk_owner_registry_new(&o, &mut reg), WK_STATUS_OWNER_INVALID);
        assert!(reg.is_null());
        // A real-clock registry cannot be advanced.
        assert_eq!(wk_owner_registry_new(&options(), &mut reg), WK_STATUS_OK);
        assert_eq!(
            wk_owner_registry_advance_clock(reg, 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        wk_owner_registry_free(reg);
        wk_owner_registry_free(ptr::null_mut());
        assert_eq!(wk_owner_registry_advance_clock(f.reg, SEC), WK_STATUS_OK);

        // Reserve.
        let c = claim(b"c2");
        let mut out = ptr::null_mut();
        let data = host.data();
        assert_eq!(
            wk_owner_reserve(ptr::null(), &c, Some(close_cb), data, None, &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_reserve(f.reg, ptr::null(), Some(close_cb), data, None, &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_reserve(f.reg, &c, None, data, None, &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_reserve(f.reg, &c, Some(close_cb), data, None, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let mut bad = claim(b"c2");
        bad.uid_len = 1025;
        assert_eq!(
            wk_owner_reserve(f.reg, &bad, Some(close_cb), data, None, &mut out),
            WK_STATUS_OWNER_INVALID
        );
        bad = claim(b"\xc3\x28");
        assert_eq!(
            wk_owner_reserve(f.reg, &bad, Some(close_cb), data, None, &mut out),
            WK_STATUS_OWNER_INVALID
        );
        bad = claim(b"c2");
        bad.client_id = ptr::null();
        assert_eq!(
            wk_owner_reserve(f.reg, &bad, Some(close_cb), data, None, &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        bad.client_id_len = 0;
        assert_eq!(
            wk_owner_reserve(f.reg, &bad, Some(close_cb), data, None, &mut out),
            WK_STATUS_OWNER_INVALID
        );
        bad = claim(b"c2");
        bad.session_generation = 0;
        assert_eq!(
            wk_owner_reserve(f.reg, &bad, Some(close_cb), data, None, &mut out),
            WK_STATUS_OWNER_INVALID
        );
        let misaligned = (&c as *const wk_owner_claim)
            .cast::<u8>()
            .add(1)
            .cast::<wk_owner_claim>();
        assert_eq!(
            wk_owner_reserve(f.reg, misaligned, Some(close_cb), data, None, &mut out),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert!(out.is_null());
        // A mistyped handle.
        assert_eq!(
            wk_owner_reserve(owner.cast(), &c, Some(close_cb), data, None, &mut out),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(f.snapshot().held, 1);

        // Owner calls.
        let mut i = wk_owner_info {
            connection_id: sentinel,
            ..Default::default()
        };
        assert_eq!(
            wk_owner_info_get(ptr::null(), &mut i),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_info_get(owner, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_info_get(f.reg.cast(), &mut i),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(i.connection_id, sentinel);
        let (mut p, mut n) = (ptr::null(), sentinel as usize);
        assert_eq!(
            wk_owner_uid_get(owner, ptr::null_mut(), &mut n),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_uid_get(owner, &mut p, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(n, sentinel as usize);
        assert_eq!(
            wk_owner_activate(ptr::null(), 1, 1),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_renew(owner, 0, f.now() + SEC),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(
            wk_owner_renew(owner, 5, f.now() + 61 * SEC),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(wk_owner_fence(ptr::null()), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_owner_quiesce(ptr::null(), 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_quiesce(owner, 0, owner.cast(), ptr::null_mut()),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(info(owner).stage, WK_OWNER_STAGE_ACTIVE, "no quiesce ran");
        let mut clone = ptr::null_mut();
        assert_eq!(
            wk_owner_clone(owner, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_clone(ptr::null(), &mut clone),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(clone.is_null());

        // Ops.
        let mut op = wk_owner_op {
            owner: ptr::null(),
            state: sentinel,
        };
        assert_eq!(
            wk_owner_begin(ptr::null(), &mut op),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_begin(owner, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(op.state, sentinel);
        assert_eq!(wk_owner_op_done(ptr::null_mut()), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(wk_owner_op_check(ptr::null()), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_owner_op_mark_uncertain(ptr::null()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_op_done(&mut op),
            WK_STATUS_INVALID_ARGUMENT,
            "state not LIVE/DONE"
        );
        assert_eq!(wk_owner_op_check(&op), WK_STATUS_INVALID_ARGUMENT);
        let mut live = wk_owner_op {
            owner: f.reg.cast(),
            state: WK_OWNER_OP_LIVE,
        };
        assert_eq!(wk_owner_op_done(&mut live), WK_STATUS_INVALID_HANDLE);
        assert_eq!(live.state, WK_OWNER_OP_LIVE, "unchanged");
        live.owner = ptr::null();
        assert_eq!(wk_owner_op_done(&mut live), WK_STATUS_NULL_ARGUMENT);
        let mut words = [0u64; 4];
        let odd = words.as_mut_ptr().cast::<u8>().add(4).cast::<wk_owner_op>();
        assert_eq!(
            wk_owner_op_done(odd),
            WK_STATUS_INVALID_ARGUMENT,
            "misaligned"
        );
        assert_eq!(words, [0; 4]);
        assert_eq!(
            wk_owner_op_done_batch(ptr::null_mut(), 1),
            WK_STATUS_NULL_ARGUMENT
        );

        // done_batch validates every entry first.
        let mut ops = [
            wk_owner_op {
                owner: ptr::null(),
                state: 0,
            },
            wk_owner_op {
                owner: ptr::null(),
                state: 0,
            },
            wk_owner_op {
                owner: ptr::null(),
                state: 0,
            },
        ];
        assert_eq!(wk_owner_begin(owner, &mut ops[0]), WK_STATUS_OK);
        assert_eq!(wk_owner_begin(owner, &mut ops[1]), WK_STATUS_OK);
        ops[2].state = 9;
        assert_eq!(
            wk_owner_op_done_batch(ops.as_mut_ptr(), 0),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_owner_op_done_batch(ops.as_mut_ptr(), WK_OWNER_OP_BATCH_MAX + 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_owner_op_done_batch(ops.as_mut_ptr(), 3),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            (ops[0].state, ops[1].state),
            (WK_OWNER_OP_LIVE, WK_OWNER_OP_LIVE)
        );
        assert_eq!(f.snapshot().operations, 2);
        ops[2].state = WK_OWNER_OP_DONE;
        assert_eq!(wk_owner_op_done_batch(ops.as_mut_ptr(), 3), WK_STATUS_OK);
        assert_eq!(
            (ops[0].state, ops[1].state),
            (WK_OWNER_OP_DONE, WK_OWNER_OP_DONE)
        );
        assert_eq!(f.snapshot().operations, 0);

        // By identity.
        let mut id = identity_of_owner(owner);
        let mut got = ptr::null_mut();
        assert_eq!(
            wk_owner_registry_resolve(ptr::null(), &id, &mut got),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_resolve(f.reg, ptr::null(), &mut got),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        id.connection_id = 99;
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, &mut got),
            WK_STATUS_OWNER_UNKNOWN
        );
        id.connection_id = 0;
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, &mut got),
            WK_STATUS_OWNER_INVALID
        );
        id = identity_of_owner(owner);
        id.owner_generation = 3;
        assert_eq!(
            wk_owner_registry_resolve(f.reg, &id, &mut got),
            WK_STATUS_OWNER_UNKNOWN
        );
        id = identity_of_owner(owner);
        id.boot_id_len = 129;
        assert_eq!(wk_owner_registry_fence(f.reg, &id), WK_STATUS_OWNER_INVALID);
        id.boot_id_len = 2000;
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, SEC, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_INVALID
        );
        assert!(got.is_null());
        assert_eq!(info(owner).stage, WK_OWNER_STAGE_ACTIVE, "nothing fenced");

        // Sweep.
        let mut r = wk_owner_sweep_result {
            visited: 77,
            error: WK_STATUS_PANIC,
            ran: false,
        };
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 0, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 257, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 1, SEC, ptr::null(), ptr::null_mut(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_sweep_turn(f.reg, SEC, 0, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(r.visited, 77);
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 256, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OK
        );
        assert_eq!(
            r,
            wk_owner_sweep_result {
                visited: 0,
                error: WK_STATUS_OK,
                ran: true
            }
        );
        assert_eq!(
            wk_owner_registry_sweep_turn(f.reg, SEC, 1, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OK
        );
        assert!(r.ran);
        assert_eq!(
            wk_owner_registry_sweep_turn(f.reg, SEC, 1, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OK
        );
        assert!(!r.ran, "same interval");

        // Snapshot, retirement, now, isolation.
        assert_eq!(
            wk_owner_registry_snapshot(f.reg, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_retirement(f.reg, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_now(f.reg, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_stop_admission(ptr::null()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_registry_close(ptr::null(), 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let id = identity_of_owner(owner);
        let mut proof = wk_retired_boot {
            node_id: 7,
            last_connection_id: 9,
            boot_id: [0; 128],
            boot_id_len: 129,
        };
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                &proof,
                1,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_OWNER_INVALID
        );
        proof.boot_id_len = 1;
        proof.boot_id[0] = 0xff;
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                &proof,
                1,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                ptr::null(),
                1,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                ptr::null(),
                &proof,
                WK_OWNER_PROOFS_MAX + 1,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                f.reg,
                ptr::null(),
                0,
                ptr::null(),
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                owner.cast(),
                ptr::null(),
                0,
                &id,
                SEC,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(info(owner).stage, WK_OWNER_STAGE_ACTIVE, "nothing quiesced");
        assert_eq!(host.closes.load(Ordering::SeqCst), 0);

        // Cancel tokens.
        let mut t = ptr::null_mut();
        assert_eq!(
            wk_cancel_token_new(ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(wk_cancel_token_cancel(ptr::null()), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_cancel_token_cancel(owner.cast()),
            WK_STATUS_INVALID_HANDLE
        );
        assert!(!wk_cancel_token_is_cancelled(ptr::null()));
        assert_eq!(wk_cancel_token_new(&mut t), WK_STATUS_OK);
        assert_eq!(wk_cancel_token_cancel(t), WK_STATUS_OK);
        assert!(wk_cancel_token_is_cancelled(t));
        assert_eq!(
            wk_owner_quiesce(owner, WK_OWNER_WAIT_FOREVER, t, ptr::null_mut()),
            WK_STATUS_OWNER_CANCELED
        );
        assert_eq!(
            info(owner).stage,
            WK_OWNER_STAGE_ACTIVE,
            "a spent budget changes nothing"
        );
        wk_cancel_token_free(t);
        wk_cancel_token_free(ptr::null_mut());
        wk_owner_free(owner);
    }
}

#[test]
fn uncertain_owner_is_unknown_forever() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OK);
    let owner = f.active(b"c1", host);
    let mut op = wk_owner_op {
        owner: ptr::null(),
        state: 0,
    };
    // SAFETY: live handles, valid pointers.
    unsafe {
        assert_eq!(wk_owner_begin(owner, &mut op), WK_STATUS_OK);
        assert_eq!(wk_owner_op_mark_uncertain(&op), WK_STATUS_OK);
        assert_eq!(wk_owner_op_mark_uncertain(&op), WK_STATUS_OK, "idempotent");
        assert_eq!(wk_owner_op_done(&mut op), WK_STATUS_OK);
        for _ in 0..2 {
            assert_eq!(
                wk_owner_quiesce(owner, SEC, ptr::null(), ptr::null_mut()),
                WK_STATUS_OWNER_UNKNOWN
            );
        }
        assert!(info(owner).uncertain);
        assert_eq!(f.snapshot().uncertain, 1);
        assert_eq!(
            wk_owner_registry_close(f.reg, SEC, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_UNKNOWN
        );
        wk_owner_free(owner);
    }
}

#[test]
fn sweep_yields_a_failed_close_and_lease_expiry_fences() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OWNER_CLOSE);
    let owner = f.active(b"c1", host);
    // SAFETY: live handles, valid pointers.
    unsafe {
        assert_eq!(
            wk_owner_registry_advance_clock(f.reg, 11 * SEC),
            WK_STATUS_OK
        );
        let mut op = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        assert_eq!(
            wk_owner_begin(owner, &mut op),
            WK_STATUS_OWNER_FENCED,
            "lease expired"
        );
        let mut r = wk_owner_sweep_result {
            visited: 0,
            error: WK_STATUS_OK,
            ran: false,
        };
        assert_eq!(wk_owner_registry_advance_clock(f.reg, SEC), WK_STATUS_OK);
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 8, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OK
        );
        assert_eq!(
            r,
            wk_owner_sweep_result {
                visited: 1,
                error: WK_STATUS_OWNER_CLOSE,
                ran: true
            }
        );
        assert_eq!(f.snapshot().held, 1);
        host.answer.store(0, Ordering::SeqCst);
        assert_eq!(wk_owner_registry_advance_clock(f.reg, SEC), WK_STATUS_OK);
        assert_eq!(
            wk_owner_registry_sweep(f.reg, 8, SEC, ptr::null(), ptr::null_mut(), &mut r),
            WK_STATUS_OK
        );
        assert_eq!(
            r,
            wk_owner_sweep_result {
                visited: 1,
                error: WK_STATUS_OK,
                ran: true
            }
        );
        assert_eq!(f.snapshot().held, 0);
        wk_owner_free(owner);
    }
    assert_eq!(host.releases.load(Ordering::SeqCst), 1);
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const GOLDEN: &str = "574b4d51010100016e0001630000000000000001000000000000000200000000000000030001620000000000000004";

fn golden_identity() -> wk_owner_identity {
    wk_owner_identity {
        namespace_ptr: b"n".as_ptr(),
        namespace_len: 1,
        client_id: b"c".as_ptr(),
        client_id_len: 1,
        session_generation: 1,
        owner_generation: 2,
        node_id: 3,
        boot_id: b"b".as_ptr(),
        boot_id_len: 1,
        connection_id: 4,
    }
}

#[test]
fn frame_golden_vector_round_trips_zero_copy() {
    let golden = hex(GOLDEN);
    let id = golden_identity();
    let mut buf = [0u8; 64];
    let mut len = 0usize;
    // SAFETY: valid pointers throughout; decoded pointers are read inside `golden`'s lifetime.
    unsafe {
        assert_eq!(
            wk_owner_frame_encode_request(&id, ptr::null_mut(), 0, &mut len),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, golden.len());
        let mut short = 0usize;
        assert_eq!(
            wk_owner_frame_encode_request(&id, buf.as_mut_ptr(), 10, &mut short),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(short, golden.len());
        assert_eq!(buf, [0; 64], "nothing written to a short buffer");
        assert_eq!(
            wk_owner_frame_encode_request(&id, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_OK
        );
        assert_eq!(&buf[..len], &golden[..]);
        let mut out = golden_identity();
        out.connection_id = 0;
        assert_eq!(
            wk_owner_frame_decode_request(golden.as_ptr(), golden.len(), &mut out),
            WK_STATUS_OK
        );
        let range = golden.as_ptr_range();
        for (p, n, want) in [
            (out.namespace_ptr, out.namespace_len, b"n"),
            (out.client_id, out.client_id_len, b"c"),
            (out.boot_id, out.boot_id_len, b"b"),
        ] {
            assert!(range.contains(&p), "points into the input");
            assert_eq!(std::slice::from_raw_parts(p, n), want);
        }
        assert_eq!(
            (
                out.session_generation,
                out.owner_generation,
                out.node_id,
                out.connection_id
            ),
            (1, 2, 3, 4)
        );

        // Responses.
        let mut resp = [0u8; 64];
        let mut rlen = 0usize;
        assert_eq!(
            wk_owner_frame_encode_response(&id, 0, resp.as_mut_ptr(), 64, &mut rlen),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        assert_eq!(
            wk_owner_frame_encode_response(&id, 6, resp.as_mut_ptr(), 64, &mut rlen),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        assert_eq!(
            wk_owner_frame_encode_response(
                &id,
                WK_OWNER_RPC_QUIESCED,
                resp.as_mut_ptr(),
                64,
                &mut rlen
            ),
            WK_STATUS_OK
        );
        assert_eq!(&resp[..4], b"WKMq");
        let mut status = 0u8;
        let mut echo = golden_identity();
        assert_eq!(
            wk_owner_frame_decode_response(resp.as_ptr(), rlen, &mut echo, &mut status),
            WK_STATUS_OK
        );
        assert_eq!(status, WK_OWNER_RPC_QUIESCED);
        assert!(resp.as_ptr_range().contains(&echo.client_id));
        assert_eq!(
            wk_owner_rpc_client_result(&id, resp.as_ptr(), rlen),
            WK_STATUS_OK
        );
        let mut other = golden_identity();
        other.connection_id = 5;
        assert_eq!(
            wk_owner_rpc_client_result(&other, resp.as_ptr(), rlen),
            WK_STATUS_OWNER_UNKNOWN
        );
        for (code, want) in [
            (WK_OWNER_RPC_UNKNOWN, WK_STATUS_OWNER_UNKNOWN),
            (WK_OWNER_RPC_CLOSE_FAILED, WK_STATUS_OWNER_CLOSE),
            (WK_OWNER_RPC_CANCELED, WK_STATUS_OWNER_CANCELED),
            (
                WK_OWNER_RPC_DEADLINE_EXCEEDED,
                WK_STATUS_OWNER_DEADLINE_EXCEEDED,
            ),
        ] {
            assert_eq!(
                wk_owner_frame_encode_response(&id, code, resp.as_mut_ptr(), 64, &mut rlen),
                WK_STATUS_OK
            );
            assert_eq!(wk_owner_rpc_client_result(&id, resp.as_ptr(), rlen), want);
        }
        // A request is not a response.
        assert_eq!(
            wk_owner_rpc_client_result(&id, golden.as_ptr(), golden.len()),
            WK_STATUS_OWNER_INVALID_FRAME
        );

        // Bad input.
        let mut untouched = golden_identity();
        untouched.connection_id = 42;
        assert_eq!(
            wk_owner_frame_decode_request(ptr::null(), 0, &mut untouched),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_frame_decode_request(golden.as_ptr(), golden.len(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_frame_decode_request(golden.as_ptr(), golden.len() - 1, &mut untouched),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        assert_eq!(
            wk_owner_frame_decode_request(golden.as_ptr(), WK_OWNER_FRAME_MAX + 1, &mut untouched),
            WK_STATUS_OWNER_INVALID_FRAME,
            "refused unread"
        );
        assert_eq!(
            wk_owner_frame_decode_response(
                golden.as_ptr(),
                golden.len(),
                &mut untouched,
                &mut status
            ),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        assert_eq!(
            wk_owner_frame_decode_response(
                golden.as_ptr(),
                golden.len(),
                &mut untouched,
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(untouched.connection_id, 42);
        let mut bad = golden_identity();
        bad.connection_id = 0;
        assert_eq!(
            wk_owner_frame_encode_request(&bad, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        bad = golden_identity();
        bad.namespace_ptr = b"\xff".as_ptr();
        assert_eq!(
            wk_owner_frame_encode_request(&bad, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_OWNER_INVALID_FRAME
        );
        assert_eq!(
            wk_owner_rpc_client_result(&bad, resp.as_ptr(), rlen),
            WK_STATUS_OWNER_INVALID
        );
        bad.namespace_ptr = ptr::null();
        assert_eq!(
            wk_owner_frame_encode_request(&bad, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_frame_encode_request(ptr::null(), buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_frame_encode_request(&id, ptr::null_mut(), 64, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_frame_encode_request(&id, buf.as_mut_ptr(), 64, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_rpc_client_result(ptr::null(), resp.as_ptr(), rlen),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_owner_rpc_client_result(&id, ptr::null(), rlen),
            WK_STATUS_NULL_ARGUMENT
        );
    }
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_OK), 1);
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_OWNER_UNKNOWN), 2);
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_OWNER_FENCED), 2);
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_OWNER_CLOSE), 3);
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_OWNER_CANCELED), 4);
    assert_eq!(
        wk_owner_rpc_status_for(WK_STATUS_OWNER_DEADLINE_EXCEEDED),
        5
    );
    assert_eq!(wk_owner_rpc_status_for(WK_STATUS_TIMEOUT), 2);
    assert_eq!(wk_owner_rpc_status_for(wk_status(u32::MAX)), 2);
}

#[test]
fn owner_families_show_in_the_global_export() {
    let _f = Fixture::new();
    let mut text = String::new();
    wkcore::metrics::global().render(&mut text);
    assert!(text.contains("wukongim_mqtt_owner_work"), "{text}");
    assert!(text.contains("wukongim_mqtt_owner_sweep_total"));
}

#[test]
fn a_done_op_answers_as_the_core_does_for_a_done_scope() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OK);
    let owner = f.active(b"c1", host);
    // SAFETY: live handle.
    let h: &wkcore::owner::OwnerHandle =
        unsafe { <wk_owner as crate::handle::ArcCastPtr>::try_ref(owner).unwrap() };
    assert_eq!(
        h.check_detached(true).map_err(status_of),
        Err(WK_STATUS_OWNER_FENCED)
    );
    assert_eq!(
        h.mark_uncertain_detached(true).map_err(status_of),
        Err(WK_STATUS_OWNER_FENCED)
    );
    // SAFETY: live handle, freed once.
    unsafe { wk_owner_free(owner) };
}

/// The inline protocol (`host.rs`), as a C host runs it on the published words.
mod inline {
    use std::sync::atomic::AtomicU64;

    use super::super::host::*;
    use super::*;

    fn registry_words(reg: *const wk_owner_registry) -> wk_owner_registry_words {
        let mut w = std::mem::MaybeUninit::<wk_owner_registry_words>::uninit();
        // SAFETY: live registry, writable out-pointer.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_registry_words_get(reg, w.as_mut_ptr()) },
            WK_STATUS_OK
        );
        // SAFETY: written on OK.
        unsafe { w.assume_init() }
    }

    fn owner_words(owner: *const wk_owner) -> wk_owner_words {
        let mut w = std::mem::MaybeUninit::<wk_owner_words>::uninit();
        // SAFETY: live owner, writable out-pointer.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_words_get(owner, w.as_mut_ptr()) },
            WK_STATUS_OK
        );
        // SAFETY: written on OK.
        unsafe { w.assume_init() }
    }

    fn word<'a>(p: *const u64) -> &'a AtomicU64 {
        // SAFETY: the library's words, aligned and alive while the test's handles live.
        unsafe { AtomicU64::from_ptr(p.cast_mut()) }
    }

    fn now(r: &wk_owner_registry_words) -> u64 {
        assert_eq!(r.clock_kind, WK_OWNER_CLOCK_WORD);
        word(r.clock).load(Ordering::Acquire)
    }

    /// The host's begin; `false` means "take the slow path".
    fn begin(r: &wk_owner_registry_words, o: &wk_owner_words, row: usize) -> bool {
        if word(r.stopped).load(Ordering::Acquire) != 0 {
            return false;
        }
        let s = word(o.state);
        let mut w = s.load(Ordering::Acquire);
        loop {
            if w & WK_OWNER_WORD_STAGE_MASK != WK_OWNER_WORD_STAGE_ACTIVE
                || now(r) >= word(o.lease_until).load(Ordering::Acquire)
                || w & WK_OWNER_WORD_OPS_MASK >= u64::from(r.max_operations)
            {
                return false;
            }
            match s.compare_exchange(w, w + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(a) => w = a,
            }
        }
        gauge(r, row, 0).fetch_add(1, Ordering::AcqRel);
        true
    }

    /// The host's done; `false` means "call `wk_owner_scope_end`".
    fn done(r: &wk_owner_registry_words, o: &wk_owner_words, row: usize) -> bool {
        let s = word(o.state);
        let mut w = s.load(Ordering::Acquire);
        loop {
            if w & WK_OWNER_WORD_OPS_MASK == 0
                || (w - 1) & WK_OWNER_WORD_RETIRE_MASK == WK_OWNER_WORD_RETIRE_VALUE
            {
                return false;
            }
            match s.compare_exchange(w, w - 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(a) => w = a,
            }
        }
        gauge(r, row, 1).fetch_add(1, Ordering::AcqRel);
        true
    }

    fn gauge<'a>(r: &wk_owner_registry_words, row: usize, which: usize) -> &'a AtomicU64 {
        assert!(row < WK_OWNER_GAUGE_ROWS as usize);
        // SAFETY: row `row` of `WK_OWNER_GAUGE_ROWS`, `gauge_row_stride` bytes apart, two words.
        let p = unsafe {
            r.gauge
                .cast::<u8>()
                .add(row * r.gauge_row_stride as usize)
                .cast::<u64>()
                .add(which)
        };
        word(p)
    }

    #[test]
    fn bad_input_is_refused_and_out_params_untouched() {
        let f = Fixture::new();
        let mut rw = std::mem::MaybeUninit::<wk_owner_registry_words>::zeroed();
        let mut ow = std::mem::MaybeUninit::<wk_owner_words>::zeroed();
        // SAFETY: NULL and mistyped handles are what is tested; out-pointers writable.
        unsafe {
            assert_eq!(
                wk_owner_registry_words_get(ptr::null(), rw.as_mut_ptr()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_owner_registry_words_get(f.reg, ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_owner_words_get(ptr::null(), ow.as_mut_ptr()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_owner_words_get(f.reg.cast(), ow.as_mut_ptr()),
                WK_STATUS_INVALID_HANDLE
            );
            assert_eq!(wk_owner_scope_end(ptr::null()), WK_STATUS_NULL_ARGUMENT);
            assert_eq!(wk_owner_scope_end(f.reg.cast()), WK_STATUS_INVALID_HANDLE);
            assert!(rw.assume_init().stopped.is_null(), "untouched");
            assert!(ow.assume_init().state.is_null(), "untouched");
        }
        let host = Host::new(WK_STATUS_OK);
        let owner = f.active(b"c1", host);
        // SAFETY: live owner with no scope: refused, nothing changes.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_scope_end(owner) },
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(f.snapshot().operations, 0);
        assert_eq!(wk_owner_layout_version(), WK_OWNER_WORDS_LAYOUT_VERSION);
        // SAFETY: live handle, freed once.
        unsafe { wk_owner_free(owner) };
    }

    #[test]
    fn clocks_are_reported_as_a_host_reads_them() {
        let f = Fixture::new();
        let r = registry_words(f.reg);
        assert_eq!(r.layout_version, WK_OWNER_WORDS_LAYOUT_VERSION);
        assert_eq!(now(&r), f.now());
        // SAFETY: live registry.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_registry_advance_clock(f.reg, 5) },
            WK_STATUS_OK
        );
        assert_eq!(now(&r), f.now());
        assert_eq!(r.max_operations, 2);
        assert!(r.gauge_row_stride as usize >= 16 && r.gauge_row_stride % 8 == 0);
        let mut hosted = ptr::null_mut();
        // SAFETY: valid options and out-pointer.
        let st = unsafe { wk_owner_registry_new_hosted(&options(), &mut hosted) };
        assert_eq!(st, WK_STATUS_OK);
        let m = registry_words(hosted);
        assert!(m.clock.is_null());
        // The host's reading brackets the library's.
        let host_now = || match m.clock_kind {
            WK_OWNER_CLOCK_TSC => super::super::host::tests_os::tsc_now(m.tsc_origin, m.tsc_mul),
            WK_OWNER_CLOCK_MONOTONIC => super::super::host::tests_os::now(),
            kind => panic!("a hosted registry on this machine reads clock kind {kind}"),
        };
        for _ in 0..1000 {
            let before = host_now();
            let mut reading = 0;
            // SAFETY: live registry, valid out-pointer.
            let st = unsafe { wk_owner_registry_now(hosted, &mut reading) };
            assert_eq!(st, WK_STATUS_OK);
            let after = host_now();
            assert!(
                before <= reading && reading <= after,
                "{before} {reading} {after}"
            );
        }
        if m.clock_kind == WK_OWNER_CLOCK_TSC {
            assert_ne!(m.tsc_mul, 0);
        } else {
            assert_eq!((m.tsc_origin, m.tsc_mul), (0, 0));
        }
        // SAFETY: live registry; advancing a real clock is refused.
        let st = unsafe { wk_owner_registry_advance_clock(hosted, 1) };
        assert_eq!(st, WK_STATUS_INVALID_ARGUMENT);
        let mut private = ptr::null_mut();
        // SAFETY: valid options and out-pointer.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_registry_new(&options(), &mut private) },
            WK_STATUS_OK
        );
        assert_eq!(registry_words(private).clock_kind, WK_OWNER_CLOCK_PRIVATE);
        // SAFETY: owned here, freed once.
        unsafe {
            wk_owner_registry_free(hosted);
            wk_owner_registry_free(private);
        }
    }

    /// Inline and library begins and ends mix on one owner; the gauge counts both; a refusal is
    /// the slow path's status; the retiring end is the library's and completes a quiesce.
    #[test]
    fn inline_and_library_paths_share_one_word() {
        let f = Fixture::new();
        let r = registry_words(f.reg);
        let host = Host::new(WK_STATUS_OK);
        let owner = f.reserve(b"c1", host);
        let o = owner_words(owner);
        assert!(!begin(&r, &o, 3), "pending admits nothing inline");
        let mut op = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        // SAFETY: live owner, writable op.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_begin(owner, &mut op) },
            WK_STATUS_OWNER_FENCED
        );
        // SAFETY: live owner.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_activate(owner, 1, f.now() + 10 * SEC) },
            WK_STATUS_OK
        );
        assert!(begin(&r, &o, 3));
        // SAFETY: live owner, writable op.
        assert_eq!(unsafe { wk_owner_begin(owner, &mut op) }, WK_STATUS_OK);
        assert_eq!(f.snapshot().operations, 2);
        assert!(!begin(&r, &o, 3), "at max_operations");
        // SAFETY: as above.
        assert_eq!(
            // SAFETY: live handles of this test, writable out-pointers.
            unsafe { wk_owner_begin(owner, &mut op) },
            WK_STATUS_OWNER_LIMIT
        );
        // The library ends the inline scope; the host ends the library's.
        // SAFETY: live owner with scopes.
        assert_eq!(unsafe { wk_owner_scope_end(owner) }, WK_STATUS_OK);
        assert!(done(&r, &o, 9));
        assert_eq!(f.snapshot().operations, 0);
        // The last end of a quiescing owner: the host must take the slow path.
        assert!(begin(&r, &o, 3));
        std::thread::scope(|s| {
            let addr = owner as usize;
            let q = s.spawn(move || {
                let owner = addr as *const wk_owner;
                // SAFETY: live owner; no token; no call data.
                unsafe {
                    wk_owner_quiesce(owner, WK_OWNER_WAIT_FOREVER, ptr::null(), ptr::null_mut())
                }
            });
            while word(o.state).load(Ordering::Acquire) & WK_OWNER_WORD_TRANSPORT_CLOSED == 0 {
                std::thread::yield_now();
            }
            assert!(!done(&r, &o, 3), "a retiring end is the library's");
            // SAFETY: live owner with one scope.
            assert_eq!(unsafe { wk_owner_scope_end(owner) }, WK_STATUS_OK);
            assert_eq!(q.join().unwrap(), WK_STATUS_OK);
        });
        let w = word(o.state).load(Ordering::Acquire);
        assert_ne!(w & WK_OWNER_WORD_COMPLETE, 0);
        assert_eq!(f.snapshot().held, 0);
        assert_eq!(f.snapshot().operations, 0);
        // SAFETY: live registry.
        unsafe { wk_owner_registry_stop_admission(f.reg) };
        assert_ne!(word(r.stopped).load(Ordering::Acquire), 0);
        // SAFETY: live handle, freed once.
        unsafe { wk_owner_free(owner) };
    }
}

/// Arguments before the budget, and a spent budget only where there is something to wait for:
/// with timeout 0, a malformed or never-issued identity is refused as such, a retired owner and
/// an empty registry are `OK`, and an owner with an operation in flight still times out.
#[test]
fn arguments_come_before_the_budget_and_no_wait_is_no_timeout() {
    let f = Fixture::new();
    let host = Host::new(WK_STATUS_OK);
    let owner = f.active(b"c1", host);
    let id = identity_of_owner(owner);
    let mut malformed = id;
    malformed.namespace_len = 0;
    let mut never = id;
    never.connection_id = 99;
    // SAFETY: live handles; identities point at static bytes.
    unsafe {
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &malformed, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_INVALID
        );
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &never, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_UNKNOWN
        );
        assert_eq!(
            wk_owner_isolation_quiesce(
                f.reg,
                ptr::null(),
                0,
                &never,
                0,
                ptr::null(),
                ptr::null_mut()
            ),
            WK_STATUS_OWNER_UNKNOWN
        );
        let mut op = wk_owner_op {
            owner: ptr::null(),
            state: 0,
        };
        assert_eq!(wk_owner_begin(owner, &mut op), WK_STATUS_OK);
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_DEADLINE_EXCEEDED
        );
        assert_eq!(
            wk_owner_quiesce(owner, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OWNER_DEADLINE_EXCEEDED
        );
        assert_eq!(wk_owner_op_done(&mut op), WK_STATUS_OK);
        assert_eq!(
            wk_owner_quiesce(owner, WK_OWNER_WAIT_FOREVER, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        // Retired: nothing to wait for.
        assert_eq!(
            wk_owner_quiesce(owner, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_isolation_quiesce(f.reg, ptr::null(), 0, &id, 0, ptr::null(), ptr::null_mut()),
            WK_STATUS_OK
        );
        let mut token = ptr::null_mut();
        assert_eq!(wk_cancel_token_new(&mut token), WK_STATUS_OK);
        assert_eq!(wk_cancel_token_cancel(token), WK_STATUS_OK);
        assert_eq!(
            wk_owner_registry_quiesce(f.reg, &id, SEC, token, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_owner_registry_close(f.reg, 0, token, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert!(f.snapshot().stopped);
        wk_cancel_token_free(token);
        wk_owner_free(owner);
    }
}
