//! Fuzzes `ForwardRequest::decode` (service 1, v1-v3) on arbitrary bytes.
//!
//! Beyond "no panic, no over-read" (ASAN checks the latter), every accepted frame must satisfy
//! the decoder's postconditions, and re-encoding it must round-trip whenever the encoder accepts
//! the request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wkcore::codec::forward::{ForwardRequest, V1_HEADER_LEN, V2_HEADER_LEN, V3_HEADER_LEN};
use wkcore::codec::CodecError;

fuzz_target!(|data: &[u8]| {
    let req = match ForwardRequest::decode(data) {
        Ok(req) => req,
        Err(err) => {
            assert!(err.is_invalid_payload(), "decode gave {err:?}");
            return;
        }
    };

    // The version byte decides the header; the payload is exactly the rest.
    let header = match data.first() {
        Some(1) => V1_HEADER_LEN,
        Some(2) => V2_HEADER_LEN,
        Some(3) => V3_HEADER_LEN,
        other => panic!("decode accepted version {other:?}"),
    };
    assert_eq!(data.get(header..), Some(req.payload.as_slice()));

    match req.encode() {
        Ok(frame) => {
            assert_eq!(Ok(frame.len()), req.encoded_len());
            assert_eq!(ForwardRequest::decode(&frame).as_ref(), Ok(&req));
            // A canonical v3 frame (class and flags in {0, 1}) re-encodes byte for byte.
            if let [3, 0 | 1, 0 | 1, ..] = data {
                assert_eq!(frame, data);
            }
        }
        Err(err) => {
            // The decoder accepts Slot 0 and empty payloads; the encoder refuses exactly those.
            assert_eq!(err, CodecError::InvalidRequest);
            assert!(req.slot_id == 0 || req.payload.is_empty());
        }
    }
});
