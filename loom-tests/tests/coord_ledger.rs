//! loom models of `wkcore::coord`'s keyed structures: the [`Ledger`] (claims, pending-only
//! finalization, the reconciler, retention and reclaim, compare-and-delete, slot reuse), the
//! [`AnchorTable`] and the [`WindowedCounter`]. Every transition has exactly one winner, every
//! loser is told what won, and a slot's next record is never touched by its previous record's
//! late callers.
//!
//! Under `--cfg wkcore_loom` the ledger's atomics, its key cell and its map (a loom `Mutex`
//! around a `HashMap`) are loom's, so these models check the shipped code. Each ledger counts in
//! its own [`Registry`], kept alive for the whole model (the process-wide one would outlive it).
//!
//! Five models (the slot-reuse ones, the losing claimer, take vs claim) were written against a
//! first version of the ledger and failed on it; each says which interleaving broke it. The fix
//! is the pin count in the state word: a writer of a record's side fields holds a pin, and a
//! pinned slot is never reclaimed, so reclaim may need another page (`reclaim_until_freed`).
//! A finalization takes no pin: its time, stored last, is "unset" until it is done, and reclaim
//! and `get` wait for it (`ledger_slot_reuse_late_finalize_writes_never_touch_the_next_record`,
//! `ledger_get_vs_finalize_and_duplicate_sees_whole_states`).
#![cfg(wkcore_loom)]

use loom::sync::Arc;
use loom::thread;
use wkcore::coord::{
    AnchorTable, AnchorTableError, ByteKey, ClaimError, FinalizeError, Fire, InsertError, Ledger,
    LedgerConfig, LedgerEvent, LedgerKind, NewRecord, Outcome, RecordState, RecordView, TakeError,
    WindowedCounter,
};
use wkcore::metrics::Registry;

/// A pending ledger of `capacity` slots and its own registry (keep both alive).
fn ledger(capacity: usize, retention: u64) -> (Arc<Ledger<ByteKey>>, Registry) {
    let registry = Registry::new();
    let ledger = Ledger::with_metrics(
        LedgerConfig {
            capacity,
            retention,
            kind: LedgerKind::Pending,
        },
        &registry,
    )
    .unwrap();
    (Arc::new(ledger), registry)
}

/// Reclaims the only slot of a capacity-1 ledger, a page at a time: a page skips a record that
/// a racing writer holds pinned, and the next one (after that writer ran) frees it.
fn reclaim_until_freed<K: wkcore::coord::LedgerKey>(ledger: &Ledger<K>, now: u64) {
    while ledger.reclaim(now, 1).changed == 0 {
        thread::yield_now();
    }
}

fn key(bytes: &[u8]) -> ByteKey {
    ByteKey::new(bytes).unwrap()
}

fn pending(id: u64, deadline: u64) -> NewRecord {
    NewRecord {
        id,
        runner: 0,
        deadline,
    }
}

const PLACEHOLDER: u64 = 900;

/// Places `k` holding [`PLACEHOLDER`] (deadline never).
fn place(ledger: &Ledger<ByteKey>, k: ByteKey) {
    let mut out = [Ok(())];
    assert_eq!(
        ledger.place(&[k], PLACEHOLDER, u64::MAX, 0, &mut out),
        Ok(1)
    );
    assert_eq!(out, [Ok(())]);
}

/// Three claimers race on one placed record: exactly one claim wins; the record is then
/// CLAIMED with the winner's request id and runner, and the counters say one won, two lost.
/// Which error a loser gets is pinned by `ledger_losing_claimer_is_told_lost` (ignored: today a
/// loser may be told `PlaceholderMismatch`), so here a loser may be `Lost` or
/// `PlaceholderMismatch`, never anything else.
#[test]
fn ledger_three_claimers_one_winner() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let k = key(b"k");
        place(&ledger, k);
        let claimers: Vec<_> = (1..=3u64)
            .map(|i| {
                let ledger = ledger.clone();
                thread::spawn(move || ledger.claim(&k, PLACEHOLDER, 10 + i, i, 1))
            })
            .collect();
        let results: Vec<_> = claimers.into_iter().map(|t| t.join().unwrap()).collect();
        let winners: Vec<u64> = (1..=3u64)
            .zip(&results)
            .filter(|(_, r)| r.is_ok())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        assert!(
            results.iter().all(|r| matches!(
                r,
                Ok(()) | Err(ClaimError::Lost) | Err(ClaimError::PlaceholderMismatch)
            )),
            "{results:?}"
        );
        let winner = winners[0];
        let view = ledger.get(&k).unwrap();
        assert_eq!(
            (view.state, view.id, view.runner, view.refreshed_at),
            (RecordState::Claimed, 10 + winner, winner, 1)
        );
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::ClaimWon), 1);
        assert_eq!(counts.get(LedgerEvent::ClaimLost), 2);
    });
}

