//! `wkcore-bench --tag`: the delivery tags' paths, wkcore beside upstream's manager under one
//! mutex ([`MutexTagManager`]) and a raw floor, in one run.
//!
//! Rows of the main table (ns per operation):
//!
//! - `hit_by_handle`: one fenced look-up that hits, through a [`ChannelHandle`] (wkcore), by
//!   channel key under the manager's mutex (the reference: upstream's
//!   `LookupLocalPartitionRef`, given the time instead of reading a clock), and the floor: one
//!   `Acquire` load of a pointer to the body and a read of its version, the least a shared
//!   snapshot costs. Each thread visits [`Scale::channels`] channels in turn.
//! - `hit_by_key`: the same through the channel index ([`PartitionCache::lookup`]); the floor is
//!   an unsynchronized `HashMap` get.
//! - `hit_with_writer` at 1 and 2 reader threads: look-ups through handles (the reference: by
//!   key) while a writer thread stores a newer version of one channel after another (one store,
//!   then a [`WRITER_PAUSE`] sleep); a reader that misses adopts the newer body it is given, as
//!   upstream's resolver does. The table prints the 2-reader throughput over the 1-reader one.
//! - `build_per_uid`, `store_per_uid`: a [`Scale::big_uids`]-UID tag over 3 nodes, per UID:
//!   [`partition_by_node`] + [`TagLeader::build`] (the reference: the same partitioning and
//!   `BuildLeaderTag`), and [`PartitionCache::store`] of it, keeping the local third
//!   (`StoreFollowerPartition`).
//! - `cleanup_per_channel`: reclaiming [`Scale::cleanup_channels`] expired channels, per channel:
//!   pages of 4096 until every one is reclaimed (the reference: one `CleanupExpired`).
//!
//! The map table (ns per look-up by key, 1 and 2 threads, read only): papaya (wkcore's
//! `ReadMap`), dashmap and an `ArcSwap<HashMap>` (RCU), all with ahash, over
//! [`Scale::map_keys`] keys: the measurement behind the index's map.
//!
//! Memory per cached UID: the compact list's heap ([`Uids::heap_bytes`] over the count), the
//! whole cached body over its UIDs, and upstream's one-string-per-UID layout as `Vec<String>`
//! (header plus allocation, computed), with the resident-set growth of both around building
//! [`Scale::memory_uids`] UIDs. Allocations per hit come from the criterion bench (`cargo bench
//! -p wkcore-bench --bench tag`), which counts them with a counting allocator.
//!
//! A trial is kept when every thread was on-CPU at least [`crate::ON_CPU_THRESHOLD`] of its
//! wall time; the median is over kept trials (over all, marked `*`, when none was). Timings are
//! reported, never asserted; every trial checks that its look-ups hit and its cleanups reclaim.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use dashmap::DashMap;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::{
    partition_by_node, BuildRequest, CacheOptions, ChannelHandle, DeliveryTag, LeaderOptions,
    LookupReason, LookupRequest, NodePartition, PartitionCache, PartitionTopology,
    SequentialTagKeys, SlotAuthorityRef, TagLeader, TagParts, Uids,
};
use wkcore_references::tag::MutexTagManager;

use crate::timed::{fmt_ns, summarize, timed, Timed};

/// Look-ups per thread per trial.
pub const HITS: u64 = 1 << 20;
/// Channels the look-up rows visit in turn.
pub const CHANNELS: usize = 256;
/// UIDs of the build and store rows' tag.
pub const BIG_UIDS: usize = 100_000;
/// Channels of the cleanup row.
pub const CLEANUP_CHANNELS: usize = 100_000;
/// Keys of the map table.
pub const MAP_KEYS: usize = 1024;
/// UIDs of the resident-memory measurement.
pub const MEMORY_UIDS: usize = 1_000_000;
/// The writer's pause between two stores in the `hit_with_writer` rows.
pub const WRITER_PAUSE: Duration = Duration::from_micros(20);
/// Builds or stores per trial of the big rows.
const BIG_REPEATS: usize = 4;
/// UIDs of each hit row's cached partition.
const HIT_UIDS: usize = 16;
/// The node the caches serve.
const LOCAL: u64 = 2;
/// Nodes the big tag is partitioned over (1 to 3).
const NODES: u64 = 3;
/// Hash slots of the big tag's slot table.
const SLOTS: u32 = 64;
/// Where the manual clocks start, and the time the reference is given.
const START: u64 = 1_000 * SEC;
const SEC: u64 = 1_000_000_000;

