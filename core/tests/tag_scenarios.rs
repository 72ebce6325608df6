//! Replays `testdata/tag/scenarios.json`, the delivery-tag scenarios shared by the Rust, Go and
//! C++ suites (format: `testdata/tag/README.md`), against the core API (`wkcore::tag` and
//! `wkcore::codec::delivery_tag`).
//!
//! The file is parsed strictly (unknown, missing or duplicate fields, unknown ops and names fail),
//! then every scenario runs on fresh nodes: each node is a leader side ([`TagLeader`]) and a
//! follower cache ([`PartitionCache`]) on one manual clock, with sequential tag keys and their
//! own metrics registry. Topologies, handles and mutations are named in the scenario. A mismatch
//! names the scenario, the step's index and the step's JSON, and ends that scenario.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use wkcore::clock::ManualClock;
use wkcore::codec::delivery_tag::{
    decode_request, decode_response, encode_request, encode_response, TagRequest, TagResponse,
    WirePartition, WireSlotRef, WireTag, WireTopology,
};
use wkcore::metrics::Registry;
use wkcore::tag::rpc::{self, HandleError, TagAuthority};
use wkcore::tag::{
    partition_by_node, BuildRequest, CacheOptions, ChannelHandle, CleanupPage, DeliveryTag,
    LeaderOptions, LookupReason, LookupRequest, Mutation, MutationOutcome, NodePartition,
    PartitionCache, PartitionTopology, SequentialTagKeys, SlotAuthorityRef, StoreOutcome,
    TagCounts, TagError, TagLeader, TagParts,
};

const SCENARIOS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/tag/scenarios.json"
);

/// How many scenarios the file holds at least.
const MIN_SCENARIOS: usize = 37;

/// Upstream's tests the file must reproduce, by scenario name (README: "What the file covers").
const UPSTREAM_SCENARIOS: [&str; 18] = [
    "tag_version_increments_without_changing_key",
    "follower_caches_only_local_partition_tag",
    "stale_request_does_not_evict_newer_local_tag",
    "stale_different_tag_key_does_not_evict_newer_local_tag",
    "lookup_local_partition_rejects_subscriber_and_source_fence_mismatch",
    "lookup_local_partition_ref_returns_shared_tag_without_allocating",
    "partition_topology_mismatch_forces_refetch",
    "ttl_cleanup_removes_cold_tags_and_stale_channel_refs",
    "derived_tag_stale_when_source_subscriber_mutation_version_advances",
    "leader_incarnation_can_mint_fresh_tag_key",
    "build_ephemeral_tag_does_not_replace_current_ref",
    "delivery_tag_rpc_rejects_non_leader_update",
    "delivery_tag_rpc_returns_only_local_partition_for_fetch",
    "delivery_tag_rpc_returns_empty_local_partition_when_target_has_no_subscribers",
    "delivery_tag_rpc_converts_mismatched_ok_fence_to_retryable",
    "delivery_tag_rpc_converts_version_mismatch_ok_fence_to_retryable",
    "delivery_tag_binary_codec_round_trip",
    "delivery_tag_client_preserves_retryable_statuses",
];

// ---------------------------------------------------------------------------------------------
// The format.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    system: String,
    scenarios: Vec<Value>,
}

