//! The harness moves every item exactly once, in every variant and shape; the command line
//! parses, combines and refuses as `--help` says; the summary, its JSON and its chart have their
//! shape. No timing is asserted.

use std::time::Duration;

use wkcore_bench::cli::{self, CliError, Command, Table};
use wkcore_bench::{plot, report, run_trial, summarize, summary, tag, Shape, Variant};

#[test]
fn every_variant_and_shape_conserves_items() {
    for shape in [Shape::OneThread, Shape::Producers(1), Shape::Producers(2)] {
        for variant in Variant::ALL {
            // Not a multiple of 64 nor of 2: the last run, batch and producer quota are partial.
            for items in [1, 64, 5_001] {
                let t = run_trial(variant, shape, items);
                assert!(
                    t.conserved(),
                    "{variant} {shape} {items}: admitted {} drained {} sums {} {}",
                    t.admitted,
                    t.drained,
                    t.sum_admitted,
                    t.sum_drained
                );
                assert_eq!(t.threads.len(), shape.threads());
            }
        }
    }
}

#[test]
fn more_items_than_the_queue_holds_still_flow() {
    // 3x the 8192 limit through one producer: backpressure must be retried, not lost.
    for variant in Variant::ALL {
        let t = run_trial(variant, Shape::Producers(1), 3 * 8192 + 7);
        assert!(t.conserved(), "{variant}");
    }
}

