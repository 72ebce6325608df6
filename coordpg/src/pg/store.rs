//! The store: the pool, the migration, and the one way every decision runs (`decide`), with the
//! read-back of an ambiguous commit.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Object, ObjectId, Pool, RecyclingMethod};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use super::sql;
use crate::contract::{StoreError, StoreErrorKind};

/// The runtime parameter every connection of the pool starts with: each run of a statement is
/// planned with its own values and the tables' current size, never with a generic plan cached
/// while the tables were empty.
const PLAN_CACHE_OPTION: &str = "-c plan_cache_mode=force_custom_plan";

/// The host's options (`-c name=value` switches, or none) with [`PLAN_CACHE_OPTION`] appended:
/// the last switch for a parameter is the one the server applies, and the others stay.
fn with_plan_cache_option(host: Option<&str>) -> String {
    match host.map(str::trim) {
        Some(o) if !o.is_empty() => format!("{o} {PLAN_CACHE_OPTION}"),
        _ => PLAN_CACHE_OPTION.to_string(),
    }
}

tokio::task_local! {
    static REQUEST_ID: u64;
}

/// Runs `f` with `id` (nonzero; unique per decision across every replica, e.g. the host's own
/// request id) as the request id of the decisions it makes (one decision per id: a batch's
/// later passes take `id + 1`, `id + 2`, ...). Without it each decision draws a random one. The
/// request id is what an ambiguous commit is resolved by, and what [`Store::resolved`] answers
/// about after an uncertain error. A retry with the id of a decision that won is told what it
/// decided where the statement would write the id again (a finalization, a counter or window
/// increment); any other decision retried that way finds its own transition made and is told it
/// lost (the record exists, the trigger is busy, the anchor moved), so a host retrying those after
/// an uncertain error asks [`Store::resolved`] first.
pub async fn with_request_id<F: std::future::Future>(id: u64, f: F) -> F::Output {
    REQUEST_ID.scope(id, f).await
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A random nonzero id (a keyed hash of a process-wide sequence and the time).
pub(crate) fn random_u64() -> u64 {
    static KEYS: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(RandomState::new);
    loop {
        // Ordering: Relaxed; the sequence only makes each hash input distinct.
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let v = keys.hash_one((n, t, std::process::id()));
        if v != 0 {
            return v;
        }
    }
}

/// The request id of the next decision.
pub(crate) fn request_id() -> i64 {
    let id = REQUEST_ID.try_with(|id| *id).unwrap_or(0);
    (if id != 0 { id } else { random_u64() }) as i64
}

/// The order-preserving encoding of a `u64` as a bigint (`u64 XOR 2^63`).
pub(crate) const fn enc(u: u64) -> i64 {
    (u ^ (1 << 63)) as i64
}

/// Inverts [`enc`].
pub(crate) const fn dec(i: i64) -> u64 {
    (i as u64) ^ (1 << 63)
}

/// Encodes a time, `u64::MAX` (never, unset) as NULL.
pub(crate) fn enc_time(t: u64) -> Option<i64> {
    (t != u64::MAX).then(|| enc(t))
}

/// Decodes a time, NULL as `u64::MAX`.
pub(crate) fn dec_time(t: Option<i64>) -> u64 {
    t.map_or(u64::MAX, dec)
}

/// `now - d`, NULL when `now < d` (nothing is old enough).
pub(crate) fn cutoff(now: u64, d: u64) -> Option<i64> {
    now.checked_sub(d).map(enc)
}

/// Tunes a [`Store`]; `Options::default()` is the default.
#[derive(Clone, Debug)]
pub struct Options {
    /// The most connections of the pool (default 16).
    pub pool_size: usize,
    /// How long one call may take before it is given up (default 30 s): a statement not yet
    /// sent is then [`StoreErrorKind::Timeout`] (nothing was decided); one sent is resolved first.
    pub timeout: Duration,
    /// How long an ambiguous commit is resolved for (default 10 s), from the moment it is found,
    /// whatever is left of `timeout`: an unknown commit is not given up early.
    pub resolve_timeout: Duration,
    /// How often a statement that did not commit (never sent, rolled back by a serialization
    /// failure or deadlock, or resolved as not committed) is run again (default 4).
    pub attempts: u32,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            pool_size: 16,
            timeout: Duration::from_secs(30),
            resolve_timeout: Duration::from_secs(10),
            attempts: 4,
        }
    }
}

