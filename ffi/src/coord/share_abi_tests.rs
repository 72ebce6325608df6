//! Calls the shared-subscription topic helpers as a C host would: built topics and split offsets
//! on success; NULL, non-UTF-8, malformed and too-small arguments refused with out-parameters
//! untouched.

use std::ptr;

use crate::coord::share::*;
use crate::coord::status::*;
use crate::status::*;

const UNTOUCHED: usize = 0xdead;
const UNTOUCHED_SPLIT: wk_share_split = wk_share_split {
    shared: 7,
    reserved: 7,
    group_offset: 7,
    group_len: 7,
    filter_offset: 7,
    filter_len: 7,
};

/// Builds into a buffer of `cap` bytes: the status, and the topic on success.
fn build(group: &[u8], filter: &[u8], cap: usize) -> (wk_status, Option<Vec<u8>>) {
    let mut buf = vec![0xAAu8; cap];
    let mut len = UNTOUCHED;
    // SAFETY: inputs are live slices; `buf` has `cap` writable bytes; `len` is a local.
    let st = unsafe {
        wk_share_topic_build(
            group.as_ptr(),
            group.len(),
            filter.as_ptr(),
            filter.len(),
            buf.as_mut_ptr(),
            cap,
            &mut len,
        )
    };
    if st == WK_STATUS_OK {
        assert!(len <= cap);
        (st, Some(buf[..len].to_vec()))
    } else {
        assert_eq!(len, UNTOUCHED, "len_out written on a refusal");
        assert!(
            buf.iter().all(|&b| b == 0xAA),
            "buffer written on a refusal"
        );
        (st, None)
    }
}

/// Splits `topic`: the status and the split (untouched on a refusal).
fn split(topic: &[u8]) -> (wk_status, wk_share_split) {
    let mut out = UNTOUCHED_SPLIT;
    // SAFETY: a live slice and a local out-pointer.
    let st = unsafe { wk_share_topic_split(topic.as_ptr(), topic.len(), &mut out) };
    if st != WK_STATUS_OK {
        assert_eq!(out, UNTOUCHED_SPLIT, "split_out written on a refusal");
    }
    (st, out)
}

fn parts(topic: &[u8]) -> (bool, &[u8], &[u8]) {
    let (st, s) = split(topic);
    assert_eq!(st, WK_STATUS_OK, "{:?}", String::from_utf8_lossy(topic));
    assert_eq!(s.reserved, 0);
    let group = &topic[s.group_offset..s.group_offset + s.group_len];
    let filter = &topic[s.filter_offset..s.filter_offset + s.filter_len];
    (s.shared == 1, group, filter)
}

#[test]
fn build_writes_the_topic_and_split_finds_its_parts() {
    let (st, topic) = build(b"workers", b"uplink/+/data", 64);
    assert_eq!(st, WK_STATUS_OK);
    let topic = topic.unwrap();
    assert_eq!(topic, b"$share/workers/uplink/+/data");
    let (shared, group, filter) = parts(&topic);
    assert!(shared);
    assert_eq!(group, b"workers");
    assert_eq!(filter, b"uplink/+/data");
    let (_, s) = split(&topic);
    assert_eq!((s.group_offset, s.filter_offset), (7, 15));
}

#[test]
fn a_plain_filter_is_the_whole_topic() {
    for t in [&b"a/b"[..], b"#", b"$SYS/x", b"$sharex/g/f", b"a/$share/g"] {
        let (st, s) = split(t);
        assert_eq!(st, WK_STATUS_OK);
        assert_eq!(
            s,
            wk_share_split {
                shared: 0,
                reserved: 0,
                group_offset: 0,
                group_len: 0,
                filter_offset: 0,
                filter_len: t.len(),
            }
        );
    }
}

#[test]
fn the_buffer_must_hold_the_whole_topic() {
    let need = WK_SHARE_PREFIX_LEN + 1 + 1 + 3;
    assert_eq!(build(b"g", b"a/b", need).0, WK_STATUS_OK);
    assert_eq!(build(b"g", b"a/b", need - 1).0, WK_STATUS_BUFFER_TOO_SMALL);
    assert_eq!(build(b"g", b"a/b", 0).0, WK_STATUS_BUFFER_TOO_SMALL);
    // The parts are checked before the buffer.
    assert_eq!(build(b"", b"a/b", 0).0, WK_STATUS_COORD_INVALID_SHARE_GROUP);
    assert_eq!(
        build(b"g", b"a/#/b", 0).0,
        WK_STATUS_COORD_INVALID_TOPIC_FILTER
    );
    // A buffer of WK_SHARE_TOPIC_MAX bytes holds the longest topic; one byte more is refused.
    let room = WK_SHARE_TOPIC_MAX - WK_SHARE_PREFIX_LEN - 2;
    let (st, t) = build(b"g", &vec![b'f'; room], WK_SHARE_TOPIC_MAX);
    assert_eq!(st, WK_STATUS_OK);
    assert_eq!(t.unwrap().len(), WK_SHARE_TOPIC_MAX);
    assert_eq!(
        build(b"g", &vec![b'f'; room + 1], 2 * WK_SHARE_TOPIC_MAX).0,
        WK_STATUS_COORD_INVALID_TOPIC_FILTER
    );
    assert_eq!(
        split(&vec![b'p'; WK_SHARE_TOPIC_MAX + 1]).0,
        WK_STATUS_COORD_INVALID_TOPIC_FILTER
    );
}

