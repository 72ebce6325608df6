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
/// # Orderings
///
/// Both access marks are `Relaxed`: they publish nothing and only guide reclamation. A hit that
/// races the cleanup that reclaims its body is ordered before the reclaim (its reader keeps the
/// body; the next look-up misses and fetches again).
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

    pub(crate) fn touch_exact(&self, now: i64) {
        // Ordering: Relaxed (type docs).
        self.last_access.store(now as u64, Ordering::Relaxed);
    }

    /// Marks a hit in `epoch`, writing only when the mark moves.
    #[inline]
    pub(crate) fn touch_epoch(&self, epoch: u64) {
        // Ordering: Relaxed (type docs); the load keeps the line shared between readers.
        if self.touched.load(Ordering::Relaxed) != epoch {
            self.touched.store(epoch, Ordering::Relaxed);
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