/// What a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagOp {
    /// A hit through a channel handle.
    HitByHandle,
    /// A hit through the channel index.
    HitByKey,
    /// A hit (or an adoption of the newer body) while a writer stores newer versions.
    HitWithWriter,
    /// One look-up in the map table.
    MapGet,
    /// Partition + build of the big tag, per UID.
    BuildPerUid(usize),
    /// A follower store of the big tag, per UID.
    StorePerUid(usize),
    /// Reclaiming expired channels, per channel.
    CleanupPerChannel(usize),
}

impl TagOp {
    /// The row's name.
    pub fn name(self) -> String {
        match self {
            TagOp::HitByHandle => "hit_by_handle".into(),
            TagOp::HitByKey => "hit_by_key".into(),
            TagOp::HitWithWriter => "hit_with_writer".into(),
            TagOp::MapGet => "map_get".into(),
            TagOp::BuildPerUid(n) => format!("build_per_uid@{n}"),
            TagOp::StorePerUid(n) => format!("store_per_uid@{n}"),
            TagOp::CleanupPerChannel(n) => format!("cleanup_per_channel@{n}"),
        }
    }
}

/// Who runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagVariant {
    /// wkcore.
    Wkcore,
    /// Upstream's manager under one mutex.
    Mutex,
    /// The raw floor (a pointer load, or an unsynchronized map).
    Floor,
    /// The map table: papaya.
    Papaya,
    /// The map table: dashmap.
    DashMap,
    /// The map table: `ArcSwap<HashMap>`.
    RcuMap,
}

impl TagVariant {
    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            TagVariant::Wkcore => "wkcore",
            TagVariant::Mutex => "mutex",
            TagVariant::Floor => "floor",
            TagVariant::Papaya => "papaya",
            TagVariant::DashMap => "dashmap",
            TagVariant::RcuMap => "arcswap_hashmap",
        }
    }
}

/// One measured cell.
#[derive(Clone, Debug)]
pub struct TagCell {
    /// The row's operation.
    pub op: TagOp,
    /// Threads (readers, for `hit_with_writer`).
    pub threads: usize,
    /// The column.
    pub variant: TagVariant,
    /// Median ns per operation.
    pub ns_per_op: f64,
    /// Trials run.
    pub trials: usize,
    /// Trials kept.
    pub kept: usize,
}

/// The sizes of a run.
#[derive(Clone, Debug)]
pub struct Scale {
    /// Look-ups per thread per trial.
    pub hits: u64,
    /// Channels the look-up rows visit in turn.
    pub channels: usize,
    /// UIDs of the build and store rows.
    pub big_uids: usize,
    /// Channels of the cleanup row.
    pub cleanup_channels: usize,
    /// Keys of the map table.
    pub map_keys: usize,
    /// UIDs of the memory measurement.
    pub memory_uids: usize,
}

impl Default for Scale {
    fn default() -> Self {
        Self {
            hits: HITS,
            channels: CHANNELS,
            big_uids: BIG_UIDS,
            cleanup_channels: CLEANUP_CHANNELS,
            map_keys: MAP_KEYS,
            memory_uids: MEMORY_UIDS,
        }
    }
}

/// The topology every benchmarked tag carries: four slot refs.
pub fn topology() -> PartitionTopology {
    let refs: Vec<SlotAuthorityRef> = (0..4)
        .map(|slot_id| SlotAuthorityRef {
            slot_id,
            leader_node_id: u64::from(slot_id % 3) + 1,
            config_epoch: 3,
            balance_version: 7,
        })
        .collect();
    PartitionTopology::new(12, &refs)
}

/// The `i`th benchmarked UID (11 bytes).
pub fn uid(i: usize) -> String {
    format!("uid-{i:07}")
}

fn channel_key(i: usize) -> Box<str> {
    format!("group:bench-{i}").into()
}

/// A follower tag for `channel`: key `k-<i>`, the given versions, [`HIT_UIDS`] local UIDs.
fn small_tag(i: usize, version: u64, topology: &PartitionTopology) -> TagParts {
    TagParts {
        key: format!("k-{i}").into(),
        channel_key: channel_key(i),
        tag_version: version,
        subscriber_mutation_version: version,
        topology: topology.clone(),
        partitions: vec![NodePartition::new(LOCAL, (0..HIT_UIDS).map(uid)).unwrap()],
        ..TagParts::default()
    }
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(START))
}

