//! `--coord-pg`: the coordination contract on PostgreSQL (the `wkcore-coordpg` crate) beside the
//! two ways hosts make the same decisions without it, in the same run on the same server:
//!
//! - `wkcore-coordpg`: one conditional statement per decision (the library's SQL).
//! - `for-update`: a transaction: `SELECT … FOR UPDATE` of the row, the check in the host, then
//!   the `UPDATE` (or `INSERT` of the rows found missing), then `COMMIT`.
//! - `advisory`: a transaction: `pg_advisory_xact_lock` on the key (the batch's scope for a
//!   place), a plain `SELECT`, the check in the host, the write, `COMMIT`.
//!
//! Four patterns (an exclusive trigger fire, a ledger claim, a finalization, a place of 1 000
//! keys), each on one contended key (every client on the same key: one wins, the others lose,
//! which is the point) and on spread keys (each client its own keys), at each client count
//! (tasks, one connection each). Per cell: decisions per second, p50 and p99 latency of one
//! decision (a place of 1 000 keys is one decision of 1 000 keys), and round trips per
//! decision (statements sent: the library's counted by its store, the baselines' by the client).
//! A benchmark, not a test: numbers depend on the machine and the server's settings, printed
//! with the table.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls, Statement};
use wkcore::coord::{LedgerConfig, LedgerKind};
use wkcore_bench::cli;
use wkcore_bench::machine::Machine;
use wkcore_coordpg::contract::{LedgerStore, Outcome, TriggerStore};
use wkcore_coordpg::pg::{Options as PgOptions, PgLedger, PgTriggers, Store};

/// The batch of the place pattern.
const PLACE_KEYS: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pattern {
    Trigger,
    Claim,
    Finalize,
    Place,
}

impl Pattern {
    const ALL: [Pattern; 4] = [
        Pattern::Trigger,
        Pattern::Claim,
        Pattern::Finalize,
        Pattern::Place,
    ];

    fn title(self) -> &'static str {
        match self {
            Pattern::Trigger => "exclusive trigger fire (then its finish, when it won)",
            Pattern::Claim => "ledger claim (placed record: placeholder -> request id)",
            Pattern::Finalize => "ledger finalize (pending-only; a duplicate is audited)",
            Pattern::Place => "ledger place of 1 000 keys (one decision per batch)",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Library,
    ForUpdate,
    Advisory,
}

impl Way {
    const ALL: [Way; 3] = [Way::Library, Way::ForUpdate, Way::Advisory];

    fn name(self) -> &'static str {
        match self {
            Way::Library => "wkcore-coordpg",
            Way::ForUpdate => "for-update",
            Way::Advisory => "advisory",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Contended,
    Spread,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Contended => "contended",
            Layout::Spread => "spread",
        }
    }
}

/// What one cell measured.
struct Cell {
    pattern: Pattern,
    layout: Layout,
    clients: usize,
    way: Way,
    decisions: u64,
    wall: Duration,
    p50: Duration,
    p99: Duration,
    trips: f64,
    won: u64,
}

