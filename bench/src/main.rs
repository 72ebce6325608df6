//! `wkcore-bench`: self-contained admission enqueue benchmark (no criterion), the README's main
//! job. `cargo run --release -p wkcore-bench -- --help` for the flags.
//!
//! Prints the machine, a table of ns/item per shape and variant with ratios to the mutex
//! baseline and to the `ArrayQueue` floor, and the targets; or, with `--json`, exactly
//! one JSON object on stdout (progress and machine go to stderr).

use std::process::ExitCode;

use wkcore_bench::cli::{self, Command};
use wkcore_bench::machine::Machine;
use wkcore_bench::{
    coord as coord_bench, owner as owner_bench, report, run_plan, tag as tag_bench, Plan,
};

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
    if opts.coord {
        return coord(&opts, &machine);
    }
    if opts.owner {
        return owner(&opts, &machine);
    }
    if opts.tag {
        return tag(&opts, &machine);
    }
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

/// `--coord`: the coordination table (and its targets), or its JSON object.
fn coord(opts: &cli::Options, machine: &Machine) -> ExitCode {
    eprintln!(
        "wkcore-bench --coord: {machine}; budget {:.0} s over {} rows",
        opts.budget.as_secs_f64(),
        coord_bench::plan().len()
    );
    let cells = coord_bench::run(opts.budget, |line| eprintln!("  {line}"));
    if opts.json {
        println!("{}", coord_bench::json(&cells));
        return ExitCode::SUCCESS;
    }
    println!("path: coordination ledgers and anchors (ns per operation, median of kept trials)");
    println!("machine: {machine}");
    print!("{}", coord_bench::table(&cells));
    if let Some(load) = Machine::detect().loadavg {
        println!("load average after the run: {load}");
    }
    println!();
    for (target, measured, met) in coord_bench::targets(&cells) {
        println!(
            "{:<50} {:>10}  {}",
            target,
            measured,
            if met { "met" } else { "NOT met" }
        );
    }
    ExitCode::SUCCESS
}

/// `--owner`: the owner registry table (and its targets), or its JSON object.
fn owner(opts: &cli::Options, machine: &Machine) -> ExitCode {
    let scale = owner_bench::Scale::default();
    eprintln!(
        "wkcore-bench --owner: {machine}; budget {:.0} s over {} rows",
        opts.budget.as_secs_f64(),
        owner_bench::plan(&scale.sweep_sizes).len()
    );
    let cells = owner_bench::run(opts.budget, &scale, |line| eprintln!("  {line}"));
    let resident = owner_bench::resident_bytes_per_owner(scale.owners);
    if opts.json {
        println!("{}", owner_bench::json(&cells));
        return ExitCode::SUCCESS;
    }
    println!("path: MQTT owner registry (ns per operation, median of kept trials)");
    println!("machine: {machine}");
    print!("{}", owner_bench::table(&cells, &scale.sweep_sizes));
    match resident {
        Some(b) => println!(
            "resident bytes per held owner ({} owners): {b:.0}",
            scale.owners
        ),
        None => println!("resident bytes per held owner: not measurable here"),
    }
    if let Some(load) = Machine::detect().loadavg {
        println!("load average after the run: {load}");
    }
    println!();
    for (target, measured, met) in owner_bench::targets(&cells) {
        println!(
            "{:<50} {:>10}  {}",
            target,
            measured,
            if met { "met" } else { "NOT met" }
        );
    }
    ExitCode::SUCCESS
}

/// `--tag`: the delivery tag tables (main, map, memory), or their JSON object.
fn tag(opts: &cli::Options, machine: &Machine) -> ExitCode {
    let scale = tag_bench::Scale::default();
    eprintln!(
        "wkcore-bench --tag: {machine}; budget {:.0} s over {} rows",
        opts.budget.as_secs_f64(),
        tag_bench::plan(&scale).len()
    );
    // First, while the heap holds nothing freed that the UIDs could reuse unseen.
    let memory = tag_bench::memory(scale.memory_uids);
    let cells = tag_bench::run(opts.budget, &scale, |line| eprintln!("  {line}"));
    if opts.json {
        println!("{}", tag_bench::json(&cells, &memory));
        return ExitCode::SUCCESS;
    }
    println!("path: delivery tags (ns per operation, median of kept trials)");
    println!("machine: {machine}");
    print!("{}", tag_bench::table(&cells, &scale));
    println!();
    println!("the channel index's map, look-ups by key (read only):");
    print!("{}", tag_bench::map_table(&cells));
    println!();
    print!("{}", tag_bench::memory_table(&memory));
    println!(
        "allocations per hit: `cargo bench -p wkcore-bench --bench tag` counts them (counting allocator)"
    );
    if let Some(load) = Machine::detect().loadavg {
        println!("load average after the run: {load}");
    }
    ExitCode::SUCCESS
}