fn cache(ttl_nanos: u64, metrics: &Registry) -> PartitionCache {
    PartitionCache::with_metrics(
        CacheOptions {
            local_node_id: LOCAL,
            ttl_nanos,
            clock: clock(),
        },
        metrics,
    )
}

/// The hit rows' subjects: `channels` channels cached by wkcore, by the reference and by the
/// floors, each at version 1. Shared by the binary, the criterion bench and the instructions
/// example.
pub struct HitSubjects {
    /// Kept alive for the cache's metrics.
    _metrics: Registry,
    cache: PartitionCache,
    handles: Vec<ChannelHandle>,
    channels: Vec<Box<str>>,
    keys: Vec<Box<str>>,
    topology: PartitionTopology,
    mutex: MutexTagManager,
    /// The floor's bodies, kept alive for `pointers`.
    _bodies: Vec<Arc<DeliveryTag>>,
    pointers: Vec<AtomicPtr<DeliveryTag>>,
    plain: HashMap<Box<str>, Arc<DeliveryTag>, ahash::RandomState>,
}

impl HitSubjects {
    /// `channels` channels (at least 1), each stored at version 1 in every variant.
    pub fn new(channels: usize) -> Self {
        let metrics = Registry::new();
        let cache = cache(60 * SEC, &metrics);
        let topology = topology();
        let mutex = MutexTagManager::new(LOCAL, 60 * SEC as i64);
        let mut bodies = Vec::new();
        let mut handles = Vec::new();
        let mut plain = HashMap::with_hasher(ahash::RandomState::new());
        for i in 0..channels.max(1) {
            let tag = small_tag(i, 1, &topology);
            let handle = cache.handle(&tag.channel_key);
            let stored = handle.store(&tag);
            assert!(stored.is_stored());
            assert!(mutex.store_follower_partition(&tag, START as i64).stored);
            plain.insert(tag.channel_key.clone(), stored.tag().clone());
            bodies.push(stored.tag().clone());
            handles.push(handle);
        }
        let pointers = bodies
            .iter()
            .map(|b| AtomicPtr::new(Arc::as_ptr(b).cast_mut()))
            .collect();
        Self {
            _metrics: metrics,
            cache,
            handles,
            channels: (0..channels.max(1)).map(channel_key).collect(),
            keys: (0..channels.max(1))
                .map(|i| format!("k-{i}").into())
                .collect(),
            // The requests' topology is an equal copy, not the cached one: a delivery's request
            // comes from elsewhere, so the fence compares the refs element by element.
            topology: {
                drop(topology);
                self::topology()
            },
            mutex,
            _bodies: bodies,
            pointers,
            plain,
        }
    }

    /// How many channels.
    pub fn len(&self) -> usize {
        self.channels.len()
    }

