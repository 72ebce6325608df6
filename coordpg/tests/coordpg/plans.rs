//! The plans the pooled connection runs the statements with. A replica that starts first meets
//! an empty table; a statement run there often enough must not keep a plan made for that empty
//! table once the ledger is large (a point decision reading a partial index, or the primary key,
//! with only the ledger's name, and filtering every record of the ledger). Checked on the plan
//! cache of the store's one connection, never by timing.

use wkcore::coord::{LedgerConfig, LedgerKind, LEDGER_CAPACITY_MAX};
use wkcore_coordpg::contract::{
    AnchorStore, CounterStore, FlipStore, LedgerStore, NewRecord, Outcome, TriggerStore,
    WindowStore,
};
use wkcore_coordpg::pg::{Options, Store};

use crate::common;

/// How many times each point decision runs while the table is (nearly) empty: PostgreSQL
/// considers its generic plan from the sixth run.
const ROUNDS: u64 = 8;

/// How many records are placed in the ledger afterwards.
const RECORDS: usize = 20_000;

fn key(kind: &str, i: u64) -> Vec<u8> {
    format!("{kind}-{i:06}").into_bytes()
}

/// Runs `sql` on a connection of its own to `dsn`.
async fn admin(dsn: &str, sql: &str) -> Result<(), tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls).await?;
    let task = tokio::spawn(conn);
    let r = client.batch_execute(sql).await;
    drop(client);
    let _ = task.await;
    r
}

