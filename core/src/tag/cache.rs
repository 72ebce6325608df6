//! [`PartitionCache`]: the follower's cache of its own partition of each channel's current tag.
//!
//! # Shape
//!
//! Each channel has a `ChannelCell` holding one immutable snapshot, an `Arc<DeliveryTag>`
//! that is both the channel's reference (key, versions, source, topology) and its body (the
//! local partition). A store replaces the snapshot with one compare-and-swap, and only when the
//! incoming tag is not stale by upstream's rule against the snapshot it replaces; a loser
//! re-reads and re-judges. So an older store never evicts a newer tag, whatever the order, and a
//! reader sees a whole snapshot, never the reference of one with the body of another.
//!
//! Cells live in a read-mostly index (channel key → cell) that changes only when a channel is
//! first stored and when the cleanup unlinks it; a [`ChannelHandle`] holds its cell and skips
//! the index. A hit loads the snapshot (no reference-count write), runs the fence, and marks the
//! body with the current cleanup tick (a store only when the tick moved): no lock, no allocation,
//! no shared write per hit.
//!
//! # Reclamation
//!
//! [`PartitionCache::cleanup_expired`] visits a bounded page of cells. A cell whose body is
//! idle past the TTL (by the bound of `reclaim::Ticks`), or which never held one, is retired:
//! one CAS replaces its snapshot with the cache's *retired* marker, then the cell is unlinked
//! from the index. A store that meets the marker unlinks the cell if it is still linked and
//! retries through the index, which makes a new cell; a handle that meets it answers through
//! the index. The CAS is the only decision, so a store racing the cleanup either lands before
//! it (and the cleanup's CAS fails: nothing is reclaimed) or after it (in a new cell).
//!
//! # Orderings
//!
//! A snapshot is published by the `HazardCell`'s `Release` CAS and read by its `Acquire` load
//! (`hazard`), which together order everything written into the body before the swap before
//! any read of it; a replaced body is freed only once no reader holds it. Every swap (a store's,
//! the cleanup's retire) is bracketed on the cell's generation word, for hosts that run the hit
//! inline (`hot`, whose docs give those orderings). Counters and access marks are `Relaxed`
//! (`metrics`, `DeliveryTag`).

use std::sync::Arc;

use super::fence::{fence, is_stale_store, LookupReason, LookupRequest, StoreVersions};
use super::hot::{ChannelGeneration, HostChannelWords};
use super::metrics::{self, StoreResult, TagCounts, TagStats};
use super::reclaim::{expired, Roster, Ticks};
use super::types::{DeliveryTag, NodePartition, TagParts, TagRef};
use crate::clock::Clock;
use crate::hazard::{HazardCell, HazardGuard};
use crate::metrics::Registry;
use crate::sync::{Mutex, ReadMap};

/// The largest page a cleanup visits.
pub const CLEANUP_LIMIT_MAX: usize = 4096;

/// How a [`PartitionCache`] is set up.
#[derive(Clone)]
pub struct CacheOptions {
    /// The node this cache serves: the only partition it keeps.
    pub local_node_id: u64,
    /// How long a body may stay idle, in the clock's nanoseconds (0: never reclaimed, as
    /// upstream's `ttl ≤ 0`). Production: one minute.
    pub ttl_nanos: u64,
    /// Unix-nanosecond time for creation and access stamps.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for CacheOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheOptions")
            .field("local_node_id", &self.local_node_id)
            .field("ttl_nanos", &self.ttl_nanos)
            .finish_non_exhaustive()
    }
}

/// One channel's place in the cache.
pub(crate) struct ChannelCell {
    pub(crate) channel_key: Box<str>,
    pub(crate) current: HazardCell<DeliveryTag>,
    /// Counts the swaps of `current` (`hot`): what a host's inline hit checks.
    pub(crate) generation: ChannelGeneration,
}

pub(crate) struct CacheCore {
    pub(crate) options: CacheOptions,
    channels: ReadMap<Box<str>, Arc<ChannelCell>>,
    roster: Roster<Arc<ChannelCell>>,
    ticks: Ticks,
    retired: Arc<DeliveryTag>,
    cleaning: Mutex<()>,
    pub(crate) stats: Arc<TagStats>,
}

/// The follower's partition cache (module docs).
#[derive(Clone)]
pub struct PartitionCache {
    core: Arc<CacheCore>,
}

