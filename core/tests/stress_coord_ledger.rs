//! Stress test of `wkcore::coord::Ledger`: threads race every transition on one small ledger
//! (it fills, so inserts are refused as full, and slots are reclaimed and reused all the time)
//! while a sampler reads it; the wins the harness counted must be the ledger's counts, and every
//! record lifetime must end with exactly one terminal write.
#![allow(clippy::disallowed_types)] // the harness's own atomics; the code under test uses the shim

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use wkcore::coord::{
    ByteKey, ClaimError, FinalizeError, HostCode, InsertError, Ledger, LedgerConfig, LedgerEvent,
    LedgerKind, NewRecord, Outcome, RecordState, RecordView, TakeError,
};
use wkcore::metrics::Registry;

const THREADS: u64 = 4;
const KEYS: u64 = 10_000;
const CAPACITY: usize = 4096;
/// Scan pages (reconcile, reclaim, the runner sweeps).
const PAGE: usize = 64;

/// Host time is `tick << TIME_SHIFT`: the low bits of every deadline carry its key's index, so a
/// reader can tell a record's fields from another key's.
const TIME_SHIFT: u32 = 14;
const KEY_MASK: u64 = (1 << TIME_SHIFT) - 1;
const RETENTION: u64 = 64 << TIME_SHIFT;
const QUIET: u64 = 20_000 << TIME_SHIFT;
/// Ids are `key << 40 | thread << 36 | claim << 35 | sequence` (unique per lifetime; `claim`:
/// [`CLAIM_ID`], set in a claim's request id); the batch placeholder has no key bits.
const PLACEHOLDER: u64 = (1 << 40) - 1;
/// The bit that tells a claim's request id from an inserted record's id.
const CLAIM_ID: u64 = 1 << 35;

const OUTCOMES: [Outcome; 3] = [
    Outcome::Succeeded,
    Outcome::Failed,
    match HostCode::new(300) {
        Some(code) => Outcome::Host(code),
        None => panic!("300 is a host code"),
    },
];

fn ops_per_thread() -> u64 {
    if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    }
}

/// splitmix64: a cheap per-thread generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one worker saw win (or be refused), by the event the ledger counts it as.
#[derive(Clone, Copy, Debug, Default)]
struct Wins {
    inserted: u64,
    placed: u64,
    full: u64,
    claim_won: u64,
    claim_lost: u64,
    finalize_won: u64,
    duplicate: u64,
    taken: u64,
    timed_out: u64,
    reclaimed: u64,
    own: u64,
    orphaned: u64,
}

impl Wins {
    fn add(&mut self, o: &Wins) {
        self.inserted += o.inserted;
        self.placed += o.placed;
        self.full += o.full;
        self.claim_won += o.claim_won;
        self.claim_lost += o.claim_lost;
        self.finalize_won += o.finalize_won;
        self.duplicate += o.duplicate;
        self.taken += o.taken;
        self.timed_out += o.timed_out;
        self.reclaimed += o.reclaimed;
        self.own += o.own;
        self.orphaned += o.orphaned;
    }

    /// Record lifetimes begun.
    fn lifetimes(&self) -> u64 {
        self.inserted + self.placed
    }

    /// Terminal writes won (one per lifetime at most).
    fn terminal(&self) -> u64 {
        self.finalize_won + self.taken + self.timed_out + self.own + self.orphaned
    }
}