/// What a store did, counted since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Statements sent to the server (decisions, reads, preparations, the read-backs).
    pub round_trips: u64,
    /// Ambiguous commits resolved as committed (the read-back found the request id).
    pub resolved_committed: u64,
    /// Ambiguous commits resolved as not committed (then run again with the same id).
    pub resolved_not_committed: u64,
}

/// What the plan cache of one pooled connection holds for the store's statements
/// ([`Store::plan_cache`]): a diagnostic, to check on a host's own server that the decisions are
/// planned with their own parameter values (`docs/COORD.md`, "Plans").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanCache {
    /// The connection's `plan_cache_mode`.
    pub mode: String,
    /// The store's statements prepared on the connection, sorted by name.
    pub statements: Vec<StatementPlans>,
}

/// How often one prepared statement ran with each kind of plan on one connection (PostgreSQL's
/// `pg_prepared_statements`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementPlans {
    /// The statement's name (`go/coordpg/sql/*.sql`).
    pub name: &'static str,
    /// How many parameters it takes.
    pub params: usize,
    /// Runs with the connection's cached generic plan (one plan for every parameter value).
    pub generic_plans: i64,
    /// Runs with a plan made for that run's values.
    pub custom_plans: i64,
}

#[derive(Debug, Default)]
struct Stats {
    round_trips: AtomicU64,
    committed: AtomicU64,
    not_committed: AtomicU64,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pool: Pool,
    app: String,
    opts: Options,
    pids: Mutex<HashMap<ObjectId, i32>>,
    stats: Stats,
}

/// A PostgreSQL coordination store: the ledgers, hand-offs, anchor tables and words of the
/// contract on one database shared by every replica. Cheap to clone (one pool); safe for
/// concurrent use.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) inner: Arc<Inner>,
}

/// What a decision statement answered.
pub(crate) enum Decided<T> {
    /// The statement's rows, scanned.
    Rows(T),
    /// The commit was ambiguous and the request table says the statement won with this `v`.
    Logged(Vec<i64>),
}

type BoxErr = Box<dyn std::error::Error + Send + Sync>;

/// A failure of one run of a statement, classified.
enum Failure {
    /// Not sent, or answered with an error: nothing committed (`retry`: running it again may
    /// succeed).
    Definite {
        err: BoxErr,
        kind: StoreErrorKind,
        retry: bool,
    },
    /// The request id won before (a retry of a committed decision).
    Committed(BoxErr),
    /// Sent, no answer: it may have committed (`pid`: the session that ran it).
    Ambiguous { err: Option<BoxErr>, pid: i32 },
    /// The time limit passed before the statement was sent.
    Timeout,
}

impl Failure {
    /// A failure before the statement was sent, or the server's error answer.
    fn definite(e: tokio_postgres::Error, retry: bool) -> Self {
        Failure::Definite {
            kind: kind_of(&e),
            err: Box::new(e),
            retry,
        }
    }
}

fn store_err(
    kind: StoreErrorKind,
    statement: &'static str,
    op: i64,
    uncertain: bool,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
) -> StoreError {
    StoreError {
        kind,
        statement,
        request_id: op as u64,
        uncertain,
        source,
    }
}

/// The kind of a database error.
fn kind_of(e: &tokio_postgres::Error) -> StoreErrorKind {
    match e.code() {
        Some(c) if *c == SqlState::QUERY_CANCELED => StoreErrorKind::Timeout,
        Some(c)
            if *c == SqlState::UNDEFINED_TABLE
                || *c == SqlState::UNDEFINED_COLUMN
                || *c == SqlState::UNDEFINED_FUNCTION
                || *c == SqlState::INVALID_SQL_STATEMENT_NAME
                || *c == SqlState::UNDEFINED_PARAMETER =>
        {
            StoreErrorKind::SchemaMismatch
        }
        _ => StoreErrorKind::Unavailable,
    }
}

fn db_err(statement: &'static str, op: i64, e: tokio_postgres::Error) -> StoreError {
    store_err(kind_of(&e), statement, op, false, Some(Box::new(e)))
}

fn boxed_err(statement: &'static str, op: i64, kind: StoreErrorKind, e: BoxErr) -> StoreError {
    store_err(kind, statement, op, false, Some(e))
}

