//! The delivery-tag RPC's rules (node service 44) as pure functions over the codec's types:
//! routing, the target filter with its synthetic empty partition, the `ok` → `retryable`
//! normalization, the status rewrite, the client's one redirect, and the conversions between
//! wire tags and the core's.

use super::error::TagError;
use super::types::{DeliveryTag, NodePartition, PartitionTopology, SlotAuthorityRef, TagParts};
use crate::codec::delivery_tag::{
    TagRequest, TagResponse, WirePartition, WireSlotRef, WireTag, WireTopology, OP_GET, OP_UPDATE,
    RESULT_TAG_NOT_CURRENT, RESULT_TAG_VERSION_MISMATCH, STATUS_NOT_LEADER, STATUS_OK,
    STATUS_RETRYABLE,
};

/// Which authority call a request makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagOp {
    /// `get` (or an empty op).
    Get,
    /// `update`.
    Update,
}

/// Upstream's op parse: `get` or `""` is a get, `update` an update, anything else an error
/// (`access/node: unknown delivery tag op "<op>"`).
pub fn parse_op(op: &[u8]) -> Option<TagOp> {
    match op {
        b"" => Some(TagOp::Get),
        _ if op == OP_GET => Some(TagOp::Get),
        _ if op == OP_UPDATE => Some(TagOp::Update),
        _ => None,
    }
}

/// The text upstream's handler returns for an unknown op.
pub fn unknown_op_text(op: &[u8]) -> String {
    format!(
        "access/node: unknown delivery tag op \"{}\"",
        String::from_utf8_lossy(op)
    )
}

/// Steps 3 and 4 of the handler: the response to send without calling the authority, if any.
/// A channel with no leader (0) is `retryable` + `tag_not_current`; another leader is
/// `not_leader` with its id.
pub fn route(channel_leader: u64, local_node_id: u64) -> Option<TagResponse> {
    if channel_leader == 0 {
        return Some(TagResponse {
            status: STATUS_RETRYABLE.to_vec(),
            result: RESULT_TAG_NOT_CURRENT.to_vec(),
            ..TagResponse::default()
        });
    }
    if channel_leader != local_node_id {
        return Some(TagResponse {
            status: STATUS_NOT_LEADER.to_vec(),
            leader_id: channel_leader,
            ..TagResponse::default()
        });
    }
    None
}

/// Step 6: with a target node and partitions, keep only the target's partition, or a synthetic
/// empty one for it.
pub fn filter_partitions(tag: &mut WireTag, target_node_id: u64) {
    if target_node_id == 0 || tag.partitions.is_empty() {
        return;
    }
    let kept = tag
        .partitions
        .iter()
        .position(|p| p.node_id == target_node_id)
        .map(|i| tag.partitions.swap_remove(i))
        .unwrap_or(WirePartition {
            node_id: target_node_id,
            uids: Vec::new(),
        });
    tag.partitions.clear();
    tag.partitions.push(kept);
}

/// Step 7: an empty status becomes `ok` and a zero leader the channel's; an `ok` whose tag
/// answers another key (`tag_not_current`) or version (`tag_version_mismatch`) than asked
/// becomes `retryable`; a status of `tag_not_current` or `tag_version_mismatch` is rewritten to
/// `retryable` with the old status as its result if it had none.
pub fn normalize(request: &TagRequest, response: &mut TagResponse, channel_leader: u64) {
    if response.status.is_empty() {
        response.status = STATUS_OK.to_vec();
    }
    if response.leader_id == 0 {
        response.leader_id = channel_leader;
    }
    if response.status == STATUS_OK {
        if !request.tag_key.is_empty()
            && !response.tag.key.is_empty()
            && request.tag_key != response.tag.key
        {
            response.status = STATUS_RETRYABLE.to_vec();
            response.result = RESULT_TAG_NOT_CURRENT.to_vec();
        } else if request.tag_version != 0
            && response.tag.tag_version != 0
            && request.tag_version != response.tag.tag_version
        {
            response.status = STATUS_RETRYABLE.to_vec();
            response.result = RESULT_TAG_VERSION_MISMATCH.to_vec();
        }
    }
    if response.status == RESULT_TAG_NOT_CURRENT || response.status == RESULT_TAG_VERSION_MISMATCH {
        let old = std::mem::replace(&mut response.status, STATUS_RETRYABLE.to_vec());
        if response.result.is_empty() {
            response.result = old;
        }
    }
}

/// The authority a leader's handler calls.
pub trait TagAuthority {
    /// A `get`.
    fn get(&self, request: &TagRequest) -> TagResponse;
    /// An `update`.
    fn update(&self, request: &TagRequest) -> TagResponse;
}

/// Why the handler returned an error instead of a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandleError {
    /// An op other than `get`, `update` or empty (upstream's text: [`unknown_op_text`]).
    UnknownOp(Vec<u8>),
}

