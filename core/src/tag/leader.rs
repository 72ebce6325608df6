//! [`TagLeader`]: the channel leader's side: building tags (key reuse and the version-bump
//! rule, fresh keys for a new incarnation, ephemeral tags), membership changes with the dirty
//! lifecycle, the authority fetch by key, and TTL reclamation of bodies.
//!
//! # Locks
//!
//! Builds and membership changes of one channel hold that channel's mutex: each is a
//! read-modify-write of the channel's current tag (the version-bump rule reads the tag it
//! replaces), they are not the delivery hot path (that is the look-up, which takes no lock),
//! and they must be ordered with each other anyway. Reads of the current tag, the fence, the
//! fetch by key and the dirty check take no lock.
//!
//! # Orderings
//!
//! - The current tag and the bodies by key are published by the `HazardCell`'s `Release` swap
//!   (`hazard`) and papaya's insert, both of which order the body's contents before any
//!   reader's load of it.
//! - The dirty word (pending mutations, and a flag for a failed one) is written under the
//!   channel's mutex with `Release` stores and read with `Acquire` loads by
//!   [`TagLeader::usable`]: a reader that sees it clean also sees the tag the clearing
//!   mutation swapped in before it (the swap comes first under the lock).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::cache::{source_is_stale, CleanupPage, Lookup, CLEANUP_LIMIT_MAX};
use super::error::TagError;
use super::fence::{fence, LookupReason, LookupRequest};
use super::key::TagKeys;
use super::metrics::{self, StoreResult, TagCounts, TagStats};
use super::reclaim::{expired, Roster, Ticks};
use super::types::{DeliveryTag, NodePartition, PartitionTopology, TagParts, TagRef, Uids};
use crate::clock::Clock;
use crate::hazard::HazardCell;
use crate::metrics::Registry;
use crate::sync::{AtomicU64, Mutex, Ordering, ReadMap};

const FAILED: u64 = 1 << 32;
const PENDING: u64 = FAILED - 1;

/// How a [`TagLeader`] is set up.
#[derive(Clone)]
pub struct LeaderOptions {
    /// This node.
    pub local_node_id: u64,
    /// How long a body may stay idle before the cleanup reclaims it (0: never).
    pub ttl_nanos: u64,
    /// Unix-nanosecond time for creation and access stamps.
    pub clock: Arc<dyn Clock>,
    /// Where new tag keys come from.
    pub keys: Arc<dyn TagKeys>,
}

impl std::fmt::Debug for LeaderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderOptions")
            .field("local_node_id", &self.local_node_id)
            .field("ttl_nanos", &self.ttl_nanos)
            .finish_non_exhaustive()
    }
}

/// What a build materializes.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest<'a> {
    /// The channel.
    pub channel_key: &'a str,
    /// The subscriber mutation version the subscriber list was read at (the store's; the tag
    /// never invents one).
    pub subscriber_mutation_version: u64,
    /// The source channel of a derived tag (empty: none).
    pub source_channel_key: &'a str,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
    /// The topology the partitions were computed against (one consistent snapshot).
    pub topology: PartitionTopology,
    /// The subscribers, by node ([`partition_by_node`]).
    pub partitions: Vec<NodePartition>,
    /// A new leader incarnation: a fresh key and version 1 even if the channel has a tag.
    pub mint_fresh_key: bool,
}

/// The leader side (module docs).
#[derive(Clone)]
pub struct TagLeader {
    core: Arc<LeaderCore>,
}

struct LeaderChannel {
    current: HazardCell<DeliveryTag>,
    dirty: AtomicU64,
    lock: Mutex<()>,
}

struct LeaderCore {
    options: LeaderOptions,
    channels: ReadMap<Box<str>, Arc<LeaderChannel>>,
    by_key: ReadMap<Box<str>, Arc<DeliveryTag>>,
    roster: Roster<Box<str>>,
    ticks: Ticks,
    cleaning: Mutex<()>,
    stats: Arc<TagStats>,
}

impl Drop for LeaderCore {
    fn drop(&mut self) {
        self.stats.retire();
    }
}