/// Two claimers race on one placed record with the placeholder it holds: the loser must be told
/// [`ClaimError::Lost`], never `PlaceholderMismatch` (the record held the placeholder it gave;
/// another claim replaced it).
///
/// Failed before the pins: The loser loads the word (PLACED), the winner CASes to CLAIMED and
/// stores its request id, the loser then loads the id, sees the request id and returns
/// `PlaceholderMismatch` without re-reading the word.
#[test]
fn ledger_losing_claimer_is_told_lost() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let k = key(b"k");
        place(&ledger, k);
        let other = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.claim(&k, PLACEHOLDER, 12, 2, 1))
        };
        let mine = ledger.claim(&k, PLACEHOLDER, 11, 1, 1);
        let theirs = other.join().unwrap();
        match (mine, theirs) {
            (Ok(()), Err(ClaimError::Lost)) | (Err(ClaimError::Lost), Ok(())) => {}
            outcomes => panic!("{outcomes:?}"),
        }
    });
}

/// A receipt (finalize Succeeded, payload 7) races the reconciler at the record's deadline:
/// exactly one of them moves the record out of PENDING. A losing receipt is told
/// `Duplicate(TimedOut)` and leaves its payload for audit; a losing reconciler changes nothing.
/// The record ends in the winner's outcome, time and payload, and the counters agree.
#[test]
fn ledger_finalize_vs_reconcile() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        ledger.insert(&k, pending(1, 5), 0).unwrap();
        let receipt = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&k, Outcome::Succeeded, 7, 3))
        };
        let page = ledger.reconcile(5, 1);
        let receipt = receipt.join().unwrap();
        assert_eq!(page.scanned, 1);
        let view = ledger.get(&k).unwrap();
        let counts = ledger.counts();
        match receipt {
            Ok(()) => {
                assert_eq!(page.changed, 0, "the reconciler lost");
                assert_eq!(view.state, RecordState::Finalized(Outcome::Succeeded));
                assert_eq!((view.finalized_at, view.payload), (Some(3), 7));
                assert_eq!((view.duplicates, view.last_duplicate_payload), (0, 0));
                assert_eq!(counts.get(LedgerEvent::FinalizeWon), 1);
                assert_eq!(counts.get(LedgerEvent::ReconciledTimeout), 0);
                assert_eq!(counts.get(LedgerEvent::FinalizeDuplicate), 0);
            }
            Err(e) => {
                assert_eq!(e, FinalizeError::Duplicate(Outcome::TimedOut));
                assert_eq!(page.changed, 1, "the reconciler won");
                assert_eq!(view.state, RecordState::Finalized(Outcome::TimedOut));
                assert_eq!((view.finalized_at, view.payload), (Some(5), 0));
                assert_eq!((view.duplicates, view.last_duplicate_payload), (1, 7));
                assert_eq!(counts.get(LedgerEvent::FinalizeWon), 0);
                assert_eq!(counts.get(LedgerEvent::ReconciledTimeout), 1);
                assert_eq!(counts.get(LedgerEvent::FinalizeDuplicate), 1);
            }
        }
    });
}

/// A late duplicate receipt races reclaim while the record is still inside its retention
/// (finalized at 10, retention 100, reclaim at 109): reclaim frees nothing, and the duplicate is
/// always told the outcome that won, never accepted, whatever the interleaving.
#[test]
fn ledger_reclaim_inside_retention_vs_late_duplicate() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        ledger.insert(&k, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&k, Outcome::Succeeded, 7, 10).unwrap();
        let late = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&k, Outcome::Failed, 8, 109))
        };
        let page = ledger.reclaim(109, 1);
        let late = late.join().unwrap();
        assert_eq!(page.changed, 0, "inside retention");
        assert_eq!(late, Err(FinalizeError::Duplicate(Outcome::Succeeded)));
        let view = ledger.get(&k).unwrap();
        assert_eq!(view.state, RecordState::Finalized(Outcome::Succeeded));
        assert_eq!((view.finalized_at, view.payload), (Some(10), 7));
        assert_eq!((view.duplicates, view.last_duplicate_payload), (1, 8));
        assert_eq!(ledger.len(), 1);
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::FinalizeWon), 1);
        assert_eq!(counts.get(LedgerEvent::FinalizeDuplicate), 1);
        assert_eq!(counts.get(LedgerEvent::Reclaimed), 0);
    });
}