/// Upstream's handler after decoding (steps 3 to 7).
pub fn handle(
    request: &TagRequest,
    channel_leader: u64,
    local_node_id: u64,
    authority: &dyn TagAuthority,
) -> Result<TagResponse, HandleError> {
    if let Some(response) = route(channel_leader, local_node_id) {
        return Ok(response);
    }
    let mut response = match parse_op(&request.op) {
        Some(TagOp::Get) => authority.get(request),
        Some(TagOp::Update) => authority.update(request),
        None => return Err(HandleError::UnknownOp(request.op.clone())),
    };
    filter_partitions(&mut response.tag, request.target_node_id);
    normalize(request, &mut response, channel_leader);
    Ok(response)
}

/// The client's redirect rule: follow one `not_leader` to its leader if that is neither 0 nor
/// the node just called.
pub fn redirect(called_node_id: u64, response: &TagResponse) -> Option<u64> {
    (response.status == STATUS_NOT_LEADER
        && response.leader_id != 0
        && response.leader_id != called_node_id)
        .then_some(response.leader_id)
}

fn utf8(bytes: &[u8]) -> Result<Box<str>, TagError> {
    std::str::from_utf8(bytes)
        .map(Into::into)
        .map_err(|_| TagError::InvalidUtf8)
}

/// A wire tag as the core's parts; keys must be UTF-8.
pub fn parts_from_wire(tag: &WireTag) -> Result<TagParts, TagError> {
    let refs: Vec<SlotAuthorityRef> = tag
        .topology
        .refs
        .iter()
        .map(|r| SlotAuthorityRef {
            slot_id: r.slot_id,
            leader_node_id: r.leader_node_id,
            config_epoch: r.config_epoch,
            balance_version: r.balance_version,
        })
        .collect();
    Ok(TagParts {
        key: utf8(&tag.key)?,
        channel_key: utf8(&tag.channel_key)?,
        tag_version: tag.tag_version,
        subscriber_mutation_version: tag.subscriber_mutation_version,
        source_channel_key: utf8(&tag.source_channel_key)?,
        source_subscriber_mutation_version: tag.source_subscriber_mutation_version,
        topology: PartitionTopology::new(tag.topology.hash_slot_table_version, &refs),
        partitions: tag
            .partitions
            .iter()
            .map(|p| NodePartition::new(p.node_id, &p.uids))
            .collect::<Result<_, _>>()?,
        created_at: tag.created_at_unix_ns,
        last_access: tag.last_access_unix_ns,
    })
}

/// A tag as it goes on the wire.
pub fn wire_from_tag(tag: &DeliveryTag) -> WireTag {
    WireTag {
        key: tag.key().as_bytes().to_vec(),
        channel_key: tag.channel_key().as_bytes().to_vec(),
        tag_version: tag.tag_version(),
        subscriber_mutation_version: tag.subscriber_mutation_version(),
        source_channel_key: tag.source_channel_key().as_bytes().to_vec(),
        source_subscriber_mutation_version: tag.source_subscriber_mutation_version(),
        topology: WireTopology {
            hash_slot_table_version: tag.topology().hash_slot_table_version,
            refs: tag
                .topology()
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
        partitions: tag
            .partitions()
            .iter()
            .map(|p| WirePartition {
                node_id: p.node_id,
                uids: p.uids.iter().map(<[u8]>::to_vec).collect(),
            })
            .collect(),
        created_at_unix_ns: tag.created_at(),
        last_access_unix_ns: tag.last_access(),
    }
}

/// The app's authority over one node's tags: `get` answers from the leader's bodies by key
/// (`retryable` + `tag_not_current` on a miss, `ok` with the full body on a hit); `update`
/// stores the request's tag in the follower cache and answers `ok` with the stored or current
/// body (the request's own tag when nothing could be stored).
pub struct NodeAuthority<'a> {
    /// The leader side.
    pub leader: &'a super::TagLeader,
    /// The follower cache.
    pub cache: &'a super::PartitionCache,
}

impl TagAuthority for NodeAuthority<'_> {
    fn get(&self, request: &TagRequest) -> TagResponse {
        let found = std::str::from_utf8(&request.tag_key)
            .ok()
            .and_then(|key| self.leader.lookup_tag(key));
        match found {
            Some(tag) => TagResponse {
                status: STATUS_OK.to_vec(),
                tag: wire_from_tag(&tag),
                ..TagResponse::default()
            },
            None => TagResponse {
                status: STATUS_RETRYABLE.to_vec(),
                result: RESULT_TAG_NOT_CURRENT.to_vec(),
                ..TagResponse::default()
            },
        }
    }

    fn update(&self, request: &TagRequest) -> TagResponse {
        let tag = match parts_from_wire(&request.tag) {
            Ok(parts) => wire_from_tag(self.cache.store(&parts).tag()),
            Err(_) => request.tag.clone(),
        };
        TagResponse {
            status: STATUS_OK.to_vec(),
            tag,
            ..TagResponse::default()
        }
    }
}
