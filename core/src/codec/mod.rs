//! Wire codecs that must stay byte-for-byte compatible with upstream WuKongIM.
//!
//! Each submodule mirrors one upstream Go codec; upstream's encoder and decoder are the contract,
//! and the tests beside each codec pin golden vectors and negative cases byte for byte.
//!
//! | module | upstream | frame |
//! |---|---|---|
//! | [`forward`] | `pkg/cluster/propose/codec.go` | forwarded-proposal request, node RPC service 1, versions v1–v3 (the encoder writes v3) |
//! | [`payload`] | `pkg/cluster/propose/codec.go`, `pkg/slot/multiraft/slot.go` | the propose payload envelope `[0x01][hashSlot][command]` and the multiraft entry envelope `[hashSlot][createdAtMS][command]` |
//! | [`owner_frame`] | `internal/access/node/mqtt_owner_codec.go`, `mqtt_owner_rpc.go` | MQTT owner quiesce request (`WKMQ`) and response (`WKMq`), node RPC service 107, format 1 |
//! | [`delivery_tag`] | `internal/access/node/delivery_tag_codec.go` | delivery tag request (`WKDT`) and response (`WKDG`), node RPC service 44, format 1, varint fields |
//!
//! Every upstream codec wkcore needs is here; all of them share [`CodecError`].
//!
//! # Rules every codec here follows
//!
//! - All fixed-width integers are big-endian; [`delivery_tag`] uses Go's LEB128 varints instead.
//! - Decoders never panic and never read past the input: every access goes through `get`,
//!   `split_at_checked` or `try_into`, so a short or hostile frame yields an error. `fuzz/` runs
//!   each decoder on arbitrary bytes to keep it that way.
//! - Decoders copy what they return; nothing borrows from the input buffer.
//! - Errors are [`CodecError`] variants whose `Display` is the exact upstream text, so the FFI and
//!   Go layers can map them to upstream sentinels without string matching on our side.

pub mod delivery_tag;
pub mod forward;
pub mod owner_frame;
pub mod payload;

use core::fmt;

/// Why an encode or decode failed.
///
/// `Display` renders the exact upstream error text. Upstream, the three "invalid payload" texts
/// wrap `propose.ErrInvalidPayload` (`cluster/propose: invalid payload`); use
/// [`CodecError::is_invalid_payload`] for that `errors.Is` relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodecError {
    /// The request cannot be encoded: Slot ID 0 or an empty payload (`propose.ErrInvalidRequest`).
    ///
    /// Text: `cluster/propose: invalid request`.
    InvalidRequest,
    /// A forwarded request is too short for its version, or its version byte is unknown.
    ///
    /// Text: `cluster/propose: invalid payload: forward payload`.
    ForwardPayload,
    /// A forwarded request's declared payload length differs from the bytes that follow the
    /// header (truncated or trailing bytes).
    ///
    /// Text: `cluster/propose: invalid payload: forward payload length`.
    ForwardPayloadLength,
    /// A propose payload envelope is shorter than 3 bytes or its version byte is not 1.
    ///
    /// Text: `cluster/propose: invalid payload: propose payload`.
    ProposePayload,
    /// A multiraft entry envelope is shorter than
    /// [`PROPOSAL_ENVELOPE_SIZE`](payload::PROPOSAL_ENVELOPE_SIZE) bytes; `len` is its length.
    ///
    /// Text: `proposal payload too short: <len>` (upstream `decodeProposalPayload`).
    EntryTooShort {
        /// Length of the rejected entry data.
        len: usize,
    },
    /// The frame is longer than [`forward::MAX_FRAME_LEN`].
    ///
    /// **wkcore limit, not upstream**: Go accepts any length its transport delivers. The text
    /// keeps the upstream `invalid payload` prefix so that it still reads (and maps) as an invalid
    /// payload: `cluster/propose: invalid payload: frame exceeds wkcore limit`.
    Oversize,
    /// An MQTT owner frame ([`owner_frame`], service 107) failed to encode or decode: an invalid
    /// owner, a wrong magic, format, op or status, a bad length, or trailing bytes. Upstream
    /// reports every such failure as one error, `errMQTTOwnerWire`.
    ///
    /// Text: `node: invalid MQTT owner frame`.
    OwnerFrame,
    /// A delivery tag frame ([`delivery_tag`], service 44) failed to decode: a wrong magic, a
    /// short or overflowing varint, a short string or channel type, a collection count over the
    /// bytes left, or trailing bytes. The inner [`delivery_tag::DeliveryTagError`] says which.
    ///
    /// Text: `access/node: <detail>`, the inner error's text (for example
    /// `access/node: short uvarint`).
    DeliveryTag(delivery_tag::DeliveryTagError),
}