/// The same race past the retention (reclaim at exactly finalized-at + retention): reclaim
/// always frees the record; the duplicate is told the winner if it found the record first, or
/// "not found" after, and is never accepted. Afterwards the key is gone and a fresh insert of
/// the same key gets a clean record.
#[test]
fn ledger_reclaim_past_retention_vs_late_duplicate() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        ledger.insert(&k, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&k, Outcome::Succeeded, 7, 10).unwrap();
        let late = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&k, Outcome::Failed, 8, 110))
        };
        reclaim_until_freed(&ledger, 110);
        let late = late.join().unwrap();
        assert!(
            matches!(
                late,
                Err(FinalizeError::Duplicate(Outcome::Succeeded)) | Err(FinalizeError::NotFound)
            ),
            "{late:?}"
        );
        assert!(ledger.get(&k).is_none());
        assert!(ledger.is_empty());
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::Reclaimed), 1);
        assert_eq!(
            counts.get(LedgerEvent::FinalizeDuplicate),
            u64::from(late != Err(FinalizeError::NotFound))
        );
        ledger.insert(&k, pending(2, u64::MAX), 200).unwrap();
        let view = ledger.get(&k).unwrap();
        assert_eq!((view.state, view.id), (RecordState::Placed, 2));
        assert_eq!((view.finalized_at, view.payload), (None, 0));
        assert_eq!((view.duplicates, view.last_duplicate_payload), (0, 0));
    });
}

/// A full ledger (capacity 1, its one record finalized past retention): an insert of a new key
/// races reclaim. Reclaim always frees the old record; the insert succeeds only if the slot was
/// back on the free list when it looked, and is otherwise refused as full (nothing evicted).
/// The ledger never holds more than its capacity, and a refused insert succeeds on retry.
#[test]
fn ledger_insert_at_capacity_vs_reclaim() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let (old, new) = (key(b"old"), key(b"new"));
        ledger.insert(&old, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&old, Outcome::Succeeded, 7, 10).unwrap();
        let inserter = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.insert(&new, pending(2, u64::MAX), 200))
        };
        let page = ledger.reclaim(200, 1);
        let inserted = inserter.join().unwrap();
        assert_eq!(page.changed, 1);
        assert!(ledger.get(&old).is_none());
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::Reclaimed), 1);
        match inserted {
            Ok(()) => {
                assert_eq!(ledger.len(), 1);
                assert_eq!(counts.get(LedgerEvent::RejectedFull), 0);
            }
            Err(e) => {
                assert_eq!(e, InsertError::Full);
                assert_eq!(ledger.len(), 0);
                assert_eq!(counts.get(LedgerEvent::RejectedFull), 1);
                ledger.insert(&new, pending(2, u64::MAX), 201).unwrap();
            }
        }
        let view = ledger.get(&new).unwrap();
        assert_eq!((view.state, view.id), (RecordState::Placed, 2));
        assert_eq!(ledger.len(), 1);
    });
}

/// Two inserts of different keys race for the one free slot of a capacity-1 ledger: exactly one
/// gets it, the other is refused as full; the loser's key is absent.
#[test]
fn ledger_two_inserters_capacity_one() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let (a, b) = (key(b"a"), key(b"b"));
        let other = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.insert(&b, pending(2, u64::MAX), 0))
        };
        let mine = ledger.insert(&a, pending(1, u64::MAX), 0);
        let theirs = other.join().unwrap();
        let (winner, loser, id) = match (mine, theirs) {
            (Ok(()), Err(InsertError::Full)) => (a, b, 1),
            (Err(InsertError::Full), Ok(())) => (b, a, 2),
            outcomes => panic!("{outcomes:?}"),
        };
        assert_eq!(ledger.len(), 1);
        let view = ledger.get(&winner).unwrap();
        assert_eq!((view.state, view.id), (RecordState::Placed, id));
        assert!(ledger.get(&loser).is_none());
        assert_eq!(ledger.counts().get(LedgerEvent::RejectedFull), 1);
    });
}

/// Two compare-and-deletes with the same (right) id race: exactly one removes the record; the
/// other is told it is terminal (it saw the winner's transition) or not found (it came after
/// the removal). The key is gone, the ledger empty, and its slot free for a new record.
#[test]
fn ledger_take_vs_take() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 1000);
        let k = key(b"k");
        ledger.insert(&k, pending(77, u64::MAX), 0).unwrap();
        let other = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.take(&k, 77))
        };
        let mine = ledger.take(&k, 77);
        let theirs = other.join().unwrap();
        let won = [mine, theirs].iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "{mine:?} {theirs:?}");
        assert!(
            [mine, theirs].iter().all(|r| matches!(
                r,
                Ok(()) | Err(TakeError::Finalized(Outcome::Succeeded)) | Err(TakeError::NotFound)
            )),
            "{mine:?} {theirs:?}"
        );
        assert!(ledger.get(&k).is_none());
        assert!(ledger.is_empty());
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::FinalizeWon), 1);
        assert_eq!(counts.get(LedgerEvent::Reclaimed), 1);
        ledger.insert(&k, pending(78, u64::MAX), 1).unwrap();
    });
}

