//! Model-based test of `wkcore::tag`: random call sequences give the same results on a node's
//! [`TagLeader`] and [`PartitionCache`] (one of each, as `tag_upstream.rs`'s `Node`) and on
//! upstream's manager under one mutex (`wkcore_references::tag::MutexTagManager`). Upstream's
//! single manager serves both roles; here each role has a reference of its own, so a follower
//! store never changes what a leader build reuses (as on the core's side, where they are two
//! structures).
//!
//! Calls: leader builds (the bump rule with and without `mint_fresh_key`), ephemeral builds,
//! follower stores of random tags (versions, keys, sources, topologies, partitions with and
//! without the local node, created-at set or not; through the cache and through a held
//! [`ChannelHandle`]) and of tags the leader built, look-ups of both roles from the current
//! reference, a past tag or an unknown key with one fence field perturbed (through the index and
//! through the handle; the reference's `Ref` and cloning variants), `lookup_tag`,
//! `is_source_stale`, clock moves and paged cleanups. After every call: reasons and returned
//! bodies (key, versions, source, topology, partitions, created-at; access times where both sides
//! write the exact time), every channel's current reference on both roles, the cached counts
//! (bodies, UIDs, cells) and the counters.
//!
//! # The core's documented differences, and how they are compared
//!
//! 1. The follower cache keys bodies by channel and keeps only the current incarnation: a
//!    `lookup_tag` of a replaced key misses on the core while upstream keeps that body until its
//!    TTL. Modelled: for a key that is not the channel's current one the core must miss; for the
//!    current key both sides must agree exactly. The follower's reclamation is compared on
//!    current bodies only (a reference drops with its body, so the references agree).
//! 2. A hit marks its body with the cleanup tick, not the clock: the bound of its last access is
//!    the end of the tick it was hit in (the next cleanup's `now`). The model predicts that rule
//!    exactly and checks, at every cleanup: the core reclaims exactly the predicted bodies; each
//!    of them upstream's exact rule would reclaim too (never earlier); each body upstream would
//!    reclaim but the core keeps was hit in a tick that ended within the TTL (at most one tick
//!    later), and it is gone at the first cleanup more than a TTL after that tick's end unless it
//!    was used again. To keep comparing after such a body survives, the references are run with
//!    the tick rule too: at each tick end the model touches every body hit in that tick at the
//!    tick's end (upstream's `LookupTag`, which writes the access time back), so the references
//!    then hold the core's bound.
//! 3. Tag keys are unique per channel (random 128-bit keys never collide across channels).
//! 4. `missing_tag` never occurs on the core, nor (no sequence of upstream's calls leaves a
//!    reference without its body) on the reference.
//!
//! A tick lasts at least `ttl / 32` (rounded up): a cleanup sooner than that after the last tick
//! end, a second page at the same `now` included, leaves the tick open, and the model follows.
//! The deterministic tests at the end cover a long run of frequent cleanups (the core keeps 64
//! tick ends; an older one is bounded by an end that is already past the TTL).
//!
//! `WK_PROPTEST_CASES` sequences (default 256; scripts/test runs 10 000 in release).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proptest::prelude::*;
use wkcore::clock::ManualClock;
use wkcore::metrics::Registry;
use wkcore::tag::*;
use wkcore_references::tag::{MutexTagManager, SharedTag};

const SEC: i64 = 1_000_000_000;
const START: i64 = 1_700_000_000 * SEC;
const LOCAL: u64 = 1;
const CHANNELS: [&str; 3] = ["group:a", "group:b", "cmd:group:a"];
const SOURCES: [&str; 3] = ["", "group:a", "group:x"];
/// The core's tick rule: a cleanup ends the current tick once it has lasted `ttl / 32`
/// (rounded up).
const TICKS_PER_TTL: i64 = 32;

