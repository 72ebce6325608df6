//! The follower hit as a host runs it inline (the futex shape): the words a host reads and
//! writes with its own atomics, their layout, and the generation protocol that tells a host
//! whether the snapshot it holds is still its channel's current one.
//!
//! # The words
//!
//! - Each channel cell has a **generation word** (`ChannelGeneration`): the low
//!   [`host_layout::GEN_WRITERS_BITS`] bits count the swaps of the cell's snapshot in flight, the
//!   bits above them (to bit 62) count the swaps done, and [`host_layout::GEN_RETIRED`] is set
//!   by the cleanup that retires the cell (then never cleared). It lives in the cell, alive while
//!   any handle of the cell is.
//! - Each body has its **hit mark** (`DeliveryTag::touched`, the cleanup tick of its latest hit)
//!   and its exact access time, alive while any holder of the body is (a view).
//! - Each cache has its **tick** word (the current cleanup tick) and the **host's hit rows**:
//!   [`host_layout::HIT_ROWS`] cache-padded rows of [`host_layout::HIT_ROW_COUNTERS`] counters,
//!   one per look-up reason (in `LookupReason` code order), that the cache's counts and metrics
//!   add to its own.
//!
//! # The protocol
//!
//! A store or cleanup that swaps a cell's snapshot brackets its compare-and-swap: it adds 1 to
//! the word before (`ChannelGeneration::begin`) and, after, either takes the 1 back (the CAS
//! failed) or adds one swap and takes the 1 back in a single add (`ChannelGeneration::end`;
//! the retiring cleanup also sets the retired bit). A snapshot and a generation belong together
//! when a reader loads the word (no swap in flight, not retired), then the snapshot, then the
//! word again, and both loads agree (`ChannelGeneration::stable`): `PartitionCache::
//! lookup_hosted` does this and hands the host the body, a view of it and that generation.
//!
//! The host's hit, with the body and generation it holds: load the word; if it equals the held
//! generation, no swap has started since the pair was read nor is one in flight, so the held body
//! is still the cell's current snapshot at that load, which is the hit's linearization point.
//! Run the fence on the held body's fields (`fence::fence`, the same steps), mark a hit as the
//! library does (`DeliveryTag::touch_epoch` with the cache's tick: one load of the tick, one of
//! the mark, and a compare-and-swap that raises the mark only when it is older than the tick —
//! never a plain store, which could move a newer mark back), and add 1 to the host's hit row of
//! the reason.
//! Any other word value (a swap in flight, another generation, retired) sends the host to the
//! library (`lookup_hosted`), which answers from the cell's current snapshot.
//!
//! Reclamation is unchanged: the host holds a view of its body, so a cleanup that reclaims the
//! body only drops the cache's reference, never the memory the host reads; and a hit ordered
//! before a cleanup marks the body in the tick the cleanup ends, which keeps it (`reclaim`).
//!
//! # Orderings
//!
//! `begin` is `Relaxed`: the swap it brackets is a release (arc-swap's CAS is `SeqCst`; loom's
//! stand-in is a mutex), so a reader that acquires the new snapshot also sees the `begin`, and
//! its second load of the word cannot read a value from before it (write-read coherence).
//! `end` is `Release`, paired with the `Acquire` first load of a reader: a reader that sees the
//! swap counted sees the swapped snapshot. A failed CAS's `end` publishes nothing (`Relaxed`).
//! The second load is `Relaxed` (ordered after the acquiring snapshot load by coherence, as
//! above). A host's load of the word must be at least `Acquire`; Go's atomics are sequentially
//! consistent.
//!
//! Limits: at most `2^16 - 1` swaps of one cell in flight at once (one per thread in a store or
//! cleanup), and `2^47` swaps of one cell before the count reaches the retired bit.

use crate::sync::{AtomicU64, HostU64, Ordering};

/// The layout a host builds against: the C ABI publishes each constant (`WK_TAG_HOT_*`,
/// `WK_TAG_GEN_*`), and a host checks [`host_layout::VERSION`] at start.
pub mod host_layout {
    /// The version of this layout and protocol; a host built for another refuses to start.
    pub const VERSION: u32 = 1;
    /// Width of the generation word's count of swaps in flight (its low bits).
    pub const GEN_WRITERS_BITS: u32 = 16;
    /// Mask of the swaps in flight.
    pub const GEN_WRITERS_MASK: u64 = (1 << GEN_WRITERS_BITS) - 1;
    /// One swap done, in the generation word.
    pub const GEN_VERSION_ONE: u64 = 1 << GEN_WRITERS_BITS;
    /// Set by the cleanup that retires the cell; never cleared.
    pub const GEN_RETIRED: u64 = 1 << 63;
    /// Rows of the host's hit counters per cache.
    pub const HIT_ROWS: usize = 32;
    /// Counters in a host row: one per look-up reason, by code, and one unused.
    pub const HIT_ROW_COUNTERS: usize = 8;
}