/// The whole file, typed, parsed straight from the text: catches duplicate fields, which a parse
/// into [`Value`] would silently drop.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictFile {
    system: String,
    scenarios: Vec<StrictScenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictScenario {
    name: String,
    upstream: String,
    topologies: Vec<TopologyJ>,
    nodes: Vec<NodeJ>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    upstream: String,
    topologies: Vec<TopologyJ>,
    nodes: Vec<NodeJ>,
    steps: Vec<Value>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TopologyJ {
    name: String,
    hash_slot_table_version: u64,
    refs: Vec<RefJ>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RefJ {
    slot_id: u32,
    leader_node_id: u64,
    config_epoch: u64,
    balance_version: u64,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct NodeJ {
    name: String,
    local_node_id: u64,
    ttl: u64,
    start: u64,
    key_prefix: String,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct PartitionJ {
    node_id: u64,
    uids: Vec<String>,
}

/// A whole tag: a store's input, an expected body, a wire tag.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TagJ {
    key: String,
    channel_key: String,
    tag_version: u64,
    subscriber_mutation_version: u64,
    source_channel_key: String,
    source_subscriber_mutation_version: u64,
    topology: String,
    partitions: Vec<PartitionJ>,
    created_at: i64,
    last_access: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildJ {
    channel_key: String,
    subscriber_mutation_version: u64,
    source_channel_key: String,
    source_subscriber_mutation_version: u64,
    topology: String,
    partitions: Vec<PartitionJ>,
    mint_fresh_key: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LookupJ {
    tag_key: String,
    tag_version: u64,
    subscriber_mutation_version: u64,
    source_channel_key: String,
    source_subscriber_mutation_version: u64,
    topology: String,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct PageJ {
    visited: usize,
    reclaimed: usize,
    unlinked: usize,
    wrapped: bool,
}

impl From<CleanupPage> for PageJ {
    fn from(p: CleanupPage) -> Self {
        PageJ {
            visited: p.visited,
            reclaimed: p.reclaimed,
            unlinked: p.unlinked,
            wrapped: p.wrapped,
        }
    }
}

/// Look-up counts by reason: only non-zero ones, each at least 1, no reason twice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Lookups(BTreeMap<&'static str, u64>);

impl<'de> Deserialize<'de> for Lookups {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lookups;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of look-up reasons to counts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lookups, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, u64>()? {
                    let reason = LookupReason::parse(&k)
                        .ok_or_else(|| de::Error::custom(format!("unknown reason {k:?}")))?;
                    if v == 0 {
                        return Err(de::Error::custom(format!(
                            "{k}: a count of 0 is not listed"
                        )));
                    }
                    if out.insert(reason.as_str(), v).is_some() {
                        return Err(de::Error::custom(format!("{k} twice")));
                    }
                }
                Ok(Lookups(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct CountsJ {
    tags: u64,
    uids: u64,
    lookups: Lookups,
    stored: u64,
    stale: u64,
    reclaimed_bodies: u64,
    reclaimed_refs: u64,
}

impl From<TagCounts> for CountsJ {
    fn from(c: TagCounts) -> Self {
        CountsJ {
            tags: c.tags,
            uids: c.uids,
            lookups: Lookups(
                LookupReason::ALL
                    .into_iter()
                    .filter(|r| c.lookups(*r) != 0)
                    .map(|r| (r.as_str(), c.lookups(r)))
                    .collect(),
            ),
            stored: c.stores[0],
            stale: c.stores[1],
            reclaimed_bodies: c.reclaimed_bodies,
            reclaimed_refs: c.reclaimed_refs,
        }
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ReasonJ {
    Hit,
    MissingRef,
    MissingTag,
    TagKeyMismatch,
    StaleRequest,
    NewerRequest,
    TopologyMismatch,
}

impl ReasonJ {
    fn reason(self) -> LookupReason {
        match self {
            ReasonJ::Hit => LookupReason::Hit,
            ReasonJ::MissingRef => LookupReason::MissingRef,
            ReasonJ::MissingTag => LookupReason::MissingTag,
            ReasonJ::TagKeyMismatch => LookupReason::TagKeyMismatch,
            ReasonJ::StaleRequest => LookupReason::StaleRequest,
            ReasonJ::NewerRequest => LookupReason::NewerRequest,
            ReasonJ::TopologyMismatch => LookupReason::TopologyMismatch,
        }
    }
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum StoreJ {
    Stored,
    Stale,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum CommitJ {
    Applied,
    NoTag,
    AlreadyCurrent,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum PartitionResultJ {
    Ok,
    UnassignedSlot,
    LengthMismatch,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum HandleResultJ {
    Ok,
    UnknownOp,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum CalledJ {
    Get,
    Update,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RequestJ {
    op: String,
    channel_id: String,
    channel_type: u8,
    tag_key: String,
    tag_version: u64,
    target_node_id: u64,
    tag: TagJ,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct ResponseJ {
    status: String,
    leader_id: u64,
    result: String,
    tag: TagJ,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // one step at a time, parsed and dropped
enum Step {
    Build {
        node: String,
        request: BuildJ,
        expect: TagJ,
    },
    BuildEphemeral {
        node: String,
        request: BuildJ,
        expect: TagJ,
    },
    LeaderLookup {
        node: String,
        channel_key: String,
        request: LookupJ,
        expect: ReasonJ,
        #[serde(deserialize_with = "Option::deserialize")]
        tag: Option<TagJ>,
    },
    LeaderLookupTag {
        node: String,
        tag_key: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<TagJ>,
    },
    LeaderCurrent {
        node: String,
        channel_key: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<TagJ>,
    },
    LeaderIsSourceStale {
        node: String,
        channel_key: String,
        source_channel_key: String,
        source_version: u64,
        expect: bool,
    },
    LeaderCleanup {
        node: String,
        now: i64,
        limit: usize,
        expect: PageJ,
    },
    LeaderBodies {
        node: String,
        expect: usize,
    },
    LeaderCounts {
        node: String,
        expect: CountsJ,
    },
    BeginMutation {
        node: String,
        channel_key: String,
        #[serde(rename = "as")]
        name: String,
    },
    MutationAdd {
        mutation: String,
        node_id: u64,
        uids: Vec<String>,
    },
    MutationRemove {
        mutation: String,
        uids: Vec<String>,
    },
    MutationReset {
        mutation: String,
    },
    MutationCommit {
        mutation: String,
        store_version: u64,
        expect: CommitJ,
        #[serde(deserialize_with = "Option::deserialize")]
        tag: Option<TagJ>,
    },
    MutationAbandon {
        mutation: String,
    },
    IsDirty {
        node: String,
        channel_key: String,
        expect: bool,
    },
    Usable {
        node: String,
        channel_key: String,
        authoritative_version: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<TagJ>,
    },
    Handle {
        node: String,
        channel_key: String,
        #[serde(rename = "as")]
        name: String,
    },
    Store {
        node: String,
        #[serde(deserialize_with = "Option::deserialize")]
        handle: Option<String>,
        tag: TagJ,
        expect: StoreJ,
        body: TagJ,
    },
    CacheLookup {
        node: String,
        #[serde(deserialize_with = "Option::deserialize")]
        channel_key: Option<String>,
        #[serde(deserialize_with = "Option::deserialize")]
        handle: Option<String>,
        request: LookupJ,
        expect: ReasonJ,
        #[serde(deserialize_with = "Option::deserialize")]
        tag: Option<TagJ>,
    },
    CacheLookupTag {
        node: String,
        channel_key: String,
        tag_key: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<TagJ>,
    },
    CacheCurrent {
        node: String,
        channel_key: String,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<TagJ>,
    },
    CacheIsSourceStale {
        node: String,
        channel_key: String,
        source_channel_key: String,
        source_version: u64,
        expect: bool,
    },
    CacheCleanup {
        node: String,
        now: i64,
        limit: usize,
        expect: PageJ,
    },
    CacheChannels {
        node: String,
        expect: usize,
    },
    CacheCounts {
        node: String,
        expect: CountsJ,
    },
    Advance {
        node: String,
        by: u64,
    },
    PartitionByNode {
        uids: Vec<String>,
        slots: Vec<u32>,
        slot_nodes: Vec<u64>,
        expect: PartitionResultJ,
        #[serde(deserialize_with = "Option::deserialize")]
        slot_id: Option<u32>,
        #[serde(deserialize_with = "Option::deserialize")]
        partitions: Option<Vec<PartitionJ>>,
    },
    RpcHandle {
        channel_leader: u64,
        local_node_id: u64,
        request: RequestJ,
        provider: ResponseJ,
        expect: HandleResultJ,
        #[serde(deserialize_with = "Option::deserialize")]
        called: Option<CalledJ>,
        #[serde(deserialize_with = "Option::deserialize")]
        response: Option<ResponseJ>,
    },
    RpcRedirect {
        called_node_id: u64,
        status: String,
        leader_id: u64,
        #[serde(deserialize_with = "Option::deserialize")]
        expect: Option<u64>,
    },
    CodecRequest {
        request: RequestJ,
        hex: String,
    },
    CodecResponse {
        response: ResponseJ,
        hex: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Comparable values.

/// A tag as compared: every field, the topology by value, UIDs as bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TagV {
    key: Vec<u8>,
    channel_key: Vec<u8>,
    tag_version: u64,
    subscriber_mutation_version: u64,
    source_channel_key: Vec<u8>,
    source_subscriber_mutation_version: u64,
    topology: (u64, Vec<SlotAuthorityRef>),
    partitions: Vec<(u64, Vec<Vec<u8>>)>,
    created_at: i64,
    last_access: i64,
}

impl TagV {
    fn of(tag: &DeliveryTag) -> Self {
        TagV {
            key: tag.key().into(),
            channel_key: tag.channel_key().into(),
            tag_version: tag.tag_version(),
            subscriber_mutation_version: tag.subscriber_mutation_version(),
            source_channel_key: tag.source_channel_key().into(),
            source_subscriber_mutation_version: tag.source_subscriber_mutation_version(),
            topology: (
                tag.topology().hash_slot_table_version,
                tag.topology().refs.to_vec(),
            ),
            partitions: tag
                .partitions()
                .iter()
                .map(|p| (p.node_id, p.uids.iter().map(<[u8]>::to_vec).collect()))
                .collect(),
            created_at: tag.created_at(),
            last_access: tag.last_access(),
        }
    }

    fn of_wire(tag: &WireTag) -> Self {
        TagV {
            key: tag.key.clone(),
            channel_key: tag.channel_key.clone(),
            tag_version: tag.tag_version,
            subscriber_mutation_version: tag.subscriber_mutation_version,
            source_channel_key: tag.source_channel_key.clone(),
            source_subscriber_mutation_version: tag.source_subscriber_mutation_version,
            topology: (
                tag.topology.hash_slot_table_version,
                tag.topology
                    .refs
                    .iter()
                    .map(|r| SlotAuthorityRef {
                        slot_id: r.slot_id,
                        leader_node_id: r.leader_node_id,
                        config_epoch: r.config_epoch,
                        balance_version: r.balance_version,
                    })
                    .collect(),
            ),
            partitions: tag
                .partitions
                .iter()
                .map(|p| (p.node_id, p.uids.clone()))
                .collect(),
            created_at: tag.created_at_unix_ns,
            last_access: tag.last_access_unix_ns,
        }
    }
}

/// A response as compared.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ResponseV {
    status: String,
    leader_id: u64,
    result: String,
    tag: TagV,
}

impl ResponseV {
    fn of(r: &TagResponse) -> Self {
        ResponseV {
            status: String::from_utf8_lossy(&r.status).into_owned(),
            leader_id: r.leader_id,
            result: String::from_utf8_lossy(&r.result).into_owned(),
            tag: TagV::of_wire(&r.tag),
        }
    }
}

fn uid_lists(partitions: &[PartitionJ]) -> Vec<(u64, Vec<Vec<u8>>)> {
    partitions
        .iter()
        .map(|p| {
            (
                p.node_id,
                p.uids.iter().map(|u| u.as_bytes().to_vec()).collect(),
            )
        })
        .collect()
}

fn node_partitions(partitions: &[PartitionJ]) -> Vec<NodePartition> {
    partitions
        .iter()
        .map(|p| NodePartition::new(p.node_id, &p.uids).expect("a partition"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The replay.

struct Node {
    clock: Arc<ManualClock>,
    leader: TagLeader,
    cache: PartitionCache,
    /// Keeps the node's metrics registry alive for its run.
    _metrics: Registry,
}

struct Run {
    topologies: HashMap<String, PartitionTopology>,
    nodes: HashMap<String, Node>,
    handles: HashMap<String, (String, ChannelHandle)>,
    /// A mutation's entry becomes `None` once committed or abandoned.
    mutations: HashMap<String, Option<Mutation>>,
}

/// A step's outcome: `Ok` when it matched, else what the library did.
type Outcome = Result<(), String>;

fn expect_eq<T: PartialEq + fmt::Debug>(got: T, want: T) -> Outcome {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:?}, expected {want:?}"))
    }
}

/// The scripted provider of `rpc_handle`: answers its response and records which call it got.
struct Provider {
    response: TagResponse,
    called: Cell<Option<CalledJ>>,
}

impl Provider {
    fn answer(&self, call: CalledJ) -> TagResponse {
        assert!(self.called.get().is_none(), "the provider called twice");
        self.called.set(Some(call));
        self.response.clone()
    }
}

impl TagAuthority for Provider {
    fn get(&self, _: &TagRequest) -> TagResponse {
        self.answer(CalledJ::Get)
    }
    fn update(&self, _: &TagRequest) -> TagResponse {
        self.answer(CalledJ::Update)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(
        s.len() % 2 == 0
            && s.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
        "hex: lowercase pairs only: {s:?}"
    );
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

impl Run {
    fn new(s: &Scenario) -> Self {
        let mut topologies = HashMap::new();
        for t in &s.topologies {
            let refs: Vec<SlotAuthorityRef> = t
                .refs
                .iter()
                .map(|r| SlotAuthorityRef {
                    slot_id: r.slot_id,
                    leader_node_id: r.leader_node_id,
                    config_epoch: r.config_epoch,
                    balance_version: r.balance_version,
                })
                .collect();
            let value = PartitionTopology::new(t.hash_slot_table_version, &refs);
            assert!(
                topologies.insert(t.name.clone(), value).is_none(),
                "topology {:?} named twice",
                t.name
            );
        }
        let mut nodes = HashMap::new();
        for n in &s.nodes {
            let clock = Arc::new(ManualClock::new(n.start));
            let metrics = Registry::new();
            let node = Node {
                leader: TagLeader::with_metrics(
                    LeaderOptions {
                        local_node_id: n.local_node_id,
                        ttl_nanos: n.ttl,
                        clock: clock.clone(),
                        keys: Arc::new(SequentialTagKeys::new(&n.key_prefix)),
                    },
                    &metrics,
                ),
                cache: PartitionCache::with_metrics(
                    CacheOptions {
                        local_node_id: n.local_node_id,
                        ttl_nanos: n.ttl,
                        clock: clock.clone(),
                    },
                    &metrics,
                ),
                clock,
                _metrics: metrics,
            };
            assert!(
                nodes.insert(n.name.clone(), node).is_none(),
                "node {:?} named twice",
                n.name
            );
        }
        Run {
            topologies,
            nodes,
            handles: HashMap::new(),
            mutations: HashMap::new(),
        }
    }

    fn topology(&self, name: &str) -> &PartitionTopology {
        self.topologies
            .get(name)
            .unwrap_or_else(|| panic!("no topology named {name:?}"))
    }

    fn node(&self, name: &str) -> &Node {
        self.nodes
            .get(name)
            .unwrap_or_else(|| panic!("no node named {name:?}"))
    }

    fn handle(&self, node: &str, name: &str) -> &ChannelHandle {
        let (owner, h) = self
            .handles
            .get(name)
            .unwrap_or_else(|| panic!("no handle named {name:?}"));
        assert_eq!(owner, node, "handle {name:?} is node {owner:?}'s");
        h
    }

    fn mutation(&mut self, name: &str) -> &mut Mutation {
        self.mutations
            .get_mut(name)
            .unwrap_or_else(|| panic!("no mutation named {name:?}"))
            .as_mut()
            .unwrap_or_else(|| panic!("mutation {name:?} already ended"))
    }

    fn take_mutation(&mut self, name: &str) -> Mutation {
        self.mutations
            .get_mut(name)
            .unwrap_or_else(|| panic!("no mutation named {name:?}"))
            .take()
            .unwrap_or_else(|| panic!("mutation {name:?} already ended"))
    }

    fn tag_v(&self, t: &TagJ) -> TagV {
        let topology = self.topology(&t.topology);
        TagV {
            key: t.key.as_bytes().to_vec(),
            channel_key: t.channel_key.as_bytes().to_vec(),
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            source_channel_key: t.source_channel_key.as_bytes().to_vec(),
            source_subscriber_mutation_version: t.source_subscriber_mutation_version,
            topology: (topology.hash_slot_table_version, topology.refs.to_vec()),
            partitions: uid_lists(&t.partitions),
            created_at: t.created_at,
            last_access: t.last_access,
        }
    }

    fn parts(&self, t: &TagJ) -> TagParts {
        TagParts {
            key: t.key.as_str().into(),
            channel_key: t.channel_key.as_str().into(),
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            source_channel_key: t.source_channel_key.as_str().into(),
            source_subscriber_mutation_version: t.source_subscriber_mutation_version,
            topology: self.topology(&t.topology).clone(),
            partitions: node_partitions(&t.partitions),
            created_at: t.created_at,
            last_access: t.last_access,
        }
    }

    fn wire(&self, t: &TagJ) -> WireTag {
        let topology = self.topology(&t.topology);
        WireTag {
            key: t.key.as_bytes().to_vec(),
            channel_key: t.channel_key.as_bytes().to_vec(),
            tag_version: t.tag_version,
            subscriber_mutation_version: t.subscriber_mutation_version,
            source_channel_key: t.source_channel_key.as_bytes().to_vec(),
            source_subscriber_mutation_version: t.source_subscriber_mutation_version,
            topology: WireTopology {
                hash_slot_table_version: topology.hash_slot_table_version,
                refs: topology
                    .refs
                    .iter()
                    .map(|r| WireSlotRef {
                        slot_id: r.slot_id,
                        leader_node_id: r.leader_node_id,
                        config_epoch: r.config_epoch,
                        balance_version: r.balance_version,
                    })
                    .collect(),
            },
            partitions: t
                .partitions
                .iter()
                .map(|p| WirePartition {
                    node_id: p.node_id,
                    uids: p.uids.iter().map(|u| u.as_bytes().to_vec()).collect(),
                })
                .collect(),
            created_at_unix_ns: t.created_at,
            last_access_unix_ns: t.last_access,
        }
    }

    fn request(&self, r: &RequestJ) -> TagRequest {
        TagRequest {
            op: r.op.as_bytes().to_vec(),
            channel_id: r.channel_id.as_bytes().to_vec(),
            channel_type: r.channel_type,
            tag_key: r.tag_key.as_bytes().to_vec(),
            tag_version: r.tag_version,
            target_node_id: r.target_node_id,
            tag: self.wire(&r.tag),
        }
    }

    fn response(&self, r: &ResponseJ) -> TagResponse {
        TagResponse {
            status: r.status.as_bytes().to_vec(),
            leader_id: r.leader_id,
            result: r.result.as_bytes().to_vec(),
            tag: self.wire(&r.tag),
        }
    }

    fn response_v(&self, r: &ResponseJ) -> ResponseV {
        ResponseV {
            status: r.status.clone(),
            leader_id: r.leader_id,
            result: r.result.clone(),
            tag: self.tag_v(&r.tag),
        }
    }

    fn opt_tag_v(&self, t: &Option<TagJ>) -> Option<TagV> {
        t.as_ref().map(|t| self.tag_v(t))
    }

    fn lookup_request<'a>(&'a self, r: &'a LookupJ) -> LookupRequest<'a> {
        LookupRequest {
            tag_key: &r.tag_key,
            tag_version: r.tag_version,
            subscriber_mutation_version: r.subscriber_mutation_version,
            source_channel_key: &r.source_channel_key,
            source_subscriber_mutation_version: r.source_subscriber_mutation_version,
            topology: self.topology(&r.topology).view(),
        }
    }

    fn build_request<'a>(&self, r: &'a BuildJ) -> BuildRequest<'a> {
        BuildRequest {
            channel_key: &r.channel_key,
            subscriber_mutation_version: r.subscriber_mutation_version,
            source_channel_key: &r.source_channel_key,
            source_subscriber_mutation_version: r.source_subscriber_mutation_version,
            topology: self.topology(&r.topology).clone(),
            partitions: node_partitions(&r.partitions),
            mint_fresh_key: r.mint_fresh_key,
        }
    }

    fn step(&mut self, step: Step) -> Outcome {
        match step {
            Step::Build {
                node,
                request,
                expect,
            } => {
                let tag = self.node(&node).leader.build(self.build_request(&request));
                expect_eq(TagV::of(&tag), self.tag_v(&expect))
            }
            Step::BuildEphemeral {
                node,
                request,
                expect,
            } => {
                assert!(
                    !request.mint_fresh_key,
                    "build_ephemeral: mint_fresh_key must be false"
                );
                let tag = self
                    .node(&node)
                    .leader
                    .build_ephemeral(self.build_request(&request));
                expect_eq(TagV::of(&tag), self.tag_v(&expect))
            }
            Step::LeaderLookup {
                node,
                channel_key,
                request,
                expect,
                tag,
            } => {
                let got = self
                    .node(&node)
                    .leader
                    .lookup(&channel_key, &self.lookup_request(&request));
                expect_eq(
                    (got.reason(), got.tag().map(TagV::of)),
                    (expect.reason(), self.opt_tag_v(&tag)),
                )
            }
            Step::LeaderLookupTag {
                node,
                tag_key,
                expect,
            } => {
                let got = self.node(&node).leader.lookup_tag(&tag_key);
                expect_eq(got.as_deref().map(TagV::of), self.opt_tag_v(&expect))
            }
            Step::LeaderCurrent {
                node,
                channel_key,
                expect,
            } => {
                let leader = &self.node(&node).leader;
                let got = leader.current(&channel_key);
                expect_eq(got.as_deref().map(TagV::of), self.opt_tag_v(&expect))?;
                expect_eq(
                    leader.current_ref(&channel_key),
                    got.as_deref().map(DeliveryTag::tag_ref),
                )
            }
            Step::LeaderIsSourceStale {
                node,
                channel_key,
                source_channel_key,
                source_version,
                expect,
            } => expect_eq(
                self.node(&node).leader.is_source_stale(
                    &channel_key,
                    &source_channel_key,
                    source_version,
                ),
                expect,
            ),
            Step::LeaderCleanup {
                node,
                now,
                limit,
                expect,
            } => expect_eq(
                PageJ::from(self.node(&node).leader.cleanup_expired(now, limit)),
                expect,
            ),
            Step::LeaderBodies { node, expect } => {
                expect_eq(self.node(&node).leader.bodies(), expect)
            }
            Step::LeaderCounts { node, expect } => {
                expect_eq(CountsJ::from(self.node(&node).leader.counts()), expect)
            }
            Step::BeginMutation {
                node,
                channel_key,
                name,
            } => {
                assert!(
                    !self.mutations.contains_key(&name),
                    "mutation {name:?} named twice"
                );
                let m = self.node(&node).leader.begin_mutation(&channel_key);
                self.mutations.insert(name, Some(m));
                Ok(())
            }
            Step::MutationAdd {
                mutation,
                node_id,
                uids,
            } => {
                self.mutation(&mutation).add(node_id, &uids);
                Ok(())
            }
            Step::MutationRemove { mutation, uids } => {
                self.mutation(&mutation).remove(&uids);
                Ok(())
            }
            Step::MutationReset { mutation } => {
                self.mutation(&mutation).reset();
                Ok(())
            }
            Step::MutationCommit {
                mutation,
                store_version,
                expect,
                tag,
            } => {
                assert_eq!(
                    tag.is_none(),
                    expect == CommitJ::NoTag,
                    "mutation_commit: tag null exactly for no_tag"
                );
                let got = match self.take_mutation(&mutation).commit(store_version) {
                    Ok(MutationOutcome::Applied(t)) => (CommitJ::Applied, Some(TagV::of(&t))),
                    Ok(MutationOutcome::AlreadyCurrent(t)) => {
                        (CommitJ::AlreadyCurrent, Some(TagV::of(&t)))
                    }
                    Ok(MutationOutcome::NoTag) => (CommitJ::NoTag, None),
                    Err(e) => return Err(format!("commit failed: {e:?}")),
                };
                expect_eq(got, (expect, self.opt_tag_v(&tag)))
            }
            Step::MutationAbandon { mutation } => {
                drop(self.take_mutation(&mutation));
                Ok(())
            }
            Step::IsDirty {
                node,
                channel_key,
                expect,
            } => expect_eq(self.node(&node).leader.is_dirty(&channel_key), expect),
            Step::Usable {
                node,
                channel_key,
                authoritative_version,
                expect,
            } => {
                let got = self
                    .node(&node)
                    .leader
                    .usable(&channel_key, authoritative_version);
                expect_eq(got.as_deref().map(TagV::of), self.opt_tag_v(&expect))
            }
            Step::Handle {
                node,
                channel_key,
                name,
            } => {
                assert!(
                    !self.handles.contains_key(&name),
                    "handle {name:?} named twice"
                );
                let h = self.node(&node).cache.handle(&channel_key);
                self.handles.insert(name, (node, h));
                Ok(())
            }
            Step::Store {
                node,
                handle,
                tag,
                expect,
                body,
            } => {
                let parts = self.parts(&tag);
                let got = match &handle {
                    None => self.node(&node).cache.store(&parts),
                    Some(h) => self.handle(&node, h).store(&parts),
                };
                let result = match got {
                    StoreOutcome::Stored(_) => StoreJ::Stored,
                    StoreOutcome::Stale(_) => StoreJ::Stale,
                };
                expect_eq((result, TagV::of(got.tag())), (expect, self.tag_v(&body)))
            }
            Step::CacheLookup {
                node,
                channel_key,
                handle,
                request,
                expect,
                tag,
            } => {
                let req = self.lookup_request(&request);
                let got = match (&channel_key, &handle) {
                    (Some(channel), None) => self.node(&node).cache.lookup(channel, &req),
                    (None, Some(h)) => self.handle(&node, h).lookup(&req),
                    _ => panic!("cache_lookup: exactly one of channel_key and handle"),
                };
                expect_eq(
                    (got.reason(), got.tag().map(TagV::of)),
                    (expect.reason(), self.opt_tag_v(&tag)),
                )
            }
            Step::CacheLookupTag {
                node,
                channel_key,
                tag_key,
                expect,
            } => {
                let got = self.node(&node).cache.lookup_tag(&channel_key, &tag_key);
                expect_eq(got.as_deref().map(TagV::of), self.opt_tag_v(&expect))
            }
            Step::CacheCurrent {
                node,
                channel_key,
                expect,
            } => {
                let cache = &self.node(&node).cache;
                let got = cache.current(&channel_key);
                expect_eq(got.as_deref().map(TagV::of), self.opt_tag_v(&expect))?;
                expect_eq(
                    cache.current_ref(&channel_key),
                    got.as_deref().map(DeliveryTag::tag_ref),
                )
            }
            Step::CacheIsSourceStale {
                node,
                channel_key,
                source_channel_key,
                source_version,
                expect,
            } => expect_eq(
                self.node(&node).cache.is_source_stale(
                    &channel_key,
                    &source_channel_key,
                    source_version,
                ),
                expect,
            ),
            Step::CacheCleanup {
                node,
                now,
                limit,
                expect,
            } => expect_eq(
                PageJ::from(self.node(&node).cache.cleanup_expired(now, limit)),
                expect,
            ),
            Step::CacheChannels { node, expect } => {
                expect_eq(self.node(&node).cache.channels(), expect)
            }
            Step::CacheCounts { node, expect } => {
                expect_eq(CountsJ::from(self.node(&node).cache.counts()), expect)
            }
            Step::Advance { node, by } => {
                self.node(&node).clock.advance(by);
                Ok(())
            }
            Step::PartitionByNode {
                uids,
                slots,
                slot_nodes,
                expect,
                slot_id,
                partitions,
            } => {
                assert_eq!(
                    slot_id.is_some(),
                    expect == PartitionResultJ::UnassignedSlot,
                    "partition_by_node: slot_id exactly for unassigned_slot"
                );
                assert_eq!(
                    partitions.is_some(),
                    expect == PartitionResultJ::Ok,
                    "partition_by_node: partitions exactly for ok"
                );
                let got = match partition_by_node(&uids, &slots, &slot_nodes) {
                    Ok(ps) => (
                        PartitionResultJ::Ok,
                        None,
                        Some(
                            ps.iter()
                                .map(|p| (p.node_id, p.uids.iter().map(<[u8]>::to_vec).collect()))
                                .collect::<Vec<_>>(),
                        ),
                    ),
                    Err(TagError::UnassignedSlot { slot_id }) => {
                        (PartitionResultJ::UnassignedSlot, Some(slot_id), None)
                    }
                    Err(TagError::LengthMismatch) => (PartitionResultJ::LengthMismatch, None, None),
                    Err(e) => return Err(format!("got {e:?}")),
                };
                expect_eq(got, (expect, slot_id, partitions.as_deref().map(uid_lists)))
            }
            Step::RpcHandle {
                channel_leader,
                local_node_id,
                request,
                provider,
                expect,
                called,
                response,
            } => {
                assert_eq!(
                    response.is_some(),
                    expect == HandleResultJ::Ok,
                    "rpc_handle: response exactly for ok"
                );
                let req = self.request(&request);
                let authority = Provider {
                    response: self.response(&provider),
                    called: Cell::new(None),
                };
                let got = match rpc::handle(&req, channel_leader, local_node_id, &authority) {
                    Ok(r) => (HandleResultJ::Ok, Some(ResponseV::of(&r))),
                    Err(HandleError::UnknownOp(op)) => {
                        expect_eq(op, req.op.clone())?;
                        (HandleResultJ::UnknownOp, None)
                    }
                };
                expect_eq(
                    (got, authority.called.get()),
                    (
                        (expect, response.as_ref().map(|r| self.response_v(r))),
                        called,
                    ),
                )
            }
            Step::RpcRedirect {
                called_node_id,
                status,
                leader_id,
                expect,
            } => {
                let r = TagResponse {
                    status: status.into_bytes(),
                    leader_id,
                    ..TagResponse::default()
                };
                expect_eq(rpc::redirect(called_node_id, &r), expect)
            }
            Step::CodecRequest { request, hex: want } => {
                let req = self.request(&request);
                expect_eq(hex(&encode_request(&req)), want.clone())?;
                match decode_request(&unhex(&want)) {
                    Ok(back) => expect_eq(back, req),
                    Err(e) => Err(format!("decode: {e}")),
                }
            }
            Step::CodecResponse {
                response,
                hex: want,
            } => {
                let resp = self.response(&response);
                expect_eq(hex(&encode_response(&resp)), want.clone())?;
                match decode_response(&unhex(&want)) {
                    Ok(back) => expect_eq(back, resp),
                    Err(e) => Err(format!("decode: {e}")),
                }
            }
        }
    }
}

/// Runs one scenario; returns its mismatch, if any (the scenario stops at its first).
fn run(s: &Scenario) -> Option<String> {
    let mut run = Run::new(s);
    let mut failure = None;
    for (i, raw) in s.steps.iter().enumerate() {
        let step: Step = serde_json::from_value(raw.clone())
            .unwrap_or_else(|e| panic!("{}: step {i}: {e}: {raw}", s.name));
        // A step that breaks the format's rules (an unknown name, a null that must not be)
        // panics; say where.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.step(step)))
            .unwrap_or_else(|p| {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{}: step {i}: {raw}: an error of the file: {why}", s.name)
            });
        if let Err(got) = outcome {
            failure = Some(format!("{}: step {i}: {raw}: {got}", s.name));
            break;
        }
    }
    // Mutations a mismatch left open end here, as abandoned; that must not panic either.
    let open = std::mem::take(&mut run.mutations);
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(open))).is_err() {
        let why = format!("{}: abandoning the open mutations panicked", s.name);
        failure = Some(match failure {
            Some(f) => format!("{f}\n{why}"),
            None => why,
        });
    }
    failure
}

fn snake_case(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[test]
fn tag_scenarios_replay() {
    let text = std::fs::read_to_string(SCENARIOS).unwrap();
    let strict: StrictFile = serde_json::from_str(&text).expect("the file, strictly");
    let file: File = serde_json::from_str(&text).expect("the file");
    assert_eq!(file.system, "tag");
    assert_eq!(strict.scenarios.len(), file.scenarios.len());
    assert!(
        file.scenarios.len() >= MIN_SCENARIOS,
        "{} scenarios, expected at least {MIN_SCENARIOS}",
        file.scenarios.len()
    );
    let mut names = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for raw in file.scenarios {
        let s: Scenario = serde_json::from_value(raw).expect("a scenario");
        assert!(names.insert(s.name.clone()), "{} twice", s.name);
        assert!(snake_case(&s.name), "{}: not snake_case", s.name);
        assert!(!s.upstream.is_empty(), "{}: an empty upstream", s.name);
        failures.extend(run(&s));
    }
    for upstream in UPSTREAM_SCENARIOS {
        assert!(names.contains(upstream), "no scenario {upstream}");
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
