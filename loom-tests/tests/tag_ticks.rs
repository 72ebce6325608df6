//! loom models of `wkcore::tag`'s access marks against TTL reclamation: a body's hit mark (the
//! cleanup tick of its latest hit) and its exact access time only ever grow, so a writer that
//! read the tick (or the clock) before another and stores after it never drags the body back,
//! and the cleanup never reclaims a body earlier than upstream's exact rule (`now − last access >
//! ttl`, strictly) would.
//!
//! Both models failed on the first version of the marks, which stored the value plainly: the
//! hit mark when it differed from the tick, the exact time always. Each says which interleaving
//! broke it.
//!
//! As in `tag.rs`, the cache's snapshot cell and index are loom-`Mutex` stand-ins under
//! `--cfg wkcore_loom`, and the marks, ticks and the [`ManualClock`] are loom's atomics.
#![cfg(wkcore_loom)]

use loom::thread;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::*;

const CH: &str = "group:g1";
const LOCAL: u64 = 2;
/// The clock's reading when a model starts (the body's store time).
const START: u64 = 1_000;
const TTL: u64 = 100;

struct Fixture {
    cache: PartitionCache,
    clock: std::sync::Arc<ManualClock>,
    _metrics: Registry,
}

fn fixture() -> Fixture {
    let metrics = Registry::new();
    let clock = std::sync::Arc::new(ManualClock::new(START));
    let cache = PartitionCache::with_metrics(
        CacheOptions {
            local_node_id: LOCAL,
            ttl_nanos: TTL,
            clock: clock.clone(),
        },
        &metrics,
    );
    Fixture {
        cache,
        clock,
        _metrics: metrics,
    }
}

fn tag() -> TagParts {
    TagParts {
        key: "k".into(),
        channel_key: CH.into(),
        tag_version: 1,
        subscriber_mutation_version: 1,
        partitions: vec![NodePartition::new(LOCAL, ["u2"]).unwrap()],
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

/// Two hits on different ticks race a cleanup: reader A hits the body (in tick 1, or in tick 2
/// if it reads the tick after the cleanup moved it), while thread B runs a cleanup at `T2`
/// (ending tick 1, reclaiming nothing) and then hits the body at `T2 + 1` or later, in tick 2.
/// After both, a cleanup at `T2 + 1 + TTL`: by upstream's exact rule B's hit keeps the body
/// (`(T2 + 1 + TTL) − (T2 + 1)` is not above the TTL).
///
/// Proves: both hits hit; the last cleanup keeps the body whatever the order of A's mark and
/// B's. The first version failed here: A loads tick 1 and a mark other than 1, B's cleanup ends
/// tick 1 and B marks tick 2, then A stores tick 1, so the last cleanup bounded the body's last
/// hit by the end of tick 1 (`T2`) and reclaimed it a tick early.
#[test]
fn tag_ticks_older_hit_never_drags_the_mark_back() {
    const T2: i64 = (START + TTL / 2) as i64;
    loom::model(|| {
        let f = fixture();
        let t = tag();
        assert!(f.cache.store(&t).is_stored());
        let a = {
            let (cache, t) = (f.cache.clone(), t.clone());
            thread::spawn(move || cache.lookup(CH, &request(&t)).reason())
        };
        let b = {
            let (cache, clock, t) = (f.cache.clone(), f.clock.clone(), t.clone());
            thread::spawn(move || {
                // Inside the TTL of the store and of any hit: nothing is reclaimed.
                assert_eq!(cache.cleanup_expired(T2, 8).reclaimed, 0);
                // B's hit comes after the cleanup, at T2 + 1 (hits read no clock; this dates it).
                clock.set(T2 as u64 + 1);
                cache.lookup(CH, &request(&t)).reason()
            })
        };
        assert_eq!(a.join().unwrap(), LookupReason::Hit);
        assert_eq!(b.join().unwrap(), LookupReason::Hit);
        let last_hit = T2 + 1;
        let now = last_hit + TTL as i64;
        assert_eq!(
            f.cache.cleanup_expired(now, 8).reclaimed,
            0,
            "reclaimed at {now}, a TTL of {TTL} after the last hit at {last_hit}"
        );
        assert!(f.cache.current(CH).is_some());
        // Past a TTL after the end of the last hit's tick, it goes.
        assert_eq!(
            f.cache.cleanup_expired(now + TTL as i64 + 1, 8).reclaimed,
            1
        );
    });
}

/// Two fetches by key race (upstream's `LookupTag`, which stamps the exact time): A reads the
/// clock at [`START`], while B moves the clock to `START + 50` and fetches. After both, a cleanup
/// at `START + 50 + TTL` must keep the body (B's fetch is not more than a TTL old).
///
/// Proves: the exact access time is the latest fetch's, whatever order the two writes land in.
/// The first version failed here: A read the clock at `START`, B stored `START + 50`, then A
/// stored `START`, and the cleanup reclaimed the body 50 early.
#[test]
fn tag_ticks_older_fetch_never_drags_the_access_back() {
    const LATER: u64 = START + TTL / 2;
    loom::model(|| {
        let f = fixture();
        let t = tag();
        assert!(f.cache.store(&t).is_stored());
        let a = {
            let cache = f.cache.clone();
            thread::spawn(move || cache.lookup_tag(CH, "k").is_some())
        };
        let b = {
            let (cache, clock) = (f.cache.clone(), f.clock.clone());
            thread::spawn(move || {
                clock.set(LATER);
                cache.lookup_tag(CH, "k").map(|b| b.last_access())
            })
        };
        assert!(a.join().unwrap());
        assert!(b.join().unwrap().is_some_and(|at| at >= LATER as i64));
        let body = f.cache.current(CH).unwrap();
        assert_eq!(body.last_access(), LATER as i64, "the access moved back");
        let now = (LATER + TTL) as i64;
        assert_eq!(f.cache.cleanup_expired(now, 8).reclaimed, 0);
        assert_eq!(f.cache.cleanup_expired(now + 1, 8).reclaimed, 1);
    });
}
