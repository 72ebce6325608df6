//! loom models of `SlotAdmission`: the admission CAS, the ring and its segment installs, the
//! released view, the readers (snapshot, counters, queued proposals), the config change tickets
//! and the consumer gate.
//!
//! Under loom the ring's first segment holds 2 places (`ring.rs`), so these small models cross
//! segment boundaries and race on segment installs.
//!
//! The models of the decision run under every strategy (`mod production`, `mod stale_state_word`
//! ...): the degraded ones force the slow paths (a view refresh, a stale state word, a failed
//! CAS) into every interleaving.
#![cfg(wkcore_loom)]

use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::admission::{
    AdmissionError, AdmissionResult, ConfigChangeError, Control, ControlKind, FailFirstCas,
    Production, ProposalClass, RefreshEveryAdmission, SlotAdmission, SlotLimits, SlotStrategy,
    StaleStateWord,
};

const FG: ProposalClass = ProposalClass::Foreground;
const BG: ProposalClass = ProposalClass::Background;
const PROPOSE: ControlKind = ControlKind::Propose;
const CONFIG_CHANGE: ControlKind = ControlKind::ConfigChange;
/// A kind that is not a proposal and needs no leader.
const OTHER: ControlKind = ControlKind::CompactLog;

fn leader<S: SlotStrategy>(total: u32, background: u32) -> Arc<SlotAdmission<u64, S>> {
    let slot = SlotAdmission::builder(SlotLimits::new(total, background))
        .without_metrics()
        .build()
        .unwrap()
        .with_strategy::<S>();
    slot.set_leader();
    Arc::new(slot)
}

/// A consumer thread that drains `rounds` times and returns what it took, in order.
fn spawn_consumer<S: SlotStrategy>(
    slot: &Arc<SlotAdmission<u64, S>>,
    rounds: usize,
) -> thread::JoinHandle<Vec<u64>> {
    let consumer = slot.clone();
    thread::spawn(move || {
        let mut taken = Vec::new();
        for _ in 0..rounds {
            consumer.drain_with(usize::MAX, |c| taken.push(c.item));
        }
        taken
    })
}

fn drain_all<S: SlotStrategy>(slot: &SlotAdmission<u64, S>) -> Vec<Control<u64>> {
    let mut out = Vec::new();
    slot.drain(usize::MAX, &mut out);
    out
}

/// Two producers race for the last place: exactly one wins, the other is `Busy`, and the winner's
/// item is the one queued.
fn admit_vs_admit_at_the_total_limit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(1, 1);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, FG, 1).is_ok());
        let mine = slot.admit(PROPOSE, FG, 2).is_ok();
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one admission fits");
        let taken = drain_all(&slot);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].item, if mine { 2 } else { 1 });
        assert_eq!(slot.snapshot().queued, 0);
    });
}

/// Two background producers race for the last background place while foreground room remains:
/// one is admitted, the other `Throttled`, and the foreground reserve is untouched.
fn admit_vs_admit_at_the_background_limit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(3, 1);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, BG, 1).map_err(|r| r.error));
        let mine = slot.admit(PROPOSE, BG, 2).map_err(|r| r.error);
        let theirs = t.join().unwrap();
        match (mine, theirs) {
            (Ok(_), Err(AdmissionError::Throttled)) | (Err(AdmissionError::Throttled), Ok(_)) => {}
            other => panic!("unexpected outcomes {other:?}"),
        }
        slot.admit(PROPOSE, FG, 3).unwrap();
        slot.admit(PROPOSE, FG, 4).unwrap();
        assert_eq!(slot.snapshot().queued, 3);
    });
}

