//! MQTT owner RPC frame codec: node RPC service [`SERVICE_ID`] (107).
//!
//! A node asks the node that owns an MQTT socket to quiesce exactly one [`Owner`]; the owner
//! node answers with a status and echoes the owner back (upstream
//! `internal/access/node/mqtt_owner_codec.go`, with the status mapping of
//! `internal/access/node/mqtt_owner_rpc.go`). Request and response share one layout; all
//! integers are big-endian and every string is prefixed with its `u16` byte length.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic: request [`REQUEST_MAGIC`] `WKMQ`, response [`RESPONSE_MAGIC`] `WKMq` |
//! | 4 | 1 | format, always [`FORMAT`] (1) |
//! | 5 | 1 | request: op, always [`OP_QUIESCE`] (1); response: [`QuiesceStatus`] (1..=5) |
//! | 6 | 2+n | namespace (1..=1024 bytes) |
//! | … | 2+n | client id (1..=1024 bytes) |
//! | … | 8 | session generation |
//! | … | 8 | owner generation |
//! | … | 8 | node id |
//! | … | 2+n | boot id (1..=128 bytes) |
//! | … | 8 | connection id |
//!
//! The frame carries only a complete, valid owner identity: both directions run
//! [`Owner::validate`], and the decoder consumes exactly every byte. Every failure, on encode
//! and on decode, is the one wire error [`CodecError::OwnerFrame`] (upstream `errMQTTOwnerWire`,
//! `node: invalid MQTT owner frame`).

use super::CodecError;
use crate::owner::{Owner, OwnerError, OwnerKey, BOOT_ID_MAX, IDENTITY_MAX};
use core::fmt;

/// Node RPC service ID of the MQTT owner RPC (upstream `clusternet.RPCMQTTOwner`, a `uint8`,
/// exported as `node.MQTTOwnerRPCServiceID`; it was 92 in an older upstream version).
pub const SERVICE_ID: u8 = 107;

/// Largest frame the encoder writes and the decoder reads (upstream `maxMQTTOwnerFrame`). The
/// decoder rejects a longer input before parsing it.
pub const MAX_FRAME: usize = 2304;

/// Bytes of a frame that are not string contents: magic, format, code, three string lengths
/// and four `u64` fields.
pub const FIXED_OVERHEAD: usize = 44;

/// Length of the largest frame a valid owner produces: [`FIXED_OVERHEAD`] plus two
/// [`IDENTITY_MAX`] strings and one [`BOOT_ID_MAX`] string. Below [`MAX_FRAME`].
pub const MAX_LEGAL_FRAME: usize = FIXED_OVERHEAD + 2 * IDENTITY_MAX + BOOT_ID_MAX;

/// Magic of a request frame: `WKMQ`.
pub const REQUEST_MAGIC: [u8; 4] = *b"WKMQ";

/// Magic of a response frame: `WKMq`.
pub const RESPONSE_MAGIC: [u8; 4] = *b"WKMq";

/// Format byte of both frames; the only one defined.
pub const FORMAT: u8 = 1;

/// Op byte of a request: quiesce the owner; the only op defined.
pub const OP_QUIESCE: u8 = 1;

/// Outcome of a quiesce, carried in byte 5 of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum QuiesceStatus {
    /// The owner's execution and transport have quiesced: the proof the caller asked for.
    Quiesced = 1,
    /// Isolation is unknown or unproved, or the owner node has no owner runtime.
    Unknown = 2,
    /// The transport close failed.
    CloseFailed = 3,
    /// The quiesce was cancelled on the owner node.
    Canceled = 4,
    /// The quiesce's deadline passed on the owner node.
    DeadlineExceeded = 5,
}

impl QuiesceStatus {
    /// The status with wire code `code`, or `None` outside 1..=5.
    #[must_use]
    pub const fn from_u8(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Quiesced),
            2 => Some(Self::Unknown),
            3 => Some(Self::CloseFailed),
            4 => Some(Self::Canceled),
            5 => Some(Self::DeadlineExceeded),
            _ => None,
        }
    }

    /// The wire code, 1..=5.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// What the calling node's `Quiesce` returns for this status (upstream
    /// `MQTTOwnerClient.Quiesce`): `Ok` for [`Quiesced`](Self::Quiesced), otherwise
    /// [`OwnerError::Unknown`], [`OwnerError::Close`], [`OwnerError::Canceled`] or
    /// [`OwnerError::DeadlineExceeded`].
    ///
    /// # Errors
    ///
    /// Every status but [`Quiesced`](Self::Quiesced), as above.
    pub const fn result(self) -> Result<(), OwnerError> {
        match self {
            Self::Quiesced => Ok(()),
            Self::Unknown => Err(OwnerError::Unknown),
            Self::CloseFailed => Err(OwnerError::Close),
            Self::Canceled => Err(OwnerError::Canceled),
            Self::DeadlineExceeded => Err(OwnerError::DeadlineExceeded),
        }
    }
}