/// One logical membership change of a channel, open from before the host writes its store
/// until [`Mutation::commit`] with the store's version. Chunks accumulate; dropping it without
/// a commit (a failed or partial store write) leaves the channel dirty, so its tag is rebuilt.
pub struct Mutation {
    core: Arc<LeaderCore>,
    channel: Arc<LeaderChannel>,
    reset: bool,
    adds: BTreeMap<u64, Vec<Box<[u8]>>>,
    removes: HashSet<Box<[u8]>>,
    open: bool,
}

/// What a committed mutation did to the channel's tag.
#[derive(Clone, Debug)]
pub enum MutationOutcome {
    /// The tag was updated: same key, version + 1, the store's subscriber version.
    Applied(Arc<DeliveryTag>),
    /// The channel has no tag: nothing recorded (the next message builds one).
    NoTag,
    /// The tag already carries this store version or a later one (a rebuild read it): unchanged.
    AlreadyCurrent(Arc<DeliveryTag>),
}

impl TagLeader {
    /// A leader side counting in the global metrics registry.
    pub fn new(options: LeaderOptions) -> Self {
        Self::with_metrics(options, crate::metrics::global())
    }

    /// A leader side counting in `registry`.
    pub fn with_metrics(options: LeaderOptions, registry: &Registry) -> Self {
        let stats = Arc::new(TagStats::new());
        metrics::register(registry, &stats);
        Self {
            core: Arc::new(LeaderCore {
                options,
                channels: ReadMap::new(),
                by_key: ReadMap::new(),
                roster: Roster::new(),
                ticks: Ticks::new(),
                cleaning: Mutex::new(()),
                stats,
            }),
        }
    }

    /// This node.
    pub fn local_node_id(&self) -> u64 {
        self.core.options.local_node_id
    }

    /// Upstream's `BuildLeaderTag`: reuses the channel's key and version, bumping the version by
    /// one iff the subscriber version, source key, source version or topology changed
    /// (partition contents are not compared); a fresh key and version 1 when the channel has no
    /// tag or `mint_fresh_key` is set. Clears a failed mark when no mutation is pending.
    pub fn build(&self, request: BuildRequest<'_>) -> Arc<DeliveryTag> {
        let channel = self.core.channel(request.channel_key);
        let _serial = channel.lock.lock();
        let now = self.core.now();
        let current = channel.current.load();
        let (key, version) = match &*current {
            Some(cur) if !request.mint_fresh_key => {
                let changed = cur.subscriber_mutation_version
                    != request.subscriber_mutation_version
                    || *cur.source_channel_key != *request.source_channel_key
                    || cur.source_subscriber_mutation_version
                        != request.source_subscriber_mutation_version
                    || cur.topology != request.topology;
                (cur.key.clone(), cur.tag_version + u64::from(changed))
            }
            _ => (self.core.options.keys.next_key(), 1),
        };
        let body = Arc::new(DeliveryTag::from_parts(TagParts {
            key,
            channel_key: request.channel_key.into(),
            tag_version: version,
            subscriber_mutation_version: request.subscriber_mutation_version,
            source_channel_key: request.source_channel_key.into(),
            source_subscriber_mutation_version: request.source_subscriber_mutation_version,
            topology: request.topology,
            partitions: request.partitions,
            created_at: now,
            last_access: now,
        }));
        channel.current.swap(Some(body.clone()));
        self.core.publish(&body);
        let dirty = channel.dirty.load(Ordering::Relaxed);
        if dirty & PENDING == 0 && dirty != 0 {
            // Ordering: Release; pairs with the Acquire in `usable` (module docs).
            channel.dirty.store(0, Ordering::Release);
        }
        body
    }

    /// Upstream's `BuildEphemeralTag`: a body under a fresh key, version 1, reachable only by
    /// key; the channel's current tag is not touched.
    pub fn build_ephemeral(&self, request: BuildRequest<'_>) -> Arc<DeliveryTag> {
        let now = self.core.now();
        let body = Arc::new(DeliveryTag::from_parts(TagParts {
            key: self.core.options.keys.next_key(),
            channel_key: request.channel_key.into(),
            tag_version: 1,
            subscriber_mutation_version: request.subscriber_mutation_version,
            source_channel_key: request.source_channel_key.into(),
            source_subscriber_mutation_version: request.source_subscriber_mutation_version,
            topology: request.topology,
            partitions: request.partitions,
            created_at: now,
            last_access: now,
        }));
        self.core.publish(&body);
        body
    }