/// A claim races a finalization of the same placed record. The finalization always wins (it
/// accepts PLACED and CLAIMED alike); the claim either came first and won too (the record ends
/// terminal with the claimer's id and runner) or came after and is told the outcome. Never do
/// both fail.
#[test]
fn ledger_claim_vs_finalize() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        place(&ledger, k);
        let claimer = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.claim(&k, PLACEHOLDER, 5, 1, 1))
        };
        let finalized = ledger.finalize(&k, Outcome::Succeeded, 7, 2);
        let claimed = claimer.join().unwrap();
        assert_eq!(finalized, Ok(()), "claim {claimed:?}");
        let view = ledger.get(&k).unwrap();
        assert_eq!(view.state, RecordState::Finalized(Outcome::Succeeded));
        assert_eq!((view.finalized_at, view.payload), (Some(2), 7));
        match claimed {
            Ok(()) => assert_eq!((view.id, view.runner), (5, 1)),
            Err(e) => {
                assert_eq!(e, ClaimError::Finalized(Outcome::Succeeded));
                assert_eq!((view.id, view.runner), (PLACEHOLDER, 0));
            }
        }
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::FinalizeWon), 1);
        assert_eq!(
            counts.get(LedgerEvent::ClaimWon),
            u64::from(claimed.is_ok())
        );
        assert_eq!(
            counts.get(LedgerEvent::ClaimLost),
            u64::from(claimed.is_err())
        );
    });
}

/// Slot reuse (ABA): in a capacity-1 ledger whose record is finalized past retention, a late
/// duplicate of the old key races a host that reclaims the slot and inserts a NEW key into it.
/// The late duplicate is told the old winner or "not found", and never finalizes the new record
/// (the generation in the state word rules it out): the new record stays PLACED, unfinalized.
#[test]
fn ledger_slot_reuse_late_duplicate_never_finalizes_the_next_record() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let (old, new) = (key(b"old"), key(b"new"));
        ledger.insert(&old, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&old, Outcome::Succeeded, 7, 10).unwrap();
        let late = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&old, Outcome::Failed, 8, 200))
        };
        reclaim_until_freed(&ledger, 200);
        let inserted = ledger.insert(&new, pending(2, u64::MAX), 200);
        let late = late.join().unwrap();
        assert_eq!(inserted, Ok(()));
        assert!(
            matches!(
                late,
                Err(FinalizeError::Duplicate(Outcome::Succeeded)) | Err(FinalizeError::NotFound)
            ),
            "{late:?}"
        );
        assert!(ledger.get(&old).is_none());
        let view = ledger.get(&new).unwrap();
        assert_eq!((view.state, view.id), (RecordState::Placed, 2));
        assert_eq!((view.finalized_at, view.payload), (None, 0));
        let counts = ledger.counts();
        assert_eq!(counts.get(LedgerEvent::FinalizeWon), 1);
        assert_eq!(counts.get(LedgerEvent::Reclaimed), 1);
        assert_eq!(
            counts.get(LedgerEvent::FinalizeDuplicate),
            u64::from(late != Err(FinalizeError::NotFound))
        );
    });
}

/// The same race, checking the new record's audit fields: a late duplicate of the old key must
/// not count as a duplicate of the new record, nor leave its payload on it.
///
/// Failed before the pins: `finalize` of the old key loses (the word is FINAL, generation g), then
/// the slot is reclaimed and refilled (generation g + 1, audit fields reset), then the duplicate
/// bumps `duplicates` and writes `duplicate_payload` on the slot without checking the generation:
/// the new record reads `(1, 8)`.
#[test]
fn ledger_slot_reuse_late_duplicate_never_touches_the_next_records_audit() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let (old, new) = (key(b"old"), key(b"new"));
        ledger.insert(&old, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&old, Outcome::Succeeded, 7, 10).unwrap();
        let late = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&old, Outcome::Failed, 8, 200))
        };
        reclaim_until_freed(&ledger, 200);
        ledger.insert(&new, pending(2, u64::MAX), 200).unwrap();
        let late = late.join().unwrap();
        let view = ledger.get(&new).unwrap();
        assert_eq!(
            (view.duplicates, view.last_duplicate_payload),
            (0, 0),
            "the old key's late duplicate ({late:?}) was counted on the new record"
        );
    });
}

/// An explicit advance races the first-seen transition on an unset anchor of the table: the
/// first-seen transition always wins (nothing else can set an unset anchor), and the advance
/// from the value it writes succeeds only after it; a stray advance from a value never stored
/// always fails.
#[test]
fn anchor_table_advance_vs_anchor_unset() {
    loom::model(|| {
        let table = Arc::new(AnchorTable::new(2).unwrap());
        table.insert(1, None).unwrap();
        let advancer = {
            let table = table.clone();
            thread::spawn(move || (table.advance(1, 0, 9), table.advance(1, 5, 7)))
        };
        let anchored = table.anchor_unset(1, 5);
        let (stray, advanced) = advancer.join().unwrap();
        assert_eq!(anchored, Ok(true));
        assert_eq!(stray, Ok(false), "an unset anchor never matches an advance");
        match advanced {
            Ok(true) => assert_eq!(table.get(1), Ok(Some(7))),
            Ok(false) => assert_eq!(table.get(1), Ok(Some(5))),
            Err(e) => panic!("{e:?}"),
        }
    });
}

