//! loom models of `wkcore::coord`: every transition has exactly one winner, and a winner sees
//! what the previous winner wrote before its transition.
#![cfg(wkcore_loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::coord::{Anchor, Counter, ExclusiveTrigger, Fire, Flip, TriggerError};

/// Three runners try the same due anchor: exactly one fires; the others lose the race, or load
/// the anchor after the winner advanced it and see the next period as not due.
#[test]
fn anchor_try_fire_three_runners() {
    loom::model(|| {
        let anchor = Arc::new(Anchor::at(100).unwrap());
        let runners: Vec<_> = (0..3)
            .map(|_| {
                let anchor = anchor.clone();
                thread::spawn(move || anchor.try_fire(200, 50))
            })
            .collect();
        let outcomes: Vec<Fire> = runners.into_iter().map(|t| t.join().unwrap()).collect();
        let fired = outcomes
            .iter()
            .filter(|o| **o == Fire::Fired { previous: 100 })
            .count();
        assert_eq!(fired, 1, "{outcomes:?}");
        assert!(outcomes.iter().all(|o| matches!(
            o,
            Fire::Fired { previous: 100 } | Fire::Lost | Fire::NotDue { due_at: 250 }
        )));
        assert_eq!(anchor.get(), Some(200));
    });
}

/// The first-seen transition races a runner and an explicit advance on an unset anchor:
/// exactly one caller anchors it; the advance from a value never stored fails; a runner that
/// comes after the anchoring fires from it (period 0), never from the unset state.
#[test]
fn anchor_unset_vs_try_fire_vs_advance() {
    loom::model(|| {
        let anchor = Arc::new(Anchor::unset());
        let first = {
            let anchor = anchor.clone();
            thread::spawn(move || anchor.anchor_unset(5))
        };
        let runner = {
            let anchor = anchor.clone();
            thread::spawn(move || anchor.try_fire(10, 0))
        };
        let stray = anchor.advance(0, 7);
        let first = first.join().unwrap();
        let runner = runner.join().unwrap();
        assert!(!stray, "an unset anchor never matches an advance");
        let anchored = usize::from(first) + usize::from(runner == Fire::AnchoredFirstSeen);
        assert_eq!(anchored, 1, "first {first}, runner {runner:?}");
        match runner {
            Fire::AnchoredFirstSeen => assert_eq!(anchor.get(), Some(10)),
            Fire::Fired { previous } => {
                assert_eq!(previous, 5);
                assert_eq!(anchor.get(), Some(10));
            }
            Fire::Lost => assert_eq!(anchor.get(), Some(5)),
            Fire::NotDue { .. } => panic!("period 0 is always due"),
        }
    });
}

/// Two flippers, one winner; the recovery flip likewise.
#[test]
fn flip_two_flippers_each_way() {
    loom::model(|| {
        let flip = Arc::new(Flip::new(1));
        let other = {
            let flip = flip.clone();
            thread::spawn(move || (flip.flip(1, 2), flip.flip(2, 1)))
        };
        let mine = (flip.flip(1, 2), flip.flip(2, 1));
        let theirs = other.join().unwrap();
        // Each call flips only what it sees, so neither direction ever has two winners of one
        // state; and every recovery follows an offline flip.
        let offline = usize::from(mine.0) + usize::from(theirs.0);
        let online = usize::from(mine.1) + usize::from(theirs.1);
        assert!((1..=2).contains(&offline) && online <= offline);
        if offline == 1 {
            assert_eq!(online, 1);
        }
        assert_eq!(flip.get(), if online == offline { 1 } else { 2 });
    });
}

/// Increments from two threads return unique values and sum exactly.
#[test]
fn counter_increments_are_unique() {
    loom::model(|| {
        let counter = Arc::new(Counter::default());
        let other = {
            let counter = counter.clone();
            thread::spawn(move || [counter.increment(), counter.increment()])
        };
        let mine = [counter.increment(), counter.increment()];
        let theirs = other.join().unwrap();
        let mut all = [mine[0], mine[1], theirs[0], theirs[1]];
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3, 4]);
        assert!(mine[0] < mine[1] && theirs[0] < theirs[1]);
        assert_eq!(counter.get(), 4);
    });
}

/// Two triggers race: one starts run 1, the other is refused with it. Then a finisher races a
/// new trigger: the trigger either sees run 1 still active or starts run 2 and sees what run 1
/// wrote before finishing (the AcqRel transitions).
#[test]
fn exclusive_trigger_two_triggers_then_finish_vs_trigger() {
    loom::model(|| {
        let key = Arc::new(ExclusiveTrigger::default());
        let data = Arc::new(AtomicU64::new(0));
        let other = {
            let key = key.clone();
            thread::spawn(move || key.trigger())
        };
        let mine = key.trigger();
        let theirs = other.join().unwrap();
        let won = [mine, theirs].iter().filter(|r| **r == Ok(1)).count();
        assert_eq!(won, 1, "{mine:?} {theirs:?}");
        assert!([mine, theirs].contains(&Err(TriggerError::Busy { run: 1 })));

        let finisher = {
            let (key, data) = (key.clone(), data.clone());
            thread::spawn(move || {
                // Ordering: Relaxed; published by the finish transition, the point of the model.
                data.store(7, Ordering::Relaxed);
                assert!(key.finish(1));
            })
        };
        match key.trigger() {
            Ok(run) => {
                assert_eq!(run, 2);
                assert_eq!(
                    data.load(Ordering::Relaxed),
                    7,
                    "run 2 sees what run 1 wrote"
                );
            }
            Err(e) => assert_eq!(e, TriggerError::Busy { run: 1 }),
        }
        finisher.join().unwrap();
    });
}
