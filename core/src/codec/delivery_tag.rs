//! Delivery tag RPC codec: node RPC service [`SERVICE_ID`] (44).
//!
//! A node asks a channel's tag owner to read or update one delivery tag, the snapshot of a
//! channel's subscriber partitions that message delivery fans out over; the owner answers with a
//! status and the current tag (upstream `internal/access/node/delivery_tag_codec.go`).
//!
//! Unlike the other codecs here the frame has no fixed-width integers: `uv` is an unsigned
//! LEB128 varint (Go `binary.PutUvarint`, at most [`MAX_VARINT_LEN`] bytes), `sv` a zig-zag
//! signed varint (Go `binary.PutVarint`), `str` a `uv` byte length followed by the bytes, and
//! `u8` one byte.
//!
//! | frame | layout |
//! |---|---|
//! | request | [`REQUEST_MAGIC`] `WKDT\x01`, `str` op, `str` channel id, `u8` channel type, `str` tag key, `uv` tag version, `uv` target node id, tag |
//! | response | [`RESPONSE_MAGIC`] `WKDG\x01`, `str` status, `uv` leader id, `str` result, tag |
//! | tag | `str` key, `str` channel key, `uv` tag version, `uv` subscriber mutation version, `str` source channel key, `uv` source subscriber mutation version, topology, partitions, `sv` created at, `sv` last access |
//! | topology | `uv` hash slot table version, `uv` ref count, per ref: `uv` slot id, `uv` leader node id, `uv` config epoch, `uv` balance version |
//! | partitions | `uv` partition count, per partition: `uv` node id, `uv` uid count, `str` uid × uid count |
//!
//! Strings are Go strings, that is bytes: neither side checks UTF-8, so they are `Vec<u8>` here.
//! The decoder consumes exactly every byte and reports the first failure as a
//! [`CodecError::DeliveryTag`] whose [`DeliveryTagError`] renders the exact upstream text.
//!
//! # Upstream asymmetries kept on purpose
//!
//! - The decoder accepts non-minimal varints (`80 00` is 0), as Go's `Uvarint` does; the encoder
//!   writes minimal ones, so decode → encode does not reproduce such frames.
//! - A slot id is written as a `u32` but read as a full `uv` and truncated to its low 32 bits
//!   (upstream `uint32(v)`): 2³² + 5 decodes as 5.
//! - The op, status and result strings are not checked against the known values
//!   ([`OP_GET`], [`STATUS_OK`], ...): the codec carries any bytes, the tag service interprets
//!   them.
//!
//! # Allocation bound
//!
//! Every collection count is checked against the bytes left after it before anything is
//! allocated, and each element takes at least one byte of input, so a hostile count cannot make
//! the decoder reserve more elements than the input has bytes.

use super::CodecError;
use core::fmt;

/// Node RPC service ID of the delivery tag RPC (upstream `clusternet.RPCDeliveryTag`, a `uint8`).
pub const SERVICE_ID: u8 = 44;

/// Magic of a request frame, format byte included: `WKDT\x01`.
pub const REQUEST_MAGIC: [u8; 5] = *b"WKDT\x01";

/// Magic of a response frame, format byte included: `WKDG\x01`.
pub const RESPONSE_MAGIC: [u8; 5] = *b"WKDG\x01";

/// Longest varint Go writes or reads (`binary.MaxVarintLen64`).
pub const MAX_VARINT_LEN: usize = 10;

/// Request op: read the current tag.
pub const OP_GET: &[u8] = b"get";

/// Request op: update the tag.
pub const OP_UPDATE: &[u8] = b"update";

/// Response status: the owner handled the request.
pub const STATUS_OK: &[u8] = b"ok";

/// Response status: the node is not the tag's leader; the response's leader id names the one it
/// knows (0 when it knows none).
pub const STATUS_NOT_LEADER: &[u8] = b"not_leader";

/// Response status: a transient failure; the caller may retry.
pub const STATUS_RETRYABLE: &[u8] = b"retryable";

/// Response result: the tag the caller named is no longer the current one.
pub const RESULT_TAG_NOT_CURRENT: &[u8] = b"tag_not_current";

/// Response result: the tag version the caller named differs from the owner's.
pub const RESULT_TAG_VERSION_MISMATCH: &[u8] = b"tag_version_mismatch";

/// A delivery tag request as it travels on the wire (upstream `deliveryTagRequest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TagRequest {
    /// What to do: normally [`OP_GET`] or [`OP_UPDATE`]; not checked by the codec.
    pub op: Vec<u8>,
    /// Channel the tag belongs to.
    pub channel_id: Vec<u8>,
    /// Channel type.
    pub channel_type: u8,
    /// Key of the tag the caller holds.
    pub tag_key: Vec<u8>,
    /// Version of the tag the caller holds.
    pub tag_version: u64,
    /// Node the request is meant for.
    pub target_node_id: u64,
    /// The tag carried by the request (an update's new tag; empty for a read).
    pub tag: WireTag,
}

/// A delivery tag response as it travels on the wire (upstream `deliveryTagResponse`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TagResponse {
    /// Outcome: normally [`STATUS_OK`], [`STATUS_NOT_LEADER`] or [`STATUS_RETRYABLE`]; not
    /// checked by the codec.
    pub status: Vec<u8>,
    /// Leader node the responder knows of (with [`STATUS_NOT_LEADER`]); 0 when none.
    pub leader_id: u64,
    /// Detail of the outcome: empty, [`RESULT_TAG_NOT_CURRENT`] or
    /// [`RESULT_TAG_VERSION_MISMATCH`]; not checked by the codec.
    pub result: Vec<u8>,
    /// The responder's tag.
    pub tag: WireTag,
}

