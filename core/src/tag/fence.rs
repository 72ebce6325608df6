//! The look-up fence and the follower's stale-store rule, as pure functions of a current tag and
//! a request, so the cache, the leader and the reference model share one definition.

use super::types::{DeliveryTag, TopologyView};

/// Why a look-up hit or missed, in upstream's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LookupReason {
    /// The request matches the current tag.
    Hit = 0,
    /// No tag is current for the channel.
    MissingRef = 1,
    /// The current reference has no body (kept for upstream parity: this cache publishes a
    /// reference and its body as one snapshot, so it never reports it).
    MissingTag = 2,
    /// The request names another incarnation.
    TagKeyMismatch = 3,
    /// The request is older than the current tag.
    StaleRequest = 4,
    /// The request is newer than the current tag (fetch it).
    NewerRequest = 5,
    /// The request was built against another topology (fetch again).
    TopologyMismatch = 6,
}

impl LookupReason {
    /// Every reason, in code order.
    pub const ALL: [LookupReason; 7] = [
        LookupReason::Hit,
        LookupReason::MissingRef,
        LookupReason::MissingTag,
        LookupReason::TagKeyMismatch,
        LookupReason::StaleRequest,
        LookupReason::NewerRequest,
        LookupReason::TopologyMismatch,
    ];

    /// Upstream's string (`hit`, `missing_ref`, …), also the metric label.
    pub const fn as_str(self) -> &'static str {
        match self {
            LookupReason::Hit => "hit",
            LookupReason::MissingRef => "missing_ref",
            LookupReason::MissingTag => "missing_tag",
            LookupReason::TagKeyMismatch => "tag_key_mismatch",
            LookupReason::StaleRequest => "stale_request",
            LookupReason::NewerRequest => "newer_request",
            LookupReason::TopologyMismatch => "topology_mismatch",
        }
    }

    /// The reason named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The reason with code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }
}

/// What a look-up is fenced against: the reference the delivery was planned with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LookupRequest<'a> {
    /// The tag key.
    pub tag_key: &'a str,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version (0: not checked).
    pub subscriber_mutation_version: u64,
    /// The source channel (empty: not checked).
    pub source_channel_key: &'a str,
    /// The source's subscriber mutation version (0: not checked).
    pub source_subscriber_mutation_version: u64,
    /// The topology.
    pub topology: TopologyView<'a>,
}

/// Steps 3 to 9 of upstream's fence, in order, against the current tag.
#[inline]
pub fn fence(current: &DeliveryTag, request: &LookupRequest<'_>) -> LookupReason {
    use std::cmp::Ordering::{Greater, Less};
    if *current.key != *request.tag_key {
        return LookupReason::TagKeyMismatch;
    }
    match request.tag_version.cmp(&current.tag_version) {
        Less => return LookupReason::StaleRequest,
        Greater => return LookupReason::NewerRequest,
        _ => {}
    }
    if request.subscriber_mutation_version != 0 {
        match request
            .subscriber_mutation_version
            .cmp(&current.subscriber_mutation_version)
        {
            Less => return LookupReason::StaleRequest,
            Greater => return LookupReason::NewerRequest,
            _ => {}
        }
    }
    if !request.source_channel_key.is_empty()
        && *request.source_channel_key != *current.source_channel_key
    {
        return LookupReason::StaleRequest;
    }
    if request.source_subscriber_mutation_version != 0 {
        match request
            .source_subscriber_mutation_version
            .cmp(&current.source_subscriber_mutation_version)
        {
            Less => return LookupReason::StaleRequest,
            Greater => return LookupReason::NewerRequest,
            _ => {}
        }
    }
    if !current.topology.matches(request.topology) {
        return LookupReason::TopologyMismatch;
    }
    LookupReason::Hit
}

/// The version fields the stale-store rule reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreVersions<'a> {
    /// The tag key.
    pub key: &'a str,
    /// The tag version.
    pub tag_version: u64,
    /// The subscriber mutation version.
    pub subscriber_mutation_version: u64,
    /// The source channel.
    pub source_channel_key: &'a str,
    /// The source's subscriber mutation version.
    pub source_subscriber_mutation_version: u64,
}

impl<'a> StoreVersions<'a> {
    /// A tag's versions.
    pub fn of(tag: &'a DeliveryTag) -> Self {
        Self {
            key: &tag.key,
            tag_version: tag.tag_version,
            subscriber_mutation_version: tag.subscriber_mutation_version,
            source_channel_key: &tag.source_channel_key,
            source_subscriber_mutation_version: tag.source_subscriber_mutation_version,
        }
    }
}

/// Upstream's stale rule: an incoming tag is refused iff its subscriber version is lower, or it
/// has the same source with a lower source version, or the same key with a lower tag version.
/// A new key with an equal or higher subscriber version wins even with a lower tag version; the
/// same key and version overwrites.
#[inline]
pub fn is_stale_store(current: StoreVersions<'_>, incoming: StoreVersions<'_>) -> bool {
    incoming.subscriber_mutation_version < current.subscriber_mutation_version
        || (incoming.source_channel_key == current.source_channel_key
            && incoming.source_subscriber_mutation_version
                < current.source_subscriber_mutation_version)
        || (incoming.key == current.key && incoming.tag_version < current.tag_version)
}