/// A producer admits three items through a ring of two places while the consumer drains: slots
/// are reused only after they are taken (loom checks every cell access), nothing is lost or taken
/// twice, FIFO holds, and the background quota comes back exactly.
fn admit_vs_drain_reuses_slots_safely<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(2, 1);
        let t = spawn_consumer(&slot, 2);
        let mut admitted = Vec::new();
        for item in 1..=3u64 {
            let class = if item == 2 { BG } else { FG };
            if slot.admit(PROPOSE, class, item).is_ok() {
                admitted.push(item);
            }
        }
        let mut taken = t.join().unwrap();
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        assert_eq!(
            taken, admitted,
            "every admitted item drained once, in order"
        );
        let s = slot.snapshot();
        assert_eq!((s.queued, s.queued_background), (0, 0));
        slot.admit(PROPOSE, BG, 4).unwrap();
        slot.admit(PROPOSE, FG, 5).unwrap();
    });
}

/// A producer refreshes its view from the consumer's line while the consumer drains: with a
/// limit of one, the second admission succeeds only if the first item was taken, and then it
/// reuses the same ring place.
fn refresh_view_sees_the_take_that_made_room<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(1, 1);
        slot.admit(PROPOSE, FG, 1).unwrap();
        let t = spawn_consumer(&slot, 1);
        let second = slot.admit(PROPOSE, FG, 2);
        let mut taken = t.join().unwrap();
        if let Err(r) = &second {
            assert_eq!(r.error, AdmissionError::Busy);
        }
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        let expected: &[u64] = if second.is_ok() { &[1, 2] } else { &[1] };
        assert_eq!(taken, expected);
    });
}

/// A batch and a single admission race for three places: the limit holds, the batch's admitted
/// prefix is contiguous and in order, and the counts return to zero after the drain.
fn batch_admit_vs_single_admit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(3, 3);
        let other = slot.clone();
        let t = thread::spawn(move || other.admit(PROPOSE, BG, 9).is_ok());
        let batch = slot.admit_batch_copied(PROPOSE, BG, &[1, 2, 3]);
        let single = t.join().unwrap();
        assert_eq!(batch.admitted + usize::from(single), 3);
        if batch.admitted < 3 {
            assert_eq!(batch.refused, Some(AdmissionError::Busy));
        }
        let taken: Vec<u64> = drain_all(&slot).into_iter().map(|c| c.item).collect();
        let run: Vec<u64> = taken.iter().copied().filter(|&i| i != 9).collect();
        assert_eq!(run, (1..=batch.admitted as u64).collect::<Vec<_>>());
        assert_eq!(taken.len(), batch.admitted + usize::from(single));
        if single {
            let at = taken.iter().position(|&i| i == 9).unwrap();
            assert!(
                at == 0 || at == taken.len() - 1,
                "a run is never split: {taken:?}"
            );
        }
        assert_eq!(slot.snapshot().queued, 0);
    });
}

// The readers below run in a spawned thread and the writers they race in the main thread:
// loom 0.7 explores the schedules in which a spawned thread that only loads runs *after* the main
// thread's writes (and, by backtracking, before them), but it misses the schedules in which a
// spawned writer goes before a main thread that only loads (loom issue 392).

/// The counters never report a foreground `ok` that no proposal earned: a non-proposal
/// admission is subtracted from the admitted count by the time a reader sees it there.
fn counters_vs_other_kind_admit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(4, 2);
        let reader = slot.clone();
        let t = thread::spawn(move || {
            let seen = reader.counters();
            assert_eq!(seen.total(), 0, "no proposal was made: {seen:?}");
        });
        slot.admit(OTHER, FG, 1).unwrap();
        t.join().unwrap();
        assert_eq!(slot.counters().total(), 0);
        assert_eq!(slot.snapshot().queued, 1);
    });
}

/// A proposal and a non-proposal admission race with a reader that reads the counters twice:
/// foreground `ok` never goes above the one proposal, never goes back, and ends exact.
fn counters_vs_proposal_and_other_kind_admit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(4, 2);
        let (reader, b) = (slot.clone(), slot.clone());
        let t = thread::spawn(move || {
            let first = reader.counters().get(FG, AdmissionResult::Ok);
            let second = reader.counters().get(FG, AdmissionResult::Ok);
            assert!(first <= second && second <= 1, "ok went {first}, {second}");
        });
        let other = thread::spawn(move || b.admit(OTHER, FG, 2).unwrap());
        slot.admit(PROPOSE, FG, 1).unwrap();
        t.join().unwrap();
        other.join().unwrap();
        let last = slot.counters();
        assert_eq!(
            (last.get(FG, AdmissionResult::Ok), last.total()),
            (1, 1),
            "{last:?}"
        );
    });
}