/// A cluster started for the run, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    script: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn start_cluster() -> Result<(Cluster, String), String> {
    let root = repo_root();
    let base = root.join("target").join("pg");
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    let dir = base.join(format!("bench.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let script = root.join("scripts").join("pg");
    let out = Command::new(&script)
        .arg("start")
        .arg(&dir)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("scripts/pg start: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!("scripts/pg start failed ({})", out.status));
    }
    let dsn = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((Cluster { dir, script }, dsn))
}

/// `--coord-pg`: runs the benchmark and prints its tables.
pub(crate) fn main(opts: &cli::Options, machine: &Machine) -> ExitCode {
    let (cluster, dsn) = match &opts.dsn {
        Some(d) => (None, d.clone()),
        None => match start_cluster() {
            Ok((c, d)) => (Some(c), d),
            Err(e) => {
                eprintln!("wkcore-bench --coord-pg: no PostgreSQL: {e} (give --dsn DSN)");
                return ExitCode::FAILURE;
            }
        },
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wkcore-bench --coord-pg: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(run(opts, &dsn, machine));
    drop(rt);
    drop(cluster);
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wkcore-bench --coord-pg: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn connect(dsn: &str) -> Result<Client, String> {
    let (client, conn) = tokio_postgres::connect(dsn, NoTls)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

async fn settings(c: &Client) -> Result<String, String> {
    let mut out = Vec::new();
    for name in [
        "server_version",
        "fsync",
        "synchronous_commit",
        "full_page_writes",
        "shared_buffers",
        "max_connections",
    ] {
        let row = c
            .query_one(&format!("SHOW {name}"), &[])
            .await
            .map_err(|e| format!("SHOW {name}: {e}"))?;
        out.push(format!("{name}={}", row.get::<_, String>(0)));
    }
    Ok(out.join(" "))
}

async fn run(opts: &cli::Options, dsn: &str, machine: &Machine) -> Result<String, String> {
    let admin = connect(dsn).await?;
    admin
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS wkbench_row (scope text NOT NULL, key bytea NOT NULL, \
             state smallint NOT NULL, id bigint NOT NULL, a bigint NOT NULL, b bigint NOT NULL, \
             PRIMARY KEY (scope, key))",
        )
        .await
        .map_err(|e| format!("create wkbench_row: {e}"))?;
    let server = settings(&admin).await?;
    let max_clients = opts.clients.iter().copied().max().unwrap_or(1);
    let store = Store::open(
        dsn,
        PgOptions {
            pool_size: max_clients,
            ..PgOptions::default()
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    let cells_n = Pattern::ALL.len() * 2 * opts.clients.len() * Way::ALL.len();
    let per_cell = opts.budget.div_f64(cells_n as f64);
    eprintln!(
        "wkcore-bench --coord-pg: {machine}; {cells_n} cells of {:.2} s (setup not counted); \
         server: {server}",
        per_cell.as_secs_f64()
    );
    let run_id = format!("{:x}", wkcore_bench_run_id());
    let mut cells = Vec::new();
    let mut n = 0;
    for pattern in Pattern::ALL {
        for layout in [Layout::Contended, Layout::Spread] {
            for &clients in &opts.clients {
                for way in Way::ALL {
                    n += 1;
                    let scope = format!("b{run_id}-{n}");
                    let cell =
                        cell(&store, dsn, &scope, pattern, layout, clients, way, per_cell).await?;
                    eprintln!(
                        "  {:<9} {:<9} {:>3} clients {:<15} {:>10.0} decisions/s",
                        format!("{pattern:?}").to_lowercase(),
                        layout.name(),
                        clients,
                        way.name(),
                        cell.decisions as f64 / cell.wall.as_secs_f64().max(1e-9)
                    );
                    cells.push(cell);
                }
            }
        }
    }
    // The rows are the run's own: leave the database as it was found (the library's rows are
    // left to the ledgers' retention in a real deployment; here they are throwaway).
    let _ = admin
        .execute(
            "DELETE FROM wkbench_row WHERE scope LIKE $1",
            &[&format!("b{run_id}-%")],
        )
        .await;
    Ok(render(&cells, machine, &server))
}

fn wkcore_bench_run_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        & 0xffff_ffff
}

fn render(cells: &[Cell], machine: &Machine, server: &str) -> String {
    let mut s = String::new();
    s += "path: the coordination contract on PostgreSQL (wkcore-coordpg) beside a FOR UPDATE \
          transaction and an advisory-lock transaction\n";
    s += &format!("machine: {machine}\nserver: {server}\n");
    s += "decisions/s: decisions of all clients over the cell's wall time; p50/p99: one \
          decision's latency; trips: statements sent per decision; won: decisions that won\n";
    for pattern in Pattern::ALL {
        s += &format!("\n{}\n", pattern.title());
        s += &format!(
            "{:<10} {:>7}  {:<15} {:>12} {:>10} {:>10} {:>6} {:>8}\n",
            "keys", "clients", "way", "decisions/s", "p50 us", "p99 us", "trips", "won"
        );
        for c in cells.iter().filter(|c| c.pattern == pattern) {
            s += &format!(
                "{:<10} {:>7}  {:<15} {:>12.0} {:>10.1} {:>10.1} {:>6.2} {:>8}\n",
                c.layout.name(),
                c.clients,
                c.way.name(),
                c.decisions as f64 / c.wall.as_secs_f64().max(1e-9),
                c.p50.as_secs_f64() * 1e6,
                c.p99.as_secs_f64() * 1e6,
                c.trips,
                c.won
            );
        }
    }
    s
}

/// The keys of one client (`c`) in a cell: the contended key, or the client's own.
fn key_of(layout: Layout, c: usize, i: usize) -> Vec<u8> {
    match layout {
        Layout::Contended => b"k".to_vec(),
        Layout::Spread => format!("k{c}-{i}").into_bytes(),
    }
}

/// How many distinct keys a spread client of a claim or finalize cell may use (records are
/// placed before the cell starts; a client that used them all stops early).
fn spread_keys(dur: Duration, clients: usize) -> usize {
    ((dur.as_secs_f64() * 20_000.0 / clients as f64) as usize).clamp(20, 4096)
}

/// How many places a spread client may run (each adds 1 000 rows).
fn spread_places(dur: Duration, clients: usize) -> usize {
    ((dur.as_secs_f64() * 200.0 / clients as f64) as usize).clamp(2, 50)
}

/// The SQL of the baselines, prepared on each client's connection before the cell starts.
struct Baseline {
    client: Client,
    lock: Statement,
    select: Statement,
    select_many: Statement,
    trigger_start: Statement,
    trigger_finish: Statement,
    claim: Statement,
    finalize: Statement,
    audit: Statement,
    insert_many: Statement,
}

impl Baseline {
    async fn new(dsn: &str, way: Way) -> Result<Baseline, String> {
        let client = connect(dsn).await?;
        let p = |sql: &'static str| {
            let c = &client;
            async move { c.prepare(sql).await.map_err(|e| format!("prepare: {e}")) }
        };
        let for_update = if way == Way::ForUpdate {
            " FOR UPDATE"
        } else {
            ""
        };
        let select_sql = format!(
            "SELECT state, id, a, b FROM wkbench_row WHERE scope = $1 AND key = $2{for_update}"
        );
        let select_many_sql = format!(
            "SELECT key FROM wkbench_row WHERE scope = $1 AND key = ANY($2::bytea[]){for_update}"
        );
        let select = client
            .prepare(&select_sql)
            .await
            .map_err(|e| format!("prepare: {e}"))?;
        let select_many = client
            .prepare(&select_many_sql)
            .await
            .map_err(|e| format!("prepare: {e}"))?;
        Ok(Baseline {
            lock: p("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))").await?,
            trigger_start: p(
                "UPDATE wkbench_row SET a = a + 1, b = 1 WHERE scope = $1 AND key = $2",
            )
            .await?,
            trigger_finish: p("UPDATE wkbench_row SET b = 0 WHERE scope = $1 AND key = $2").await?,
            claim: p("UPDATE wkbench_row SET state = 2, id = $3 WHERE scope = $1 AND key = $2")
                .await?,
            finalize: p("UPDATE wkbench_row SET state = 3, a = $3 WHERE scope = $1 AND key = $2")
                .await?,
            audit: p("UPDATE wkbench_row SET b = b + 1 WHERE scope = $1 AND key = $2").await?,
            insert_many: p("INSERT INTO wkbench_row (scope, key, state, id, a, b) \
                 SELECT $1, k, 1, 1, 0, 0 FROM unnest($2::bytea[]) AS k")
            .await?,
            select,
            select_many,
            client,
        })
    }
}

/// One decision of a baseline: a transaction around the check-then-act. Returns whether it
/// won and how many statements it sent.
async fn baseline_once(
    b: &Baseline,
    way: Way,
    pattern: Pattern,
    scope: &str,
    key: &[u8],
    batch: &[Vec<u8>],
) -> Result<(bool, u64), tokio_postgres::Error> {
    let mut trips = 0;
    loop {
        b.client.batch_execute("BEGIN").await?;
        trips += 1;
        if way == Way::Advisory {
            let lock_key: String = if pattern == Pattern::Place {
                scope.to_string()
            } else {
                format!("{scope}/{}", String::from_utf8_lossy(key))
            };
            b.client.execute(&b.lock, &[&lock_key]).await?;
            trips += 1;
        }
        let result: Result<bool, tokio_postgres::Error> = async {
            if pattern == Pattern::Place {
                let keys: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
                let rows = b.client.query(&b.select_many, &[&scope, &keys]).await?;
                trips += 1;
                let have: std::collections::HashSet<Vec<u8>> =
                    rows.iter().map(|r| r.get::<_, Vec<u8>>(0)).collect();
                let missing: Vec<&[u8]> = keys
                    .iter()
                    .copied()
                    .filter(|k| !have.contains(*k))
                    .collect();
                if missing.is_empty() {
                    return Ok(false);
                }
                b.client
                    .execute(&b.insert_many, &[&scope, &missing])
                    .await?;
                trips += 1;
                return Ok(true);
            }
            let row = b.client.query_opt(&b.select, &[&scope, &key]).await?;
            trips += 1;
            let Some(row) = row else { return Ok(false) };
            let (state, id, _a, active): (i16, i64, i64, i64) =
                (row.get(0), row.get(1), row.get(2), row.get(3));
            let won = match pattern {
                Pattern::Trigger => {
                    if active == 0 {
                        b.client.execute(&b.trigger_start, &[&scope, &key]).await?;
                        trips += 1;
                        true
                    } else {
                        false
                    }
                }
                Pattern::Claim => {
                    if state == 1 && id == 1 {
                        let req = 2i64;
                        b.client.execute(&b.claim, &[&scope, &key, &req]).await?;
                        trips += 1;
                        true
                    } else {
                        false
                    }
                }
                Pattern::Finalize => {
                    if state < 3 {
                        let outcome = 1i64;
                        b.client
                            .execute(&b.finalize, &[&scope, &key, &outcome])
                            .await?;
                        trips += 1;
                        true
                    } else {
                        b.client.execute(&b.audit, &[&scope, &key]).await?;
                        trips += 1;
                        false
                    }
                }
                Pattern::Place => unreachable!("handled above"),
            };
            Ok(won)
        }
        .await;
        match result {
            Ok(won) => {
                b.client.batch_execute("COMMIT").await?;
                trips += 1;
                if won && pattern == Pattern::Trigger {
                    // The run's finish, the same way: check-then-act in a transaction.
                    b.client.batch_execute("BEGIN").await?;
                    b.client.query_opt(&b.select, &[&scope, &key]).await?;
                    b.client.execute(&b.trigger_finish, &[&scope, &key]).await?;
                    b.client.batch_execute("COMMIT").await?;
                    trips += 4;
                }
                return Ok((won, trips));
            }
            Err(e) => {
                b.client.batch_execute("ROLLBACK").await?;
                trips += 1;
                // A concurrent insert of a missing key (place): the host retries.
                if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) {
                    continue;
                }
                return Err(e);
            }
        }
    }
}

/// What a library client uses.
struct Lib {
    ledger: Arc<PgLedger>,
    triggers: Arc<PgTriggers>,
}

/// One decision of the library.
async fn library_once(lib: &Lib, pattern: Pattern, key: &[u8], batch: &[Vec<u8>]) -> bool {
    match pattern {
        Pattern::Trigger => match lib.triggers.trigger(key).await {
            Ok(run) => {
                lib.triggers.finish(key, run).await.expect("finish");
                true
            }
            Err(wkcore_coordpg::contract::Error::Trigger(_)) => false,
            Err(e) => panic!("trigger: {e}"),
        },
        Pattern::Claim => lib
            .ledger
            .claim(key, 1, 2, 1, 2)
            .await
            .expect("claim")
            .won(),
        Pattern::Finalize => lib
            .ledger
            .finalize(key, Outcome::Succeeded, 1, 2)
            .await
            .expect("finalize")
            .won(),
        Pattern::Place => {
            let keys: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
            lib.ledger
                .place(&keys, 1, u64::MAX, 1)
                .await
                .expect("place")
                .won
                > 0
        }
    }
}

/// The keys each client uses, in order, and the batches of a place.
struct Work {
    keys: Vec<Vec<u8>>,
    batches: Vec<Vec<Vec<u8>>>,
}

fn work(pattern: Pattern, layout: Layout, c: usize, clients: usize, dur: Duration) -> Work {
    match (pattern, layout) {
        (Pattern::Place, Layout::Contended) => Work {
            keys: Vec::new(),
            batches: vec![(0..PLACE_KEYS)
                .map(|j| format!("p-{j}").into_bytes())
                .collect()],
        },
        (Pattern::Place, Layout::Spread) => Work {
            keys: Vec::new(),
            batches: (0..spread_places(dur, clients))
                .map(|i| {
                    (0..PLACE_KEYS)
                        .map(|j| format!("p{c}-{i}-{j}").into_bytes())
                        .collect()
                })
                .collect(),
        },
        (Pattern::Trigger, _) | (_, Layout::Contended) => Work {
            keys: vec![key_of(layout, c, 0)],
            batches: Vec::new(),
        },
        (_, Layout::Spread) => Work {
            keys: (0..spread_keys(dur, clients))
                .map(|i| key_of(layout, c, i))
                .collect(),
            batches: Vec::new(),
        },
    }
}

/// Whether the op sequence repeats (one key or batch used again and again) or ends when used up.
fn repeats(pattern: Pattern, layout: Layout) -> bool {
    pattern == Pattern::Trigger || layout == Layout::Contended
}

#[allow(clippy::too_many_arguments)]
async fn cell(
    store: &Store,
    dsn: &str,
    scope: &str,
    pattern: Pattern,
    layout: Layout,
    clients: usize,
    way: Way,
    dur: Duration,
) -> Result<Cell, String> {
    let works: Vec<Work> = (0..clients)
        .map(|c| work(pattern, layout, c, clients, dur))
        .collect();
    // Setup: the records a claim or finalize decides on, the trigger rows of the baselines.
    let lib = Arc::new(Lib {
        ledger: Arc::new(
            store
                .ledger(
                    scope,
                    LedgerConfig {
                        capacity: 1 << 22,
                        retention: 0,
                        kind: LedgerKind::Claim,
                    },
                )
                .map_err(|e| e.to_string())?,
        ),
        triggers: Arc::new(store.triggers(scope).map_err(|e| e.to_string())?),
    });
    let mut setup_keys: Vec<Vec<u8>> = Vec::new();
    if pattern != Pattern::Place {
        setup_keys = works.iter().flat_map(|w| w.keys.iter().cloned()).collect();
        setup_keys.sort();
        setup_keys.dedup();
    }
    let needs_records = matches!(pattern, Pattern::Claim | Pattern::Finalize);
    let admin = connect(dsn).await?;
    for chunk in setup_keys.chunks(4096) {
        let keys: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        if way == Way::Library {
            if needs_records {
                lib.ledger
                    .place(&keys, 1, u64::MAX, 1)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        } else {
            admin
                .execute(
                    "INSERT INTO wkbench_row (scope, key, state, id, a, b) \
                     SELECT $1, k, 1, 1, 0, 0 FROM unnest($2::bytea[]) AS k",
                    &[&scope, &keys],
                )
                .await
                .map_err(|e| format!("setup: {e}"))?;
        }
    }
    let mut baselines = Vec::new();
    if way != Way::Library {
        for _ in 0..clients {
            baselines.push(Arc::new(Baseline::new(dsn, way).await?));
        }
    }
    let trips_before = store.stats().round_trips;
    let barrier = Arc::new(tokio::sync::Barrier::new(clients));
    let mut hs = Vec::new();
    for (c, w) in works.into_iter().enumerate() {
        let barrier = Arc::clone(&barrier);
        let lib = Arc::clone(&lib);
        let base = baselines.get(c).cloned();
        let scope = scope.to_string();
        let rep = repeats(pattern, layout);
        hs.push(tokio::spawn(async move {
            barrier.wait().await;
            let start = Instant::now();
            let end = start + dur;
            let mut lat = Vec::new();
            let (mut won, mut trips) = (0u64, 0u64);
            let steps = w.keys.len().max(w.batches.len());
            let mut i = 0;
            while Instant::now() < end && (rep || i < steps) {
                let key: &[u8] = w.keys.get(i % steps.max(1)).map_or(b"", Vec::as_slice);
                let batch: &[Vec<u8>] = w.batches.get(i % steps.max(1)).map_or(&[], Vec::as_slice);
                let t = Instant::now();
                let ok = match &base {
                    None => library_once(&lib, pattern, key, batch).await,
                    Some(b) => {
                        let (ok, n) = baseline_once(b, way, pattern, &scope, key, batch)
                            .await
                            .expect("a baseline decision");
                        trips += n;
                        ok
                    }
                };
                lat.push(t.elapsed());
                won += u64::from(ok);
                i += 1;
            }
            (lat, won, trips, start.elapsed())
        }));
    }
    let mut lat = Vec::new();
    let (mut won, mut trips, mut wall) = (0, 0, Duration::ZERO);
    for h in hs {
        let (l, w, t, e) = h.await.map_err(|e| format!("a client: {e}"))?;
        lat.extend(l);
        won += w;
        trips += t;
        wall = wall.max(e);
    }
    if way == Way::Library {
        trips = store.stats().round_trips - trips_before;
    }
    lat.sort();
    let q = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let decisions = lat.len() as u64;
    Ok(Cell {
        pattern,
        layout,
        clients,
        way,
        decisions,
        wall,
        p50: q(0.50),
        p99: q(0.99),
        trips: trips as f64 / decisions.max(1) as f64,
        won,
    })
}
