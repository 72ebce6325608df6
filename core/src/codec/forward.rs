//! Forwarded-proposal request codec: node RPC service [`RPC_SLOT_FORWARD_PROPOSE`] (1).
//!
//! When the Slot leader is on another node, the cluster propose service forwards the proposal
//! in this frame (upstream `pkg/cluster/propose/codec.go`).
//! All integers are big-endian; offsets are bytes.
//!
//! | version | layout | min length | class | want_result |
//! |---|---|---|---|---|
//! | v1 (legacy) | `[0]=1` `[1..5)` slot `[5..7)` hash slot `[7..11)` payload len `[11..]` payload | 11 | foreground | `false` |
//! | v2 | `[0]=2` `[1]` class `[2..6)` slot `[6..8)` hash slot `[8..12)` payload len `[12..]` payload | 12 | normalized | `false` |
//! | v3 | `[0]=3` `[1]` class `[2]` flags `[3..7)` slot `[7..9)` hash slot `[9..13)` payload len `[13..]` payload | 13 | normalized | `flags & 1 != 0` |
//!
//! The encoder always writes v3. The decoder accepts all three versions.
//!
//! # Upstream asymmetries kept on purpose
//!
//! - The encoder refuses Slot ID 0 and an empty payload ([`CodecError::InvalidRequest`]); the
//!   decoder accepts both.
//! - The class byte is normalized on decode: 1 is background, any other value is foreground.
//!   Flag bits other than bit 0 are ignored, so decode → encode does not reproduce such frames.
//!
//! # wkcore addition
//!
//! Frames longer than [`MAX_FRAME_LEN`] are refused with [`CodecError::Oversize`], on both
//! encode and decode. Upstream has no such limit; see the constant.

use super::CodecError;
use crate::admission::ProposalClass;

/// Node RPC service ID of the forwarded proposal (upstream `clusternet.RPCSlotForwardPropose`,
/// a `uint8`).
pub const RPC_SLOT_FORWARD_PROPOSE: u8 = 1;

/// Largest frame, header included, that [`ForwardRequest::encode`] writes and
/// [`ForwardRequest::decode`] reads: 64 MiB.
///
/// **This is a wkcore limit, not an upstream one.** Go bounds the frame only by its transport
/// and by the `u32` length field. wkcore refuses larger frames with [`CodecError::Oversize`] so
/// that a hostile length cannot make the host copy an unbounded buffer; Slot metadata commands
/// are orders of magnitude smaller.
pub const MAX_FRAME_LEN: usize = 64 << 20;

/// Version byte of the legacy v1 frame (no class, no flags).
pub const VERSION_V1: u8 = 1;
/// Version byte of the v2 frame (adds the class byte).
pub const VERSION_V2: u8 = 2;
/// Version byte of the v3 frame (adds the flags byte); the only version the encoder writes.
pub const VERSION_V3: u8 = 3;

/// Header length of a v1 frame, and the minimum length of any frame.
pub const V1_HEADER_LEN: usize = 11;
/// Header length of a v2 frame.
pub const V2_HEADER_LEN: usize = 12;
/// Header length of a v3 frame.
pub const V3_HEADER_LEN: usize = 13;

/// Bit of the v3 flags byte that carries [`ForwardRequest::want_result`].
pub const FLAG_WANT_RESULT: u8 = 1;

/// A proposal forwarded to the Slot leader (upstream `propose.ForwardRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardRequest {
    /// Target Slot. The encoder refuses 0; the decoder accepts it.
    pub slot_id: u32,
    /// Hash slot of the command.
    pub hash_slot: u16,
    /// Admission class the leader must apply (v2+; v1 frames decode as foreground).
    pub class: ProposalClass,
    /// Whether the caller wants the apply result back (v3 flags bit 0; `false` for v1/v2).
    pub want_result: bool,
    /// The propose payload (normally [`super::payload::encode_payload`] output), copied on
    /// decode. The encoder refuses an empty payload; the decoder accepts it.
    pub payload: Vec<u8>,
}