use host_layout::{GEN_RETIRED, GEN_VERSION_ONE, GEN_WRITERS_MASK};

/// A channel cell's generation word (module docs).
#[derive(Debug, Default)]
pub(crate) struct ChannelGeneration(AtomicU64);

impl ChannelGeneration {
    pub(crate) fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Before a CAS of the cell's snapshot.
    #[inline]
    pub(crate) fn begin(&self) {
        // Ordering: Relaxed; the CAS that follows is a release that carries it (module docs).
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// After that CAS: `swapped` when it replaced the snapshot, `retired` when the snapshot is
    /// now the cache's retired marker.
    #[inline]
    pub(crate) fn end(&self, swapped: bool, retired: bool) {
        if !swapped {
            // Ordering: Relaxed; nothing changed, nothing to publish.
            self.0.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let add = (GEN_VERSION_ONE - 1).wrapping_add(if retired { GEN_RETIRED } else { 0 });
        // Ordering: Release; pairs with the Acquire first load in `load` (and a host's load).
        self.0.fetch_add(add, Ordering::Release);
    }

    /// The first load of a consistent read.
    #[inline]
    pub(crate) fn load(&self) -> u64 {
        // Ordering: Acquire; pairs with the Release in `end`: the snapshot loaded next is the
        // swap's or a later one.
        self.0.load(Ordering::Acquire)
    }

    /// The second load of a consistent read: `first` if the snapshot loaded between the two
    /// belongs to it (no swap in flight, not retired, unchanged), else `None`.
    #[inline]
    pub(crate) fn stable(&self, first: u64) -> Option<u64> {
        // Ordering: Relaxed; after the snapshot's acquiring load, coherence keeps it from reading
        // a value older than a `begin` whose swap that load saw (module docs).
        let second = self.0.load(Ordering::Relaxed);
        (second == first && first & (GEN_WRITERS_MASK | GEN_RETIRED) == 0).then_some(first)
    }

    /// The word, as the host's atomic type.
    pub(crate) fn host(&self) -> &HostU64 {
        crate::sync::host_u64(&self.0)
    }
}

/// True when the generation word `word` says its cell was retired.
pub fn generation_retired(word: u64) -> bool {
    word & GEN_RETIRED != 0
}

/// The words of one cached channel that a host reads and writes inline (module docs): the
/// cell's generation word, the cache's tick and the host's hit rows. Valid while the
/// [`ChannelHandle`](super::ChannelHandle) they came from is.
#[derive(Clone, Copy)]
pub struct HostChannelWords<'a> {
    /// The cell's generation word.
    pub generation: &'a HostU64,
    /// The cache's current cleanup tick.
    pub tick: &'a HostU64,
    /// The host's hit rows: [`host_layout::HIT_ROWS`] rows of [`host_layout::HIT_ROW_COUNTERS`].
    pub hit_rows: &'a [crossbeam_utils::CachePadded<[HostU64; host_layout::HIT_ROW_COUNTERS]>],
}

impl std::fmt::Debug for HostChannelWords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostChannelWords")
            // Ordering: Relaxed; a debug print.
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The marks of one body that a host writes inline: the cleanup tick of its latest hit, and its
/// exact access time (read only). Valid while a holder of the body is.
#[derive(Clone, Copy)]
pub struct HostBodyMarks<'a> {
    /// The cleanup tick of the latest hit (0: never hit).
    pub touched: &'a HostU64,
    /// The latest exact access, unix nanoseconds.
    pub last_access: &'a HostU64,
}