fn worker(ledger: &Ledger<ByteKey>, keys: &[ByteKey], clock: &AtomicU64, thread: u64) -> Wins {
    let mut rng = Rng(0x5eed ^ (thread + 1).wrapping_mul(0x1234_5678_9abc_def1));
    let mut w = Wins::default();
    let runner = thread + 1;
    let mut seq = 0u64;
    let mut next_id = |k: u64| {
        seq += 1;
        (k << 40) | (thread << 36) | (seq & (CLAIM_ID - 1))
    };
    // (key, id) of records this thread inserted or claimed, for compare-and-delete.
    let mut mine: VecDeque<(u64, u64)> = VecDeque::with_capacity(65);
    let ops = ops_per_thread();
    for op in 0..ops {
        // Ordering: Relaxed; the clock only spreads times, it orders nothing.
        let tick = clock.fetch_add(1, Ordering::Relaxed);
        let now = tick << TIME_SHIFT;
        let k = rng.below(KEYS);
        let key = &keys[k as usize];
        let deadline = ((tick + 1 + rng.below(40_000)) << TIME_SHIFT) | k;
        if op % (ops / 10) == ops / 20 {
            // A burst of inserts on consecutive keys until one is refused as full (the mix alone
            // keeps the ledger near its capacity, the burst makes sure it gets there).
            for j in 0..KEYS {
                let bk = (k + j) % KEYS;
                let record = NewRecord {
                    id: next_id(bk),
                    runner,
                    deadline: (deadline & !KEY_MASK) | bk,
                };
                match ledger.insert(&keys[bk as usize], record, now) {
                    Ok(()) => w.inserted += 1,
                    Err(InsertError::Full) => {
                        w.full += 1;
                        break;
                    }
                    Err(InsertError::Exists(_)) => {}
                    Err(e) => panic!("insert: {e:?}"),
                }
            }
            continue;
        }
        match rng.below(1000) {
            0..200 => {
                let id = next_id(k);
                let record = NewRecord {
                    id,
                    runner,
                    deadline,
                };
                match ledger.insert(key, record, now) {
                    Ok(()) => {
                        w.inserted += 1;
                        remember(&mut mine, k, id);
                    }
                    Err(InsertError::Full) => w.full += 1,
                    Err(InsertError::Exists(_)) => {}
                    Err(e) => panic!("insert: {e:?}"),
                }
            }
            200..300 => {
                // A batch of three targets, then this thread claims them. One deadline for the
                // batch: it carries the first key's index.
                let ks = [k, (k + 1) % KEYS, (k + 2) % KEYS];
                let batch = ks.map(|k| keys[k as usize]);
                let mut out = [Ok(()); 3];
                match ledger.place(&batch, PLACEHOLDER, deadline, now, &mut out) {
                    Ok(n) => w.placed += n as u64,
                    Err(InsertError::Full) => {
                        w.full += 3;
                        continue;
                    }
                    Err(e) => panic!("place: {e:?}"),
                }
                for (i, &bk) in ks.iter().enumerate() {
                    if out[i].is_err() {
                        continue;
                    }
                    let id = next_id(bk) | CLAIM_ID;
                    match ledger.claim(&keys[bk as usize], PLACEHOLDER, id, runner, now) {
                        Ok(()) => {
                            w.claim_won += 1;
                            remember(&mut mine, bk, id);
                        }
                        Err(_) => w.claim_lost += 1,
                    }
                }
            }
            300..400 => {
                let id = next_id(k) | CLAIM_ID;
                match ledger.claim(key, PLACEHOLDER, id, runner, now) {
                    Ok(()) => {
                        w.claim_won += 1;
                        remember(&mut mine, k, id);
                    }
                    Err(
                        ClaimError::Lost
                        | ClaimError::NotFound
                        | ClaimError::PlaceholderMismatch
                        | ClaimError::Finalized(_),
                    ) => w.claim_lost += 1,
                }
            }
            400..600 => {
                let outcome = OUTCOMES[rng.below(3) as usize];
                let payload = (k << 40) | 1;
                match ledger.finalize(key, outcome, payload, now) {
                    Ok(()) => {
                        w.finalize_won += 1;
                        // The duplicate: told what won. (Reclaimed meanwhile and inserted again
                        // by another thread, it may win that new lifetime: counted so.)
                        match ledger.finalize(key, Outcome::Failed, (k << 40) | 2, now) {
                            Ok(()) => w.finalize_won += 1,
                            Err(FinalizeError::Duplicate(o)) => {
                                assert!(valid_outcome(o), "{o:?}");
                                w.duplicate += 1;
                            }
                            Err(FinalizeError::NotFound) => {}
                        }
                    }
                    Err(FinalizeError::Duplicate(o)) => {
                        assert!(valid_outcome(o), "{o:?}");
                        w.duplicate += 1;
                    }
                    Err(FinalizeError::NotFound) => {}
                }
            }
            600..650 => {
                if let Some((tk, id)) = mine.pop_back() {
                    match ledger.take(&keys[tk as usize], id) {
                        Ok(()) => w.taken += 1,
                        Err(TakeError::Mismatch | TakeError::NotFound) => {}
                        Err(TakeError::Finalized(o)) => assert!(valid_outcome(o), "{o:?}"),
                    }
                }
            }
            650..760 => {
                // A heartbeat; counted by nothing.
                let _ = ledger.touch(key, runner, now);
            }
            760..850 => w.timed_out += ledger.reconcile(now, PAGE).changed as u64,
            850..980 => w.reclaimed += ledger.reclaim(now, PAGE).changed as u64,
            980..982 => {
                w.own += ledger
                    .finalize_own(runner, Outcome::Failed, now, PAGE)
                    .changed as u64
            }
            _ => w.orphaned += ledger.sweep_orphans(now, QUIET, PAGE).changed as u64,
        }
    }
    w
}

