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

/// Byte equality for the fence's keys, inline up to 32 bytes: two overlapping loads from each
/// side cover every byte, so a key compare is a handful of instructions instead of a call to
/// `memcmp` (about 25 of a hit's instructions for a short key); longer keys use the slice
/// compare.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn head_tail<const N: usize>(x: &[u8]) -> ([u8; N], [u8; N]) {
        let n = x.len();
        (
            x[..N].try_into().unwrap_or([0; N]),
            x[n - N..].try_into().unwrap_or([0; N]),
        )
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => {
            let ((a0, a1), (b0, b1)) = (head_tail::<4>(a), head_tail::<4>(b));
            (u32::from_ne_bytes(a0) ^ u32::from_ne_bytes(b0))
                | (u32::from_ne_bytes(a1) ^ u32::from_ne_bytes(b1))
                == 0
        }
        8..=16 => {
            let ((a0, a1), (b0, b1)) = (head_tail::<8>(a), head_tail::<8>(b));
            (u64::from_ne_bytes(a0) ^ u64::from_ne_bytes(b0))
                | (u64::from_ne_bytes(a1) ^ u64::from_ne_bytes(b1))
                == 0
        }
        17..=32 => {
            let ((a0, a1), (b0, b1)) = (head_tail::<16>(a), head_tail::<16>(b));
            (u128::from_ne_bytes(a0) ^ u128::from_ne_bytes(b0))
                | (u128::from_ne_bytes(a1) ^ u128::from_ne_bytes(b1))
                == 0
        }
        _ => a == b,
    }
}

/// Steps 3 to 9 of upstream's fence, in order, against the current tag.
#[inline]
pub fn fence(current: &DeliveryTag, request: &LookupRequest<'_>) -> LookupReason {
    use std::cmp::Ordering::{Greater, Less};
    if !same_bytes(current.key.as_bytes(), request.tag_key.as_bytes()) {
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
        && !same_bytes(
            request.source_channel_key.as_bytes(),
            current.source_channel_key.as_bytes(),
        )
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

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::same_bytes;
    use proptest::prelude::*;

    proptest! {
        /// Equal to the slice compare at every length, for equal keys and for keys that differ
        /// in one byte anywhere (the inline loads must cover every byte).
        #[test]
        fn same_bytes_is_byte_equality(
            a in proptest::collection::vec(any::<u8>(), 0..48),
            at in any::<prop::sample::Index>(),
            flip in 1u8..=255,
            other in proptest::collection::vec(any::<u8>(), 0..48),
        ) {
            prop_assert!(same_bytes(&a, &a.clone()));
            if !a.is_empty() {
                let mut b = a.clone();
                b[at.index(a.len())] ^= flip;
                prop_assert!(!same_bytes(&a, &b));
                prop_assert!(!same_bytes(&b, &a));
            }
            prop_assert_eq!(same_bytes(&a, &other), a == other);
        }
    }
}
