//! Command line of `wkcore-bench`, parsed by hand (no dependency).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::{Shape, Variant};

/// `--help` text.
pub const USAGE: &str = "\
wkcore-bench: wkcore's hot paths beside a mutex reference (upstream's algorithm under one mutex)
and a raw floor

USAGE: cargo run --release -p wkcore-bench -- [OPTIONS]

With no table flag: a summary of all four systems in about a minute, one representative row
each (admission 1t single admit + drain, owner begin+done by handle, delivery tag hit by channel
handle, coordination ledger finalize by key), each beside its reference and its floor with the
ratio, then a legend. Table flags select the deeper runs instead; they combine, and run in the
order admission, owner, tag, coord.

OPTIONS:
  --seconds S        total time budget of the run in seconds (default 60): split evenly over the
                     summary's rows, or over the selected tables and then over each table's
                     rows; a row that must run 3 trials shrinks its trial size to fit
  --json             print exactly one JSON object on stdout (the summary's, or one holding
                     every selected table's keys: results, owner, tag, memory, coord)
  --plot FILE        also write the summary as an SVG bar chart to FILE (summary only)
  --admission        the admission table: enqueue throughput per shape (1t, Np1c) and variant,
                     and the targets
  --producers LIST   (--admission) producer counts of the Np1c shapes, e.g. 1,2,4,8,16
                     (default 1,2); 1t is always run
  --items N          (--admission) items per trial (default 1048576; fewer when the budget
                     cannot hold 3 rounds)
  --variants LIST    (--admission) only these variants, e.g. wkcore,mutex (default: all five)
  --owner            the owner registry table (begin+done by handle, 1 and 2 threads;
                     reserve+activate of 1M owners; sweep of 2560 due owners at 10^4/10^5/10^6
                     held; resident bytes per owner; wkcore beside upstream's algorithm under
                     one mutex and two uncontended atomics)
  --tag              the delivery tag table (a hit by channel handle and by channel key; 1 and 2
                     readers beside a writer of newer versions; the index's map: papaya,
                     dashmap, ArcSwap<HashMap> at 1 and 2 threads; a 100k-UID tag's build,
                     store and the cleanup of 100k channels; memory per cached UID; wkcore
                     beside upstream's manager under one mutex and a pointer-load floor)
  --coord            the coordination table (ledger claim / finalize by key, batch finalize,
                     2 threads on different keys, anchor advance; wkcore beside a
                     mutex-and-HashMap equivalent and one CAS)
  --all              every table: --admission --owner --tag --coord
  --coord-pg         the coordination contract on PostgreSQL (alone: no other table, no --json,
                     no --plot): decisions/s, p50/p99 latency and round trips per decision of an
                     exclusive trigger fire, a ledger claim, a finalize and a 1 000-key place, at
                     1, 4, 16 and 64 clients, on one contended key and on spread keys, beside a
                     transaction with SELECT ... FOR UPDATE then UPDATE and beside
                     pg_advisory_xact_lock around the check-then-act; prints the server settings
  --dsn DSN          (--coord-pg) the server to use (default: a throwaway cluster started with
                     scripts/pg and stopped after the run)
  --clients LIST     (--coord-pg) concurrent clients, e.g. 1,4 (default 1,4,16,64)
  --help             this text

Shapes: 1t = one thread admits a run of 64 (single admits or one batch), then drains it;
Np1c = N producers spin on backpressure, one consumer drains batches in a loop.
Variants: wkcore, wkcore_batch64, mutex, mutex_batch64, arrayqueue_floor.
A trial is kept when every thread was on-CPU >= 95 % of its wall time; the median is over
kept trials (over all, marked *, when none was). Ratio: wkcore / reference (< 1: faster).
Targets: docs/PERFORMANCE.md. An unknown flag or combination exits 2.";

/// A deeper table, selected by its flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Table {
    /// `--admission`: enqueue throughput per shape and variant.
    Admission,
    /// `--owner`: the owner registry.
    Owner,
    /// `--tag`: the delivery tags.
    Tag,
    /// `--coord`: the coordination ledgers and anchors.
    Coord,
}

impl Table {
    /// Every table, in the order they run.
    pub const ALL: [Table; 4] = [Table::Admission, Table::Owner, Table::Tag, Table::Coord];

    /// The flag that selects it.
    pub fn flag(self) -> &'static str {
        match self {
            Table::Admission => "--admission",
            Table::Owner => "--owner",
            Table::Tag => "--tag",
            Table::Coord => "--coord",
        }
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Total budget of the run.
    pub budget: Duration,
    /// Print JSON instead of the tables.
    pub json: bool,
    /// The selected tables, in [`Table::ALL`] order; empty: the summary.
    pub tables: Vec<Table>,
    /// (`--admission`) Shapes to measure (`1t` first).
    pub shapes: Vec<Shape>,
    /// (`--admission`) Items per trial.
    pub items: u64,
    /// (`--admission`) Variants to measure.
    pub variants: Vec<Variant>,
    /// Where to write the summary's SVG chart.
    pub plot: Option<PathBuf>,
    /// (`--coord-pg`) Run the PostgreSQL coordination benchmark instead of any table.
    pub coord_pg: bool,
    /// (`--coord-pg`) The server's DSN; `None`: a throwaway cluster.
    pub dsn: Option<String>,
    /// (`--coord-pg`) The concurrent client counts.
    pub clients: Vec<usize>,
}

impl Options {
    /// Whether this run is the summary (no table selected, no `--coord-pg`).
    pub fn summary(&self) -> bool {
        self.tables.is_empty() && !self.coord_pg
    }

    /// Whether `table` is selected.
    pub fn runs(&self, table: Table) -> bool {
        self.tables.contains(&table)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Duration::from_secs(60),
            json: false,
            tables: Vec::new(),
            shapes: Shape::DEFAULT.to_vec(),
            items: 1 << 20,
            variants: Variant::ALL.to_vec(),
            plot: None,
            coord_pg: false,
            dsn: None,
            clients: vec![1, 4, 16, 64],
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

/// Why the command line was refused; the binary prints it on one line and exits with status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// An argument that is not a flag, or a flag's bad value.
    Usage(String),
    /// Flags that do not go together.
    Combination(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(msg) | CliError::Combination(msg) => {
                write!(f, "wkcore-bench: {msg} (see --help)")
            }
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
    // The admission-only options given, to refuse them when that table is not selected.
    let mut admission_only: Vec<&'static str> = Vec::new();
    // The --coord-pg-only options given.
    let mut pg_only: Vec<&'static str> = Vec::new();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v)),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--json" => opts.json = true,
            "--admission" => opts.tables.push(Table::Admission),
            "--owner" => opts.tables.push(Table::Owner),
            "--tag" => opts.tables.push(Table::Tag),
            "--coord" => opts.tables.push(Table::Coord),
            "--all" => opts.tables.extend(Table::ALL),
            "--coord-pg" => opts.coord_pg = true,
            "--dsn" => {
                pg_only.push("--dsn");
                let v = value(&flag, inline, &mut args)?;
                if v.is_empty() || v.starts_with("--") {
                    return Err(CliError::Usage(format!("--dsn needs a DSN, got '{v}'")));
                }
                opts.dsn = Some(v);
            }
            "--clients" => {
                pg_only.push("--clients");
                let v = value(&flag, inline, &mut args)?;
                let mut clients = Vec::new();
                for part in v.split(',').map(str::trim) {
                    let n: usize = part
                        .parse()
                        .ok()
                        .filter(|&n| (1..=128).contains(&n))
                        .ok_or_else(|| {
                            CliError::Usage(format!("--clients: not an integer 1..=128: {part}"))
                        })?;
                    if !clients.contains(&n) {
                        clients.push(n);
                    }
                }
                opts.clients = clients;
            }
            "--plot" => {
                let v = value(&flag, inline, &mut args)?;
                if v.is_empty() || v.starts_with("--") {
                    return Err(CliError::Usage(format!(
                        "--plot needs a file name, got '{v}'"
                    )));
                }
                opts.plot = Some(PathBuf::from(v));
            }
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
                admission_only.push("--items");
                let v = value(&flag, inline, &mut args)?;
                opts.items = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    CliError::Usage(format!("--items: not a positive integer: {v}"))
                })?;
            }
            "--variants" => {
                admission_only.push("--variants");
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
                admission_only.push("--producers");
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
    opts.tables.sort();
    opts.tables.dedup();
    if let Some(flag) = admission_only.first() {
        if !opts.runs(Table::Admission) {
            return Err(CliError::Combination(format!(
                "{flag} applies to the admission table only: add --admission"
            )));
        }
    }
    if let Some(flag) = pg_only.first() {
        if !opts.coord_pg {
            return Err(CliError::Combination(format!(
                "{flag} applies to --coord-pg only: add --coord-pg"
            )));
        }
    }
    if opts.coord_pg {
        let other = match (opts.tables.first(), opts.json, &opts.plot) {
            (Some(t), _, _) => Some(t.flag()),
            (None, true, _) => Some("--json"),
            (None, false, Some(_)) => Some("--plot"),
            _ => None,
        };
        if let Some(other) = other {
            return Err(CliError::Combination(format!(
                "--coord-pg runs alone: it does not combine with {other}"
            )));
        }
    }
    if let (Some(_), Some(table)) = (&opts.plot, opts.tables.first()) {
        return Err(CliError::Combination(format!(
            "--plot draws the summary: it does not combine with {}",
            table.flag()
        )));
    }
    Ok(Command::Run(opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn coord_pg_takes_a_dsn_and_client_counts_and_runs_alone() {
        let Ok(Command::Run(o)) = parse(args("--coord-pg --dsn postgres://x/y --clients 1,4,4"))
        else {
            panic!("parsed")
        };
        assert!(o.coord_pg && !o.summary() && o.tables.is_empty());
        assert_eq!(o.dsn.as_deref(), Some("postgres://x/y"));
        assert_eq!(o.clients, [1, 4]);
        let Ok(Command::Run(o)) = parse(args("--coord-pg --seconds 2")) else {
            panic!("parsed")
        };
        assert_eq!(o.clients, [1, 4, 16, 64]);
        assert_eq!(o.dsn, None);
        let Ok(Command::Run(o)) = parse(args("")) else {
            panic!("parsed")
        };
        assert!(!o.coord_pg && o.summary(), "the default run is the summary");
        for (line, message) in [
            ("--dsn x", "--dsn applies to --coord-pg only"),
            ("--clients 2", "--clients applies to --coord-pg only"),
            ("--coord-pg --coord", "does not combine with --coord"),
            ("--coord-pg --json", "does not combine with --json"),
            ("--coord-pg --plot a.svg", "does not combine with --plot"),
            (
                "--coord-pg --clients 0",
                "--clients: not an integer 1..=128: 0",
            ),
            ("--coord-pg --dsn", "--dsn needs a value"),
        ] {
            let e = parse(args(line)).expect_err(line).to_string();
            assert!(e.contains(message), "{line}: {e}");
        }
    }
}
