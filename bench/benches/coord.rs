//! Criterion: the coordination primitives uncontended, each beside its mutex reference
//! (`wkcore-references`) and the floor of one uncontended atomic RMW, in one group per
//! primitive; and the ledger's claim and finalization by key beside `MutexLedger` (one mutex
//! around a `HashMap`, the same contract).
//!
//! `cargo bench -p wkcore-bench --bench coord -- --warm-up-time 1 --measurement-time 3`

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use wkcore::coord::{
    Anchor, ByteKey, Counter, ExclusiveTrigger, Flip, Ledger, LedgerConfig, LedgerKind, NewRecord,
    Outcome,
};
use wkcore::metrics::Registry;
use wkcore_references::coord::{MutexAnchor, MutexExclusiveTrigger, MutexFlip, MutexLedger};

fn floor(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let (word, v) = (AtomicU64::new(0), Cell::new(0u64));
    group.bench_function("atomic_cas_floor", |b| {
        b.iter(|| {
            let current = v.get();
            v.set(current + 1);
            // Ordering: AcqRel, the ordering of a winning transition, on a word nobody else uses.
            black_box(&word)
                .compare_exchange(current, current + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
    });
}

fn anchor(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/anchor_try_fire");
    // The clock lives beside the anchor, outside criterion's closures (which it calls more than
    // once), so every iteration is due and fires.
    let (a, now) = (Anchor::at(0).unwrap(), Cell::new(0u64));
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            now.set(now.get() + 1);
            black_box(&a).try_fire(now.get(), 1)
        })
    });
    let (m, now) = (MutexAnchor::new(Some(0)), Cell::new(0u64));
    group.bench_function("mutex", |b| {
        b.iter(|| {
            now.set(now.get() + 1);
            black_box(&m).try_fire(now.get(), 1)
        })
    });
    floor(&mut group);
    group.finish();
}

fn trigger(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/exclusive_trigger_and_finish");
    let t = ExclusiveTrigger::default();
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            let run = black_box(&t).trigger().unwrap();
            t.finish(run)
        })
    });
    let m = MutexExclusiveTrigger::default();
    group.bench_function("mutex", |b| {
        b.iter(|| {
            let run = black_box(&m).trigger().unwrap();
            m.finish(run)
        })
    });
    floor(&mut group);
    group.finish();
}

fn flip(c: &mut Criterion) {
    let mut group = c.benchmark_group("coord/flip");
    // As above: the expected state lives beside the flip, so every flip wins.
    let (f, state) = (Flip::new(0), Cell::new(0u64));
    group.bench_function("wkcore", |b| {
        b.iter(|| {
            let s = state.get();
            state.set(s ^ 1);
            black_box(&f).flip(s, s ^ 1)
        })
    });
    let (m, state) = (MutexFlip::new(0), Cell::new(0u64));
    group.bench_function("mutex", |b| {
        b.iter(|| {
            let s = state.get();
            state.set(s ^ 1);
            black_box(&m).flip(s, s ^ 1)
        })
    });
    let c = Counter::default();
    group.bench_function("counter_increment", |b| {
        b.iter(|| black_box(&c).increment())
    });
    floor(&mut group);
    group.finish();
}

/// Records per timed chunk: placed (untimed), then claimed or finalized one by one (timed), then
/// reclaimed (untimed). 4096 keep both structures in the L2 cache.
const CHUNK: usize = 4096;

fn keys() -> Vec<ByteKey> {
    (0..CHUNK)
        .map(|i| ByteKey::new(format!("receipt:{i:08}").as_bytes()).unwrap())
        .collect()
}

fn record() -> NewRecord {
    NewRecord {
        id: 1,
        runner: 0,
        deadline: 3,
    }
}

fn config() -> LedgerConfig {
    LedgerConfig {
        capacity: CHUNK,
        retention: 0,
        kind: LedgerKind::Claim,
    }
}

/// Times `op` over whole chunks of records made by `prepare` (untimed), cleared by `clear`.
fn chunks<L>(
    iters: u64,
    ledger: &L,
    keys: &[ByteKey],
    prepare: impl Fn(&L, &ByteKey),
    clear: impl Fn(&L),
    op: impl Fn(&L, &ByteKey) -> bool,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = (left as usize).min(CHUNK);
        for key in &keys[..n] {
            prepare(ledger, key);
        }
        let start = Instant::now();
        for key in &keys[..n] {
            black_box(op(ledger, black_box(key)));
        }
        total += start.elapsed();
        clear(ledger);
        left -= n as u64;
    }
    total
}

fn ledger(c: &mut Criterion) {
    let keys = keys();
    let registry = Registry::new();
    let wk = Ledger::with_metrics(config(), &registry).unwrap();
    let mx = MutexLedger::new(config()).unwrap();
    let wk_place = |l: &Ledger<ByteKey>, k: &ByteKey| l.insert(k, record(), 0).unwrap();
    let mx_place = |l: &MutexLedger<ByteKey>, k: &ByteKey| l.insert(k, record(), 0).unwrap();
    let wk_claim = |l: &Ledger<ByteKey>, k: &ByteKey| l.claim(k, 1, 2, 1, 1).is_ok();
    let mx_claim = |l: &MutexLedger<ByteKey>, k: &ByteKey| l.claim(k, 1, 2, 1, 1).is_ok();
    let wk_clear = |l: &Ledger<ByteKey>| {
        l.reconcile(3, CHUNK);
        l.reclaim(3, CHUNK);
    };
    let mx_clear = |l: &MutexLedger<ByteKey>| {
        l.reconcile_all(3);
        l.reclaim_all(3);
    };
    let wk_finalize =
        |l: &Ledger<ByteKey>, k: &ByteKey| l.finalize(k, Outcome::Succeeded, 0, 2).is_ok();
    let mx_finalize =
        |l: &MutexLedger<ByteKey>, k: &ByteKey| l.finalize(k, Outcome::Succeeded, 0, 2).is_ok();

    let wk_claimed = |l: &Ledger<ByteKey>, k: &ByteKey| {
        wk_place(l, k);
        assert!(wk_claim(l, k));
    };
    let mx_claimed = |l: &MutexLedger<ByteKey>, k: &ByteKey| {
        mx_place(l, k);
        assert!(mx_claim(l, k));
    };

    let mut group = c.benchmark_group("coord/ledger_claim_by_key");
    group.bench_function("wkcore", |b| {
        b.iter_custom(|n| chunks(n, &wk, &keys, wk_place, wk_clear, wk_claim))
    });
    group.bench_function("mutex_hashmap", |b| {
        b.iter_custom(|n| chunks(n, &mx, &keys, mx_place, mx_clear, mx_claim))
    });
    floor(&mut group);
    group.finish();

    let mut group = c.benchmark_group("coord/ledger_finalize_by_key");
    group.bench_function("wkcore", |b| {
        b.iter_custom(|n| chunks(n, &wk, &keys, wk_claimed, wk_clear, wk_finalize))
    });
    group.bench_function("mutex_hashmap", |b| {
        b.iter_custom(|n| chunks(n, &mx, &keys, mx_claimed, mx_clear, mx_finalize))
    });
    floor(&mut group);
    group.finish();
}

criterion_group!(benches, anchor, trigger, flip, ledger);
criterion_main!(benches);
