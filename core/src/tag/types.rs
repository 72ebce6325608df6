//! The delivery tag's data: topology versions, compact UID lists, node partitions, the tag body
//! and its channel-level reference.

use std::sync::Arc;

use super::error::TagError;
use crate::sync::{AtomicU64, Ordering};

/// One hash slot's authority as the control plane saw it when a tag was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct SlotAuthorityRef {
    /// The hash slot.
    pub slot_id: u32,
    /// Its leader node.
    pub leader_node_id: u64,
    /// Its configuration epoch.
    pub config_epoch: u64,
    /// Its balance version.
    pub balance_version: u64,
}

/// A borrowed partition topology version: what a look-up is fenced against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopologyView<'a> {
    /// The hash-slot table version.
    pub hash_slot_table_version: u64,
    /// The slot authorities, in the order they were read.
    pub refs: &'a [SlotAuthorityRef],
}

/// The partition topology version a tag was built against.
///
/// Equality is upstream's `Equal`: the same table version, the same number of refs, and the refs
/// equal element by element **in order** (never reduced to a maximum).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PartitionTopology {
    /// The hash-slot table version.
    pub hash_slot_table_version: u64,
    /// The slot authorities, in order.
    pub refs: Arc<[SlotAuthorityRef]>,
}

impl PartitionTopology {
    /// A topology version.
    pub fn new(hash_slot_table_version: u64, refs: &[SlotAuthorityRef]) -> Self {
        Self {
            hash_slot_table_version,
            refs: refs.into(),
        }
    }

    /// This topology, borrowed.
    pub fn view(&self) -> TopologyView<'_> {
        TopologyView {
            hash_slot_table_version: self.hash_slot_table_version,
            refs: &self.refs,
        }
    }

    /// Upstream's `Equal` against a borrowed topology.
    #[inline]
    pub fn matches(&self, other: TopologyView<'_>) -> bool {
        if self.hash_slot_table_version != other.hash_slot_table_version
            || self.refs.len() != other.refs.len()
        {
            return false;
        }
        // A request built from a cached tag's own topology shares its refs: no element walk.
        if std::ptr::eq(self.refs.as_ptr(), other.refs.as_ptr()) {
            return true;
        }
        // Every field of every ref, folded without branches (the hit path's largest step when
        // compared field by field with early exits: 76 of ~320 instructions for four refs).
        let mut diff = 0u64;
        for (a, b) in self.refs.iter().zip(other.refs) {
            diff |= u64::from(a.slot_id ^ b.slot_id)
                | (a.leader_node_id ^ b.leader_node_id)
                | (a.config_epoch ^ b.config_epoch)
                | (a.balance_version ^ b.balance_version);
        }
        diff == 0
    }
}

impl From<TopologyView<'_>> for PartitionTopology {
    fn from(view: TopologyView<'_>) -> Self {
        Self::new(view.hash_slot_table_version, view.refs)
    }
}

/// A list of subscriber UIDs in one buffer: the bytes of every UID back to back, and the end
/// offset of each. A cached UID costs its bytes plus 4.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Uids {
    bytes: Box<[u8]>,
    ends: Box<[u32]>,
}

impl std::fmt::Debug for Uids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

impl Uids {
    /// The UIDs `uids` yields, in order; refused when their bytes pass `u32::MAX` in all.
    pub fn new<I, B>(uids: I) -> Result<Self, TagError>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for uid in uids {
            bytes.extend_from_slice(uid.as_ref());
            ends.push(u32::try_from(bytes.len()).map_err(|_| TagError::TooLarge)?);
        }
        Ok(Self {
            bytes: bytes.into_boxed_slice(),
            ends: ends.into_boxed_slice(),
        })
    }

    /// How many UIDs.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `index`th UID.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        let end = *self.ends.get(index)? as usize;
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] as usize,
        };
        Some(&self.bytes[start..end])
    }

    /// The UIDs, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }

    /// Every UID's bytes, back to back (what a zero-copy view exposes).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The end offset of each UID in [`Uids::bytes`] (UID `i` spans `ends[i-1]..ends[i]`, with
    /// `ends[-1] = 0`).
    #[inline]
    pub fn ends(&self) -> &[u32] {
        &self.ends
    }

    /// Heap bytes held (the memory figure of `docs/TAG.md`).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len() + self.ends.len() * std::mem::size_of::<u32>()
    }
}