/// A delivery tag as it travels on the wire (upstream `deliveryTagWire`); the tag system
/// converts it to and from its own type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct WireTag {
    /// The tag's key.
    pub key: Vec<u8>,
    /// Key of the channel the tag snapshots.
    pub channel_key: Vec<u8>,
    /// The tag's version.
    pub tag_version: u64,
    /// Subscriber mutation version of the channel the tag was built from.
    pub subscriber_mutation_version: u64,
    /// Key of the channel the tag was derived from (empty when none).
    pub source_channel_key: Vec<u8>,
    /// Subscriber mutation version of the source channel.
    pub source_subscriber_mutation_version: u64,
    /// Slot topology the partitions were computed against.
    pub topology: WireTopology,
    /// Subscribers, partitioned by the node that delivers to them.
    pub partitions: Vec<WirePartition>,
    /// Creation time in Unix nanoseconds; 0 stands for Go's zero `time.Time`.
    pub created_at_unix_ns: i64,
    /// Last access time in Unix nanoseconds; 0 stands for Go's zero `time.Time`.
    pub last_access_unix_ns: i64,
}

/// The Slot topology a tag was computed against (upstream `deliveryTagTopologyWire`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct WireTopology {
    /// Version of the hash slot table.
    pub hash_slot_table_version: u64,
    /// One entry per Slot the tag's subscribers hash to.
    pub refs: Vec<WireSlotRef>,
}

/// One Slot of a [`WireTopology`] (upstream `deliveryTagSlotRefWire`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct WireSlotRef {
    /// The Slot. Written as its `u32` value; a larger wire value is truncated on decode.
    pub slot_id: u32,
    /// The Slot's leader node.
    pub leader_node_id: u64,
    /// The Slot's config epoch.
    pub config_epoch: u64,
    /// The Slot's balance version.
    pub balance_version: u64,
}

/// The subscribers one node delivers to (upstream `deliveryTagPartitionWire`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct WirePartition {
    /// The delivering node.
    pub node_id: u64,
    /// Its subscribers' uids.
    pub uids: Vec<Vec<u8>>,
}

/// Which collection count of a tag failed its check ([`DeliveryTagError::CountOverflowsInt`],
/// [`DeliveryTagError::CountExceedsRemaining`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CountLabel {
    /// The topology's ref count. Label: `delivery tag topology refs`.
    TopologyRefs,
    /// The partition count. Label: `delivery tag partitions`.
    Partitions,
    /// One partition's uid count. Label: `delivery tag partition uids`.
    PartitionUids,
}

impl CountLabel {
    /// The upstream label, as it appears in the error texts.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TopologyRefs => "delivery tag topology refs",
            Self::Partitions => "delivery tag partitions",
            Self::PartitionUids => "delivery tag partition uids",
        }
    }
}

/// Why a delivery tag frame failed to decode; carried by [`CodecError::DeliveryTag`].
///
/// `Display` renders the exact upstream text, always prefixed with `access/node: `.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryTagError {
    /// The input does not start with [`REQUEST_MAGIC`] (too short, wrong magic or format).
    ///
    /// Text: `access/node: invalid delivery tag request codec`.
    InvalidRequestCodec,
    /// The input does not start with [`RESPONSE_MAGIC`].
    ///
    /// Text: `access/node: invalid delivery tag response codec`.
    InvalidResponseCodec,
    /// The input ends inside an unsigned varint.
    ///
    /// Text: `access/node: short uvarint`.
    ShortUvarint,
    /// An unsigned varint overflows 64 bits (a 10th byte over 1, or more than 10 bytes).
    ///
    /// Text: `access/node: invalid uvarint`.
    InvalidUvarint,
    /// A string is longer than the bytes left.
    ///
    /// Text: `access/node: short bytes`.
    ShortBytes,
    /// The request ends before its channel type byte.
    ///
    /// Text: `access/node: short delivery tag channel type`.
    ShortChannelType,
    /// The input ends inside a signed varint.
    ///
    /// Text: `access/node: short varint`.
    ShortVarint,
    /// A signed varint overflows 64 bits.
    ///
    /// Text: `access/node: invalid varint`.
    InvalidVarint,
    /// Bytes follow a complete request.
    ///
    /// Text: `access/node: trailing delivery tag request bytes`.
    TrailingRequestBytes,
    /// Bytes follow a complete response.
    ///
    /// Text: `access/node: trailing delivery tag response bytes`.
    TrailingResponseBytes,
    /// A collection count does not fit Go's `int` (over `i64::MAX`).
    ///
    /// Text: `access/node: <label> count overflows int`.
    CountOverflowsInt(CountLabel),
    /// A collection count is larger than the bytes left after it.
    ///
    /// Text: `access/node: <label> count exceeds remaining bytes`.
    CountExceedsRemaining(CountLabel),
}

impl fmt::Display for DeliveryTagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("access/node: ")?;
        match self {
            Self::InvalidRequestCodec => f.write_str("invalid delivery tag request codec"),
            Self::InvalidResponseCodec => f.write_str("invalid delivery tag response codec"),
            Self::ShortUvarint => f.write_str("short uvarint"),
            Self::InvalidUvarint => f.write_str("invalid uvarint"),
            Self::ShortBytes => f.write_str("short bytes"),
            Self::ShortChannelType => f.write_str("short delivery tag channel type"),
            Self::ShortVarint => f.write_str("short varint"),
            Self::InvalidVarint => f.write_str("invalid varint"),
            Self::TrailingRequestBytes => f.write_str("trailing delivery tag request bytes"),
            Self::TrailingResponseBytes => f.write_str("trailing delivery tag response bytes"),
            Self::CountOverflowsInt(label) => write!(f, "{} count overflows int", label.as_str()),
            Self::CountExceedsRemaining(label) => {
                write!(f, "{} count exceeds remaining bytes", label.as_str())
            }
        }
    }
}

impl std::error::Error for DeliveryTagError {}

impl From<DeliveryTagError> for CodecError {
    fn from(err: DeliveryTagError) -> Self {
        Self::DeliveryTag(err)
    }
}

/// Encodes `request` as a new frame (upstream `encodeDeliveryTagRequest`). Cannot fail.
#[must_use]
pub fn encode_request(request: &TagRequest) -> Vec<u8> {
    let mut out = Vec::new();
    encode_request_into(request, &mut out);
    out
}