/// Length of the frame `owner` encodes to, or the wire error.
///
/// # Errors
///
/// [`CodecError::OwnerFrame`] when `owner` fails [`Owner::validate`] (or, unreachably for a
/// valid owner, the frame would exceed [`MAX_FRAME`]).
pub fn encoded_len(owner: &Owner) -> Result<usize, CodecError> {
    owner.validate().map_err(|_| CodecError::OwnerFrame)?;
    let len = FIXED_OVERHEAD
        + owner.key.namespace.len()
        + owner.key.client_id.len()
        + owner.boot_id.len();
    if len > MAX_FRAME {
        return Err(CodecError::OwnerFrame);
    }
    Ok(len)
}

/// Encodes a quiesce request for `owner` as a new frame (upstream `encodeMQTTOwnerRequest`).
///
/// # Errors
///
/// As [`encoded_len`].
pub fn encode_request(owner: &Owner) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    encode_request_into(owner, &mut out)?;
    Ok(out)
}

/// Appends a quiesce request for `owner` to `out`. On error `out` is left untouched.
///
/// # Errors
///
/// As [`encoded_len`].
pub fn encode_request_into(owner: &Owner, out: &mut Vec<u8>) -> Result<(), CodecError> {
    encode_frame_into(REQUEST_MAGIC, OP_QUIESCE, owner, out)
}

/// Encodes a response echoing `owner` with `status` as a new frame (upstream
/// `encodeMQTTOwnerResponse`).
///
/// # Errors
///
/// As [`encoded_len`].
pub fn encode_response(owner: &Owner, status: QuiesceStatus) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    encode_response_into(owner, status, &mut out)?;
    Ok(out)
}

/// Appends a response echoing `owner` with `status` to `out`. On error `out` is left untouched.
///
/// Upstream also refuses a status byte outside 1..=5 here; [`QuiesceStatus`] cannot hold one.
///
/// # Errors
///
/// As [`encoded_len`].
pub fn encode_response_into(
    owner: &Owner,
    status: QuiesceStatus,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    encode_frame_into(RESPONSE_MAGIC, status.code(), owner, out)
}

/// Decodes a quiesce request, copying the owner (upstream `decodeMQTTOwnerRequest`).
///
/// # Errors
///
/// [`CodecError::OwnerFrame`] for any frame that is not a well-formed request: longer than
/// [`MAX_FRAME`], shorter than its fields, not [`REQUEST_MAGIC`], a format other than
/// [`FORMAT`], an op other than [`OP_QUIESCE`], a string over its limit, trailing bytes, or an
/// owner that fails [`Owner::validate`] (invalid UTF-8, NUL, blank, zero id).
pub fn decode_request(bytes: &[u8]) -> Result<Owner, CodecError> {
    match decode_frame(bytes, REQUEST_MAGIC)? {
        (owner, OP_QUIESCE) => Ok(owner),
        _ => Err(CodecError::OwnerFrame),
    }
}

/// Decodes a quiesce response into the echoed owner (copied) and its status (upstream
/// `decodeMQTTOwnerResponse`).
///
/// # Errors
///
/// [`CodecError::OwnerFrame`] as for [`decode_request`], with [`RESPONSE_MAGIC`] and a status
/// byte that must be 1..=5 in place of the op.
pub fn decode_response(bytes: &[u8]) -> Result<(Owner, QuiesceStatus), CodecError> {
    let (owner, code) = decode_frame(bytes, RESPONSE_MAGIC)?;
    let status = QuiesceStatus::from_u8(code).ok_or(CodecError::OwnerFrame)?;
    Ok((owner, status))
}

/// The owner node's status for a quiesce outcome (upstream `MQTTOwnerRPC.HandleRPC`).
///
/// `None` means the node has no owner runtime (upstream `Owners == nil`):
/// [`QuiesceStatus::Unknown`]. `Some(Ok(()))` is [`QuiesceStatus::Quiesced`];
/// [`OwnerError::Canceled`], [`OwnerError::DeadlineExceeded`] and [`OwnerError::Close`] map to
/// their statuses; every other error is [`QuiesceStatus::Unknown`].
#[must_use]
pub const fn status_for_result(result: Option<Result<(), OwnerError>>) -> QuiesceStatus {
    match result {
        Some(Ok(())) => QuiesceStatus::Quiesced,
        Some(Err(OwnerError::Canceled)) => QuiesceStatus::Canceled,
        Some(Err(OwnerError::DeadlineExceeded)) => QuiesceStatus::DeadlineExceeded,
        Some(Err(OwnerError::Close)) => QuiesceStatus::CloseFailed,
        Some(Err(_)) | None => QuiesceStatus::Unknown,
    }
}