/// One node's share of a tag's subscribers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodePartition {
    /// The node that delivers to these UIDs.
    pub node_id: u64,
    /// The UIDs.
    pub uids: Uids,
}

impl NodePartition {
    /// A partition from borrowed UIDs.
    pub fn new<I, B>(node_id: u64, uids: I) -> Result<Self, TagError>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        Ok(Self {
            node_id,
            uids: Uids::new(uids)?,
        })
    }

    /// A node's empty partition (what a follower stores when the tag has none for it).
    pub fn empty(node_id: u64) -> Self {
        Self {
            node_id,
            uids: Uids::default(),
        }
    }
}

/// The channel-level fence: which incarnation and version of a tag is current for a channel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TagRef {
    /// The channel.
    pub channel_key: Box<str>,
    /// The current tag's key.
    pub tag_key: Box<str>,
    /// Its version.
    pub tag_version: u64,
    /// The subscriber mutation version it was built from.
    pub subscriber_mutation_version: u64,
    /// The source channel of a derived tag (empty: none).
    pub source_channel_key: Box<str>,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology it was built against.
    pub topology: PartitionTopology,
}

/// A delivery tag: one incarnation's subscriber snapshot of a channel, split by node.
///
/// The body is immutable once published, except its access marks: `last_access` (unix
/// nanoseconds, written by stores, builds and fetches by key) and the look-up epoch of its
/// latest hit, which hits refresh at most once per cleanup tick (`docs/TAG.md`).
///
/// Both marks only ever grow: a writer that read its clock (or the tick) before another writer
/// and stores after it leaves the newer value in place, so the cleanup never judges a body by an
/// access older than its latest one (a plain store would move the mark back, and the cleanup
/// would reclaim the body earlier than upstream's exact rule allows).
///
/// # Orderings
///
/// Both access marks are `Relaxed`: they publish nothing and only guide reclamation. Raising one
/// is a compare-and-swap that writes only a larger value, so every mark's modification order
/// is increasing, and a cleanup that comes after a write (in happens-before) reads that value or
/// a larger one. A hit that races the cleanup that reclaims its body is ordered before the
/// reclaim (its reader keeps the body; the next look-up misses and fetches again).
#[derive(Debug)]
pub struct DeliveryTag {
    pub(crate) key: Box<str>,
    pub(crate) channel_key: Box<str>,
    pub(crate) tag_version: u64,
    pub(crate) subscriber_mutation_version: u64,
    pub(crate) source_channel_key: Box<str>,
    pub(crate) source_subscriber_mutation_version: u64,
    pub(crate) topology: PartitionTopology,
    pub(crate) partitions: Box<[NodePartition]>,
    pub(crate) created_at: i64,
    pub(crate) last_access: AtomicU64,
    pub(crate) touched: AtomicU64,
}

/// Everything of a tag but its access marks: what builds, stores and codecs exchange.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TagParts {
    /// The incarnation key.
    pub key: Box<str>,
    /// The channel.
    pub channel_key: Box<str>,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version.
    pub subscriber_mutation_version: u64,
    /// The source channel of a derived tag (empty: none).
    pub source_channel_key: Box<str>,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology.
    pub topology: PartitionTopology,
    /// The partitions, by node.
    pub partitions: Vec<NodePartition>,
    /// Creation time, unix nanoseconds (0: unset).
    pub created_at: i64,
    /// Last access, unix nanoseconds (0: unset).
    pub last_access: i64,
}

impl DeliveryTag {
    pub(crate) fn from_parts(parts: TagParts) -> Self {
        Self {
            key: parts.key,
            channel_key: parts.channel_key,
            tag_version: parts.tag_version,
            subscriber_mutation_version: parts.subscriber_mutation_version,
            source_channel_key: parts.source_channel_key,
            source_subscriber_mutation_version: parts.source_subscriber_mutation_version,
            topology: parts.topology,
            partitions: parts.partitions.into_boxed_slice(),
            created_at: parts.created_at,
            last_access: AtomicU64::new(parts.last_access as u64),
            touched: AtomicU64::new(0),
        }
    }