/// Keeps the 64 latest (key, id) pairs of `mine`.
fn remember(mine: &mut VecDeque<(u64, u64)>, k: u64, id: u64) {
    if mine.len() == 64 {
        mine.pop_front();
    }
    mine.push_back((k, id));
}

fn valid_outcome(o: Outcome) -> bool {
    OUTCOMES.contains(&o) || matches!(o, Outcome::TimedOut | Outcome::Orphaned)
}

/// Reads the ledger while the workers run; returns how many samples it took and the largest
/// `len()` it read.
///
/// Every `len()` it reads is at most the capacity (`len_never_exceeds_the_capacity_of_one` pins
/// the bug this once had).
fn sampler(ledger: &Ledger<ByteKey>, keys: &[ByteKey], done: &AtomicBool) -> (u64, usize) {
    let mut rng = Rng(0xabcdef);
    let mut last = ledger.counts();
    let mut samples = 0u64;
    let mut max_len = 0;
    // Ordering: Acquire; pairs with the Release store after the workers joined.
    while !done.load(Ordering::Acquire) {
        samples += 1;
        max_len = max_len.max(ledger.len());
        assert!(
            ledger.len() <= CAPACITY,
            "len {} above the capacity",
            ledger.len()
        );
        let counts = ledger.counts();
        for event in LedgerEvent::ALL {
            assert!(
                counts.get(event) >= last.get(event),
                "{event:?} went back: {} after {}",
                counts.get(event),
                last.get(event)
            );
        }
        last = counts;
        for _ in 0..8 {
            let k = rng.below(KEYS);
            let Some(v) = ledger.get(&keys[k as usize]) else {
                continue;
            };
            // Every field belongs to a record of this key (a batch record carries the key bits
            // of its batch's first key, at most two keys before it).
            let dk = v.deadline & KEY_MASK;
            assert!(
                dk == k || (dk + 1) % KEYS == k || (dk + 2) % KEYS == k,
                "key {k}: a deadline of key {dk}: {v:?}"
            );
            assert!(
                v.id == PLACEHOLDER || v.id >> 40 == k,
                "key {k}: id {:#x}: {v:?}",
                v.id
            );
            assert!(v.payload == 0 || v.payload >> 40 == k, "key {k}: {v:?}");
            assert!(
                v.last_duplicate_payload == 0 || v.last_duplicate_payload >> 40 == k,
                "key {k}: {v:?}"
            );
            assert!(v.runner <= THREADS, "key {k}: {v:?}");
            assert_eq!(v.refreshed_at & KEY_MASK, 0, "key {k}: {v:?}");
            if let Some(at) = v.finalized_at {
                assert_eq!(at & KEY_MASK, 0, "key {k}: {v:?}");
            }
            if let RecordState::Finalized(o) = v.state {
                assert!(valid_outcome(o), "key {k}: {v:?}");
            }
            whole_view(k, &v);
        }
    }
    (samples, max_len)
}