/// A channel's cell, held: look-ups and stores without the index.
#[derive(Clone)]
pub struct ChannelHandle {
    core: Arc<CacheCore>,
    cell: Arc<ChannelCell>,
}

/// What a look-up found: the reason, and the current body on a hit and on every miss from the
/// key check on (upstream's callers adopt it on `stale_request` and `tag_key_mismatch`).
///
/// The body is held without a reference-count write; [`Lookup::into_tag`] takes an owned one.
pub struct Lookup {
    reason: LookupReason,
    tag: Option<HazardGuard<DeliveryTag>>,
}

impl Lookup {
    pub(crate) fn new(reason: LookupReason, current: Option<HazardGuard<DeliveryTag>>) -> Self {
        Self {
            reason,
            tag: if reason == LookupReason::MissingRef {
                None
            } else {
                current
            },
        }
    }

    /// Why it hit or missed.
    #[inline]
    pub fn reason(&self) -> LookupReason {
        self.reason
    }
    /// True on a hit.
    #[inline]
    pub fn is_hit(&self) -> bool {
        self.reason == LookupReason::Hit
    }
    /// The current body, if the look-up returns one.
    #[inline]
    pub fn tag(&self) -> Option<&DeliveryTag> {
        self.tag.as_ref().and_then(|g| g.as_deref())
    }
    /// The current body, owned.
    pub fn into_tag(self) -> Option<Arc<DeliveryTag>> {
        self.tag.and_then(HazardGuard::into_inner)
    }
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lookup")
            .field("reason", &self.reason)
            .field("tag", &self.tag())
            .finish()
    }
}

/// What a store did.
#[derive(Clone, Debug)]
pub enum StoreOutcome {
    /// Stored; the body as cached (the local partition only).
    Stored(Arc<DeliveryTag>),
    /// Refused as stale; the current body, which stays.
    Stale(Arc<DeliveryTag>),
}

impl StoreOutcome {
    /// True when stored.
    pub fn is_stored(&self) -> bool {
        matches!(self, StoreOutcome::Stored(_))
    }
    /// The stored or the current body.
    pub fn tag(&self) -> &Arc<DeliveryTag> {
        match self {
            StoreOutcome::Stored(t) | StoreOutcome::Stale(t) => t,
        }
    }
}

/// What one cleanup page did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CleanupPage {
    /// Channels visited.
    pub visited: usize,
    /// Bodies reclaimed (upstream's return value).
    pub reclaimed: usize,
    /// Channel references unlinked (reclaimed bodies, and channels that never held one).
    pub unlinked: usize,
    /// The page finished a pass over every channel.
    pub wrapped: bool,
}

impl PartitionCache {
    /// An empty cache, counting in the global metrics registry.
    pub fn new(options: CacheOptions) -> Self {
        Self::with_metrics(options, crate::metrics::global())
    }

    /// An empty cache counting in `registry`.
    pub fn with_metrics(options: CacheOptions, registry: &Registry) -> Self {
        let stats = Arc::new(TagStats::new());
        metrics::register(registry, &stats);
        Self {
            core: Arc::new(CacheCore {
                options,
                channels: ReadMap::new(),
                roster: Roster::new(),
                ticks: Ticks::new(),
                retired: Arc::new(DeliveryTag::from_parts(TagParts::default())),
                cleaning: Mutex::new(()),
                stats,
            }),
        }
    }

    /// The node whose partition it keeps.
    pub fn local_node_id(&self) -> u64 {
        self.core.options.local_node_id
    }

    /// A handle on `channel_key`'s cell (made if the channel has none yet).
    pub fn handle(&self, channel_key: &str) -> ChannelHandle {
        ChannelHandle {
            core: self.core.clone(),
            cell: self.core.cell(channel_key),
        }
    }

    /// Upstream's `StoreFollowerPartition`: stores `tag`'s local partition (an empty one if it
    /// has none) unless it is stale against the current tag (module docs).
    pub fn store(&self, tag: &TagParts) -> StoreOutcome {
        self.core.store(None, tag)
    }

    /// Upstream's `LookupLocalPartitionRef`: the fence, through the index.
    #[inline]
    pub fn lookup(&self, channel_key: &str, request: &LookupRequest<'_>) -> Lookup {
        let current = self.core.channels.with(channel_key, |c| c.current.load());
        self.core.finish_lookup(current, request)
    }

