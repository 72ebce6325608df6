//! Upstream's delivery-tag tests (`manager_test.go`, `delivery_tag_rpc_test.go`), one test each,
//! against `wkcore::tag`. Upstream's manager serves both roles; here the leader side is a
//! [`TagLeader`] and the follower side a [`PartitionCache`].

use std::sync::Arc;

use wkcore::clock::ManualClock;
use wkcore::codec::delivery_tag::{
    TagRequest, TagResponse, WirePartition, WireTag, RESULT_TAG_NOT_CURRENT,
    RESULT_TAG_VERSION_MISMATCH, STATUS_NOT_LEADER, STATUS_OK, STATUS_RETRYABLE,
};
use wkcore::metrics::Registry;
use wkcore::tag::rpc::{self, TagAuthority};
use wkcore::tag::*;

const START: u64 = 1_700_000_000_000_000_000;
const SECOND: u64 = 1_000_000_000;

struct Node {
    clock: Arc<ManualClock>,
    leader: TagLeader,
    cache: PartitionCache,
}

fn node(local: u64, ttl: u64, prefix: &str) -> Node {
    let clock = Arc::new(ManualClock::new(START));
    let registry = Registry::new();
    Node {
        leader: TagLeader::with_metrics(
            LeaderOptions {
                local_node_id: local,
                ttl_nanos: ttl,
                clock: clock.clone(),
                keys: Arc::new(SequentialTagKeys::new(prefix)),
            },
            &registry,
        ),
        cache: PartitionCache::with_metrics(
            CacheOptions {
                local_node_id: local,
                ttl_nanos: ttl,
                clock: clock.clone(),
            },
            &registry,
        ),
        clock,
    }
}

fn topo(table: u64, balance: u64) -> PartitionTopology {
    PartitionTopology::new(
        table,
        &[
            SlotAuthorityRef {
                slot_id: 1,
                leader_node_id: 1,
                config_epoch: 1,
                balance_version: balance,
            },
            SlotAuthorityRef {
                slot_id: 2,
                leader_node_id: 2,
                config_epoch: 1,
                balance_version: 1,
            },
        ],
    )
}

fn parts(partitions: &[(u64, &[&str])]) -> Vec<NodePartition> {
    partitions
        .iter()
        .map(|(n, uids)| NodePartition::new(*n, uids.iter()).unwrap())
        .collect()
}

fn uids(tag: &DeliveryTag, node: u64) -> Vec<String> {
    tag.partition(node)
        .map(|p| {
            p.uids
                .iter()
                .map(|u| String::from_utf8(u.to_vec()).unwrap())
                .collect()
        })
        .unwrap_or_default()
}

fn build<'a>(channel: &'a str, smv: u64, partitions: &[(u64, &[&str])]) -> BuildRequest<'a> {
    BuildRequest {
        channel_key: channel,
        subscriber_mutation_version: smv,
        topology: topo(1, 1),
        partitions: parts(partitions),
        ..BuildRequest::default()
    }
}

fn follower_tag(key: &str, version: u64, smv: u64, partitions: &[(u64, &[&str])]) -> TagParts {
    TagParts {
        key: key.into(),
        channel_key: "group:g1".into(),
        tag_version: version,
        subscriber_mutation_version: smv,
        topology: topo(1, 1),
        partitions: parts(partitions),
        ..TagParts::default()
    }
}

fn request<'a>(tag: &'a DeliveryTag) -> LookupRequest<'a> {
    LookupRequest {
        tag_key: tag.key(),
        tag_version: tag.tag_version(),
        subscriber_mutation_version: tag.subscriber_mutation_version(),
        source_channel_key: tag.source_channel_key(),
        source_subscriber_mutation_version: tag.source_subscriber_mutation_version(),
        topology: tag.topology().view(),
    }
}

