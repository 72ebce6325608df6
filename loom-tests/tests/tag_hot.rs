//! loom models of the follower hit as a host runs it inline (`wkcore::tag::hot`, the futex
//! shape of `wk_tag_cache_lookup_hot`): the host holds a body, its generation and the cell's
//! words from one crossing (`PartitionCache::lookup_hosted`), and then hits with its own atomics
//! on those words — modelled here as plain loom atomics with the weakest orderings the protocol
//! allows (an `Acquire` load of the generation word, `Relaxed` marks and counters; Go's atomics
//! are stronger) — while a store and a cleanup race it.
//!
//! As in `tag.rs`, the snapshot cell, the index and the roster are loom stand-ins (mutexes);
//! the generation word, the tick, the marks and the host rows are loom atomics, so every order
//! of the bracket (`begin`, CAS, `end`) against the host's load is explored.
#![cfg(wkcore_loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::*;

const CH: &str = "group:g1";
const LOCAL: u64 = 2;
const START: u64 = 1_000;
const TTL: u64 = 100;
/// A cleanup's `now` at which a body stored at [`START`] and never hit is past the TTL.
const EXPIRED: i64 = (START + TTL + 1) as i64;

struct Fixture {
    cache: PartitionCache,
    _metrics: Registry,
}

fn fixture() -> Fixture {
    let metrics = Registry::new();
    let cache = PartitionCache::with_metrics(
        CacheOptions {
            local_node_id: LOCAL,
            ttl_nanos: TTL,
            clock: std::sync::Arc::new(ManualClock::new(START)),
        },
        &metrics,
    );
    Fixture {
        cache,
        _metrics: metrics,
    }
}

fn tag(key: &str, version: u64, smv: u64) -> TagParts {
    TagParts {
        key: key.into(),
        channel_key: CH.into(),
        tag_version: version,
        subscriber_mutation_version: smv,
        partitions: vec![NodePartition::new(LOCAL, [format!("{key}/{version}/{smv}")]).unwrap()],
        ..TagParts::default()
    }
}

fn request(t: &TagParts) -> LookupRequest<'_> {
    LookupRequest {
        tag_key: &t.key,
        tag_version: t.tag_version,
        subscriber_mutation_version: t.subscriber_mutation_version,
        source_channel_key: &t.source_channel_key,
        source_subscriber_mutation_version: t.source_subscriber_mutation_version,
        topology: t.topology.view(),
    }
}

/// What the host holds after a crossing: the body, its generation and the cell.
struct Held {
    body: std::sync::Arc<DeliveryTag>,
    generation: u64,
    channel: ChannelHandle,
}

fn hold(cache: &PartitionCache, r: &LookupRequest<'_>) -> Held {
    let found = cache.lookup_hosted(CH, r);
    Held {
        generation: found.generation.expect("nothing races: a stable pair"),
        channel: found.channel.expect("a live cell"),
        body: found.lookup.into_tag().expect("a body"),
    }
}

/// The host's inline attempt: `Some(reason)` when the word still holds the held generation
/// (the fence on the held body, the mark, the count), `None` when it must cross.
fn inline(held: &Held, r: &LookupRequest<'_>) -> Option<LookupReason> {
    let words = held.channel.host_words();
    if words.generation.load(Ordering::Acquire) != held.generation {
        return None;
    }
    let reason = fence(&held.body, r);
    if reason == LookupReason::Hit {
        let marks = held.body.host_marks();
        let tick = words.tick.load(Ordering::Relaxed);
        // The library's mark: raised, never lowered, and no write when it is current.
        let mut seen = marks.touched.load(Ordering::Relaxed);
        while seen < tick {
            match marks.touched.compare_exchange_weak(
                seen,
                tick,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => seen = actual,
            }
        }
    }
    words.hit_rows[0][reason as usize].fetch_add(1, Ordering::Relaxed);
    Some(reason)
}

/// Whatever the host holds, a crossing now agrees with the cache: a stable pair's body is the
/// channel's current one, and the word holds its generation.
fn settled(f: &Fixture, t: &TagParts) {
    let found = f.cache.lookup_hosted(CH, &request(t));
    let current = f.cache.current(CH);
    match (found.generation, found.channel) {
        (Some(g), Some(ch)) => {
            let body = found.lookup.into_tag().expect("a body with a generation");
            let cur = current.expect("a body is current");
            assert!(
                std::sync::Arc::ptr_eq(&body, &cur),
                "a generation of another body"
            );
            assert_eq!(ch.host_words().generation.load(Ordering::Acquire), g);
        }
        (None, _) => assert!(current.is_none(), "nothing races: the pair is stable"),
        (Some(_), None) => panic!("a generation without a cell"),
    }
}