    /// The look-up a host that runs hits inline falls back to (`hot`): the fence through the
    /// index, without making a cell for an unknown channel, and with it the channel's cell and,
    /// when the body and a generation belong together, that generation.
    pub fn lookup_hosted(&self, channel_key: &str, request: &LookupRequest<'_>) -> HostedLookup {
        let Some(cell) = self.core.channels.get(channel_key) else {
            self.core.stats.lookup(LookupReason::MissingRef);
            return HostedLookup {
                lookup: Lookup::new(LookupReason::MissingRef, None),
                channel: None,
                generation: None,
            };
        };
        let first = cell.generation.load();
        let current = cell.current.load();
        let generation = cell.generation.stable(first);
        let retired = self.core.is_retired(&current);
        let lookup = self.core.finish_lookup(Some(current), request);
        HostedLookup {
            lookup,
            channel: (!retired).then(|| ChannelHandle {
                core: self.core.clone(),
                cell,
            }),
            generation: generation.filter(|_| !retired),
        }
    }

    /// Upstream's `LookupTag`: the body cached under `tag_key` for `channel_key` (bodies are
    /// keyed by channel here; a follower holds only the current incarnation). Refreshes its
    /// access time exactly.
    pub fn lookup_tag(&self, channel_key: &str, tag_key: &str) -> Option<Arc<DeliveryTag>> {
        let tag = self.current(channel_key)?;
        if *tag.key != *tag_key {
            return None;
        }
        tag.touch_exact(self.core.now());
        Some(tag)
    }

    /// The current body of `channel_key`.
    pub fn current(&self, channel_key: &str) -> Option<Arc<DeliveryTag>> {
        let guard = self.core.channels.with(channel_key, |c| c.current.load())?;
        self.core.live(guard)
    }

    /// Upstream's `CurrentRef`.
    pub fn current_ref(&self, channel_key: &str) -> Option<TagRef> {
        self.current(channel_key).map(|t| t.tag_ref())
    }

    /// Upstream's `IsSourceStale`: true when the current tag records `source_channel_key` with a
    /// lower source version than `source_version`.
    pub fn is_source_stale(
        &self,
        channel_key: &str,
        source_channel_key: &str,
        source_version: u64,
    ) -> bool {
        self.current(channel_key)
            .is_some_and(|t| source_is_stale(&t, source_channel_key, source_version))
    }

    /// Reclaims up to `limit` (at most [`CLEANUP_LIMIT_MAX`]) channels' cold bodies and
    /// dangling references, at `now` in the clock's nanoseconds (module docs). Meant for a host
    /// timer; with a TTL of 0 it reclaims nothing. Either way it frees the replaced bodies no
    /// reader holds any more (`docs/TAG.md`, "Freeing replaced bodies").
    pub fn cleanup_expired(&self, now: i64, limit: usize) -> CleanupPage {
        let page = self.core.cleanup(now, limit.min(CLEANUP_LIMIT_MAX));
        crate::hazard::reclaim_retired();
        page
    }

    /// Channels with a cell (a moment's view).
    pub fn channels(&self) -> usize {
        self.core.channels.len()
    }

    /// This cache's counts.
    pub fn counts(&self) -> TagCounts {
        self.core.stats.counts()
    }
}

impl Drop for CacheCore {
    fn drop(&mut self) {
        self.stats.retire();
    }
}

/// Upstream's source-staleness rule on one tag.
pub(crate) fn source_is_stale(tag: &DeliveryTag, source_key: &str, source_version: u64) -> bool {
    !tag.source_channel_key.is_empty()
        && *tag.source_channel_key == *source_key
        && tag.source_subscriber_mutation_version < source_version
}

/// What [`PartitionCache::lookup_hosted`] found (`hot`).
pub struct HostedLookup {
    /// The look-up, as [`PartitionCache::lookup`] answers it.
    pub lookup: Lookup,
    /// The channel's cell, when it has a live one.
    pub channel: Option<ChannelHandle>,
    /// The generation the look-up's body belongs to, when it could be read with it (no swap in
    /// flight); a host may then hit on that body inline while the cell's word holds it.
    pub generation: Option<u64>,
}

impl std::fmt::Debug for HostedLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedLookup")
            .field("lookup", &self.lookup)
            .field("channel", &self.channel.as_ref().map(|c| c.channel_key()))
            .field("generation", &self.generation)
            .finish()
    }
}