    /// Never: there is at least one channel.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// The request that hits channel `c` at `version`.
    #[inline]
    fn request(&self, c: usize, version: u64) -> LookupRequest<'_> {
        LookupRequest {
            tag_key: &self.keys[c],
            tag_version: version,
            subscriber_mutation_version: version,
            source_channel_key: "",
            source_subscriber_mutation_version: 0,
            topology: self.topology.view(),
        }
    }

    /// One look-up of channel `c` through its handle; true on a hit.
    #[inline]
    pub fn hit_by_handle(&self, c: usize) -> bool {
        self.handles[c].lookup(&self.request(c, 1)).is_hit()
    }

    /// One look-up of channel `c` through the index; true on a hit.
    #[inline]
    pub fn hit_by_key(&self, c: usize) -> bool {
        self.cache
            .lookup(&self.channels[c], &self.request(c, 1))
            .is_hit()
    }

    /// One look-up of channel `c` by the reference; true on a hit.
    #[inline]
    pub fn hit_mutex(&self, c: usize) -> bool {
        self.mutex
            .lookup_local_partition_ref(&self.channels[c], &self.request(c, 1), START as i64)
            .reason
            == LookupReason::Hit
    }

    /// The handle's floor: an `Acquire` load of the body's pointer and a read of its version.
    #[inline]
    pub fn hit_floor(&self, c: usize) -> bool {
        // Ordering: Acquire, as a published snapshot's load: it would pair with the swap that
        // publishes a body; here the pointers are set once, before any reader starts.
        let body = self.pointers[c].load(Ordering::Acquire);
        // SAFETY: every pointer is `Arc::as_ptr` of a body `_bodies` keeps alive as long as
        // `self`, and is never written after construction.
        unsafe { (*body).tag_version() == 1 }
    }

    /// The key's floor: an unsynchronized `HashMap` get and a read of the version.
    #[inline]
    pub fn hit_floor_key(&self, c: usize) -> bool {
        self.plain
            .get(&*self.channels[c])
            .is_some_and(|t| t.tag_version() == 1)
    }

    fn run_hits(&self, variant: TagVariant, op: TagOp, hits: u64) -> u64 {
        let n = self.len();
        let mut c = 0;
        let mut hit = 0u64;
        for _ in 0..hits {
            let ok = match (variant, op) {
                (TagVariant::Wkcore, TagOp::HitByHandle) => self.hit_by_handle(black_box(c)),
                (TagVariant::Wkcore, _) => self.hit_by_key(black_box(c)),
                (TagVariant::Mutex, _) => self.hit_mutex(black_box(c)),
                (_, TagOp::HitByHandle) => self.hit_floor(black_box(c)),
                _ => self.hit_floor_key(black_box(c)),
            };
            hit += u64::from(ok);
            c += 1;
            if c == n {
                c = 0;
            }
        }
        hit
    }

    fn trial(&self, variant: TagVariant, op: TagOp, hits: u64) -> Timed {
        timed(
            1,
            hits,
            |_| {},
            |_| assert_eq!(self.run_hits(variant, op, hits), hits, "every look-up hits"),
        )
    }

    /// `hits` look-ups by `readers` threads while a writer stores newer versions; misses adopt
    /// the newer body. Each thread checks that it hit at least once.
    fn writer_trial(&self, variant: TagVariant, readers: usize, hits: u64) -> Timed {
        let stop = AtomicBool::new(false);
        let n = self.len();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut versions = vec![1u64; n];
                let mut c = 0;
                // Ordering: Relaxed; the flag only ends the loop, it publishes nothing.
                while !stop.load(Ordering::Relaxed) {
                    versions[c] += 1;
                    let tag = small_tag(c, versions[c], &self.topology);
                    match variant {
                        TagVariant::Wkcore => assert!(self.handles[c].store(&tag).is_stored()),
                        _ => assert!(
                            self.mutex
                                .store_follower_partition(&tag, START as i64)
                                .stored
                        ),
                    }
                    c = (c + 1) % n;
                    std::thread::sleep(WRITER_PAUSE);
                }
            });
            let t = timed(
                readers,
                hits * readers as u64,
                |_| {},
                |t| {
                    let mut versions = vec![1u64; n];
                    let mut c = (t * 7919) % n;
                    let mut hit = 0u64;
                    for _ in 0..hits {
                        let request = self.request(c, versions[c]);
                        match variant {
                            TagVariant::Wkcore => {
                                let found = self.handles[c].lookup(black_box(&request));
                                if found.is_hit() {
                                    hit += 1;
                                } else if let Some(newer) = found.tag() {
                                    versions[c] = newer.tag_version();
                                }
                            }
                            _ => {
                                let found = self.mutex.lookup_local_partition_ref(
                                    &self.channels[c],
                                    black_box(&request),
                                    START as i64,
                                );
                                if found.reason == LookupReason::Hit {
                                    hit += 1;
                                } else if let Some(newer) = found.tag {
                                    versions[c] = newer.body.tag_version;
                                }
                            }
                        }
                        c += 1;
                        if c == n {
                            c = 0;
                        }
                    }
                    assert!(hit > 0, "a reader never hit");
                },
            );
            // Ordering: Relaxed (the writer's load).
            stop.store(true, Ordering::Relaxed);
            t
        })
    }
}

/// The map table's subjects: the same keys in each map, values behind an `Arc` as the index's
/// cells are.
struct Maps {
    keys: Vec<Box<str>>,
    papaya: papaya::HashMap<Box<str>, Arc<u64>, ahash::RandomState>,
    dashmap: DashMap<Box<str>, Arc<u64>, ahash::RandomState>,
    rcu: ArcSwap<HashMap<Box<str>, Arc<u64>, ahash::RandomState>>,
}

