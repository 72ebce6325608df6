//! `wkcore-bench`: self-contained admission enqueue benchmark (no criterion), the README's main
//! job. `cargo run --release -p wkcore-bench -- --help` for the flags.
//!
//! Prints the machine, a table of ns/item per shape and variant with ratios to the mutex
//! baseline and to the `ArrayQueue` floor, and the targets; or, with `--json`, exactly
//! one JSON object on stdout (progress and machine go to stderr).

use std::process::ExitCode;

use wkcore_bench::cli::{self, Command};
use wkcore_bench::machine::Machine;
use wkcore_bench::{report, run_plan, Plan};

fn main() -> ExitCode {
    let opts = match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Run(opts)) => opts,
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; numbers are meaningless (use --release)");
    }
    let machine = Machine::detect();
    let mut plan = Plan::new(opts.shapes, opts.budget);
    plan.items_per_trial = opts.items;
    plan.variants = opts.variants;
    eprintln!(
        "wkcore-bench: {machine}; budget {:.0} s over {} shapes, {} items a trial",
        plan.budget.as_secs_f64(),
        plan.shapes.len(),
        plan.items_per_trial
    );
    let cells = run_plan(&plan, |line| eprintln!("  {line}"));
    let lost = cells.iter().any(|c| !c.conserved);
    if opts.json {
        println!("{}", report::json(&cells));
    } else {
        println!("path: {}", report::PATH);
        print!("{}", report::table(&cells, &machine));
        if let Some(load) = Machine::detect().loadavg {
            println!("load average after the run: {load}");
        }
        println!();
        print!("{}", report::targets_table(&report::targets(&cells)));
    }
    if lost {
        eprintln!("error: some trial lost or duplicated items");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