fn config() -> ProptestConfig {
    let cases = std::env::var("WK_PROPTEST_CASES")
        .ok()
        .map(|v| v.parse().expect("WK_PROPTEST_CASES: a number of cases"))
        .unwrap_or(256);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

fn topology(i: u8) -> PartitionTopology {
    let r = |slot_id, balance_version| SlotAuthorityRef {
        slot_id,
        leader_node_id: 1,
        config_epoch: 1,
        balance_version,
    };
    match i % 5 {
        0 => PartitionTopology::default(),
        1 => PartitionTopology::new(1, &[r(1, 1), r(2, 1)]),
        2 => PartitionTopology::new(1, &[r(1, 2), r(2, 1)]),
        3 => PartitionTopology::new(2, &[r(1, 1), r(2, 1)]),
        // The refs of 1 in another order: not equal.
        _ => PartitionTopology::new(1, &[r(2, 1), r(1, 1)]),
    }
}

fn partitions(i: u8) -> Vec<NodePartition> {
    let p = |node, uids: &[&str]| NodePartition::new(node, uids.iter()).unwrap();
    match i % 5 {
        0 => vec![],
        1 => vec![p(LOCAL, &["u1"])],
        2 => vec![p(LOCAL, &["u1", "u2"]), p(2, &["u3"])],
        // No local partition: the follower stores a synthetic empty one.
        3 => vec![p(2, &["u4"]), p(3, &["u5", "u6"])],
        _ => vec![p(LOCAL, &[]), p(2, &["u7"])],
    }
}

#[derive(Clone, Copy, Debug)]
enum Base {
    /// The role's current reference of the channel (reused as is: mostly hits).
    Current,
    /// A tag the role saw, counted back from the newest.
    History(usize),
    Unknown,
}

#[derive(Clone, Copy, Debug)]
enum Perturb {
    None,
    Key,
    VersionDown,
    VersionUp,
    SmvZero,
    SmvDown,
    SmvUp,
    SourceEmpty,
    SourceOther,
    SourceSmvZero,
    SourceSmvDown,
    SourceSmvUp,
    Topology(u8),
}

#[derive(Clone, Debug)]
enum Step {
    Build {
        ch: usize,
        smv: u64,
        source: usize,
        source_smv: u64,
        topo: u8,
        parts: u8,
        mint: bool,
    },
    Ephemeral {
        ch: usize,
        smv: u64,
        topo: u8,
        parts: u8,
    },
    Store {
        ch: usize,
        key: u8,
        version: u64,
        smv: u64,
        source: usize,
        source_smv: u64,
        topo: u8,
        parts: u8,
        created: bool,
        by_handle: bool,
    },
    /// The follower stores a tag the leader built (the RPC `update` flow).
    Forward {
        pick: usize,
        by_handle: bool,
    },
    LeaderLookup {
        ch: usize,
        base: Base,
        perturb: Perturb,
        clone: bool,
    },
    FollowerLookup {
        ch: usize,
        base: Base,
        perturb: Perturb,
        by_handle: bool,
        clone: bool,
    },
    LeaderLookupTag {
        ch: usize,
        base: Base,
    },
    FollowerLookupTag {
        ch: usize,
        base: Base,
    },
    SourceStale {
        ch: usize,
        source: usize,
        version: u64,
        leader: bool,
    },
    /// 0: 1 ns, 1: a second, 2: half the TTL, 3: the TTL, 4: the TTL + 1 ns, 5: three TTLs.
    Advance(u8),
    Cleanup {
        leader: bool,
        follower: bool,
        paged: bool,
    },
    /// `count` cleanups of both roles, `ttl / every` apart, with a hit on the follower's and
    /// the leader's current tag of channel `ch` before every eighth (so tick ends fall out of
    /// the core's log of 64 while bodies are still in use).
    Burst {
        count: u8,
        every: u8,
        ch: usize,
    },
}

fn base() -> impl Strategy<Value = Base> {
    prop_oneof![
        6 => Just(Base::Current),
        3 => (0usize..6).prop_map(Base::History),
        1 => Just(Base::Unknown),
    ]
}

fn perturb() -> impl Strategy<Value = Perturb> {
    prop_oneof![
        12 => Just(Perturb::None),
        1 => Just(Perturb::Key),
        1 => Just(Perturb::VersionDown),
        1 => Just(Perturb::VersionUp),
        1 => Just(Perturb::SmvZero),
        1 => Just(Perturb::SmvDown),
        1 => Just(Perturb::SmvUp),
        1 => Just(Perturb::SourceEmpty),
        1 => Just(Perturb::SourceOther),
        1 => Just(Perturb::SourceSmvZero),
        1 => Just(Perturb::SourceSmvDown),
        1 => Just(Perturb::SourceSmvUp),
        2 => (0u8..5).prop_map(Perturb::Topology),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let ch = || 0usize..CHANNELS.len();
    let source = || prop_oneof![3 => Just(0usize), 1 => 1usize..SOURCES.len()];
    prop_oneof![
        6 => (ch(), 0u64..6, source(), 0u64..4, prop_oneof![3 => Just(1u8), 1 => 0u8..5], 0u8..5,
              prop::bool::weighted(0.15))
            .prop_map(|(ch, smv, source, source_smv, topo, parts, mint)| Step::Build {
                ch, smv, source, source_smv, topo, parts, mint
            }),
        2 => (ch(), 0u64..6, 0u8..5, 0u8..5)
            .prop_map(|(ch, smv, topo, parts)| Step::Ephemeral { ch, smv, topo, parts }),
        6 => (ch(), 0u8..3, 0u64..6, 0u64..6, source(), 0u64..4,
              prop_oneof![3 => Just(1u8), 1 => 0u8..5], 0u8..5, any::<bool>(), any::<bool>())
            .prop_map(|(ch, key, version, smv, source, source_smv, topo, parts, created,
                        by_handle)| Step::Store {
                ch, key, version, smv, source, source_smv, topo, parts, created, by_handle
            }),
        3 => (0usize..4, any::<bool>())
            .prop_map(|(pick, by_handle)| Step::Forward { pick, by_handle }),
        6 => (ch(), base(), perturb(), any::<bool>())
            .prop_map(|(ch, base, perturb, clone)| Step::LeaderLookup { ch, base, perturb, clone }),
        8 => (ch(), base(), perturb(), any::<bool>(), any::<bool>()).prop_map(
            |(ch, base, perturb, by_handle, clone)| Step::FollowerLookup {
                ch, base, perturb, by_handle, clone
            }
        ),
        2 => (ch(), base()).prop_map(|(ch, base)| Step::LeaderLookupTag { ch, base }),
        2 => (ch(), base()).prop_map(|(ch, base)| Step::FollowerLookupTag { ch, base }),
        1 => (ch(), 0usize..SOURCES.len(), 0u64..5, any::<bool>()).prop_map(
            |(ch, source, version, leader)| Step::SourceStale { ch, source, version, leader }
        ),
        5 => prop_oneof![1 => Just(0u8), 2 => Just(1u8), 3 => Just(2u8), 1 => Just(3u8),
                         1 => Just(4u8), 1 => Just(5u8)]
            .prop_map(Step::Advance),
        3 => (prop::bool::weighted(0.8), prop::bool::weighted(0.8), any::<bool>())
            .prop_map(|(leader, follower, paged)| Step::Cleanup { leader, follower, paged }),
        1 => (20u8..90, prop_oneof![Just(100u8), Just(40), Just(16), Just(3)], ch())
            .prop_map(|(count, every, ch)| Step::Burst { count, every, ch }),
    ]
}

/// A look-up request that owns its strings.
#[derive(Clone, Debug)]
struct Request {
    key: Box<str>,
    version: u64,
    smv: u64,
    source: Box<str>,
    source_smv: u64,
    topology: PartitionTopology,
}

impl Request {
    fn of_ref(r: &TagRef) -> Self {
        Self {
            key: r.tag_key.clone(),
            version: r.tag_version,
            smv: r.subscriber_mutation_version,
            source: r.source_channel_key.clone(),
            source_smv: r.source_subscriber_mutation_version,
            topology: r.topology.clone(),
        }
    }
    fn of_parts(t: &TagParts) -> Self {
        Self {
            key: t.key.clone(),
            version: t.tag_version,
            smv: t.subscriber_mutation_version,
            source: t.source_channel_key.clone(),
            source_smv: t.source_subscriber_mutation_version,
            topology: t.topology.clone(),
        }
    }
    fn unknown() -> Self {
        Self {
            key: "no-such-key".into(),
            version: 1,
            smv: 0,
            source: "".into(),
            source_smv: 0,
            topology: topology(1),
        }
    }
    fn perturb(mut self, p: Perturb) -> Self {
        match p {
            Perturb::None => {}
            Perturb::Key => self.key = format!("{}-other", self.key).into(),
            Perturb::VersionDown => self.version = self.version.saturating_sub(1),
            Perturb::VersionUp => self.version += 1,
            Perturb::SmvZero => self.smv = 0,
            Perturb::SmvDown => self.smv = self.smv.saturating_sub(1),
            Perturb::SmvUp => self.smv += 1,
            Perturb::SourceEmpty => self.source = "".into(),
            Perturb::SourceOther => self.source = "group:other".into(),
            Perturb::SourceSmvZero => self.source_smv = 0,
            Perturb::SourceSmvDown => self.source_smv = self.source_smv.saturating_sub(1),
            Perturb::SourceSmvUp => self.source_smv += 1,
            Perturb::Topology(i) => self.topology = topology(i),
        }
        self
    }
    fn view(&self) -> LookupRequest<'_> {
        LookupRequest {
            tag_key: &self.key,
            tag_version: self.version,
            subscriber_mutation_version: self.smv,
            source_channel_key: &self.source,
            source_subscriber_mutation_version: self.source_smv,
            topology: self.topology.view(),
        }
    }
}

/// The model's record of one role's access marks (difference 2 of the module docs).
#[derive(Default)]
struct Marks {
    /// Keys hit in the current tick.
    hit: BTreeSet<Box<str>>,
    /// Per key: upstream's exact access time (stores, builds, fetches by key, hits).
    exact: BTreeMap<Box<str>, i64>,
    /// Per key: the end of the tick of its latest hit, if it was hit since it was stored.
    hit_end: BTreeMap<Box<str>, i64>,
    /// Keys upstream would have reclaimed that the core kept, with the tick end that kept them.
    lagging: BTreeMap<Box<str>, i64>,
    /// The latest tick end.
    last_end: Option<i64>,
}

impl Marks {
    /// A body was (re)placed under `key` at `now`: a new body, no hit mark.
    fn placed(&mut self, key: &str, now: i64) {
        self.hit.remove(key);
        self.hit_end.remove(key);
        self.lagging.remove(key);
        self.exact.insert(key.into(), now);
    }
    fn hit(&mut self, key: &str, now: i64) {
        self.hit.insert(key.into());
        self.lagging.remove(key);
        self.exact.insert(key.into(), now);
    }
    fn touched(&mut self, key: &str, now: i64) {
        self.lagging.remove(key);
        self.exact.insert(key.into(), now);
    }
    fn forget(&mut self, key: &str) {
        self.hit.remove(key);
        self.hit_end.remove(key);
        self.lagging.remove(key);
        self.exact.remove(key);
    }
    /// A cleanup at `now`: if the tick has lasted long enough it ends, and every body hit in it
    /// is bounded by `now`; the reference is touched at `now` for each (upstream's fetch by key
    /// writes the access time back).
    fn end_tick(&mut self, now: i64, ttl: i64, reference: &MutexTagManager) {
        let shortest = (ttl + TICKS_PER_TTL - 1) / TICKS_PER_TTL;
        if self.last_end.is_some_and(|end| now - end < shortest) {
            return;
        }
        self.last_end = Some(now);
        for key in std::mem::take(&mut self.hit) {
            self.hit_end.insert(key.clone(), now);
            reference.lookup_tag(&key, now);
        }
    }
    /// The core's rule: reclaimed at `now` iff the later of the exact access and the hit's
    /// tick end is more than `ttl` before `now`.
    fn predicted(&self, key: &str, now: i64, ttl: i64) -> bool {
        let exact = self.exact[key];
        let bound = exact.max(self.hit_end.get(key).copied().unwrap_or(i64::MIN));
        now.saturating_sub(bound) > ttl
    }
    /// Checks difference 2 for the bodies `held` before a cleanup at `now` that reclaimed
    /// `reclaimed`.
    fn check_cleanup(
        &mut self,
        role: &str,
        held: &BTreeSet<Box<str>>,
        reclaimed: &BTreeSet<Box<str>>,
        now: i64,
        ttl: i64,
    ) -> Result<(), TestCaseError> {
        for key in held {
            let predicted = self.predicted(key, now, ttl);
            let upstream = now.saturating_sub(self.exact[key]) > ttl;
            let got = reclaimed.contains(key);
            prop_assert_eq!(got, predicted, "{} body {} at {}", role, key, now - START);
            prop_assert!(
                !got || upstream,
                "{} reclaimed {} earlier than upstream would",
                role,
                key
            );
            if let Some(kept_by) = self.lagging.get(key) {
                // Upstream reclaimed it; the core must have by the first cleanup more than a
                // TTL after the tick end that kept it.
                prop_assert!(
                    got || now.saturating_sub(*kept_by) <= ttl,
                    "{} kept {} past a TTL after its hit's tick",
                    role,
                    key
                );
            }
            if upstream && !got {
                let end = self.hit_end.get(key).copied();
                prop_assert!(
                    end.is_some_and(|end| now.saturating_sub(end) <= ttl),
                    "{} kept {} that upstream reclaims, without a hit in a recent tick",
                    role,
                    key
                );
                self.lagging.insert(key.clone(), end.unwrap_or_default());
            }
        }
        for key in reclaimed {
            self.forget(key);
        }
        Ok(())
    }
}

struct Model {
    now: i64,
    ttl: i64,
    clock: Arc<ManualClock>,
    _registry: Registry,
    leader: TagLeader,
    cache: PartitionCache,
    handles: Vec<ChannelHandle>,
    ref_leader: MutexTagManager,
    ref_follower: MutexTagManager,
    leader_marks: Marks,
    follower_marks: Marks,
    /// Tags the leader built (both sides returned the same), newest last.
    leader_history: Vec<TagParts>,
    /// Tags offered to the follower, newest last.
    follower_history: Vec<TagParts>,
    /// Channels with a cell in the cache's index.
    linked: BTreeSet<usize>,
    leader_lookups: [u64; 7],
    follower_lookups: [u64; 7],
    follower_stores: [u64; 2],
    leader_stores: u64,
    leader_reclaimed: u64,
    follower_reclaimed: u64,
}

fn parts_eq(
    what: &str,
    core: &DeliveryTag,
    reference: &TagParts,
    access: bool,
) -> Result<(), TestCaseError> {
    let mut core = core.to_parts();
    if !access {
        core.last_access = reference.last_access;
    }
    prop_assert_eq!(&core, reference, "{}", what);
    Ok(())
}

fn shared_eq(
    what: &str,
    core: Option<&DeliveryTag>,
    reference: Option<&SharedTag>,
) -> Result<(), TestCaseError> {
    match (core, reference) {
        (None, None) => Ok(()),
        (Some(c), Some(r)) => parts_eq(what, c, &r.to_parts(), false),
        (c, r) => {
            prop_assert!(
                false,
                "{}: core {:?}, reference {:?}",
                what,
                c.map(|t| t.key()),
                r.map(|t| &t.body.key)
            );
            Ok(())
        }
    }
}

fn uid_total(parts: &[NodePartition]) -> u64 {
    parts.iter().map(|p| p.uids.len() as u64).sum()
}

impl Model {
    fn new(ttl: i64) -> Self {
        let clock = Arc::new(ManualClock::new(START as u64));
        let registry = Registry::new();
        let leader = TagLeader::with_metrics(
            LeaderOptions {
                local_node_id: LOCAL,
                ttl_nanos: ttl as u64,
                clock: clock.clone(),
                keys: Arc::new(SequentialTagKeys::new("L")),
            },
            &registry,
        );
        let cache = PartitionCache::with_metrics(
            CacheOptions {
                local_node_id: LOCAL,
                ttl_nanos: ttl as u64,
                clock: clock.clone(),
            },
            &registry,
        );
        let handles = CHANNELS.iter().map(|c| cache.handle(c)).collect();
        Self {
            now: START,
            ttl,
            clock,
            _registry: registry,
            leader,
            cache,
            handles,
            ref_leader: MutexTagManager::with_keys(
                LOCAL,
                ttl,
                Arc::new(SequentialTagKeys::new("L")),
            ),
            ref_follower: MutexTagManager::with_keys(
                LOCAL,
                ttl,
                Arc::new(SequentialTagKeys::new("F")),
            ),
            leader_marks: Marks::default(),
            follower_marks: Marks::default(),
            leader_history: Vec::new(),
            follower_history: Vec::new(),
            linked: (0..CHANNELS.len()).collect(),
            leader_lookups: [0; 7],
            follower_lookups: [0; 7],
            follower_stores: [0; 2],
            leader_stores: 0,
            leader_reclaimed: 0,
            follower_reclaimed: 0,
        }
    }

    fn pick(history: &[TagParts], i: usize) -> Option<&TagParts> {
        history
            .len()
            .checked_sub(1 + i % history.len().max(1))
            .map(|j| &history[j])
    }

    fn request(&self, leader: bool, ch: usize, base: Base, perturb: Perturb) -> Request {
        let (reference, history) = if leader {
            (&self.ref_leader, &self.leader_history)
        } else {
            (&self.ref_follower, &self.follower_history)
        };
        let r = match base {
            Base::Current => reference
                .current_ref(CHANNELS[ch])
                .map(|r| Request::of_ref(&r)),
            Base::History(i) => Self::pick(history, i).map(Request::of_parts),
            Base::Unknown => None,
        };
        r.unwrap_or_else(Request::unknown).perturb(perturb)
    }

    fn build_request(
        ch: usize,
        smv: u64,
        source: usize,
        source_smv: u64,
        topo: u8,
        parts: u8,
        mint: bool,
    ) -> BuildRequest<'static> {
        BuildRequest {
            channel_key: CHANNELS[ch],
            subscriber_mutation_version: smv,
            source_channel_key: SOURCES[source],
            source_subscriber_mutation_version: source_smv,
            topology: topology(topo),
            partitions: partitions(parts),
            mint_fresh_key: mint,
        }
    }

    fn store(&mut self, tag: TagParts, ch: usize, by_handle: bool) -> Result<(), TestCaseError> {
        let core = if by_handle {
            self.handles[ch].store(&tag)
        } else {
            self.cache.store(&tag)
        };
        let reference = self.ref_follower.store_follower_partition(&tag, self.now);
        prop_assert_eq!(core.is_stored(), reference.stored, "store of {:?}", tag.key);
        let Some(expected) = &reference.tag else {
            return Err(TestCaseError::fail(format!(
                "the reference lost the current body of {}",
                CHANNELS[ch]
            )));
        };
        parts_eq("store", core.tag(), expected, core.is_stored())?;
        self.linked.insert(ch);
        if core.is_stored() {
            self.follower_stores[0] += 1;
            self.follower_marks.placed(&tag.key, self.now);
        } else {
            self.follower_stores[1] += 1;
        }
        self.follower_history.push(tag);
        Ok(())
    }

    /// Runs one cleanup at `now` for the roles asked, each in pages until a full pass (pages of
    /// 2 when `paged`, else one page of every entry).
    fn cleanup(&mut self, leader: bool, follower: bool, paged: bool) -> Result<(), TestCaseError> {
        let (now, ttl) = (self.now, self.ttl);
        if leader {
            let held: BTreeSet<Box<str>> = self.ref_leader.keys().into_iter().collect();
            {
                let (limit, pages) = pages_for(held.len(), paged);
                let leader = self.leader.clone();
                let (reclaimed, ran) =
                    run_pages(|| leader.cleanup_expired(now, limit), limit, pages, ttl)?;
                prop_assert!(ran >= 1);
                if ttl > 0 {
                    self.leader_marks.end_tick(now, ttl, &self.ref_leader);
                }
                let removed: BTreeSet<Box<str>> = self
                    .ref_leader
                    .cleanup_expired_keys(now)
                    .into_iter()
                    .collect();
                prop_assert_eq!(
                    reclaimed,
                    removed.len(),
                    "leader cleanup at {}",
                    now - START
                );
                self.leader_reclaimed += reclaimed as u64;
                if ttl > 0 {
                    self.leader_marks
                        .check_cleanup("leader", &held, &removed, now, ttl)?;
                }
            }
        }
        if follower {
            let mut held = BTreeSet::new();
            let mut current_of = BTreeMap::new();
            for (ch, c) in CHANNELS.iter().enumerate() {
                if let Some(r) = self.ref_follower.current_ref(c) {
                    held.insert(r.tag_key.clone());
                    current_of.insert(ch, r.tag_key.clone());
                }
            }
            {
                let (limit, pages) = pages_for(self.linked.len(), paged);
                let cache = self.cache.clone();
                let (reclaimed, ran) =
                    run_pages(|| cache.cleanup_expired(now, limit), limit, pages, ttl)?;
                prop_assert!(ran >= 1);
                if ttl > 0 {
                    self.follower_marks.end_tick(now, ttl, &self.ref_follower);
                }
                let removed: BTreeSet<Box<str>> = self
                    .ref_follower
                    .cleanup_expired_keys(now)
                    .into_iter()
                    .filter(|k| held.contains(k))
                    .collect();
                prop_assert_eq!(
                    reclaimed,
                    removed.len(),
                    "follower cleanup at {}",
                    now - START
                );
                self.follower_reclaimed += reclaimed as u64;
                for (ch, key) in &current_of {
                    let gone = self.cache.current(CHANNELS[*ch]).is_none();
                    prop_assert_eq!(
                        gone,
                        removed.contains(key),
                        "follower channel {}",
                        CHANNELS[*ch]
                    );
                }
                if ttl > 0 {
                    self.follower_marks
                        .check_cleanup("follower", &held, &removed, now, ttl)?;
                    // A full pass unlinks every cell without a body.
                    self.linked
                        .retain(|ch| current_of.get(ch).is_some_and(|k| !removed.contains(k)));
                }
            }
        }
        Ok(())
    }

    fn step(&mut self, step: Step) -> Result<(), TestCaseError> {
        match step {
            Step::Build {
                ch,
                smv,
                source,
                source_smv,
                topo,
                parts,
                mint,
            } => {
                let req = || Self::build_request(ch, smv, source, source_smv, topo, parts, mint);
                let core = self.leader.build(req());
                let reference = self.ref_leader.build_leader_tag(req(), self.now);
                parts_eq("build", &core, &reference, true)?;
                self.leader_stores += 1;
                self.leader_marks.placed(&reference.key, self.now);
                self.leader_history.push(reference);
            }
            Step::Ephemeral {
                ch,
                smv,
                topo,
                parts,
            } => {
                let req = || Self::build_request(ch, smv, 0, 0, topo, parts, false);
                let core = self.leader.build_ephemeral(req());
                let reference = self.ref_leader.build_ephemeral_tag(req(), self.now);
                parts_eq("ephemeral build", &core, &reference, true)?;
                self.leader_stores += 1;
                self.leader_marks.placed(&reference.key, self.now);
                self.leader_history.push(reference);
            }
            Step::Store {
                ch,
                key,
                version,
                smv,
                source,
                source_smv,
                topo,
                parts,
                created,
                by_handle,
            } => {
                let tag = TagParts {
                    key: format!("{}#k{key}", CHANNELS[ch]).into(),
                    channel_key: CHANNELS[ch].into(),
                    tag_version: version,
                    subscriber_mutation_version: smv,
                    source_channel_key: SOURCES[source].into(),
                    source_subscriber_mutation_version: source_smv,
                    topology: topology(topo),
                    partitions: partitions(parts),
                    created_at: if created { START - SEC } else { 0 },
                    last_access: 0,
                };
                self.store(tag, ch, by_handle)?;
            }
            Step::Forward { pick, by_handle } => {
                if let Some(tag) = Self::pick(&self.leader_history, pick).cloned() {
                    let ch = CHANNELS
                        .iter()
                        .position(|c| **c == *tag.channel_key)
                        .unwrap();
                    self.store(tag, ch, by_handle)?;
                }
            }
            Step::LeaderLookup {
                ch,
                base,
                perturb,
                clone,
            } => {
                let req = self.request(true, ch, base, perturb);
                let core = self.leader.lookup(CHANNELS[ch], &req.view());
                let (reason, tag) = if clone {
                    let r =
                        self.ref_leader
                            .lookup_local_partition(CHANNELS[ch], &req.view(), self.now);
                    (
                        r.reason,
                        r.tag.map(|t| SharedTag {
                            last_access: t.last_access,
                            body: Arc::new(t),
                        }),
                    )
                } else {
                    let r = self.ref_leader.lookup_local_partition_ref(
                        CHANNELS[ch],
                        &req.view(),
                        self.now,
                    );
                    (r.reason, r.tag)
                };
                prop_assert_eq!(core.reason(), reason, "leader lookup {:?}", req);
                prop_assert_ne!(reason, LookupReason::MissingTag);
                shared_eq("leader lookup", core.tag(), tag.as_ref())?;
                self.leader_lookups[reason as usize] += 1;
                if reason == LookupReason::Hit {
                    self.leader_marks.hit(&req.key, self.now);
                }
            }
            Step::FollowerLookup {
                ch,
                base,
                perturb,
                by_handle,
                clone,
            } => {
                let req = self.request(false, ch, base, perturb);
                let core = if by_handle {
                    self.handles[ch].lookup(&req.view())
                } else {
                    self.cache.lookup(CHANNELS[ch], &req.view())
                };
                let (reason, tag) = if clone {
                    let r = self.ref_follower.lookup_local_partition(
                        CHANNELS[ch],
                        &req.view(),
                        self.now,
                    );
                    (
                        r.reason,
                        r.tag.map(|t| SharedTag {
                            last_access: t.last_access,
                            body: Arc::new(t),
                        }),
                    )
                } else {
                    let r = self.ref_follower.lookup_local_partition_ref(
                        CHANNELS[ch],
                        &req.view(),
                        self.now,
                    );
                    (r.reason, r.tag)
                };
                prop_assert_eq!(core.reason(), reason, "follower lookup {:?}", req);
                prop_assert_ne!(reason, LookupReason::MissingTag);
                shared_eq("follower lookup", core.tag(), tag.as_ref())?;
                self.follower_lookups[reason as usize] += 1;
                if reason == LookupReason::Hit {
                    self.follower_marks.hit(&req.key, self.now);
                }
            }
            Step::LeaderLookupTag { ch, base } => {
                let key = self.request(true, ch, base, Perturb::None).key;
                let core = self.leader.lookup_tag(&key);
                let reference = self.ref_leader.lookup_tag(&key, self.now);
                match (&core, &reference) {
                    (Some(c), Some(r)) => parts_eq("leader lookup_tag", c, r, true)?,
                    (None, None) => {}
                    _ => prop_assert!(
                        false,
                        "leader lookup_tag {}: core {:?}, reference {:?}",
                        key,
                        core.is_some(),
                        reference.is_some()
                    ),
                }
                if reference.is_some() {
                    self.leader_marks.touched(&key, self.now);
                }
            }
            Step::FollowerLookupTag { ch, base } => {
                let key = self.request(false, ch, base, Perturb::None).key;
                let current = self
                    .ref_follower
                    .current_ref(CHANNELS[ch])
                    .map(|r| r.tag_key);
                let core = self.cache.lookup_tag(CHANNELS[ch], &key);
                if current.as_deref() == Some(&*key) {
                    let reference = self.ref_follower.lookup_tag(&key, self.now);
                    let (Some(c), Some(r)) = (&core, &reference) else {
                        return Err(TestCaseError::fail(format!(
                            "follower lookup_tag of the current key {key} missed"
                        )));
                    };
                    parts_eq("follower lookup_tag", c, r, true)?;
                    self.follower_marks.touched(&key, self.now);
                } else {
                    // Difference 1: only the current incarnation is kept.
                    prop_assert!(
                        core.is_none(),
                        "follower lookup_tag of a replaced key {} hit",
                        key
                    );
                }
            }
            Step::SourceStale {
                ch,
                source,
                version,
                leader,
            } => {
                let (core, reference) = if leader {
                    (
                        self.leader
                            .is_source_stale(CHANNELS[ch], SOURCES[source], version),
                        self.ref_leader
                            .is_source_stale(CHANNELS[ch], SOURCES[source], version),
                    )
                } else {
                    (
                        self.cache
                            .is_source_stale(CHANNELS[ch], SOURCES[source], version),
                        self.ref_follower
                            .is_source_stale(CHANNELS[ch], SOURCES[source], version),
                    )
                };
                prop_assert_eq!(core, reference, "is_source_stale");
            }
            Step::Advance(kind) => {
                let ttl = if self.ttl > 0 { self.ttl } else { 2 * SEC };
                let d = match kind {
                    0 => 1,
                    1 => SEC,
                    2 => ttl / 2,
                    3 => ttl,
                    4 => ttl + 1,
                    _ => 3 * ttl,
                };
                self.advance(d);
            }
            Step::Burst { count, every, ch } => {
                let d = (self.ttl.max(SEC) / i64::from(every)).max(1);
                for i in 0..count {
                    if i % 8 == 0 {
                        self.step(Step::LeaderLookup {
                            ch,
                            base: Base::Current,
                            perturb: Perturb::None,
                            clone: false,
                        })?;
                        self.step(Step::FollowerLookup {
                            ch,
                            base: Base::Current,
                            perturb: Perturb::None,
                            by_handle: i % 16 == 0,
                            clone: false,
                        })?;
                    }
                    self.advance(d);
                    self.cleanup(true, true, false)?;
                    self.check()?;
                }
            }
            Step::Cleanup {
                leader,
                follower,
                paged,
            } => self.cleanup(leader, follower, paged)?,
        }
        self.check()
    }

    fn advance(&mut self, d: i64) {
        self.now += d;
        self.clock.advance(d as u64);
    }

    /// What must hold after every call.
    fn check(&self) -> Result<(), TestCaseError> {
        for (ch, c) in CHANNELS.iter().enumerate() {
            let r = self.ref_leader.current_ref(c);
            prop_assert_eq!(
                self.leader.current_ref(c),
                r.clone(),
                "leader current_ref {}",
                c
            );
            let r = self.ref_follower.current_ref(c);
            prop_assert_eq!(
                self.cache.current_ref(c),
                r.clone(),
                "follower current_ref {}",
                c
            );
            prop_assert_eq!(
                self.handles[ch].current().map(|t| t.tag_ref()),
                r,
                "handle current {}",
                c
            );
        }
        let lc = self.leader.counts();
        let keys = self.ref_leader.keys();
        prop_assert_eq!(lc.tags, keys.len() as u64, "leader bodies");
        prop_assert_eq!(self.leader.bodies(), keys.len());
        let uids: u64 = keys
            .iter()
            .map(|k| uid_total(&self.ref_leader.peek_tag(k).unwrap().partitions))
            .sum();
        prop_assert_eq!(lc.uids, uids, "leader uids");
        prop_assert_eq!(lc.lookups, self.leader_lookups);
        prop_assert_eq!(lc.stores, [self.leader_stores, 0]);
        prop_assert_eq!(lc.reclaimed_bodies, self.leader_reclaimed);

        let fc = self.cache.counts();
        let mut tags = 0;
        let mut uids = 0;
        for c in CHANNELS {
            if let Some(r) = self.ref_follower.current_ref(c) {
                tags += 1;
                uids += uid_total(&self.ref_follower.peek_tag(&r.tag_key).unwrap().partitions);
            }
        }
        prop_assert_eq!(fc.tags, tags, "follower bodies");
        prop_assert_eq!(fc.uids, uids, "follower uids");
        prop_assert_eq!(fc.lookups, self.follower_lookups);
        prop_assert_eq!(fc.stores, self.follower_stores);
        prop_assert_eq!(fc.reclaimed_bodies, self.follower_reclaimed);
        prop_assert_eq!(self.cache.channels(), self.linked.len(), "linked cells");
        Ok(())
    }

    /// Two cleanups more than a TTL apart: nothing is left on either side.
    fn wipe(&mut self) -> Result<(), TestCaseError> {
        if self.ttl == 0 {
            return Ok(());
        }
        for _ in 0..2 {
            self.advance(self.ttl + 1);
            self.cleanup(true, true, false)?;
            self.check()?;
        }
        let (lc, fc) = (self.leader.counts(), self.cache.counts());
        prop_assert_eq!((lc.tags, lc.uids, self.leader.bodies()), (0, 0, 0));
        prop_assert_eq!((fc.tags, fc.uids, self.cache.channels()), (0, 0, 0));
        prop_assert_eq!(
            (self.ref_leader.bodies(), self.ref_leader.channels()),
            (0, 0)
        );
        prop_assert_eq!(self.ref_follower.channels(), 0);
        Ok(())
    }
}

