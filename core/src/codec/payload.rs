//! Proposal envelopes: the cluster propose payload and the multiraft entry.
//!
//! Two different envelopes wrap a Slot FSM command on its way into Raft (upstream
//! `pkg/cluster/propose/codec.go` and `pkg/slot/multiraft/slot.go`); all integers are big-endian.
//!
//! | envelope | layout | upstream |
//! |---|---|---|
//! | propose payload | `[0x01][hashSlot u16][command]` | `propose.EncodePayload` / `DecodePayload` |
//! | multiraft entry | `[hashSlot u16][createdAtMS u64][command]` | `multiraftPayloadWithCreatedAt` / `decodeProposalPayload` |
//!
//! The propose payload travels inside [`super::forward::ForwardRequest`]; the leader converts it
//! into the multiraft entry ([`entry_from_payload`], upstream `default_slot_proposer.go`) before
//! handing it to Raft.

use super::CodecError;

/// Version byte of the propose payload envelope (upstream `payloadVersion`).
pub const PAYLOAD_VERSION: u8 = 1;

/// Header length of the propose payload envelope: version byte plus hash slot.
pub const PAYLOAD_HEADER_LEN: usize = 3;

/// Header length of the multiraft entry envelope: `[hashSlot u16][createdAtMS u64]`
/// (upstream `proposalEnvelopeSize`).
pub const PROPOSAL_ENVELOPE_SIZE: usize = 10;

/// Wraps `command` as a propose payload: `[0x01][hash_slot u16 BE][command]`.
#[must_use]
pub fn encode_payload(hash_slot: u16, command: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PAYLOAD_HEADER_LEN + command.len());
    out.push(PAYLOAD_VERSION);
    out.extend_from_slice(&hash_slot.to_be_bytes());
    out.extend_from_slice(command);
    out
}

/// Unwraps a propose payload into its hash slot and a copy of its command (empty when the
/// payload is exactly the 3-byte header; upstream returns a nil slice there).
///
/// # Errors
///
/// [`CodecError::ProposePayload`] when `payload` is shorter than 3 bytes or its first byte is
/// not [`PAYLOAD_VERSION`].
pub fn decode_payload(payload: &[u8]) -> Result<(u16, Vec<u8>), CodecError> {
    match payload {
        [PAYLOAD_VERSION, hi, lo, command @ ..] => {
            Ok((u16::from_be_bytes([*hi, *lo]), command.to_vec()))
        }
        _ => Err(CodecError::ProposePayload),
    }
}

/// Builds a multiraft entry: `[hash_slot u16 BE][created_at_ms u64 BE][command]`.
///
/// Upstream stamps `created_at_ms` with the wall clock (`time.Now().UTC().UnixMilli()`, an
/// `int64` written as `uint64`); here the caller supplies it.
#[must_use]
pub fn encode_entry(hash_slot: u16, created_at_ms: u64, command: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PROPOSAL_ENVELOPE_SIZE + command.len());
    out.extend_from_slice(&hash_slot.to_be_bytes());
    out.extend_from_slice(&created_at_ms.to_be_bytes());
    out.extend_from_slice(command);
    out
}

/// Splits a multiraft entry into hash slot, creation time (ms) and command.
///
/// Unlike the other decoders here, the command borrows from `entry`, as upstream
/// `decodeProposalPayload` hands the state machine the entry's own bytes without a copy.
///
/// # Errors
///
/// [`CodecError::EntryTooShort`] when `entry` is shorter than [`PROPOSAL_ENVELOPE_SIZE`].
pub fn decode_entry(entry: &[u8]) -> Result<(u16, u64, &[u8]), CodecError> {
    let too_short = CodecError::EntryTooShort { len: entry.len() };
    let (hash_slot, rest) = entry.split_first_chunk::<2>().ok_or(too_short)?;
    let (created_at_ms, command) = rest.split_first_chunk::<8>().ok_or(too_short)?;
    Ok((
        u16::from_be_bytes(*hash_slot),
        u64::from_be_bytes(*created_at_ms),
        command,
    ))
}