impl Maps {
    fn new(n: usize) -> Self {
        let keys: Vec<Box<str>> = (0..n.max(1)).map(channel_key).collect();
        let papaya = papaya::HashMap::builder()
            .hasher(ahash::RandomState::new())
            .resize_mode(papaya::ResizeMode::Incremental(1024))
            .build();
        let dashmap = DashMap::with_hasher(ahash::RandomState::new());
        let mut plain = HashMap::with_hasher(ahash::RandomState::new());
        for (i, k) in keys.iter().enumerate() {
            let v = Arc::new(i as u64);
            papaya.pin().insert(k.clone(), v.clone());
            dashmap.insert(k.clone(), v.clone());
            plain.insert(k.clone(), v);
        }
        Self {
            keys,
            papaya,
            dashmap,
            rcu: ArcSwap::from_pointee(plain),
        }
    }

    fn trial(&self, variant: TagVariant, threads: usize, gets: u64) -> Timed {
        let n = self.keys.len();
        timed(
            threads,
            gets * threads as u64,
            |_| {},
            |t| {
                let mut c = (t * n / threads.max(1)) % n;
                let mut sum = 0u64;
                for _ in 0..gets {
                    let key: &str = black_box(&self.keys[c]);
                    sum += match variant {
                        TagVariant::Papaya => self.papaya.pin().get(key).map_or(0, |v| **v),
                        TagVariant::DashMap => self.dashmap.get(key).map_or(0, |v| **v),
                        _ => self.rcu.load().get(key).map_or(0, |v| **v),
                    };
                    c += 1;
                    if c == n {
                        c = 0;
                    }
                }
                black_box(sum);
            },
        )
    }
}

/// The big rows' input: `n` UIDs with their slots, the slot table, and the partitioned tag.
struct Big {
    uids: Vec<String>,
    slots: Vec<u32>,
    slot_nodes: Vec<u64>,
    topology: PartitionTopology,
    tag: TagParts,
}

impl Big {
    fn new(n: usize) -> Self {
        let uids: Vec<String> = (0..n.max(1)).map(uid).collect();
        let slots: Vec<u32> = (0..uids.len())
            .map(|i| (i as u32).wrapping_mul(2_654_435_761) % SLOTS)
            .collect();
        let slot_nodes: Vec<u64> = (0..u64::from(SLOTS)).map(|s| s % NODES + 1).collect();
        let topology = topology();
        let tag = TagParts {
            key: "big-1".into(),
            channel_key: "group:big".into(),
            tag_version: 1,
            subscriber_mutation_version: 1,
            topology: topology.clone(),
            partitions: partition_by_node(&uids, &slots, &slot_nodes).unwrap(),
            ..TagParts::default()
        };
        Self {
            uids,
            slots,
            slot_nodes,
            topology,
            tag,
        }
    }

    fn request(&self) -> BuildRequest<'static> {
        BuildRequest {
            channel_key: "group:big",
            subscriber_mutation_version: 1,
            topology: self.topology.clone(),
            partitions: partition_by_node(&self.uids, &self.slots, &self.slot_nodes).unwrap(),
            ..BuildRequest::default()
        }
    }

    fn build_trial(&self, variant: TagVariant) -> Timed {
        let metrics = Registry::new();
        let ops = (BIG_REPEATS * self.uids.len()) as u64;
        match variant {
            TagVariant::Wkcore => {
                let leader = TagLeader::with_metrics(
                    LeaderOptions {
                        local_node_id: 1,
                        ttl_nanos: 60 * SEC,
                        clock: clock(),
                        keys: Arc::new(SequentialTagKeys::new("bench")),
                    },
                    &metrics,
                );
                timed(
                    1,
                    ops,
                    |_| {},
                    |_| {
                        for _ in 0..BIG_REPEATS {
                            black_box(leader.build(self.request()));
                        }
                    },
                )
            }
            _ => {
                let m = MutexTagManager::new(1, 60 * SEC as i64);
                timed(
                    1,
                    ops,
                    |_| {},
                    |_| {
                        for _ in 0..BIG_REPEATS {
                            black_box(m.build_leader_tag(self.request(), START as i64));
                        }
                    },
                )
            }
        }
    }

    fn store_trial(&self, variant: TagVariant) -> Timed {
        let metrics = Registry::new();
        let ops = (BIG_REPEATS * self.uids.len()) as u64;
        match variant {
            TagVariant::Wkcore => {
                let cache = cache(60 * SEC, &metrics);
                timed(
                    1,
                    ops,
                    |_| {},
                    |_| {
                        for _ in 0..BIG_REPEATS {
                            assert!(cache.store(black_box(&self.tag)).is_stored());
                        }
                    },
                )
            }
            _ => {
                let m = MutexTagManager::new(LOCAL, 60 * SEC as i64);
                timed(
                    1,
                    ops,
                    |_| {},
                    |_| {
                        for _ in 0..BIG_REPEATS {
                            assert!(
                                m.store_follower_partition(black_box(&self.tag), START as i64)
                                    .stored
                            );
                        }
                    },
                )
            }
        }
    }
}