#[test]
fn summary_and_json_have_one_row_per_cell() {
    let trials: Vec<_> = (0..3)
        .map(|_| run_trial(Variant::Wkcore, Shape::OneThread, 640))
        .collect();
    let cell = summarize(Shape::OneThread, Variant::Wkcore, &trials, 0.0);
    assert_eq!((cell.trials, cell.kept, cell.fallback), (3, 3, false));
    assert!(cell.conserved);
    // Nothing can be on-CPU more than 100 % of the time: everything falls back, flagged.
    let none = summarize(Shape::OneThread, Variant::Wkcore, &trials, 2.0);
    assert_eq!((none.kept, none.fallback), (0, true));
    let json = report::json(&[cell, none]);
    assert!(json.starts_with(
        "{\"results\":[{\"path\":\"enqueue\",\"shape\":\"1t\",\"variant\":\"wkcore\""
    ));
    assert_eq!(json.matches("\"ns_per_item\"").count(), 2);
}

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn run_opts(s: &str) -> cli::Options {
    match cli::parse(args(s)) {
        Ok(Command::Run(opts)) => opts,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn cli_parses_producers_and_the_admission_options() {
    let owner = run_opts("--owner --seconds 2");
    assert_eq!(owner.tables, [Table::Owner]);
    assert!(owner.runs(Table::Owner) && !owner.runs(Table::Coord) && !owner.summary());
    let opts = run_opts("--admission --producers 1,2,4,8,16 --seconds 5 --json");
    let names: Vec<String> = opts.shapes.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["1t", "1p1c", "2p1c", "4p1c", "8p1c", "16p1c"]);
    assert!(opts.json);
    assert_eq!(opts.budget.as_secs(), 5);
    let opts = run_opts("--variants wkcore,mutex --items 4096 --admission");
    assert_eq!(opts.variants, [Variant::Wkcore, Variant::Mutex]);
    assert_eq!(opts.items, 4096);
    assert!(matches!(
        cli::parse(args("--bogus")),
        Err(CliError::Usage(_))
    ));
    assert_eq!(cli::parse(args("--help")), Ok(Command::Help));
    assert_eq!(Shape::from_name("16p1c"), Some(Shape::Producers(16)));
}

#[test]
fn no_table_flag_is_the_summary_with_a_60_second_budget() {
    for line in ["", "--json", "--seconds 20", "--plot out.svg --json"] {
        let opts = run_opts(line);
        assert!(opts.summary() && opts.tables.is_empty(), "{line}");
    }
    assert_eq!(run_opts("").budget.as_secs(), 60);
    assert_eq!(
        run_opts("--plot=docs/img/summary.svg").plot.as_deref(),
        Some(std::path::Path::new("docs/img/summary.svg"))
    );
}

#[test]
fn table_flags_combine_in_a_fixed_order() {
    assert_eq!(
        run_opts("--coord --owner").tables,
        [Table::Owner, Table::Coord]
    );
    assert_eq!(
        run_opts("--owner --coord").tables,
        [Table::Owner, Table::Coord]
    );
    assert_eq!(
        run_opts("--tag --admission --tag").tables,
        [Table::Admission, Table::Tag]
    );
    assert_eq!(run_opts("--all").tables, Table::ALL);
    assert_eq!(run_opts("--coord --all").tables, Table::ALL);
    // The admission options go with the admission table, alone or beside others.
    assert!(run_opts("--all --producers 1").runs(Table::Admission));
    assert!(run_opts("--owner --admission --items 1000").runs(Table::Owner));
}

#[test]
fn wrong_combinations_and_unknown_flags_are_one_line_errors() {
    let refused = [
        (
            "--producers 1,2",
            "--producers applies to the admission table only: add --admission",
        ),
        (
            "--owner --items 10",
            "--items applies to the admission table only: add --admission",
        ),
        (
            "--coord --variants wkcore",
            "--variants applies to the admission table only",
        ),
        (
            "--owner --plot x.svg",
            "--plot draws the summary: it does not combine with --owner",
        ),
        ("--bogus", "unknown argument: --bogus"),
        ("coord", "unknown argument: coord"),
        ("--seconds 0", "--seconds: not a positive number: 0"),
        ("--seconds", "--seconds needs a value"),
        ("--plot", "--plot needs a value"),
        (
            "--admission --variants nope",
            "--variants: unknown variant: nope",
        ),
    ];
    for (line, message) in refused {
        let err = cli::parse(args(line)).expect_err(line);
        let text = err.to_string();
        assert!(text.contains(message), "{line}: {text}");
        assert!(
            text.starts_with("wkcore-bench: ") && text.ends_with("(see --help)"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1, "{line}: {text}");
    }
    assert!(matches!(
        cli::parse(args("--tag --producers 2")),
        Err(CliError::Combination(_))
    ));
}

#[test]
fn usage_names_every_flag_and_reserves_none() {
    for flag in [
        "--seconds",
        "--json",
        "--plot",
        "--admission",
        "--producers",
        "--items",
        "--variants",
        "--owner",
        "--tag",
        "--coord",
        "--all",
        "--help",
    ] {
        assert!(cli::USAGE.contains(flag), "{flag}");
    }
    assert!(!cli::USAGE.contains("Reserved"));
}

#[test]
fn a_tiny_summary_has_one_row_per_system_a_legend_a_json_object_and_a_chart() {
    let rows = summary::run_scaled(Duration::from_millis(1), 2_000, 4, |_| {});
    let systems: Vec<&str> = rows.iter().map(|r| r.system).collect();
    assert_eq!(
        systems,
        ["admission", "owner", "delivery tags", "coordination"]
    );
    for r in &rows {
        for f in [r.wkcore, r.reference, r.floor] {
            assert!(f.ns_per_op.is_finite() && f.ns_per_op > 0.0, "{}", r.system);
            assert!(f.trials >= 3 && f.kept <= f.trials, "{}", r.system);
        }
        assert!(r.ratio().is_finite());
    }
    let table = summary::table(&rows);
    assert_eq!(table.lines().count(), 2 + rows.len());
    assert!(table.starts_with("| system | operation | wkcore ns/op | reference ns/op |"));
    for word in [
        "1t",
        "1p1c",
        "floor",
        "kept",
        "95 %",
        "ratio",
        "docs/PERFORMANCE.md",
    ] {
        assert!(summary::LEGEND.contains(word), "{word}");
    }
    let machine = wkcore_bench::machine::Machine::detect();
    let json = summary::json(
        &rows,
        &machine,
        Duration::from_secs(60),
        Duration::from_secs(1),
    );
    assert!(json.starts_with("{\"summary\":[{\"system\":\"admission\""));
    assert!(json.ends_with('}'));
    assert_eq!(json.matches("\"ratio\"").count(), 4);
    assert_eq!(json.matches("\"ns_per_op\"").count(), 12);
    let svg = plot::svg(&rows, "test").unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for name in [
        "admission",
        "owner",
        "delivery tags",
        "coordination",
        "wkcore",
        "reference",
    ] {
        assert!(svg.contains(name), "{name}");
    }
    // Three bars per system, beside the background and the legend's swatches.
    assert!(svg.matches("<rect").count() >= 12);
}

#[test]
fn owner_rows_fit_a_tiny_budget_and_name_their_size() {
    use wkcore_bench::owner::{self, OwnerOp, OwnerVariant};
    let scale = owner::Scale {
        sweep_sizes: vec![20_000],
        owners: 50_000,
        pairs: 100_000,
    };
    let rows = [
        (
            OwnerOp::BeginDone,
            1,
            vec![OwnerVariant::Wkcore, OwnerVariant::Mutex],
        ),
        (OwnerOp::SweepVisit(20_000), 1, vec![OwnerVariant::Wkcore]),
    ];
    let cells = owner::run_rows(&rows, Duration::from_millis(1), &scale, |_| {});
    assert_eq!(cells.len(), 3);
    // A millisecond cannot hold three trials at these sizes: each row ran at its smallest.
    assert!(cells.iter().all(|c| c.trials == 3));
    assert_eq!(cells[0].size, 1_000);
    assert_eq!(cells[2].op, OwnerOp::SweepVisit(5_120));
    assert!(owner::table(&cells).contains("sweep_visit@5120"));
}

#[test]
fn tag_parses_and_a_tiny_run_fills_every_cell() {
    let opts = run_opts("--tag --seconds 0.001 --json");
    assert!(opts.runs(Table::Tag) && !opts.runs(Table::Owner) && opts.json);
    let scale = tag::Scale {
        hits: 2_000,
        channels: 8,
        big_uids: 300,
        cleanup_channels: 5_000,
        map_keys: 16,
        memory_uids: 1_000,
    };
    let cells = tag::run(opts.budget.min(Duration::from_millis(1)), &scale, |_| {});
    let expected: usize = tag::plan(&scale).iter().map(|(_, _, v)| v.len()).sum();
    assert_eq!(cells.len(), expected);
    assert!(cells
        .iter()
        .all(|c| c.ns_per_op.is_finite() && c.ns_per_op > 0.0 && c.trials >= 3));
    // The main table has a header, a line per row but the map's two, and the scaling line.
    assert_eq!(
        tag::table(&cells, &scale).lines().count(),
        tag::plan(&scale).len() - 2 + 2
    );
    assert_eq!(tag::map_table(&cells).lines().count(), 4);
    let memory = tag::memory(scale.memory_uids);
    assert_eq!(memory.compact_heap, 15.0);
    let json = tag::json(&cells, &memory);
    assert!(json.starts_with("{\"tag\":[{\"op\":\"hit_by_handle\""));
    assert_eq!(json.matches("\"ns_per_op\"").count(), expected);
}