/// A producer that is refused because the slot failed sees the fatal code that failed it.
fn fail_vs_admit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(4, 2);
        let producer = slot.clone();
        let t = thread::spawn(move || {
            match producer.admit(PROPOSE, FG, 1).map_err(|r| r.error) {
                Ok(_) | Err(AdmissionError::Fatal(7)) => {}
                other => panic!("unexpected outcome {other:?}"),
            }
            let s = producer.snapshot();
            assert!(s.fatal.is_none() || s.fatal == Some(7), "{s:?}");
        });
        assert!(slot.fail(7));
        t.join().unwrap();
        assert_eq!(slot.snapshot().fatal, Some(7));
        assert_eq!(
            slot.admit(PROPOSE, FG, 2).unwrap_err().error,
            AdmissionError::Fatal(7)
        );
    });
}

/// A snapshot taken while a producer admits (one foreground, one background proposal) and a
/// consumer drains never reports more than can be queued: what the producer will ever admit
/// minus what the harness saw drained before the snapshot.
fn snapshot_vs_admit_and_drain<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(4, 2);
        // Taken by drains that returned: total, background.
        let drained = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let sampler = {
            let (slot, drained) = (slot.clone(), drained.clone());
            thread::spawn(move || {
                let before = [0, 1].map(|i| drained[i].load(Ordering::Acquire));
                let s = slot.snapshot();
                assert!(
                    u64::from(s.queued) <= 2 - before[0],
                    "queued {} with {} of 2 drained",
                    s.queued,
                    before[0]
                );
                assert!(
                    u64::from(s.queued_background) <= 1 - before[1],
                    "queued_background {} with {} of 1 drained",
                    s.queued_background,
                    before[1]
                );
                // A background proposal is queued only among the queued items: a snapshot that
                // pairs a newer released total with an older released background breaks this.
                assert!(
                    s.queued_background <= s.queued && s.queued_proposals <= s.queued,
                    "queued {} but queued_background {}, queued_proposals {}",
                    s.queued,
                    s.queued_background,
                    s.queued_proposals
                );
            })
        };
        let consumer = {
            let (slot, drained) = (slot.clone(), drained.clone());
            thread::spawn(move || {
                let (mut total, mut background) = (0, 0);
                slot.drain_with(usize::MAX, |c| {
                    total += 1;
                    background += u64::from(c.class == BG);
                });
                drained[0].fetch_add(total, Ordering::Release);
                drained[1].fetch_add(background, Ordering::Release);
            })
        };
        slot.admit(PROPOSE, FG, 1).unwrap();
        slot.admit(PROPOSE, BG, 2).unwrap();
        sampler.join().unwrap();
        consumer.join().unwrap();
        let rest = drain_all(&slot).len() as u64;
        assert_eq!(rest + drained[0].load(Ordering::Relaxed), 2);
        assert_eq!(slot.snapshot().queued, 0);
    });
}

