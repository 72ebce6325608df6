//! Races on one key across several stores (replicas, each its own pool) and tasks: exactly one
//! winner per decision, and the handles' counts add up. Bounded by rounds, never by time.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::Barrier;
use wkcore::coord::{LedgerConfig, LedgerKind};
use wkcore_coordpg::contract::{
    AnchorStore, CounterStore, Error, Fire, LedgerStore, Outcome, RecordState, TriggerError,
    TriggerStore, Verdict,
};
use wkcore_coordpg::pg::{Options, PgLedger, Store};

use crate::common;

const REPLICAS: usize = 3;
const TASKS: usize = 4;
const ROUNDS: u64 = 8;

async fn replicas() -> Option<Vec<Store>> {
    let mut v = Vec::new();
    for _ in 0..REPLICAS {
        v.push(
            common::store(Options {
                pool_size: TASKS,
                ..Options::default()
            })
            .await?,
        );
    }
    Some(v)
}

/// Runs `f(replica, task)` on every racer at once and collects the results.
async fn race<T, F, Fut>(n: usize, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(n));
    let mut hs = Vec::new();
    for i in 0..n {
        let b = Arc::clone(&barrier);
        let fut = f(i);
        hs.push(tokio::spawn(async move {
            b.wait().await;
            fut.await
        }));
    }
    let mut out = Vec::new();
    for h in hs {
        out.push(h.await.expect("a racer"));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_claim_and_one_finalization_win_each_record() {
    let Some(stores) = replicas().await else {
        return;
    };
    let name = common::unique("race");
    let cfg = LedgerConfig {
        capacity: 1024,
        retention: 1000,
        kind: LedgerKind::Claim,
    };
    let ledgers: Vec<Arc<PgLedger>> = stores
        .iter()
        .map(|s| Arc::new(s.ledger(&name, cfg).unwrap()))
        .collect();
    let n = REPLICAS * TASKS;
    for round in 0..ROUNDS {
        let key = format!("r{round}").into_bytes();
        let b = ledgers[0].place(&[&key], 9, 100, 1).await.unwrap();
        assert_eq!(b.won, 1);
        let got = race(n, |i| {
            let l = Arc::clone(&ledgers[i % REPLICAS]);
            let key = key.clone();
            async move { l.claim(&key, 9, 100 + i as u64, 1 + i as u64, 2).await }
        })
        .await;
        let won: Vec<_> = got
            .iter()
            .filter(|d| d.as_ref().unwrap().result == Verdict::Won)
            .collect();
        assert_eq!(won.len(), 1, "round {round}: {got:?}");
        for d in &got {
            let d = d.as_ref().unwrap();
            assert!(
                d.result == Verdict::Won || d.result == Verdict::Lost,
                "{d:?}"
            );
            assert_eq!(d.state, Some(RecordState::Claimed));
        }
        let got = race(n, |i| {
            let l = Arc::clone(&ledgers[i % REPLICAS]);
            let key = key.clone();
            let outcome = if i % 2 == 0 {
                Outcome::Succeeded
            } else {
                Outcome::Failed
            };
            async move { l.finalize(&key, outcome, i as u64, 3).await }
        })
        .await;
        let winners: Vec<_> = got
            .iter()
            .map(|d| d.as_ref().unwrap())
            .filter(|d| d.won())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {got:?}");
        let final_state = winners[0].state;
        for d in &got {
            let d = d.as_ref().unwrap();
            assert_eq!(d.state, final_state, "every loser is told what won");
        }
        let r = ledgers[0].get(&key).await.unwrap().unwrap();
        assert_eq!(Some(r.state), final_state);
        assert_eq!(r.duplicates, n as u64 - 1);
    }
    let total = ledgers.iter().fold((0, 0, 0, 0), |acc, l| {
        let c = l.counts();
        (
            acc.0 + c.claims_won,
            acc.1 + c.claims_lost,
            acc.2 + c.finalizations_won,
            acc.3 + c.finalizations_duplicate,
        )
    });
    let lost = ROUNDS * (n as u64 - 1);
    assert_eq!(total, (ROUNDS, lost, ROUNDS, lost));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trigger_one_firing_and_unique_counter_values() {
    let Some(stores) = replicas().await else {
        return;
    };
    let name = common::unique("race");
    let n = REPLICAS * TASKS;
    let triggers: Vec<_> = stores
        .iter()
        .map(|s| Arc::new(s.triggers(&name).unwrap()))
        .collect();
    let anchors: Vec<_> = stores
        .iter()
        .map(|s| Arc::new(s.anchors(&name, 1024).unwrap()))
        .collect();
    let counters: Vec<_> = stores
        .iter()
        .map(|s| Arc::new(s.counters(&name).unwrap()))
        .collect();
    for round in 0..ROUNDS {
        let key = format!("t{round}").into_bytes();
        let got = race(n, |i| {
            let t = Arc::clone(&triggers[i % REPLICAS]);
            let key = key.clone();
            async move { t.trigger(&key).await }
        })
        .await;
        let mut runs = 0;
        for r in &got {
            match r {
                Ok(run) => {
                    assert_eq!(*run, 1);
                    runs += 1;
                }
                Err(Error::Trigger(TriggerError::Busy { run })) => assert_eq!(*run, 1),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(runs, 1, "round {round}: one run starts");
        assert!(triggers[1].finish(&key, 1).await.unwrap());
        assert_eq!(triggers[2].active(&key).await.unwrap(), None);

        anchors[0].insert(round, Some(0)).await.unwrap();
        let got = race(n, |i| {
            let a = Arc::clone(&anchors[i % REPLICAS]);
            async move { a.try_fire(round, 10, 5).await }
        })
        .await;
        let mut fired = 0;
        for f in &got {
            match f.as_ref().unwrap() {
                Fire::Fired { previous } => {
                    assert_eq!(*previous, 0);
                    fired += 1;
                }
                Fire::Lost | Fire::NotDue { due_at: 15 } => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(fired, 1, "round {round}: one firing");
        assert_eq!(anchors[1].get(round).await.unwrap(), Some(10));
    }
    let key = b"c".to_vec();
    let got = race(n, |i| {
        let c = Arc::clone(&counters[i % REPLICAS]);
        let key = key.clone();
        async move {
            let mut v = Vec::new();
            for _ in 0..ROUNDS {
                v.push(c.increment(&key).await.unwrap());
            }
            v
        }
    })
    .await;
    let all: HashSet<u64> = got.into_iter().flatten().collect();
    let want: HashSet<u64> = (1..=n as u64 * ROUNDS).collect();
    assert_eq!(all, want, "every increment returns its own value");
}