    /// The fence against the channel's current tag (the leader's reuse check).
    pub fn lookup(&self, channel_key: &str, request: &LookupRequest<'_>) -> Lookup {
        let current = self.core.channels.with(channel_key, |c| c.current.load());
        let reason = match current.as_ref().and_then(|g| g.as_deref()) {
            Some(tag) => {
                let reason = fence(tag, request);
                if reason == LookupReason::Hit {
                    tag.touch_epoch(self.core.ticks.current());
                }
                reason
            }
            None => LookupReason::MissingRef,
        };
        self.core.stats.lookup(reason);
        Lookup::new(reason, current)
    }

    /// Upstream's `LookupTag`: the body under `tag_key` (current, ephemeral or an older
    /// incarnation not yet reclaimed), for the authority fetch. Refreshes its access time.
    pub fn lookup_tag(&self, tag_key: &str) -> Option<Arc<DeliveryTag>> {
        let tag = self.core.by_key.get(tag_key)?;
        tag.touch_exact(self.core.now());
        Some(tag)
    }

    /// The channel's current tag.
    pub fn current(&self, channel_key: &str) -> Option<Arc<DeliveryTag>> {
        self.core
            .channels
            .with(channel_key, |c| c.current.load().into_inner())
            .flatten()
    }

    /// Upstream's `CurrentRef`.
    pub fn current_ref(&self, channel_key: &str) -> Option<TagRef> {
        self.current(channel_key).map(|t| t.tag_ref())
    }

    /// Upstream's `IsSourceStale`.
    pub fn is_source_stale(
        &self,
        channel_key: &str,
        source_channel_key: &str,
        source_version: u64,
    ) -> bool {
        self.current(channel_key)
            .is_some_and(|t| source_is_stale(&t, source_channel_key, source_version))
    }

    /// The current tag if a message may use it: no mutation pending or failed, and its
    /// subscriber version not below `authoritative_version` (the store's). `None`: rebuild.
    pub fn usable(
        &self,
        channel_key: &str,
        authoritative_version: u64,
    ) -> Option<Arc<DeliveryTag>> {
        self.core
            .channels
            .with(channel_key, |c| {
                // Ordering: Acquire; pairs with the Release stores of the dirty word.
                if c.dirty.load(Ordering::Acquire) != 0 {
                    return None;
                }
                c.current
                    .load()
                    .into_inner()
                    .filter(|t| t.subscriber_mutation_version >= authoritative_version)
            })
            .flatten()
    }

    /// True while a mutation of the channel is pending or one failed since its last build.
    pub fn is_dirty(&self, channel_key: &str) -> bool {
        self.core
            .channels
            .with(channel_key, |c| c.dirty.load(Ordering::Acquire) != 0)
            .unwrap_or(false)
    }

    /// Marks the channel dirty, before the host writes the mutation to its store.
    pub fn begin_mutation(&self, channel_key: &str) -> Mutation {
        let channel = self.core.channel(channel_key);
        {
            let _serial = channel.lock.lock();
            let dirty = channel.dirty.load(Ordering::Relaxed);
            // Ordering: Release (module docs).
            channel.dirty.store(dirty + 1, Ordering::Release);
        }
        Mutation {
            core: self.core.clone(),
            channel,
            reset: false,
            adds: BTreeMap::new(),
            removes: HashSet::new(),
            open: true,
        }
    }

    /// Reclaims up to `limit` (at most [`CLEANUP_LIMIT_MAX`]) bodies idle past the TTL at `now`,
    /// clearing a channel's current tag when it was the body reclaimed. Also frees the replaced
    /// current tags no reader holds any more (`docs/TAG.md`, "Freeing replaced bodies").
    pub fn cleanup_expired(&self, now: i64, limit: usize) -> CleanupPage {
        let page = self.core.cleanup(now, limit.min(CLEANUP_LIMIT_MAX));
        crate::hazard::reclaim_retired();
        page
    }