/// `queued_proposals` is never below the truth: a proposal whose admission returned before the
/// snapshot, and that no drain had started to take when the snapshot ended, is reported, even
/// while a non-proposal admission (which the snapshot subtracts) races it and the consumer drains.
/// (Counting the other kind before its CAS would report 0 here.) When everything is done it is
/// exact.
fn queued_proposals_vs_admits_and_drain<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(4, 2);
        // Set after the proposal's admission returned; before the drain starts.
        let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let sampler = {
            let (slot, flags) = (slot.clone(), flags.clone());
            thread::spawn(move || {
                let proposed = flags[0].load(Ordering::Acquire);
                let s = slot.snapshot();
                let draining = flags[1].load(Ordering::Acquire);
                assert!(s.queued_proposals <= s.queued, "{s:?}");
                if proposed && !draining {
                    assert!(
                        s.queued_proposals >= 1,
                        "a queued proposal unreported: {s:?}"
                    );
                }
            })
        };
        let other = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.admit(OTHER, FG, 2).unwrap();
            })
        };
        slot.admit(PROPOSE, FG, 1).unwrap();
        flags[0].store(true, Ordering::Release);
        flags[1].store(true, Ordering::Release);
        let mut proposals_taken = 0;
        slot.drain_with(usize::MAX, |c| {
            proposals_taken += u32::from(c.kind == PROPOSE)
        });
        sampler.join().unwrap();
        other.join().unwrap();
        // Nothing in flight: exact.
        let s = slot.snapshot();
        assert_eq!(s.queued_proposals, 1 - proposals_taken, "{s:?}");
        drain_all(&slot);
        let s = slot.snapshot();
        assert_eq!((s.queued, s.queued_proposals), (0, 0));
    });
}

/// A snapshot never reports more queued than the limit, though a producer fills the place the
/// consumer frees while it reads: when it sees the new admission in the state word it also sees
/// the release that made its room (the admission CAS is `Release`), and retries.
fn snapshot_never_above_the_limit<S: SlotStrategy>() {
    loom::model(|| {
        let slot = leader::<S>(1, 1);
        slot.admit(PROPOSE, FG, 1).unwrap();
        let reader = {
            let slot = slot.clone();
            thread::spawn(move || {
                let s = slot.snapshot();
                assert!(s.queued <= 1 && s.queued_proposals <= 1, "{s:?}");
            })
        };
        let consumer = spawn_consumer(&slot, 1);
        let second = slot.admit(PROPOSE, FG, 2).is_ok();
        reader.join().unwrap();
        let taken = consumer.join().unwrap();
        assert!(!second || taken == [1]);
    });
}

/// Instantiates the models of the decision for one strategy.
macro_rules! per_strategy {
    ($($module:ident: $strategy:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn admit_vs_admit_at_the_total_limit() {
                super::admit_vs_admit_at_the_total_limit::<$strategy>();
            }
            #[test]
            fn admit_vs_admit_at_the_background_limit() {
                super::admit_vs_admit_at_the_background_limit::<$strategy>();
            }
            #[test]
            fn admit_vs_drain_reuses_slots_safely() {
                super::admit_vs_drain_reuses_slots_safely::<$strategy>();
            }
            #[test]
            fn refresh_view_sees_the_take_that_made_room() {
                super::refresh_view_sees_the_take_that_made_room::<$strategy>();
            }
            #[test]
            fn batch_admit_vs_single_admit() {
                super::batch_admit_vs_single_admit::<$strategy>();
            }
            #[test]
            fn counters_vs_other_kind_admit() {
                super::counters_vs_other_kind_admit::<$strategy>();
            }
            #[test]
            fn counters_vs_proposal_and_other_kind_admit() {
                super::counters_vs_proposal_and_other_kind_admit::<$strategy>();
            }
            #[test]
            fn fail_vs_admit() {
                super::fail_vs_admit::<$strategy>();
            }
            #[test]
            fn snapshot_vs_admit_and_drain() {
                super::snapshot_vs_admit_and_drain::<$strategy>();
            }
            #[test]
            fn snapshot_never_above_the_limit() {
                super::snapshot_never_above_the_limit::<$strategy>();
            }
            #[test]
            fn queued_proposals_vs_admits_and_drain() {
                super::queued_proposals_vs_admits_and_drain::<$strategy>();
            }
        }
    )*};
}
per_strategy!(
    production: Production,
    refresh_every_admission: RefreshEveryAdmission,
    stale_state_word: StaleStateWord,
    fail_first_cas: FailFirstCas,
);