/// The page limit and the most pages of a full pass over `held` entries.
fn pages_for(held: usize, paged: bool) -> (usize, u32) {
    if paged {
        // From a cursor anywhere, two wraps cover every entry; each pass takes at most
        // `held / 2 + 1` pages of 2.
        (2, 2 * (held as u32 / 2 + 1))
    } else {
        (CLEANUP_LIMIT_MAX, 1)
    }
}

/// Runs cleanup pages until a full pass (one page of [`CLEANUP_LIMIT_MAX`] examines every slot
/// from the cursor around; smaller pages need two wraps); the bodies reclaimed and the pages run.
fn run_pages(
    mut page: impl FnMut() -> CleanupPage,
    limit: usize,
    most: u32,
    ttl: i64,
) -> Result<(usize, u32), TestCaseError> {
    let wraps_needed = if limit == CLEANUP_LIMIT_MAX { 1 } else { 2 };
    let (mut reclaimed, mut ran, mut wraps) = (0, 0, 0);
    while wraps < wraps_needed {
        prop_assert!(ran < most, "no full pass in {} pages", most);
        let p = page();
        ran += 1;
        if ttl == 0 {
            prop_assert_eq!(p, CleanupPage::default(), "a TTL of 0 cleans nothing");
            break;
        }
        reclaimed += p.reclaimed;
        wraps += u32::from(p.wrapped);
    }
    Ok((reclaimed, ran))
}

