//! Mutex reference of `wkcore::tag`: upstream's Go `deliverytag.Manager`
//! (`internal/runtime/deliverytag/manager.go`) written literally under one mutex.
//!
//! # Shape
//!
//! Upstream's state, as upstream keeps it: two maps behind one lock,
//!
//! - `tags`: tag key → body (every body built or stored, current or not, ephemeral ones
//!   included, until the TTL cleanup deletes it), and
//! - `channel_ref`: channel key → [`TagRef`] (the current incarnation per channel),
//!
//! and upstream's operations, each under the one lock, in upstream's order of checks:
//! [`MutexTagManager::build_leader_tag`], [`MutexTagManager::build_ephemeral_tag`],
//! [`MutexTagManager::store_follower_partition`], [`MutexTagManager::lookup_local_partition_ref`]
//! and [`MutexTagManager::lookup_local_partition`], [`MutexTagManager::lookup_tag`],
//! [`MutexTagManager::current_ref`], [`MutexTagManager::is_source_stale`] and
//! [`MutexTagManager::cleanup_expired`]. The fence and the stale-store rule are written out here
//! again (not wkcore's [`wkcore::tag::fence()`]), so the model tests compare two codings of them.
//!
//! # API
//!
//! - Construction: [`MutexTagManager::new`]`(local_node_id, ttl_nanos)` (random keys, as
//!   upstream's default `NewTagKey`) or [`MutexTagManager::with_keys`] with any
//!   [`TagKeys`] (the model tests give both sides the same `SequentialTagKeys`).
//! - Time: every method where upstream reads `m.now()` takes `now: i64` (unix nanoseconds)
//!   instead; the TTL is an `i64` of nanoseconds like Go's `time.Duration` (`≤ 0`: cleanup does
//!   nothing).
//! - Types: wkcore's public ones. Requests are [`BuildRequest`] (leader builds) and
//!   [`LookupRequest`] plus the channel key (look-ups); stored tags come in as [`TagParts`];
//!   bodies go out as [`TagParts`] (upstream's clones) or, from the `Ref` look-up, as a
//!   [`SharedTag`] that shares the cached body (upstream's shared slices: no allocation, one
//!   reference-count increment).
//! - Reasons are wkcore's [`LookupReason`]; `missing_tag` can occur here (a reference whose body
//!   is gone) though no sequence of these operations produces it.
//!
//! # What is not ported
//!
//! The nil manager (Rust has no nil receiver) and the option plumbing. Upstream's `Always
//! returns (tag, true)` builds return just the tag.
//!
//! # Inspection
//!
//! [`MutexTagManager::bodies`], [`MutexTagManager::channels`], [`MutexTagManager::keys`] and
//! [`MutexTagManager::peek_tag`] read the maps without touching an access time; they are not
//! upstream's and exist for the model tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use wkcore::tag::{
    BuildRequest, LookupReason, LookupRequest, NodePartition, RandomTagKeys, TagKeys, TagParts,
    TagRef,
};

/// A body as the `Ref` look-up returns it: the cached body itself (shared, read-only) and the
/// access time written back by the look-up.
#[derive(Clone, Debug)]
pub struct SharedTag {
    /// The body, shared with the cache. Its `last_access` field is always 0: the body's access
    /// time lives next to it in the map and is [`SharedTag::last_access`].
    pub body: Arc<TagParts>,
    /// The body's access time (unix nanoseconds) when the look-up returned.
    pub last_access: i64,
}

impl SharedTag {
    /// An owned copy with its access time filled in (upstream's clone).
    pub fn to_parts(&self) -> TagParts {
        TagParts {
            last_access: self.last_access,
            ..(*self.body).clone()
        }
    }

    /// `node_id`'s partition, if the body has one.
    pub fn partition(&self, node_id: u64) -> Option<&NodePartition> {
        self.body.partitions.iter().find(|p| p.node_id == node_id)
    }
}

/// What [`MutexTagManager::lookup_local_partition_ref`] found: upstream's `(tag, ok, reason)`
/// with `ok` being `reason == Hit`, and no tag where upstream returns the zero tag
/// (`missing_ref`, `missing_tag`).
#[derive(Clone, Debug)]
pub struct RefLookup {
    /// Why it hit or missed.
    pub reason: LookupReason,
    /// The current body (on a hit and on every miss from the key check on).
    pub tag: Option<SharedTag>,
}

/// What [`MutexTagManager::lookup_local_partition`] found: as [`RefLookup`], with the body
/// cloned.
#[derive(Clone, Debug)]
pub struct PartitionLookup {
    /// Why it hit or missed.
    pub reason: LookupReason,
    /// A clone of the current body (on a hit and on every miss from the key check on).
    pub tag: Option<TagParts>,
}