impl ChannelHandle {
    /// The words a host that runs hits inline uses (`hot`), valid while this handle is.
    pub fn host_words(&self) -> HostChannelWords<'_> {
        HostChannelWords {
            generation: self.cell.generation.host(),
            tick: self.core.ticks.host(),
            hit_rows: self.core.stats.host_rows(),
        }
    }

    /// True when both handles are on the same cell.
    pub fn same_cell(&self, other: &ChannelHandle) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }

    /// The channel.
    pub fn channel_key(&self) -> &str {
        &self.cell.channel_key
    }

    /// The fence, on this channel's cell.
    #[inline]
    pub fn lookup(&self, request: &LookupRequest<'_>) -> Lookup {
        let current = self.cell.current.load();
        let reason = match current.as_deref() {
            Some(tag) if std::ptr::eq(tag, &*self.core.retired) => {
                return self.slow_lookup(request)
            }
            Some(tag) => self.core.fence_live(tag, request),
            None => {
                self.core.stats.lookup(LookupReason::MissingRef);
                return Lookup::new(LookupReason::MissingRef, None);
            }
        };
        // A live body's look-up is never `MissingRef`: it keeps the body.
        Lookup {
            reason,
            tag: Some(current),
        }
    }

    #[cold]
    fn slow_lookup(&self, request: &LookupRequest<'_>) -> Lookup {
        let current = self
            .core
            .channels
            .with(&*self.cell.channel_key, |c| c.current.load());
        self.core.finish_lookup(current, request)
    }

    /// As [`PartitionCache::store`], for this channel (`tag.channel_key` is ignored).
    pub fn store(&self, tag: &TagParts) -> StoreOutcome {
        self.core.store(Some(&self.cell), tag)
    }

    /// The current body.
    pub fn current(&self) -> Option<Arc<DeliveryTag>> {
        let current = self.cell.current.load();
        if current
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, &self.core.retired))
        {
            return PartitionCache {
                core: self.core.clone(),
            }
            .current(&self.cell.channel_key);
        }
        current.into_inner()
    }
}

impl CacheCore {
    fn now(&self) -> i64 {
        self.options.clock.now_nanos() as i64
    }