/// Why a quiesce call failed on the calling node ([`client_result`]).
///
/// Upstream's `MQTTOwnerClient.Quiesce` returns either the wire error itself or an owner error;
/// the two variants keep that distinction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientError {
    /// The response is not a well-formed response frame (always [`CodecError::OwnerFrame`]).
    Frame(CodecError),
    /// The owner node answered: the echo named another owner ([`OwnerError::Unknown`]), or the
    /// status was not [`QuiesceStatus::Quiesced`] ([`QuiesceStatus::result`]).
    Owner(OwnerError),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Frame(err) => err.fmt(f),
            Self::Owner(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Frame(err) => Some(err),
            Self::Owner(err) => Some(err),
        }
    }
}

impl From<CodecError> for ClientError {
    fn from(err: CodecError) -> Self {
        Self::Frame(err)
    }
}

impl From<OwnerError> for ClientError {
    fn from(err: OwnerError) -> Self {
        Self::Owner(err)
    }
}

/// The calling node's verdict on `response`, the owner node's answer to a quiesce request for
/// `request` (the tail of upstream `MQTTOwnerClient.Quiesce`, after `CallRPC` succeeded).
///
/// # Errors
///
/// - [`ClientError::Frame`]: `response` does not decode ([`decode_response`]).
/// - [`ClientError::Owner`] with [`OwnerError::Unknown`]: the echoed owner differs from
///   `request` in any field.
/// - [`ClientError::Owner`] with the status's error ([`QuiesceStatus::result`]) for every status
///   but [`QuiesceStatus::Quiesced`].
pub fn client_result(request: &Owner, response: &[u8]) -> Result<(), ClientError> {
    let (echo, status) = decode_response(response)?;
    if echo != *request {
        return Err(ClientError::Owner(OwnerError::Unknown));
    }
    status.result().map_err(ClientError::Owner)
}

/// Appends one frame; `out` is untouched on error.
fn encode_frame_into(
    magic: [u8; 4],
    code: u8,
    owner: &Owner,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let len = encoded_len(owner)?;
    let namespace = text_len(&owner.key.namespace)?;
    let client_id = text_len(&owner.key.client_id)?;
    let boot_id = text_len(&owner.boot_id)?;
    out.reserve(len);
    out.extend_from_slice(&magic);
    out.push(FORMAT);
    out.push(code);
    out.extend_from_slice(&namespace);
    out.extend_from_slice(owner.key.namespace.as_bytes());
    out.extend_from_slice(&client_id);
    out.extend_from_slice(owner.key.client_id.as_bytes());
    out.extend_from_slice(&owner.session_generation.to_be_bytes());
    out.extend_from_slice(&owner.owner_generation.to_be_bytes());
    out.extend_from_slice(&owner.node_id.to_be_bytes());
    out.extend_from_slice(&boot_id);
    out.extend_from_slice(owner.boot_id.as_bytes());
    out.extend_from_slice(&owner.connection_id.to_be_bytes());
    Ok(())
}

/// The `u16` length prefix of `s`. Cannot fail for a validated owner.
fn text_len(s: &str) -> Result<[u8; 2], CodecError> {
    u16::try_from(s.len())
        .map(u16::to_be_bytes)
        .map_err(|_| CodecError::OwnerFrame)
}

/// Decodes one frame with `magic` into its owner and its code byte (op or status, unchecked).
fn decode_frame(bytes: &[u8], magic: [u8; 4]) -> Result<(Owner, u8), CodecError> {
    if bytes.len() > MAX_FRAME {
        return Err(CodecError::OwnerFrame);
    }
    let (head, body) = bytes
        .split_first_chunk::<6>()
        .ok_or(CodecError::OwnerFrame)?;
    let [m0, m1, m2, m3, format, code] = *head;
    if [m0, m1, m2, m3] != magic || format != FORMAT {
        return Err(CodecError::OwnerFrame);
    }
    let owner = parse_owner(body).ok_or(CodecError::OwnerFrame)?;
    owner.validate().map_err(|_| CodecError::OwnerFrame)?;
    Ok((owner, code))
}