/// `n` expired channels reclaimed, per channel.
fn cleanup_trial(variant: TagVariant, n: usize) -> Timed {
    let topology = topology();
    let metrics = Registry::new();
    let now = (START + 2 * SEC) as i64;
    let n = n.max(1);
    let tags: Vec<TagParts> = (0..n)
        .map(|i| TagParts {
            partitions: vec![NodePartition::new(LOCAL, [uid(i)]).unwrap()],
            ..small_tag(i, 1, &topology)
        })
        .collect();
    match variant {
        TagVariant::Wkcore => {
            let cache = cache(SEC, &metrics);
            for t in &tags {
                cache.store(t);
            }
            timed(
                1,
                n as u64,
                |_| {},
                |_| {
                    let mut reclaimed = 0;
                    while reclaimed < n {
                        let page = cache.cleanup_expired(now, wkcore::tag::CLEANUP_LIMIT_MAX);
                        assert!(page.visited > 0, "a page visited nothing");
                        reclaimed += page.reclaimed;
                    }
                    assert_eq!(cache.channels(), 0);
                },
            )
        }
        _ => {
            let m = MutexTagManager::new(LOCAL, SEC as i64);
            for t in &tags {
                m.store_follower_partition(t, START as i64);
            }
            timed(
                1,
                n as u64,
                |_| {},
                |_| assert_eq!(m.cleanup_expired(now), n),
            )
        }
    }
}

/// Memory per cached UID.
#[derive(Clone, Debug)]
pub struct Memory {
    /// UIDs measured.
    pub uids: usize,
    /// Mean UID length in bytes.
    pub uid_len: f64,
    /// [`Uids::heap_bytes`] per UID.
    pub compact_heap: f64,
    /// A cached body with one partition of all the UIDs, everything it holds, per UID.
    pub body: f64,
    /// `Vec<String>` (upstream's one string per UID): header plus the string's capacity.
    pub vec_string_heap: f64,
    /// Resident-set growth per UID building the `Vec<String>` (`None` where not measurable).
    pub vec_string_resident: Option<f64>,
    /// Resident-set growth per UID building the compact list from it.
    pub compact_resident: Option<f64>,
}

/// Measures [`Memory`] over `n` UIDs.
pub fn memory(n: usize) -> Memory {
    let n = n.max(1);
    let before = resident_bytes();
    let strings: Vec<String> = (0..n).map(uid).collect();
    let middle = resident_bytes();
    let compact = Uids::new(&strings).unwrap();
    let after = resident_bytes();
    let per = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?) as f64 / n as f64);
    let uid_len = strings.iter().map(String::len).sum::<usize>() as f64 / n as f64;
    let vec_string_heap = strings
        .iter()
        .map(|s| std::mem::size_of::<String>() + s.capacity())
        .sum::<usize>() as f64
        / n as f64;
    let metrics = Registry::new();
    let stored = cache(60 * SEC, &metrics).store(&TagParts {
        key: "memory-1".into(),
        channel_key: "group:memory".into(),
        tag_version: 1,
        subscriber_mutation_version: 1,
        topology: topology(),
        partitions: vec![NodePartition {
            node_id: LOCAL,
            uids: compact.clone(),
        }],
        ..TagParts::default()
    });
    let body = stored.tag();
    let body_bytes = 2 * std::mem::size_of::<usize>() // the Arc's counts
        + std::mem::size_of::<DeliveryTag>()
        + body.key().len()
        + body.channel_key().len()
        + body.source_channel_key().len()
        + 2 * std::mem::size_of::<usize>()
        + std::mem::size_of_val(&*body.topology().refs)
        + std::mem::size_of_val(body.partitions())
        + body.uid_heap_bytes();
    black_box((&strings, &compact));
    Memory {
        uids: n,
        uid_len,
        compact_heap: compact.heap_bytes() as f64 / n as f64,
        body: body_bytes as f64 / n as f64,
        vec_string_heap,
        vec_string_resident: per(before, middle),
        compact_resident: per(middle, after),
    }
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// The rows, in table order.
pub fn plan(scale: &Scale) -> Vec<(TagOp, usize, Vec<TagVariant>)> {
    use TagVariant::*;
    vec![
        (TagOp::HitByHandle, 1, vec![Wkcore, Mutex, Floor]),
        (TagOp::HitByKey, 1, vec![Wkcore, Mutex, Floor]),
        (TagOp::HitWithWriter, 1, vec![Wkcore, Mutex]),
        (TagOp::HitWithWriter, 2, vec![Wkcore, Mutex]),
        (TagOp::MapGet, 1, vec![Papaya, DashMap, RcuMap]),
        (TagOp::MapGet, 2, vec![Papaya, DashMap, RcuMap]),
        (TagOp::BuildPerUid(scale.big_uids), 1, vec![Wkcore, Mutex]),
        (TagOp::StorePerUid(scale.big_uids), 1, vec![Wkcore, Mutex]),
        (
            TagOp::CleanupPerChannel(scale.cleanup_channels),
            1,
            vec![Wkcore, Mutex],
        ),
    ]
}