    /// Bodies held by key (a moment's view).
    pub fn bodies(&self) -> usize {
        self.core.by_key.len()
    }

    /// This leader's counts.
    pub fn counts(&self) -> TagCounts {
        self.core.stats.counts()
    }
}

impl Mutation {
    /// Clears every partition (reset / remove-all), before this mutation's adds.
    pub fn reset(&mut self) {
        self.reset = true;
        self.adds.clear();
        self.removes.clear();
    }

    /// Adds `uids` to `node_id`'s partition (the node that owns each UID's slot).
    pub fn add<I, B>(&mut self, node_id: u64, uids: I)
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let list = self.adds.entry(node_id).or_default();
        for uid in uids {
            let uid: Box<[u8]> = uid.as_ref().into();
            self.removes.remove(&uid);
            list.push(uid);
        }
    }

    /// Removes `uids` from whichever partition holds them.
    pub fn remove<I, B>(&mut self, uids: I)
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        for uid in uids {
            let uid: Box<[u8]> = uid.as_ref().into();
            for list in self.adds.values_mut() {
                list.retain(|u| *u != uid);
            }
            self.removes.insert(uid);
        }
    }

    /// Applies the mutation with the version the store returned: one tag version bump however
    /// many chunks it had, same key; clears this mutation's dirty mark.
    pub fn commit(mut self, store_version: u64) -> Result<MutationOutcome, TagError> {
        self.open = false;
        let channel = self.channel.clone();
        let _serial = channel.lock.lock();
        let outcome = self.apply(store_version);
        let dirty = channel.dirty.load(Ordering::Relaxed);
        let dirty = match &outcome {
            Ok(_) => dirty - 1,
            Err(_) => (dirty - 1) | FAILED,
        };
        // Ordering: Release (module docs); after the swap in `apply`.
        channel.dirty.store(dirty, Ordering::Release);
        outcome
    }

    fn apply(&self, store_version: u64) -> Result<MutationOutcome, TagError> {
        let current = match self.channel.current.load().into_inner() {
            Some(cur) => cur,
            None => return Ok(MutationOutcome::NoTag),
        };
        if current.subscriber_mutation_version >= store_version {
            return Ok(MutationOutcome::AlreadyCurrent(current));
        }
        let mut partitions: Vec<NodePartition> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        if !self.reset {
            for p in current.partitions.iter() {
                seen.insert(p.node_id);
                let kept = p.uids.iter().filter(|u| !self.removes.contains(*u));
                let mut uids: Vec<&[u8]> = kept.collect();
                let mut have: HashSet<&[u8]> = uids.iter().copied().collect();
                if let Some(adds) = self.adds.get(&p.node_id) {
                    for uid in adds {
                        if have.insert(uid) {
                            uids.push(uid);
                        }
                    }
                }
                partitions.push(NodePartition {
                    node_id: p.node_id,
                    uids: Uids::new(uids)?,
                });
            }
        }
        for (node, adds) in &self.adds {
            if seen.contains(node) {
                continue;
            }
            let mut have = HashSet::new();
            let uids: Vec<&[u8]> = adds
                .iter()
                .map(|u| &**u)
                .filter(|u| have.insert(*u))
                .collect();
            partitions.push(NodePartition {
                node_id: *node,
                uids: Uids::new(uids)?,
            });
        }
        partitions.sort_by_key(|p| p.node_id);
        let now = self.core.now();
        let body = Arc::new(DeliveryTag::from_parts(TagParts {
            key: current.key.clone(),
            channel_key: current.channel_key.clone(),
            tag_version: current.tag_version + 1,
            subscriber_mutation_version: store_version,
            source_channel_key: current.source_channel_key.clone(),
            source_subscriber_mutation_version: current.source_subscriber_mutation_version,
            topology: current.topology.clone(),
            partitions,
            created_at: current.created_at,
            last_access: now,
        }));
        self.channel.current.swap(Some(body.clone()));
        self.core.publish(&body);
        Ok(MutationOutcome::Applied(body))
    }
}

