//! Runs delivery tag hits for instruction counting under valgrind: `scripts/instructions --tag`
//! runs it per variant at two hit counts, and the difference gives the instructions of one hit
//! (set-up cancels out).
//!
//! `cargo run --release -p wkcore-bench --example tag_instructions -- VARIANT HITS`
//! VARIANT: `wkcore_handle` (through a channel handle), `wkcore_key` (through the channel
//! index), `mutex` (upstream's manager under one mutex, by key) or `floor` (one pointer load).
//! Hits visit 256 cached channels in turn.

use std::hint::black_box;
use std::process::ExitCode;

use wkcore_bench::tag::HitSubjects;

const CHANNELS: usize = 256;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(variant), Some(hits)) = (
        args.first().cloned(),
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: tag_instructions wkcore_handle|wkcore_key|mutex|floor HITS");
        return ExitCode::from(2);
    };
    let subjects = HitSubjects::new(CHANNELS);
    let hit_count = match variant.as_str() {
        "wkcore_handle" => run(&subjects, hits, HitSubjects::hit_by_handle),
        "wkcore_key" => run(&subjects, hits, HitSubjects::hit_by_key),
        "mutex" => run(&subjects, hits, HitSubjects::hit_mutex),
        "floor" => run(&subjects, hits, HitSubjects::hit_floor),
        _ => {
            eprintln!("unknown variant {variant}");
            return ExitCode::from(2);
        }
    };
    if hit_count != hits {
        eprintln!("{variant}: {} of {hits} look-ups missed", hits - hit_count);
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `hits` calls of `hit` (a fn item: monomorphized, no indirect call), channels in turn; how
/// many hit.
fn run(subjects: &HitSubjects, hits: u64, hit: impl Fn(&HitSubjects, usize) -> bool) -> u64 {
    let mut c = 0;
    let mut hit_count = 0u64;
    for _ in 0..hits {
        hit_count += u64::from(hit(subjects, black_box(c)));
        c += 1;
        if c == CHANNELS {
            c = 0;
        }
    }
    hit_count
}