/// A demotion (or close) that happens before an admission is visible to it: once the producer has
/// seen the change, it admits nothing.
#[test]
fn admit_vs_demote_and_close() {
    for close in [false, true] {
        loom::model(move || {
            let slot = leader::<Production>(4, 2);
            let changed = Arc::new(AtomicBool::new(false));
            let (s2, c2) = (slot.clone(), changed.clone());
            let t = thread::spawn(move || {
                if close {
                    s2.close();
                } else {
                    s2.demote();
                }
                c2.store(true, Ordering::Release);
            });
            let seen = changed.load(Ordering::Acquire);
            let result = slot.admit(PROPOSE, FG, 1).map_err(|r| r.error);
            t.join().unwrap();
            let expected = if close {
                AdmissionError::Closed
            } else {
                AdmissionError::NotLeader
            };
            if seen {
                assert_eq!(result.map(|_| ()), Err(expected));
            }
            let queued = drain_all(&slot).len();
            assert_eq!(queued, usize::from(result.is_ok()));
            assert_eq!(slot.admit(PROPOSE, FG, 2).unwrap_err().error, expected);
        });
    }
}

/// Two consumers never take the same item, and between them take everything once (the gate's
/// swap and store are loom atomics: loom checks that the cursor is never touched by both).
#[test]
fn drain_vs_drain() {
    loom::model(|| {
        let slot = leader::<Production>(4, 2);
        slot.admit_batch_copied(PROPOSE, FG, &[1, 2, 3]);
        let other = slot.clone();
        let t = thread::spawn(move || {
            let mut taken = Vec::new();
            other.drain_with(2, |c| taken.push(c.item));
            taken
        });
        let mut mine = Vec::new();
        slot.drain_with(2, |c| mine.push(c.item));
        let mut all = t.join().unwrap();
        all.extend(mine);
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3]);
    });
}

/// Two consumers race each other and a producer: the gate keeps the cursor to one of them at a
/// time (loom checks every access to it), each takes items in FIFO order, nothing is taken twice
/// and nothing is lost.
#[test]
fn two_consumers_race_a_producer() {
    loom::model(|| {
        let slot = leader::<Production>(2, 2);
        let consumers = [spawn_consumer(&slot, 1), spawn_consumer(&slot, 1)];
        let mut admitted = Vec::new();
        for item in 1..=2u64 {
            if slot.admit(PROPOSE, FG, item).is_ok() {
                admitted.push(item);
            }
        }
        let mut all = Vec::new();
        for consumer in consumers {
            let taken = consumer.join().unwrap();
            assert!(taken.windows(2).all(|w| w[0] < w[1]), "FIFO: {taken:?}");
            all.extend(taken);
        }
        all.extend(drain_all(&slot).into_iter().map(|c| c.item));
        all.sort_unstable();
        assert_eq!(all, admitted, "every admitted item taken exactly once");
    });
}

/// The consumer takes single admissions that follow each other with the same kind and class as
/// one run, reading the stamp of each next place while its producer may still be writing it: a
/// place whose item is not published yet ends the run (loom checks every cell access: the scan's
/// stamp load must be what publishes the item), and nothing is lost, taken twice or handed over
/// with another item's class.
#[test]
fn singles_are_taken_as_one_run_while_published() {
    loom::model(|| {
        let slot = leader::<Production>(4, 2);
        slot.admit(PROPOSE, FG, 1).unwrap();
        let producer = slot.clone();
        let t = thread::spawn(move || {
            // Place 1 (the first segment's last), then place 2 (the next segment's first).
            producer.admit(PROPOSE, FG, 2).unwrap();
            producer.admit(PROPOSE, BG, 3).unwrap();
        });
        let mut taken = drain_all(&slot);
        t.join().unwrap();
        taken.extend(drain_all(&slot));
        let got: Vec<_> = taken.iter().map(|c| (c.item, c.class)).collect();
        assert_eq!(
            got,
            [(1, FG), (2, FG), (3, BG)],
            "FIFO, each with its class"
        );
        let s = slot.snapshot();
        assert_eq!((s.queued, s.queued_background), (0, 0));
    });
}

