//! Delivery-tag statuses, 300–399: the core's `TagError`s (texts from `TagError::text`), the
//! leader's "not usable" reasons, and the service-44 codec's decode errors with upstream's exact
//! texts (`access/node: …`), each of which also *is* `WK_STATUS_TAG_INVALID_FRAME`.

use std::ffi::CStr;

use wkcore::codec::delivery_tag::{CountLabel, DeliveryTagError};
use wkcore::codec::CodecError;
use wkcore::tag::TagError;

use crate::status::{wk_status, StatusRange};

/// `TagError::text` as a NUL-terminated constant, built at compile time so the text is written
/// once, in core.
macro_rules! tag_text {
    ($error:expr) => {{
        const TEXT: &str = $error.text();
        const BYTES: [u8; TEXT.len() + 1] = {
            let mut bytes = [0u8; TEXT.len() + 1];
            let src = TEXT.as_bytes();
            let mut i = 0;
            while i < src.len() {
                bytes[i] = src[i];
                i += 1;
            }
            bytes
        };
        const C: &CStr = match CStr::from_bytes_with_nul(&BYTES) {
            Ok(c) => c,
            Err(_) => panic!("a tag error text holds a NUL"),
        };
        C
    }};
}

/// A channel key, tag key or source key that is not UTF-8 (from the ABI or the wire); nothing
/// changed.
pub const WK_STATUS_TAG_INVALID_UTF8: wk_status = wk_status(300);
/// A UID list whose bytes pass `u32::MAX` in all.
pub const WK_STATUS_TAG_TOO_LARGE: wk_status = wk_status(301);
/// A UID whose hash slot has no known node (`slot_nodes[slot]` is 0 or out of range); the build
/// is retryable once the slot table knows it.
pub const WK_STATUS_TAG_UNASSIGNED_SLOT: wk_status = wk_status(302);
/// A UID list and its slot list of different lengths (the ABI passes one count for both, so only
/// the core and other hosts return it).
pub const WK_STATUS_TAG_LENGTH_MISMATCH: wk_status = wk_status(303);
/// An option out of range: a local node id of 0, a key prefix that is not UTF-8, a cache and a
/// leader of different nodes given to one RPC handler.
pub const WK_STATUS_TAG_INVALID_CONFIG: wk_status = wk_status(304);
/// A request whose op is neither `get`, `update` nor empty (upstream's text names the op:
/// `access/node: unknown delivery tag op "<op>"`).
pub const WK_STATUS_TAG_UNKNOWN_OP: wk_status = wk_status(305);
/// `wk_tag_leader_usable`: a membership change of the channel is pending or failed since its
/// last build; rebuild before use.
pub const WK_STATUS_TAG_DIRTY: wk_status = wk_status(306);
/// `wk_tag_leader_usable`: the tag's subscriber mutation version is below the store's; rebuild.
pub const WK_STATUS_TAG_LAGGING: wk_status = wk_status(307);
/// A service-44 frame that does not decode (every decode status below *is* this one), or one
/// longer than `WK_TAG_FRAME_MAX` (refused unread).
pub const WK_STATUS_TAG_INVALID_FRAME: wk_status = wk_status(310);
/// Upstream's `invalid delivery tag request codec`: a bad request magic.
pub const WK_STATUS_TAG_INVALID_REQUEST_CODEC: wk_status = wk_status(311);
/// Upstream's `invalid delivery tag response codec`: a bad response magic.
pub const WK_STATUS_TAG_INVALID_RESPONSE_CODEC: wk_status = wk_status(312);
/// Upstream's `short uvarint`.
pub const WK_STATUS_TAG_SHORT_UVARINT: wk_status = wk_status(313);
/// Upstream's `invalid uvarint`.
pub const WK_STATUS_TAG_INVALID_UVARINT: wk_status = wk_status(314);
/// Upstream's `short bytes`.
pub const WK_STATUS_TAG_SHORT_BYTES: wk_status = wk_status(315);
/// Upstream's `short delivery tag channel type`.
pub const WK_STATUS_TAG_SHORT_CHANNEL_TYPE: wk_status = wk_status(316);
/// Upstream's `short varint`.
pub const WK_STATUS_TAG_SHORT_VARINT: wk_status = wk_status(317);
/// Upstream's `invalid varint`.
pub const WK_STATUS_TAG_INVALID_VARINT: wk_status = wk_status(318);
/// Upstream's `trailing delivery tag request bytes`.
pub const WK_STATUS_TAG_TRAILING_REQUEST_BYTES: wk_status = wk_status(319);
/// Upstream's `trailing delivery tag response bytes`.
pub const WK_STATUS_TAG_TRAILING_RESPONSE_BYTES: wk_status = wk_status(320);
/// Upstream's `delivery tag topology refs count overflows int`.
pub const WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT: wk_status = wk_status(321);
/// Upstream's `delivery tag partitions count overflows int`.
pub const WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT: wk_status = wk_status(322);
/// Upstream's `delivery tag partition uids count overflows int`.
pub const WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT: wk_status = wk_status(323);
/// Upstream's `delivery tag topology refs count exceeds remaining bytes`.
pub const WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING: wk_status = wk_status(324);
/// Upstream's `delivery tag partitions count exceeds remaining bytes`.
pub const WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING: wk_status = wk_status(325);
/// Upstream's `delivery tag partition uids count exceeds remaining bytes`.
pub const WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING: wk_status = wk_status(326);

