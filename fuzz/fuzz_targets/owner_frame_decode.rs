//! Fuzzes the MQTT owner frame decoders (service 107) on arbitrary bytes, as a request and as a
//! response.
//!
//! Beyond "no panic, no over-read" (ASAN checks the latter), every failure must be the one wire
//! error, and every accepted frame must re-encode to exactly the input: the format has no
//! normalization, so decode → encode is the identity on every frame the decoder accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wkcore::codec::owner_frame::{
    client_result, decode_request, decode_response, encode_request, encode_response, ClientError,
    MAX_LEGAL_FRAME, OP_QUIESCE, REQUEST_MAGIC, RESPONSE_MAGIC,
};
use wkcore::codec::CodecError;

fuzz_target!(|data: &[u8]| {
    let request = decode_request(data);
    let response = decode_response(data);

    // The magics differ, so no frame is both.
    assert!(request.is_err() || response.is_err(), "decoded both ways");

    match request {
        Ok(owner) => {
            assert!(data.len() <= MAX_LEGAL_FRAME);
            assert_eq!(data.get(..4), Some(&REQUEST_MAGIC[..]));
            assert_eq!(data.get(5), Some(&OP_QUIESCE));
            assert_eq!(owner.validate(), Ok(()));
            assert_eq!(encode_request(&owner).as_deref(), Ok(data));
        }
        Err(err) => assert_eq!(err, CodecError::OwnerFrame),
    }

    match response {
        Ok((owner, status)) => {
            assert!(data.len() <= MAX_LEGAL_FRAME);
            assert_eq!(data.get(..4), Some(&RESPONSE_MAGIC[..]));
            assert_eq!(data.get(5), Some(&status.code()));
            assert_eq!(owner.validate(), Ok(()));
            assert_eq!(encode_response(&owner, status).as_deref(), Ok(data));
            // The client accepts the echo of its own owner and maps the status.
            assert_eq!(
                client_result(&owner, data),
                status.result().map_err(ClientError::Owner)
            );
        }
        Err(err) => assert_eq!(err, CodecError::OwnerFrame),
    }
});