/// Runs of two wrap a ring of two places while the consumer drains: an interior place of one lap
/// becomes the head of the next, and a head's stamp left from the previous lap must never be
/// mistaken for a new run (the consumer checks the lap's ticket; it never writes the ring).
#[test]
fn batch_runs_wrap_the_ring_while_draining() {
    loom::model(|| {
        let slot = leader::<Production>(2, 2);
        let t = spawn_consumer(&slot, 2);
        let mut admitted = Vec::new();
        // Items 1 and 2 as one run (heads at place 0); then 3 alone, then 4 and 5 as a run,
        // whichever fit: heads move between places 0 and 1 from lap to lap.
        admitted.extend(
            [1, 2]
                .into_iter()
                .take(slot.admit_batch_copied(PROPOSE, FG, &[1, 2]).admitted),
        );
        if slot.admit(PROPOSE, BG, 3).is_ok() {
            admitted.push(3);
        }
        admitted.extend(
            [4, 5]
                .into_iter()
                .take(slot.admit_batch_copied(PROPOSE, FG, &[4, 5]).admitted),
        );
        let mut taken = t.join().unwrap();
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        assert_eq!(
            taken, admitted,
            "every admitted item drained once, in order"
        );
        assert_eq!(slot.snapshot().queued, 0);
    });
}

/// A config change is pending (ticket `t1`). Two resolves of `t1` race each other and a second
/// config change: exactly one resolve wins; the second change is admitted only once the bit is
/// clear, gets a newer ticket, and its bit is never cleared by the race (the clear of `t1`
/// follows `t1`'s set, and the second change's set follows the clear). It then resolves.
#[test]
fn config_change_admit_vs_resolve_vs_admit() {
    loom::model(|| {
        let slot = leader::<Production>(4, 2);
        let t1 = slot
            .admit(CONFIG_CHANGE, FG, 1)
            .unwrap()
            .config_change
            .unwrap();
        let resolver = {
            let slot = slot.clone();
            thread::spawn(move || slot.resolve_config_change(t1))
        };
        let admitter = {
            let slot = slot.clone();
            thread::spawn(move || slot.admit(CONFIG_CHANGE, FG, 2).map_err(|r| r.error))
        };
        let mine = slot.resolve_config_change(t1);
        let theirs = resolver.join().unwrap();
        let second = admitter.join().unwrap();
        assert!(mine.is_ok() ^ theirs.is_ok(), "{mine:?} {theirs:?}");
        assert!([mine, theirs].contains(&Err(ConfigChangeError::Stale)));
        match second {
            Ok(admission) => {
                let t2 = admission
                    .config_change
                    .expect("a config change has a ticket");
                assert!(t2 > t1);
                assert!(
                    slot.snapshot().config_change_pending,
                    "the second change's bit"
                );
                assert_eq!(
                    slot.resolve_config_change(t1),
                    Err(ConfigChangeError::Stale)
                );
                assert_eq!(slot.resolve_config_change(t2), Ok(()));
            }
            Err(error) => assert_eq!(error, AdmissionError::ConfigChangePending),
        }
        assert!(!slot.snapshot().config_change_pending);
        assert!(slot.admit(CONFIG_CHANGE, FG, 3).is_ok());
    });
}

/// A stale resolve (of a change already resolved) races a new config change: it is refused
/// whenever it runs, and never clears the new change's bit.
#[test]
fn config_change_stale_resolve_vs_new_config_change() {
    loom::model(|| {
        let slot = leader::<Production>(4, 2);
        let t1 = slot
            .admit(CONFIG_CHANGE, FG, 1)
            .unwrap()
            .config_change
            .unwrap();
        slot.resolve_config_change(t1).unwrap();
        let stale = {
            let slot = slot.clone();
            thread::spawn(move || slot.resolve_config_change(t1))
        };
        let t2 = slot
            .admit(CONFIG_CHANGE, FG, 2)
            .unwrap()
            .config_change
            .unwrap();
        assert_eq!(stale.join().unwrap(), Err(ConfigChangeError::Stale));
        assert!(t2 > t1);
        let s = slot.snapshot();
        assert!(s.config_change_pending, "{s:?}");
        assert_eq!(
            slot.admit(CONFIG_CHANGE, FG, 3).unwrap_err().error,
            AdmissionError::ConfigChangePending
        );
        assert_eq!(slot.resolve_config_change(t2), Ok(()));
    });
}