    fn is_retired(&self, guard: &HazardGuard<DeliveryTag>) -> bool {
        guard
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, &self.retired))
    }

    fn live(&self, guard: HazardGuard<DeliveryTag>) -> Option<Arc<DeliveryTag>> {
        if self.is_retired(&guard) {
            None
        } else {
            guard.into_inner()
        }
    }

    #[inline]
    fn finish_lookup(
        &self,
        current: Option<HazardGuard<DeliveryTag>>,
        request: &LookupRequest<'_>,
    ) -> Lookup {
        let live = match current.as_ref().and_then(|g| g.as_deref()) {
            Some(tag) if !std::ptr::eq(tag, &*self.retired) => Some(self.fence_live(tag, request)),
            _ => None,
        };
        match live {
            // A live body's look-up is never `MissingRef`: it keeps the body.
            Some(reason) => Lookup {
                reason,
                tag: current,
            },
            None => {
                self.stats.lookup(LookupReason::MissingRef);
                Lookup::new(LookupReason::MissingRef, None)
            }
        }
    }

    /// The fence on a live (not retired) body, its hit mark and its count: a look-up's whole
    /// answer but the body itself (never `MissingRef`).
    #[inline]
    fn fence_live(&self, tag: &DeliveryTag, request: &LookupRequest<'_>) -> LookupReason {
        let reason = fence(tag, request);
        debug_assert_ne!(reason, LookupReason::MissingRef, "the fence has a body");
        if reason == LookupReason::Hit {
            tag.touch_epoch(self.ticks.current());
        }
        self.stats.lookup(reason);
        reason
    }

    /// The channel's linked cell, made and linked (and put on the roster) if it has none.
    fn cell(&self, channel_key: &str) -> Arc<ChannelCell> {
        if let Some(cell) = self.channels.get(channel_key) {
            return cell;
        }
        let mine = Arc::new(ChannelCell {
            channel_key: channel_key.into(),
            current: HazardCell::new(None),
            generation: ChannelGeneration::new(),
        });
        let winner = self
            .channels
            .get_or_insert_with(channel_key.into(), || mine.clone());
        if Arc::ptr_eq(&winner, &mine) {
            self.roster.add(mine);
        }
        winner
    }

    fn store(&self, held: Option<&Arc<ChannelCell>>, tag: &TagParts) -> StoreOutcome {
        let now = self.now();
        let local = self.options.local_node_id;
        let partition = tag
            .partitions
            .iter()
            .find(|p| p.node_id == local)
            .cloned()
            .unwrap_or_else(|| NodePartition::empty(local));
        let channel_key: &str = match held {
            Some(cell) => &cell.channel_key,
            None => &tag.channel_key,
        };
        let uids = partition.uids.len() as i64;
        let body = Arc::new(DeliveryTag {
            key: tag.key.clone(),
            channel_key: channel_key.into(),
            tag_version: tag.tag_version,
            subscriber_mutation_version: tag.subscriber_mutation_version,
            source_channel_key: tag.source_channel_key.clone(),
            source_subscriber_mutation_version: tag.source_subscriber_mutation_version,
            topology: tag.topology.clone(),
            partitions: vec![partition].into_boxed_slice(),
            created_at: if tag.created_at == 0 {
                now
            } else {
                tag.created_at
            },
            last_access: crate::sync::AtomicU64::new(now as u64),
            touched: crate::sync::AtomicU64::new(0),
        });
        let mut cell = match held {
            Some(cell) => cell.clone(),
            None => self.cell(channel_key),
        };
        loop {
            let current = cell.current.load();
            if self.is_retired(&current) {
                // Reclaimed under us: help unlink it, then go through the index to a new cell.
                self.channels
                    .remove_if(channel_key, |c| Arc::ptr_eq(c, &cell));
                cell = self.cell(channel_key);
                continue;
            }
            if let Some(cur) = &*current {
                if is_stale_store(StoreVersions::of(cur), StoreVersions::of(&body)) {
                    self.stats.store(StoreResult::Stale);
                    return StoreOutcome::Stale(cur.clone());
                }
            }
            cell.generation.begin();
            let swapped = cell.current.compare_and_swap(&current, Some(body.clone()));
            cell.generation.end(swapped.is_ok(), false);
            match swapped {
                Ok(()) => {
                    let (tags, old_uids) = match &*current {
                        Some(old) => (0, old.uid_count() as i64),
                        None => (1, 0),
                    };
                    self.stats.hold(tags, uids - old_uids);
                    self.stats.store(StoreResult::Stored);
                    return StoreOutcome::Stored(body);
                }
                Err(_) => continue,
            }
        }
    }

    fn cleanup(&self, now: i64, limit: usize) -> CleanupPage {
        let ttl = self.options.ttl_nanos;
        let mut page = CleanupPage::default();
        if ttl == 0 || limit == 0 {
            return page;
        }
        let _one_cleaner = self.cleaning.lock();
        self.ticks.advance(now, ttl);
        let (cells, wrapped) = self.roster.page(limit);
        page.wrapped = wrapped;
        for (slot, cell) in cells {
            page.visited += 1;
            let current = cell.current.load();
            let reclaim_body = match &*current {
                None => false,
                Some(t) if Arc::ptr_eq(t, &self.retired) => false,
                Some(t) => {
                    let hit = self.ticks.hit_bound(t.touched_epoch());
                    match hit {
                        None => continue,
                        Some(hit) => {
                            if !expired(now, t.last_access().max(hit), ttl) {
                                continue;
                            }
                        }
                    }
                    true
                }
            };
            if !self.is_retired(&current) {
                cell.generation.begin();
                let swapped = cell
                    .current
                    .compare_and_swap(&current, Some(self.retired.clone()))
                    .is_ok();
                cell.generation.end(swapped, true);
                if !swapped {
                    // A store got there first: the channel is live again.
                    continue;
                }
                if reclaim_body {
                    if let Some(old) = &*current {
                        page.reclaimed += 1;
                        self.stats.hold(-1, -(old.uid_count() as i64));
                    }
                }
            }
            self.channels
                .remove_if(&*cell.channel_key, |c| Arc::ptr_eq(c, &cell));
            self.roster.remove(slot);
            page.unlinked += 1;
        }
        self.stats
            .reclaimed(page.reclaimed as u64, page.unlinked as u64);
        page
    }
}
