//! Stress test of `wkcore::owner::OwnerRegistry`: four workers begin and end scopes across
//! 10 000 active owners (by identity and by handle, sometimes two at once so the per-owner bound
//! is hit) while a controller fences, quiesces (close callback ok), renews and sweeps, and moves
//! a `ManualClock` so that leases not renewed run out; a sampler reads the snapshot, the
//! `wukongim_mqtt_owner_work` gauges and the harness's per-owner counts during the run.
//!
//! Checked: every begin that returned `Ok` is ended exactly once and the operation gauge ends at
//! 0; no begin (and no check) that starts after the controller's fence of that owner returned
//! succeeds (the controller sets the owner's flag after `fence`/`quiesce` returned, a worker
//! reads it before it begins); an owner never holds more than `max_operations` scopes (a
//! per-owner counter bumped after a begin succeeded and dropped before its done); the sampled
//! counts stay within their bounds (no wrap); after `close` nothing is held and every owner's
//! transport was closed exactly once.
#![allow(clippy::disallowed_types)] // the harness's own atomics; the code under test uses the shim

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::owner::{
    Budget, Claim, Operation, Owner, OwnerError, OwnerHandle, OwnerKey, OwnerOptions,
    OwnerRegistry, WorkState,
};

const THREADS: usize = 4;
const OWNERS: usize = 10_000;
const MAX_OPS: u32 = 2;
const SEC: u64 = 1_000_000_000;
const LEASE: u64 = 60 * SEC;
/// Worker begins per controller action (the controller keeps pace with the workers).
const PACE: u64 = 1_000;
/// Owners `0..HOT` take one pick in eight, so that workers meet on them (and at the bound).
const HOT: u64 = 16;
/// The controller's actions between clock moves, and each move.
const ROUND: u32 = 400;
const STEP: u64 = 4 * SEC;
const WAIT: Duration = Duration::from_secs(20);

fn begins_per_thread() -> u64 {
    if cfg!(debug_assertions) {
        100_000
    } else {
        3_000_000
    }
}

/// splitmix64: a cheap per-thread generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One owner, with the harness's records.
struct Slot {
    owner: Owner,
    handle: OwnerHandle,
    /// Set by the controller after a fence (or a quiesce, which fences) of this owner returned.
    fenced: AtomicBool,
    /// Scopes the workers hold on this owner (bumped after begin, dropped before done).
    held: AtomicU32,
    /// Close callback calls.
    closes: Arc<AtomicU32>,
    /// The last revision the controller installed.
    revision: AtomicU64,
}

#[derive(Default)]
struct Tally {
    begun: AtomicU64,
    done: AtomicU64,
    refused_after_fence: AtomicU64,
    limit: AtomicU64,
    violations: AtomicU64,
}

fn claim(i: usize) -> Claim {
    Claim {
        key: OwnerKey::new("tenant", format!("client-{i}")),
        uid: format!("uid-{i}"),
        session_generation: 1,
        owner_generation: 1,
    }
}

