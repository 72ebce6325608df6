//! The look-up hit path allocates nothing: [`PartitionCache::lookup`] (through the index) and
//! [`ChannelHandle::lookup`] returning a hit, the returned body's UIDs read, and the miss paths
//! that return the current body; and upstream's
//! `TestLookupLocalPartitionRefReturnsSharedTagWithoutAllocating`: the body a look-up returns
//! shares the cached UIDs (the same buffer across two look-ups and the cache's current body).
//!
//! A global allocator counts this thread's allocations (a const-initialised thread-local, so
//! the test harness's other threads do not count). Each check first runs the path once on the
//! thread: papaya's per-thread state, the process's hazard domain and the thread row (counters,
//! hazard slots) are made on a thread's first use, once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::*;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to `System`; the counter is a const-initialised thread-local
// without a destructor, so touching it never allocates or fails.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// This thread's allocations while `f` runs.
fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}

const SEC: u64 = 1_000_000_000;
const START: u64 = 1_700_000_000 * SEC;
const CHANNEL: &str = "group:g1";
const ROUNDS: usize = 1000;

struct Fixture {
    cache: PartitionCache,
    _registry: Registry,
}

fn fixture() -> Fixture {
    let registry = Registry::new();
    let cache = PartitionCache::with_metrics(
        CacheOptions {
            local_node_id: 2,
            ttl_nanos: 60 * SEC,
            clock: Arc::new(ManualClock::new(START)),
        },
        &registry,
    );
    let tag = TagParts {
        key: "leader-a-1".into(),
        channel_key: CHANNEL.into(),
        tag_version: 3,
        subscriber_mutation_version: 9,
        source_channel_key: "group:src".into(),
        source_subscriber_mutation_version: 4,
        topology: PartitionTopology::new(
            7,
            &[SlotAuthorityRef {
                slot_id: 1,
                leader_node_id: 1,
                config_epoch: 2,
                balance_version: 3,
            }],
        ),
        partitions: vec![
            NodePartition::new(1, ["u1"]).unwrap(),
            NodePartition::new(2, ["u2", "u3", "u4"]).unwrap(),
        ],
        ..TagParts::default()
    };
    assert!(cache.store(&tag).is_stored());
    Fixture {
        cache,
        _registry: registry,
    }
}

fn request(tag: &DeliveryTag) -> LookupRequest<'_> {
    LookupRequest {
        tag_key: tag.key(),
        tag_version: tag.tag_version(),
        subscriber_mutation_version: tag.subscriber_mutation_version(),
        source_channel_key: tag.source_channel_key(),
        source_subscriber_mutation_version: tag.source_subscriber_mutation_version(),
        topology: tag.topology().view(),
    }
}

/// Reads every UID of the hit's body, as a delivery does; the bytes read.
fn read_hit(found: &Lookup) -> usize {
    assert!(found.is_hit(), "{:?}", found.reason());
    let body = found.tag().expect("a hit returns the body");
    let p = body.partition(2).expect("the local partition");
    let mut n = 0;
    for uid in p.uids.iter() {
        n += uid.len();
    }
    assert_eq!(p.uids.len(), 3);
    n
}

#[test]
fn cache_lookup_hit_allocates_nothing() {
    let f = fixture();
    let current = f.cache.current(CHANNEL).unwrap();
    let req = request(&current);
    read_hit(&f.cache.lookup(CHANNEL, &req));
    let mut bytes = 0;
    let n = allocations_in(|| {
        for _ in 0..ROUNDS {
            bytes += read_hit(&f.cache.lookup(CHANNEL, &req));
        }
    });
    assert_eq!(n, 0, "allocations on the index look-up's hit path");
    assert_eq!(bytes, 6 * ROUNDS);
    // The counter counts: a reference copy allocates its strings.
    assert!(allocations_in(|| drop(f.cache.current_ref(CHANNEL))) > 0);
}

#[test]
fn handle_lookup_hit_allocates_nothing() {
    let f = fixture();
    let handle = f.cache.handle(CHANNEL);
    let current = handle.current().unwrap();
    let req = request(&current);
    read_hit(&handle.lookup(&req));
    let mut bytes = 0;
    let n = allocations_in(|| {
        for _ in 0..ROUNDS {
            bytes += read_hit(&handle.lookup(&req));
        }
    });
    assert_eq!(n, 0, "allocations on the handle look-up's hit path");
    assert_eq!(bytes, 6 * ROUNDS);
}