/// A store of a newer tag races the host's inline hit on the older one.
///
/// Proves: a store that returned before the hit began is never missed (the host crosses and
/// sees it); an inline hit answers with the held body, which is whole; the crossing's pair
/// agrees with the cache afterwards; every look-up is counted once.
#[test]
fn tag_hot_inline_hit_vs_store() {
    loom::model(|| {
        let f = fixture();
        let t1 = tag("k", 1, 1);
        let t2 = tag("k", 2, 1);
        assert!(f.cache.store(&t1).is_stored());
        let held = hold(&f.cache, &request(&t1));
        let stored = std::sync::Arc::new(AtomicBool::new(false));
        let writer = {
            let (cache, t2, stored) = (f.cache.clone(), t2.clone(), stored.clone());
            thread::spawn(move || {
                assert!(cache.store(&t2).is_stored());
                // Ordering: SeqCst; the host's SeqCst load below orders the whole store first.
                stored.store(true, Ordering::SeqCst);
            })
        };
        // Ordering: SeqCst; pairs with the writer's store.
        let before = stored.load(Ordering::SeqCst);
        match inline(&held, &request(&t1)) {
            Some(reason) => {
                assert!(!before, "a finished store was missed by the inline hit");
                assert_eq!(reason, LookupReason::Hit);
            }
            None => {
                let found = f.cache.lookup_hosted(CH, &request(&t1));
                let body = found.lookup.tag().expect("a body");
                match body.tag_version() {
                    1 => {
                        assert!(!before);
                        assert!(found.lookup.is_hit());
                    }
                    2 => assert_eq!(found.lookup.reason(), LookupReason::StaleRequest),
                    v => panic!("version {v}"),
                }
                // A stable pair names its own body's generation.
                if let Some(g) = found.generation {
                    let swaps = g / host_layout::GEN_VERSION_ONE;
                    assert_eq!(swaps, body.tag_version(), "generation {g:#x}");
                }
            }
        }
        writer.join().unwrap();
        settled(&f, &t2);
        // The hold, the host's look-up (inline, or its crossing) and the settling crossing.
        let c = f.cache.counts();
        let lookups: u64 = c.lookups.iter().sum();
        assert_eq!(lookups, 3, "{c:?}");
    });
}

/// A store races the crossing itself: the pair it hands out is stable only when its body is
/// the one of its generation.
///
/// Proves: a stable generation counts exactly the swaps up to its body (one for `t1`, two for
/// `t2`), so a host never holds a body under a generation that a later swap also reaches.
#[test]
fn tag_hot_crossing_vs_store() {
    loom::model(|| {
        let f = fixture();
        let t1 = tag("k", 1, 1);
        let t2 = tag("k", 2, 1);
        assert!(f.cache.store(&t1).is_stored());
        let writer = {
            let (cache, t2) = (f.cache.clone(), t2.clone());
            thread::spawn(move || assert!(cache.store(&t2).is_stored()))
        };
        let found = f.cache.lookup_hosted(CH, &request(&t1));
        let version = found.lookup.tag().expect("a body").tag_version();
        if let Some(g) = found.generation {
            assert_eq!(g, version * host_layout::GEN_VERSION_ONE);
        }
        writer.join().unwrap();
        settled(&f, &t2);
    });
}