/// Converts a propose payload into a multiraft entry stamped `created_at_ms`, as the leader
/// does before proposing (upstream `defaultSlotProposer.Propose`).
///
/// # Errors
///
/// [`CodecError::ProposePayload`] when `payload` is not a valid propose payload.
pub fn entry_from_payload(payload: &[u8], created_at_ms: u64) -> Result<Vec<u8>, CodecError> {
    match payload {
        [PAYLOAD_VERSION, hi, lo, command @ ..] => Ok(encode_entry(
            u16::from_be_bytes([*hi, *lo]),
            created_at_ms,
            command,
        )),
        _ => Err(CodecError::ProposePayload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::test_util::hex;
    use proptest::prelude::*;

    #[test]
    fn golden_encode_payload() {
        assert_eq!(encode_payload(3, b"cmd"), hex("010003636d64"));
    }

    #[test]
    fn golden_decode_payload() {
        assert_eq!(
            decode_payload(&hex("010003636d64")),
            Ok((3, b"cmd".to_vec()))
        );
        // Exactly the header: empty command, no error.
        assert_eq!(decode_payload(&hex("01fffe")), Ok((0xfffe, Vec::new())));
    }

    /// Upstream `TestPayloadCodecRoundTripsHashSlotZero`.
    #[test]
    fn payload_codec_round_trips_hash_slot_zero() {
        let payload = encode_payload(0, b"cmd");
        assert_eq!(decode_payload(&payload), Ok((0, b"cmd".to_vec())));
    }

    #[test]
    fn decode_payload_rejects_short_and_bad_version() {
        for bad in ["", "01", "0100", "000003636d64", "020003636d64", "ff0003"] {
            let err = decode_payload(&hex(bad)).unwrap_err();
            assert_eq!(err, CodecError::ProposePayload, "input {bad}");
            assert_eq!(
                err.to_string(),
                "cluster/propose: invalid payload: propose payload"
            );
        }
        for version in (0..=u8::MAX).filter(|v| *v != PAYLOAD_VERSION) {
            assert_eq!(
                decode_payload(&[version, 0, 3, b'x']),
                Err(CodecError::ProposePayload)
            );
        }
    }

    #[test]
    fn every_truncation_of_golden_payload() {
        let payload = hex("010003636d64");
        for cut in 0..=payload.len() {
            let got = decode_payload(&payload[..cut]);
            if cut < PAYLOAD_HEADER_LEN {
                assert_eq!(got, Err(CodecError::ProposePayload), "cut {cut}");
            } else {
                assert_eq!(got, Ok((3, payload[PAYLOAD_HEADER_LEN..cut].to_vec())));
            }
        }
    }

    #[test]
    fn entry_layout_is_byte_exact() {
        // Timestamp from upstream multiraft test helper `proposalPayload`.
        let entry = encode_entry(3, 1_781_754_611_123, b"cmd");
        assert_eq!(entry, hex("00030000019ed8d9c5b3636d64"));
        assert_eq!(entry.len(), PROPOSAL_ENVELOPE_SIZE + 3);
        assert_eq!(
            decode_entry(&entry),
            Ok((3, 1_781_754_611_123, b"cmd".as_slice()))
        );
    }

    #[test]
    fn entry_decode_borrows_command_without_copy() {
        let entry = encode_entry(0, 1, b"owned-command-data");
        let (_, _, command) = decode_entry(&entry).unwrap();
        assert!(std::ptr::eq(
            command.as_ptr(),
            &entry[PROPOSAL_ENVELOPE_SIZE]
        ));
    }

    #[test]
    fn entry_too_short_for_every_prefix() {
        let entry = encode_entry(3, u64::MAX, b"cmd");
        for cut in 0..PROPOSAL_ENVELOPE_SIZE {
            let err = decode_entry(&entry[..cut]).unwrap_err();
            assert_eq!(err, CodecError::EntryTooShort { len: cut });
            assert_eq!(
                err.to_string(),
                format!("proposal payload too short: {cut}")
            );
        }
        assert_eq!(
            decode_entry(&entry[..PROPOSAL_ENVELOPE_SIZE]),
            Ok((3, u64::MAX, [].as_slice()))
        );
    }

    #[test]
    fn entry_from_payload_converts_envelopes() {
        let entry = entry_from_payload(&encode_payload(11, b"cmd"), 42).unwrap();
        assert_eq!(entry, encode_entry(11, 42, b"cmd"));
        assert_eq!(
            entry_from_payload(&hex("0200"), 42),
            Err(CodecError::ProposePayload)
        );
    }

    proptest! {
        #[test]
        fn prop_payload_round_trips(hash_slot in any::<u16>(), command in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(decode_payload(&encode_payload(hash_slot, &command)), Ok((hash_slot, command)));
        }

        #[test]
        fn prop_entry_round_trips(hash_slot in any::<u16>(), created in any::<u64>(), command in proptest::collection::vec(any::<u8>(), 0..64)) {
            let entry = encode_entry(hash_slot, created, &command);
            prop_assert_eq!(decode_entry(&entry), Ok((hash_slot, created, command.as_slice())));
        }

        #[test]
        fn prop_decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok((hash_slot, command)) = decode_payload(&bytes) {
                prop_assert_eq!(encode_payload(hash_slot, &command), bytes.clone());
            }
            if let Ok((hash_slot, created, command)) = decode_entry(&bytes) {
                prop_assert_eq!(encode_entry(hash_slot, created, command), bytes.clone());
            }
        }
    }
}