impl ForwardRequest {
    /// Length of the v3 frame [`encode`](Self::encode) would write, or the error it would return.
    ///
    /// # Errors
    ///
    /// [`CodecError::InvalidRequest`] for Slot ID 0 or an empty payload (checked first, as
    /// upstream does); [`CodecError::Oversize`] when the frame would exceed [`MAX_FRAME_LEN`].
    pub fn encoded_len(&self) -> Result<usize, CodecError> {
        if self.slot_id == 0 || self.payload.is_empty() {
            return Err(CodecError::InvalidRequest);
        }
        match V3_HEADER_LEN.checked_add(self.payload.len()) {
            Some(len) if len <= MAX_FRAME_LEN => Ok(len),
            _ => Err(CodecError::Oversize),
        }
    }

    /// Encodes the request as a new v3 frame.
    ///
    /// # Errors
    ///
    /// As [`encoded_len`](Self::encoded_len).
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the request to `out` as a v3 frame. On error `out` is left untouched.
    ///
    /// # Errors
    ///
    /// As [`encoded_len`](Self::encoded_len).
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let len = self.encoded_len()?;
        // Cannot fail: encoded_len bounded the payload by MAX_FRAME_LEN < u32::MAX.
        let payload_len = u32::try_from(self.payload.len()).map_err(|_| CodecError::Oversize)?;
        let class = match self.class {
            ProposalClass::Foreground => 0u8,
            ProposalClass::Background => 1u8,
        };
        let flags = if self.want_result {
            FLAG_WANT_RESULT
        } else {
            0
        };
        out.reserve(len);
        out.push(VERSION_V3);
        out.push(class);
        out.push(flags);
        out.extend_from_slice(&self.slot_id.to_be_bytes());
        out.extend_from_slice(&self.hash_slot.to_be_bytes());
        out.extend_from_slice(&payload_len.to_be_bytes());
        out.extend_from_slice(&self.payload);
        Ok(())
    }

    /// Decodes a v1, v2 or v3 frame exactly as upstream `DecodeForwardRequest` does, copying the
    /// payload.
    ///
    /// # Errors
    ///
    /// - [`CodecError::Oversize`]: longer than [`MAX_FRAME_LEN`] (wkcore only).
    /// - [`CodecError::ForwardPayload`]: shorter than 11 bytes, an unknown version byte
    ///   (0 or 4..=255), or shorter than its version's header (12 for v2, 13 for v3).
    /// - [`CodecError::ForwardPayloadLength`]: the declared payload length is not exactly the
    ///   number of bytes after the header (short or trailing bytes).
    pub fn decode(bytes: &[u8]) -> Result<ForwardRequest, CodecError> {
        if bytes.len() > MAX_FRAME_LEN {
            return Err(CodecError::Oversize);
        }
        if bytes.len() < V1_HEADER_LEN {
            return Err(CodecError::ForwardPayload);
        }
        let (class, want_result, body) = match bytes {
            [VERSION_V1, body @ ..] => (ProposalClass::Foreground, false, body),
            [VERSION_V2, class, body @ ..] => {
                (ProposalClass::from_raw(u32::from(*class)), false, body)
            }
            [VERSION_V3, class, flags, body @ ..] => (
                ProposalClass::from_raw(u32::from(*class)),
                flags & FLAG_WANT_RESULT != 0,
                body,
            ),
            _ => return Err(CodecError::ForwardPayload),
        };
        // Common tail of all versions: [slot u32][hash slot u16][payload len u32][payload].
        // A body too short for it means v2 < 12 or v3 < 13 bytes: the short-frame error.
        let (slot_id, body) = body
            .split_first_chunk::<4>()
            .ok_or(CodecError::ForwardPayload)?;
        let (hash_slot, body) = body
            .split_first_chunk::<2>()
            .ok_or(CodecError::ForwardPayload)?;
        let (payload_len, payload) = body
            .split_first_chunk::<4>()
            .ok_or(CodecError::ForwardPayload)?;
        if usize::try_from(u32::from_be_bytes(*payload_len)).ok() != Some(payload.len()) {
            return Err(CodecError::ForwardPayloadLength);
        }
        Ok(ForwardRequest {
            slot_id: u32::from_be_bytes(*slot_id),
            hash_slot: u16::from_be_bytes(*hash_slot),
            class,
            want_result,
            payload: payload.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::test_util::hex;
    use proptest::prelude::*;

    /// `EncodePayload(3, "cmd")`.
    const PAYLOAD: &str = "010003636d64";
    /// v3, slot 11, hash 3, background, want_result.
    const V3_BG_WANT: &str = "0301010000000b000300000006010003636d64";
    /// v3, slot 11, hash 3, foreground, no result.
    const V3_FG: &str = "0300000000000b000300000006010003636d64";
    const V1: &str = "010000000b000300000006010003636d64";
    const V2_BG: &str = "02010000000b000300000006010003636d64";
    const V2_CLASS9: &str = "02090000000b000300000006010003636d64";
    const V3_FLAGS_FF: &str = "0301ff0000000b000300000006010003636d64";
    const V1_EMPTY: &str = "010000000b000300000000";
    const V3_LEN7: &str = "0301000000000b000300000007010003636d64";

    const GOLDEN: [&str; 7] = [
        V3_BG_WANT,
        V3_FG,
        V1,
        V2_BG,
        V2_CLASS9,
        V3_FLAGS_FF,
        V1_EMPTY,
    ];

    fn req(class: ProposalClass, want_result: bool) -> ForwardRequest {
        ForwardRequest {
            slot_id: 11,
            hash_slot: 3,
            class,
            want_result,
            payload: hex(PAYLOAD),
        }
    }

    #[test]
    fn rpc_service_id_is_one() {
        assert_eq!(RPC_SLOT_FORWARD_PROPOSE, 1);
    }

    #[test]
    fn golden_encode_background_want_result() {
        let frame = req(ProposalClass::Background, true).encode().unwrap();
        assert_eq!(frame, hex(V3_BG_WANT));
        assert_eq!(frame.len(), 19);
    }

    #[test]
    fn golden_encode_foreground() {
        assert_eq!(
            req(ProposalClass::Foreground, false).encode().unwrap(),
            hex(V3_FG)
        );
        // "class 7" upstream normalizes to foreground before encoding; in wkcore the
        // normalization happens when the class is built from the raw value.
        let mut r = req(ProposalClass::from_raw(7), false);
        assert_eq!(r.class, ProposalClass::Foreground);
        assert_eq!(r.encode().unwrap(), hex(V3_FG));
        r.class = ProposalClass::from_raw(1);
        assert_eq!(r.encode().unwrap()[1], 1);
    }

    #[test]
    fn golden_decode_v3() {
        assert_eq!(
            ForwardRequest::decode(&hex(V3_BG_WANT)).unwrap(),
            req(ProposalClass::Background, true)
        );
        assert_eq!(
            ForwardRequest::decode(&hex(V3_FG)).unwrap(),
            req(ProposalClass::Foreground, false)
        );
    }

    #[test]
    fn golden_decode_v1() {
        let got = ForwardRequest::decode(&hex(V1)).unwrap();
        assert_eq!(got, req(ProposalClass::Foreground, false));
        assert_eq!(got.payload.len(), 6);
    }

    #[test]
    fn golden_decode_v2_class_normalized() {
        assert_eq!(
            ForwardRequest::decode(&hex(V2_BG)).unwrap(),
            req(ProposalClass::Background, false)
        );
        assert_eq!(
            ForwardRequest::decode(&hex(V2_CLASS9)).unwrap(),
            req(ProposalClass::Foreground, false)
        );
    }

    #[test]
    fn golden_decode_v3_tolerates_all_flag_bits() {
        assert_eq!(
            ForwardRequest::decode(&hex(V3_FLAGS_FF)).unwrap(),
            req(ProposalClass::Background, true)
        );
        // Only bit 0 matters: 0xfe means want_result = false.
        let mut frame = hex(V3_FLAGS_FF);
        frame[2] = 0xfe;
        assert!(!ForwardRequest::decode(&frame).unwrap().want_result);
    }

    #[test]
    fn v3_class_byte_normalized_for_every_value() {
        for raw in 0..=u8::MAX {
            let mut frame = hex(V3_FG);
            frame[1] = raw;
            let want = if raw == 1 {
                ProposalClass::Background
            } else {
                ProposalClass::Foreground
            };
            assert_eq!(ForwardRequest::decode(&frame).unwrap().class, want);
        }
    }

    #[test]
    fn golden_decode_v1_empty_payload_and_slot_zero_accepted() {
        let got = ForwardRequest::decode(&hex(V1_EMPTY)).unwrap();
        assert_eq!(got.slot_id, 11);
        assert_eq!(got.hash_slot, 3);
        assert!(got.payload.is_empty());
        // The decoder accepts Slot ID 0 (upstream asymmetry) in every version.
        for frame in [hex(V1), hex(V2_BG), hex(V3_BG_WANT)] {
            let mut frame = frame;
            let slot_at = frame.len() - 6 - 10;
            frame[slot_at..slot_at + 4].copy_from_slice(&[0; 4]);
            assert_eq!(ForwardRequest::decode(&frame).unwrap().slot_id, 0);
        }
        // ... and an empty payload in v3, which the encoder would refuse.
        let got = ForwardRequest::decode(&hex("03000100000000000000000000")).unwrap();
        assert_eq!(got.slot_id, 0);
        assert!(got.want_result);
        assert!(got.payload.is_empty());
    }

    #[test]
    fn encoder_refuses_slot_zero_and_empty_payload() {
        let mut r = req(ProposalClass::Background, true);
        r.slot_id = 0;
        assert_eq!(r.encode(), Err(CodecError::InvalidRequest));
        let mut r = req(ProposalClass::Background, true);
        r.payload.clear();
        assert_eq!(r.encode(), Err(CodecError::InvalidRequest));
        assert_eq!(
            CodecError::InvalidRequest.to_string(),
            "cluster/propose: invalid request"
        );
    }

    #[test]
    fn encode_into_appends_and_leaves_out_untouched_on_error() {
        let mut out = vec![0xaa];
        req(ProposalClass::Background, true)
            .encode_into(&mut out)
            .unwrap();
        assert_eq!(out[0], 0xaa);
        assert_eq!(&out[1..], hex(V3_BG_WANT).as_slice());
        let before = out.clone();
        let mut bad = req(ProposalClass::Foreground, false);
        bad.slot_id = 0;
        assert_eq!(bad.encode_into(&mut out), Err(CodecError::InvalidRequest));
        assert_eq!(out, before);
    }

    #[test]
    fn negative_cases_forward_payload() {
        let cases = [
            String::new(),
            "03".to_owned(),
            "0300000000000000000000".to_owned(),   // 11 B v3
            "030000000000000000000000".to_owned(), // 12 B v3
            format!("04{}", "00".repeat(12)),
            format!("00{}", "00".repeat(11)),
        ];
        for case in cases {
            let err = ForwardRequest::decode(&hex(&case)).unwrap_err();
            assert_eq!(err, CodecError::ForwardPayload, "input {case}");
            assert_eq!(
                err.to_string(),
                "cluster/propose: invalid payload: forward payload"
            );
        }
        // 11 B v2 is too short too.
        assert_eq!(
            ForwardRequest::decode(&hex("0201000000000000000000")),
            Err(CodecError::ForwardPayload)
        );
    }

    #[test]
    fn negative_case_forward_payload_length() {
        let err = ForwardRequest::decode(&hex(V3_LEN7)).unwrap_err();
        assert_eq!(err, CodecError::ForwardPayloadLength);
        assert_eq!(
            err.to_string(),
            "cluster/propose: invalid payload: forward payload length"
        );
    }

    #[test]
    fn trailing_bytes_rejected_as_length_mismatch() {
        for golden in GOLDEN {
            let mut frame = hex(golden);
            frame.push(0);
            assert_eq!(
                ForwardRequest::decode(&frame),
                Err(CodecError::ForwardPayloadLength),
                "{golden} + 00"
            );
        }
    }

    #[test]
    fn unknown_versions_rejected() {
        let tail = &hex(V1)[1..];
        for version in std::iter::once(0).chain(4..=u8::MAX) {
            let mut frame = vec![version];
            frame.extend_from_slice(tail);
            assert_eq!(
                ForwardRequest::decode(&frame),
                Err(CodecError::ForwardPayload),
                "version {version}"
            );
            // Also with a v3-sized header.
            frame.splice(1..1, [0, 0]);
            assert_eq!(
                ForwardRequest::decode(&frame),
                Err(CodecError::ForwardPayload)
            );
        }
    }

    #[test]
    fn every_truncation_of_golden_vectors_is_an_error() {
        for golden in GOLDEN {
            let frame = hex(golden);
            for cut in 0..frame.len() {
                let prefix = &frame[..cut];
                let err = ForwardRequest::decode(prefix).unwrap_err();
                let header = match frame[0] {
                    VERSION_V1 => V1_HEADER_LEN,
                    VERSION_V2 => V2_HEADER_LEN,
                    _ => V3_HEADER_LEN,
                };
                let want = if cut < header {
                    CodecError::ForwardPayload
                } else {
                    CodecError::ForwardPayloadLength
                };
                assert_eq!(err, want, "{golden} cut at {cut}");
            }
        }
    }

    #[test]
    fn oversize_frames_rejected() {
        let mut frame = vec![0u8; MAX_FRAME_LEN + 1];
        frame[0] = VERSION_V3;
        assert_eq!(ForwardRequest::decode(&frame), Err(CodecError::Oversize));

        // The largest frame is accepted both ways.
        let big = ForwardRequest {
            slot_id: 1,
            hash_slot: 0,
            class: ProposalClass::Foreground,
            want_result: false,
            payload: vec![7; MAX_FRAME_LEN - V3_HEADER_LEN],
        };
        let frame = big.encode().unwrap();
        assert_eq!(frame.len(), MAX_FRAME_LEN);
        assert_eq!(ForwardRequest::decode(&frame).unwrap(), big);

        drop(frame);
        let too_big = ForwardRequest {
            payload: vec![7; MAX_FRAME_LEN - V3_HEADER_LEN + 1],
            ..big
        };
        assert_eq!(too_big.encode(), Err(CodecError::Oversize));
        assert_eq!(too_big.encoded_len(), Err(CodecError::Oversize));
    }

    /// Upstream `TestForwardCodecRoundTripsProposalClass`.
    #[test]
    fn forward_codec_round_trips_proposal_class() {
        let r = req(ProposalClass::Background, false);
        let got = ForwardRequest::decode(&r.encode().unwrap()).unwrap();
        assert_eq!(got.class, ProposalClass::Background);
        assert!(!got.want_result);
        assert_eq!(got, r);
    }

    /// Upstream `TestForwardCodecRoundTripsWantResult`.
    #[test]
    fn forward_codec_round_trips_want_result() {
        let r = req(ProposalClass::Background, true);
        let got = ForwardRequest::decode(&r.encode().unwrap()).unwrap();
        assert!(got.want_result);
        assert_eq!(got.class, ProposalClass::Background);
        assert_eq!(got, r);
    }

    fn class_strategy() -> impl Strategy<Value = ProposalClass> {
        prop_oneof![
            Just(ProposalClass::Foreground),
            Just(ProposalClass::Background)
        ]
    }

    fn valid_request() -> impl Strategy<Value = ForwardRequest> {
        (
            1..=u32::MAX,
            any::<u16>(),
            class_strategy(),
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 1..256),
        )
            .prop_map(
                |(slot_id, hash_slot, class, want_result, payload)| ForwardRequest {
                    slot_id,
                    hash_slot,
                    class,
                    want_result,
                    payload,
                },
            )
    }

    proptest! {
        #[test]
        fn prop_decode_encode_round_trips(r in valid_request()) {
            let frame = r.encode().unwrap();
            prop_assert_eq!(frame.len(), r.encoded_len().unwrap());
            prop_assert_eq!(ForwardRequest::decode(&frame).unwrap(), r);
        }

        #[test]
        fn prop_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            // Any outcome is fine as long as it is not a panic; an Ok must re-encode
            // consistently when the encoder accepts it.
            if let Ok(r) = ForwardRequest::decode(&bytes) {
                if let Ok(frame) = r.encode() {
                    prop_assert_eq!(ForwardRequest::decode(&frame).unwrap(), r);
                }
            }
        }

        #[test]
        fn prop_decode_never_panics_near_valid(
            version in 0u8..5,
            class in any::<u8>(),
            flags in any::<u8>(),
            declared in prop_oneof![0u32..40, any::<u32>()],
            payload in proptest::collection::vec(any::<u8>(), 0..32),
            cut in any::<prop::sample::Index>(),
        ) {
            // Well-formed headers with random lengths reach the length check far more often
            // than fully random bytes do.
            let mut frame = vec![version, class, flags, 0, 0, 0, 11, 0, 3];
            frame.extend_from_slice(&declared.to_be_bytes());
            frame.extend_from_slice(&payload);
            let frame = &frame[..cut.index(frame.len() + 1)];
            let _ = ForwardRequest::decode(frame);
        }
    }
}
