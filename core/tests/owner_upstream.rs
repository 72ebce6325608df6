//! Upstream's owner tests (`internal/runtime/mqttsession/*_test.go`), one test each, named after
//! upstream's, against the core API. Fixture as upstream's: NodeID 3, BootID "boot",
//! PendingTimeout 1 s, MaxLease 10 s, CloseRetry 1 s, a manual clock.

#![allow(clippy::disallowed_types)] // the tests' own atomics; the code under test uses the shim
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::owner::*;

const SEC: u64 = 1_000_000_000;

struct Fixture {
    clock: Arc<ManualClock>,
    registry: OwnerRegistry,
    metrics: Registry,
}

fn fixture(capacity: u32, max_operations: u32) -> Fixture {
    let clock = Arc::new(ManualClock::new(1000 * SEC));
    let metrics = Registry::new();
    let registry = OwnerRegistry::with_metrics(
        OwnerOptions {
            node_id: 3,
            boot_id: "boot".into(),
            capacity,
            max_operations,
            pending_timeout: Duration::from_secs(1),
            max_lease: Duration::from_secs(10),
            close_retry: Duration::from_secs(1),
            clock: clock.clone(),
        },
        &metrics,
    )
    .unwrap();
    Fixture {
        clock,
        registry,
        metrics,
    }
}

fn claim(client: &str, uid: &str) -> Claim {
    Claim {
        key: OwnerKey::new("tenant", client),
        uid: uid.into(),
        session_generation: 7,
        owner_generation: 9,
    }
}

/// A close callback that counts its calls and answers with `result`.
fn counting(calls: &Arc<AtomicUsize>, result: Result<(), CloseError>) -> impl CloseTransport {
    let calls = calls.clone();
    move |_: &Budget| {
        calls.fetch_add(1, Ordering::SeqCst);
        result
    }
}

fn ok_close() -> impl CloseTransport {
    |_: &Budget| Ok(())
}

fn forever() -> Budget {
    Budget::unbounded()
}

#[test]
fn owner_admission_requires_live_exact_committed_activation() {
    let f = fixture(10, 1);
    let h = f
        .registry
        .reserve(&claim("c1", "alice"), ok_close())
        .unwrap();
    let owner = h.owner().clone();
    assert_eq!(owner.connection_id, 1);
    assert_eq!((owner.node_id, &*owner.boot_id), (3, "boot"));
    assert_eq!(f.registry.begin(&owner).unwrap_err(), OwnerError::Fenced);

    let now = f.registry.now();
    let until = now + 5 * SEC;
    f.registry.activate(&owner, 1, until).unwrap();
    f.registry.activate(&owner, 1, until).unwrap();
    assert_eq!(
        f.registry.activate(&owner, 1, until + 1),
        Err(OwnerError::Fenced)
    );
    assert_eq!(
        f.registry.activate(&owner, 0, until),
        Err(OwnerError::Invalid)
    );
    assert_eq!(
        f.registry.activate(&owner, 2, now + 11 * SEC),
        Err(OwnerError::Invalid)
    );

    let op = f.registry.begin(&owner).unwrap();
    assert_eq!(f.registry.begin(&owner).unwrap_err(), OwnerError::Limit);
    op.done();
    op.done();
    assert_eq!(f.registry.snapshot().operations, 0);
    let op = f.registry.begin(&owner).unwrap();
    drop(op);

    let mut other = owner.clone();
    other.key.client_id = "c2".into();
    assert_eq!(f.registry.begin(&other).unwrap_err(), OwnerError::Unknown);
    assert_eq!(
        f.registry.quiesce(&other, &forever()),
        Err(OwnerError::Unknown)
    );
    let mut other = owner.clone();
    other.session_generation += 1;
    assert_eq!(f.registry.begin(&other).unwrap_err(), OwnerError::Unknown);
    let mut other = owner.clone();
    other.node_id = 4;
    assert_eq!(f.registry.begin(&other).unwrap_err(), OwnerError::Unknown);
    let mut other = owner.clone();
    other.boot_id = "other".into();
    assert_eq!(f.registry.begin(&other).unwrap_err(), OwnerError::Unknown);
    assert_eq!(
        f.registry.quiesce(&other, &forever()),
        Err(OwnerError::Unknown)
    );

    assert_eq!(f.registry.renew(&owner, 1, until), Ok(()), "exact retry");
    assert_eq!(
        f.registry.renew(&owner, 1, until + SEC),
        Err(OwnerError::Fenced)
    );
    f.registry.renew(&owner, 2, until + SEC).unwrap();
    f.clock.advance(6 * SEC + 1);
    assert_eq!(f.registry.begin(&owner).unwrap_err(), OwnerError::Fenced);
    assert_eq!(
        f.registry.renew(&owner, 3, f.registry.now() + SEC),
        Err(OwnerError::Fenced)
    );

    f.registry.quiesce(&owner, &forever()).unwrap();
    f.registry.quiesce(&owner, &forever()).unwrap();
    assert_eq!(f.registry.snapshot().held, 0);
    let mut future = owner.clone();
    future.connection_id = 2;
    assert_eq!(
        f.registry.quiesce(&future, &forever()),
        Err(OwnerError::Unknown)
    );
}