/// True when the server answered with an error that rolled the statement back.
fn definite(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| d.severity() == "ERROR")
}

fn retriable(e: &tokio_postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

fn committed(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| {
        *d.code() == SqlState::UNIQUE_VIOLATION && d.constraint() == Some("wkcoord_request_pkey")
    })
}

/// Decodes a column, a failure as a schema mismatch.
pub(crate) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    i: usize,
) -> Result<T, String> {
    row.try_get(i).map_err(|e| e.to_string())
}

impl Store {
    /// Connects to `dsn` (a libpq URL or key=value string), applies the migrations (idempotent;
    /// safe when N replicas start at once) and returns the store. Statements are prepared on each
    /// connection of the pool at their first use there.
    pub async fn open(dsn: &str, opts: Options) -> Result<Store, StoreError> {
        let cfg: tokio_postgres::Config = dsn.parse().map_err(|e: tokio_postgres::Error| {
            store_err(
                StoreErrorKind::Unavailable,
                "connect",
                0,
                false,
                Some(Box::new(e)),
            )
        })?;
        Self::open_config(cfg, opts).await
    }

    /// [`Store::open`] with a configuration of the host's; its application name is replaced (to
    /// find the session of an ambiguous statement), and `-c plan_cache_mode=force_custom_plan`
    /// appended to its options (each run of a statement is planned with its own values:
    /// `docs/COORD.md`, "Plans").
    pub async fn open_config(
        mut cfg: tokio_postgres::Config,
        opts: Options,
    ) -> Result<Store, StoreError> {
        let app = format!("wkcoord-{:012x}", random_u64() & 0xffff_ffff_ffff);
        cfg.application_name(&app);
        // Every run of a statement is planned with its own values and the tables as they are: a
        // generic plan cached while the table was empty (a replica that starts first) would read
        // a large ledger through a partial index or a scan (docs/COORD.md, "Plans"). Appended to
        // the host's options, which keep every other parameter they set.
        let options = with_plan_cache_option(cfg.get_options());
        cfg.options(&options);
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(opts.timeout);
        }
        migrate(&cfg, opts.timeout).await?;
        let mgr = Manager::from_config(
            cfg,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(mgr)
            .max_size(opts.pool_size.max(1))
            .build()
            .map_err(|e| {
                store_err(
                    StoreErrorKind::Unavailable,
                    "connect",
                    0,
                    false,
                    Some(Box::new(e)),
                )
            })?;
        Ok(Store {
            inner: Arc::new(Inner {
                pool,
                app,
                opts,
                pids: Mutex::new(HashMap::new()),
                stats: Stats::default(),
            }),
        })
    }

    /// Closes the pool: later calls fail as unavailable.
    pub fn close(&self) {
        self.inner.pool.close();
    }

    /// What this store did so far.
    pub fn stats(&self) -> StoreStats {
        let s = &self.inner.stats;
        // Ordering: Relaxed; statistics only.
        StoreStats {
            round_trips: s.round_trips.load(Ordering::Relaxed),
            resolved_committed: s.committed.load(Ordering::Relaxed),
            resolved_not_committed: s.not_committed.load(Ordering::Relaxed),
        }
    }

    fn trip(&self) {
        // Ordering: Relaxed; statistics only.
        self.inner.stats.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection of the pool and its backend's process id.
    async fn acquire(&self) -> Result<(Object, i32), Failure> {
        let obj = match self.inner.pool.get().await {
            Ok(o) => o,
            Err(deadpool_postgres::PoolError::Backend(e)) => {
                let retry = !definite(&e);
                return Err(Failure::definite(e, retry));
            }
            Err(e) => {
                return Err(Failure::Definite {
                    err: Box::new(e),
                    kind: StoreErrorKind::Unavailable,
                    retry: false,
                })
            }
        };
        let id = Object::id(&obj);
        let known = self
            .inner
            .pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .copied();
        let pid = match known {
            Some(p) => p,
            None => {
                self.trip();
                let row = match obj.query_one("SELECT pg_backend_pid()", &[]).await {
                    Ok(r) => r,
                    Err(e) => {
                        let retry = !definite(&e);
                        if obj.is_closed() {
                            self.discard(obj);
                        }
                        return Err(Failure::definite(e, retry));
                    }
                };
                let p: i32 = row.get(0);
                self.inner
                    .pids
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id, p);
                p
            }
        };
        Ok((obj, pid))
    }