fn run(ttl: i64, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let mut model = Model::new(ttl);
    for step in steps {
        model.step(step)?;
    }
    model.wipe()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tags_match_reference(
        ttl in prop_oneof![1 => Just(0i64), 6 => Just(10 * SEC), 1 => (1i64..4).prop_map(|s| s * SEC)],
        steps in prop::collection::vec(step(), 0..120),
    ) {
        run(ttl, steps)?;
    }
}

/// Cleanups every 100 ms with a 10 s TTL: more than 64 cleanups per TTL, so the tick of a hit
/// falls out of the core's log of tick ends long before the body is due.
const FREQUENT: i64 = SEC / 10;
const FREQUENT_TTL: i64 = 10 * SEC;

/// The first cleanup (every [`FREQUENT`] from `START`, up to four TTLs) after which `gone`
/// holds, for a body last used at `START + hit_at`: never before upstream's exact rule would
/// reclaim it, and at most one tick (a 32nd of the TTL, or one cleanup interval) and one
/// interval after.
fn reclaimed_in_time(hit_at: i64, mut cleanup: impl FnMut(i64), gone: impl Fn() -> bool) {
    let mut now = START;
    while !gone() && now < START + 4 * FREQUENT_TTL {
        now += FREQUENT;
        cleanup(now);
    }
    assert!(gone(), "a body hit at +{hit_at} ns is never reclaimed");
    let last = START + hit_at;
    assert!(
        now - last > FREQUENT_TTL,
        "reclaimed at +{} ns: before upstream",
        now - START
    );
    let tick = (FREQUENT_TTL / 32).max(FREQUENT);
    assert!(
        now <= last + FREQUENT_TTL + tick + 2 * FREQUENT,
        "reclaimed at +{} ns, for a hit at +{hit_at} ns",
        now - START
    );
}

