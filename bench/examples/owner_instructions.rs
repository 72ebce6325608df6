//! Runs begin+done pairs on one active owner for instruction counting under valgrind:
//! `scripts/instructions --owner` runs it per variant at two pair counts, and the difference
//! gives the instructions of one begin+done (set-up cancels out).
//!
//! `cargo run --release -p wkcore-bench --example owner_instructions -- VARIANT PAIRS`
//! VARIANT: `wkcore` (through the handle), `mutex` (upstream's algorithm under one mutex, by
//! identity) or `floor` (two uncontended atomic RMWs).

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
        eprintln!("usage: owner_instructions wkcore|mutex|floor PAIRS");
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