/// Asserts `v` is one state a record of key `k` held, whole: a placed or claimed record has no
/// terminal fields and the id and runner of how it began (the placeholder and no runner, an
/// insert's id and runner, a claim's request id and runner); a terminal one has its time, a
/// payload of this harness, and its duplicate count and payload together.
fn whole_view(k: u64, v: &RecordView) {
    let claim_id = v.id != PLACEHOLDER && v.id & CLAIM_ID != 0;
    match v.id {
        PLACEHOLDER => assert_eq!(v.runner, 0, "key {k}: a placeholder with a runner: {v:?}"),
        _ => assert!(v.runner >= 1, "key {k}: an id without its runner: {v:?}"),
    }
    match v.state {
        RecordState::Placed | RecordState::Claimed => {
            assert_eq!(
                v.state == RecordState::Claimed,
                claim_id,
                "key {k}: the state and the id disagree: {v:?}"
            );
            assert_eq!(v.finalized_at, None, "key {k}: pending, finalized: {v:?}");
            assert_eq!(
                (v.payload, v.duplicates, v.last_duplicate_payload),
                (0, 0, 0),
                "key {k}: pending, with terminal fields: {v:?}"
            );
        }
        RecordState::Finalized(_) => {
            assert!(
                v.finalized_at.is_some(),
                "key {k}: terminal, no time: {v:?}"
            );
            assert!(
                matches!(v.payload & ((1 << 40) - 1), 0..=2),
                "key {k}: {v:?}"
            );
            assert_eq!(
                v.duplicates == 0,
                v.last_duplicate_payload == 0,
                "key {k}: a duplicate count without its payload: {v:?}"
            );
        }
    }
}

#[test]
fn every_lifetime_has_one_terminal_winner_and_the_counts_are_the_wins() {
    let registry = Registry::new();
    let ledger = Ledger::<ByteKey>::with_metrics(
        LedgerConfig {
            capacity: CAPACITY,
            retention: RETENTION,
            kind: LedgerKind::Pending,
        },
        &registry,
    )
    .unwrap();
    let keys: Vec<ByteKey> = (0..KEYS)
        .map(|k| ByteKey::new(format!("key-{k}").as_bytes()).unwrap())
        .collect();
    let clock = AtomicU64::new(1);
    let done = AtomicBool::new(false);
    let (wins, (samples, max_len)) = std::thread::scope(|s| {
        let sampler = s.spawn(|| sampler(&ledger, &keys, &done));
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ledger, keys, clock) = (&ledger, &keys, &clock);
                s.spawn(move || worker(ledger, keys, clock, t))
            })
            .collect();
        let mut wins = Wins::default();
        for w in workers {
            wins.add(&w.join().unwrap());
        }
        // Ordering: Release; pairs with the sampler's Acquire load.
        done.store(true, Ordering::Release);
        (wins, sampler.join().unwrap())
    });
    eprintln!(
        "{wins:?}, {samples} samples, len {} (the largest read {max_len})",
        ledger.len()
    );
    assert!(samples > 0);

    let c = ledger.counts();
    assert_eq!(c.get(LedgerEvent::ClaimWon), wins.claim_won);
    assert_eq!(c.get(LedgerEvent::ClaimLost), wins.claim_lost);
    assert_eq!(
        c.get(LedgerEvent::FinalizeWon),
        wins.finalize_won + wins.taken + wins.own + wins.orphaned
    );
    assert_eq!(c.get(LedgerEvent::FinalizeDuplicate), wins.duplicate);
    assert_eq!(c.get(LedgerEvent::ReconciledTimeout), wins.timed_out);
    assert_eq!(c.get(LedgerEvent::RejectedFull), wins.full);
    assert_eq!(c.get(LedgerEvent::Reclaimed), wins.reclaimed + wins.taken);
    // The mix reached every transition.
    for (name, n) in [
        ("inserts", wins.inserted),
        ("placements", wins.placed),
        ("full", wins.full),
        ("claims", wins.claim_won),
        ("finalizations", wins.finalize_won),
        ("duplicates", wins.duplicate),
        ("takes", wins.taken),
        ("timeouts", wins.timed_out),
        ("reclaims", wins.reclaimed),
    ] {
        assert!(n > 0, "no {name}");
    }

    // At most one terminal write per lifetime, and every lifetime not reclaimed is held.
    assert!(wins.terminal() <= wins.lifetimes(), "{wins:?}");
    let held = wins.lifetimes() - wins.reclaimed - wins.taken;
    assert_eq!(ledger.len() as u64, held);
    assert!(ledger.len() <= CAPACITY);

    // Drain: one whole pass times out every PENDING record, then one reclaims everything. Every
    // lifetime has then ended with exactly one terminal write, and been reclaimed once.
    let end = clock.load(Ordering::Relaxed) + 100_000;
    let page = ledger.reconcile(end << TIME_SHIFT, CAPACITY);
    assert_eq!(page.scanned, CAPACITY);
    let timed_out = wins.timed_out + page.changed as u64;
    assert_eq!(
        wins.finalize_won + wins.taken + wins.own + wins.orphaned + timed_out,
        wins.lifetimes(),
        "one terminal write per lifetime"
    );
    let page = ledger.reclaim((end << TIME_SHIFT) + RETENTION, CAPACITY);
    assert_eq!(page.changed as u64, held);
    assert!(ledger.is_empty());
    let c = ledger.counts();
    assert_eq!(c.get(LedgerEvent::Reclaimed), wins.lifetimes());
    assert_eq!(c.get(LedgerEvent::ReconciledTimeout), timed_out);
}

