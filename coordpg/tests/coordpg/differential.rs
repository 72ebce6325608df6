//! Property tests: random command sequences driven into both backends at once, every decision
//! compared (pages on `changed`, with a limit of the whole ledger so that a memory page is one
//! full pass), and every record, the length and the counts after each command.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use wkcore::coord::{HostCode, LedgerConfig, LedgerKind};
use wkcore_coordpg::contract::{
    AnchorStore, CounterStore, FlipStore, LedgerStore, NewRecord, Outcome, TriggerStore,
    WindowStore,
};
use wkcore_coordpg::memory::{
    MemoryAnchors, MemoryCounters, MemoryFlips, MemoryLedger, MemoryTriggers, MemoryWindows,
};
use wkcore_coordpg::pg::{Options, Store};

use crate::common::{self, norm};

const KEYS: usize = 5;
const CAPACITY: usize = 64;

#[derive(Clone, Debug)]
enum Cmd {
    Insert {
        k: usize,
        id: u64,
        runner: u64,
        deadline: Option<u64>,
    },
    Place {
        ks: Vec<usize>,
        placeholder: u64,
        deadline: Option<u64>,
    },
    Claim {
        k: usize,
        placeholder: u64,
        request: u64,
        runner: u64,
    },
    Finalize {
        k: usize,
        outcome: Outcome,
        payload: u64,
    },
    FinalizeBatch {
        ks: Vec<usize>,
        outcome: Outcome,
    },
    Take {
        k: usize,
        id: u64,
    },
    Touch {
        k: usize,
        runner: u64,
    },
    Reconcile,
    Reclaim,
    FinalizeOwn {
        runner: u64,
        outcome: Outcome,
    },
    SweepOrphans {
        quiet: u64,
    },
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Succeeded),
        Just(Outcome::Failed),
        Just(Outcome::Host(HostCode::new(300).unwrap())),
    ]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let k = 0..KEYS;
    let deadline = proptest::option::of(0u64..40);
    prop_oneof![
        3 => (k.clone(), 0u64..3, 0u64..3, deadline.clone())
            .prop_map(|(k, id, runner, deadline)| Cmd::Insert { k, id, runner, deadline }),
        2 => (vec(0..KEYS, 1..4), 0u64..3, deadline)
            .prop_map(|(ks, placeholder, deadline)| Cmd::Place { ks, placeholder, deadline }),
        3 => (k.clone(), 0u64..3, 1u64..5, 0u64..3)
            .prop_map(|(k, placeholder, request, runner)| Cmd::Claim { k, placeholder, request, runner }),
        3 => (k.clone(), outcome(), 0u64..9)
            .prop_map(|(k, outcome, payload)| Cmd::Finalize { k, outcome, payload }),
        1 => (vec(0..KEYS, 1..4), outcome()).prop_map(|(ks, outcome)| Cmd::FinalizeBatch { ks, outcome }),
        2 => (k.clone(), 0u64..5).prop_map(|(k, id)| Cmd::Take { k, id }),
        2 => (k, 0u64..3).prop_map(|(k, runner)| Cmd::Touch { k, runner }),
        1 => Just(Cmd::Reconcile),
        1 => Just(Cmd::Reclaim),
        1 => (0u64..3, outcome()).prop_map(|(runner, outcome)| Cmd::FinalizeOwn { runner, outcome }),
        1 => (0u64..10).prop_map(|quiet| Cmd::SweepOrphans { quiet }),
    ]
}

fn key(k: usize) -> Vec<u8> {
    format!("k{k}").into_bytes()
}