/// A cleanup races the host's inline hit on a body that is past the TTL and was never hit.
///
/// Proves: a cleanup that finished before the hit began is never missed (its retire moved the
/// word: the host crosses and finds no tag); a hit that finished before the cleanup began
/// keeps the body (its mark is in the tick the cleanup ends); the body the host holds stays
/// readable either way.
#[test]
fn tag_hot_inline_hit_vs_cleanup() {
    loom::model(|| {
        let f = fixture();
        let t1 = tag("k", 1, 1);
        assert!(f.cache.store(&t1).is_stored());
        // Held by a miss: a hit would mark the running tick and keep the body.
        let held = hold(&f.cache, &request(&tag("other", 1, 1)));
        let cleaned = std::sync::Arc::new(AtomicBool::new(false));
        let hit_done = std::sync::Arc::new(AtomicBool::new(false));
        let cleaner = {
            let (cache, cleaned, hit_done) = (f.cache.clone(), cleaned.clone(), hit_done.clone());
            thread::spawn(move || {
                // Ordering: SeqCst; pairs with the host's store after its hit.
                let after_hit = hit_done.load(Ordering::SeqCst);
                let page = cache.cleanup_expired(EXPIRED, 16);
                if after_hit {
                    assert_eq!(page.reclaimed, 0, "reclaimed a body hit before the cleanup");
                }
                // Ordering: SeqCst; pairs with the host's load.
                cleaned.store(true, Ordering::SeqCst);
                page.reclaimed
            })
        };
        // Ordering: SeqCst; pairs with the cleaner's store.
        let before = cleaned.load(Ordering::SeqCst);
        match inline(&held, &request(&t1)) {
            Some(reason) => {
                assert!(!before, "a finished cleanup was missed by the inline hit");
                assert_eq!(reason, LookupReason::Hit);
                // Ordering: SeqCst; pairs with the cleaner's load.
                hit_done.store(true, Ordering::SeqCst);
            }
            None => {
                // The word moved: the cleanup's bracket began. The crossing sees its retire,
                // or runs before it (a hit on the same body).
                let found = f.cache.lookup_hosted(CH, &request(&t1));
                match found.lookup.reason() {
                    LookupReason::MissingRef => {
                        assert!(found.channel.is_none() && found.generation.is_none());
                    }
                    LookupReason::Hit => assert!(!before, "a finished cleanup was missed"),
                    r => panic!("{r:?}"),
                }
            }
        }
        let reclaimed = cleaner.join().unwrap();
        // The held body is the host's: readable, whole, whatever was reclaimed.
        assert_eq!(held.body.partitions()[0].uids.get(0), Some(&b"k/1/1"[..]));
        assert_eq!(reclaimed == 1, f.cache.current(CH).is_none());
    });
}

/// A store and a cleanup race the host's inline hit (three threads).
///
/// Proves: the inline hit answers with the held body only while neither a finished store nor a
/// finished cleanup moved the word; a crossing answers a stale request or no tag once the store
/// finished; the cache and a new crossing agree at the end.
#[test]
fn tag_hot_inline_hit_vs_store_and_cleanup() {
    let mut builder = loom::model::Builder::new();
    // Three threads through the cache's mutex stand-ins: a bound of 1 keeps the model to
    // minutes; the two-thread models above run at the script's bound.
    builder.preemption_bound = Some(1);
    builder.check(|| {
        let f = fixture();
        let t1 = tag("k", 1, 1);
        let t2 = tag("k", 2, 1);
        assert!(f.cache.store(&t1).is_stored());
        let held = hold(&f.cache, &request(&tag("other", 1, 1)));
        let stored = std::sync::Arc::new(AtomicBool::new(false));
        let cleaned = std::sync::Arc::new(AtomicBool::new(false));
        let writer = {
            let (cache, t2, stored) = (f.cache.clone(), t2.clone(), stored.clone());
            thread::spawn(move || {
                let _ = cache.store(&t2);
                // Ordering: SeqCst; pairs with the host's load.
                stored.store(true, Ordering::SeqCst);
            })
        };
        let cleaner = {
            let (cache, cleaned) = (f.cache.clone(), cleaned.clone());
            thread::spawn(move || {
                cache.cleanup_expired(EXPIRED, 16);
                // Ordering: SeqCst; pairs with the host's load.
                cleaned.store(true, Ordering::SeqCst);
            })
        };
        // Ordering: SeqCst; pair with the two stores above.
        let (s0, c0) = (
            stored.load(Ordering::SeqCst),
            cleaned.load(Ordering::SeqCst),
        );
        match inline(&held, &request(&t1)) {
            Some(reason) => {
                assert!(!s0 && !c0, "a finished store or cleanup was missed");
                assert_eq!(reason, LookupReason::Hit);
            }
            None => {
                let found = f.cache.lookup_hosted(CH, &request(&t1));
                if s0 {
                    assert!(
                        matches!(
                            found.lookup.reason(),
                            LookupReason::StaleRequest | LookupReason::MissingRef
                        ),
                        "{:?}",
                        found.lookup.reason()
                    );
                }
            }
        }
        writer.join().unwrap();
        cleaner.join().unwrap();
        settled(&f, &t2);
    });
}