/// A store with a pool of one connection on a database of its own (an empty `wkcoord_record`,
/// as a replica that starts first finds it), and the database's name to drop; where the server
/// refuses `CREATE DATABASE`, on the shared one.
async fn fresh_store(dsn: &str) -> (Store, Option<String>) {
    let opts = Options {
        pool_size: 1,
        ..Options::default()
    };
    let name = common::unique("wkcoord_plans").replace('-', "_");
    let mut cfg: tokio_postgres::Config = dsn.parse().expect("the test DSN");
    let own = match admin(dsn, &format!("CREATE DATABASE {name}")).await {
        Ok(()) => {
            cfg.dbname(&name);
            Some(name)
        }
        Err(e) => {
            println!("no database of its own ({e}): the shared one");
            None
        }
    };
    let store = Store::open_config(cfg, opts).await.expect("open the store");
    (store, own)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_follow_the_table() {
    let Some(dsn) = common::dsn() else {
        return;
    };
    let (store, own) = fresh_store(dsn).await;
    let l = store
        .ledger(
            &common::unique("plans"),
            LedgerConfig {
                capacity: LEDGER_CAPACITY_MAX,
                retention: 1,
                kind: LedgerKind::Pending,
            },
        )
        .expect("a ledger");
    let anchors = store
        .anchors(&common::unique("plans"), 64)
        .expect("anchors");
    let flips = store.flips(&common::unique("plans"), 0).expect("flips");
    let counters = store.counters(&common::unique("plans")).expect("counters");
    let triggers = store.triggers(&common::unique("plans")).expect("triggers");
    let windows = store.windows(&common::unique("plans")).expect("windows");
    const RUNNER: u64 = 77;
    const PLACEHOLDER: u64 = 5;
    // Every point decision, and each batch, ROUNDS times while the table is (nearly) empty.
    for i in 0..ROUNDS {
        let now = 10 + i;
        let rec = NewRecord {
            id: 9,
            runner: RUNNER,
            deadline: u64::MAX,
        };
        l.insert(&key("ins", i), rec, now).await.expect("insert");
        let (a, b, c) = (key("a", i), key("b", i), key("c", i));
        l.place(&[&a, &b, &c], PLACEHOLDER, u64::MAX, now)
            .await
            .expect("place");
        l.claim(&a, PLACEHOLDER, 1000 + i, RUNNER, now)
            .await
            .expect("claim");
        l.touch(&a, RUNNER, now).await.expect("touch");
        l.take(&key("ins", i), 9).await.expect("take");
        l.finalize(&a, Outcome::Succeeded, 1, now)
            .await
            .expect("finalize");
        l.finalize_batch(&[&b, &c], None, Outcome::Failed, now)
            .await
            .expect("finalize batch");
        l.get(&a).await.expect("get");
        l.reconcile(now, 10).await.expect("reconcile");
        l.finalize_own(RUNNER + 1, Outcome::Failed, now, 10)
            .await
            .expect("finalize own");
        l.sweep_orphans(now, 100, 10).await.expect("sweep orphans");
        l.reclaim(0, 10).await.expect("reclaim");
        anchors.insert(i, None).await.expect("anchor insert");
        anchors.try_fire(i, now, 5).await.expect("try fire");
        anchors.advance(i, now, now + 1).await.expect("advance");
        anchors.anchor_unset(i, now).await.expect("anchor unset");
        anchors.get(i).await.expect("anchor get");
        anchors.remove(i).await.expect("anchor remove");
        let w = key("w", i);
        flips.flip(&w, 0, 1).await.expect("flip");
        counters.increment(&w).await.expect("increment");
        let run = triggers.trigger(&w).await.expect("trigger");
        triggers.finish(&w, run).await.expect("finish");
        windows.increment(&w, now, 100).await.expect("window");
    }
    // The ledger grows: RECORDS records placed, 1 000 at a time.
    let keys: Vec<Vec<u8>> = (0..RECORDS as u64).map(|i| key("big", i)).collect();
    for chunk in keys.chunks(1000) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        let b = l
            .place(&refs, PLACEHOLDER, u64::MAX, 100)
            .await
            .expect("place");
        assert_eq!(b.won, chunk.len(), "a fresh key not placed");
    }
    // Each point decision once more, on the large ledger.
    let big = key("big", RECORDS as u64 / 2);
    l.claim(&big, PLACEHOLDER, 1, RUNNER, 200)
        .await
        .expect("claim");
    l.touch(&big, RUNNER, 200).await.expect("touch");
    l.finalize(&big, Outcome::Succeeded, 1, 200)
        .await
        .expect("finalize");
    l.get(&big).await.expect("get");

    // No statement with parameters ran with a generic plan: each run was planned with its own
    // values and the table as it is.
    let pc = store.plan_cache().await.expect("the plan cache");
    let generic: Vec<String> = pc
        .statements
        .iter()
        .filter(|p| p.params > 0 && p.generic_plans != 0)
        .map(|p| {
            format!(
                "{} ran {} times with a generic plan ({} custom)",
                p.name, p.generic_plans, p.custom_plans
            )
        })
        .collect();
    assert!(
        generic.is_empty(),
        "plan_cache_mode {}: {generic:#?}",
        pc.mode
    );
    for n in [
        "ledger_insert",
        "ledger_place",
        "ledger_claim",
        "ledger_touch",
        "ledger_take",
        "ledger_finalize",
        "ledger_finalize_batch",
        "ledger_get",
        "anchor_try_fire",
        "flip",
        "trigger_start",
        "window_increment",
    ] {
        let p = pc.statements.iter().find(|p| p.name == n);
        assert!(
            p.is_some_and(|p| p.custom_plans >= ROUNDS as i64),
            "{n} is not prepared on the pool's connection, or ran without a plan of its own: {p:?}"
        );
    }
    store.close();
    drop(store);
    if let Some(db) = own {
        let _ = admin(dsn, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await;
    }
}

/// The store sets `plan_cache_mode` on its connections through the options, after the host's.
#[tokio::test]
async fn the_plan_cache_mode_joins_the_hosts_options() {
    let Some(dsn) = common::dsn() else {
        return;
    };
    let mut cfg: tokio_postgres::Config = dsn.parse().expect("the test DSN");
    cfg.options("-c statement_timeout=123s");
    let opts = Options {
        pool_size: 1,
        ..Options::default()
    };
    let store = Store::open_config(cfg, opts).await.expect("open the store");
    let pc = store.plan_cache().await.expect("the plan cache");
    assert_eq!(pc.mode, "force_custom_plan");
    store.close();
}