#[test]
fn owner_quiescence_waits_for_transport_and_admitted_work() {
    let f = Arc::new(fixture(10, 4));
    let calls = Arc::new(AtomicUsize::new(0));
    let h = f
        .registry
        .reserve(&claim("c1", "alice"), counting(&calls, Ok(())))
        .unwrap();
    h.activate(1, f.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    assert!(!op.is_cancelled());

    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let f = f.clone();
            let owner = h.owner().clone();
            std::thread::spawn(move || f.registry.quiesce(&owner, &Budget::unbounded()))
        })
        .collect();
    assert_eq!(
        op.wait_cancelled(&Budget::timeout(Duration::from_secs(10))),
        Ok(Cancellation::Fenced)
    );
    assert_eq!(h.begin().unwrap_err(), OwnerError::Fenced);
    std::thread::sleep(Duration::from_millis(50));
    assert!(waiters.iter().all(|w| !w.is_finished()), "waits for done");
    op.done();
    for w in waiters {
        assert_eq!(w.join().unwrap(), Ok(()));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one close shared");
    assert_eq!(f.registry.snapshot().held, 0);
    let next = f
        .registry
        .reserve(&claim("c1", "alice"), ok_close())
        .unwrap();
    assert!(next.connection_id() > h.connection_id());
    f.registry.quiesce(h.owner(), &forever()).unwrap();
    f.registry.close(&forever()).unwrap();
}

#[test]
fn owner_failed_close_stays_fenced_and_consumes_capacity() {
    for mode in ["error", "panic", "cancel"] {
        let f = fixture(1, 4);
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let fl = fail.clone();
        let h = f
            .registry
            .reserve(&claim("c1", "alice"), move |_: &Budget| {
                if fl.load(Ordering::SeqCst) {
                    match mode {
                        "error" => return Err(CloseError::Failed),
                        "panic" => panic!("secret text"),
                        _ => return Err(CloseError::Canceled),
                    }
                }
                Ok(())
            })
            .unwrap();
        h.activate(1, f.registry.now() + 5 * SEC).unwrap();
        let err = h.quiesce(&forever()).unwrap_err();
        let expected = if mode == "cancel" {
            OwnerError::Canceled
        } else {
            OwnerError::Close
        };
        assert_eq!(err, expected, "{mode}");
        assert!(!err.to_string().contains("secret"));
        assert_eq!(h.stage(), Stage::Closing);
        assert_eq!(
            f.registry
                .reserve(&claim("c2", "bob"), ok_close())
                .unwrap_err(),
            OwnerError::Limit
        );
        assert_eq!(f.registry.snapshot().closing, 1);
        fail.store(false, Ordering::SeqCst);
        h.quiesce(&forever()).unwrap();
        assert_eq!(f.registry.snapshot().held, 0, "{mode}");
    }
}