async fn one<L: LedgerStore>(l: &L, c: &Cmd, now: u64) -> String {
    let never = |d: Option<u64>| d.unwrap_or(u64::MAX);
    let keys = |ks: &[usize]| ks.iter().map(|&k| key(k)).collect::<Vec<_>>();
    match c {
        Cmd::Insert {
            k,
            id,
            runner,
            deadline,
        } => {
            let rec = NewRecord {
                id: *id,
                runner: *runner,
                deadline: never(*deadline),
            };
            norm(l.insert(&key(*k), rec, now).await)
        }
        Cmd::Place {
            ks,
            placeholder,
            deadline,
        } => {
            let owned = keys(ks);
            let ks: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
            norm(l.place(&ks, *placeholder, never(*deadline), now).await)
        }
        Cmd::Claim {
            k,
            placeholder,
            request,
            runner,
        } => norm(
            l.claim(&key(*k), *placeholder, *request, *runner, now)
                .await,
        ),
        Cmd::Finalize {
            k,
            outcome,
            payload,
        } => norm(l.finalize(&key(*k), *outcome, *payload, now).await),
        Cmd::FinalizeBatch { ks, outcome } => {
            let owned = keys(ks);
            let ks: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
            let payloads: Vec<u64> = (1..=ks.len() as u64).collect();
            norm(l.finalize_batch(&ks, Some(&payloads), *outcome, now).await)
        }
        Cmd::Take { k, id } => norm(l.take(&key(*k), *id).await),
        Cmd::Touch { k, runner } => norm(l.touch(&key(*k), *runner, now).await),
        Cmd::Reconcile => norm(l.reconcile(now, CAPACITY).await.map(|p| p.changed)),
        Cmd::Reclaim => norm(l.reclaim(now, CAPACITY).await.map(|p| p.changed)),
        Cmd::FinalizeOwn { runner, outcome } => norm(
            l.finalize_own(*runner, *outcome, now, CAPACITY)
                .await
                .map(|p| p.changed),
        ),
        Cmd::SweepOrphans { quiet } => norm(
            l.sweep_orphans(now, *quiet, CAPACITY)
                .await
                .map(|p| p.changed),
        ),
    }
}

async fn state<L: LedgerStore>(l: &L) -> String {
    let mut s = String::new();
    for k in 0..KEYS {
        s += &norm(l.get(&key(k)).await);
    }
    s + &norm(l.len().await) + &format!("{:?}", l.counts())
}

async fn check_ledger(
    store: &Store,
    retention: u64,
    cmds: &[(u64, Cmd)],
) -> Result<(), TestCaseError> {
    let config = LedgerConfig {
        capacity: CAPACITY,
        retention,
        kind: LedgerKind::Claim,
    };
    let mem = MemoryLedger::new(config).expect("a ledger");
    let pg = store
        .ledger(&common::unique("diff"), config)
        .expect("a ledger");
    let mut now = 0;
    for (i, (dt, c)) in cmds.iter().enumerate() {
        now += dt;
        let (a, b) = (one(&mem, c, now).await, one(&pg, c, now).await);
        prop_assert_eq!(&a, &b, "step {} {:?} at {}", i, c, now);
        let (a, b) = (state(&mem).await, state(&pg).await);
        prop_assert_eq!(&a, &b, "after step {} {:?} at {}", i, c, now);
    }
    Ok(())
}

#[test]
fn ledger_decisions_agree_across_backends() {
    let rt = common::runtime();
    let Some(store) = rt.block_on(common::store(Options::default())) else {
        return;
    };
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0u64..20, vec((0u64..4, cmd()), 1..40));
    runner
        .run(&strategy, |(retention, cmds)| {
            rt.block_on(check_ledger(&store, retention, &cmds))
        })
        .unwrap();
}

#[derive(Clone, Debug)]
enum Word {
    AnchorInsert {
        id: u64,
        set: bool,
    },
    AnchorRemove {
        id: u64,
    },
    TryFire {
        id: u64,
        period: u64,
    },
    Advance {
        id: u64,
        back: u64,
        ahead: u64,
        unset: bool,
    },
    AnchorUnset {
        id: u64,
    },
    Flip {
        k: usize,
        from: u64,
        to: u64,
    },
    Increment {
        k: usize,
    },
    Trigger {
        k: usize,
    },
    Finish {
        k: usize,
        run: u64,
    },
    Window {
        k: usize,
        window: u64,
    },
    Reads {
        k: usize,
        id: u64,
    },
}