#[test]
fn hit_body_is_reclaimed_under_frequent_cleanups() {
    for hit_at in [0, FREQUENT / 2, 5 * SEC, 7 * SEC + 1, 9 * SEC + 3] {
        let model = Model::new(FREQUENT_TTL);
        let tag = TagParts {
            key: "k".into(),
            channel_key: CHANNELS[0].into(),
            tag_version: 1,
            topology: topology(1),
            ..TagParts::default()
        };
        assert!(model.cache.store(&tag).is_stored());
        let req = Request::of_parts(&tag);
        let (cache, clock) = (model.cache.clone(), model.clock.clone());
        let mut hit = false;
        reclaimed_in_time(
            hit_at,
            |now| {
                if !hit && now > START + hit_at {
                    // The hit comes just before this cleanup.
                    clock.set((START + hit_at) as u64);
                    assert!(cache.lookup(CHANNELS[0], &req.view()).is_hit());
                    hit = true;
                }
                cache.cleanup_expired(now, CLEANUP_LIMIT_MAX);
            },
            || model.cache.current(CHANNELS[0]).is_none(),
        );
        assert_eq!(model.cache.counts().tags, 0);
    }
}

#[test]
fn leader_hit_body_is_reclaimed_under_frequent_cleanups() {
    for hit_at in [0, FREQUENT / 2, 5 * SEC, 7 * SEC + 1, 9 * SEC + 3] {
        let model = Model::new(FREQUENT_TTL);
        let tag = model
            .leader
            .build(Model::build_request(0, 1, 0, 0, 1, 1, false));
        let req = Request::of_parts(&tag.to_parts());
        let (leader, clock) = (model.leader.clone(), model.clock.clone());
        let mut hit = false;
        reclaimed_in_time(
            hit_at,
            |now| {
                if !hit && now > START + hit_at {
                    clock.set((START + hit_at) as u64);
                    assert!(leader.lookup(CHANNELS[0], &req.view()).is_hit());
                    hit = true;
                }
                leader.cleanup_expired(now, CLEANUP_LIMIT_MAX);
            },
            || model.leader.bodies() == 0,
        );
        assert!(model.leader.current(CHANNELS[0]).is_none());
    }
}