    /// A copy of everything but the hit epoch.
    pub fn to_parts(&self) -> TagParts {
        TagParts {
            key: self.key.clone(),
            channel_key: self.channel_key.clone(),
            tag_version: self.tag_version,
            subscriber_mutation_version: self.subscriber_mutation_version,
            source_channel_key: self.source_channel_key.clone(),
            source_subscriber_mutation_version: self.source_subscriber_mutation_version,
            topology: self.topology.clone(),
            partitions: self.partitions.to_vec(),
            created_at: self.created_at,
            last_access: self.last_access(),
        }
    }

    /// The incarnation key.
    pub fn key(&self) -> &str {
        &self.key
    }
    /// The channel.
    pub fn channel_key(&self) -> &str {
        &self.channel_key
    }
    /// The tag version.
    pub fn tag_version(&self) -> u64 {
        self.tag_version
    }
    /// The subscriber mutation version it carries.
    pub fn subscriber_mutation_version(&self) -> u64 {
        self.subscriber_mutation_version
    }
    /// The source channel of a derived tag (empty: none).
    pub fn source_channel_key(&self) -> &str {
        &self.source_channel_key
    }
    /// The source's subscriber mutation version.
    pub fn source_subscriber_mutation_version(&self) -> u64 {
        self.source_subscriber_mutation_version
    }
    /// The topology it was built against.
    pub fn topology(&self) -> &PartitionTopology {
        &self.topology
    }
    /// Its partitions (a follower's tag: exactly one, the local node's).
    pub fn partitions(&self) -> &[NodePartition] {
        &self.partitions
    }
    /// `node_id`'s partition, if it has one.
    pub fn partition(&self, node_id: u64) -> Option<&NodePartition> {
        self.partitions.iter().find(|p| p.node_id == node_id)
    }
    /// Creation time, unix nanoseconds (0: unset).
    pub fn created_at(&self) -> i64 {
        self.created_at
    }
    /// The latest exact access (store, build, fetch by key), unix nanoseconds; hits are tracked
    /// per cleanup tick instead (`docs/TAG.md`).
    pub fn last_access(&self) -> i64 {
        // Ordering: Relaxed (type docs).
        self.last_access.load(Ordering::Relaxed) as i64
    }

    /// The channel-level reference this tag makes current.
    pub fn tag_ref(&self) -> TagRef {
        TagRef {
            channel_key: self.channel_key.clone(),
            tag_key: self.key.clone(),
            tag_version: self.tag_version,
            subscriber_mutation_version: self.subscriber_mutation_version,
            source_channel_key: self.source_channel_key.clone(),
            source_subscriber_mutation_version: self.source_subscriber_mutation_version,
            topology: self.topology.clone(),
        }
    }

    /// How many UIDs across its partitions.
    pub fn uid_count(&self) -> usize {
        self.partitions.iter().map(|p| p.uids.len()).sum()
    }

    /// Heap bytes its UIDs hold.
    pub fn uid_heap_bytes(&self) -> usize {
        self.partitions.iter().map(|p| p.uids.heap_bytes()).sum()
    }

    /// Records an exact access at `now`, unless a later one is already recorded (type docs):
    /// the time kept is the latest of every access, whatever order their writes land in.
    pub(crate) fn touch_exact(&self, now: i64) {
        // Ordering: Relaxed (type docs).
        let mut seen = self.last_access.load(Ordering::Relaxed);
        // Times are signed (unix nanoseconds): compared as such, not as their bits.
        while (seen as i64) < now {
            // Ordering: Relaxed (type docs); a failure reloads and judges again.
            match self.last_access.compare_exchange_weak(
                seen,
                now as u64,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => seen = actual,
            }
        }
    }