/// Two runners try the same due trigger of the table: exactly one fires from the stored
/// anchor; the other loses the race or sees the next period as not due.
#[test]
fn anchor_table_two_runners_one_fires() {
    loom::model(|| {
        let table = Arc::new(AnchorTable::new(1).unwrap());
        table.insert(2, Some(100)).unwrap();
        let other = {
            let table = table.clone();
            thread::spawn(move || table.try_fire(2, 200, 50))
        };
        let mine = table.try_fire(2, 200, 50);
        let theirs = other.join().unwrap();
        let outcomes = [mine.unwrap(), theirs.unwrap()];
        let fired = outcomes
            .iter()
            .filter(|o| **o == Fire::Fired { previous: 100 })
            .count();
        assert_eq!(fired, 1, "{outcomes:?}");
        assert!(
            outcomes.iter().all(|o| matches!(
                o,
                Fire::Fired { previous: 100 } | Fire::Lost | Fire::NotDue { due_at: 250 }
            )),
            "{outcomes:?}"
        );
        assert_eq!(table.get(2), Ok(Some(200)));
    });
}

/// Two inserts of different ids race for the last place of the table: exactly one is held,
/// the other is refused as full, and the table never holds more than its capacity.
#[test]
fn anchor_table_two_inserters_capacity_one() {
    loom::model(|| {
        let table = Arc::new(AnchorTable::new(1).unwrap());
        let other = {
            let table = table.clone();
            thread::spawn(move || table.insert(2, Some(20)))
        };
        let mine = table.insert(1, Some(10));
        let theirs = other.join().unwrap();
        match (mine, theirs) {
            (Ok(()), Err(AnchorTableError::Full)) => {
                assert_eq!(table.get(1), Ok(Some(10)));
                assert_eq!(table.get(2), Err(AnchorTableError::NotFound));
            }
            (Err(AnchorTableError::Full), Ok(())) => {
                assert_eq!(table.get(2), Ok(Some(20)));
                assert_eq!(table.get(1), Err(AnchorTableError::NotFound));
            }
            outcomes => panic!("{outcomes:?}"),
        }
        assert_eq!(table.len(), 1);
    });
}

/// Two increments inside one window return 1 and 2 (never both 1, never a lost count).
#[test]
fn windowed_counter_two_increments() {
    loom::model(|| {
        let counter = Arc::new(WindowedCounter::new());
        let other = {
            let counter = counter.clone();
            thread::spawn(move || counter.increment(10, 100).unwrap())
        };
        let mine = counter.increment(10, 100).unwrap();
        let theirs = other.join().unwrap();
        let mut both = [mine, theirs];
        both.sort_unstable();
        assert_eq!(both, [1, 2]);
        assert_eq!(counter.count(50), 2);
        assert_eq!(counter.window_end(50), Some(110));
    });
}

/// An increment inside the current window (now 50, window ending 110) races one after it
/// (now 110, which starts the window ending 210). Either order, the in-window increment counts
/// on top of the first one (2) and the late one starts a new window (1); the final word is one
/// of the two consistent ones: the late increment last (count 1), or the in-window increment
/// counted into the new window (count 2). The window always ends at 210.
#[test]
fn windowed_counter_increment_vs_window_expiry() {
    loom::model(|| {
        let counter = Arc::new(WindowedCounter::new());
        assert_eq!(counter.increment(10, 100), Ok(1));
        let late = {
            let counter = counter.clone();
            thread::spawn(move || counter.increment(110, 100).unwrap())
        };
        let inside = counter.increment(50, 100).unwrap();
        let late = late.join().unwrap();
        assert_eq!((inside, late), (2, 1));
        assert!(
            matches!(counter.count(150), 1 | 2),
            "{}",
            counter.count(150)
        );
        assert_eq!(counter.window_end(150), Some(210));
        assert_eq!(counter.count(210), 0);
    });
}

/// Slot reuse (ABA) through a claim: a claim wins its CAS, and before it writes the request id,
/// runner and refresh time, the record is finalized, reclaimed (retention 0) and its slot filled
/// with a NEW key. The new record must keep its own id, runner and refresh time.
///
/// Failed before the pins: The claim's id, runner and refresh-time stores come after its CAS and
/// check nothing; the new record reads id 5, runner 1, refreshed at 1.
#[test]
fn ledger_slot_reuse_late_claim_writes_never_touch_the_next_record() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let (old, new) = (key(b"old"), key(b"new"));
        place(&ledger, old);
        let claimer = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.claim(&old, PLACEHOLDER, 5, 1, 1))
        };
        assert_eq!(ledger.finalize(&old, Outcome::Succeeded, 7, 2), Ok(()));
        reclaim_until_freed(&ledger, 2);
        ledger.insert(&new, pending(2, u64::MAX), 3).unwrap();
        let claimed = claimer.join().unwrap();
        let view = ledger.get(&new).unwrap();
        assert_eq!(
            (view.state, view.id, view.runner, view.refreshed_at),
            (RecordState::Placed, 2, 0, 3),
            "the old key's claim ({claimed:?}) wrote into the new record"
        );
    });
}