#[test]
fn tag_version_increments_without_changing_key() {
    let n = node(1, 60 * SECOND, "leader-a");
    let first = n.leader.build(build("group:g1", 1, &[(1, &["u1"])]));
    assert_eq!(first.key(), "leader-a-1");
    assert_eq!(first.tag_version(), 1);
    let second = n.leader.build(build("group:g1", 2, &[(1, &["u1", "u2"])]));
    assert_eq!(second.key(), "leader-a-1");
    assert_eq!(second.tag_version(), 2);
    assert_eq!(uids(&second, 1), ["u1", "u2"]);
    // Partition contents alone do not bump the version.
    let third = n.leader.build(build("group:g1", 2, &[(1, &["u3"])]));
    assert_eq!(third.tag_version(), 2);
}

#[test]
fn follower_caches_only_local_partition_tag() {
    let n = node(2, 60 * SECOND, "f");
    let stored = n.cache.store(&follower_tag(
        "leader-a-1",
        1,
        1,
        &[(1, &["u1"]), (2, &["u2"])],
    ));
    assert!(stored.is_stored());
    let tag = n.cache.lookup_tag("group:g1", "leader-a-1").unwrap();
    assert_eq!(tag.partitions().len(), 1);
    assert_eq!(uids(&tag, 2), ["u2"]);
    assert!(uids(&tag, 1).is_empty());
}

#[test]
fn stale_request_does_not_evict_newer_local_tag() {
    let n = node(2, 60 * SECOND, "f");
    assert!(n
        .cache
        .store(&follower_tag("k", 5, 9, &[(2, &["new"])]))
        .is_stored());
    let cur = n.cache.current("group:g1").unwrap();
    let mut req = request(&cur);
    req.tag_version = 4;
    req.subscriber_mutation_version = 8;
    let got = n.cache.lookup("group:g1", &req);
    assert_eq!(got.reason(), LookupReason::StaleRequest);
    assert_eq!(uids(got.tag().unwrap(), 2), ["new"]);
    assert_eq!(n.cache.current("group:g1").unwrap().tag_version(), 5);
}

#[test]
fn stale_different_tag_key_does_not_evict_newer_local_tag() {
    let n = node(2, 60 * SECOND, "f");
    assert!(n
        .cache
        .store(&follower_tag("fresh", 1, 9, &[(2, &["u"])]))
        .is_stored());
    let old = n.cache.store(&follower_tag("old", 8, 8, &[(2, &["u"])]));
    assert!(!old.is_stored());
    assert_eq!(old.tag().key(), "fresh");
    let r = n.cache.current_ref("group:g1").unwrap();
    assert_eq!(&*r.tag_key, "fresh");
    assert_eq!(r.subscriber_mutation_version, 9);
}

#[test]
fn lookup_local_partition_rejects_subscriber_and_source_fence_mismatch() {
    let n = node(2, 60 * SECOND, "f");
    let mut t = follower_tag("k", 3, 9, &[(2, &["u"])]);
    t.source_channel_key = "group:src".into();
    t.source_subscriber_mutation_version = 5;
    n.cache.store(&t);
    let cur = n.cache.current("group:g1").unwrap();
    let mut req = request(&cur);
    assert!(n.cache.lookup("group:g1", &req).is_hit());
    req.subscriber_mutation_version = 8;
    assert_eq!(
        n.cache.lookup("group:g1", &req).reason(),
        LookupReason::StaleRequest
    );
    let mut req = request(&cur);
    req.source_subscriber_mutation_version = 4;
    assert_eq!(
        n.cache.lookup("group:g1", &req).reason(),
        LookupReason::StaleRequest
    );
}

#[test]
fn partition_topology_mismatch_forces_refetch() {
    let n = node(2, 60 * SECOND, "f");
    n.cache.store(&follower_tag("k", 1, 1, &[(2, &["u"])]));
    let cur = n.cache.current("group:g1").unwrap();
    let other_table = topo(2, 1);
    let mut req = request(&cur);
    req.topology = other_table.view();
    assert_eq!(
        n.cache.lookup("group:g1", &req).reason(),
        LookupReason::TopologyMismatch
    );
    let other_balance = topo(1, 2);
    req.topology = other_balance.view();
    assert_eq!(
        n.cache.lookup("group:g1", &req).reason(),
        LookupReason::TopologyMismatch
    );
}

