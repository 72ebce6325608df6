//! Stress test of `wkcore::tag::PartitionCache`: two writers store tags (through the cache and
//! through held [`ChannelHandle`]s, some deliberately stale) on eight channels while four readers
//! look them up (through the index and through handles), a cleaner moves a `ManualClock` and
//! runs paged cleanups, and a monitor samples `counts()`.
//!
//! # The tags
//!
//! Each channel has a counter; a writer takes the next value `v` and stores the tag `T(v)`: key
//! `<channel>#<v / 16>` (a fresh key every 16 values), tag version `v % 16 + 1`, subscriber
//! mutation version `v / 4`, and one local UID `<channel>|<v>`. For `v1 < v2`, `T(v1)` is stale
//! against `T(v2)` by upstream's rule (same key: a lower tag version; a newer key: a lower
//! subscriber version, since a key's first value has a higher one than any of the previous key),
//! and `T(v2)` is never stale against `T(v1)`. So a store is accepted iff its `v` is at least the
//! channel's current one, and the current `v` of a channel never goes down while its cell lives.
//! Writers also store `T(v - d)` for a random `d`: mostly refused.
//!
//! # Hot and cold channels
//!
//! Channels 0..6 are *hot*: written all the time and never reclaimed, so the readers can check
//! that no reader ever sees a hot channel's `v` go down. A reclaimed channel starts afresh (any
//! store is accepted into its new cell, as upstream), so this needs the hot bodies to stay
//! within the TTL: the cleaner moves the clock by a third of the TTL only after every hot channel
//! had an accepted store since its previous move, and a writer's store runs under a read guard
//! that the move takes exclusively, so no store reads the clock before a move and publishes
//! after it. Channels 6 and 7 are *cold*: written (one store in 64) and hit (one look-up in
//! eight of them) during four clock moves of twelve only (a body hit in every tick is kept), so
//! they are reclaimed and made again over and over while readers and writers use them (through
//! handles whose cells were retired, too).
//!
//! # Checked
//!
//! - Readers: every body returned is one whole snapshot (its key, versions and UID all encode
//!   the same `v`; only the local partition; a hit matches the request), and on hot channels `v`
//!   never decreases per reader.
//! - Monitor, while the threads run: cached tags and UIDs never exceed what exists (a body per
//!   channel, one more while the cleaner is between a retire and its count; one UID per body),
//!   the index holds at most one cell per channel, and every counter is monotone.
//! - After the join: the lookup and store counters equal the threads' tallies; each hot
//!   channel's current tag is the highest `v` any writer stored, and is what upstream's manager
//!   (`MutexTagManager`) ends with when it replays every store of the run; after two cleanups
//!   more than a TTL apart nothing is cached, counted or indexed.
#![allow(clippy::disallowed_types)] // the harness's own atomics; the code under test uses the shim

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use wkcore::clock::{Clock, ManualClock};
use wkcore::metrics::Registry;
use wkcore::tag::*;
use wkcore_references::tag::MutexTagManager;

const SEC: u64 = 1_000_000_000;
const START: u64 = 1_700_000_000 * SEC;
const TTL: u64 = 30 * SEC;
const STEP: u64 = TTL / 3;
const LOCAL: u64 = 1;
const CHANNELS: usize = 8;
const HOT: usize = 6;
const WRITERS: usize = 2;
const READERS: usize = 4;
const WAIT: Duration = Duration::from_secs(30);

fn stores_per_writer() -> u64 {
    if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
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

fn channel(ch: usize) -> String {
    format!("group:{ch}")
}

fn topology() -> PartitionTopology {
    PartitionTopology::new(
        3,
        &[SlotAuthorityRef {
            slot_id: 1,
            leader_node_id: 2,
            config_epoch: 1,
            balance_version: 1,
        }],
    )
}

/// `T(v)` of `ch` (module docs).
fn tag(ch: usize, v: u64, topology: &PartitionTopology) -> TagParts {
    let name = channel(ch);
    let uid = format!("{name}|{v}");
    TagParts {
        key: format!("{name}#{}", v / 16).into(),
        channel_key: name.into(),
        tag_version: v % 16 + 1,
        subscriber_mutation_version: v / 4,
        topology: topology.clone(),
        partitions: vec![
            NodePartition::new(LOCAL, [uid.as_bytes()]).unwrap(),
            NodePartition::new(2, ["remote"]).unwrap(),
        ],
        ..TagParts::default()
    }
}

/// The `v` a body encodes, after checking that the whole body encodes it.
fn decode(ch: usize, body: &DeliveryTag) -> u64 {
    let name = channel(ch);
    assert_eq!(body.channel_key(), name);
    let k: u64 = body
        .key()
        .strip_prefix(&format!("{name}#"))
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("key {} of {name}", body.key()));
    let v = 16 * k + body.tag_version() - 1;
    assert!(body.tag_version() >= 1 && body.tag_version() <= 16);
    assert_eq!(
        body.subscriber_mutation_version(),
        v / 4,
        "a torn body of {name}"
    );
    assert_eq!(
        body.partitions().len(),
        1,
        "only the local partition is kept"
    );
    let p = &body.partitions()[0];
    assert_eq!(p.node_id, LOCAL);
    assert_eq!(p.uids.len(), 1);
    assert_eq!(p.uids.get(0).unwrap(), format!("{name}|{v}").as_bytes());
    assert_eq!(*body.topology(), topology());
    v
}