/// Slot reuse (ABA) through a finalization: a finalization wins its CAS (it takes no pin), and
/// before it writes its payload and time, the host reclaims (retention 0) and fills the slot
/// with a NEW key. Reclaim must not take the record until the finalizer's time, its last store,
/// is written, so the new record keeps no payload and no finalization time.
#[test]
fn ledger_slot_reuse_late_finalize_writes_never_touch_the_next_record() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let (old, new) = (key(b"old"), key(b"new"));
        ledger.insert(&old, pending(1, u64::MAX), 0).unwrap();
        let finalizer = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.finalize(&old, Outcome::Failed, 7, 2))
        };
        reclaim_until_freed(&ledger, 2);
        ledger.insert(&new, pending(2, u64::MAX), 3).unwrap();
        assert_eq!(finalizer.join().unwrap(), Ok(()));
        let view = ledger.get(&new).unwrap();
        assert_eq!(
            (view.state, view.finalized_at, view.payload),
            (RecordState::Placed, None, 0),
            "the old key's finalization wrote into the new record"
        );
    });
}

/// Slot reuse (ABA) through a heartbeat: a runner's `touch` of its old record races the host
/// finalizing and reclaiming that record (retention 0) and inserting a NEW record of another
/// runner into the slot. The new record's refresh time must stay its own.
///
/// Failed before the pins: `touch` checks the word and the runner, then `fetch_max`es the refresh
/// time with no generation check; the new record reads refreshed at 50.
#[test]
fn ledger_slot_reuse_late_touch_never_refreshes_the_next_record() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let (old, new) = (key(b"old"), key(b"new"));
        let record = |id, runner| NewRecord {
            id,
            runner,
            deadline: u64::MAX,
        };
        ledger.insert(&old, record(1, 1), 0).unwrap();
        let toucher = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.touch(&old, 1, 50))
        };
        assert_eq!(ledger.finalize(&old, Outcome::Succeeded, 7, 2), Ok(()));
        reclaim_until_freed(&ledger, 2);
        ledger.insert(&new, record(2, 2), 3).unwrap();
        let touched = toucher.join().unwrap();
        let view = ledger.get(&new).unwrap();
        assert_eq!(
            (view.state, view.runner, view.refreshed_at),
            (RecordState::Placed, 2, 3),
            "the old runner's touch ({touched:?}) refreshed the new record"
        );
    });
}

/// Two reclaim pages race on one record past its retention: exactly one frees it, and the slot
/// goes back on the free list once (a capacity-1 ledger then takes one new record, not two).
#[test]
fn ledger_reclaim_vs_reclaim_frees_once() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let k = key(b"k");
        ledger.insert(&k, pending(1, u64::MAX), 0).unwrap();
        ledger.finalize(&k, Outcome::Succeeded, 7, 10).unwrap();
        let other = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.reclaim(10, 1))
        };
        let mine = ledger.reclaim(10, 1);
        let theirs = other.join().unwrap();
        assert_eq!(mine.changed + theirs.changed, 1, "{mine:?} {theirs:?}");
        assert!(ledger.is_empty());
        assert_eq!(ledger.counts().get(LedgerEvent::Reclaimed), 1);
        ledger.insert(&key(b"a"), pending(2, u64::MAX), 11).unwrap();
        assert_eq!(
            ledger.insert(&key(b"b"), pending(3, u64::MAX), 11),
            Err(InsertError::Full)
        );
    });
}

/// Two inserts of the same key (a hand-off and its retry): exactly one inserts, the other is
/// told the record exists and is PLACED; the loser took no slot (a second key still fits).
#[test]
fn ledger_two_inserts_same_key() {
    loom::model(|| {
        let (ledger, _registry) = ledger(2, 0);
        let k = key(b"k");
        let other = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.insert(&k, pending(2, u64::MAX), 0))
        };
        let mine = ledger.insert(&k, pending(1, u64::MAX), 0);
        let theirs = other.join().unwrap();
        let id = match (mine, theirs) {
            (Ok(()), Err(InsertError::Exists(RecordState::Placed))) => 1,
            (Err(InsertError::Exists(RecordState::Placed)), Ok(())) => 2,
            outcomes => panic!("{outcomes:?}"),
        };
        assert_eq!(ledger.get(&k).unwrap().id, id);
        assert_eq!(ledger.len(), 1);
        ledger.insert(&key(b"j"), pending(3, u64::MAX), 0).unwrap();
        assert_eq!(ledger.len(), 2);
    });
}