#[test]
fn ttl_cleanup_removes_cold_tags_and_stale_channel_refs() {
    let n = node(2, SECOND, "f");
    n.cache.store(&follower_tag("k", 1, 1, &[(2, &["u"])]));
    n.clock.advance(2 * SECOND);
    let page = n.cache.cleanup_expired((START + 2 * SECOND) as i64, 256);
    assert_eq!(page.reclaimed, 1);
    assert!(n.cache.current_ref("group:g1").is_none());
    assert!(n.cache.lookup_tag("group:g1", "k").is_none());
    assert_eq!(n.cache.counts().tags, 0);
    assert_eq!(n.cache.counts().uids, 0);
}

#[test]
fn ttl_cleanup_keeps_tags_hit_since_the_previous_cleanup() {
    let n = node(2, SECOND, "f");
    n.cache.store(&follower_tag("k", 1, 1, &[(2, &["u"])]));
    let cur = n.cache.current("group:g1").unwrap();
    assert!(n.cache.lookup("group:g1", &request(&cur)).is_hit());
    let now = (START + 2 * SECOND) as i64;
    assert_eq!(
        n.cache.cleanup_expired(now, 256).reclaimed,
        0,
        "hit in this tick"
    );
    assert_eq!(
        n.cache.cleanup_expired(now + SECOND as i64, 256).reclaimed,
        0,
        "the tick ended at `now`, one TTL ago"
    );
    assert_eq!(
        n.cache
            .cleanup_expired(now + 2 * SECOND as i64, 256)
            .reclaimed,
        1
    );
}

#[test]
fn derived_tag_stale_when_source_subscriber_mutation_version_advances() {
    let n = node(1, 60 * SECOND, "leader-a");
    let mut req = build("cmd:group:x", 1, &[(1, &["u"])]);
    req.source_channel_key = "group:x";
    req.source_subscriber_mutation_version = 10;
    n.leader.build(req);
    assert!(!n.leader.is_source_stale("cmd:group:x", "group:x", 10));
    assert!(n.leader.is_source_stale("cmd:group:x", "group:x", 11));
    assert!(!n.leader.is_source_stale("cmd:group:x", "group:y", 11));
    assert!(!n.leader.is_source_stale("nothing", "group:x", 11));
}

#[test]
fn leader_incarnation_can_mint_fresh_tag_key() {
    let leader = node(1, 60 * SECOND, "leader-b");
    let follower = node(2, 60 * SECOND, "f");
    follower
        .cache
        .store(&follower_tag("leader-a-1", 8, 9, &[(2, &["u"])]));
    let old = follower.cache.current("group:g1").unwrap();
    let mut req = build("group:g1", 9, &[(2, &["u"])]);
    req.mint_fresh_key = true;
    let fresh = leader.leader.build(req);
    assert_eq!(fresh.key(), "leader-b-1");
    assert_eq!(fresh.tag_version(), 1);
    assert!(follower.cache.store(&fresh.to_parts()).is_stored());
    assert_eq!(
        follower.cache.lookup("group:g1", &request(&old)).reason(),
        LookupReason::TagKeyMismatch
    );
    assert_eq!(
        &*follower.cache.current_ref("group:g1").unwrap().tag_key,
        "leader-b-1"
    );
}

#[test]
fn build_ephemeral_tag_does_not_replace_current_ref() {
    let n = node(1, 60 * SECOND, "leader-a");
    let cur = n.leader.build(build("group:g1", 1, &[(1, &["u"])]));
    let eph = n
        .leader
        .build_ephemeral(build("group:g1", 1, &[(1, &["x"])]));
    assert_ne!(eph.key(), cur.key());
    assert_eq!(n.leader.current_ref("group:g1").unwrap(), cur.tag_ref());
    assert!(n.leader.lookup("group:g1", &request(&cur)).is_hit());
    assert_eq!(uids(&n.leader.lookup_tag(eph.key()).unwrap(), 1), ["x"]);
}