/// Appends `request` to `out` as a frame.
pub fn encode_request_into(request: &TagRequest, out: &mut Vec<u8>) {
    out.extend_from_slice(&REQUEST_MAGIC);
    put_bytes(out, &request.op);
    put_bytes(out, &request.channel_id);
    out.push(request.channel_type);
    put_bytes(out, &request.tag_key);
    put_uvarint(out, request.tag_version);
    put_uvarint(out, request.target_node_id);
    put_tag(out, &request.tag);
}

/// Encodes `response` as a new frame (upstream `encodeDeliveryTagResponse`). Cannot fail.
#[must_use]
pub fn encode_response(response: &TagResponse) -> Vec<u8> {
    let mut out = Vec::new();
    encode_response_into(response, &mut out);
    out
}

/// Appends `response` to `out` as a frame.
pub fn encode_response_into(response: &TagResponse, out: &mut Vec<u8>) {
    out.extend_from_slice(&RESPONSE_MAGIC);
    put_bytes(out, &response.status);
    put_uvarint(out, response.leader_id);
    put_bytes(out, &response.result);
    put_tag(out, &response.tag);
}

/// Decodes a request frame, copying every field (upstream `decodeDeliveryTagRequest`).
///
/// # Errors
///
/// [`CodecError::DeliveryTag`] with the first failure met, reading front to back:
/// [`DeliveryTagError::InvalidRequestCodec`] for a missing or wrong [`REQUEST_MAGIC`];
/// [`ShortUvarint`](DeliveryTagError::ShortUvarint),
/// [`InvalidUvarint`](DeliveryTagError::InvalidUvarint),
/// [`ShortBytes`](DeliveryTagError::ShortBytes),
/// [`ShortChannelType`](DeliveryTagError::ShortChannelType),
/// [`ShortVarint`](DeliveryTagError::ShortVarint),
/// [`InvalidVarint`](DeliveryTagError::InvalidVarint),
/// [`CountOverflowsInt`](DeliveryTagError::CountOverflowsInt) or
/// [`CountExceedsRemaining`](DeliveryTagError::CountExceedsRemaining) for a bad field; and
/// [`TrailingRequestBytes`](DeliveryTagError::TrailingRequestBytes) for bytes after the tag.
pub fn decode_request(bytes: &[u8]) -> Result<TagRequest, CodecError> {
    let body = bytes
        .strip_prefix(&REQUEST_MAGIC[..])
        .ok_or(DeliveryTagError::InvalidRequestCodec)?;
    let mut r = Reader(body);
    let op = r.bytes()?;
    let channel_id = r.bytes()?;
    let channel_type = r.byte().ok_or(DeliveryTagError::ShortChannelType)?;
    let tag_key = r.bytes()?;
    let tag_version = r.uvarint()?;
    let target_node_id = r.uvarint()?;
    let tag = r.tag()?;
    if !r.0.is_empty() {
        return Err(DeliveryTagError::TrailingRequestBytes.into());
    }
    Ok(TagRequest {
        op,
        channel_id,
        channel_type,
        tag_key,
        tag_version,
        target_node_id,
        tag,
    })
}

/// Decodes a response frame, copying every field (upstream `decodeDeliveryTagResponse`).
///
/// # Errors
///
/// As [`decode_request`], with [`DeliveryTagError::InvalidResponseCodec`] for a missing or wrong
/// [`RESPONSE_MAGIC`] and [`DeliveryTagError::TrailingResponseBytes`] for bytes after the tag
/// (a response has no channel type byte).
pub fn decode_response(bytes: &[u8]) -> Result<TagResponse, CodecError> {
    let body = bytes
        .strip_prefix(&RESPONSE_MAGIC[..])
        .ok_or(DeliveryTagError::InvalidResponseCodec)?;
    let mut r = Reader(body);
    let status = r.bytes()?;
    let leader_id = r.uvarint()?;
    let result = r.bytes()?;
    let tag = r.tag()?;
    if !r.0.is_empty() {
        return Err(DeliveryTagError::TrailingResponseBytes.into());
    }
    Ok(TagResponse {
        status,
        leader_id,
        result,
        tag,
    })
}