/// Runs every row within `budget` (every row runs at least 3 trials whatever it is).
pub fn run(budget: Duration, scale: &Scale, progress: impl Fn(&str)) -> Vec<TagCell> {
    let rows = plan(scale);
    let per_row = budget / rows.len() as u32;
    let hits = HitSubjects::new(scale.channels);
    let maps = Maps::new(scale.map_keys);
    let big = Big::new(scale.big_uids);
    let mut cells = Vec::new();
    for (op, threads, variants) in rows {
        let mut results: Vec<Vec<Timed>> = variants.iter().map(|_| Vec::new()).collect();
        let start = Instant::now();
        let max_trials = match op {
            TagOp::HitByHandle | TagOp::HitByKey | TagOp::MapGet => 200,
            TagOp::HitWithWriter => 50,
            _ => 5,
        };
        while results[0].len() < 3 || (start.elapsed() < per_row && results[0].len() < max_trials) {
            for (i, &v) in variants.iter().enumerate() {
                let t = match op {
                    TagOp::HitByHandle | TagOp::HitByKey => hits.trial(v, op, scale.hits),
                    TagOp::HitWithWriter => {
                        // Fresh subjects: the writer moves every channel's version on.
                        HitSubjects::new(scale.channels).writer_trial(v, threads, scale.hits)
                    }
                    TagOp::MapGet => maps.trial(v, threads, scale.hits),
                    TagOp::BuildPerUid(_) => big.build_trial(v),
                    TagOp::StorePerUid(_) => big.store_trial(v),
                    TagOp::CleanupPerChannel(n) => cleanup_trial(v, n),
                };
                results[i].push(t);
            }
        }
        for (v, trials) in variants.iter().zip(results) {
            let (ns_per_op, kept) = summarize(&trials);
            let cell = TagCell {
                op,
                threads,
                variant: *v,
                ns_per_op,
                trials: trials.len(),
                kept,
            };
            progress(&format!(
                "{} {}t {}: {:.2} ns/op ({} of {} trials kept)",
                op.name(),
                threads,
                v.name(),
                cell.ns_per_op,
                cell.kept,
                cell.trials
            ));
            cells.push(cell);
        }
    }
    cells
}

fn cell(cells: &[TagCell], op: TagOp, threads: usize, v: TagVariant) -> Option<&TagCell> {
    cells
        .iter()
        .find(|c| c.op == op && c.threads == threads && c.variant == v)
}

fn fmt_cell(c: Option<&TagCell>) -> String {
    c.map_or_else(|| "-".into(), |c| fmt_ns(c.ns_per_op, c.kept))
}

fn ratio(a: Option<&TagCell>, b: Option<&TagCell>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a.ns_per_op / b.ns_per_op),
        _ => "-".into(),
    }
}