#[test]
fn ephemeral_bodies_are_reclaimed() {
    let n = node(1, SECOND, "leader-a");
    for _ in 0..100 {
        n.leader
            .build_ephemeral(build("group:g1", 1, &[(1, &["x"])]));
    }
    assert_eq!(n.leader.bodies(), 100);
    let now = (START + 2 * SECOND) as i64;
    let mut reclaimed = 0;
    loop {
        let page = n.leader.cleanup_expired(now, 16);
        reclaimed += page.reclaimed;
        if page.visited == 0 {
            break;
        }
    }
    assert_eq!(reclaimed, 100);
    assert_eq!(n.leader.bodies(), 0);
}

#[test]
fn membership_changes_bump_once_and_keep_the_key() {
    let n = node(1, 60 * SECOND, "leader-a");
    n.leader
        .build(build("group:g1", 5, &[(1, &["a"]), (2, &["b"])]));
    let mut m = n.leader.begin_mutation("group:g1");
    assert!(n.leader.is_dirty("group:g1"));
    assert!(n.leader.usable("group:g1", 5).is_none());
    m.add(2, ["c"]);
    m.add(3, ["d"]);
    m.remove(["a"]);
    let MutationOutcome::Applied(tag) = m.commit(6).unwrap() else {
        panic!("applied")
    };
    assert_eq!(tag.key(), "leader-a-1");
    assert_eq!(tag.tag_version(), 2);
    assert_eq!(tag.subscriber_mutation_version(), 6);
    assert!(uids(&tag, 1).is_empty());
    assert_eq!(uids(&tag, 2), ["b", "c"]);
    assert_eq!(uids(&tag, 3), ["d"]);
    assert!(!n.leader.is_dirty("group:g1"));
    assert!(n.leader.usable("group:g1", 6).is_some());
    assert!(n.leader.usable("group:g1", 7).is_none(), "lagging");

    let mut m = n.leader.begin_mutation("group:g1");
    m.reset();
    m.add(1, ["z"]);
    let MutationOutcome::Applied(tag) = m.commit(7).unwrap() else {
        panic!("applied")
    };
    assert_eq!(tag.tag_version(), 3);
    assert_eq!(tag.uid_count(), 1);

    // A failed store write leaves the channel dirty until a rebuild.
    drop(n.leader.begin_mutation("group:g1"));
    assert!(n.leader.usable("group:g1", 7).is_none());
    n.leader.build(build("group:g1", 7, &[(1, &["z"])]));
    assert!(n.leader.usable("group:g1", 7).is_some());

    // No tag: nothing is recorded.
    let m = n.leader.begin_mutation("group:none");
    assert!(matches!(m.commit(1).unwrap(), MutationOutcome::NoTag));
    assert!(n.leader.current("group:none").is_none());
}

#[test]
fn partition_by_node_groups_by_slot_owner() {
    let p = partition_by_node(&["a", "b", "c"], &[0, 1, 0], &[2, 1]).unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].node_id, 1);
    assert_eq!(p[1].uids.len(), 2);
    assert_eq!(
        partition_by_node(&["a"], &[5], &[2, 1]),
        Err(TagError::UnassignedSlot { slot_id: 5 })
    );
}

struct Authority<'a>(&'a TagLeader, TagResponse);

impl TagAuthority for Authority<'_> {
    fn get(&self, _: &TagRequest) -> TagResponse {
        self.1.clone()
    }
    fn update(&self, _: &TagRequest) -> TagResponse {
        let _ = self.0;
        self.1.clone()
    }
}

fn wire(key: &str, version: u64, partitions: &[(u64, &[&str])]) -> WireTag {
    WireTag {
        key: key.as_bytes().to_vec(),
        tag_version: version,
        partitions: partitions
            .iter()
            .map(|(n, u)| WirePartition {
                node_id: *n,
                uids: u.iter().map(|s| s.as_bytes().to_vec()).collect(),
            })
            .collect(),
        ..WireTag::default()
    }
}

#[test]
fn delivery_tag_rpc_rejects_non_leader_update() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        op: b"update".to_vec(),
        ..TagRequest::default()
    };
    let r = rpc::handle(&req, 2, 1, &Authority(&n.leader, TagResponse::default())).unwrap();
    assert_eq!(r.status, STATUS_NOT_LEADER);
    assert_eq!(r.leader_id, 2);
}