/// Appends `v` as a minimal unsigned LEB128 varint (Go `binary.AppendUvarint`).
fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // Keeps the low 7 bits; the cast cannot lose any of them.
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` as a zig-zag signed varint (Go `binary.AppendVarint`).
fn put_varint(out: &mut Vec<u8>, v: i64) {
    put_uvarint(out, zigzag(v));
}

/// Appends `len(b)` as a uvarint, then `b`.
fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    // usize is at most 64 bits on every supported target.
    put_uvarint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends the tag section.
fn put_tag(out: &mut Vec<u8>, tag: &WireTag) {
    put_bytes(out, &tag.key);
    put_bytes(out, &tag.channel_key);
    put_uvarint(out, tag.tag_version);
    put_uvarint(out, tag.subscriber_mutation_version);
    put_bytes(out, &tag.source_channel_key);
    put_uvarint(out, tag.source_subscriber_mutation_version);
    put_uvarint(out, tag.topology.hash_slot_table_version);
    put_uvarint(out, tag.topology.refs.len() as u64);
    for slot_ref in &tag.topology.refs {
        put_uvarint(out, u64::from(slot_ref.slot_id));
        put_uvarint(out, slot_ref.leader_node_id);
        put_uvarint(out, slot_ref.config_epoch);
        put_uvarint(out, slot_ref.balance_version);
    }
    put_uvarint(out, tag.partitions.len() as u64);
    for partition in &tag.partitions {
        put_uvarint(out, partition.node_id);
        put_uvarint(out, partition.uids.len() as u64);
        for uid in &partition.uids {
            put_bytes(out, uid);
        }
    }
    put_varint(out, tag.created_at_unix_ns);
    put_varint(out, tag.last_access_unix_ns);
}

/// Go's zig-zag mapping of a signed varint: 0, -1, 1, -2, ... → 0, 1, 2, 3, ...
const fn zigzag(v: i64) -> u64 {
    // Reinterprets the bits, as Go's `uint64(x) << 1` does.
    let ux = (v as u64) << 1;
    if v < 0 {
        !ux
    } else {
        ux
    }
}

/// The inverse of [`zigzag`].
const fn unzigzag(ux: u64) -> i64 {
    // ux >> 1 < 2^63, so the cast is exact.
    let x = (ux >> 1) as i64;
    if ux & 1 != 0 {
        !x
    } else {
        x
    }
}

/// How a varint failed to parse (Go's `n == 0` and `n < 0`).
enum VarintFail {
    /// The input ended first.
    Short,
    /// More than 64 bits.
    Overflow,
}

/// Parses one unsigned varint exactly as Go's `binary.Uvarint` does: the value and the bytes it
/// took.
fn uvarint(buf: &[u8]) -> Result<(u64, usize), VarintFail> {
    let mut x = 0u64;
    let mut s = 0u32;
    for (i, &b) in buf.iter().enumerate() {
        if i == MAX_VARINT_LEN {
            return Err(VarintFail::Overflow);
        }
        if b < 0x80 {
            if i == MAX_VARINT_LEN - 1 && b > 1 {
                return Err(VarintFail::Overflow);
            }
            return Ok((x | (u64::from(b) << s), i + 1));
        }
        // s is at most 63 here (i <= 9), so the shift is in range.
        x |= u64::from(b & 0x7f) << s;
        s += 7;
    }
    Err(VarintFail::Short)
}

/// A cursor over the unread rest of a frame.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    /// One byte, or `None` at the end.
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    /// An unsigned varint.
    fn uvarint(&mut self) -> Result<u64, DeliveryTagError> {
        let (v, n) = uvarint(self.0).map_err(|fail| match fail {
            VarintFail::Short => DeliveryTagError::ShortUvarint,
            VarintFail::Overflow => DeliveryTagError::InvalidUvarint,
        })?;
        self.0 = self.0.get(n..).unwrap_or_default();
        Ok(v)
    }

    /// A zig-zag signed varint.
    fn varint(&mut self) -> Result<i64, DeliveryTagError> {
        let (v, n) = uvarint(self.0).map_err(|fail| match fail {
            VarintFail::Short => DeliveryTagError::ShortVarint,
            VarintFail::Overflow => DeliveryTagError::InvalidVarint,
        })?;
        self.0 = self.0.get(n..).unwrap_or_default();
        Ok(unzigzag(v))
    }

    /// A uvarint-length-prefixed byte string, copied.
    fn bytes(&mut self) -> Result<Vec<u8>, DeliveryTagError> {
        let n = self.uvarint()?;
        let n = usize::try_from(n).map_err(|_| DeliveryTagError::ShortBytes)?;
        let (b, rest) = self
            .0
            .split_at_checked(n)
            .ok_or(DeliveryTagError::ShortBytes)?;
        self.0 = rest;
        Ok(b.to_vec())
    }

    /// A collection count: at most `i64::MAX` (Go `int`) and at most the bytes left after it.
    fn count(&mut self, label: CountLabel) -> Result<usize, DeliveryTagError> {
        let n = self.uvarint()?;
        if i64::try_from(n).is_err() {
            return Err(DeliveryTagError::CountOverflowsInt(label));
        }
        match usize::try_from(n) {
            Ok(n) if n <= self.0.len() => Ok(n),
            _ => Err(DeliveryTagError::CountExceedsRemaining(label)),
        }
    }

    /// The tag section.
    fn tag(&mut self) -> Result<WireTag, DeliveryTagError> {
        let key = self.bytes()?;
        let channel_key = self.bytes()?;
        let tag_version = self.uvarint()?;
        let subscriber_mutation_version = self.uvarint()?;
        let source_channel_key = self.bytes()?;
        let source_subscriber_mutation_version = self.uvarint()?;
        let hash_slot_table_version = self.uvarint()?;
        let count = self.count(CountLabel::TopologyRefs)?;
        let mut refs = Vec::with_capacity(count);
        for _ in 0..count {
            // Upstream `uint32(slotID)`: keeps the low 32 bits.
            let slot_id = self.uvarint()? as u32;
            refs.push(WireSlotRef {
                slot_id,
                leader_node_id: self.uvarint()?,
                config_epoch: self.uvarint()?,
                balance_version: self.uvarint()?,
            });
        }
        let count = self.count(CountLabel::Partitions)?;
        let mut partitions = Vec::with_capacity(count);
        for _ in 0..count {
            let node_id = self.uvarint()?;
            let uid_count = self.count(CountLabel::PartitionUids)?;
            let mut uids = Vec::with_capacity(uid_count);
            for _ in 0..uid_count {
                uids.push(self.bytes()?);
            }
            partitions.push(WirePartition { node_id, uids });
        }
        let created_at_unix_ns = self.varint()?;
        let last_access_unix_ns = self.varint()?;
        Ok(WireTag {
            key,
            channel_key,
            tag_version,
            subscriber_mutation_version,
            source_channel_key,
            source_subscriber_mutation_version,
            topology: WireTopology {
                hash_slot_table_version,
                refs,
            },
            partitions,
            created_at_unix_ns,
            last_access_unix_ns,
        })
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::codec::test_util::hex;
    use proptest::prelude::*;

    /// `{get, "g", type 2, "t", 7, target 2}` with an empty tag.
    const REQUEST_SMALL: &str = "574b44540103676574016702017407020000000000000000000000";
    /// Everything empty except op `get`.
    const REQUEST_EMPTY: &str = "574b4454010367657400000000000000000000000000000000";
    /// The request of [`full_request`].
    const REQUEST_FULL: &str = "574b445401036765740767726f75702d3102057461672d310702057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b";
    /// `{ok, leader 0, result "", full_tag()}`.
    const RESPONSE_OK: &str = "574b444701026f6b0000057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b";
    /// `{not_leader, leader 2}` with an empty tag.
    const RESPONSE_NOT_LEADER: &str = "574b4447010a6e6f745f6c656164657202000000000000000000000000";
    /// `{retryable, "tag_version_mismatch", tag {key tag-1, v8, SMV 9}}`.
    const RESPONSE_RETRYABLE: &str = "574b44470109726574727961626c6500147461675f76657273696f6e5f6d69736d61746368057461672d3100080900000000000000";

    fn small_request() -> TagRequest {
        TagRequest {
            op: OP_GET.to_vec(),
            channel_id: b"g".to_vec(),
            channel_type: 2,
            tag_key: b"t".to_vec(),
            tag_version: 7,
            target_node_id: 2,
            tag: WireTag::default(),
        }
    }

    fn full_tag() -> WireTag {
        WireTag {
            key: b"tag-1".to_vec(),
            channel_key: b"group-1".to_vec(),
            tag_version: 7,
            subscriber_mutation_version: 9,
            source_channel_key: b"group-0".to_vec(),
            source_subscriber_mutation_version: 8,
            topology: WireTopology {
                hash_slot_table_version: 4,
                refs: vec![
                    WireSlotRef {
                        slot_id: 1,
                        leader_node_id: 2,
                        config_epoch: 7,
                        balance_version: 9,
                    },
                    WireSlotRef {
                        slot_id: 2,
                        leader_node_id: 3,
                        config_epoch: 8,
                        balance_version: 10,
                    },
                ],
            },
            partitions: vec![WirePartition {
                node_id: 2,
                uids: vec![b"u2".to_vec()],
            }],
            created_at_unix_ns: 200_000_000_000,
            last_access_unix_ns: 201_000_000_000,
        }
    }

    fn full_request() -> TagRequest {
        TagRequest {
            op: OP_GET.to_vec(),
            channel_id: b"group-1".to_vec(),
            channel_type: 2,
            tag_key: b"tag-1".to_vec(),
            tag_version: 7,
            target_node_id: 2,
            tag: full_tag(),
        }
    }

    fn request_goldens() -> Vec<(&'static str, TagRequest, usize)> {
        vec![
            (REQUEST_SMALL, small_request(), 27),
            (
                REQUEST_EMPTY,
                TagRequest {
                    op: OP_GET.to_vec(),
                    ..TagRequest::default()
                },
                25,
            ),
            (REQUEST_FULL, full_request(), 79),
        ]
    }

    fn response_goldens() -> Vec<(&'static str, TagResponse, usize)> {
        vec![
            (
                RESPONSE_OK,
                TagResponse {
                    status: STATUS_OK.to_vec(),
                    leader_id: 0,
                    result: Vec::new(),
                    tag: full_tag(),
                },
                63,
            ),
            (
                RESPONSE_NOT_LEADER,
                TagResponse {
                    status: STATUS_NOT_LEADER.to_vec(),
                    leader_id: 2,
                    ..TagResponse::default()
                },
                29,
            ),
            (
                RESPONSE_RETRYABLE,
                TagResponse {
                    status: STATUS_RETRYABLE.to_vec(),
                    leader_id: 0,
                    result: RESULT_TAG_VERSION_MISMATCH.to_vec(),
                    tag: WireTag {
                        key: b"tag-1".to_vec(),
                        tag_version: 8,
                        subscriber_mutation_version: 9,
                        ..WireTag::default()
                    },
                },
                53,
            ),
        ]
    }

    fn err(e: DeliveryTagError) -> CodecError {
        CodecError::DeliveryTag(e)
    }

    /// A response frame: [`RESPONSE_MAGIC`], empty status, leader 0, empty result, then `tag`.
    fn response_with_tag(tag: &[u8]) -> Vec<u8> {
        let mut frame = RESPONSE_MAGIC.to_vec();
        frame.extend_from_slice(&[0, 0, 0]);
        frame.extend_from_slice(tag);
        frame
    }

    /// The tag bytes up to (excluding) the topology: empty strings and zero versions.
    const TAG_HEAD: [u8; 6] = [0; 6];

    #[test]
    fn constants() {
        assert_eq!(SERVICE_ID, 44);
        assert_eq!(REQUEST_MAGIC, [0x57, 0x4b, 0x44, 0x54, 0x01]);
        assert_eq!(RESPONSE_MAGIC, [0x57, 0x4b, 0x44, 0x47, 0x01]);
        assert_eq!(OP_GET, b"get");
        assert_eq!(OP_UPDATE, b"update");
        assert_eq!(STATUS_OK, b"ok");
        assert_eq!(STATUS_NOT_LEADER, b"not_leader");
        assert_eq!(STATUS_RETRYABLE, b"retryable");
        assert_eq!(RESULT_TAG_NOT_CURRENT, b"tag_not_current");
        assert_eq!(RESULT_TAG_VERSION_MISMATCH, b"tag_version_mismatch");
    }

    #[test]
    fn request_goldens_encode_and_decode() {
        for (golden, request, len) in request_goldens() {
            let frame = hex(golden);
            assert_eq!(frame.len(), len, "{golden}");
            assert_eq!(encode_request(&request), frame, "{golden}");
            assert_eq!(decode_request(&frame).as_ref(), Ok(&request), "{golden}");
            let mut out = vec![0xaa];
            encode_request_into(&request, &mut out);
            assert_eq!(out[0], 0xaa);
            assert_eq!(&out[1..], &frame[..]);
        }
    }

    #[test]
    fn response_goldens_encode_and_decode() {
        for (golden, response, len) in response_goldens() {
            let frame = hex(golden);
            assert_eq!(frame.len(), len, "{golden}");
            assert_eq!(encode_response(&response), frame, "{golden}");
            assert_eq!(decode_response(&frame).as_ref(), Ok(&response), "{golden}");
            let mut out = vec![0xbb];
            encode_response_into(&response, &mut out);
            assert_eq!(&out[1..], &frame[..]);
        }
    }

    #[test]
    fn decoded_collections_are_empty_not_missing() {
        let request = decode_request(&hex(REQUEST_EMPTY)).unwrap();
        assert!(request.tag.topology.refs.is_empty());
        assert!(request.tag.partitions.is_empty());
        assert_eq!(request.tag.created_at_unix_ns, 0);
        // A partition with no uids.
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 0, 1, 5, 0, 0, 0]);
        let response = decode_response(&response_with_tag(&tag)).unwrap();
        assert_eq!(
            response.tag.partitions,
            vec![WirePartition {
                node_id: 5,
                uids: Vec::new()
            }]
        );
    }

    #[test]
    fn request_truncations() {
        use DeliveryTagError as E;
        let frame = hex(REQUEST_SMALL);
        for len in 0..frame.len() {
            let want = match len {
                0..=4 => E::InvalidRequestCodec,
                5 | 9 | 12 | 14..=24 => E::ShortUvarint,
                6..=8 | 10 | 13 => E::ShortBytes,
                11 => E::ShortChannelType,
                _ => E::ShortVarint,
            };
            assert_eq!(decode_request(&frame[..len]), Err(err(want)), "len {len}");
        }
        let mut long = frame.clone();
        long.push(0);
        assert_eq!(decode_request(&long), Err(err(E::TrailingRequestBytes)));
        let mut format = frame;
        format[4] = 0x02;
        assert_eq!(decode_request(&format), Err(err(E::InvalidRequestCodec)));
    }

    #[test]
    fn full_request_truncations_never_decode() {
        let frame = hex(REQUEST_FULL);
        for len in 0..frame.len() {
            let e = decode_request(&frame[..len]).unwrap_err();
            assert!(matches!(e, CodecError::DeliveryTag(_)), "len {len}: {e}");
        }
    }

    #[test]
    fn response_truncations() {
        use DeliveryTagError as E;
        // not_leader: magic, status (1 + 10), leader (1), result (1), tag (11 zeros).
        let frame = hex(RESPONSE_NOT_LEADER);
        for len in 0..frame.len() {
            let want = match len {
                0..=4 => E::InvalidResponseCodec,
                5 | 16 | 17 | 18..=26 => E::ShortUvarint,
                6..=15 => E::ShortBytes,
                _ => E::ShortVarint,
            };
            assert_eq!(decode_response(&frame[..len]), Err(err(want)), "len {len}");
        }
        let mut long = frame.clone();
        long.push(0);
        assert_eq!(decode_response(&long), Err(err(E::TrailingResponseBytes)));
        let mut format = frame;
        format[4] = 0x02;
        assert_eq!(decode_response(&format), Err(err(E::InvalidResponseCodec)));
    }

    #[test]
    fn directions_do_not_cross() {
        for (golden, _, _) in request_goldens() {
            assert_eq!(
                decode_response(&hex(golden)),
                Err(err(DeliveryTagError::InvalidResponseCodec))
            );
        }
        for (golden, _, _) in response_goldens() {
            assert_eq!(
                decode_request(&hex(golden)),
                Err(err(DeliveryTagError::InvalidRequestCodec))
            );
        }
        for at in 0..4 {
            let mut frame = hex(REQUEST_SMALL);
            frame[at] ^= 0x01;
            assert_eq!(
                decode_request(&frame),
                Err(err(DeliveryTagError::InvalidRequestCodec))
            );
        }
    }

    #[test]
    fn uvarint_matches_go() {
        let ok = |buf: &[u8]| uvarint(buf).ok();
        assert_eq!(ok(&[0]), Some((0, 1)));
        assert_eq!(ok(&[0x80, 0x00]), Some((0, 2)));
        assert_eq!(ok(&[0xac, 0x02, 0xff]), Some((300, 2)));
        let mut max = vec![0xff; 9];
        max.push(0x01);
        assert_eq!(ok(&max), Some((u64::MAX, 10)));
        // A 10th byte over 1 overflows.
        let mut bad = vec![0xff; 9];
        bad.push(0x02);
        assert!(matches!(uvarint(&bad), Err(VarintFail::Overflow)));
        // Eleven bytes overflow; ten continuation bytes at the end are short, as in Go.
        let mut eleven = vec![0x80; 10];
        assert!(matches!(uvarint(&eleven), Err(VarintFail::Short)));
        eleven.push(0x00);
        assert!(matches!(uvarint(&eleven), Err(VarintFail::Overflow)));
        assert!(matches!(uvarint(&[]), Err(VarintFail::Short)));
        assert!(matches!(uvarint(&[0x80]), Err(VarintFail::Short)));
    }

    #[test]
    fn zigzag_matches_go() {
        for (v, ux) in [(0, 0), (-1, 1), (1, 2), (-2, 3), (i64::MAX, u64::MAX - 1)] {
            assert_eq!(zigzag(v), ux);
            assert_eq!(unzigzag(ux), v);
        }
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        assert_eq!(unzigzag(u64::MAX), i64::MIN);
        let mut out = Vec::new();
        put_varint(&mut out, 200_000_000_000);
        assert_eq!(out, hex("80c0ee8ed20b"));
    }

    #[test]
    fn invalid_varints() {
        let mut bad = vec![0xff; 9];
        bad.push(0x02);
        // As the op length.
        let mut frame = REQUEST_MAGIC.to_vec();
        frame.extend_from_slice(&bad);
        assert_eq!(
            decode_request(&frame),
            Err(err(DeliveryTagError::InvalidUvarint))
        );
        // As the leader id.
        let mut frame = RESPONSE_MAGIC.to_vec();
        frame.push(0);
        frame.extend_from_slice(&bad);
        assert_eq!(
            decode_response(&frame),
            Err(err(DeliveryTagError::InvalidUvarint))
        );
        // As CreatedAt, the signed varint.
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 0, 0]);
        tag.extend_from_slice(&bad);
        tag.push(0);
        assert_eq!(
            decode_response(&response_with_tag(&tag)),
            Err(err(DeliveryTagError::InvalidVarint))
        );
    }

    #[test]
    fn string_longer_than_input() {
        // Op length u64::MAX, and length 4 with 3 bytes left.
        let mut frame = REQUEST_MAGIC.to_vec();
        frame.extend_from_slice(&[0xff; 9]);
        frame.push(0x01);
        assert_eq!(
            decode_request(&frame),
            Err(err(DeliveryTagError::ShortBytes))
        );
        let mut frame = REQUEST_MAGIC.to_vec();
        frame.extend_from_slice(&[4, b'g', b'e', b't']);
        assert_eq!(
            decode_request(&frame),
            Err(err(DeliveryTagError::ShortBytes))
        );
    }

    #[test]
    fn counts_exceeding_remaining_bytes() {
        use CountLabel as L;
        // Ref count 3 with 2 bytes after it.
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 3, 0, 0]);
        assert_eq!(
            decode_response(&response_with_tag(&tag)),
            Err(err(DeliveryTagError::CountExceedsRemaining(
                L::TopologyRefs
            )))
        );
        // Partition count 3 with 2 bytes after it.
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 0, 3, 0, 0]);
        assert_eq!(
            decode_response(&response_with_tag(&tag)),
            Err(err(DeliveryTagError::CountExceedsRemaining(L::Partitions)))
        );
        // Uid count 3 with 2 bytes after it.
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 0, 1, 5, 3, 0, 0]);
        assert_eq!(
            decode_response(&response_with_tag(&tag)),
            Err(err(DeliveryTagError::CountExceedsRemaining(
                L::PartitionUids
            )))
        );
        // A count equal to the bytes left passes the check (and then fails further on).
        let mut tag = TAG_HEAD.to_vec();
        tag.extend_from_slice(&[0, 2, 0, 0]);
        assert_eq!(
            decode_response(&response_with_tag(&tag)),
            Err(err(DeliveryTagError::ShortUvarint))
        );
    }

    #[test]
    fn counts_overflowing_int() {
        use CountLabel as L;
        // 2^63 = i64::MAX + 1: nine 0x80 bytes, then 0x01.
        let mut huge = vec![0x80; 9];
        huge.push(0x01);
        // i64::MAX exactly: not an overflow, but more than the bytes left.
        let mut max = vec![0xff; 8];
        max.push(0x7f);
        let cases = [
            (
                TAG_HEAD.to_vec().into_iter().chain([0]).collect::<Vec<_>>(),
                L::TopologyRefs,
            ),
            (
                TAG_HEAD.iter().copied().chain([0, 0]).collect(),
                L::Partitions,
            ),
            (
                TAG_HEAD.iter().copied().chain([0, 0, 1, 5]).collect(),
                L::PartitionUids,
            ),
        ];
        for (prefix, label) in cases {
            let mut tag = prefix.clone();
            tag.extend_from_slice(&huge);
            assert_eq!(
                decode_response(&response_with_tag(&tag)),
                Err(err(DeliveryTagError::CountOverflowsInt(label)))
            );
            let mut tag = prefix;
            tag.extend_from_slice(&max);
            assert_eq!(
                decode_response(&response_with_tag(&tag)),
                Err(err(DeliveryTagError::CountExceedsRemaining(label)))
            );
        }
    }

    #[test]
    fn slot_id_truncated_to_u32() {
        // One ref whose slot id is 2^32 + 5.
        let mut tag = TAG_HEAD.to_vec();
        tag.push(0);
        tag.push(1);
        let mut slot = Vec::new();
        put_uvarint(&mut slot, (1u64 << 32) + 5);
        tag.extend_from_slice(&slot);
        tag.extend_from_slice(&[2, 3, 4, 0, 0, 0]);
        let response = decode_response(&response_with_tag(&tag)).unwrap();
        assert_eq!(
            response.tag.topology.refs,
            vec![WireSlotRef {
                slot_id: 5,
                leader_node_id: 2,
                config_epoch: 3,
                balance_version: 4,
            }]
        );
        // Re-encoding writes the truncated value.
        let again = encode_response(&response);
        assert!(again.len() < response_with_tag(&tag).len());
        assert_eq!(decode_response(&again).unwrap(), response);
    }

    #[test]
    fn non_minimal_varints_accepted() {
        // The request of REQUEST_EMPTY with its tag version written as `80 00`.
        let mut frame = hex(REQUEST_EMPTY);
        let at = REQUEST_MAGIC.len() + 4 + 1 + 1 + 1;
        frame.splice(at..=at, [0x80, 0x00]);
        let request = decode_request(&frame).unwrap();
        assert_eq!(
            request,
            TagRequest {
                op: OP_GET.to_vec(),
                ..TagRequest::default()
            }
        );
        assert_eq!(encode_request(&request), hex(REQUEST_EMPTY));
    }

    #[test]
    fn strings_are_bytes() {
        let request = TagRequest {
            op: vec![0xff, 0x00],
            channel_id: vec![0xc3],
            tag: WireTag {
                partitions: vec![WirePartition {
                    node_id: 1,
                    uids: vec![vec![0x80], Vec::new()],
                }],
                created_at_unix_ns: -1,
                last_access_unix_ns: i64::MIN,
                ..WireTag::default()
            },
            ..TagRequest::default()
        };
        assert_eq!(decode_request(&encode_request(&request)).unwrap(), request);
    }

    #[test]
    fn display_matches_upstream_texts() {
        use CountLabel as L;
        use DeliveryTagError as E;
        let cases = [
            (E::InvalidRequestCodec, "invalid delivery tag request codec"),
            (
                E::InvalidResponseCodec,
                "invalid delivery tag response codec",
            ),
            (E::ShortUvarint, "short uvarint"),
            (E::InvalidUvarint, "invalid uvarint"),
            (E::ShortBytes, "short bytes"),
            (E::ShortChannelType, "short delivery tag channel type"),
            (E::ShortVarint, "short varint"),
            (E::InvalidVarint, "invalid varint"),
            (
                E::TrailingRequestBytes,
                "trailing delivery tag request bytes",
            ),
            (
                E::TrailingResponseBytes,
                "trailing delivery tag response bytes",
            ),
            (
                E::CountOverflowsInt(L::TopologyRefs),
                "delivery tag topology refs count overflows int",
            ),
            (
                E::CountOverflowsInt(L::Partitions),
                "delivery tag partitions count overflows int",
            ),
            (
                E::CountOverflowsInt(L::PartitionUids),
                "delivery tag partition uids count overflows int",
            ),
            (
                E::CountExceedsRemaining(L::TopologyRefs),
                "delivery tag topology refs count exceeds remaining bytes",
            ),
            (
                E::CountExceedsRemaining(L::Partitions),
                "delivery tag partitions count exceeds remaining bytes",
            ),
            (
                E::CountExceedsRemaining(L::PartitionUids),
                "delivery tag partition uids count exceeds remaining bytes",
            ),
        ];
        for (e, text) in cases {
            let text = format!("access/node: {text}");
            assert_eq!(e.to_string(), text);
            assert_eq!(CodecError::from(e).to_string(), text);
            assert!(!CodecError::from(e).is_invalid_payload());
        }
        let e: &dyn std::error::Error = &E::ShortBytes;
        assert!(e.source().is_none());
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..12)
    }

    fn wire_tag() -> impl Strategy<Value = WireTag> {
        let slot_ref = (any::<u32>(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
            |(slot_id, leader_node_id, config_epoch, balance_version)| WireSlotRef {
                slot_id,
                leader_node_id,
                config_epoch,
                balance_version,
            },
        );
        let partition = (any::<u64>(), proptest::collection::vec(bytes(), 0..4))
            .prop_map(|(node_id, uids)| WirePartition { node_id, uids });
        (
            (
                bytes(),
                bytes(),
                any::<u64>(),
                any::<u64>(),
                bytes(),
                any::<u64>(),
            ),
            any::<u64>(),
            proptest::collection::vec(slot_ref, 0..4),
            proptest::collection::vec(partition, 0..4),
            any::<i64>(),
            any::<i64>(),
        )
            .prop_map(
                |((key, channel_key, tv, smv, source, ssmv), hstv, refs, partitions, c, l)| {
                    WireTag {
                        key,
                        channel_key,
                        tag_version: tv,
                        subscriber_mutation_version: smv,
                        source_channel_key: source,
                        source_subscriber_mutation_version: ssmv,
                        topology: WireTopology {
                            hash_slot_table_version: hstv,
                            refs,
                        },
                        partitions,
                        created_at_unix_ns: c,
                        last_access_unix_ns: l,
                    }
                },
            )
    }

    fn tag_request() -> impl Strategy<Value = TagRequest> {
        (
            bytes(),
            bytes(),
            any::<u8>(),
            bytes(),
            any::<u64>(),
            any::<u64>(),
            wire_tag(),
        )
            .prop_map(
                |(op, channel_id, channel_type, tag_key, tag_version, target_node_id, tag)| {
                    TagRequest {
                        op,
                        channel_id,
                        channel_type,
                        tag_key,
                        tag_version,
                        target_node_id,
                        tag,
                    }
                },
            )
    }

    fn tag_response() -> impl Strategy<Value = TagResponse> {
        (bytes(), any::<u64>(), bytes(), wire_tag()).prop_map(|(status, leader_id, result, tag)| {
            TagResponse {
                status,
                leader_id,
                result,
                tag,
            }
        })
    }

    /// What the fuzz target checks: no panic, and every accepted frame survives encode → decode
    /// and encodes no longer than the input (the encoder writes minimal varints).
    fn check_any(frame: &[u8]) -> Result<(), TestCaseError> {
        match decode_request(frame) {
            Ok(request) => {
                let again = encode_request(&request);
                prop_assert!(again.len() <= frame.len());
                prop_assert_eq!(decode_request(&again).unwrap(), request);
            }
            Err(e) => prop_assert!(matches!(e, CodecError::DeliveryTag(_))),
        }
        match decode_response(frame) {
            Ok(response) => {
                let again = encode_response(&response);
                prop_assert!(again.len() <= frame.len());
                prop_assert_eq!(decode_response(&again).unwrap(), response);
            }
            Err(e) => prop_assert!(matches!(e, CodecError::DeliveryTag(_))),
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn prop_requests_round_trip(request in tag_request()) {
            let frame = encode_request(&request);
            prop_assert_eq!(decode_request(&frame).unwrap(), request);
            // Every strict prefix fails, and so does one trailing byte.
            for len in 0..frame.len() {
                prop_assert!(decode_request(&frame[..len]).is_err());
            }
            let mut long = frame;
            long.push(0);
            prop_assert_eq!(
                decode_request(&long),
                Err(err(DeliveryTagError::TrailingRequestBytes))
            );
        }

        #[test]
        fn prop_responses_round_trip(response in tag_response()) {
            let frame = encode_response(&response);
            prop_assert_eq!(decode_response(&frame).unwrap(), response);
            for len in 0..frame.len() {
                prop_assert!(decode_response(&frame[..len]).is_err());
            }
            let mut long = frame;
            long.push(0);
            prop_assert_eq!(
                decode_response(&long),
                Err(err(DeliveryTagError::TrailingResponseBytes))
            );
        }

        #[test]
        fn prop_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
            check_any(&bytes)?;
            let mut framed = REQUEST_MAGIC.to_vec();
            framed.extend_from_slice(&bytes);
            check_any(&framed)?;
            let mut framed = RESPONSE_MAGIC.to_vec();
            framed.extend_from_slice(&bytes);
            check_any(&framed)?;
        }

        #[test]
        fn prop_mutated_golden_never_panics(
            golden in 0usize..6,
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            tail in proptest::collection::vec(any::<u8>(), 0..4),
        ) {
            let goldens = [
                REQUEST_SMALL,
                REQUEST_EMPTY,
                REQUEST_FULL,
                RESPONSE_OK,
                RESPONSE_NOT_LEADER,
                RESPONSE_RETRYABLE,
            ];
            let mut frame = hex(goldens[golden]);
            for (at, byte) in flips {
                let at = at.index(frame.len());
                frame[at] = byte;
            }
            frame.truncate(cut.index(frame.len() + 1));
            frame.extend_from_slice(&tail);
            check_any(&frame)?;
        }
    }
}