/// Compare-and-delete with the placeholder races a claim of the same placed record: in any
/// order one of them must fail (a claimed record no longer holds the placeholder; a taken one
/// cannot be claimed). Never do both succeed.
///
/// Failed before the pins: The claim wins PLACED → CLAIMED; before it stores its request id the
/// take loads the (CLAIMED) word, still reads the placeholder as the id, and wins CLAIMED →
/// FINAL: both return `Ok`.
#[test]
fn ledger_take_vs_claim_never_both_win() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 0);
        let k = key(b"k");
        place(&ledger, k);
        let claimer = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.claim(&k, PLACEHOLDER, 5, 1, 1))
        };
        let taken = ledger.take(&k, PLACEHOLDER);
        let claimed = claimer.join().unwrap();
        assert!(
            taken.is_err() || claimed.is_err(),
            "take {taken:?}, claim {claimed:?}"
        );
    });
}

/// Keys that share one bucket of a ledger of `capacity` slots (the index's bucket is bits 32
/// and up of the key's hash, masked to the next power of two of twice the capacity).
fn same_bucket(capacity: usize, n: usize) -> Vec<ByteKey> {
    use wkcore::coord::LedgerKey;
    let mask = (2 * capacity).next_power_of_two() as u64 - 1;
    let bucket = |k: &ByteKey| {
        let mut words = [0u64; 32];
        k.encode(&mut words[..ByteKey::WORDS]);
        (words[0] >> 32) & mask
    };
    let first = key(b"chain-0");
    let mut out = vec![first];
    let mut i = 1;
    while out.len() < n {
        let k = ByteKey::new(format!("chain-{i}").as_bytes()).unwrap();
        if bucket(&k) == bucket(&first) {
            out.push(k);
        }
        i += 1;
    }
    out
}

/// The key index's look-up takes no lock: a reader looks up `k`, which sits behind `l` in one
/// bucket's chain, while another thread finalizes `l`, reclaims it (unlinking it and freeing its
/// slot) and inserts `m` into the same bucket, reusing `l`'s slot. The reader must find `k` every
/// time (it may stand on `l`'s slot while it is unlinked and reused: the generation in the link
/// and the seqlock-style reload send it back to the head), and never find `l` or `m` instead.
#[test]
fn index_lookup_behind_a_removed_and_reused_slot_always_finds_its_key() {
    loom::model(|| {
        let keys = same_bucket(2, 3);
        let (k, l, m) = (keys[0], keys[1], keys[2]);
        let (ledger, _registry) = ledger(2, 0);
        ledger.insert(&k, pending(1, u64::MAX), 0).unwrap();
        ledger.insert(&l, pending(2, u64::MAX), 0).unwrap(); // linked at the head: l → k
        let reader = {
            let ledger = ledger.clone();
            thread::spawn(move || ledger.get(&k).map(|v| v.id))
        };
        ledger.finalize(&l, Outcome::Succeeded, 0, 1).unwrap();
        reclaim_until_freed(&ledger, 1);
        ledger.insert(&m, pending(3, u64::MAX), 2).unwrap(); // l's slot, m → k
        assert_eq!(reader.join().unwrap(), Some(1), "k was not found");
        assert_eq!(ledger.get(&m).map(|v| v.id), Some(3));
        assert!(ledger.get(&l).is_none());
    });
}

/// The reverse order in the chain: the reader looks up `l` at the head while `k`, behind it, is
/// removed and its slot reused for `m`; and a look-up of the removed key never finds the slot's
/// next record.
#[test]
fn index_lookup_of_a_removed_key_never_finds_the_slots_next_record() {
    loom::model(|| {
        let keys = same_bucket(2, 3);
        let (k, l, m) = (keys[0], keys[1], keys[2]);
        let (ledger, _registry) = ledger(2, 0);
        ledger.insert(&k, pending(1, u64::MAX), 0).unwrap();
        ledger.insert(&l, pending(2, u64::MAX), 0).unwrap();
        let reader = {
            let ledger = ledger.clone();
            thread::spawn(move || (ledger.get(&l).map(|v| v.id), ledger.get(&k).map(|v| v.id)))
        };
        ledger.finalize(&k, Outcome::Failed, 0, 1).unwrap();
        reclaim_until_freed(&ledger, 1);
        ledger.insert(&m, pending(3, u64::MAX), 2).unwrap();
        let (found_l, found_k) = reader.join().unwrap();
        assert_eq!(found_l, Some(2), "l was not found");
        assert!(
            matches!(found_k, Some(1) | None),
            "k's look-up found {found_k:?}"
        );
    });
}

