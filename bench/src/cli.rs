//! Command line of `wkcore-bench`, parsed by hand (no dependency).

use std::fmt;
use std::time::Duration;

use crate::{Shape, Variant};

/// `--help` text.
pub const USAGE: &str = "\
wkcore-bench: admission enqueue throughput, wkcore beside a Mutex baseline and a raw floor

USAGE: cargo run --release -p wkcore-bench -- [OPTIONS]

OPTIONS:
  --seconds S        total time budget in seconds, split over the shapes (default 40)
  --json             print exactly one JSON object {\"results\":[...]} on stdout
  --producers LIST   producer counts of the Np1c shapes, e.g. 1,2,4,8,16 (default 1,2);
                     1t is always run
  --items N          items per trial (default 1048576)
  --variants LIST    only these variants, e.g. wkcore,mutex (default: all five)
  --coord            the coordination table instead (ledger claim / finalize by key, batch
                     finalize, 2 threads on different keys, anchor advance; wkcore beside a
                     mutex-and-HashMap equivalent and one CAS); takes --seconds and --json
  --owner            the owner registry table instead (begin+done by handle, 1 and 2 threads;
                     reserve+activate of 1M owners; sweep of 2560 due owners at 10^4/10^5/10^6
                     held; resident bytes per owner; wkcore beside upstream's algorithm under
                     one mutex and two uncontended atomics); takes --seconds and --json
  --tag              the delivery tag table instead (a hit by channel handle and by channel
                     key; 1 and 2 readers beside a writer of newer versions; the index's map:
                     papaya, dashmap, ArcSwap<HashMap> at 1 and 2 threads; a 100k-UID tag's
                     build, store and the cleanup of 100k channels; memory per cached UID;
                     wkcore beside upstream's manager under one mutex and a pointer-load
                     floor); takes --seconds and --json
  --help             this text

Reserved for later hot paths (exit 2 for now): --all

Shapes: 1t = one thread admits a run of 64 (single admits or one batch), then drains it;
Np1c = N producers spin on backpressure, one consumer drains batches in a loop.
Variants: wkcore, wkcore_batch64, mutex, mutex_batch64, arrayqueue_floor.
A trial is kept when every thread was on-CPU >= 95 % of its wall time; the median is over
kept trials (over all, marked *, when none was).";

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Total budget.
    pub budget: Duration,
    /// Print JSON instead of the table.
    pub json: bool,
    /// Shapes to measure (`1t` first).
    pub shapes: Vec<Shape>,
    /// Items per trial.
    pub items: u64,
    /// Variants to measure.
    pub variants: Vec<Variant>,
    /// Run the coordination table (`--coord`) instead of the admission one.
    pub coord: bool,
    /// Run the owner registry table (`--owner`) instead of the admission one.
    pub owner: bool,
    /// Run the delivery tag table (`--tag`) instead of the admission one.
    pub tag: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Duration::from_secs(40),
            json: false,
            shapes: Shape::DEFAULT.to_vec(),
            items: 1 << 20,
            variants: Variant::ALL.to_vec(),
            coord: false,
            owner: false,
            tag: false,
        }
    }
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Run the benchmark.
    Run(Options),
    /// Print [`USAGE`].
    Help,
}

/// Why the command line was refused; either way the binary exits with status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// A flag reserved for a hot path that is not benchmarked yet (`all`).
    NotAvailable(&'static str),
    /// Anything else wrong with the arguments.
    Usage(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::NotAvailable(path) => {
                write!(f, "not available yet: {path} arrives with a later slice")
            }
            CliError::Usage(msg) => write!(f, "{msg}\n\n{USAGE}"),
        }
    }
}

fn value(
    flag: &str,
    inline: Option<&str>,
    rest: &mut impl Iterator<Item = String>,
) -> Result<String, CliError> {
    match inline {
        Some(v) => Ok(v.to_owned()),
        None => rest
            .next()
            .ok_or_else(|| CliError::Usage(format!("{flag} needs a value"))),
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, CliError> {
    let mut opts = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v)),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--json" => opts.json = true,
            "--coord" => opts.coord = true,
            "--owner" => opts.owner = true,
            "--tag" => opts.tag = true,
            "--all" => return Err(CliError::NotAvailable("all")),
            "--seconds" => {
                let v = value(&flag, inline, &mut args)?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| {
                        CliError::Usage(format!("--seconds: not a positive number: {v}"))
                    })?;
                opts.budget = Duration::from_secs_f64(s);
            }
            "--items" => {
                let v = value(&flag, inline, &mut args)?;
                opts.items = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    CliError::Usage(format!("--items: not a positive integer: {v}"))
                })?;
            }
            "--variants" => {
                let v = value(&flag, inline, &mut args)?;
                opts.variants = v
                    .split(',')
                    .map(|name| {
                        Variant::from_name(name.trim()).ok_or_else(|| {
                            CliError::Usage(format!("--variants: unknown variant: {name}"))
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--producers" => {
                let v = value(&flag, inline, &mut args)?;
                let mut shapes = vec![Shape::OneThread];
                for part in v.split(',').map(str::trim) {
                    let n: usize = part.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        CliError::Usage(format!("--producers: not a positive integer: {part}"))
                    })?;
                    if !shapes.contains(&Shape::Producers(n)) {
                        shapes.push(Shape::Producers(n));
                    }
                }
                opts.shapes = shapes;
            }
            _ => return Err(CliError::Usage(format!("unknown argument: {arg}"))),
        }
    }
    Ok(Command::Run(opts))
}
