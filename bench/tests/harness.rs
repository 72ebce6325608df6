//! The harness moves every item exactly once, in every variant and shape. No timing is asserted.

use std::time::Duration;

use wkcore_bench::cli::{self, CliError, Command};
use wkcore_bench::{report, run_trial, summarize, tag, Shape, Variant};

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

#[test]
fn cli_reserves_later_paths_and_parses_producers() {
    let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let Ok(Command::Run(owner)) = cli::parse(args("--owner --seconds 2")) else {
        panic!("--owner parse failed");
    };
    assert!(owner.owner && !owner.coord && !owner.tag);
    let err = cli::parse(args("--all")).unwrap_err();
    assert_eq!(err, CliError::NotAvailable("all"));
    assert_eq!(
        err.to_string(),
        "not available yet: all arrives with a later slice"
    );
    let Ok(Command::Run(opts)) = cli::parse(args("--producers 1,2,4,8,16 --seconds 5 --json"))
    else {
        panic!("parse failed");
    };
    let names: Vec<String> = opts.shapes.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["1t", "1p1c", "2p1c", "4p1c", "8p1c", "16p1c"]);
    assert!(opts.json);
    assert_eq!(opts.budget.as_secs(), 5);
    assert!(matches!(
        cli::parse(args("--bogus")),
        Err(CliError::Usage(_))
    ));
    assert_eq!(cli::parse(args("--help")), Ok(Command::Help));
    assert_eq!(Shape::from_name("16p1c"), Some(Shape::Producers(16)));
}

#[test]
fn tag_parses_and_a_tiny_run_fills_every_cell() {
    let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let Ok(Command::Run(opts)) = cli::parse(args("--tag --seconds 0.001 --json")) else {
        panic!("--tag parse failed");
    };
    assert!(opts.tag && !opts.owner && !opts.coord && opts.json);
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