#[test]
fn owner_expiry_is_bounded_and_renewal_does_not_grow_deadline_queue() {
    let f = fixture(10, 4);
    let pending = f.registry.reserve(&claim("p", "u1"), ok_close()).unwrap();
    let renewed = f.registry.reserve(&claim("r", "u2"), ok_close()).unwrap();
    let now = f.registry.now();
    renewed.activate(1, now + 5 * SEC).unwrap();
    for rev in 2..=100 {
        renewed.renew(rev, now + 5 * SEC + rev).unwrap();
    }
    assert_eq!(f.registry.snapshot().deadlines, 2);
    f.clock.advance(2 * SEC);
    assert_eq!(f.registry.sweep(1, &forever()), Ok(1));
    assert!(pending.is_complete());
    assert_eq!(f.registry.snapshot().held, 1);
    let op = renewed.begin().unwrap();
    op.done();
    f.clock.advance(10 * SEC);
    assert_eq!(f.registry.sweep(256, &forever()), Ok(1));
    assert_eq!(f.registry.snapshot().held, 0);
    assert_eq!(
        f.registry.sweep(257, &forever()).unwrap_err().error,
        OwnerError::Invalid
    );
    f.registry.close(&forever()).unwrap();
    assert_eq!(
        f.registry
            .reserve(&claim("x", "u"), ok_close())
            .unwrap_err(),
        OwnerError::Stopped
    );
    let sweep = f.metrics.family("wukongim_mqtt_owner_sweep_total").unwrap();
    assert_eq!(sweep.value(&["visited"]), Some(2));
}