#[test]
fn delivery_tag_rpc_returns_only_local_partition_for_fetch() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        op: b"get".to_vec(),
        target_node_id: 2,
        ..TagRequest::default()
    };
    let full = TagResponse {
        tag: wire("t", 1, &[(1, &["u1"]), (2, &["u2"])]),
        ..TagResponse::default()
    };
    let r = rpc::handle(&req, 1, 1, &Authority(&n.leader, full)).unwrap();
    assert_eq!(r.status, STATUS_OK);
    assert_eq!(r.leader_id, 1);
    assert_eq!(r.tag.partitions, wire("", 0, &[(2, &["u2"])]).partitions);
}

#[test]
fn delivery_tag_rpc_returns_empty_local_partition_when_target_has_no_subscribers() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        target_node_id: 2,
        ..TagRequest::default()
    };
    let full = TagResponse {
        tag: wire("t", 1, &[(1, &["u1"])]),
        ..TagResponse::default()
    };
    let r = rpc::handle(&req, 1, 1, &Authority(&n.leader, full)).unwrap();
    assert_eq!(r.tag.partitions, wire("", 0, &[(2, &[])]).partitions);
}

#[test]
fn delivery_tag_rpc_converts_mismatched_ok_fence_to_retryable() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        tag_key: b"old".to_vec(),
        ..TagRequest::default()
    };
    let cur = TagResponse {
        status: STATUS_OK.to_vec(),
        tag: wire("new", 1, &[]),
        ..TagResponse::default()
    };
    let r = rpc::handle(&req, 1, 1, &Authority(&n.leader, cur)).unwrap();
    assert_eq!(r.status, STATUS_RETRYABLE);
    assert_eq!(r.result, RESULT_TAG_NOT_CURRENT);
    assert_eq!(r.tag.key, b"new");
}

#[test]
fn delivery_tag_rpc_converts_version_mismatch_ok_fence_to_retryable() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        tag_key: b"k".to_vec(),
        tag_version: 1,
        ..TagRequest::default()
    };
    let cur = TagResponse {
        tag: wire("k", 2, &[]),
        ..TagResponse::default()
    };
    let r = rpc::handle(&req, 1, 1, &Authority(&n.leader, cur)).unwrap();
    assert_eq!(r.status, STATUS_RETRYABLE);
    assert_eq!(r.result, RESULT_TAG_VERSION_MISMATCH);
}

#[test]
fn delivery_tag_client_preserves_retryable_statuses() {
    let n = node(1, SECOND, "l");
    let req = TagRequest::default();
    let cur = TagResponse {
        status: RESULT_TAG_VERSION_MISMATCH.to_vec(),
        ..TagResponse::default()
    };
    let r = rpc::handle(&req, 1, 1, &Authority(&n.leader, cur)).unwrap();
    assert_eq!(r.status, STATUS_RETRYABLE);
    assert_eq!(r.result, RESULT_TAG_VERSION_MISMATCH);
    assert_eq!(rpc::redirect(1, &r), None);
    let redirect = TagResponse {
        status: STATUS_NOT_LEADER.to_vec(),
        leader_id: 3,
        ..TagResponse::default()
    };
    assert_eq!(rpc::redirect(1, &redirect), Some(3));
    assert_eq!(rpc::redirect(3, &redirect), None);
}

#[test]
fn unknown_op_is_an_error_with_upstreams_text() {
    let n = node(1, SECOND, "l");
    let req = TagRequest {
        op: b"drop".to_vec(),
        ..TagRequest::default()
    };
    let err = rpc::handle(&req, 1, 1, &Authority(&n.leader, TagResponse::default())).unwrap_err();
    assert_eq!(err, rpc::HandleError::UnknownOp(b"drop".to_vec()));
    assert_eq!(
        rpc::unknown_op_text(b"drop"),
        "access/node: unknown delivery tag op \"drop\""
    );
}