#[test]
fn hits_across_cleanup_ticks_allocate_nothing() {
    // A hit after a cleanup tick writes the body's mark once: still no allocation.
    let f = fixture();
    let handle = f.cache.handle(CHANNEL);
    let current = handle.current().unwrap();
    let req = request(&current);
    read_hit(&handle.lookup(&req));
    for i in 1..=10u64 {
        f.cache
            .cleanup_expired((START + i * SEC) as i64, CLEANUP_LIMIT_MAX);
        let n = allocations_in(|| {
            read_hit(&handle.lookup(&req));
            read_hit(&f.cache.lookup(CHANNEL, &req));
        });
        assert_eq!(n, 0, "allocations on a hit after cleanup tick {i}");
    }
    assert_eq!(f.cache.counts().reclaimed_bodies, 0);
}

#[test]
fn misses_that_return_the_body_allocate_nothing() {
    let f = fixture();
    let handle = f.cache.handle(CHANNEL);
    let current = f.cache.current(CHANNEL).unwrap();
    let mut stale = request(&current);
    stale.tag_version -= 1;
    let mut other_key = request(&current);
    other_key.tag_key = "leader-b-1";
    let unknown = request(&current);
    let _ = f.cache.lookup(CHANNEL, &stale);
    let _ = f.cache.lookup("group:none", &unknown);
    let n = allocations_in(|| {
        for _ in 0..ROUNDS {
            for (req, reason) in [
                (&stale, LookupReason::StaleRequest),
                (&other_key, LookupReason::TagKeyMismatch),
            ] {
                let by_index = f.cache.lookup(CHANNEL, req);
                let by_handle = handle.lookup(req);
                assert_eq!(by_index.reason(), reason);
                assert_eq!(by_handle.reason(), reason);
                assert_eq!(by_index.tag().unwrap().tag_version(), 3);
                assert_eq!(by_handle.tag().unwrap().tag_version(), 3);
            }
            let missing = f.cache.lookup("group:none", &unknown);
            assert_eq!(missing.reason(), LookupReason::MissingRef);
            assert!(missing.tag().is_none());
        }
    });
    assert_eq!(n, 0, "allocations on the miss paths");
}

/// Upstream's `TestLookupLocalPartitionRefReturnsSharedTagWithoutAllocating`.
#[test]
fn lookup_local_partition_ref_returns_shared_tag_without_allocating() {
    let f = fixture();
    let handle = f.cache.handle(CHANNEL);
    let cached = f.cache.current(CHANNEL).unwrap();
    let req = request(&cached);
    let cached_uids = cached.partition(2).unwrap().uids.bytes().as_ptr();
    read_hit(&f.cache.lookup(CHANNEL, &req));
    let n = allocations_in(|| {
        let first = f.cache.lookup(CHANNEL, &req);
        let second = handle.lookup(&req);
        let a = first.tag().unwrap();
        let b = second.tag().unwrap();
        // One body: the cache's, shared, not a copy.
        assert!(std::ptr::eq(a, b));
        assert!(std::ptr::eq(a, &*cached));
        let (pa, pb) = (a.partition(2).unwrap(), b.partition(2).unwrap());
        assert_eq!(pa.uids.bytes().as_ptr(), pb.uids.bytes().as_ptr());
        assert_eq!(pa.uids.bytes().as_ptr(), cached_uids);
        assert_eq!(pa.uids.ends().as_ptr(), pb.uids.ends().as_ptr());
        let uids: [&[u8]; 3] = [b"u2", b"u3", b"u4"];
        assert!(pa.uids.iter().eq(uids));
    });
    assert_eq!(n, 0, "the shared look-up allocated");
}

#[test]
fn leader_lookup_hit_allocates_nothing() {
    let registry = Registry::new();
    let leader = TagLeader::with_metrics(
        LeaderOptions {
            local_node_id: 1,
            ttl_nanos: 60 * SEC,
            clock: Arc::new(ManualClock::new(START)),
            keys: Arc::new(SequentialTagKeys::new("leader-a")),
        },
        &registry,
    );
    let tag = leader.build(BuildRequest {
        channel_key: CHANNEL,
        subscriber_mutation_version: 9,
        partitions: vec![NodePartition::new(2, ["u2", "u3", "u4"]).unwrap()],
        ..BuildRequest::default()
    });
    let req = request(&tag);
    read_hit(&leader.lookup(CHANNEL, &req));
    let n = allocations_in(|| {
        for _ in 0..ROUNDS {
            read_hit(&leader.lookup(CHANNEL, &req));
        }
    });
    assert_eq!(n, 0, "allocations on the leader's reuse check");
}