#[test]
fn owner_cancellation_does_not_finish_an_operation() {
    let f = fixture(10, 4);
    let h = f.registry.reserve(&claim("c", "u"), ok_close()).unwrap();
    h.activate(1, f.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(
        f.registry
            .close(&Budget::unbounded().with_cancel(token))
            .unwrap_err(),
        OwnerError::Canceled
    );
    assert_eq!(op.cancellation(), Some(Cancellation::Stopped));
    assert_eq!(f.registry.snapshot().operations, 1);
    assert_eq!(h.begin().unwrap_err(), OwnerError::Stopped);
    op.done();
    f.registry.close(&forever()).unwrap();
    assert_eq!(f.registry.snapshot().held, 0);
    assert!(f.registry.retirement().is_ok());
}

#[test]
fn owner_operation_retains_identity_and_rechecks_live_lease() {
    let f = fixture(10, 4);
    let mut c = claim("c", "alice");
    let h = f.registry.reserve(&c, ok_close()).unwrap();
    c.uid = "mallory".into();
    h.activate(1, f.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    assert_eq!(op.uid(), "alice");
    assert_eq!(op.check(), Ok(()));
    f.clock.advance(5 * SEC);
    assert_eq!(op.check(), Err(OwnerError::Fenced));
    assert!(op.is_cancelled());
    assert_eq!(op.check(), Err(OwnerError::Canceled));
    assert_eq!(f.registry.snapshot().operations, 1);
    op.done();
    assert_eq!(op.check(), Err(OwnerError::Fenced));
    assert_eq!(op.uid(), "alice");
}

#[test]
fn owner_uncertain_effect_cannot_produce_quiescence_proof() {
    let f = Arc::new(fixture(1, 4));
    let calls = Arc::new(AtomicUsize::new(0));
    let h = f
        .registry
        .reserve(&claim("c", "u"), counting(&calls, Ok(())))
        .unwrap();
    h.activate(1, f.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    op.mark_uncertain().unwrap();
    op.mark_uncertain().unwrap();
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let h = h.clone();
            std::thread::spawn(move || h.quiesce(&Budget::unbounded()))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    op.done();
    for w in waiters {
        assert_eq!(w.join().unwrap(), Err(OwnerError::Unknown));
    }
    let s = f.registry.snapshot();
    assert_eq!((s.uncertain, s.held, s.operations), (1, 1, 0));
    assert_eq!(op.mark_uncertain(), Err(OwnerError::Fenced));
    assert_eq!(
        f.registry
            .reserve(&claim("d", "u"), ok_close())
            .unwrap_err(),
        OwnerError::Limit
    );
    f.clock.advance(2 * SEC);
    assert_eq!(
        f.registry.sweep(10, &forever()).unwrap_err().error,
        OwnerError::Unknown
    );
    assert_eq!(f.registry.close(&forever()), Err(OwnerError::Unknown));
    assert_eq!(f.registry.snapshot().held, 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn owner_fence_does_not_wait_or_forget_admitted_work() {
    let f = fixture(10, 4);
    let calls = Arc::new(AtomicUsize::new(0));
    let h = f
        .registry
        .reserve(&claim("c", "u"), counting(&calls, Ok(())))
        .unwrap();
    h.activate(1, f.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    f.registry.fence(h.owner()).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(op.is_cancelled());
    assert_eq!(h.begin().unwrap_err(), OwnerError::Fenced);
    assert_eq!(f.registry.snapshot().operations, 1);
    op.done();
    h.quiesce(&forever()).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(f.registry.fence(h.owner()), Ok(()));
    let mut next = h.owner().clone();
    next.connection_id += 1;
    assert_eq!(f.registry.fence(&next), Err(OwnerError::Unknown));
}

#[test]
fn owner_sweeper_bounds_due_work_and_preserves_renewal() {
    let f = fixture(10, 4);
    let calls = Arc::new(AtomicUsize::new(0));
    let a = f
        .registry
        .reserve(&claim("a", "u"), counting(&calls, Ok(())))
        .unwrap();
    let _b = f
        .registry
        .reserve(&claim("b", "u"), counting(&calls, Ok(())))
        .unwrap();
    let _c = f
        .registry
        .reserve(&claim("c", "u"), counting(&calls, Ok(())))
        .unwrap();
    let kept = f
        .registry
        .reserve(&claim("k", "u"), counting(&calls, Ok(())))
        .unwrap();
    kept.activate(1, f.registry.now() + 5 * SEC).unwrap();
    f.clock.advance(2 * SEC);
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(
        f.registry
            .sweep(2, &Budget::unbounded().with_cancel(token))
            .unwrap_err()
            .visited,
        0
    );
    assert_eq!(f.registry.sweep(2, &forever()), Ok(2));
    assert_eq!(f.registry.sweep(2, &forever()), Ok(1));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(a.is_complete());
    assert_eq!(kept.stage(), Stage::Active);
    kept.begin().unwrap().done();
}

#[test]
fn owner_sweeper_yields_failed_close_and_retains_uncertain_barrier() {
    let f = fixture(10, 4);
    let failing = f
        .registry
        .reserve(&claim("a", "u"), |_: &Budget| Err(CloseError::Failed))
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let other = f
        .registry
        .reserve(&claim("b", "u"), counting(&calls, Ok(())))
        .unwrap();
    f.clock.advance(2 * SEC);
    let first = f.registry.sweep(256, &forever()).unwrap_err();
    assert_eq!((first.visited, first.error), (1, OwnerError::Close));
    assert_eq!(
        f.registry.sweep(256, &forever()),
        Ok(1),
        "the other is next"
    );
    assert!(other.is_complete());
    assert_eq!(failing.stage(), Stage::Closing);
    assert_eq!(f.registry.sweep_counts(), [2, 2, 1]);
}

#[test]
fn owner_sweeper_joined_stop_and_fresh_restart() {
    let f = fixture(10, 4);
    let registry = Arc::new(f.registry);
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let sweeper = Sweeper::new(
        registry.clone(),
        SweeperOptions {
            interval: Duration::from_millis(1),
            observe: Some(Arc::new(move |_: &SweepObservation| {
                s.fetch_add(1, Ordering::SeqCst);
            })),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sweeper.options().limit, 256);
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(
        sweeper.start(&Budget::unbounded().with_cancel(token)),
        Err(SweeperError::Canceled)
    );
    sweeper.start(&forever()).unwrap();
    sweeper.start(&forever()).unwrap();
    while seen.load(Ordering::SeqCst) < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    sweeper.stop(&forever()).unwrap();
    assert!(!sweeper.is_running());
    sweeper.start(&forever()).unwrap();
    sweeper.stop(&forever()).unwrap();
    assert!(Sweeper::new(
        registry,
        SweeperOptions {
            limit: 257,
            ..Default::default()
        }
    )
    .is_err());
}

#[test]
fn abandoned_pending_reservation_is_closed_by_the_sweeper() {
    let f = fixture(10, 4);
    let registry = Arc::new(f.registry);
    let _abandoned = registry.reserve(&claim("gone", "u"), ok_close()).unwrap();
    f.clock.advance(2 * SEC);
    let sweeper = Sweeper::new(
        registry.clone(),
        SweeperOptions {
            interval: Duration::from_millis(1),
            ..Default::default()
        },
    )
    .unwrap();
    sweeper.start(&forever()).unwrap();
    while registry.snapshot().held != 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    sweeper.stop(&forever()).unwrap();
    let sweep = f.metrics.family("wukongim_mqtt_owner_sweep_total").unwrap();
    assert!(sweep.value(&["visited"]).unwrap() >= 1);
    let work = f.metrics.family("wukongim_mqtt_owner_work").unwrap();
    assert_eq!(work.value(&["held"]), Some(0));
}

#[test]
fn isolation_answers_by_node_and_boot() {
    let f = fixture(10, 4);
    let h = f.registry.reserve(&claim("c", "u"), ok_close()).unwrap();
    let owner = h.owner().clone();
    let proof = RetiredBoot {
        node_id: 3,
        boot_id: "old".into(),
        last_connection_id: 5,
    };
    let iso = Isolation {
        registry: Some(&f.registry),
        retired: std::slice::from_ref(&proof),
    };
    let mut foreign = owner.clone();
    foreign.node_id = 9;
    assert_eq!(iso.quiesce(&foreign, &forever()), Err(OwnerError::Unknown));
    let mut old = owner.clone();
    old.boot_id = "old".into();
    assert_eq!(iso.quiesce(&old, &forever()), Ok(()));
    old.connection_id = 6;
    assert_eq!(iso.quiesce(&old, &forever()), Err(OwnerError::Unknown));
    old.boot_id = "older".into();
    assert_eq!(iso.quiesce(&old, &forever()), Err(OwnerError::Unknown));
    assert_eq!(iso.quiesce(&owner, &forever()), Ok(()));
    let mut bad = owner;
    bad.connection_id = 0;
    assert_eq!(iso.quiesce(&bad, &forever()), Err(OwnerError::Invalid));
    assert_eq!(f.registry.retirement().unwrap_err(), OwnerError::Unknown);
    f.registry.close(&forever()).unwrap();
    let r = f.registry.retirement().unwrap();
    assert_eq!(r.last_connection_id, 1);
}

#[test]
fn sweep_turns_run_once_per_interval() {
    let f = fixture(10, 4);
    let i = Duration::from_secs(1);
    assert_eq!(
        f.registry.sweep_turn(i, 8, &forever()),
        Ok(SweepTurn::Ran(0))
    );
    assert_eq!(
        f.registry.sweep_turn(i, 8, &forever()),
        Ok(SweepTurn::Skipped)
    );
    f.clock.advance(SEC);
    assert_eq!(
        f.registry.sweep_turn(i, 8, &forever()),
        Ok(SweepTurn::Ran(0))
    );
    assert_eq!(f.registry.sweep_counts()[0], 2);
}

#[test]
fn an_operations_cancellation_keeps_its_first_cause() {
    let f = fixture(10, 4);
    let a = f.registry.reserve(&claim("a", "u"), ok_close()).unwrap();
    let b = f.registry.reserve(&claim("b", "u"), ok_close()).unwrap();
    let until = f.registry.now() + 5 * SEC;
    a.activate(1, until).unwrap();
    b.activate(1, until).unwrap();
    let (op_a, op_b) = (a.begin().unwrap(), b.begin().unwrap());
    b.fence();
    assert_eq!(op_b.cancellation(), Some(Cancellation::Fenced));
    op_b.done();
    assert_eq!(
        op_b.cancellation(),
        Some(Cancellation::Fenced),
        "fence, then done"
    );
    f.registry.stop_admission();
    assert_eq!(op_a.cancellation(), Some(Cancellation::Stopped));
    a.fence();
    assert_eq!(
        op_a.cancellation(),
        Some(Cancellation::Stopped),
        "stop, then fence"
    );
    op_a.done();
    assert_eq!(op_a.cancellation(), Some(Cancellation::Stopped));
    let c = fixture(10, 4);
    let h = c.registry.reserve(&claim("c", "u"), ok_close()).unwrap();
    h.activate(1, c.registry.now() + 5 * SEC).unwrap();
    let op = h.begin().unwrap();
    op.done();
    h.fence();
    assert_eq!(
        op.cancellation(),
        Some(Cancellation::Done),
        "done, then fence"
    );
}
