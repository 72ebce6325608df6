//! Bad input gets the same argument errors from both backends (never a store error, nothing
//! changed); the database's failures are typed store errors, never a lost race.

use std::time::Duration;

use wkcore::coord::{LedgerConfig, LedgerKind};
use wkcore_coordpg::contract::{
    Error, KeyError, LedgerStore, NewRecord, Outcome, StoreErrorKind, WindowStore, BATCH_MAX,
};
use wkcore_coordpg::memory::{MemoryLedger, MemoryWindows};
use wkcore_coordpg::pg::{Options, Store};

use crate::common::{self, is_store};

fn cfg() -> LedgerConfig {
    LedgerConfig {
        capacity: 4,
        retention: 0,
        kind: LedgerKind::Claim,
    }
}

async fn refusals(l: &impl LedgerStore) -> Vec<String> {
    let rec = NewRecord {
        id: 1,
        runner: 0,
        deadline: 1,
    };
    let long = [b'x'; 65];
    let many: Vec<&[u8]> = vec![b"a"; BATCH_MAX + 1];
    let show = |r: Result<String, Error>| {
        let e = r.expect_err("refused");
        assert!(is_store(&e).is_none(), "a store error for bad input: {e}");
        format!("{e:?}")
    };
    let ok = |d: wkcore_coordpg::contract::Decision| format!("{d:?}");
    vec![
        show(l.insert(b"", rec, 1).await.map(ok)),
        show(l.insert(&long, rec, 1).await.map(ok)),
        show(l.insert(b"k", rec, u64::MAX).await.map(ok)),
        show(l.finalize(b"k", Outcome::Failed, 0, u64::MAX).await.map(ok)),
        show(l.place(&[], 1, 1, 1).await.map(|b| format!("{b:?}"))),
        show(l.place(&many, 1, 1, 1).await.map(|b| format!("{b:?}"))),
        show(
            l.finalize_batch(&[b"a"], Some(&[1, 2]), Outcome::Failed, 1)
                .await
                .map(|b| format!("{b:?}")),
        ),
        show(l.reconcile(u64::MAX, 1).await.map(|p| format!("{p:?}"))),
    ]
}

#[tokio::test]
async fn bad_input_gets_the_same_errors_from_both_backends() {
    let mem = MemoryLedger::new(cfg()).unwrap();
    let want = refusals(&mem).await;
    assert!(want[0].contains("Empty") && want[1].contains("TooLong"));
    let Some(store) = common::store(Options::default()).await else {
        return;
    };
    let pg = store.ledger(&common::unique("bad"), cfg()).unwrap();
    assert_eq!(refusals(&pg).await, want);
    assert_eq!(pg.len().await.unwrap(), 0, "nothing changed");
    let w = store.windows(&common::unique("bad")).unwrap();
    let mw = MemoryWindows::new();
    assert_eq!(
        format!("{:?}", w.increment(b"k", 1, 0).await),
        format!("{:?}", mw.increment(b"k", 1, 0).await)
    );
    assert!(matches!(
        store.ledger("", cfg()),
        Err(Error::InvalidKey(KeyError::Empty))
    ));
    assert!(matches!(
        store.ledger(
            "x",
            LedgerConfig {
                capacity: 0,
                ..cfg()
            }
        ),
        Err(Error::InvalidCapacity)
    ));
}

#[tokio::test]
async fn an_unreachable_database_is_unavailable() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Store::open(
        &format!("postgres://wk@127.0.0.1:{port}/postgres"),
        Options {
            timeout: Duration::from_secs(5),
            ..Options::default()
        },
    )
    .await
    .expect_err("no server");
    assert_eq!(err.kind, StoreErrorKind::Unavailable);
    assert!(!err.uncertain);
}

#[tokio::test]
async fn a_newer_schema_is_a_schema_mismatch() {
    let Some(dsn) = common::dsn() else {
        return;
    };
    // A database of its own, whose schema claims a version this driver does not know.
    let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let db = common::unique("newer").replace('-', "_");
    client
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .unwrap();
    let mut cfg: tokio_postgres::Config = dsn.parse().unwrap();
    cfg.dbname(&db);
    drop(
        Store::open_config(cfg.clone(), Options::default())
            .await
            .unwrap(),
    );
    let (c2, conn2) = cfg.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn2);
    c2.batch_execute("UPDATE wkcoord_schema SET version = 99")
        .await
        .unwrap();
    let err = Store::open_config(cfg, Options::default())
        .await
        .expect_err("a newer schema");
    assert_eq!(err.kind, StoreErrorKind::SchemaMismatch);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_opening_at_once_migrate_once() {
    let Some(dsn) = common::dsn() else {
        return;
    };
    let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let db = common::unique("fresh").replace('-', "_");
    client
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .unwrap();
    let mut cfg: tokio_postgres::Config = dsn.parse().unwrap();
    cfg.dbname(&db);
    let mut hs = Vec::new();
    for _ in 0..6 {
        let cfg = cfg.clone();
        hs.push(tokio::spawn(async move {
            Store::open_config(cfg, Options::default()).await
        }));
    }
    let mut stores = Vec::new();
    for h in hs {
        stores.push(h.await.unwrap().expect("every replica opens"));
    }
    let l = stores[0].ledger("l", cfg_one()).unwrap();
    assert!(l
        .insert(
            b"k",
            NewRecord {
                id: 1,
                runner: 0,
                deadline: 5
            },
            1
        )
        .await
        .unwrap()
        .won());
    let (c2, conn2) = cfg.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn2);
    let v: i32 = c2
        .query_one("SELECT version FROM wkcoord_schema WHERE id = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 1);
}

fn cfg_one() -> LedgerConfig {
    LedgerConfig {
        capacity: 16,
        ..cfg()
    }
}

#[tokio::test]
async fn a_store_that_cannot_decide_says_so_and_never_reports_a_lost_race() {
    let Some(store) = common::store(Options::default()).await else {
        return;
    };
    let l = store.ledger(&common::unique("closed"), cfg()).unwrap();
    let rec = NewRecord {
        id: 1,
        runner: 0,
        deadline: 5,
    };
    assert!(l.insert(b"k", rec, 1).await.unwrap().won());
    store.close();
    for r in [
        l.insert(b"k", rec, 2).await,
        l.insert(b"other", rec, 2).await,
        l.finalize(b"k", Outcome::Failed, 0, 3).await,
    ] {
        let e = r.expect_err("the pool is closed");
        let s = is_store(&e).expect("a store error");
        assert_eq!(s.kind, StoreErrorKind::Unavailable, "{e}");
        assert!(!s.uncertain, "nothing was sent: {e}");
    }
}
