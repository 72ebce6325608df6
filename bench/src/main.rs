//! `wkcore-bench`: self-contained benchmarks (no criterion), the README's main job.
//! `cargo run --release -p wkcore-bench -- --help` for the flags.
//!
//! With no table flag: the summary, one representative row per system beside its reference
//! and its floor, then a legend ([`wkcore_bench::summary`]); `--plot FILE` also writes it as an
//! SVG chart. With `--admission`, `--owner`, `--tag`, `--coord` (or `--all`): those tables, in
//! that order, within one `--seconds` budget. With `--coord-pg` (alone): the coordination
//! contract on PostgreSQL beside `FOR UPDATE` and advisory-lock transactions ([`coordpg`]).
//! Progress and the machine go to stderr; with `--json`, exactly one JSON object goes to stdout.

mod coordpg;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use wkcore_bench::cli::{self, Command, Table};
use wkcore_bench::machine::Machine;
use wkcore_bench::{
    coord as coord_bench, owner as owner_bench, plot, report, run_plan, summary, tag as tag_bench,
    Plan,
};

/// What one table printed: its text, or its JSON object; and whether its checks held.
struct Output {
    text: String,
    ok: bool,
}

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
    if opts.coord_pg {
        return coordpg::main(&opts, &machine);
    }
    if opts.summary() {
        return run_summary(&opts, &machine);
    }
    let start = Instant::now();
    // Before anything else runs, while the heap holds nothing freed that the UIDs could reuse
    // unseen (the resident-growth figures).
    let tag_memory = opts
        .runs(Table::Tag)
        .then(|| tag_bench::memory(tag_bench::Scale::default().memory_uids));
    let mut outputs = Vec::new();
    for (i, &table) in opts.tables.iter().enumerate() {
        // An even share of what is left, so that one table's overrun comes out of the others'.
        let share =
            wkcore_bench::budget::share(opts.budget, start.elapsed(), opts.tables.len() - i);
        outputs.push(match table {
            Table::Admission => admission(&opts, share, &machine),
            Table::Owner => owner(&opts, share, &machine),
            Table::Tag => tag(
                &opts,
                share,
                &machine,
                tag_memory.as_ref().expect("measured"),
            ),
            Table::Coord => coord(&opts, share, &machine),
        });
    }
    eprintln!(
        "wkcore-bench: {} table(s) in {:.1} s (budget {:.0} s)",
        outputs.len(),
        start.elapsed().as_secs_f64(),
        opts.budget.as_secs_f64()
    );
    if opts.json {
        // One object holding every table's keys.
        let inner: Vec<&str> = outputs
            .iter()
            .map(|o| {
                let t = o.text.trim();
                &t[1..t.len() - 1]
            })
            .collect();
        println!("{{{}}}", inner.join(","));
    } else {
        let texts: Vec<&str> = outputs.iter().map(|o| o.text.as_str()).collect();
        print!("{}", texts.join("\n"));
        if let Some(load) = Machine::detect().loadavg {
            println!("load average after the run: {load}");
        }
    }
    if outputs.iter().all(|o| o.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// No table flag: the four systems' representative rows, the legend, and `--plot`'s chart.
fn run_summary(opts: &cli::Options, machine: &Machine) -> ExitCode {
    eprintln!(
        "wkcore-bench: {machine}; summary of {} systems, budget {:.0} s",
        summary::ROWS.len(),
        opts.budget.as_secs_f64()
    );
    let start = Instant::now();
    let rows = summary::run(opts.budget, |line| eprintln!("  {line}"));
    let wall = start.elapsed();
    if let Some(path) = &opts.plot {
        let caption = format!(
            "{}, {} cpus, {:.0} s run",
            machine.model,
            machine.cpus,
            wall.as_secs_f64()
        );
        let written = plot::svg(&rows, &caption)
            .and_then(|svg| std::fs::write(path, svg).map_err(|e| e.to_string()));
        match written {
            Ok(()) => eprintln!("wkcore-bench: chart written to {}", path.display()),
            Err(e) => {
                eprintln!("wkcore-bench: --plot {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if opts.json {
        println!("{}", summary::json(&rows, machine, opts.budget, wall));
        return ExitCode::SUCCESS;
    }
    println!("wkcore summary: ns per operation, median of kept trials; ratio = wkcore / reference");
    println!("machine: {machine}");
    println!();
    print!("{}", summary::table(&rows));
    println!();
    println!("{}", summary::LEGEND);
    println!(
        "run: {:.1} s (budget {:.0} s); load average after the run: {}",
        wall.as_secs_f64(),
        opts.budget.as_secs_f64(),
        Machine::detect().loadavg.as_deref().unwrap_or("unknown")
    );
    ExitCode::SUCCESS
}

/// The targets of a table, one line each.
fn target_lines(targets: Vec<(String, String, bool)>) -> String {
    targets
        .into_iter()
        .map(|(target, measured, met)| {
            format!(
                "{:<50} {:>10}  {}\n",
                target,
                measured,
                if met { "met" } else { "NOT met" }
            )
        })
        .collect()
}

/// `--admission`: the enqueue table (and its targets), or its JSON object.
fn admission(opts: &cli::Options, budget: Duration, machine: &Machine) -> Output {
    let mut plan = Plan::new(opts.shapes.clone(), budget);
    plan.items_per_trial = opts.items;
    plan.variants = opts.variants.clone();
    eprintln!(
        "wkcore-bench --admission: {machine}; budget {:.0} s over {} shapes, up to {} items a trial",
        plan.budget.as_secs_f64(),
        plan.shapes.len(),
        plan.items_per_trial
    );
    let cells = run_plan(&plan, |line| eprintln!("  {line}"));
    let ok = cells.iter().all(|c| c.conserved);
    if !ok {
        eprintln!("error: some trial lost or duplicated items");
    }
    if opts.json {
        return Output {
            text: report::json(&cells),
            ok,
        };
    }
    let text = format!(
        "path: {}\n{}\n{}",
        report::PATH,
        report::table(&cells, machine),
        report::targets_table(&report::targets(&cells))
    );
    Output { text, ok }
}

/// `--coord`: the coordination table (and its targets), or its JSON object.
fn coord(opts: &cli::Options, budget: Duration, machine: &Machine) -> Output {
    eprintln!(
        "wkcore-bench --coord: {machine}; budget {:.0} s over {} rows",
        budget.as_secs_f64(),
        coord_bench::plan().len()
    );
    let cells = coord_bench::run(budget, |line| eprintln!("  {line}"));
    if opts.json {
        return Output {
            text: coord_bench::json(&cells),
            ok: true,
        };
    }
    let text = format!(
        "path: coordination ledgers and anchors (ns per operation, median of kept trials)\n\
         machine: {machine}\n{}\n{}",
        coord_bench::table(&cells),
        target_lines(coord_bench::targets(&cells))
    );
    Output { text, ok: true }
}

/// `--owner`: the owner registry table (and its targets), or its JSON object.
fn owner(opts: &cli::Options, budget: Duration, machine: &Machine) -> Output {
    let scale = owner_bench::Scale::default();
    eprintln!(
        "wkcore-bench --owner: {machine}; budget {:.0} s over {} rows",
        budget.as_secs_f64(),
        owner_bench::plan(&scale.sweep_sizes).len()
    );
    // First, while the registry's heap is fresh (freed trials would be reused unseen); its time
    // comes out of the table's budget: a million owners at 60 s, fewer in a shorter one.
    let measure = Instant::now();
    let owners = ((scale.owners as f64 * (budget.as_secs_f64() / 60.0).min(1.0)) as usize)
        .clamp(scale.owners.min(50_000), scale.owners);
    let resident = (!opts.json)
        .then(|| owner_bench::resident_bytes_per_owner(owners))
        .flatten();
    let budget = budget.saturating_sub(measure.elapsed());
    let cells = owner_bench::run(budget, &scale, |line| eprintln!("  {line}"));
    if opts.json {
        return Output {
            text: owner_bench::json(&cells),
            ok: true,
        };
    }
    let resident = match resident {
        Some(b) => format!("resident bytes per held owner ({owners} owners): {b:.0}"),
        None => "resident bytes per held owner: not measurable here".into(),
    };
    let text = format!(
        "path: MQTT owner registry (ns per operation, median of kept trials)\n\
         machine: {machine}\n{}{resident}\n\n{}",
        owner_bench::table(&cells),
        target_lines(owner_bench::targets(&cells))
    );
    Output { text, ok: true }
}

/// `--tag`: the delivery tag tables (main, map, memory), or their JSON object.
fn tag(
    opts: &cli::Options,
    budget: Duration,
    machine: &Machine,
    memory: &tag_bench::Memory,
) -> Output {
    let scale = tag_bench::Scale::default();
    eprintln!(
        "wkcore-bench --tag: {machine}; budget {:.0} s over {} rows",
        budget.as_secs_f64(),
        tag_bench::plan(&scale).len()
    );
    let cells = tag_bench::run(budget, &scale, |line| eprintln!("  {line}"));
    if opts.json {
        return Output {
            text: tag_bench::json(&cells, memory),
            ok: true,
        };
    }
    let text = format!(
        "path: delivery tags (ns per operation, median of kept trials)\nmachine: {machine}\n{}\n\
         the channel index's map, look-ups by key (read only):\n{}\n{}\
         allocations per hit: `cargo bench -p wkcore-bench --bench tag` counts them (counting allocator)\n",
        tag_bench::table(&cells, &scale),
        tag_bench::map_table(&cells),
        tag_bench::memory_table(memory)
    );
    Output { text, ok: true }
}