/// What [`MutexTagManager::store_follower_partition`] did: upstream's `(tag, ok)`.
#[derive(Clone, Debug)]
pub struct FollowerStore {
    /// True when stored (`ok`).
    pub stored: bool,
    /// Stored: the body as cached (the local partition only). Refused: the current body, or
    /// `None` where upstream returns the zero tag (its body is missing).
    pub tag: Option<TagParts>,
}

/// One entry of upstream's `tags` map.
struct Stored {
    body: Arc<TagParts>,
    last_access: i64,
}

impl Stored {
    fn shared(&self) -> SharedTag {
        SharedTag {
            body: self.body.clone(),
            last_access: self.last_access,
        }
    }
}

#[derive(Default)]
struct State {
    tags: HashMap<Box<str>, Stored>,
    channel_ref: HashMap<Box<str>, TagRef>,
}

/// Upstream's `deliverytag.Manager` under one mutex (module docs).
pub struct MutexTagManager {
    local_node_id: u64,
    ttl_nanos: i64,
    keys: Arc<dyn TagKeys>,
    state: Mutex<State>,
}

impl std::fmt::Debug for MutexTagManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutexTagManager")
            .field("local_node_id", &self.local_node_id)
            .field("ttl_nanos", &self.ttl_nanos)
            .finish_non_exhaustive()
    }
}

/// The reference a body makes current (upstream's `refFromTag`).
fn ref_of(tag: &TagParts) -> TagRef {
    TagRef {
        channel_key: tag.channel_key.clone(),
        tag_key: tag.key.clone(),
        tag_version: tag.tag_version,
        subscriber_mutation_version: tag.subscriber_mutation_version,
        source_channel_key: tag.source_channel_key.clone(),
        source_subscriber_mutation_version: tag.source_subscriber_mutation_version,
        topology: tag.topology.clone(),
    }
}

/// Upstream's stale rule for a follower store against the current reference.
fn is_stale(current: &TagRef, incoming: &TagParts) -> bool {
    if incoming.subscriber_mutation_version < current.subscriber_mutation_version {
        return true;
    }
    if incoming.source_channel_key == current.source_channel_key
        && incoming.source_subscriber_mutation_version < current.source_subscriber_mutation_version
    {
        return true;
    }
    incoming.key == current.tag_key && incoming.tag_version < current.tag_version
}

/// Steps 3 to 8 of upstream's look-up fence; `None` when every check passes (a hit).
fn fence(current: &TagRef, request: &LookupRequest<'_>) -> Option<LookupReason> {
    use std::cmp::Ordering::{Greater, Less};
    if *current.tag_key != *request.tag_key {
        return Some(LookupReason::TagKeyMismatch);
    }
    match request.tag_version.cmp(&current.tag_version) {
        Less => return Some(LookupReason::StaleRequest),
        Greater => return Some(LookupReason::NewerRequest),
        _ => {}
    }
    if request.subscriber_mutation_version != 0 {
        match request
            .subscriber_mutation_version
            .cmp(&current.subscriber_mutation_version)
        {
            Less => return Some(LookupReason::StaleRequest),
            Greater => return Some(LookupReason::NewerRequest),
            _ => {}
        }
    }
    if !request.source_channel_key.is_empty()
        && *request.source_channel_key != *current.source_channel_key
    {
        return Some(LookupReason::StaleRequest);
    }
    if request.source_subscriber_mutation_version != 0 {
        match request
            .source_subscriber_mutation_version
            .cmp(&current.source_subscriber_mutation_version)
        {
            Less => return Some(LookupReason::StaleRequest),
            Greater => return Some(LookupReason::NewerRequest),
            _ => {}
        }
    }
    // Upstream's `PartitionTopologyVersion.Equal`: table version, length, refs in order.
    let topology = &current.topology;
    if topology.hash_slot_table_version != request.topology.hash_slot_table_version
        || topology.refs.len() != request.topology.refs.len()
        || topology
            .refs
            .iter()
            .zip(request.topology.refs)
            .any(|(a, b)| a != b)
    {
        return Some(LookupReason::TopologyMismatch);
    }
    None
}

impl MutexTagManager {
    /// A manager for `local_node_id` with upstream's default random tag keys; `ttl_nanos ≤ 0`
    /// turns the cleanup off.
    pub fn new(local_node_id: u64, ttl_nanos: i64) -> Self {
        Self::with_keys(local_node_id, ttl_nanos, Arc::new(RandomTagKeys::default()))
    }