impl Drop for Mutation {
    fn drop(&mut self) {
        if self.open {
            let _serial = self.channel.lock.lock();
            let dirty = self.channel.dirty.load(Ordering::Relaxed);
            // Ordering: Release (module docs). Failed: the tag is rebuilt before its next use.
            self.channel
                .dirty
                .store((dirty - 1) | FAILED, Ordering::Release);
        }
    }
}

impl LeaderCore {
    fn now(&self) -> i64 {
        self.options.clock.now_nanos() as i64
    }

    fn channel(&self, channel_key: &str) -> Arc<LeaderChannel> {
        if let Some(c) = self.channels.get(channel_key) {
            return c;
        }
        self.channels.get_or_insert_with(channel_key.into(), || {
            Arc::new(LeaderChannel {
                current: HazardCell::new(None),
                dirty: AtomicU64::new(0),
                lock: Mutex::new(()),
            })
        })
    }

    /// Makes `body` reachable by key, replacing an older body under the same key.
    fn publish(&self, body: &Arc<DeliveryTag>) {
        match self.by_key.insert(body.key.clone(), body.clone()) {
            None => {
                self.roster.add(body.key.clone());
                self.stats.hold(1, body.uid_count() as i64);
            }
            Some(old) => self
                .stats
                .hold(0, body.uid_count() as i64 - old.uid_count() as i64),
        }
        self.stats.store(StoreResult::Stored);
    }

    fn cleanup(&self, now: i64, limit: usize) -> CleanupPage {
        let ttl = self.options.ttl_nanos;
        let mut page = CleanupPage::default();
        if ttl == 0 || limit == 0 {
            return page;
        }
        let _one_cleaner = self.cleaning.lock();
        self.ticks.advance(now, ttl);
        let (keys, wrapped) = self.roster.page(limit);
        page.wrapped = wrapped;
        for (slot, key) in keys {
            page.visited += 1;
            let Some(body) = self.by_key.get(&*key) else {
                self.roster.remove(slot);
                continue;
            };
            let Some(hit) = self.ticks.hit_bound(body.touched_epoch()) else {
                continue;
            };
            if !expired(now, body.last_access().max(hit), ttl) {
                continue;
            }
            if !self.by_key.remove_if(&*key, |b| Arc::ptr_eq(b, &body)) {
                continue;
            }
            self.roster.remove(slot);
            page.reclaimed += 1;
            self.stats.hold(-1, -(body.uid_count() as i64));
            if let Some(channel) = self.channels.get(&*body.channel_key) {
                let current = channel.current.load();
                if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &body))
                    && channel.current.compare_and_swap(&current, None).is_ok()
                {
                    page.unlinked += 1;
                }
            }
        }
        self.stats
            .reclaimed(page.reclaimed as u64, page.unlinked as u64);
        page
    }
}

/// Splits `uids` by the node that owns each one's slot: `slots[i]` is `uids[i]`'s hash slot
/// and `slot_nodes[slot]` that slot's node (0: unknown). Partitions come ordered by node; a UID
/// whose slot has no known node refuses the build (retryable), never guessed.
pub fn partition_by_node<B: AsRef<[u8]>>(
    uids: &[B],
    slots: &[u32],
    slot_nodes: &[u64],
) -> Result<Vec<NodePartition>, TagError> {
    if uids.len() != slots.len() {
        return Err(TagError::LengthMismatch);
    }
    let mut by_node: BTreeMap<u64, Vec<&[u8]>> = BTreeMap::new();
    for (uid, &slot_id) in uids.iter().zip(slots) {
        let node = slot_nodes.get(slot_id as usize).copied().unwrap_or(0);
        if node == 0 {
            return Err(TagError::UnassignedSlot { slot_id });
        }
        by_node.entry(node).or_default().push(uid.as_ref());
    }
    by_node
        .into_iter()
        .map(|(node_id, uids)| NodePartition::new(node_id, uids))
        .collect()
}