/// Two producers race to install the ring's segments (a batch across the first two segments and
/// a single admission) while the consumer drains: one install wins per segment and the loser's
/// copy is freed, nobody writes into a segment another producer's items are in, and the consumer
/// reads a missing segment as nothing published. Nothing is lost or taken twice; the batch stays
/// one run, in order.
#[test]
fn segment_install_race() {
    loom::model(|| {
        let slot = leader::<Production>(4, 4);
        let consumer = spawn_consumer(&slot, 1);
        let single = {
            let slot = slot.clone();
            thread::spawn(move || slot.admit(PROPOSE, FG, 9).is_ok())
        };
        let batch = slot.admit_batch_copied(PROPOSE, FG, &[1, 2, 3]);
        let single = single.join().unwrap();
        let mut taken = consumer.join().unwrap();
        taken.extend(drain_all(&slot).into_iter().map(|c| c.item));
        assert_eq!(taken.len(), batch.admitted + usize::from(single));
        let run: Vec<u64> = taken.iter().copied().filter(|&i| i != 9).collect();
        assert_eq!(run, (1..=batch.admitted as u64).collect::<Vec<_>>());
        // Two segments of two places each, whoever installed them.
        let used = slot.memory_bytes();
        slot.admit(PROPOSE, FG, 10).unwrap();
        assert_eq!(
            slot.memory_bytes(),
            used,
            "a full lap allocates nothing more"
        );
    });
}

/// A take (no items read) frees places for a producer exactly as a drain does: with a limit of
/// one, the second admission succeeds only if the take released the first, and then reuses
/// its place.
#[test]
fn take_vs_admit_reuses_places() {
    loom::model(|| {
        let slot = leader::<Production>(1, 1);
        let first = slot.admit(PROPOSE, FG, 1).unwrap();
        let taker = {
            let slot = slot.clone();
            thread::spawn(move || slot.take(usize::MAX))
        };
        let second = slot.admit(PROPOSE, FG, 2).map_err(|r| r.error);
        let taken = taker.join().unwrap();
        assert_eq!(taken.first_position, first.position);
        match second {
            Ok(a) => {
                assert_eq!(taken.count, 1, "room came from the take");
                assert_eq!(a.position, 1);
            }
            Err(e) => assert_eq!(e, AdmissionError::Busy),
        }
        let rest = drain_all(&slot);
        assert_eq!(taken.count + rest.len(), 1 + usize::from(second.is_ok()));
        if let Some(c) = rest.last() {
            assert_eq!(c.item, if second.is_ok() { 2 } else { 1 });
        }
    });
}

/// `take(0)` answers the position the next item taken will have: once another thread's drain
/// has taken an item (and says so), a `take(0)` that starts after that never answers the taken
/// item's position, even while the drain has not yet published its release.
#[test]
fn take_zero_after_a_drain_took_an_item() {
    loom::model(|| {
        let slot = leader::<Production>(2, 1);
        slot.admit(PROPOSE, FG, 1).unwrap();
        let took = Arc::new(AtomicBool::new(false));
        let drainer = {
            let (slot, took) = (slot.clone(), took.clone());
            thread::spawn(move || {
                // Ordering: Release; pairs with the Acquire load below.
                slot.drain_with(1, |_| took.store(true, Ordering::Release))
            })
        };
        // Ordering: Acquire; pairs with the Release store in the callback.
        while !took.load(Ordering::Acquire) {
            thread::yield_now();
        }
        let next = slot.take(0);
        assert_eq!(
            (next.count, next.first_position),
            (0, 1),
            "position 0 was taken"
        );
        assert_eq!(drainer.join().unwrap().count, 1);
    });
}
