//! Runs rounds of the coordination ledger's steps for instruction counting under valgrind:
//! `scripts/instructions --coord` runs it per variant and depth, and the differences between
//! depths give the instructions of one claim and of one finalization by key (placing and
//! reclaiming cancel out).
//!
//! `cargo run --release -p wkcore-bench --example coord_instructions -- VARIANT DEPTH ROUNDS`
//! VARIANT: `wkcore` or `mutex`; DEPTH: `place` (place, then reclaim), `claim` (also claim each
//! record), `finalize` (also finalize each); each round handles 4096 records.

use std::hint::black_box;
use std::process::ExitCode;

use wkcore::coord::{ByteKey, Ledger, LedgerConfig, LedgerKind, NewRecord, Outcome};
use wkcore::metrics::Registry;
use wkcore_references::coord::MutexLedger;

const RECORDS: usize = 4096;

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Depth {
    Place,
    Claim,
    Finalize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let depth = match args.get(1).map(String::as_str) {
        Some("place") => Some(Depth::Place),
        Some("claim") => Some(Depth::Claim),
        Some("finalize") => Some(Depth::Finalize),
        _ => None,
    };
    let (Some(variant), Some(depth), Some(rounds)) = (
        args.first().cloned(),
        depth,
        args.get(2).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: coord_instructions wkcore|mutex place|claim|finalize ROUNDS");
        return ExitCode::from(2);
    };
    let keys: Vec<ByteKey> = (0..RECORDS)
        .map(|i| ByteKey::new(format!("receipt:{i:08}").as_bytes()).unwrap())
        .collect();
    let config = LedgerConfig {
        capacity: RECORDS,
        retention: 0,
        kind: LedgerKind::Claim,
    };
    let record = NewRecord {
        id: 1,
        runner: 0,
        deadline: 3,
    };
    match variant.as_str() {
        "wkcore" => {
            let registry = Registry::new();
            let l = Ledger::with_metrics(config, &registry).unwrap();
            for _ in 0..rounds {
                for k in &keys {
                    l.insert(k, record, 0).unwrap();
                }
                if depth >= Depth::Claim {
                    for k in &keys {
                        black_box(l.claim(black_box(k), 1, 2, 1, 1).is_ok());
                    }
                }
                if depth >= Depth::Finalize {
                    for k in &keys {
                        black_box(l.finalize(black_box(k), Outcome::Succeeded, 0, 2).is_ok());
                    }
                }
                l.reconcile(3, RECORDS);
                l.reclaim(3, RECORDS);
            }
        }
        "mutex" => {
            let l = MutexLedger::new(config).unwrap();
            for _ in 0..rounds {
                for k in &keys {
                    l.insert(k, record, 0).unwrap();
                }
                if depth >= Depth::Claim {
                    for k in &keys {
                        black_box(l.claim(black_box(k), 1, 2, 1, 1).is_ok());
                    }
                }
                if depth >= Depth::Finalize {
                    for k in &keys {
                        black_box(l.finalize(black_box(k), Outcome::Succeeded, 0, 2).is_ok());
                    }
                }
                l.reconcile_all(3);
                l.reclaim_all(3);
            }
        }
        _ => {
            eprintln!("coord_instructions: unknown variant {variant}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
