//! loom models of `wkcore::tag`: the follower cache's stale-safe swap (store vs store), whole
//! snapshots for readers (look-up vs store), retire-then-unlink reclamation against stores and
//! hits, handles whose cell was retired, and the leader's one bump per logical mutation with the
//! dirty mark.
//!
//! Under `--cfg wkcore_loom` the cache's snapshot cell (`ArcCell`) and its index (`ReadMap`) are
//! loom-`Mutex` stand-ins for arc-swap and papaya (whose own atomics loom cannot see), and the
//! counters, access marks, cleanup ticks, roster, the cleanup's and the leader's locks and the
//! [`ManualClock`] are loom's: these models check the tag protocol built on the cells, not the
//! cells' internals (the stress and model tests in `core/tests/` run the real ones). Each cache
//! counts in its own metrics [`Registry`], kept alive for the whole model.
#![cfg(wkcore_loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::*;

const CH: &str = "group:g1";
const LOCAL: u64 = 2;
/// The clock's reading when a model starts.
const START: u64 = 1_000;
const TTL: u64 = 100;
/// A cleanup's `now` at which a body stored at [`START`] (and never hit) is past the TTL.
const EXPIRED: i64 = (START + TTL + 1) as i64;

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

/// A tag of [`CH`] whose local UID names it: `<key>/<version>/<smv>`.
fn tag(key: &str, version: u64, smv: u64) -> TagParts {
    TagParts {
        key: key.into(),
        channel_key: CH.into(),
        tag_version: version,
        subscriber_mutation_version: smv,
        partitions: vec![
            NodePartition::new(LOCAL, [format!("{key}/{version}/{smv}")]).unwrap(),
            NodePartition::new(9, ["remote"]).unwrap(),
        ],
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

/// Asserts `body` is one whole snapshot: key, versions and the local partition of one of
/// `candidates` (never a mix, never the retired marker); the index of that one.
fn whole(body: &DeliveryTag, candidates: &[&TagParts]) -> usize {
    let uid = format!(
        "{}/{}/{}",
        body.key(),
        body.tag_version(),
        body.subscriber_mutation_version()
    );
    assert_eq!(body.partitions().len(), 1, "only the local partition");
    let p = &body.partitions()[0];
    assert_eq!(p.node_id, LOCAL);
    assert_eq!(p.uids.get(0), Some(uid.as_bytes()), "a torn body");
    candidates
        .iter()
        .position(|c| {
            *c.key == *body.key()
                && c.tag_version == body.tag_version()
                && c.subscriber_mutation_version == body.subscriber_mutation_version()
        })
        .unwrap_or_else(|| {
            panic!(
                "{} v{} is none of the stored tags",
                body.key(),
                body.tag_version()
            )
        })
}

/// Asserts the cache holds exactly `expected` for [`CH`] (or nothing), and its counts agree.
fn holds(f: &Fixture, expected: Option<&TagParts>) {
    let current = f.cache.current(CH);
    let c = f.cache.counts();
    match expected {
        Some(t) => {
            let cur = current.expect("the stored tag was lost");
            assert_eq!(whole(&cur, &[t]), 0);
            assert_eq!((c.tags, c.uids), (1, 1), "{c:?}");
            assert_eq!(f.cache.channels(), 1);
        }
        None => {
            assert!(current.is_none(), "{:?}", current.map(|t| t.to_parts()));
            assert_eq!((c.tags, c.uids), (0, 0), "{c:?}");
        }
    }
}

/// Two stores race, `older` against `newer` (`older` is stale against `newer` by upstream's
/// rule, `newer` is not against `older`), on a channel with no cell yet or with a cell holding
/// `base` (older than both). Loom runs both orders.
///
/// Proves: the newer survives whatever the order; a store refused as stale returns the newer
/// body (so the newer had landed); each store counts once; one cell, one body.
fn store_vs_store(older: TagParts, newer: TagParts, base: Option<TagParts>) {
    loom::model(move || {
        let f = fixture();
        if let Some(b) = &base {
            assert!(f.cache.store(b).is_stored());
        }
        let handle = f.cache.handle(CH);
        let t1 = {
            let (cache, t) = (f.cache.clone(), older.clone());
            thread::spawn(move || cache.store(&t))
        };
        let t2 = {
            let t = newer.clone();
            thread::spawn(move || handle.store(&t))
        };
        let (o1, o2) = (t1.join().unwrap(), t2.join().unwrap());
        assert!(o2.is_stored(), "the newer tag was refused");
        assert_eq!(whole(o2.tag(), &[&newer]), 0);
        if !o1.is_stored() {
            assert_eq!(whole(o1.tag(), &[&newer]), 0, "refused for another tag");
        } else {
            assert_eq!(whole(o1.tag(), &[&older]), 0);
        }
        holds(&f, Some(&newer));
        let c = f.cache.counts();
        let base_stores = u64::from(base.is_some());
        assert_eq!(c.stores[0] + c.stores[1], 2 + base_stores);
        assert_eq!(c.stores[1], u64::from(!o1.is_stored()));
    });
}

#[test]
fn tag_store_vs_store_same_key() {
    // The same key: the higher tag version wins.
    store_vs_store(tag("k", 1, 3), tag("k", 2, 3), None);
    store_vs_store(tag("k", 2, 3), tag("k", 3, 3), Some(tag("k", 1, 3)));
}

#[test]
fn tag_store_vs_store_new_key() {
    // A new incarnation with a higher subscriber version wins despite its version 1; the old
    // key's higher tag version is stale against it.
    store_vs_store(tag("old", 8, 8), tag("fresh", 1, 9), None);
    store_vs_store(tag("old", 8, 8), tag("fresh", 1, 9), Some(tag("old", 7, 8)));
}

/// A reader looks up with the request of the stored `first` while a writer stores `second`
/// (same key and a higher version, or a new key with a higher subscriber version), through the
/// index or a handle.
///
/// Proves: the reader gets a whole snapshot, the old or the new, with the reason that snapshot
/// gives: a hit on `first`, or `second` with `stale_request` (same key) or `tag_key_mismatch`
/// (new key); the look-up counts once; the store lands.
fn lookup_vs_store(second: TagParts, by_handle: bool) {
    loom::model(move || {
        let f = fixture();
        let first = tag("k", 1, 1);
        assert!(f.cache.store(&first).is_stored());
        let miss = if *second.key == *first.key {
            LookupReason::StaleRequest
        } else {
            LookupReason::TagKeyMismatch
        };
        let reader = {
            let (cache, first, second) = (f.cache.clone(), first.clone(), second.clone());
            let handle = cache.handle(CH);
            thread::spawn(move || {
                let found = if by_handle {
                    handle.lookup(&request(&first))
                } else {
                    cache.lookup(CH, &request(&first))
                };
                let which = whole(found.tag().expect("a body"), &[&first, &second]);
                (found.reason(), which)
            })
        };
        let writer = {
            let (cache, second) = (f.cache.clone(), second.clone());
            thread::spawn(move || cache.store(&second).is_stored())
        };
        let (reason, which) = reader.join().unwrap();
        assert!(writer.join().unwrap());
        match which {
            0 => assert_eq!(reason, LookupReason::Hit),
            _ => assert_eq!(reason, miss),
        }
        holds(&f, Some(&second));
        assert_eq!(f.cache.counts().lookups(reason), 1);
    });
}

#[test]
fn tag_lookup_vs_store() {
    lookup_vs_store(tag("k", 2, 2), false);
    lookup_vs_store(tag("k", 2, 2), true);
    lookup_vs_store(tag("k2", 1, 2), false);
}

/// A cleanup at a `now` past the TTL of the stored (never hit) `first` races a store of
/// `second`, through the index or a handle taken before.
///
/// Proves: a store is never lost. If it lands first, the cleanup sees a fresh body and
/// reclaims nothing; if the cleanup retires the cell first, the store meets the marker and
/// lands in a new cell. Either way the cache ends with `second`, one cell, one body; the
/// cleanup's count is in the counters; `first` was reclaimed at most once.
fn cleanup_vs_store(by_handle: bool) {
    loom::model(move || {
        let f = fixture();
        let (first, second) = (tag("k", 1, 1), tag("k", 2, 2));
        assert!(f.cache.store(&first).is_stored());
        f.clock.set(EXPIRED as u64);
        let handle = f.cache.handle(CH);
        let cleaner = {
            let cache = f.cache.clone();
            thread::spawn(move || cache.cleanup_expired(EXPIRED, 8))
        };
        let writer = {
            let (cache, second) = (f.cache.clone(), second.clone());
            thread::spawn(move || {
                if by_handle {
                    handle.store(&second)
                } else {
                    cache.store(&second)
                }
            })
        };
        let page = cleaner.join().unwrap();
        let stored = writer.join().unwrap();
        assert!(stored.is_stored(), "refused against a reclaimed tag");
        assert!(page.reclaimed <= 1 && page.unlinked == page.reclaimed);
        holds(&f, Some(&second));
        let c = f.cache.counts();
        assert_eq!(c.reclaimed_bodies, page.reclaimed as u64);
        assert_eq!(c.reclaimed_refs, page.unlinked as u64);
        // Whatever happened, the new tag is fresh: a second cleanup keeps it.
        assert_eq!(f.cache.cleanup_expired(EXPIRED, 8).reclaimed, 0);
        holds(&f, Some(&second));
    });
}

#[test]
fn tag_cleanup_vs_store() {
    cleanup_vs_store(false);
    cleanup_vs_store(true);
}

/// A cleanup at a `now` past the TTL of the stored `first` races a store of an older tag:
/// stale against `first` while it lives, accepted into a new cell once it is reclaimed.
///
/// Proves: a refused store saw `first`, and then the cleanup reclaimed `first` (the refusal
/// did not refresh it): nothing is left; an accepted store came after the reclaim, and its tag
/// is what the cache holds.
#[test]
fn tag_cleanup_vs_stale_store() {
    loom::model(|| {
        let f = fixture();
        let (first, older) = (tag("k", 2, 2), tag("k", 1, 1));
        assert!(f.cache.store(&first).is_stored());
        f.clock.set(EXPIRED as u64);
        let cleaner = {
            let cache = f.cache.clone();
            thread::spawn(move || cache.cleanup_expired(EXPIRED, 8))
        };
        let writer = {
            let (cache, older) = (f.cache.clone(), older.clone());
            thread::spawn(move || cache.store(&older))
        };
        let page = cleaner.join().unwrap();
        let stored = writer.join().unwrap();
        assert_eq!(page.reclaimed, 1, "an expired body that nothing refreshed");
        if stored.is_stored() {
            holds(&f, Some(&older));
        } else {
            assert_eq!(whole(stored.tag(), &[&first]), 0);
            holds(&f, None);
            assert_eq!(f.cache.channels(), 0);
        }
    });
}

/// A cleanup at a `now` past the TTL of the stored (never hit) `first` races a hit on it,
/// through the index or a handle.
///
/// Proves: the reader gets the whole body with `hit`, or `missing_ref` with no body (never the
/// retired marker); a miss means the cleanup reclaimed it; the cache's counts agree with what
/// the cleanup did (reclaimed: nothing held; kept: the body, one cell); the look-up counts once.
fn cleanup_vs_hit(by_handle: bool) {
    loom::model(move || {
        let f = fixture();
        let first = tag("k", 1, 1);
        assert!(f.cache.store(&first).is_stored());
        let handle = f.cache.handle(CH);
        let cleaner = {
            let cache = f.cache.clone();
            thread::spawn(move || cache.cleanup_expired(EXPIRED, 8))
        };
        let reader = {
            let (cache, first) = (f.cache.clone(), first.clone());
            thread::spawn(move || {
                let found = if by_handle {
                    handle.lookup(&request(&first))
                } else {
                    cache.lookup(CH, &request(&first))
                };
                match found.reason() {
                    LookupReason::Hit => {
                        assert_eq!(whole(found.tag().unwrap(), &[&first]), 0);
                        true
                    }
                    reason => {
                        assert_eq!(reason, LookupReason::MissingRef);
                        assert!(found.tag().is_none());
                        false
                    }
                }
            })
        };
        let page = cleaner.join().unwrap();
        let hit = reader.join().unwrap();
        assert!(hit || page.reclaimed == 1, "a miss without a reclaim");
        let c = f.cache.counts();
        if page.reclaimed == 1 {
            holds(&f, None);
            assert_eq!(f.cache.channels(), 0);
        } else {
            holds(&f, Some(&first));
        }
        assert_eq!(c.reclaimed_bodies, page.reclaimed as u64);
        assert_eq!(c.lookups.iter().sum::<u64>(), 1);
        assert_eq!(
            c.lookups(if hit {
                LookupReason::Hit
            } else {
                LookupReason::MissingRef
            }),
            1
        );
    });
}

#[test]
fn tag_cleanup_vs_hit() {
    cleanup_vs_hit(false);
    cleanup_vs_hit(true);
}

/// A handle's cell was retired and unlinked (the channel expired); then a writer stores
/// `second` through the index while the handle looks it up.
///
/// Proves: the handle answers through the index: `missing_ref` before the store lands, a hit
/// on `second` after (and always once the store returned); never the retired marker.
#[test]
fn tag_handle_lookup_after_retire() {
    loom::model(|| {
        let f = fixture();
        let (first, second) = (tag("k", 1, 1), tag("k2", 1, 2));
        assert!(f.cache.store(&first).is_stored());
        let handle = f.cache.handle(CH);
        assert_eq!(f.cache.cleanup_expired(EXPIRED, 8).reclaimed, 1);
        assert_eq!(f.cache.channels(), 0);
        let reader = {
            let second = second.clone();
            thread::spawn(move || {
                let found = handle.lookup(&request(&second));
                match found.reason() {
                    LookupReason::Hit => {
                        assert_eq!(whole(found.tag().unwrap(), &[&second]), 0);
                    }
                    reason => {
                        assert_eq!(reason, LookupReason::MissingRef);
                        assert!(found.tag().is_none());
                    }
                }
                if let Some(t) = handle.current() {
                    assert_eq!(whole(&t, &[&second]), 0);
                }
                handle
            })
        };
        let writer = {
            let (cache, second) = (f.cache.clone(), second.clone());
            thread::spawn(move || cache.store(&second).is_stored())
        };
        assert!(writer.join().unwrap());
        let handle = reader.join().unwrap();
        holds(&f, Some(&second));
        // Once the store is in, the handle finds it.
        assert!(handle.lookup(&request(&second)).is_hit());
        assert_eq!(whole(&handle.current().unwrap(), &[&second]), 0);
    });
}

/// A handle's cell was retired; its holder stores `older` through it while another writer
/// stores `newer` through the index.
///
/// Proves: the handle's store does not land in the dead cell: both stores meet in the new
/// cell, where the stale rule keeps the newer; one cell, one body.
#[test]
fn tag_handle_store_after_retire() {
    loom::model(|| {
        let f = fixture();
        let (older, newer) = (tag("k", 2, 2), tag("k", 3, 2));
        assert!(f.cache.store(&tag("k", 1, 1)).is_stored());
        let handle = f.cache.handle(CH);
        assert_eq!(f.cache.cleanup_expired(EXPIRED, 8).reclaimed, 1);
        f.clock.set(EXPIRED as u64);
        let by_handle = {
            let older = older.clone();
            thread::spawn(move || handle.store(&older))
        };
        let by_index = {
            let (cache, newer) = (f.cache.clone(), newer.clone());
            thread::spawn(move || cache.store(&newer))
        };
        let o1 = by_handle.join().unwrap();
        assert!(by_index.join().unwrap().is_stored());
        if !o1.is_stored() {
            assert_eq!(whole(o1.tag(), &[&newer]), 0);
        }
        holds(&f, Some(&newer));
    });
}

struct LeaderFixture {
    leader: TagLeader,
    _metrics: Registry,
}

fn leader_fixture() -> LeaderFixture {
    let metrics = Registry::new();
    let leader = TagLeader::with_metrics(
        LeaderOptions {
            local_node_id: 1,
            ttl_nanos: TTL,
            clock: std::sync::Arc::new(ManualClock::new(START)),
            keys: std::sync::Arc::new(SequentialTagKeys::new("leader")),
        },
        &metrics,
    );
    LeaderFixture {
        leader,
        _metrics: metrics,
    }
}

fn build(smv: u64, uids: &[&str]) -> BuildRequest<'static> {
    BuildRequest {
        channel_key: CH,
        subscriber_mutation_version: smv,
        partitions: vec![NodePartition::new(1, uids.iter()).unwrap()],
        ..BuildRequest::default()
    }
}

/// A membership change (add `b`, store version 6) commits while a rebuild that read the store
/// at version 6 (`a`, `b`) builds. The tag was built at version 5 and the mutation began (the
/// channel dirty) before both.
///
/// Proves: one version bump for the one logical change, whichever comes first (the commit
/// applies it and the build sees no change, or the build bumps and the commit finds the tag
/// already current); the key is kept; the dirty mark is cleared (no mutation pending) and the
/// tag is usable at version 6.
#[test]
fn tag_leader_build_vs_mutation_commit() {
    loom::model(|| {
        let f = leader_fixture();
        let first = f.leader.build(build(5, &["a"]));
        let mut m = f.leader.begin_mutation(CH);
        assert!(f.leader.is_dirty(CH));
        let committer = thread::spawn(move || {
            m.add(1, ["b"]);
            m.commit(6).unwrap()
        });
        let builder = {
            let leader = f.leader.clone();
            thread::spawn(move || leader.build(build(6, &["a", "b"])))
        };
        let outcome = committer.join().unwrap();
        let built = builder.join().unwrap();
        assert!(matches!(
            outcome,
            MutationOutcome::Applied(_) | MutationOutcome::AlreadyCurrent(_)
        ));
        let current = f.leader.current(CH).unwrap();
        assert_eq!(current.key(), first.key());
        assert_eq!(current.tag_version(), 2, "one bump per logical mutation");
        assert_eq!(built.tag_version(), 2);
        assert_eq!(current.subscriber_mutation_version(), 6);
        assert_eq!(current.uid_count(), 2);
        assert!(!f.leader.is_dirty(CH));
        assert!(f.leader.usable(CH, 6).is_some());
    });
}

/// Two mutations began (the channel dirty twice); the first commits while a rebuild builds.
///
/// Proves: the dirty mark is cleared only when no mutation is pending: after both the channel
/// is still dirty and no tag is usable; once the second commits it is clean and usable.
#[test]
fn tag_leader_build_keeps_dirty_while_pending() {
    loom::model(|| {
        let f = leader_fixture();
        f.leader.build(build(5, &["a"]));
        let mut m1 = f.leader.begin_mutation(CH);
        let m2 = f.leader.begin_mutation(CH);
        let committer = thread::spawn(move || {
            m1.add(1, ["b"]);
            m1.commit(6).unwrap();
        });
        let builder = {
            let leader = f.leader.clone();
            thread::spawn(move || {
                leader.build(build(6, &["a", "b"]));
                leader.usable(CH, 0).is_none()
            })
        };
        committer.join().unwrap();
        assert!(
            builder.join().unwrap(),
            "usable while a mutation was pending"
        );
        assert!(f.leader.is_dirty(CH), "cleared with a mutation pending");
        assert!(f.leader.usable(CH, 6).is_none());
        assert!(matches!(m2.commit(7).unwrap(), MutationOutcome::Applied(_)));
        assert!(!f.leader.is_dirty(CH));
        let usable = f.leader.usable(CH, 7).unwrap();
        assert_eq!(usable.tag_version(), 3);
    });
}

/// A mutation's store write fails (the mutation is dropped uncommitted) while a rebuild builds.
///
/// Proves: a build that starts after the failure is seen (the failing thread publishes it, the
/// builder reads it before it builds) clears the mark; a build that ran while the mutation was
/// still open leaves the failure in place, so the channel stays dirty until the next build.
#[test]
fn tag_leader_build_vs_failed_mutation() {
    loom::model(|| {
        let f = leader_fixture();
        f.leader.build(build(5, &["a"]));
        let m = f.leader.begin_mutation(CH);
        let failed = loom::sync::Arc::new(AtomicBool::new(false));
        let failer = {
            let failed = failed.clone();
            thread::spawn(move || {
                drop(m);
                failed.store(true, Ordering::Release);
            })
        };
        let builder = {
            let (leader, failed) = (f.leader.clone(), failed.clone());
            thread::spawn(move || {
                let saw_failure = failed.load(Ordering::Acquire);
                leader.build(build(5, &["a"]));
                saw_failure
            })
        };
        failer.join().unwrap();
        let saw_failure = builder.join().unwrap();
        if saw_failure {
            assert!(
                !f.leader.is_dirty(CH),
                "a build after the failure left it dirty"
            );
        }
        if f.leader.is_dirty(CH) {
            assert!(f.leader.usable(CH, 5).is_none());
            f.leader.build(build(5, &["a"]));
        }
        assert!(!f.leader.is_dirty(CH));
        assert!(f.leader.usable(CH, 5).is_some());
        assert_eq!(f.leader.current(CH).unwrap().tag_version(), 1);
    });
}
