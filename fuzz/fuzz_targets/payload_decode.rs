//! Fuzzes the proposal envelopes: the propose payload (`[0x01][hashSlot][command]`) and the
//! multiraft entry (`[hashSlot][createdAtMS][command]`), on arbitrary bytes.
//!
//! Both envelopes are total on their valid inputs, so every accepted input must re-encode to
//! exactly the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wkcore::codec::payload::{
    decode_entry, decode_payload, encode_entry, encode_payload, entry_from_payload,
};
use wkcore::codec::CodecError;

fuzz_target!(|data: &[u8]| {
    match decode_payload(data) {
        Ok((hash_slot, command)) => {
            assert_eq!(encode_payload(hash_slot, &command), data);
            let entry = entry_from_payload(data, 7).expect("valid payload converts");
            assert_eq!(entry, encode_entry(hash_slot, 7, &command));
        }
        Err(err) => {
            assert_eq!(err, CodecError::ProposePayload);
            assert_eq!(entry_from_payload(data, 7), Err(err));
        }
    }

    match decode_entry(data) {
        Ok((hash_slot, created_at_ms, command)) => {
            assert_eq!(encode_entry(hash_slot, created_at_ms, command), data);
        }
        Err(err) => assert_eq!(err, CodecError::EntryTooShort { len: data.len() }),
    }
});