    /// A manager whose new tag keys come from `keys` (upstream's `NewTagKey` option).
    pub fn with_keys(local_node_id: u64, ttl_nanos: i64, keys: Arc<dyn TagKeys>) -> Self {
        Self {
            local_node_id,
            ttl_nanos,
            keys,
            state: Mutex::new(State::default()),
        }
    }

    /// The node whose partition a follower store keeps.
    pub fn local_node_id(&self) -> u64 {
        self.local_node_id
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Upstream's `BuildLeaderTag`: reuses the channel's current key and version unless
    /// `mint_fresh_key` is set or there is none, bumping the version iff the subscriber version,
    /// source key, source version or topology changed (partition contents are not compared);
    /// otherwise a new key and version 1. Stores the body under its key and makes it the
    /// channel's reference; a body under a previous key stays until the TTL cleanup.
    pub fn build_leader_tag(&self, request: BuildRequest<'_>, now: i64) -> TagParts {
        let mut state = self.lock();
        let (key, tag_version) = match state.channel_ref.get(request.channel_key) {
            Some(cur) if !request.mint_fresh_key => {
                let changed = cur.subscriber_mutation_version
                    != request.subscriber_mutation_version
                    || *cur.source_channel_key != *request.source_channel_key
                    || cur.source_subscriber_mutation_version
                        != request.source_subscriber_mutation_version
                    || cur.topology != request.topology;
                (cur.tag_key.clone(), cur.tag_version + u64::from(changed))
            }
            _ => (self.keys.next_key(), 1),
        };
        let tag = TagParts {
            key,
            channel_key: request.channel_key.into(),
            tag_version,
            subscriber_mutation_version: request.subscriber_mutation_version,
            source_channel_key: request.source_channel_key.into(),
            source_subscriber_mutation_version: request.source_subscriber_mutation_version,
            topology: request.topology,
            partitions: request.partitions,
            created_at: now,
            last_access: now,
        };
        state
            .channel_ref
            .insert(tag.channel_key.clone(), ref_of(&tag));
        Self::put(&mut state, &tag);
        tag
    }

    /// Upstream's `BuildEphemeralTag`: a body under a new key, version 1, stored by key only
    /// (the channel's reference is not touched).
    pub fn build_ephemeral_tag(&self, request: BuildRequest<'_>, now: i64) -> TagParts {
        let mut state = self.lock();
        let tag = TagParts {
            key: self.keys.next_key(),
            channel_key: request.channel_key.into(),
            tag_version: 1,
            subscriber_mutation_version: request.subscriber_mutation_version,
            source_channel_key: request.source_channel_key.into(),
            source_subscriber_mutation_version: request.source_subscriber_mutation_version,
            topology: request.topology,
            partitions: request.partitions,
            created_at: now,
            last_access: now,
        };
        Self::put(&mut state, &tag);
        tag
    }

    /// Upstream's `StoreFollowerPartition`: refused (with the current body) when the channel
    /// has a reference and `tag` is stale against it; otherwise stores a clone keeping only the
    /// local node's partition (a synthetic empty one if it has none), stamps it, and makes it
    /// the channel's reference.
    pub fn store_follower_partition(&self, tag: &TagParts, now: i64) -> FollowerStore {
        let mut state = self.lock();
        if let Some(cur) = state.channel_ref.get(&tag.channel_key) {
            if is_stale(cur, tag) {
                let current = state.tags.get(&cur.tag_key).map(|s| s.shared().to_parts());
                return FollowerStore {
                    stored: false,
                    tag: current,
                };
            }
        }
        let local = tag
            .partitions
            .iter()
            .find(|p| p.node_id == self.local_node_id)
            .cloned()
            .unwrap_or_else(|| NodePartition::empty(self.local_node_id));
        let stored = TagParts {
            partitions: vec![local],
            created_at: if tag.created_at == 0 {
                now
            } else {
                tag.created_at
            },
            last_access: now,
            ..tag.clone()
        };
        state
            .channel_ref
            .insert(stored.channel_key.clone(), ref_of(&stored));
        Self::put(&mut state, &stored);
        FollowerStore {
            stored: true,
            tag: Some(stored),
        }
    }

    /// Upstream's `LookupLocalPartitionRef`: the fence against `channel_key`'s reference in
    /// upstream's order; a hit writes `now` back as the body's access time. The body returned
    /// is the cached one, shared.
    pub fn lookup_local_partition_ref(
        &self,
        channel_key: &str,
        request: &LookupRequest<'_>,
        now: i64,
    ) -> RefLookup {
        let mut state = self.lock();
        let state = &mut *state;
        let Some(cur) = state.channel_ref.get(channel_key) else {
            return RefLookup {
                reason: LookupReason::MissingRef,
                tag: None,
            };
        };
        let Some(stored) = state.tags.get_mut(&cur.tag_key) else {
            return RefLookup {
                reason: LookupReason::MissingTag,
                tag: None,
            };
        };
        if let Some(miss) = fence(cur, request) {
            return RefLookup {
                reason: miss,
                tag: Some(stored.shared()),
            };
        }
        stored.last_access = now;
        RefLookup {
            reason: LookupReason::Hit,
            tag: Some(stored.shared()),
        }
    }

    /// Upstream's `LookupLocalPartition`: as the `Ref` variant, returning a clone.
    pub fn lookup_local_partition(
        &self,
        channel_key: &str,
        request: &LookupRequest<'_>,
        now: i64,
    ) -> PartitionLookup {
        let found = self.lookup_local_partition_ref(channel_key, request, now);
        PartitionLookup {
            reason: found.reason,
            tag: found.tag.map(|t| t.to_parts()),
        }
    }

    /// Upstream's `LookupTag`: the body stored under `tag_key` (any channel, current or not),
    /// cloned, its access time set to `now`.
    pub fn lookup_tag(&self, tag_key: &str, now: i64) -> Option<TagParts> {
        let mut state = self.lock();
        let stored = state.tags.get_mut(tag_key)?;
        stored.last_access = now;
        Some(stored.shared().to_parts())
    }

    /// Upstream's `CurrentRef`: a clone of `channel_key`'s reference.
    pub fn current_ref(&self, channel_key: &str) -> Option<TagRef> {
        self.lock().channel_ref.get(channel_key).cloned()
    }

    /// Upstream's `IsSourceStale`: false without a reference or with one that records no
    /// source; else true iff it records `source_channel_key` with a lower source version than
    /// `source_version`.
    pub fn is_source_stale(
        &self,
        channel_key: &str,
        source_channel_key: &str,
        source_version: u64,
    ) -> bool {
        let state = self.lock();
        match state.channel_ref.get(channel_key) {
            None => false,
            Some(r) if r.source_channel_key.is_empty() => false,
            Some(r) => {
                *r.source_channel_key == *source_channel_key
                    && r.source_subscriber_mutation_version < source_version
            }
        }
    }

    /// Upstream's `CleanupExpired` at `now`: deletes every body idle for more than the TTL
    /// (strictly), then every reference whose key has no body; the number of bodies deleted.
    pub fn cleanup_expired(&self, now: i64) -> usize {
        self.cleanup_expired_keys(now).len()
    }

    /// As [`MutexTagManager::cleanup_expired`], naming the keys whose bodies it deleted
    /// (sorted).
    pub fn cleanup_expired_keys(&self, now: i64) -> Vec<Box<str>> {
        if self.ttl_nanos <= 0 {
            return Vec::new();
        }
        let mut state = self.lock();
        let ttl = self.ttl_nanos;
        let mut removed: Vec<Box<str>> = state
            .tags
            .iter()
            .filter(|(_, s)| now.saturating_sub(s.last_access) > ttl)
            .map(|(k, _)| k.clone())
            .collect();
        removed.sort();
        for key in &removed {
            state.tags.remove(key);
        }
        let State { tags, channel_ref } = &mut *state;
        channel_ref.retain(|_, r| tags.contains_key(&r.tag_key));
        removed
    }

    /// Bodies in `tags` (inspection; not upstream's).
    pub fn bodies(&self) -> usize {
        self.lock().tags.len()
    }

    /// References in `channel_ref` (inspection; not upstream's).
    pub fn channels(&self) -> usize {
        self.lock().channel_ref.len()
    }

    /// Every key in `tags`, sorted (inspection; not upstream's).
    pub fn keys(&self) -> Vec<Box<str>> {
        let mut keys: Vec<Box<str>> = self.lock().tags.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// The body under `tag_key` without touching its access time (inspection; not upstream's).
    pub fn peek_tag(&self, tag_key: &str) -> Option<TagParts> {
        self.lock().tags.get(tag_key).map(|s| s.shared().to_parts())
    }

    fn put(state: &mut State, tag: &TagParts) {
        let last_access = tag.last_access;
        let body = Arc::new(TagParts {
            last_access: 0,
            ..tag.clone()
        });
        state
            .tags
            .insert(tag.key.clone(), Stored { body, last_access });
    }
}