    /// Marks a hit in `epoch`, writing only when the mark is older (type docs): a hit in the
    /// current tick is one load and no write, and a reader that loaded an older tick never
    /// moves a newer mark back.
    #[inline]
    pub(crate) fn touch_epoch(&self, epoch: u64) {
        // Ordering: Relaxed (type docs); the load keeps the line shared between readers.
        let seen = self.touched.load(Ordering::Relaxed);
        if seen < epoch {
            self.raise_epoch(seen, epoch);
        }
    }

    /// Raises the hit mark from `seen` to `epoch`, unless another hit raised it at least as far.
    #[cold]
    #[inline(never)]
    fn raise_epoch(&self, mut seen: u64, epoch: u64) {
        while seen < epoch {
            // Ordering: Relaxed (type docs); a failure reloads and judges again.
            match self.touched.compare_exchange_weak(
                seen,
                epoch,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => seen = actual,
            }
        }
    }

    pub(crate) fn touched_epoch(&self) -> u64 {
        // Ordering: Relaxed (type docs).
        self.touched.load(Ordering::Relaxed)
    }

    /// The marks a host that runs hits inline writes (`tag::hot`): valid while this body is.
    pub fn host_marks(&self) -> super::hot::HostBodyMarks<'_> {
        super::hot::HostBodyMarks {
            touched: crate::sync::host_u64(&self.touched),
            last_access: crate::sync::host_u64(&self.last_access),
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::metrics::Registry;
    use crate::tag::{
        BuildRequest, CacheOptions, LeaderOptions, LookupReason, LookupRequest, PartitionCache,
        SequentialTagKeys, TagLeader,
    };

    const CH: &str = "group:g1";
    const LOCAL: u64 = 2;

    fn parts() -> TagParts {
        TagParts {
            key: "k-1".into(),
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

    fn cache(start: u64, ttl: u64) -> (PartitionCache, Arc<ManualClock>, Registry) {
        let registry = Registry::new();
        let clock = Arc::new(ManualClock::new(start));
        let cache = PartitionCache::with_metrics(
            CacheOptions {
                local_node_id: LOCAL,
                ttl_nanos: ttl,
                clock: clock.clone(),
            },
            &registry,
        );
        (cache, clock, registry)
    }

    /// Topology equality sees a difference in any field of any ref, at every length, and never
    /// matches across table versions or lengths.
    #[test]
    fn topology_matches_every_field_of_every_ref() {
        let refs = |n: u32| -> Vec<SlotAuthorityRef> {
            (0..n)
                .map(|i| SlotAuthorityRef {
                    slot_id: i,
                    leader_node_id: u64::from(i) + 1,
                    config_epoch: u64::from(i) + 10,
                    balance_version: u64::from(i) + 20,
                })
                .collect()
        };
        for n in 0..7u32 {
            let cached = PartitionTopology::new(5, &refs(n));
            let same = refs(n);
            assert!(cached.matches(TopologyView {
                hash_slot_table_version: 5,
                refs: &same,
            }));
            assert!(!cached.matches(TopologyView {
                hash_slot_table_version: 6,
                refs: &same,
            }));
            assert!(!cached.matches(TopologyView {
                hash_slot_table_version: 5,
                refs: &refs(n + 1),
            }));
            for at in 0..n as usize {
                for field in 0..4 {
                    let mut other = refs(n);
                    let r = &mut other[at];
                    match field {
                        0 => r.slot_id ^= 1 << 31,
                        1 => r.leader_node_id ^= 1 << 63,
                        2 => r.config_epoch ^= 1,
                        _ => r.balance_version ^= 1 << 40,
                    }
                    assert!(
                        !cached.matches(TopologyView {
                            hash_slot_table_version: 5,
                            refs: &other,
                        }),
                        "len {n}, ref {at}, field {field}"
                    );
                }
            }
        }
    }

    #[test]
    fn exact_access_never_moves_back() {
        let body = DeliveryTag::from_parts(TagParts {
            last_access: 10,
            ..parts()
        });
        body.touch_exact(500);
        // A thread that read the clock at 100 and stores after the one that read 500.
        body.touch_exact(100);
        assert_eq!(body.last_access(), 500);
        body.touch_exact(501);
        assert_eq!(body.last_access(), 501);
        // Negative times order as times, not as their unsigned bits.
        let early = DeliveryTag::from_parts(TagParts {
            last_access: -5,
            ..parts()
        });
        early.touch_exact(-7);
        assert_eq!(early.last_access(), -5);
        early.touch_exact(3);
        assert_eq!(early.last_access(), 3);
    }

    #[test]
    fn hit_mark_never_moves_back() {
        let body = DeliveryTag::from_parts(parts());
        body.touch_epoch(3);
        // A reader that loaded tick 2 and marks after another reader marked tick 3.
        body.touch_epoch(2);
        assert_eq!(body.touched_epoch(), 3);
        body.touch_epoch(3);
        body.touch_epoch(4);
        assert_eq!(body.touched_epoch(), 4);
    }

    /// Fetched at 500, a late store of an access read at 100: the cleanup at 1500 (TTL 1000)
    /// must keep the body, as upstream's exact rule does (1500 - 500 is not above 1000).
    #[test]
    fn a_late_older_access_does_not_reclaim_early() {
        let (cache, clock, _r) = cache(0, 1_000);
        let t = parts();
        assert!(cache.store(&t).is_stored());
        clock.set(500);
        let body = cache.lookup_tag(CH, &t.key).expect("the stored body");
        assert_eq!(body.last_access(), 500);
        body.touch_exact(100);
        assert_eq!(cache.cleanup_expired(1_500, 16).reclaimed, 0);
        assert!(cache.current(CH).is_some());
        // Past the TTL of the newest access, it goes.
        assert_eq!(cache.cleanup_expired(1_501, 16).reclaimed, 1);

        let leader = TagLeader::with_metrics(
            LeaderOptions {
                local_node_id: LOCAL,
                ttl_nanos: 1_000,
                clock: Arc::new(ManualClock::new(0)),
                keys: Arc::new(SequentialTagKeys::new("k")),
            },
            &Registry::new(),
        );
        let built = leader.build(BuildRequest {
            channel_key: CH,
            subscriber_mutation_version: 1,
            source_channel_key: "",
            source_subscriber_mutation_version: 0,
            topology: PartitionTopology::default(),
            partitions: vec![NodePartition::new(LOCAL, ["u2"]).unwrap()],
            mint_fresh_key: false,
        });
        built.touch_exact(500);
        let fetched = leader.lookup_tag(built.key()).expect("by key");
        fetched.touch_exact(100);
        assert_eq!(leader.cleanup_expired(1_500, 16).reclaimed, 0);
        assert!(leader.lookup_tag(built.key()).is_some());
    }

    /// A reader that loaded tick 1 marks the body after another reader hit it at 4000 in tick 2
    /// (a tick that lasts from 1200 to the next cleanup at 4401): the cleanup at 4401 (TTL 3200)
    /// must keep the body (4401 - 4000 is not above 3200).
    #[test]
    fn a_late_older_hit_mark_does_not_reclaim_early() {
        let (cache, clock, _r) = cache(1_000, 3_200);
        let t = parts();
        assert!(cache.store(&t).is_stored());
        clock.set(1_100);
        let first = cache.lookup(CH, &request(&t));
        assert_eq!(first.reason(), LookupReason::Hit);
        let body = cache.current(CH).unwrap();
        // The tick the slow reader loaded.
        let stale_tick = body.touched_epoch();
        assert_eq!(cache.cleanup_expired(1_200, 16).reclaimed, 0);
        clock.set(4_000);
        assert_eq!(cache.lookup(CH, &request(&t)).reason(), LookupReason::Hit);
        assert!(body.touched_epoch() > stale_tick);
        // The slow reader's mark lands now.
        body.touch_epoch(stale_tick);
        assert_eq!(cache.cleanup_expired(4_401, 16).reclaimed, 0);
        assert!(cache.current(CH).is_some());
    }
}

impl crate::hazard::Weighed for DeliveryTag {
    /// The body and its UIDs: what a retired body frees.
    fn weight(&self) -> u64 {
        (std::mem::size_of::<Self>() + self.uid_heap_bytes()) as u64
    }
}