/// `len()` is "a moment's view" of the records held, so it never reads above the capacity: a
/// ledger of one record, one thread inserting and taking records of 64 keys in turn (never more
/// than one held), another reading `len()`. The ledger never holds two records, so no moment has
/// `len() == 2`.
///
/// It failed when `Ledger::len` was the map's `len()`, which sums the map's shards one at a time
/// (each under its own read lock): a take that removes a key from a shard already summed, then an
/// insert that adds a key to a shard not yet summed, were both counted, so one sum read 2. `len`
/// now counts records in one word.
#[test]
fn len_never_exceeds_the_capacity_of_one() {
    let registry = Registry::new();
    let ledger = Ledger::<ByteKey>::with_metrics(
        LedgerConfig {
            capacity: 1,
            retention: 0,
            kind: LedgerKind::Pending,
        },
        &registry,
    )
    .unwrap();
    let keys: Vec<ByteKey> = (0..64)
        .map(|k| ByteKey::new(format!("key-{k}").as_bytes()).unwrap())
        .collect();
    let done = AtomicBool::new(false);
    let rounds: u64 = if cfg!(debug_assertions) {
        20_000
    } else {
        500_000
    };
    let worst = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut worst = 0;
            // Ordering: Acquire; pairs with the Release store below.
            while !done.load(Ordering::Acquire) {
                worst = worst.max(ledger.len());
            }
            worst
        });
        for i in 0..rounds {
            let key = &keys[(i % 64) as usize];
            let record = NewRecord {
                id: i,
                runner: 0,
                deadline: u64::MAX,
            };
            ledger.insert(key, record, 0).unwrap();
            ledger.take(key, i).unwrap();
        }
        // Ordering: Release; pairs with the sampler's Acquire load.
        done.store(true, Ordering::Release);
        sampler.join().unwrap()
    });
    assert!(worst <= 1, "len() read {worst} of a ledger of capacity 1");
}