#[test]
fn malformed_parts_are_refused() {
    let group_errors: [&[u8]; 6] = [b"", b"a/b", b"a+", b"#", b"g\0", b"\xff"];
    for g in group_errors {
        assert_eq!(
            build(g, b"f", 64).0,
            WK_STATUS_COORD_INVALID_SHARE_GROUP,
            "{g:?}"
        );
    }
    let filter_errors: [&[u8]; 7] = [b"", b"a/#/b", b"a+", b"a#", b"a\0", b"$share/h/f", b"\xc3"];
    for f in filter_errors {
        assert_eq!(
            build(b"g", f, 64).0,
            WK_STATUS_COORD_INVALID_TOPIC_FILTER,
            "{f:?}"
        );
    }
    // The group is checked before the filter, whatever is wrong with the filter.
    assert_eq!(
        build(b"a/b", b"\xff", 64).0,
        WK_STATUS_COORD_INVALID_SHARE_GROUP
    );
    assert_eq!(build(b"", b"", 64).0, WK_STATUS_COORD_INVALID_SHARE_GROUP);
    let topics: [(&[u8], wk_status); 11] = [
        (b"$share", WK_STATUS_COORD_INVALID_SHARE_GROUP),
        (b"$share/", WK_STATUS_COORD_INVALID_SHARE_GROUP),
        (b"$share//f", WK_STATUS_COORD_INVALID_SHARE_GROUP),
        (b"$share/g+/f", WK_STATUS_COORD_INVALID_SHARE_GROUP),
        (b"$share/g", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"$share/g/", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"$share/g/a/#/b", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"$share/g/$share/h/f", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"a/\xff", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        (b"$share/\xff/f", WK_STATUS_COORD_INVALID_TOPIC_FILTER),
    ];
    for (t, want) in topics {
        assert_eq!(split(t).0, want, "{:?}", String::from_utf8_lossy(t));
        // Every one of them is also an invalid argument for a host that knows only the generic
        // codes.
        assert!(wk_status_is(want, WK_STATUS_INVALID_ARGUMENT));
    }
}

#[test]
fn null_and_misaligned_pointers_are_refused() {
    let mut buf = [0u8; 32];
    let mut len = UNTOUCHED;
    // SAFETY: NULL pointers with the lengths each case states; valid locals otherwise.
    unsafe {
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                b"f".as_ptr(),
                1,
                buf.as_mut_ptr(),
                32,
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_share_topic_build(
                ptr::null(),
                1,
                b"f".as_ptr(),
                1,
                buf.as_mut_ptr(),
                32,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                ptr::null(),
                1,
                buf.as_mut_ptr(),
                32,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                b"f".as_ptr(),
                1,
                ptr::null_mut(),
                32,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        // NULL with length 0 is the empty string: refused for what it is.
        assert_eq!(
            wk_share_topic_build(
                ptr::null(),
                0,
                b"f".as_ptr(),
                1,
                buf.as_mut_ptr(),
                32,
                &mut len
            ),
            WK_STATUS_COORD_INVALID_SHARE_GROUP
        );
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                ptr::null(),
                0,
                buf.as_mut_ptr(),
                32,
                &mut len
            ),
            WK_STATUS_COORD_INVALID_TOPIC_FILTER
        );
        // A NULL buffer of capacity 0: checked, then too small.
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                b"f".as_ptr(),
                1,
                ptr::null_mut(),
                0,
                &mut len
            ),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, UNTOUCHED);
        let mut words = [0usize; 2];
        let misaligned = (words.as_mut_ptr() as *mut u8).add(1) as *mut usize;
        assert_eq!(
            wk_share_topic_build(
                b"g".as_ptr(),
                1,
                b"f".as_ptr(),
                1,
                buf.as_mut_ptr(),
                32,
                misaligned
            ),
            WK_STATUS_INVALID_ARGUMENT
        );

        let mut out = UNTOUCHED_SPLIT;
        assert_eq!(
            wk_share_topic_split(b"a".as_ptr(), 1, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_share_topic_split(ptr::null(), 1, &mut out),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_share_topic_split(ptr::null(), 0, &mut out),
            WK_STATUS_COORD_INVALID_TOPIC_FILTER
        );
        assert_eq!(out, UNTOUCHED_SPLIT);
        let mut raw = [0u64; 8];
        let misaligned = (raw.as_mut_ptr() as *mut u8).add(4) as *mut wk_share_split;
        assert_eq!(
            wk_share_topic_split(b"a".as_ptr(), 1, misaligned),
            WK_STATUS_INVALID_ARGUMENT
        );
    }
}

#[test]
fn the_statuses_have_texts() {
    let text = |s: wk_status| {
        // SAFETY: `wk_status_str` returns a static, NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(wk_status_str(s)) }
            .to_str()
            .unwrap()
    };
    assert_eq!(
        text(WK_STATUS_COORD_INVALID_SHARE_GROUP),
        "coord: invalid share group"
    );
    assert_eq!(
        text(WK_STATUS_COORD_INVALID_TOPIC_FILTER),
        "coord: invalid topic filter"
    );
}