    /// Drops `obj` from the pool (its session is, or is about to be, gone).
    fn discard(&self, obj: Object) {
        self.inner
            .pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&Object::id(&obj));
        drop(Object::take(obj));
    }

    /// One run of statement `name` on one connection, within `deadline`.
    async fn once(
        &self,
        name: &'static str,
        params: &[&(dyn ToSql + Sync)],
        deadline: Instant,
    ) -> Result<Vec<Row>, Failure> {
        let left = deadline.saturating_duration_since(Instant::now());
        let (obj, pid) = match tokio::time::timeout(left, self.acquire()).await {
            Err(_) => return Err(Failure::Timeout),
            Ok(Err(f)) => return Err(f),
            Ok(Ok(c)) => c,
        };
        let text = sql::statement(name);
        let cached = obj.statement_cache.size();
        let left = deadline.saturating_duration_since(Instant::now());
        let stmt = match tokio::time::timeout(left, obj.prepare_cached(text)).await {
            Err(_) => {
                self.discard(obj);
                return Err(Failure::Timeout);
            }
            Ok(Err(e)) => {
                self.trip();
                let retry = !definite(&e);
                if obj.is_closed() {
                    self.discard(obj);
                }
                return Err(Failure::definite(e, retry));
            }
            Ok(Ok(s)) => s,
        };
        if obj.statement_cache.size() != cached {
            self.trip();
        }
        self.trip();
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, obj.query(&stmt, params)).await {
            Ok(Ok(rows)) => Ok(rows),
            Ok(Err(e)) if committed(&e) => Err(Failure::Committed(Box::new(e))),
            Ok(Err(e)) if definite(&e) => {
                let retry = retriable(&e);
                Err(Failure::definite(e, retry))
            }
            Ok(Err(e)) => {
                self.discard(obj);
                Err(Failure::Ambiguous {
                    err: Some(Box::new(e)),
                    pid,
                })
            }
            Err(_) => {
                self.discard(obj);
                Err(Failure::Ambiguous { err: None, pid })
            }
        }
    }

    /// Runs a read (or an idempotent statement) and scans its rows.
    pub(crate) async fn read<T>(
        &self,
        name: &'static str,
        params: &[&(dyn ToSql + Sync)],
        scan: impl Fn(&[Row]) -> Result<T, String>,
    ) -> Result<T, StoreError> {
        let deadline = Instant::now() + self.inner.opts.timeout;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let err = match self.once(name, params, deadline).await {
                Ok(rows) => {
                    return scan(&rows).map_err(|e| {
                        store_err(
                            StoreErrorKind::SchemaMismatch,
                            name,
                            0,
                            false,
                            Some(e.into()),
                        )
                    })
                }
                Err(Failure::Timeout) => {
                    return Err(store_err(StoreErrorKind::Timeout, name, 0, false, None))
                }
                Err(Failure::Definite {
                    err,
                    kind,
                    retry: false,
                }) => return Err(boxed_err(name, 0, kind, err)),
                Err(Failure::Committed(err)) => {
                    return Err(boxed_err(name, 0, StoreErrorKind::Unavailable, err))
                }
                Err(Failure::Definite { err, kind, .. }) => Some((err, kind)),
                Err(Failure::Ambiguous { err, .. }) => {
                    err.map(|e| (e, StoreErrorKind::Unavailable))
                }
            };
            if attempt >= self.inner.opts.attempts.max(1) || Instant::now() >= deadline {
                return Err(match err {
                    Some((e, kind)) => boxed_err(name, 0, kind, e),
                    None => store_err(StoreErrorKind::Timeout, name, 0, false, None),
                });
            }
        }
    }

    /// Runs the decision statement `name`, whose last parameter is its request id `op` (added
    /// here). Returns the scanned rows, or (when the statement's commit was unknown and the
    /// request table says it won) what it decided. The commit of a statement that was sent and
    /// got no answer is never guessed: the session that ran it is ended (if it still runs) and
    /// waited for, then the request table read; a statement that did not commit is run again
    /// with the same request id.
    pub(crate) async fn decide<T>(
        &self,
        name: &'static str,
        op: i64,
        params: &[&(dyn ToSql + Sync)],
        scan: impl Fn(&[Row]) -> Result<T, String>,
    ) -> Result<Decided<T>, StoreError> {
        let mut all: Vec<&(dyn ToSql + Sync)> = params.to_vec();
        all.push(&op);
        let call_deadline = Instant::now() + self.inner.opts.timeout;
        let mut deadline = call_deadline;
        let mut resolving = false;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.once(name, &all, deadline).await {
                Ok(rows) => {
                    return scan(&rows).map(Decided::Rows).map_err(|e| {
                        store_err(
                            StoreErrorKind::SchemaMismatch,
                            name,
                            op,
                            false,
                            Some(e.into()),
                        )
                    })
                }
                Err(Failure::Timeout) => {
                    return Err(store_err(StoreErrorKind::Timeout, name, op, false, None))
                }
                Err(Failure::Committed(err)) => {
                    // A run of a request id that already won (a host retrying after an
                    // uncertain error): the request table says what it decided.
                    let until = Instant::now() + self.inner.opts.resolve_timeout;
                    return match self.resolve(0, op, until).await {
                        Ok(Some(v)) => Ok(Decided::Logged(v)),
                        _ => Err(boxed_err(name, op, StoreErrorKind::Unavailable, err)),
                    };
                }
                Err(Failure::Definite { err, kind, retry }) => {
                    if retry && attempt <= self.inner.opts.attempts && Instant::now() < deadline {
                        continue;
                    }
                    return Err(boxed_err(name, op, kind, err));
                }
                Err(Failure::Ambiguous { err, pid }) => {
                    if !resolving {
                        // From here on the resolve timeout bounds the call.
                        resolving = true;
                        deadline = Instant::now() + self.inner.opts.resolve_timeout;
                    }
                    let source = |err: Option<BoxErr>| err;
                    match self.resolve(pid, op, deadline).await {
                        Err(rerr) => {
                            let mut e =
                                store_err(StoreErrorKind::Unavailable, name, op, true, source(err));
                            if e.source.is_none() {
                                e.source = Some(rerr.into());
                            }
                            return Err(e);
                        }
                        Ok(Some(v)) => {
                            // Ordering: Relaxed; statistics only.
                            self.inner.stats.committed.fetch_add(1, Ordering::Relaxed);
                            return Ok(Decided::Logged(v));
                        }
                        Ok(None) => {
                            // Ordering: Relaxed; statistics only.
                            self.inner
                                .stats
                                .not_committed
                                .fetch_add(1, Ordering::Relaxed);
                            // It did not commit: nothing was decided. Run it again while the
                            // call's own time lasts (the resolve timeout bounds the retries).
                            if Instant::now() >= call_deadline {
                                return Err(store_err(
                                    StoreErrorKind::Timeout,
                                    name,
                                    op,
                                    false,
                                    source(err),
                                ));
                            }
                            if attempt > self.inner.opts.attempts {
                                return Err(store_err(
                                    StoreErrorKind::Unavailable,
                                    name,
                                    op,
                                    false,
                                    source(err),
                                ));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Ends the session `pid` (if it still runs; 0: none to end), waits until it is gone, and
    /// reads the request table for `op`: `Some(v)` when it won. Retries while the database is
    /// unreachable, until `until`.
    async fn resolve(&self, pid: i32, op: i64, until: Instant) -> Result<Option<Vec<i64>>, String> {
        let mut backoff = Duration::from_millis(5);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let err = match tokio::time::timeout(left, self.resolve_once(pid, op)).await {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => e,
                Err(_) => "the resolve timeout passed".to_string(),
            };
            if Instant::now() + backoff >= until {
                return Err(err);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
    }

    async fn resolve_once(&self, pid: i32, op: i64) -> Result<Option<Vec<i64>>, String> {
        let (obj, own) = self.acquire().await.map_err(|f| match f {
            Failure::Definite { err, .. } | Failure::Committed(err) => err.to_string(),
            Failure::Ambiguous { .. } | Failure::Timeout => "no connection".to_string(),
        })?;
        let s = |e: tokio_postgres::Error| e.to_string();
        if pid != 0 && pid != own {
            let end = obj
                .prepare_cached(sql::statement("session_end"))
                .await
                .map_err(s)?;
            let alive = obj
                .prepare_cached(sql::statement("session_alive"))
                .await
                .map_err(s)?;
            self.trip();
            obj.query(&end, &[&pid, &self.inner.app]).await.map_err(s)?;
            let mut backoff = Duration::from_millis(1);
            loop {
                self.trip();
                let row = obj
                    .query_one(&alive, &[&pid, &self.inner.app])
                    .await
                    .map_err(s)?;
                if !row.try_get::<_, bool>(0).map_err(s)? {
                    break;
                }
                // The session is ending (pg_terminate_backend only signals it): poll until it
                // is gone, so that its transaction is over before the read-back.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(50));
            }
        }
        let get = obj
            .prepare_cached(sql::statement("request_get"))
            .await
            .map_err(s)?;
        self.trip();
        let rows = obj.query(&get, &[&op]).await.map_err(s)?;
        match rows.first() {
            None => Ok(None),
            Some(r) => Ok(Some(r.try_get::<_, Vec<i64>>(0).map_err(s)?)),
        }
    }

    /// Whether the decision with request id `id` won (it is in the request table; false once
    /// pruned).
    pub async fn resolved(&self, id: u64) -> Result<bool, StoreError> {
        let id = id as i64;
        self.read("request_get", &[&id], |rows| Ok(!rows.is_empty()))
            .await
    }

    /// Forgets the request ids of decisions older than `age` (by the database clock) and returns
    /// how many it forgot. Host-driven, like reclaim: choose an age far longer than any retry.
    pub async fn prune_requests(&self, age: Duration) -> Result<u64, StoreError> {
        let secs = age.as_secs_f64();
        self.read("request_prune", &[&secs], |rows| {
            Ok(rows.first().map_or(Ok(0), |r| col::<i64>(r, 0))? as u64)
        })
        .await
    }

    /// Reads the plan cache of one connection of the pool (with `pool_size` 1: the connection
    /// every decision runs on), in one round trip. Needs PostgreSQL 14 or later.
    pub async fn plan_cache(&self) -> Result<PlanCache, StoreError> {
        const NAME: &str = "plan_cache";
        let left = self.inner.opts.timeout;
        let (obj, _) = match tokio::time::timeout(left, self.acquire()).await {
            Err(_) | Ok(Err(Failure::Timeout)) => {
                return Err(store_err(StoreErrorKind::Timeout, NAME, 0, false, None))
            }
            Ok(Err(Failure::Definite { err, kind, .. })) => {
                return Err(boxed_err(NAME, 0, kind, err))
            }
            Ok(Err(Failure::Committed(err))) => {
                return Err(boxed_err(NAME, 0, StoreErrorKind::Unavailable, err))
            }
            Ok(Err(Failure::Ambiguous { err, .. })) => {
                return Err(store_err(StoreErrorKind::Unavailable, NAME, 0, false, err))
            }
            Ok(Ok(c)) => c,
        };
        self.trip();
        let msgs = match tokio::time::timeout(
            left,
            obj.simple_query(
                "SELECT current_setting('plan_cache_mode'), p.statement, \
                 cardinality(p.parameter_types), p.generic_plans, p.custom_plans \
                 FROM (SELECT 1) AS one LEFT JOIN pg_prepared_statements AS p ON true",
            ),
        )
        .await
        {
            Err(_) => return Err(store_err(StoreErrorKind::Timeout, NAME, 0, false, None)),
            Ok(r) => r.map_err(|e| db_err(NAME, 0, e))?,
        };
        let bad = |what: &str| {
            store_err(
                StoreErrorKind::SchemaMismatch,
                NAME,
                0,
                false,
                Some(format!("pg_prepared_statements: {what}").into()),
            )
        };
        let mut out = PlanCache {
            mode: String::new(),
            statements: Vec::new(),
        };
        for m in msgs {
            let tokio_postgres::SimpleQueryMessage::Row(r) = m else {
                continue;
            };
            out.mode = r.get(0).unwrap_or_default().to_string();
            let Some(text) = r.get(1) else { continue };
            let Some((name, _)) = sql::statements().iter().find(|(_, t)| t.as_str() == text) else {
                continue;
            };
            let num = |i: usize| -> Result<i64, StoreError> {
                r.get(i)
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| bad("a count is not a number"))
            };
            out.statements.push(StatementPlans {
                name: name.as_str(),
                params: usize::try_from(num(2)?).map_err(|_| bad("a negative count"))?,
                generic_plans: num(3)?,
                custom_plans: num(4)?,
            });
        }
        out.statements.sort_by_key(|p| p.name);
        Ok(out)
    }

    /// The database's clock in milliseconds since 1970: the one clock every replica reads, for
    /// hosts whose replicas' clocks differ (pass it as `now`). It costs a round trip.
    pub async fn now(&self) -> Result<u64, StoreError> {
        self.read("db_now", &[], |rows| {
            Ok(rows.first().map_or(Ok(0), |r| col::<i64>(r, 0))? as u64)
        })
        .await
    }
}

/// Brings the schema to [`sql::SCHEMA_VERSION`] in one transaction on its own connection: the
/// version table is created if absent and locked, the version read, the missing migrations
/// applied, the version written. N replicas starting at once serialize on the lock; two that
/// create the table at the very same moment get a unique violation, and retry.
async fn migrate(cfg: &tokio_postgres::Config, timeout: Duration) -> Result<(), StoreError> {
    let fail = |e: tokio_postgres::Error| db_err("migrate", 0, e);
    let (mut client, conn) = match tokio::time::timeout(timeout, cfg.connect(NoTls)).await {
        Ok(r) => r.map_err(fail)?,
        Err(_) => {
            return Err(store_err(
                StoreErrorKind::Timeout,
                "migrate",
                0,
                false,
                None,
            ))
        }
    };
    let task = tokio::spawn(conn);
    let mut attempt = 0;
    let result = loop {
        attempt += 1;
        match migrate_once(&mut client).await {
            Ok(()) => break Ok(()),
            Err(MigrateError::Mismatch(v)) => {
                break Err(store_err(
                    StoreErrorKind::SchemaMismatch,
                    "migrate",
                    0,
                    false,
                    Some(
                        format!(
                            "the database's schema is version {v}, this driver knows {}",
                            sql::SCHEMA_VERSION
                        )
                        .into(),
                    ),
                ))
            }
            Err(MigrateError::Db(e)) => {
                let again = matches!(e.code(), Some(c) if *c == SqlState::UNIQUE_VIOLATION
                    || *c == SqlState::DUPLICATE_TABLE
                    || *c == SqlState::DUPLICATE_OBJECT
                    || *c == SqlState::T_R_DEADLOCK_DETECTED
                    || *c == SqlState::T_R_SERIALIZATION_FAILURE);
                if again && attempt < 8 {
                    continue;
                }
                break Err(fail(e));
            }
        }
    };
    drop(client);
    task.abort();
    result
}

enum MigrateError {
    Db(tokio_postgres::Error),
    Mismatch(i32),
}

impl From<tokio_postgres::Error> for MigrateError {
    fn from(e: tokio_postgres::Error) -> Self {
        MigrateError::Db(e)
    }
}

async fn migrate_once(client: &mut tokio_postgres::Client) -> Result<(), MigrateError> {
    let tx = client.transaction().await?;
    tx.batch_execute(sql::SCHEMA_VERSION_SQL).await?;
    tx.batch_execute("LOCK TABLE wkcoord_schema IN EXCLUSIVE MODE")
        .await?;
    let v: i32 = match tx
        .query_opt("SELECT version FROM wkcoord_schema WHERE id = 1", &[])
        .await?
    {
        Some(r) => r.try_get(0)?,
        None => 0,
    };
    if v > sql::SCHEMA_VERSION {
        return Err(MigrateError::Mismatch(v));
    }
    for m in &sql::MIGRATIONS[v as usize..] {
        tx.batch_execute(m).await?;
    }
    tx.execute(
        "INSERT INTO wkcoord_schema (id, version) VALUES (1, $1) \
         ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version",
        &[&sql::SCHEMA_VERSION],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_cache_option_is_appended_to_the_hosts_options() {
        assert_eq!(with_plan_cache_option(None), PLAN_CACHE_OPTION);
        assert_eq!(with_plan_cache_option(Some("  ")), PLAN_CACHE_OPTION);
        assert_eq!(
            with_plan_cache_option(Some("-c statement_timeout=5s")),
            format!("-c statement_timeout=5s {PLAN_CACHE_OPTION}")
        );
    }
}