/// A duplicate's audit payload stays on the record it was a duplicate of: one slot, reused by
/// eight keys in turn (one thread inserts, finalizes and reclaims), while two threads send late
/// duplicate finalizations of every key, each carrying its key in the payload; no record shows
/// another key's. (Before the ledger's pins, a late duplicate's audit stores landed on the slot's
/// next record.)
#[test]
fn late_duplicates_leave_their_payload_on_their_own_record() {
    const N: u64 = 8;
    let registry = Registry::new();
    let ledger = Ledger::<ByteKey>::with_metrics(
        LedgerConfig {
            capacity: 1,
            retention: 0,
            kind: LedgerKind::Pending,
        },
        &registry,
    )
    .unwrap();
    let keys: Vec<ByteKey> = (0..N)
        .map(|k| ByteKey::new(format!("key-{k}").as_bytes()).unwrap())
        .collect();
    let done = AtomicBool::new(false);
    let rounds: u64 = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let foreign = std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                // Ordering: Acquire; pairs with the Release store below.
                while !done.load(Ordering::Acquire) {
                    for (k, key) in keys.iter().enumerate() {
                        let _ = ledger.finalize(key, Outcome::Failed, ((k as u64) << 40) | 2, 0);
                    }
                }
            });
        }
        let mut foreign = None;
        for i in 0..rounds {
            let k = i % N;
            let key = &keys[k as usize];
            let record = NewRecord {
                id: i,
                runner: 0,
                deadline: u64::MAX,
            };
            ledger.insert(key, record, 0).unwrap();
            let _ = ledger.finalize(key, Outcome::Succeeded, (k << 40) | 1, 0);
            if let Some(v) = ledger.get(key) {
                let p = v.last_duplicate_payload;
                if p != 0 && p >> 40 != k && foreign.is_none() {
                    foreign = Some((k, v));
                }
            }
            while ledger.reclaim(0, 1).changed == 0 {}
        }
        // Ordering: Release; pairs with the duplicates' Acquire load.
        done.store(true, Ordering::Release);
        foreign
    });
    assert_eq!(
        foreign, None,
        "a record with another key's duplicate payload"
    );
}

/// A claim writes its request id after its winning CAS, and the record may be finalized at once
/// by another thread; its id must still never land on the slot's next record. One slot, reused
/// by eight keys in turn (one thread inserts, finalizes and reclaims), two threads claiming
/// every key with a request id that carries the key: no record shows another key's id. (Before
/// the ledger's pins, it did.)
#[test]
fn late_claim_writes_stay_on_their_record() {
    const N: u64 = 8;
    const PLACEHOLDER: u64 = 7;
    let registry = Registry::new();
    let ledger = Ledger::<ByteKey>::with_metrics(
        LedgerConfig {
            capacity: 1,
            retention: 0,
            kind: LedgerKind::Claim,
        },
        &registry,
    )
    .unwrap();
    let keys: Vec<ByteKey> = (0..N)
        .map(|k| ByteKey::new(format!("key-{k}").as_bytes()).unwrap())
        .collect();
    let done = AtomicBool::new(false);
    let rounds: u64 = if cfg!(debug_assertions) {
        20_000
    } else {
        500_000
    };
    let foreign = std::thread::scope(|s| {
        for t in 0..2u64 {
            let (ledger, keys, done) = (&ledger, &keys, &done);
            s.spawn(move || {
                // Ordering: Acquire; pairs with the Release store below.
                while !done.load(Ordering::Acquire) {
                    for (k, key) in keys.iter().enumerate() {
                        let id = ((k as u64) << 40) | t;
                        let _ = ledger.claim(key, PLACEHOLDER, id, 9, 0);
                    }
                }
            });
        }
        let mut foreign = None;
        for i in 0..rounds {
            let k = i % N;
            let key = &keys[k as usize];
            let record = NewRecord {
                id: PLACEHOLDER,
                runner: 0,
                deadline: u64::MAX,
            };
            ledger.insert(key, record, 0).unwrap();
            let _ = ledger.finalize(key, Outcome::Succeeded, 0, 0);
            if let Some(v) = ledger.get(key) {
                if v.id != PLACEHOLDER && v.id >> 40 != k && foreign.is_none() {
                    foreign = Some((k, v));
                }
            }
            while ledger.reclaim(0, 1).changed == 0 {}
        }
        // Ordering: Release; pairs with the claimers' Acquire load.
        done.store(true, Ordering::Release);
        foreign
    });
    assert_eq!(foreign, None, "a record with another key's request id");
}