/// The codec's decode statuses, each an identity of `WK_STATUS_TAG_INVALID_FRAME`.
const DECODE: [wk_status; 16] = [
    WK_STATUS_TAG_INVALID_REQUEST_CODEC,
    WK_STATUS_TAG_INVALID_RESPONSE_CODEC,
    WK_STATUS_TAG_SHORT_UVARINT,
    WK_STATUS_TAG_INVALID_UVARINT,
    WK_STATUS_TAG_SHORT_BYTES,
    WK_STATUS_TAG_SHORT_CHANNEL_TYPE,
    WK_STATUS_TAG_SHORT_VARINT,
    WK_STATUS_TAG_INVALID_VARINT,
    WK_STATUS_TAG_TRAILING_REQUEST_BYTES,
    WK_STATUS_TAG_TRAILING_RESPONSE_BYTES,
    WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT,
    WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT,
    WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT,
    WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING,
    WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING,
    WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING,
];

/// `(status, WK_STATUS_TAG_INVALID_FRAME)` for every decode status.
const DECODE_WRAPS: [(wk_status, wk_status); 16] = {
    let mut wraps = [(wk_status(0), WK_STATUS_TAG_INVALID_FRAME); 16];
    let mut i = 0;
    while i < DECODE.len() {
        wraps[i].0 = DECODE[i];
        i += 1;
    }
    wraps
};

/// The delivery-tag range.
pub(crate) const RANGE: StatusRange = StatusRange {
    system: "tag",
    first: 300,
    last: 399,
    codes: &[
        (WK_STATUS_TAG_INVALID_UTF8, tag_text!(TagError::InvalidUtf8)),
        (WK_STATUS_TAG_TOO_LARGE, tag_text!(TagError::TooLarge)),
        (
            WK_STATUS_TAG_UNASSIGNED_SLOT,
            tag_text!(TagError::UnassignedSlot { slot_id: 0 }),
        ),
        (
            WK_STATUS_TAG_LENGTH_MISMATCH,
            tag_text!(TagError::LengthMismatch),
        ),
        (
            WK_STATUS_TAG_INVALID_CONFIG,
            tag_text!(TagError::InvalidConfig),
        ),
        (
            WK_STATUS_TAG_UNKNOWN_OP,
            c"access/node: unknown delivery tag op",
        ),
        (
            WK_STATUS_TAG_DIRTY,
            c"deliverytag: tag has a pending or failed mutation",
        ),
        (
            WK_STATUS_TAG_LAGGING,
            c"deliverytag: tag lags the subscriber store",
        ),
        (
            WK_STATUS_TAG_INVALID_FRAME,
            c"access/node: invalid delivery tag frame",
        ),
        (
            WK_STATUS_TAG_INVALID_REQUEST_CODEC,
            c"access/node: invalid delivery tag request codec",
        ),
        (
            WK_STATUS_TAG_INVALID_RESPONSE_CODEC,
            c"access/node: invalid delivery tag response codec",
        ),
        (WK_STATUS_TAG_SHORT_UVARINT, c"access/node: short uvarint"),
        (
            WK_STATUS_TAG_INVALID_UVARINT,
            c"access/node: invalid uvarint",
        ),
        (WK_STATUS_TAG_SHORT_BYTES, c"access/node: short bytes"),
        (
            WK_STATUS_TAG_SHORT_CHANNEL_TYPE,
            c"access/node: short delivery tag channel type",
        ),
        (WK_STATUS_TAG_SHORT_VARINT, c"access/node: short varint"),
        (WK_STATUS_TAG_INVALID_VARINT, c"access/node: invalid varint"),
        (
            WK_STATUS_TAG_TRAILING_REQUEST_BYTES,
            c"access/node: trailing delivery tag request bytes",
        ),
        (
            WK_STATUS_TAG_TRAILING_RESPONSE_BYTES,
            c"access/node: trailing delivery tag response bytes",
        ),
        (
            WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT,
            c"access/node: delivery tag topology refs count overflows int",
        ),
        (
            WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT,
            c"access/node: delivery tag partitions count overflows int",
        ),
        (
            WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT,
            c"access/node: delivery tag partition uids count overflows int",
        ),
        (
            WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING,
            c"access/node: delivery tag topology refs count exceeds remaining bytes",
        ),
        (
            WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING,
            c"access/node: delivery tag partitions count exceeds remaining bytes",
        ),
        (
            WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING,
            c"access/node: delivery tag partition uids count exceeds remaining bytes",
        ),
    ],
    wraps: &DECODE_WRAPS,
};

