//! The PostgreSQL the tests run against, never a mock: the server named by `WKCORE_PG_DSN`, or
//! one cluster this test binary starts with `scripts/pg start` (one per binary, shared by its
//! tests) and that a watcher process stops when the binary exits. Without server binaries the
//! tests skip with one line, unless `CI=true`, where a missing server fails them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use wkcore_coordpg::contract::{Error, StoreError};
use wkcore_coordpg::pg::{Options, Store};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository root")
        .to_path_buf()
}

fn have_server_binaries() -> bool {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("initdb").is_file()));
    on_path
        || std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.path().join("bin").join("initdb").is_file())
        })
}

fn start_cluster() -> Result<String, String> {
    if !have_server_binaries() {
        return Err(
            "no PostgreSQL server binary (initdb) on PATH or under /usr/lib/postgresql: \
                    set WKCORE_PG_DSN or install postgresql-15"
                .into(),
        );
    }
    let base = root().join("target").join("pg");
    std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
    let dir = base.join(format!(
        "rusttest.{}.{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let script = root().join("scripts").join("pg");
    let out = Command::new(&script)
        .arg("start")
        .arg(&dir)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("scripts/pg start: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!(
            "scripts/pg start: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // The watcher: stops the cluster once this process has exited (Rust tests have no hook
    // that runs after the last test).
    let _ = Command::new("sh")
        .arg("-c")
        .arg(r#"while kill -0 "$0" 2>/dev/null; do sleep 1; done; "$1" stop "$2" >/dev/null 2>&1; rm -rf "$2""#)
        .arg(std::process::id().to_string())
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The DSN of the server, or `None` (after one skip line) when there is none and `CI` is not
/// `true`.
pub(crate) fn dsn() -> Option<&'static str> {
    static DSN: OnceLock<Result<String, String>> = OnceLock::new();
    let got = DSN.get_or_init(|| match std::env::var("WKCORE_PG_DSN") {
        Ok(d) if !d.is_empty() => Ok(d),
        _ => {
            let r = start_cluster();
            if let Err(e) = &r {
                if std::env::var("CI").as_deref() == Ok("true") {
                    panic!("CI=true and no PostgreSQL: {e}");
                }
                println!("wkcore-coordpg: skipping the PostgreSQL tests: {e}");
            }
            r
        }
    });
    got.as_deref().ok()
}

/// A store on the test server (`None`: skip the test).
pub(crate) async fn store(opts: Options) -> Option<Store> {
    let dsn = dsn()?;
    Some(Store::open(dsn, opts).await.expect("open the store"))
}

/// A name no other test (or earlier run) uses.
pub(crate) fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    // Ordering: Relaxed; only makes names distinct.
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}-{}-{n}-{:x}", std::process::id(), t & 0xffff_ffff)
}

/// `r` as a comparable text, panicking on a store error (a backend that could not decide is a
/// failure of the test, never a decision to compare).
pub(crate) fn norm<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    match r {
        Err(Error::Store(e)) => panic!("store error: {e}"),
        other => format!("{other:?}"),
    }
}

/// Whether `e` is the store's own error.
pub(crate) fn is_store(e: &Error) -> Option<&StoreError> {
    match e {
        Error::Store(s) => Some(s),
        _ => None,
    }
}

/// A runtime for the tests that are not `async` (proptest).
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}