/// The main table: one row per (op, threads) but the map's, ns/op per variant, wkcore / mutex.
pub fn table(cells: &[TagCell], scale: &Scale) -> String {
    use TagVariant::*;
    let mut out = format!(
        "{:<30} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
        "op", "threads", "wkcore ns/op", "mutex ns/op", "floor ns/op", "wkcore/mutex"
    );
    for (op, threads, _) in plan(scale) {
        if op == TagOp::MapGet {
            continue;
        }
        let (w, m) = (
            cell(cells, op, threads, Wkcore),
            cell(cells, op, threads, Mutex),
        );
        out += &format!(
            "{:<30} {:>7} {:>12} {:>12} {:>12} {:>13}\n",
            op.name(),
            threads,
            fmt_cell(w),
            fmt_cell(m),
            fmt_cell(cell(cells, op, threads, Floor)),
            ratio(w, m)
        );
    }
    let scaling = |v| {
        ratio(
            cell(cells, TagOp::HitWithWriter, 1, v),
            cell(cells, TagOp::HitWithWriter, 2, v),
        )
    };
    out += &format!(
        "hit_with_writer, 2 readers' throughput over 1 reader's: wkcore {}x, mutex {}x\n",
        scaling(Wkcore),
        scaling(Mutex)
    );
    out
}

/// The map table: ns per look-up by key at 1 and 2 threads, and the 2-thread throughput over the
/// 1-thread one.
pub fn map_table(cells: &[TagCell]) -> String {
    let mut out = format!(
        "{:<16} {:>12} {:>12} {:>13}\n",
        "map", "1t ns/get", "2t ns/get", "2t/1t tput"
    );
    for v in [TagVariant::Papaya, TagVariant::DashMap, TagVariant::RcuMap] {
        let (one, two) = (
            cell(cells, TagOp::MapGet, 1, v),
            cell(cells, TagOp::MapGet, 2, v),
        );
        out += &format!(
            "{:<16} {:>12} {:>12} {:>13}\n",
            v.name(),
            fmt_cell(one),
            fmt_cell(two),
            ratio(one, two)
        );
    }
    out
}

/// The memory lines.
pub fn memory_table(m: &Memory) -> String {
    let resident =
        |r: Option<f64>| r.map_or_else(|| "not measurable".into(), |b| format!("{b:.1}"));
    format!(
        "memory per cached UID ({} UIDs of {:.0} bytes), bytes:\n\
         {:<44} {:>8.1}\n{:<44} {:>8.1}\n{:<44} {:>8.1}\n{:<44} {:>8}\n{:<44} {:>8}\n",
        m.uids,
        m.uid_len,
        "  wkcore compact list (Uids::heap_bytes)",
        m.compact_heap,
        "  wkcore whole cached body",
        m.body,
        "  Vec<String> (header + capacity)",
        m.vec_string_heap,
        "  Vec<String>, resident growth",
        resident(m.vec_string_resident),
        "  wkcore compact list, resident growth",
        resident(m.compact_resident),
    )
}

/// The JSON object (`{"tag":[...],"memory":{...}}`).
pub fn json(cells: &[TagCell], m: &Memory) -> String {
    let items: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{{\"op\":\"{}\",\"threads\":{},\"variant\":\"{}\",\"ns_per_op\":{:.3},\"trials\":{},\"kept\":{}}}",
                c.op.name(),
                c.threads,
                c.variant.name(),
                c.ns_per_op,
                c.trials,
                c.kept
            )
        })
        .collect();
    let opt = |r: Option<f64>| r.map_or_else(|| "null".into(), |b| format!("{b:.2}"));
    format!(
        "{{\"tag\":[{}],\"memory\":{{\"uids\":{},\"uid_len\":{:.2},\"compact_heap\":{:.2},\"body\":{:.2},\"vec_string_heap\":{:.2},\"vec_string_resident\":{},\"compact_resident\":{}}}}}",
        items.join(","),
        m.uids,
        m.uid_len,
        m.compact_heap,
        m.body,
        m.vec_string_heap,
        opt(m.vec_string_resident),
        opt(m.compact_resident)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hit_variant_hits() {
        let s = HitSubjects::new(3);
        for c in 0..s.len() {
            assert!(s.hit_by_handle(c) && s.hit_by_key(c) && s.hit_mutex(c));
            assert!(s.hit_floor(c) && s.hit_floor_key(c));
        }
    }

    #[test]
    fn memory_figures_are_sane() {
        let m = memory(1_000);
        assert_eq!(m.uid_len, 11.0);
        assert_eq!(m.compact_heap, 15.0);
        assert!(m.body > m.compact_heap && m.vec_string_heap >= 35.0);
    }
}