/// The status of a refused tag call.
pub(crate) fn status_of(error: TagError) -> wk_status {
    match error {
        TagError::InvalidUtf8 => WK_STATUS_TAG_INVALID_UTF8,
        TagError::TooLarge => WK_STATUS_TAG_TOO_LARGE,
        TagError::UnassignedSlot { .. } => WK_STATUS_TAG_UNASSIGNED_SLOT,
        TagError::LengthMismatch => WK_STATUS_TAG_LENGTH_MISMATCH,
        TagError::InvalidConfig => WK_STATUS_TAG_INVALID_CONFIG,
    }
}

/// The status of a service-44 decode error.
pub(crate) fn decode_status_of(error: &CodecError) -> wk_status {
    let CodecError::DeliveryTag(error) = error else {
        return WK_STATUS_TAG_INVALID_FRAME;
    };
    use DeliveryTagError as E;
    match *error {
        E::InvalidRequestCodec => WK_STATUS_TAG_INVALID_REQUEST_CODEC,
        E::InvalidResponseCodec => WK_STATUS_TAG_INVALID_RESPONSE_CODEC,
        E::ShortUvarint => WK_STATUS_TAG_SHORT_UVARINT,
        E::InvalidUvarint => WK_STATUS_TAG_INVALID_UVARINT,
        E::ShortBytes => WK_STATUS_TAG_SHORT_BYTES,
        E::ShortChannelType => WK_STATUS_TAG_SHORT_CHANNEL_TYPE,
        E::ShortVarint => WK_STATUS_TAG_SHORT_VARINT,
        E::InvalidVarint => WK_STATUS_TAG_INVALID_VARINT,
        E::TrailingRequestBytes => WK_STATUS_TAG_TRAILING_REQUEST_BYTES,
        E::TrailingResponseBytes => WK_STATUS_TAG_TRAILING_RESPONSE_BYTES,
        E::CountOverflowsInt(CountLabel::TopologyRefs) => WK_STATUS_TAG_REFS_COUNT_OVERFLOWS_INT,
        E::CountOverflowsInt(CountLabel::Partitions) => {
            WK_STATUS_TAG_PARTITIONS_COUNT_OVERFLOWS_INT
        }
        E::CountOverflowsInt(CountLabel::PartitionUids) => WK_STATUS_TAG_UIDS_COUNT_OVERFLOWS_INT,
        E::CountExceedsRemaining(CountLabel::TopologyRefs) => {
            WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING
        }
        E::CountExceedsRemaining(CountLabel::Partitions) => {
            WK_STATUS_TAG_PARTITIONS_COUNT_EXCEEDS_REMAINING
        }
        E::CountExceedsRemaining(CountLabel::PartitionUids) => {
            WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cores_and_decode_statuses_are_invalid_frame() {
        for e in [
            TagError::InvalidUtf8,
            TagError::TooLarge,
            TagError::UnassignedSlot { slot_id: 9 },
            TagError::LengthMismatch,
            TagError::InvalidConfig,
        ] {
            assert_eq!(status_of(e).text().unwrap().to_str().unwrap(), e.text());
        }
        use DeliveryTagError as E;
        let labels = [
            CountLabel::TopologyRefs,
            CountLabel::Partitions,
            CountLabel::PartitionUids,
        ];
        let mut all = vec![
            E::InvalidRequestCodec,
            E::InvalidResponseCodec,
            E::ShortUvarint,
            E::InvalidUvarint,
            E::ShortBytes,
            E::ShortChannelType,
            E::ShortVarint,
            E::InvalidVarint,
            E::TrailingRequestBytes,
            E::TrailingResponseBytes,
        ];
        all.extend(labels.map(E::CountOverflowsInt));
        all.extend(labels.map(E::CountExceedsRemaining));
        assert_eq!(all.len(), DECODE.len());
        for e in all {
            let st = decode_status_of(&CodecError::DeliveryTag(e));
            assert_eq!(st.text().unwrap().to_str().unwrap(), e.to_string());
            assert!(st.is(WK_STATUS_TAG_INVALID_FRAME));
            assert!(DECODE.contains(&st));
        }
        assert!(!WK_STATUS_TAG_INVALID_UTF8.is(WK_STATUS_TAG_INVALID_FRAME));
        assert_eq!(
            wkcore::tag::rpc::unknown_op_text(b"x"),
            format!(
                "{} \"x\"",
                WK_STATUS_TAG_UNKNOWN_OP.text().unwrap().to_str().unwrap()
            )
        );
    }
}