/// Whether the cold channels are in their active phase: four clock moves of twelve, so that
/// they go cold for eight (a third of the TTL each), are reclaimed, and are made again.
fn cold_phase(epoch: &AtomicU64) -> bool {
    // Ordering: Relaxed; only a hint of which channel to pick or hit.
    epoch.load(Ordering::Relaxed) % 12 < 4
}

/// Counts writers that finished (or panicked), so that no other thread waits for them forever.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

#[derive(Default)]
struct Totals {
    lookups: [AtomicU64; 7],
    stored: AtomicU64,
    stale: AtomicU64,
    hot_checks: AtomicU64,
    reclaimed: AtomicU64,
    samples: AtomicU64,
    moves: AtomicU64,
}

#[test]
fn writers_readers_cleaner_and_monitor_keep_every_invariant() {
    let started = Instant::now();
    let clock = Arc::new(ManualClock::new(START));
    let registry = Registry::new();
    let cache = PartitionCache::with_metrics(
        CacheOptions {
            local_node_id: LOCAL,
            ttl_nanos: TTL,
            clock: clock.clone(),
        },
        &registry,
    );
    let topo = topology();
    let counters: Vec<AtomicU64> = (0..CHANNELS).map(|_| AtomicU64::new(0)).collect();
    // The highest `v` stored per channel, and every hot store, for the checks after the join.
    let highest: Vec<AtomicU64> = (0..CHANNELS).map(|_| AtomicU64::new(0)).collect();
    let logs: Vec<Mutex<Vec<(usize, u64)>>> = (0..WRITERS).map(|_| Mutex::default()).collect();
    // The cleaner's clock moves, and per hot channel the latest move before an accepted store.
    let epoch = AtomicU64::new(0);
    let progress: Vec<AtomicU64> = (0..HOT).map(|_| AtomicU64::new(0)).collect();
    let gate = RwLock::new(());
    let finished = AtomicUsize::new(0);
    let totals = Totals::default();
    let stop_all = AtomicBool::new(false);
    let done = || finished.load(Ordering::Acquire) == WRITERS || stop_all.load(Ordering::Relaxed);

    std::thread::scope(|s| {
        for (w, log) in logs.iter().enumerate() {
            let (cache, topo, counters, highest) = (&cache, &topo, &counters, &highest);
            let (epoch, progress, gate, finished, totals) =
                (&epoch, &progress, &gate, &finished, &totals);
            s.spawn(move || {
                let _finished = Finished(finished);
                let mut rng = Rng(0x7a9 ^ w as u64);
                let mut handles: Vec<ChannelHandle> =
                    (0..CHANNELS).map(|ch| cache.handle(&channel(ch))).collect();
                let mut log_local = Vec::new();
                for _ in 0..stores_per_writer() {
                    let writing_cold = cold_phase(epoch);
                    let ch = if writing_cold && rng.below(64) == 0 {
                        HOT + rng.below((CHANNELS - HOT) as u64) as usize
                    } else {
                        rng.below(HOT as u64) as usize
                    };
                    let mut v = counters[ch].fetch_add(1, Ordering::Relaxed);
                    if rng.below(8) == 0 {
                        v = v.saturating_sub(1 + rng.below(40));
                    }
                    let t = tag(ch, v, topo);
                    if rng.below(256) == 0 {
                        // A fresh handle now and then (the old one may hold a retired cell).
                        handles[ch] = cache.handle(&channel(ch));
                    }
                    let outcome = {
                        let _no_clock_move = gate.read().unwrap();
                        // Ordering: Acquire; pairs with the cleaner's Release after its move.
                        let seen = epoch.load(Ordering::Acquire);
                        let outcome = if rng.below(2) == 0 {
                            cache.store(&t)
                        } else {
                            handles[ch].store(&t)
                        };
                        if outcome.is_stored() && ch < HOT {
                            progress[ch].fetch_max(seen, Ordering::Release);
                        }
                        outcome
                    };
                    let current = decode(ch, outcome.tag());
                    if outcome.is_stored() {
                        assert_eq!(current, v, "stored body");
                        totals.stored.fetch_add(1, Ordering::Relaxed);
                    } else {
                        assert!(current > v, "{v} refused for {current} of channel {ch}");
                        totals.stale.fetch_add(1, Ordering::Relaxed);
                    }
                    highest[ch].fetch_max(v, Ordering::Relaxed);
                    if ch < HOT {
                        log_local.push((ch, v));
                    }
                }
                *log.lock().unwrap() = log_local;
            });
        }
        for r in 0..READERS {
            let (cache, done, totals, epoch) = (&cache, &done, &totals, &epoch);
            s.spawn(move || {
                let mut rng = Rng(0x4ead ^ r as u64);
                let handles: Vec<ChannelHandle> =
                    (0..CHANNELS).map(|ch| cache.handle(&channel(ch))).collect();
                let mut seen: Vec<Option<TagParts>> = vec![None; CHANNELS];
                let mut tally = [0u64; 7];
                let mut hot_checks = 0;
                let mut i = 0u64;
                while !done() || i < 1000 {
                    i += 1;
                    let ch = rng.below(CHANNELS as u64) as usize;
                    let fallback = TagParts::default();
                    let base = seen[ch].as_ref().unwrap_or(&fallback);
                    // Cold channels are hit in their phase only, or the hits would keep them.
                    let (hit_odds, older) = match (ch < HOT, cold_phase(epoch)) {
                        (true, _) => (6, 7),
                        (false, true) => (1, 32),
                        (false, false) => (0, 32),
                    };
                    let version = match rng.below(64) {
                        n if n < 8 * hit_odds => base.tag_version,
                        n if n < 8 * hit_odds + older => base.tag_version.saturating_sub(1),
                        _ => base.tag_version + 1,
                    };
                    let req = LookupRequest {
                        tag_key: &base.key,
                        tag_version: version,
                        subscriber_mutation_version: base.subscriber_mutation_version,
                        source_channel_key: "",
                        source_subscriber_mutation_version: 0,
                        topology: base.topology.view(),
                    };
                    let found = if rng.below(2) == 0 {
                        cache.lookup(&channel(ch), &req)
                    } else {
                        handles[ch].lookup(&req)
                    };
                    tally[found.reason() as usize] += 1;
                    let Some(body) = found.tag() else {
                        assert_eq!(found.reason(), LookupReason::MissingRef);
                        continue;
                    };
                    assert_ne!(found.reason(), LookupReason::MissingRef);
                    let v = decode(ch, body);
                    if found.is_hit() {
                        assert_eq!(body.key(), req.tag_key);
                        assert_eq!(body.tag_version(), req.tag_version);
                        // A request's subscriber version 0 is not checked.
                        assert!(
                            req.subscriber_mutation_version == 0
                                || body.subscriber_mutation_version()
                                    == req.subscriber_mutation_version
                        );
                    }
                    if ch < HOT {
                        if let Some(prev) = &seen[ch] {
                            let last = 16
                                * (prev.key.rsplit('#').next().unwrap().parse::<u64>().unwrap())
                                + prev.tag_version
                                - 1;
                            assert!(v >= last, "hot channel {ch} went from {last} back to {v}");
                            hot_checks += 1;
                        }
                    }
                    let mut parts = body.to_parts();
                    parts.partitions.clear();
                    seen[ch] = Some(parts);
                }
                for (total, n) in totals.lookups.iter().zip(tally) {
                    total.fetch_add(n, Ordering::Relaxed);
                }
                totals.hot_checks.fetch_add(hot_checks, Ordering::Relaxed);
            });
        }
        {
            let (cache, clock, epoch, progress, gate, done, totals, stop_all) = (
                &cache, &clock, &epoch, &progress, &gate, &done, &totals, &stop_all,
            );
            s.spawn(move || {
                let mut rng = Rng(0xc1ea);
                let mut moves = 0u64;
                while !done() {
                    let wait = Instant::now();
                    // Every hot channel had an accepted store since the previous move.
                    while !done() && progress.iter().any(|p| p.load(Ordering::Acquire) < moves) {
                        if wait.elapsed() > WAIT {
                            stop_all.store(true, Ordering::Relaxed);
                            panic!("no accepted store on a hot channel in {WAIT:?}");
                        }
                        std::thread::yield_now();
                    }
                    {
                        let _exclusive = gate.write().unwrap();
                        clock.advance(STEP);
                        moves += 1;
                        // Ordering: Release; pairs with the writers' Acquire.
                        epoch.store(moves, Ordering::Release);
                        totals.moves.store(moves, Ordering::Relaxed);
                    }
                    let now = clock.now_nanos() as i64;
                    for _ in 0..1 + rng.below(3) {
                        let page =
                            cache.cleanup_expired(now, 1 + rng.below(CHANNELS as u64) as usize);
                        assert!(page.reclaimed <= page.visited && page.unlinked <= page.visited);
                        totals
                            .reclaimed
                            .fetch_add(page.reclaimed as u64, Ordering::Relaxed);
                    }
                }
            });
        }
        {
            let (cache, done, totals) = (&cache, &done, &totals);
            s.spawn(move || {
                let mut last = cache.counts();
                while !done() {
                    let c = cache.counts();
                    // A body per channel, one more between a retire and its count (the cleaner
                    // is one thread); one local UID per body.
                    assert!(c.tags <= CHANNELS as u64 + 1, "{c:?}");
                    assert!(c.uids <= CHANNELS as u64 + 1, "{c:?}");
                    assert!(cache.channels() <= CHANNELS);
                    for i in 0..7 {
                        assert!(c.lookups[i] >= last.lookups[i], "{last:?} then {c:?}");
                    }
                    for i in 0..2 {
                        assert!(c.stores[i] >= last.stores[i], "{last:?} then {c:?}");
                    }
                    assert!(c.reclaimed_bodies >= last.reclaimed_bodies);
                    assert!(c.reclaimed_refs >= last.reclaimed_refs);
                    last = c;
                    totals.samples.fetch_add(1, Ordering::Relaxed);
                    std::thread::yield_now();
                }
            });
        }
    });

    let c = cache.counts();
    let lookups: Vec<u64> = totals
        .lookups
        .iter()
        .map(|n| n.load(Ordering::Relaxed))
        .collect();
    assert_eq!(c.lookups.to_vec(), lookups);
    assert_eq!(c.lookups(LookupReason::MissingTag), 0);
    assert_eq!(
        c.stores,
        [
            totals.stored.load(Ordering::Relaxed),
            totals.stale.load(Ordering::Relaxed)
        ]
    );
    assert_eq!(c.reclaimed_bodies, totals.reclaimed.load(Ordering::Relaxed));
    assert!(totals.hot_checks.load(Ordering::Relaxed) > 0);
    assert!(totals.samples.load(Ordering::Relaxed) > 0);
    assert!(
        c.reclaimed_bodies > 0,
        "cold channels were reclaimed: {c:?}, {} clock moves",
        totals.moves.load(Ordering::Relaxed)
    );

    // Hot channels: the highest `v` stored is current, and upstream's manager, replaying every
    // store of the run, ends with the same references.
    let reference = MutexTagManager::new(LOCAL, TTL as i64);
    for log in &logs {
        for &(ch, v) in log.lock().unwrap().iter() {
            reference.store_follower_partition(&tag(ch, v, &topo), START as i64);
        }
    }
    for (ch, highest) in highest.iter().enumerate().take(HOT) {
        let current = cache
            .current(&channel(ch))
            .expect("a hot channel is never reclaimed");
        assert_eq!(decode(ch, &current), highest.load(Ordering::Relaxed));
        assert_eq!(
            cache.current_ref(&channel(ch)),
            reference.current_ref(&channel(ch))
        );
    }

    // Everything goes: two cleanups more than a TTL apart.
    for _ in 0..2 {
        clock.advance(TTL + 1);
        let now = clock.now_nanos() as i64;
        let page = cache.cleanup_expired(now, CLEANUP_LIMIT_MAX);
        assert!(page.wrapped);
    }
    let c = cache.counts();
    assert_eq!((c.tags, c.uids, cache.channels()), (0, 0, 0), "{c:?}");
    for ch in 0..CHANNELS {
        assert!(cache.current(&channel(ch)).is_none());
    }
    eprintln!(
        "stress_tag: {} stores ({} stale), {} lookups, {} reclaimed, {} samples in {:?}",
        c.stores[0] + c.stores[1],
        c.stores[1],
        c.lookups.iter().sum::<u64>(),
        c.reclaimed_bodies,
        totals.samples.load(Ordering::Relaxed),
        started.elapsed()
    );
}
