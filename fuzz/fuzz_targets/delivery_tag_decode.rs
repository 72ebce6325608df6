//! Fuzzes the delivery tag decoders (service 44) on arbitrary bytes, as a request and as a
//! response.
//!
//! Beyond "no panic, no over-read" (ASAN checks the latter), every failure must be a delivery
//! tag error, and every accepted frame must survive encode → decode unchanged. Exact re-encoding
//! is not required: the decoder accepts non-minimal varints and truncates a slot id to 32 bits,
//! so decode → encode can shorten a frame, but never lengthen it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wkcore::codec::delivery_tag::{
    decode_request, decode_response, encode_request, encode_response, REQUEST_MAGIC, RESPONSE_MAGIC,
};
use wkcore::codec::CodecError;

fuzz_target!(|data: &[u8]| {
    let request = decode_request(data);
    let response = decode_response(data);

    // The magics differ, so no frame is both.
    assert!(request.is_err() || response.is_err(), "decoded both ways");

    match request {
        Ok(request) => {
            assert_eq!(data.get(..5), Some(&REQUEST_MAGIC[..]));
            let again = encode_request(&request);
            assert!(again.len() <= data.len());
            assert_eq!(decode_request(&again), Ok(request));
        }
        Err(err) => assert!(matches!(err, CodecError::DeliveryTag(_)), "{err:?}"),
    }

    match response {
        Ok(response) => {
            assert_eq!(data.get(..5), Some(&RESPONSE_MAGIC[..]));
            let again = encode_response(&response);
            assert!(again.len() <= data.len());
            assert_eq!(decode_response(&again), Ok(response));
        }
        Err(err) => assert!(matches!(err, CodecError::DeliveryTag(_)), "{err:?}"),
    }
});