/// The view of a record placed by [`place`] at time 0: the placeholder, no runner.
fn placed_view() -> RecordView {
    RecordView {
        state: RecordState::Placed,
        id: PLACEHOLDER,
        runner: 0,
        deadline: u64::MAX,
        refreshed_at: 0,
        finalized_at: None,
        payload: 0,
        duplicates: 0,
        last_duplicate_payload: 0,
    }
}

/// A `get` races a claim (request id 42, runner 7, at 5) and then a finalization (Succeeded,
/// payload 11, at 6) of one placed record.
///
/// Proves: the view is one of the three states the record passed through, whole: placed with
/// the placeholder, claimed with the claim's id, runner and time, or finalized with those and
/// the winner's time and payload. Failed on the first version of `get`, which re-checked only
/// the generation after reading the fields: it loaded the PLACED word, the claim won and stored
/// its request id, and `get` returned a placed record carrying the claim's id (or, behind the
/// finalization, a placed or claimed record with a finalization time).
#[test]
fn ledger_get_vs_claim_and_finalize_sees_whole_states() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        place(&ledger, k);
        let writer = {
            let ledger = ledger.clone();
            thread::spawn(move || {
                ledger.claim(&k, PLACEHOLDER, 42, 7, 5).unwrap();
                ledger.finalize(&k, Outcome::Succeeded, 11, 6).unwrap();
            })
        };
        let view = ledger.get(&k).expect("the record is there throughout");
        writer.join().unwrap();
        let placed = placed_view();
        let claimed = RecordView {
            state: RecordState::Claimed,
            id: 42,
            runner: 7,
            refreshed_at: 5,
            ..placed
        };
        let finalized = RecordView {
            state: RecordState::Finalized(Outcome::Succeeded),
            finalized_at: Some(6),
            payload: 11,
            ..claimed
        };
        assert!(
            view == placed || view == claimed || view == finalized,
            "a view the record never had: {view:?}"
        );
        assert_eq!(ledger.get(&k), Some(finalized));
    });
}

/// A `get` races the finalization (Failed, payload 11, at 6) of a placed record that no one
/// claimed, and a heartbeat-free duplicate (payload 22) behind it.
///
/// Proves: the view is placed, finalized without duplicates, or finalized with the duplicate's
/// count and payload together: never a terminal record without its time and payload, nor a
/// duplicate counted without its payload (or the reverse). Failed on the first version: the
/// finalization wrote its time and payload after its CAS with no pin, and the duplicate's count
/// and payload were two plain stores under a pin that `get` could not see come and go.
#[test]
fn ledger_get_vs_finalize_and_duplicate_sees_whole_states() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        place(&ledger, k);
        let writer = {
            let ledger = ledger.clone();
            thread::spawn(move || {
                ledger.finalize(&k, Outcome::Failed, 11, 6).unwrap();
                assert_eq!(
                    ledger.finalize(&k, Outcome::Succeeded, 22, 7),
                    Err(FinalizeError::Duplicate(Outcome::Failed))
                );
            })
        };
        let view = ledger.get(&k).expect("the record is there throughout");
        writer.join().unwrap();
        let placed = placed_view();
        let finalized = RecordView {
            state: RecordState::Finalized(Outcome::Failed),
            finalized_at: Some(6),
            payload: 11,
            ..placed
        };
        let audited = RecordView {
            duplicates: 1,
            last_duplicate_payload: 22,
            ..finalized
        };
        assert!(
            view == placed || view == finalized || view == audited,
            "a view the record never had: {view:?}"
        );
        assert_eq!(ledger.get(&k), Some(audited));
    });
}

/// Two duplicates (payloads 22 and 33) race a `get` of a finalized record.
///
/// Proves: the audit pair is whole: no duplicate and no payload, one duplicate with its own
/// payload, or two with the payload of either (the latest one written).
#[test]
fn ledger_get_vs_two_duplicates_sees_whole_audits() {
    loom::model(|| {
        let (ledger, _registry) = ledger(1, 100);
        let k = key(b"k");
        place(&ledger, k);
        ledger.finalize(&k, Outcome::Failed, 11, 6).unwrap();
        let dups: Vec<_> = [22u64, 33]
            .into_iter()
            .map(|payload| {
                let ledger = ledger.clone();
                thread::spawn(move || ledger.finalize(&k, Outcome::Succeeded, payload, 7))
            })
            .collect();
        let view = ledger.get(&k).expect("the record is there throughout");
        for d in dups {
            assert_eq!(
                d.join().unwrap(),
                Err(FinalizeError::Duplicate(Outcome::Failed))
            );
        }
        let audit = (view.duplicates, view.last_duplicate_payload);
        assert!(
            matches!(audit, (0, 0) | (1, 22) | (1, 33) | (2, 22) | (2, 33)),
            "an audit the record never had: {audit:?}"
        );
        let end = ledger.get(&k).unwrap();
        assert_eq!(end.duplicates, 2);
        assert!(matches!(end.last_duplicate_payload, 22 | 33), "{end:?}");
    });
}
