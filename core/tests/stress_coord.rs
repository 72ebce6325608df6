//! Stress tests of `wkcore::coord`: threads race on one primitive while a sampler reads it, and
//! the winners the harness counted must agree with the primitive's state and with a mutex
//! reference fed the same winning transitions.
#![allow(clippy::disallowed_types)] // the harness's own atomics; the code under test uses the shim

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use wkcore::coord::{Counter, ExclusiveTrigger, Fire, TriggerError};
use wkcore_references::coord::MutexExclusiveTrigger;

const THREADS: usize = 4;
const ROUNDS: usize = 250_000;

/// Triggers and finishes race; a sampler checks that an active run is never older than the last
/// started one and that run numbers only grow. Every run is started exactly once, finished
/// exactly once, and the same winning transitions replayed on the reference give its state.
#[test]
fn exclusive_trigger_runs_are_started_and_finished_once() {
    let key = ExclusiveTrigger::default();
    let done = AtomicBool::new(false);
    let started = Mutex::new(Vec::new());
    let finished = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                let run = key.last_run();
                assert!(run >= last, "run numbers went back: {run} after {last}");
                if let Some(active) = key.active() {
                    assert!(active >= last, "active run {active} older than seen {last}");
                }
                last = run;
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..ROUNDS {
                        match key.trigger() {
                            Ok(run) => {
                                started.lock().unwrap().push(run);
                                assert!(key.finish(run), "the starter of run {run} finishes it");
                                assert!(!key.finish(run), "a second finish of run {run} won");
                                finished.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(TriggerError::Busy { .. }) => {}
                            Err(TriggerError::Exhausted) => panic!("exhausted"),
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
    });
    let mut started = started.into_inner().unwrap();
    started.sort_unstable();
    let n = started.len() as u64;
    assert!(n > 0);
    assert_eq!(
        started,
        (1..=n).collect::<Vec<_>>(),
        "each run number started once"
    );
    assert_eq!(finished.load(Ordering::Relaxed), n);
    assert_eq!(key.last_run(), n);
    assert_eq!(key.active(), None);
    let reference = MutexExclusiveTrigger::default();
    for run in 1..=n {
        assert_eq!(reference.trigger(), Ok(run));
        assert!(reference.finish(run));
    }
    assert_eq!(reference.last_run(), key.last_run());
}

/// Runners fire a period-10 anchor over a shared clock; each period fires at most once, every
/// firing advances from the previous one, and the sampler never sees the anchor go back.
#[test]
fn anchor_fires_each_period_once_under_contention() {
    let anchor = wkcore::coord::Anchor::unset();
    let clock = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let events = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                if let Some(a) = anchor.get() {
                    assert!(a >= last, "anchor went back: {a} after {last}");
                    last = a;
                }
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..ROUNDS {
                        let now = clock.fetch_add(1, Ordering::Relaxed);
                        match anchor.try_fire(now, 10) {
                            Fire::Fired { previous } => {
                                events.lock().unwrap().push((previous, now))
                            }
                            Fire::AnchoredFirstSeen => events.lock().unwrap().push((u64::MAX, now)),
                            Fire::NotDue { due_at } => assert!(due_at > now),
                            Fire::Lost => {}
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
    });
    let mut events = events.into_inner().unwrap();
    events.sort_by_key(|&(_, now)| now);
    assert_eq!(
        events[0].0,
        u64::MAX,
        "the first event anchors without firing"
    );
    for w in events.windows(2) {
        assert_eq!(w[1].0, w[0].1, "a firing advances from the previous anchor");
        assert!(w[1].1 >= w[0].1 + 10, "two firings in one period");
    }
    assert_eq!(anchor.get(), Some(events.last().unwrap().1));
}

/// Increments from every thread are exact and unique while a sampler sees the value only grow.
#[test]
fn counter_is_exact_under_contention() {
    let counter = Counter::default();
    let done = AtomicBool::new(false);
    let values = std::thread::scope(|s| {
        s.spawn(|| {
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                let v = counter.get();
                assert!(v >= last);
                last = v;
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|_| s.spawn(|| (0..ROUNDS).map(|_| counter.increment()).collect::<Vec<_>>()))
            .collect();
        let values: Vec<u64> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        done.store(true, Ordering::Release);
        values
    });
    let mut values = values;
    values.sort_unstable();
    let n = (THREADS * ROUNDS) as u64;
    assert_eq!(values, (1..=n).collect::<Vec<_>>());
    assert_eq!(counter.get(), n);
}
