//! Runs begin+done pairs on one active owner for instruction counting under valgrind:
//! `scripts/instructions --owner` runs it per variant at two pair counts, and the difference
//! gives the instructions of one begin+done (set-up cancels out).
//!
//! `cargo run --release -p wkcore-bench --example owner_instructions -- VARIANT PAIRS`
//! VARIANT: `wkcore` (through the handle), `wkcore_real` (the same on the production TSC
//! clock), `mutex` (upstream's algorithm under one mutex, by identity) or `floor` (two
//! uncontended atomic RMWs).
//!
//! The cold paths, for callgrind's cache simulation (`--cache-sim=yes`) as well as its counts:
//! `reserve_activate_wkcore|reserve_activate_mutex N` reserves and activates N owners (the
//! difference of two N gives the marginal owner at that size); `sweep_wkcore|sweep_mutex HELD K`
//! holds HELD owners of which the first 2560 stay pending (due) and sweeps K ≤ 2560 of them (the
//! difference of two K at one HELD gives one visit at that size: the set-up is the same).

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use wkcore::clock::{Clock, ManualClock};
use wkcore::metrics::Registry;
use wkcore::owner::{Budget, Claim, OwnerKey, OwnerOptions, OwnerRegistry};
use wkcore_references::owner::MutexOwners;

const SEC: u64 = 1_000_000_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(variant), Some(pairs)) = (
        args.first().cloned(),
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: owner_instructions VARIANT N [K] (module docs)");
        return ExitCode::from(2);
    };
    let clock = Arc::new(ManualClock::new(SEC));
    let until = clock.now_nanos() + 50 * SEC;
    let options = OwnerOptions {
        node_id: 1,
        boot_id: "bench".into(),
        capacity: 16,
        max_operations: 8,
        pending_timeout: Duration::from_secs(5),
        max_lease: Duration::from_secs(60),
        close_retry: Duration::from_millis(250),
        clock,
    };
    let claim = Claim {
        key: OwnerKey::new("bench", "client"),
        uid: "uid".into(),
        session_generation: 1,
        owner_generation: 1,
    };
    match variant.as_str() {
        "wkcore" => {
            let metrics = Registry::new();
            let r = OwnerRegistry::with_metrics(options, &metrics).unwrap();
            let h = r.reserve(&claim, |_: &Budget| Ok(())).unwrap();
            h.activate(1, until).unwrap();
            for _ in 0..pairs {
                black_box(&h).begin().unwrap().done();
            }
        }
        "wkcore_real" => {
            let metrics = Registry::new();
            let production = OwnerOptions::production(1, "bench", 16);
            let r = OwnerRegistry::with_metrics(production, &metrics).unwrap();
            let h = r.reserve(&claim, |_: &Budget| Ok(())).unwrap();
            h.activate(1, r.now() + 50 * SEC).unwrap();
            for _ in 0..pairs {
                black_box(&h).begin().unwrap().done();
            }
        }
        "reserve_activate_wkcore" | "reserve_activate_mutex" | "sweep_wkcore" | "sweep_mutex" => {
            let k = args.get(2).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            cold(&variant, pairs as usize, k as usize);
        }
        "mutex" => {
            let m = MutexOwners::new(options).unwrap();
            let o = m.reserve(&claim, |_: &Budget| Ok(())).unwrap();
            m.activate(&o, 1, until).unwrap();
            for _ in 0..pairs {
                m.done(m.begin(black_box(&o)).unwrap());
            }
        }
        "floor" => {
            let word = AtomicU64::new(0);
            for _ in 0..pairs {
                // Ordering: AcqRel, as the registry's CASes.
                black_box(&word).fetch_add(1, Ordering::AcqRel);
                black_box(&word).fetch_sub(1, Ordering::AcqRel);
            }
        }
        _ => {
            eprintln!("unknown variant {variant}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn numbered(i: usize) -> Claim {
    Claim {
        key: OwnerKey::new("bench", format!("client-{i}")),
        uid: format!("uid-{i}"),
        session_generation: 1,
        owner_generation: 1,
    }
}

/// The owners the sweep variants keep pending (module docs).
const DUE: usize = 2560;

/// The cold-path variants (module docs), as `bench/src/owner.rs` runs them. The registry is
/// leaked at the end, so the difference of two runs holds no teardown.
fn cold(variant: &str, n: usize, k: usize) {
    let clock = Arc::new(ManualClock::new(SEC));
    let far = clock.now_nanos() + 50 * SEC;
    let options = OwnerOptions {
        node_id: 1,
        boot_id: "bench".into(),
        capacity: n.max(1) as u32,
        max_operations: 8,
        pending_timeout: Duration::from_secs(5),
        max_lease: Duration::from_secs(60),
        close_retry: Duration::from_millis(250),
        clock: clock.clone(),
    };
    let claims: Vec<Claim> = (0..n).map(numbered).collect();
    let metrics = Registry::new();
    let unbounded = Budget::unbounded();
    match variant {
        "reserve_activate_wkcore" => {
            let r = OwnerRegistry::with_metrics(options, &metrics).unwrap();
            for c in &claims {
                let h = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                h.activate(1, far).unwrap();
            }
            std::mem::forget(r);
        }
        "reserve_activate_mutex" => {
            let r = MutexOwners::new(options).unwrap();
            for c in &claims {
                let o = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                r.activate(&o, 1, far).unwrap();
            }
            std::mem::forget(r);
        }
        "sweep_wkcore" => {
            let r = OwnerRegistry::with_metrics(options, &metrics).unwrap();
            for (i, c) in claims.iter().enumerate() {
                let h = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                if i >= DUE {
                    h.activate(1, far).unwrap();
                }
            }
            clock.advance(6 * SEC);
            let mut left = k;
            while left > 0 {
                let step = left.min(256);
                assert_eq!(r.sweep(step, &unbounded), Ok(step));
                left -= step;
            }
            std::mem::forget(r);
        }
        _ => {
            let r = MutexOwners::new(options).unwrap();
            for (i, c) in claims.iter().enumerate() {
                let o = r.reserve(c, |_: &Budget| Ok(())).unwrap();
                if i >= DUE {
                    r.activate(&o, 1, far).unwrap();
                }
            }
            clock.advance(6 * SEC);
            let mut left = k;
            while left > 0 {
                let step = left.min(256);
                assert_eq!(r.sweep(step, &unbounded).map_err(|e| e.error), Ok(step));
                left -= step;
            }
            std::mem::forget(r);
        }
    }
}