#[test]
fn workers_controller_and_sampler_keep_every_invariant() {
    let started = Instant::now();
    let clock = Arc::new(ManualClock::new(1000 * SEC));
    let metrics = Registry::new();
    let registry = OwnerRegistry::with_metrics(
        OwnerOptions {
            node_id: 3,
            boot_id: "boot".into(),
            capacity: OWNERS as u32,
            max_operations: MAX_OPS,
            pending_timeout: Duration::from_secs(5),
            max_lease: Duration::from_nanos(LEASE),
            close_retry: Duration::from_secs(1),
            clock: clock.clone(),
        },
        &metrics,
    )
    .unwrap();
    let slots: Vec<Slot> = (0..OWNERS)
        .map(|i| {
            let closes = Arc::new(AtomicU32::new(0));
            let c = closes.clone();
            let handle = registry
                .reserve(&claim(i), move |_: &Budget| {
                    c.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .unwrap();
            handle.activate(1, registry.now() + LEASE).unwrap();
            Slot {
                owner: handle.owner().clone(),
                handle,
                fenced: AtomicBool::new(false),
                held: AtomicU32::new(0),
                closes,
                revision: AtomicU64::new(1),
            }
        })
        .collect();
    assert_eq!(registry.snapshot().active, OWNERS as u64);

    let tally = Tally::default();
    let workers_left = AtomicU64::new(THREADS as u64);
    // Worker iterations so far, published every 64.
    let progress = AtomicU64::new(0);
    let sampled = AtomicU64::new(0);
    let max_sampled_ops = AtomicU64::new(0);
    let (controller_fences, controller_renewals, swept) =
        (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));

    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (slots, registry, tally, workers_left, progress) =
                (&slots, &registry, &tally, &workers_left, &progress);
            s.spawn(move || {
                let mut rng = Rng(0x5eed ^ t as u64);
                for i in 0..begins_per_thread() {
                    if i % 64 == 63 {
                        progress.fetch_add(64, Ordering::Relaxed);
                    }
                    let pick = if rng.below(8) == 0 {
                        rng.below(HOT)
                    } else {
                        rng.below(OWNERS as u64)
                    };
                    let slot = &slots[pick as usize];
                    // Ordering: Acquire; pairs with the controller's Release store after fence.
                    let saw_fence = slot.fenced.load(Ordering::Acquire);
                    let two = rng.below(8) == 0;
                    let ops: Vec<_> = (0..if two { 2 } else { 1 })
                        .map_while(|k| {
                            let r: Result<Operation<'_>, _> = if (rng.next() ^ k) & 1 == 0 {
                                registry.begin(&slot.owner)
                            } else {
                                slot.handle.begin()
                            };
                            match r {
                                Ok(op) => {
                                    tally.begun.fetch_add(1, Ordering::Relaxed);
                                    if saw_fence {
                                        tally.violations.fetch_add(1, Ordering::Relaxed);
                                        eprintln!(
                                            "begin succeeded after a fence of owner {}",
                                            slot.owner.connection_id
                                        );
                                    }
                                    let held = slot.held.fetch_add(1, Ordering::AcqRel) + 1;
                                    if held > MAX_OPS {
                                        tally.violations.fetch_add(1, Ordering::Relaxed);
                                        eprintln!(
                                            "owner {} holds {held} scopes",
                                            slot.owner.connection_id
                                        );
                                    }
                                    Some(op)
                                }
                                Err(OwnerError::Limit) => {
                                    tally.limit.fetch_add(1, Ordering::Relaxed);
                                    None
                                }
                                Err(OwnerError::Fenced | OwnerError::Stopped) => {
                                    if saw_fence {
                                        tally.refused_after_fence.fetch_add(1, Ordering::Relaxed);
                                    }
                                    None
                                }
                                Err(e) => {
                                    tally.violations.fetch_add(1, Ordering::Relaxed);
                                    eprintln!("begin: unexpected {e:?}");
                                    None
                                }
                            }
                        })
                        .collect();
                    for op in &ops {
                        if rng.below(4) == 0 {
                            // Ordering: Acquire, as above.
                            let fenced_before = slot.fenced.load(Ordering::Acquire);
                            let r = op.check();
                            if fenced_before && r.is_ok() {
                                tally.violations.fetch_add(1, Ordering::Relaxed);
                                eprintln!(
                                    "check succeeded after a fence of owner {}",
                                    slot.owner.connection_id
                                );
                            }
                        }
                    }
                    for op in ops {
                        slot.held.fetch_sub(1, Ordering::AcqRel);
                        op.done();
                        if rng.below(16) == 0 {
                            op.done(); // idempotent
                        }
                        tally.done.fetch_add(1, Ordering::Relaxed);
                    }
                }
                workers_left.fetch_sub(1, Ordering::AcqRel);
            });
        }

        // The controller.
        {
            let (slots, registry, clock, workers_left, progress) =
                (&slots, &registry, &clock, &workers_left, &progress);
            let (controller_fences, controller_renewals, swept) =
                (&controller_fences, &controller_renewals, &swept);
            s.spawn(move || {
                let mut rng = Rng(0xc0de);
                let mut action = 0u32;
                while workers_left.load(Ordering::Acquire) > 0 {
                    if progress.load(Ordering::Relaxed) < u64::from(action) * PACE {
                        std::thread::yield_now();
                        continue;
                    }
                    let slot = &slots[rng.below(OWNERS as u64) as usize];
                    match rng.below(100) {
                        0..=9 => {
                            registry.fence(&slot.owner).unwrap();
                            // Ordering: Release; pairs with the workers' Acquire load.
                            slot.fenced.store(true, Ordering::Release);
                            controller_fences.fetch_add(1, Ordering::Relaxed);
                        }
                        10..=14 => {
                            registry
                                .quiesce(&slot.owner, &Budget::timeout(WAIT))
                                .unwrap();
                            slot.fenced.store(true, Ordering::Release);
                            controller_fences.fetch_add(1, Ordering::Relaxed);
                        }
                        15..=84 => {
                            let rev = slot.revision.fetch_add(1, Ordering::Relaxed) + 1;
                            match registry.renew(&slot.owner, rev, registry.now() + LEASE) {
                                Ok(()) => {
                                    controller_renewals.fetch_add(1, Ordering::Relaxed);
                                }
                                Err(OwnerError::Fenced) => {}
                                Err(e) => panic!("renew: {e:?}"),
                            }
                        }
                        _ => {
                            let n = registry.sweep(64, &Budget::timeout(WAIT)).unwrap();
                            swept.fetch_add(n as u64, Ordering::Relaxed);
                        }
                    }
                    action += 1;
                    if action % ROUND == 0 {
                        clock.advance(STEP);
                    }
                }
            });
        }

        // The sampler.
        {
            let (slots, registry, metrics, workers_left) =
                (&slots, &registry, &metrics, &workers_left);
            let (sampled, max_sampled_ops, tally) = (&sampled, &max_sampled_ops, &tally);
            s.spawn(move || {
                let mut rng = Rng(0x5a);
                let bound = OWNERS as u64 * u64::from(MAX_OPS);
                while workers_left.load(Ordering::Acquire) > 0 {
                    let snap = registry.snapshot();
                    let mut bad = snap.operations > bound
                        || snap.held > OWNERS as u64
                        || snap.pending + snap.active + snap.closing != snap.held
                        || snap.deadlines != snap.held
                        || snap.uncertain != 0;
                    let work = metrics.family("wukongim_mqtt_owner_work").unwrap();
                    for state in WorkState::ALL {
                        let v = work.value(&[state.label()]).unwrap();
                        let limit = match state {
                            WorkState::Operations => bound,
                            WorkState::Uncertain => 0,
                            _ => OWNERS as u64,
                        };
                        bad |= v > limit;
                    }
                    for _ in 0..64 {
                        let slot = &slots[rng.below(OWNERS as u64) as usize];
                        bad |= slot.held.load(Ordering::Acquire) > MAX_OPS;
                    }
                    if bad {
                        tally.violations.fetch_add(1, Ordering::Relaxed);
                        eprintln!("sample out of bounds: {snap:?} / {work:?}");
                    }
                    max_sampled_ops.fetch_max(snap.operations, Ordering::Relaxed);
                    sampled.fetch_add(1, Ordering::Relaxed);
                    std::thread::yield_now();
                }
            });
        }
    });

    let during = registry.snapshot();
    assert_eq!(during.operations, 0, "every scope ended: {during:?}");
    assert_eq!(
        tally.begun.load(Ordering::Relaxed),
        tally.done.load(Ordering::Relaxed)
    );
    registry.close(&Budget::timeout(WAIT)).unwrap();
    let end = registry.snapshot();
    assert_eq!(
        (end.held, end.operations, end.deadlines, end.closing),
        (0, 0, 0, 0),
        "{end:?}"
    );
    let work = metrics.family("wukongim_mqtt_owner_work").unwrap();
    assert_eq!(work.value(&["held"]), Some(0));
    assert_eq!(work.value(&["operations"]), Some(0));
    let closes: u64 = slots
        .iter()
        .map(|s| {
            let n = s.closes.load(Ordering::SeqCst);
            assert_eq!(n, 1, "owner {} closed {n} times", s.owner.connection_id);
            u64::from(n)
        })
        .sum();
    assert_eq!(closes, OWNERS as u64, "one close per retired owner");
    assert!(slots.iter().all(|s| s.handle.is_complete()));
    assert_eq!(
        registry.retirement().unwrap().last_connection_id,
        OWNERS as u64
    );
    assert_eq!(tally.violations.load(Ordering::Relaxed), 0);
    assert!(sampled.load(Ordering::Relaxed) > 0);
    assert!(
        tally.refused_after_fence.load(Ordering::Relaxed) > 0,
        "the fence check was exercised"
    );
    eprintln!(
        "stress_owner: {} begins, {} limit refusals, {} refused after an observed fence, {} controller fences, {} renewals, {} swept, {} samples (max operations {}), sweep counts {:?}, {:.1} s",
        tally.begun.load(Ordering::Relaxed),
        tally.limit.load(Ordering::Relaxed),
        tally.refused_after_fence.load(Ordering::Relaxed),
        controller_fences.load(Ordering::Relaxed),
        controller_renewals.load(Ordering::Relaxed),
        swept.load(Ordering::Relaxed),
        sampled.load(Ordering::Relaxed),
        max_sampled_ops.load(Ordering::Relaxed),
        registry.sweep_counts(),
        started.elapsed().as_secs_f64()
    );
}
