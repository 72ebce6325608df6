//! Runs one `1t` trial of one variant, for instruction counting under valgrind:
//! `scripts/instructions` runs it at two item counts under callgrind and reports the difference
//! per item, which cancels start-up and set-up costs. Instruction counts do not depend on the
//! machine's load or clock, so they compare across runs where times do not.
//!
//! `cargo run --release -p wkcore-bench --example instructions -- VARIANT ITEMS`

use std::process::ExitCode;

use wkcore_bench::{run_trial, Shape, Variant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(variant), Some(items)) = (
        args.first().and_then(|v| Variant::from_name(v)),
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        eprintln!(
            "usage: instructions VARIANT ITEMS   (VARIANT: wkcore, wkcore_batch64, mutex, …)"
        );
        return ExitCode::from(2);
    };
    let result = run_trial(variant, Shape::OneThread, items);
    if result.admitted != items || result.drained != items {
        eprintln!(
            "instructions: {} admitted, {} drained of {items}",
            result.admitted, result.drained
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