/// Parses the fields after the 6-byte head; `None` when a field is short, a string is over its
/// limit or not UTF-8, or bytes are left over.
fn parse_owner(body: &[u8]) -> Option<Owner> {
    let mut r = Reader(body);
    let namespace = r.text(IDENTITY_MAX)?;
    let client_id = r.text(IDENTITY_MAX)?;
    let session_generation = r.number()?;
    let owner_generation = r.number()?;
    let node_id = r.number()?;
    let boot_id = r.text(BOOT_ID_MAX)?;
    let connection_id = r.number()?;
    if !r.0.is_empty() {
        return None;
    }
    Some(Owner {
        key: OwnerKey::new(namespace, client_id),
        session_generation,
        owner_generation,
        node_id,
        boot_id: boot_id.into(),
        connection_id,
    })
}

/// A cursor over the unread rest of a frame.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// A big-endian `u64`.
    fn number(&mut self) -> Option<u64> {
        let (v, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_be_bytes(*v))
    }

    /// A `u16`-length-prefixed string of at most `limit` bytes, which must be UTF-8.
    fn text(&mut self, limit: usize) -> Option<&'a str> {
        let (n, rest) = self.0.split_first_chunk::<2>()?;
        let n = usize::from(u16::from_be_bytes(*n));
        if n > limit {
            return None;
        }
        let (s, rest) = rest.split_at_checked(n)?;
        self.0 = rest;
        core::str::from_utf8(s).ok()
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::codec::test_util::hex;
    use crate::owner::valid_identity;
    use proptest::prelude::*;

    /// Upstream `TestMQTTOwnerWireIsBoundedAndIdentityComplete`: the request for [`owner`].
    const REQUEST: &str = "574b4d51010100016e0001630000000000000001000000000000000200000000000000030001620000000000000004";
    /// The same owner as a response with status 1.
    const RESPONSE_1: &str = "574b4d71010100016e0001630000000000000001000000000000000200000000000000030001620000000000000004";

    /// Offsets of the fields in [`REQUEST`].
    const AT_NAMESPACE: usize = 8;
    const AT_SESSION: usize = 12;
    const AT_BOOT: usize = 38;
    const AT_CONNECTION: usize = 39;

    fn owner() -> Owner {
        Owner {
            key: OwnerKey::new("n", "c"),
            session_generation: 1,
            owner_generation: 2,
            node_id: 3,
            boot_id: "b".into(),
            connection_id: 4,
        }
    }

    fn owner_with(namespace: &str, client_id: &str, boot_id: &str) -> Owner {
        Owner {
            key: OwnerKey::new(namespace, client_id),
            boot_id: boot_id.into(),
            ..owner()
        }
    }

    /// Writes a frame by hand, with no validation, so that tests can build what the encoder
    /// refuses.
    fn raw_frame(magic: &[u8], code: u8, ns: &[u8], client: &[u8], boot: &[u8]) -> Vec<u8> {
        let mut f = magic.to_vec();
        f.extend_from_slice(&[FORMAT, code]);
        let text = |f: &mut Vec<u8>, s: &[u8]| {
            f.extend_from_slice(&u16::try_from(s.len()).unwrap().to_be_bytes());
            f.extend_from_slice(s);
        };
        text(&mut f, ns);
        text(&mut f, client);
        for id in [1u64, 2, 3] {
            f.extend_from_slice(&id.to_be_bytes());
        }
        text(&mut f, boot);
        f.extend_from_slice(&4u64.to_be_bytes());
        f
    }

    #[test]
    fn constants() {
        assert_eq!(SERVICE_ID, 107);
        assert_eq!(MAX_FRAME, 2304);
        assert_eq!(FIXED_OVERHEAD, 44);
        assert_eq!(MAX_LEGAL_FRAME, 2220);
        assert_eq!(&REQUEST_MAGIC, &[0x57, 0x4b, 0x4d, 0x51]);
        assert_eq!(&RESPONSE_MAGIC, &[0x57, 0x4b, 0x4d, 0x71]);
    }

    #[test]
    fn error_text_is_upstreams() {
        assert_eq!(
            CodecError::OwnerFrame.to_string(),
            "node: invalid MQTT owner frame"
        );
        assert_eq!(
            Some(CodecError::OwnerFrame.to_string().as_str()),
            crate::owner::error::texts::INVALID_FRAME.to_str().ok()
        );
        assert!(!CodecError::OwnerFrame.is_invalid_payload());
    }

    #[test]
    fn status_codes() {
        for code in 0..=u8::MAX {
            match QuiesceStatus::from_u8(code) {
                Some(status) => {
                    assert!((1..=5).contains(&code));
                    assert_eq!(status.code(), code);
                }
                None => assert!(code == 0 || code > 5, "code {code}"),
            }
        }
        assert_eq!(QuiesceStatus::Quiesced.code(), 1);
        assert_eq!(QuiesceStatus::Unknown.code(), 2);
        assert_eq!(QuiesceStatus::CloseFailed.code(), 3);
        assert_eq!(QuiesceStatus::Canceled.code(), 4);
        assert_eq!(QuiesceStatus::DeadlineExceeded.code(), 5);
    }

    #[test]
    fn golden_request() {
        let frame = encode_request(&owner()).unwrap();
        assert_eq!(frame, hex(REQUEST));
        assert_eq!(frame.len(), 47);
        assert_eq!(frame.len(), encoded_len(&owner()).unwrap());
        assert_eq!(decode_request(&frame).unwrap(), owner());
    }

    #[test]
    fn golden_response() {
        let frame = encode_response(&owner(), QuiesceStatus::Quiesced).unwrap();
        assert_eq!(frame, hex(RESPONSE_1));
        assert_eq!(
            decode_response(&frame).unwrap(),
            (owner(), QuiesceStatus::Quiesced)
        );
        for code in 1..=5 {
            let status = QuiesceStatus::from_u8(code).unwrap();
            let frame = encode_response(&owner(), status).unwrap();
            let mut want = hex(RESPONSE_1);
            want[5] = code;
            assert_eq!(frame, want);
            assert_eq!(decode_response(&frame).unwrap(), (owner(), status));
        }
    }

    #[test]
    fn encode_into_appends_and_leaves_out_untouched_on_error() {
        let mut out = vec![0xaa];
        encode_request_into(&owner(), &mut out).unwrap();
        assert_eq!(out[0], 0xaa);
        assert_eq!(&out[1..], hex(REQUEST).as_slice());
        let before = out.clone();
        let mut bad = owner();
        bad.node_id = 0;
        assert_eq!(
            encode_request_into(&bad, &mut out),
            Err(CodecError::OwnerFrame)
        );
        assert_eq!(
            encode_response_into(&bad, QuiesceStatus::Unknown, &mut out),
            Err(CodecError::OwnerFrame)
        );
        assert_eq!(out, before);
    }

    #[test]
    fn upstream_negative_cases() {
        let request = hex(REQUEST);
        for cut in 0..request.len() {
            assert_eq!(
                decode_request(&request[..cut]),
                Err(CodecError::OwnerFrame),
                "prefix {cut}"
            );
        }
        let mut trailing = request.clone();
        trailing.push(0);
        let mut format2 = request.clone();
        format2[4] = 2;
        let mut op2 = request.clone();
        op2[5] = 2;
        for case in [trailing, vec![0; 4096], b"{}".to_vec(), format2, op2] {
            assert_eq!(decode_request(&case), Err(CodecError::OwnerFrame));
            assert_eq!(decode_response(&case), Err(CodecError::OwnerFrame));
        }
    }

    #[test]
    fn every_prefix_and_extension_of_a_response_is_rejected() {
        let response = hex(RESPONSE_1);
        for cut in 0..response.len() {
            assert_eq!(
                decode_response(&response[..cut]),
                Err(CodecError::OwnerFrame)
            );
        }
        for extra in [0u8, 1, 0xff] {
            let mut frame = response.clone();
            frame.push(extra);
            assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
        }
    }

    #[test]
    fn request_ops_other_than_quiesce_rejected() {
        for op in (0..=u8::MAX).filter(|op| *op != OP_QUIESCE) {
            let mut frame = hex(REQUEST);
            frame[5] = op;
            assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame), "{op}");
        }
    }

    #[test]
    fn response_statuses_outside_range_rejected() {
        for code in [0u8, 6, 7, 0xff] {
            let mut frame = hex(RESPONSE_1);
            frame[5] = code;
            assert_eq!(
                decode_response(&frame),
                Err(CodecError::OwnerFrame),
                "{code}"
            );
            // The encoder cannot be handed such a status: QuiesceStatus has no value for it.
            assert_eq!(QuiesceStatus::from_u8(code), None);
        }
    }

    #[test]
    fn formats_other_than_one_rejected() {
        for format in (0..=u8::MAX).filter(|f| *f != FORMAT) {
            for (golden, is_request) in [(REQUEST, true), (RESPONSE_1, false)] {
                let mut frame = hex(golden);
                frame[4] = format;
                if is_request {
                    assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
                } else {
                    assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
                }
            }
        }
    }

    #[test]
    fn directions_do_not_cross() {
        assert_eq!(decode_response(&hex(REQUEST)), Err(CodecError::OwnerFrame));
        assert_eq!(
            decode_request(&hex(RESPONSE_1)),
            Err(CodecError::OwnerFrame)
        );
        for status in 1..=5 {
            let frame = encode_response(&owner(), QuiesceStatus::from_u8(status).unwrap()).unwrap();
            assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
        }
        // Any other magic is refused too (flipping bit 5 of byte 3 would cross directions).
        for at in 0..4 {
            let mut frame = hex(REQUEST);
            frame[at] ^= 0x01;
            assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
            assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
        }
    }

    #[test]
    fn string_limits_at_and_over_their_bound() {
        let at = [
            owner_with(&"n".repeat(IDENTITY_MAX), "c", "b"),
            owner_with("n", &"c".repeat(IDENTITY_MAX), "b"),
            owner_with("n", "c", &"b".repeat(BOOT_ID_MAX)),
        ];
        for o in &at {
            let frame = encode_request(o).unwrap();
            assert_eq!(decode_request(&frame).as_ref(), Ok(o));
            let frame = encode_response(o, QuiesceStatus::Unknown).unwrap();
            assert_eq!(
                decode_response(&frame).unwrap(),
                (o.clone(), QuiesceStatus::Unknown)
            );
        }
        let over = [
            owner_with(&"n".repeat(IDENTITY_MAX + 1), "c", "b"),
            owner_with("n", &"c".repeat(IDENTITY_MAX + 1), "b"),
            owner_with("n", "c", &"b".repeat(BOOT_ID_MAX + 1)),
        ];
        for o in &over {
            assert_eq!(encode_request(o), Err(CodecError::OwnerFrame));
            assert_eq!(
                encode_response(o, QuiesceStatus::Quiesced),
                Err(CodecError::OwnerFrame)
            );
            assert_eq!(encoded_len(o), Err(CodecError::OwnerFrame));
            // Written by hand, the decoder refuses them too (all stay under MAX_FRAME).
            for (magic, code) in [(REQUEST_MAGIC, OP_QUIESCE), (RESPONSE_MAGIC, 1)] {
                let frame = raw_frame(
                    &magic,
                    code,
                    o.key.namespace.as_bytes(),
                    o.key.client_id.as_bytes(),
                    o.boot_id.as_bytes(),
                );
                assert!(frame.len() <= MAX_FRAME);
                assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
                assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
            }
        }
    }

    #[test]
    fn raw_frame_matches_the_encoder() {
        assert_eq!(
            raw_frame(&REQUEST_MAGIC, OP_QUIESCE, b"n", b"c", b"b"),
            hex(REQUEST)
        );
        assert_eq!(
            raw_frame(&RESPONSE_MAGIC, 1, b"n", b"c", b"b"),
            hex(RESPONSE_1)
        );
    }

    #[test]
    fn maximal_frame_round_trips() {
        let o = owner_with(
            &"n".repeat(IDENTITY_MAX),
            &"c".repeat(IDENTITY_MAX),
            &"b".repeat(BOOT_ID_MAX),
        );
        let frame = encode_request(&o).unwrap();
        assert_eq!(frame.len(), MAX_LEGAL_FRAME);
        assert_eq!(decode_request(&frame).unwrap(), o);
        let frame = encode_response(&o, QuiesceStatus::DeadlineExceeded).unwrap();
        assert_eq!(frame.len(), MAX_LEGAL_FRAME);
        assert_eq!(
            decode_response(&frame).unwrap(),
            (o, QuiesceStatus::DeadlineExceeded)
        );
    }

    #[test]
    fn oversize_input_rejected_before_parsing() {
        let mut frame = hex(REQUEST);
        frame.resize(MAX_FRAME, 0);
        assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
        frame.push(0);
        assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
        assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
    }

    #[test]
    fn string_running_past_the_end_rejected() {
        // Namespace length 0xffff with a tiny body.
        let mut frame = hex(REQUEST);
        frame[6] = 0xff;
        frame[7] = 0xff;
        assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
        // Boot id length 2 where one byte of it plus the connection id follow: misaligned.
        let mut frame = hex(REQUEST);
        frame[AT_BOOT - 1] = 2;
        assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
    }

    #[test]
    fn invalid_strings_rejected_on_decode() {
        for byte in [0xff, 0x00, b' ', b'\t', 0x80] {
            for at in [AT_NAMESPACE, AT_NAMESPACE + 3, AT_BOOT] {
                let mut frame = hex(REQUEST);
                frame[at] = byte;
                assert_eq!(
                    decode_request(&frame),
                    Err(CodecError::OwnerFrame),
                    "byte {byte:#x} at {at}"
                );
                let mut frame = hex(RESPONSE_1);
                frame[at] = byte;
                assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
            }
        }
        // Empty strings and Unicode white space.
        for (ns, client, boot) in [
            (&b""[..], &b"c"[..], &b"b"[..]),
            (b"n", b"", b"b"),
            (b"n", b"c", b""),
            ("\u{3000}".as_bytes(), b"c", b"b"),
            (b"n", b"c", b" \n "),
            (b"n", b"c\0", b"b"),
            (b"n", b"c", b"\xc3"),
        ] {
            for (magic, code) in [(REQUEST_MAGIC, OP_QUIESCE), (RESPONSE_MAGIC, 2)] {
                let frame = raw_frame(&magic, code, ns, client, boot);
                assert_eq!(decode_request(&frame), Err(CodecError::OwnerFrame));
                assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
            }
        }
        // Multi-byte UTF-8 is fine.
        let frame = raw_frame(&REQUEST_MAGIC, OP_QUIESCE, "é".as_bytes(), b"c", b"b");
        assert_eq!(decode_request(&frame).unwrap().key.namespace, "é");
    }

    #[test]
    fn zero_ids_rejected_on_decode() {
        for field in 0..4 {
            let at = if field == 3 {
                AT_CONNECTION
            } else {
                AT_SESSION + 8 * field
            };
            let mut frame = hex(REQUEST);
            frame[at..at + 8].copy_from_slice(&[0; 8]);
            assert_eq!(
                decode_request(&frame),
                Err(CodecError::OwnerFrame),
                "{field}"
            );
            let mut frame = hex(RESPONSE_1);
            frame[at..at + 8].copy_from_slice(&[0; 8]);
            assert_eq!(decode_response(&frame), Err(CodecError::OwnerFrame));
        }
    }

    #[test]
    fn invalid_owners_rejected_on_encode() {
        let mut cases = vec![
            owner_with("", "c", "b"),
            owner_with("n", "", "b"),
            owner_with("n", "c", ""),
            owner_with("n\0", "c", "b"),
            owner_with("n", "\0", "b"),
            owner_with("n", "c", "b\0"),
            owner_with(" ", "c", "b"),
            owner_with("n", "\t\n", "b"),
            owner_with("n", "c", "\u{3000}"),
        ];
        for field in 0..4 {
            let mut o = owner();
            match field {
                0 => o.session_generation = 0,
                1 => o.owner_generation = 0,
                2 => o.node_id = 0,
                _ => o.connection_id = 0,
            }
            cases.push(o);
        }
        for o in &cases {
            assert_eq!(encode_request(o), Err(CodecError::OwnerFrame), "{o:?}");
            for code in 1..=5 {
                let status = QuiesceStatus::from_u8(code).unwrap();
                assert_eq!(encode_response(o, status), Err(CodecError::OwnerFrame));
            }
        }
    }

    #[test]
    fn server_status_mapping() {
        assert_eq!(status_for_result(None), QuiesceStatus::Unknown);
        assert_eq!(status_for_result(Some(Ok(()))), QuiesceStatus::Quiesced);
        let cases = [
            (OwnerError::Invalid, QuiesceStatus::Unknown),
            (OwnerError::Fenced, QuiesceStatus::Unknown),
            (OwnerError::Unknown, QuiesceStatus::Unknown),
            (OwnerError::Limit, QuiesceStatus::Unknown),
            (OwnerError::Stopped, QuiesceStatus::Unknown),
            (OwnerError::Close, QuiesceStatus::CloseFailed),
            (OwnerError::Canceled, QuiesceStatus::Canceled),
            (
                OwnerError::DeadlineExceeded,
                QuiesceStatus::DeadlineExceeded,
            ),
        ];
        for (err, status) in cases {
            assert_eq!(status_for_result(Some(Err(err))), status, "{err:?}");
        }
    }

    #[test]
    fn server_to_client_round_trip() {
        let results = [
            Ok(()),
            Err(OwnerError::Unknown),
            Err(OwnerError::Close),
            Err(OwnerError::Canceled),
            Err(OwnerError::DeadlineExceeded),
        ];
        for (code, result) in (1..=5).zip(results) {
            let status = status_for_result(Some(result));
            assert_eq!(status.code(), code);
            assert_eq!(status.result(), result);
            let response = encode_response(&owner(), status).unwrap();
            assert_eq!(
                client_result(&owner(), &response),
                result.map_err(ClientError::Owner)
            );
        }
        // Errors the client never sees come back as Unknown; so does a node with no runtime.
        for server in [
            Some(Err(OwnerError::Fenced)),
            Some(Err(OwnerError::Limit)),
            None,
        ] {
            let response = encode_response(&owner(), status_for_result(server)).unwrap();
            assert_eq!(
                client_result(&owner(), &response),
                Err(ClientError::Owner(OwnerError::Unknown))
            );
        }
    }

    #[test]
    fn client_rejects_another_owners_echo() {
        let mut other_connection = owner();
        other_connection.connection_id = 5;
        let mut other_boot = owner();
        other_boot.boot_id = "b2".into();
        let mut other_generation = owner();
        other_generation.owner_generation = 9;
        for echo in [other_connection, other_boot, other_generation] {
            let response = encode_response(&echo, QuiesceStatus::Quiesced).unwrap();
            assert_eq!(
                client_result(&owner(), &response),
                Err(ClientError::Owner(OwnerError::Unknown))
            );
        }
    }

    #[test]
    fn client_rejects_bad_frames() {
        for response in [&b""[..], &[0x01], &hex(REQUEST), b"{}"] {
            let err = client_result(&owner(), response).unwrap_err();
            assert_eq!(err, ClientError::Frame(CodecError::OwnerFrame));
            assert_eq!(err.to_string(), "node: invalid MQTT owner frame");
        }
        assert_eq!(
            ClientError::from(OwnerError::Close).to_string(),
            "mqttsession: transport close failed"
        );
        let err: &dyn std::error::Error = &ClientError::Frame(CodecError::OwnerFrame);
        assert!(err.source().is_some());
    }

    fn identity(limit: usize) -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9._-]{1,64}",
            "[^\u{0}]{1,32}",
            proptest::collection::vec(any::<char>(), 1..8)
                .prop_map(|chars| chars.into_iter().collect::<String>()),
        ]
        .prop_filter("valid identity", move |s| valid_identity(s, limit))
    }

    fn valid_owner() -> impl Strategy<Value = Owner> {
        (
            identity(IDENTITY_MAX),
            identity(IDENTITY_MAX),
            1..=u64::MAX,
            1..=u64::MAX,
            1..=u64::MAX,
            identity(BOOT_ID_MAX),
            1..=u64::MAX,
        )
            .prop_map(
                |(namespace, client_id, session, generation, node, boot, connection)| Owner {
                    key: OwnerKey::new(namespace, client_id),
                    session_generation: session,
                    owner_generation: generation,
                    node_id: node,
                    boot_id: boot.into(),
                    connection_id: connection,
                },
            )
    }

    proptest! {
        #[test]
        fn prop_valid_owners_round_trip(o in valid_owner(), code in 1u8..=5) {
            let status = QuiesceStatus::from_u8(code).unwrap();
            let request = encode_request(&o).unwrap();
            prop_assert_eq!(request.len(), encoded_len(&o).unwrap());
            prop_assert!(request.len() <= MAX_LEGAL_FRAME);
            prop_assert_eq!(decode_request(&request).unwrap(), o.clone());
            let response = encode_response(&o, status).unwrap();
            prop_assert_eq!(decode_response(&response).unwrap(), (o.clone(), status));
            prop_assert_eq!(client_result(&o, &response), status.result().map_err(ClientError::Owner));
        }

        #[test]
        fn prop_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(o) = decode_request(&bytes) {
                prop_assert_eq!(encode_request(&o).unwrap(), bytes.clone());
            }
            if let Ok((o, status)) = decode_response(&bytes) {
                prop_assert_eq!(encode_response(&o, status).unwrap(), bytes);
            }
        }

        #[test]
        fn prop_mutated_golden_never_panics(
            response in any::<bool>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            tail in proptest::collection::vec(any::<u8>(), 0..4),
        ) {
            // Mutations of a valid frame reach the field parsers far more often than random
            // bytes do.
            let mut frame = hex(if response { RESPONSE_1 } else { REQUEST });
            for (at, byte) in flips {
                let at = at.index(frame.len());
                frame[at] = byte;
            }
            frame.truncate(cut.index(frame.len() + 1));
            frame.extend_from_slice(&tail);
            if let Ok(o) = decode_request(&frame) {
                prop_assert_eq!(encode_request(&o).unwrap(), frame.clone());
            }
            if let Ok((o, status)) = decode_response(&frame) {
                prop_assert_eq!(encode_response(&o, status).unwrap(), frame);
            }
        }
    }
}