fn word() -> impl Strategy<Value = Word> {
    let id = 0u64..4;
    let k = 0usize..3;
    prop_oneof![
        1 => (id.clone(), any::<bool>()).prop_map(|(id, set)| Word::AnchorInsert { id, set }),
        1 => id.clone().prop_map(|id| Word::AnchorRemove { id }),
        2 => (id.clone(), 0u64..5).prop_map(|(id, period)| Word::TryFire { id, period }),
        1 => (id.clone(), 0u64..3, 0u64..2, proptest::bool::weighted(0.2))
            .prop_map(|(id, back, ahead, unset)| Word::Advance { id, back, ahead, unset }),
        1 => id.clone().prop_map(|id| Word::AnchorUnset { id }),
        1 => (k.clone(), 0u64..3, 0u64..3).prop_map(|(k, from, to)| Word::Flip { k, from, to }),
        1 => k.clone().prop_map(|k| Word::Increment { k }),
        1 => k.clone().prop_map(|k| Word::Trigger { k }),
        1 => (k.clone(), 0u64..6).prop_map(|(k, run)| Word::Finish { k, run }),
        1 => (k.clone(), 0u64..6).prop_map(|(k, window)| Word::Window { k, window }),
        1 => (k, id).prop_map(|(k, id)| Word::Reads { k, id }),
    ]
}

struct Words<A, F, C, T, W> {
    a: A,
    f: F,
    c: C,
    t: T,
    w: W,
}

async fn one_word<A, F, C, T, W>(s: &Words<A, F, C, T, W>, op: &Word, now: u64) -> String
where
    A: AnchorStore,
    F: FlipStore,
    C: CounterStore,
    T: TriggerStore,
    W: WindowStore,
{
    let key = |k: usize| format!("w{k}").into_bytes();
    match *op {
        Word::AnchorInsert { id, set } => norm(s.a.insert(id, set.then_some(now)).await),
        Word::AnchorRemove { id } => norm(s.a.remove(id).await),
        Word::TryFire { id, period } => norm(s.a.try_fire(id, now, period).await),
        Word::Advance {
            id,
            back,
            ahead,
            unset,
        } => {
            let exp = if unset {
                u64::MAX
            } else {
                now.saturating_sub(back)
            };
            norm(s.a.advance(id, exp, now + ahead).await)
        }
        Word::AnchorUnset { id } => norm(s.a.anchor_unset(id, now).await),
        Word::Flip { k, from, to } => norm(s.f.flip(&key(k), from, to).await),
        Word::Increment { k } => norm(s.c.increment(&key(k)).await),
        Word::Trigger { k } => norm(s.t.trigger(&key(k)).await),
        Word::Finish { k, run } => norm(s.t.finish(&key(k), run).await),
        Word::Window { k, window } => norm(s.w.increment(&key(k), now, window).await),
        Word::Reads { k, id } => [
            norm(s.a.get(id).await),
            norm(s.a.len().await),
            norm(s.f.get(&key(k)).await),
            norm(s.c.get(&key(k)).await),
            norm(s.t.active(&key(k)).await),
            norm(s.t.last_run(&key(k)).await),
            norm(s.w.count(&key(k), now).await),
        ]
        .join(" "),
    }
}

#[test]
fn anchor_and_word_decisions_agree_across_backends() {
    let rt = common::runtime();
    let Some(store) = rt.block_on(common::store(Options::default())) else {
        return;
    };
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&vec((0u64..3, word()), 1..60), |ops| {
            rt.block_on(async {
                let mem = Words {
                    a: MemoryAnchors::new(1024).unwrap(),
                    f: MemoryFlips::new(1),
                    c: MemoryCounters::new(),
                    t: MemoryTriggers::new(),
                    w: MemoryWindows::new(),
                };
                let n = common::unique("w");
                let pg = Words {
                    a: store.anchors(&n, 1024).unwrap(),
                    f: store.flips(&n, 1).unwrap(),
                    c: store.counters(&n).unwrap(),
                    t: store.triggers(&n).unwrap(),
                    w: store.windows(&n).unwrap(),
                };
                let mut now = 0;
                for (i, (dt, op)) in ops.iter().enumerate() {
                    now += dt;
                    let (a, b) = (one_word(&mem, op, now).await, one_word(&pg, op, now).await);
                    prop_assert_eq!(&a, &b, "step {} {:?} at {}", i, op, now);
                }
                Ok(())
            })
        })
        .unwrap();
}