impl CodecError {
    /// Whether upstream would report this error as wrapping `propose.ErrInvalidPayload`
    /// (`errors.Is(err, ErrInvalidPayload)`). [`CodecError::Oversize`] is included because it
    /// stands in for a payload upstream would otherwise have accepted or rejected as invalid.
    #[must_use]
    pub const fn is_invalid_payload(&self) -> bool {
        matches!(
            self,
            Self::ForwardPayload
                | Self::ForwardPayloadLength
                | Self::ProposePayload
                | Self::Oversize
        )
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidRequest => f.write_str("cluster/propose: invalid request"),
            Self::ForwardPayload => {
                f.write_str("cluster/propose: invalid payload: forward payload")
            }
            Self::ForwardPayloadLength => {
                f.write_str("cluster/propose: invalid payload: forward payload length")
            }
            Self::ProposePayload => {
                f.write_str("cluster/propose: invalid payload: propose payload")
            }
            Self::EntryTooShort { len } => write!(f, "proposal payload too short: {len}"),
            Self::Oversize => {
                f.write_str("cluster/propose: invalid payload: frame exceeds wkcore limit")
            }
            Self::OwnerFrame => f.write_str(crate::owner::error::texts::text(
                crate::owner::error::texts::INVALID_FRAME,
            )),
            Self::DeliveryTag(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for CodecError {}

/// Helpers shared by the codec tests.
#[cfg(test)]
pub(crate) mod test_util {
    /// Decodes a hex string as written in the spec (`"010003636d64"`); panics on bad input.
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        assert!(s.len() % 2 == 0, "odd hex length: {s}");
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("valid hex"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::CodecError;

    #[test]
    fn display_matches_upstream_texts() {
        let cases = [
            (
                CodecError::InvalidRequest,
                "cluster/propose: invalid request",
            ),
            (
                CodecError::ForwardPayload,
                "cluster/propose: invalid payload: forward payload",
            ),
            (
                CodecError::ForwardPayloadLength,
                "cluster/propose: invalid payload: forward payload length",
            ),
            (
                CodecError::ProposePayload,
                "cluster/propose: invalid payload: propose payload",
            ),
            (
                CodecError::EntryTooShort { len: 9 },
                "proposal payload too short: 9",
            ),
            (CodecError::OwnerFrame, "node: invalid MQTT owner frame"),
            (
                CodecError::DeliveryTag(super::delivery_tag::DeliveryTagError::ShortBytes),
                "access/node: short bytes",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }

    #[test]
    fn invalid_payload_relation() {
        // Upstream: the three "invalid payload: ..." errors wrap ErrInvalidPayload,
        // ErrInvalidRequest does not.
        assert!(!CodecError::InvalidRequest.is_invalid_payload());
        assert!(CodecError::ForwardPayload.is_invalid_payload());
        assert!(CodecError::ForwardPayloadLength.is_invalid_payload());
        assert!(CodecError::ProposePayload.is_invalid_payload());
        assert!(CodecError::Oversize.is_invalid_payload());
        assert!(!CodecError::EntryTooShort { len: 0 }.is_invalid_payload());
        assert!(!CodecError::OwnerFrame.is_invalid_payload());
        for err in [
            CodecError::ForwardPayload,
            CodecError::ForwardPayloadLength,
            CodecError::ProposePayload,
            CodecError::Oversize,
        ] {
            assert!(err
                .to_string()
                .starts_with("cluster/propose: invalid payload: "));
        }
    }

    #[test]
    fn is_std_error() {
        fn takes(_: &dyn std::error::Error) {}
        takes(&CodecError::ForwardPayload);
    }
}