impl std::fmt::Debug for HostBodyMarks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBodyMarks").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use std::sync::Arc;

    use super::host_layout::*;
    use super::*;
    use crate::clock::ManualClock;
    use crate::metrics::Registry;
    use crate::tag::{
        CacheOptions, LookupReason, LookupRequest, NodePartition, PartitionCache, TagParts,
    };

    fn cache() -> (PartitionCache, Registry) {
        let registry = Registry::new();
        let cache = PartitionCache::with_metrics(
            CacheOptions {
                local_node_id: 2,
                ttl_nanos: 100,
                clock: Arc::new(ManualClock::new(1_000)),
            },
            &registry,
        );
        (cache, registry)
    }

    fn tag(key: &str, version: u64, smv: u64) -> TagParts {
        TagParts {
            key: key.into(),
            channel_key: "group:g".into(),
            tag_version: version,
            subscriber_mutation_version: smv,
            partitions: vec![NodePartition::new(2, ["u1"]).unwrap()],
            ..TagParts::default()
        }
    }

    fn request(t: &TagParts) -> LookupRequest<'_> {
        LookupRequest {
            tag_key: &t.key,
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            ..LookupRequest::default()
        }
    }

    fn word(w: &HostChannelWords<'_>) -> u64 {
        w.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn an_unknown_channel_gets_no_cell() {
        let (c, _r) = cache();
        let t = tag("a", 1, 1);
        let h = c.lookup_hosted("group:g", &request(&t));
        assert_eq!(h.lookup.reason(), LookupReason::MissingRef);
        assert!(h.channel.is_none() && h.generation.is_none());
        assert_eq!(c.channels(), 0);
    }

    #[test]
    fn the_generation_counts_swaps_and_pairs_with_its_body() {
        let (c, _r) = cache();
        let t1 = tag("a", 1, 1);
        assert!(c.store(&t1).is_stored());
        let h = c.lookup_hosted("group:g", &request(&t1));
        assert!(h.lookup.is_hit());
        let g1 = h.generation.expect("stable");
        let ch = h.channel.expect("a cell");
        let words = ch.host_words();
        assert_eq!(word(&words), g1);
        assert_eq!(g1, GEN_VERSION_ONE);
        // A refused store swaps nothing.
        assert!(!c.store(&tag("a", 1, 0)).is_stored());
        assert_eq!(word(&words), g1);
        // A stored one moves the word; the new pair says so.
        let t2 = tag("a", 2, 2);
        assert!(c.store(&t2).is_stored());
        assert_eq!(word(&words), g1 + GEN_VERSION_ONE);
        let h2 = c.lookup_hosted("group:g", &request(&t1));
        assert_eq!(h2.lookup.reason(), LookupReason::StaleRequest);
        assert_eq!(h2.generation, Some(g1 + GEN_VERSION_ONE));
        assert!(h2.channel.expect("a cell").same_cell(&ch));
        assert_eq!(h2.lookup.tag().unwrap().tag_version(), 2);
    }

    #[test]
    fn the_retiring_cleanup_sets_the_retired_bit() {
        let (c, _r) = cache();
        let t = tag("a", 1, 1);
        assert!(c.store(&t).is_stored());
        // A miss (a hit would mark the running tick, which keeps the body).
        let ch = c
            .lookup_hosted("group:g", &request(&tag("b", 1, 1)))
            .channel
            .unwrap();
        let words = ch.host_words();
        let page = c.cleanup_expired(1_000 + 101, 16);
        assert_eq!(page.reclaimed, 1);
        let w = word(&words);
        assert!(generation_retired(w));
        assert_eq!(w & GEN_WRITERS_MASK, 0);
        // Retired: no cell is handed out, and no generation.
        let h = c.lookup_hosted("group:g", &request(&t));
        assert_eq!(h.lookup.reason(), LookupReason::MissingRef);
        assert!(h.channel.is_none() && h.generation.is_none());
    }

    #[test]
    fn host_rows_count_in_the_counts() {
        let (c, _r) = cache();
        let t = tag("a", 1, 1);
        assert!(c.store(&t).is_stored());
        let ch = c.handle("group:g");
        let words = ch.host_words();
        assert_eq!(words.hit_rows.len(), HIT_ROWS);
        words.hit_rows[3][LookupReason::Hit as usize]
            .fetch_add(5, std::sync::atomic::Ordering::Relaxed);
        words.hit_rows[0][LookupReason::StaleRequest as usize]
            .fetch_add(2, std::sync::atomic::Ordering::Relaxed);
        let counts = c.counts();
        assert_eq!(counts.lookups(LookupReason::Hit), 5);
        assert_eq!(counts.lookups(LookupReason::StaleRequest), 2);
    }

    #[test]
    fn a_host_mark_is_the_library_mark() {
        let (c, _r) = cache();
        let t = tag("a", 1, 1);
        let body = c.store(&t).tag().clone();
        let marks = body.host_marks();
        marks.touched.store(7, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(body.touched_epoch(), 7);
        assert_eq!(
            marks.last_access.load(std::sync::atomic::Ordering::Relaxed) as i64,
            body.last_access()
        );
    }
}
