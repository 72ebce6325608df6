//! Calls the delivery-tag functions as a C host would: upstream's cache, leader and RPC behaviour
//! through the ABI (zero-copy views, batches, channel handles, cleanup, mutations, the RPC
//! round trip and the golden vectors), then NULL, misaligned, mistyped and freed handles, every
//! pointer and length, invalid UTF-8, oversized counts, bad struct sizes and a caught panic, each
//! with out-parameters untouched and no state changed. A counting allocator checks that a
//! look-up without a view allocates nothing.

use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::cache::*;
use super::frame::*;
use super::hot::*;
use super::leader::*;
use super::status::*;
use super::types::*;
use super::view::*;
use crate::metrics::{
    wk_metrics_registry, wk_metrics_registry_free, wk_metrics_registry_new, wk_str,
};
use crate::status::*;

// ----------------------------------------------------------------------------------------------
// This thread's allocations so far, counted by the library's allocator (`memory.rs`).

fn allocations() -> u64 {
    crate::memory::thread_counts().2
}

// ----------------------------------------------------------------------------------------------
// Helpers.

const SEC: u64 = 1_000_000_000;
const START: u64 = 1_700_000_000_000_000_000;
const INFO_SIZE: usize = std::mem::size_of::<wk_tag_info>();
const COUNTS_SIZE: usize = std::mem::size_of::<wk_tag_counts>();
/// The word a dropped handle object leaves behind (`handle.rs`): a stand-in for freed memory.
const DEAD: u64 = 0x776b_4445_4144_2121;

fn s(x: &[u8]) -> wk_str {
    wk_str {
        ptr: if x.is_empty() {
            ptr::null()
        } else {
            x.as_ptr()
        },
        len: x.len(),
    }
}

fn topo(balance: u64) -> Vec<wk_tag_slot_ref> {
    vec![
        wk_tag_slot_ref {
            slot_id: 1,
            leader_node_id: 1,
            config_epoch: 1,
            balance_version: balance,
        },
        wk_tag_slot_ref {
            slot_id: 2,
            leader_node_id: 2,
            config_epoch: 1,
            balance_version: 1,
        },
    ]
}

/// An input tag with the storage its C form points into.
struct TagIn {
    key: &'static [u8],
    channel: &'static [u8],
    version: u64,
    smv: u64,
    source: &'static [u8],
    source_smv: u64,
    refs: Vec<wk_tag_slot_ref>,
    uids: Vec<(u64, Vec<wk_str>)>,
    parts: Vec<wk_tag_partition_in>,
    created: i64,
    last: i64,
}

impl TagIn {
    fn new(key: &'static str, version: u64, smv: u64, parts: &[(u64, &[&'static str])]) -> TagIn {
        TagIn {
            key: key.as_bytes(),
            channel: b"group:g1",
            version,
            smv,
            source: b"",
            source_smv: 0,
            refs: topo(1),
            uids: parts
                .iter()
                .map(|(n, u)| (*n, u.iter().map(|x| s(x.as_bytes())).collect()))
                .collect(),
            parts: Vec::new(),
            created: 0,
            last: 0,
        }
    }

    fn c(&mut self) -> wk_tag_in {
        self.parts = self
            .uids
            .iter()
            .map(|(n, u)| wk_tag_partition_in {
                node_id: *n,
                uids: if u.is_empty() {
                    ptr::null()
                } else {
                    u.as_ptr()
                },
                uid_count: u.len(),
            })
            .collect();
        wk_tag_in {
            key: s(self.key),
            channel_key: s(self.channel),
            tag_version: self.version,
            subscriber_mutation_version: self.smv,
            source_channel_key: s(self.source),
            source_subscriber_mutation_version: self.source_smv,
            hash_slot_table_version: 1,
            refs: self.refs.as_ptr(),
            ref_count: self.refs.len(),
            partitions: if self.parts.is_empty() {
                ptr::null()
            } else {
                self.parts.as_ptr()
            },
            partition_count: self.parts.len(),
            created_at_ns: self.created,
            last_access_ns: self.last,
        }
    }
}

/// A build request with the storage it points into.
struct Build {
    channel: &'static [u8],
    smv: u64,
    source: &'static [u8],
    source_smv: u64,
    refs: Vec<wk_tag_slot_ref>,
    tag: TagIn,
    fresh: u8,
}

impl Build {
    fn new(channel: &'static str, smv: u64, parts: &[(u64, &[&'static str])]) -> Build {
        Build {
            channel: channel.as_bytes(),
            smv,
            source: b"",
            source_smv: 0,
            refs: topo(1),
            tag: TagIn::new("", 0, 0, parts),
            fresh: 0,
        }
    }

    fn c(&mut self) -> wk_tag_build_request {
        let t = self.tag.c();
        wk_tag_build_request {
            channel_key: s(self.channel),
            subscriber_mutation_version: self.smv,
            source_channel_key: s(self.source),
            source_subscriber_mutation_version: self.source_smv,
            hash_slot_table_version: 1,
            refs: self.refs.as_ptr(),
            ref_count: self.refs.len(),
            partitions: t.partitions,
            partition_count: t.partition_count,
            mint_fresh_key: self.fresh,
        }
    }
}

/// Owns a view.
struct View(*mut wk_tag_view);

impl View {
    fn info(&self) -> wk_tag_info {
        // SAFETY: zeroed is a valid `wk_tag_info` (NULL pointers, zeros).
        let mut i: wk_tag_info = unsafe { std::mem::zeroed() };
        // SAFETY: live view, valid out-pointer.
        let st = unsafe { wk_tag_view_info(self.0, &mut i, INFO_SIZE) };
        assert_eq!(st, WK_STATUS_OK);
        i
    }

    fn key(&self) -> String {
        text(self.info().key)
    }

    fn version(&self) -> u64 {
        self.info().tag_version
    }

    /// The UIDs of partition `index`, read zero-copy.
    fn uids(&self, index: usize) -> (u64, Vec<String>) {
        let mut p = wk_tag_partition_view {
            node_id: 0,
            bytes: ptr::null(),
            bytes_len: 0,
            ends: ptr::null(),
            uid_count: 0,
        };
        // SAFETY: live view, valid out-pointer.
        let st = unsafe { wk_tag_view_partition(self.0, index, &mut p) };
        assert_eq!(st, WK_STATUS_OK);
        let bytes: &[u8] = if p.bytes.is_null() {
            &[]
        } else {
            // SAFETY: the view keeps the body alive; `bytes_len` bytes at `bytes`.
            unsafe { std::slice::from_raw_parts(p.bytes, p.bytes_len) }
        };
        let ends: &[u32] = if p.ends.is_null() {
            &[]
        } else {
            // SAFETY: as above, `uid_count` ends.
            unsafe { std::slice::from_raw_parts(p.ends, p.uid_count) }
        };
        let mut start = 0usize;
        let uids = ends
            .iter()
            .map(|&end| {
                let u = String::from_utf8(bytes[start..end as usize].to_vec()).unwrap();
                start = end as usize;
                u
            })
            .collect();
        (p.node_id, uids)
    }

    /// A look-up request that matches this body (pointing into it).
    fn request(&self) -> wk_tag_lookup_request {
        let i = self.info();
        wk_tag_lookup_request {
            tag_key: i.key,
            tag_version: i.tag_version,
            subscriber_mutation_version: i.subscriber_mutation_version,
            source_channel_key: i.source_channel_key,
            source_subscriber_mutation_version: i.source_subscriber_mutation_version,
            hash_slot_table_version: i.hash_slot_table_version,
            refs: i.refs,
            ref_count: i.ref_count,
        }
    }

    fn same(&self, other: &View) -> bool {
        // SAFETY: live views.
        unsafe { wk_tag_view_same(self.0, other.0) }
    }
}

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { wk_tag_view_free(self.0) }
    }
}

fn text(w: wk_str) -> String {
    if w.len == 0 {
        assert!(w.ptr.is_null(), "empty strings are NULL");
        return String::new();
    }
    // SAFETY: a string the library wrote; valid while its view lives (the caller holds it).
    String::from_utf8(unsafe { std::slice::from_raw_parts(w.ptr, w.len) }.to_vec()).unwrap()
}

struct Metrics(*mut wk_metrics_registry);

impl Metrics {
    fn new() -> Metrics {
        let mut m = ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { wk_metrics_registry_new(&mut m) }, WK_STATUS_OK);
        Metrics(m)
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { wk_metrics_registry_free(self.0) }
    }
}

fn cache_options(node: u64, ttl: u64) -> wk_tag_cache_options {
    wk_tag_cache_options {
        struct_size: std::mem::size_of::<wk_tag_cache_options>() as u32,
        local_node_id: node,
        ttl_ns: ttl,
        clock: WK_TAG_CLOCK_MANUAL,
        manual_start_ns: START,
    }
}

fn leader_options(node: u64, ttl: u64, prefix: &'static str) -> wk_tag_leader_options {
    wk_tag_leader_options {
        struct_size: std::mem::size_of::<wk_tag_leader_options>() as u32,
        local_node_id: node,
        ttl_ns: ttl,
        clock: WK_TAG_CLOCK_MANUAL,
        manual_start_ns: START,
        key_prefix: s(prefix.as_bytes()),
    }
}

/// A node: a cache and a leader side on manual clocks, counting in a registry of their own.
struct Node {
    cache: *mut wk_tag_cache,
    leader: *mut wk_tag_leader,
    _metrics: Metrics,
}

impl Node {
    fn new(node: u64, ttl: u64, prefix: &'static str) -> Node {
        let metrics = Metrics::new();
        let (mut cache, mut leader) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid options, registry and out-pointers.
        unsafe {
            assert_eq!(
                wk_tag_cache_new(&cache_options(node, ttl), metrics.0, &mut cache),
                WK_STATUS_OK
            );
            assert_eq!(
                wk_tag_leader_new(&leader_options(node, ttl, prefix), metrics.0, &mut leader),
                WK_STATUS_OK
            );
        }
        Node {
            cache,
            leader,
            _metrics: metrics,
        }
    }

    fn store(&self, tag: &mut TagIn) -> (u8, View) {
        let t = tag.c();
        let (mut stored, mut view) = (9u8, ptr::null_mut());
        // SAFETY: live cache, valid tag and out-pointers.
        let st = unsafe { wk_tag_cache_store(self.cache, &t, &mut stored, &mut view) };
        assert_eq!(st, WK_STATUS_OK);
        (stored, View(view))
    }

    fn lookup(&self, channel: &[u8], r: &wk_tag_lookup_request) -> (u8, Option<View>) {
        let (mut reason, mut view) = (99u8, ptr::dangling_mut());
        // SAFETY: live cache, valid request and out-pointers.
        let st = unsafe { wk_tag_cache_lookup(self.cache, s(channel), r, &mut reason, &mut view) };
        assert_eq!(st, WK_STATUS_OK);
        (reason, (!view.is_null()).then(|| View(view)))
    }

    fn reason(&self, channel: &[u8], r: &wk_tag_lookup_request) -> u8 {
        let mut reason = 99u8;
        // SAFETY: live cache, valid request and out-pointer; no view asked.
        let st =
            unsafe { wk_tag_cache_lookup(self.cache, s(channel), r, &mut reason, ptr::null_mut()) };
        assert_eq!(st, WK_STATUS_OK);
        reason
    }

    fn current(&self, channel: &[u8]) -> Option<View> {
        let mut view = ptr::null_mut();
        // SAFETY: live cache, valid out-pointer.
        match unsafe { wk_tag_cache_current(self.cache, s(channel), &mut view) } {
            WK_STATUS_OK => Some(View(view)),
            WK_STATUS_NOT_FOUND => {
                assert!(view.is_null());
                None
            }
            other => panic!("{other:?}"),
        }
    }

    fn build(&self, b: &mut Build) -> View {
        let r = b.c();
        let mut view = ptr::null_mut();
        // SAFETY: live leader, valid request and out-pointer.
        let st = unsafe { wk_tag_leader_build(self.leader, &r, &mut view) };
        assert_eq!(st, WK_STATUS_OK);
        View(view)
    }

    fn usable(&self, channel: &[u8], version: u64) -> Result<View, wk_status> {
        let mut view = ptr::null_mut();
        // SAFETY: live leader, valid out-pointer.
        match unsafe { wk_tag_leader_usable(self.leader, s(channel), version, &mut view) } {
            WK_STATUS_OK => Ok(View(view)),
            other => {
                assert!(view.is_null(), "nothing written on {other:?}");
                Err(other)
            }
        }
    }

    fn cache_counts(&self) -> wk_tag_counts {
        let mut c = wk_tag_counts::default();
        // SAFETY: live cache, valid out-pointer.
        let st = unsafe { wk_tag_cache_counts(self.cache, &mut c, COUNTS_SIZE) };
        assert_eq!(st, WK_STATUS_OK);
        c
    }

    fn leader_counts(&self) -> wk_tag_counts {
        let mut c = wk_tag_counts::default();
        // SAFETY: live leader, valid out-pointer.
        let st = unsafe { wk_tag_leader_counts(self.leader, &mut c, COUNTS_SIZE) };
        assert_eq!(st, WK_STATUS_OK);
        c
    }

    fn mutation(&self, channel: &[u8]) -> *mut wk_tag_mutation {
        let mut m = ptr::null_mut();
        // SAFETY: live leader, valid out-pointer.
        let st = unsafe { wk_tag_leader_begin_mutation(self.leader, s(channel), &mut m) };
        assert_eq!(st, WK_STATUS_OK);
        m
    }

    fn dirty(&self, channel: &[u8]) -> bool {
        let mut d = false;
        // SAFETY: live leader, valid out-pointer.
        let st = unsafe { wk_tag_leader_is_dirty(self.leader, s(channel), &mut d) };
        assert_eq!(st, WK_STATUS_OK);
        d
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe {
            wk_tag_cache_free(self.cache);
            wk_tag_leader_free(self.leader);
        }
    }
}

fn strs(items: &[&'static str]) -> Vec<wk_str> {
    items.iter().map(|x| s(x.as_bytes())).collect()
}

fn hex(x: &str) -> Vec<u8> {
    (0..x.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&x[i..i + 2], 16).unwrap())
        .collect()
}

fn dangling<T>() -> *const T {
    NonNull::<T>::dangling().as_ptr()
}

// ----------------------------------------------------------------------------------------------
// Upstream behaviour through the ABI.

#[test]
fn follower_caches_only_its_partition_zero_copy() {
    let n = Node::new(2, 60 * SEC, "f");
    let (stored, view) = n.store(&mut TagIn::new(
        "leader-a-1",
        1,
        1,
        &[(1, &["u1"]), (2, &["u2", "u22"])],
    ));
    assert_eq!(stored, 1);
    let i = view.info();
    assert_eq!(text(i.key), "leader-a-1");
    assert_eq!(text(i.channel_key), "group:g1");
    assert_eq!(i.partition_count, 1);
    assert_eq!(i.uid_count, 2);
    assert_eq!(i.ref_count, 2);
    assert!(text(i.source_channel_key).is_empty());
    // SAFETY: `refs` points into the live view.
    let refs = unsafe { std::slice::from_raw_parts(i.refs, i.ref_count) };
    assert_eq!(refs, &topo(1)[..]);
    assert_eq!(i.created_at_ns, START as i64, "stamped by the store");
    assert_eq!(view.uids(0), (2, vec!["u2".into(), "u22".into()]));
    let mut index = 7usize;
    // SAFETY: live view, valid out-pointer.
    unsafe {
        assert_eq!(
            wk_tag_view_find_partition(view.0, 2, &mut index),
            WK_STATUS_OK
        );
        assert_eq!(index, 0);
        assert_eq!(
            wk_tag_view_find_partition(view.0, 1, &mut index),
            WK_STATUS_NOT_FOUND
        );
        assert_eq!(index, 0);
        let mut p = std::mem::zeroed::<wk_tag_partition_view>();
        assert_eq!(
            wk_tag_view_partition(view.0, 1, &mut p),
            WK_STATUS_NOT_FOUND
        );
        assert!(p.bytes.is_null());
    }
    // A second view of the same body shares its bytes (zero-copy).
    let current = n.current(b"group:g1").unwrap();
    assert!(current.same(&view));
    let mut a = std::mem::MaybeUninit::<wk_tag_partition_view>::uninit();
    let mut b = std::mem::MaybeUninit::<wk_tag_partition_view>::uninit();
    // SAFETY: live views, valid out-pointers.
    unsafe {
        assert_eq!(
            wk_tag_view_partition(view.0, 0, a.as_mut_ptr()),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_tag_view_partition(current.0, 0, b.as_mut_ptr()),
            WK_STATUS_OK
        );
        assert_eq!(a.assume_init().bytes, b.assume_init().bytes);
    }
    let mut tag = ptr::null_mut();
    // SAFETY: live cache, valid out-pointer.
    unsafe {
        assert_eq!(
            wk_tag_cache_lookup_tag(n.cache, s(b"group:g1"), s(b"leader-a-1"), &mut tag),
            WK_STATUS_OK
        );
        let tag = View(tag);
        assert_eq!(tag.uids(0).1, ["u2", "u22"]);
        let mut none = ptr::null_mut();
        assert_eq!(
            wk_tag_cache_lookup_tag(n.cache, s(b"group:g1"), s(b"other"), &mut none),
            WK_STATUS_NOT_FOUND
        );
        assert!(none.is_null());
    }
    // A view outlives the cache.
    drop(n);
    assert_eq!(view.uids(0).1, ["u2", "u22"]);
}

#[test]
fn lookup_fence_reasons_and_views() {
    let n = Node::new(2, 60 * SEC, "f");
    let miss = TagIn::new("k", 5, 9, &[]);
    let mut req = wk_tag_lookup_request {
        tag_key: s(miss.key),
        tag_version: 5,
        subscriber_mutation_version: 9,
        source_channel_key: s(b""),
        source_subscriber_mutation_version: 0,
        hash_slot_table_version: 1,
        refs: miss.refs.as_ptr(),
        ref_count: miss.refs.len(),
    };
    let (reason, view) = n.lookup(b"group:g1", &req);
    assert_eq!(reason, WK_TAG_LOOKUP_MISSING_REF);
    assert!(view.is_none(), "missing_ref writes a NULL view");
    let (_, stored) = n.store(&mut TagIn::new("k", 5, 9, &[(2, &["new"])]));
    let before = allocations();
    assert_eq!(n.reason(b"group:g1", &req), WK_TAG_LOOKUP_HIT);
    assert_eq!(
        allocations(),
        before,
        "a look-up without a view allocates nothing"
    );
    let (reason, hit) = n.lookup(b"group:g1", &req);
    assert_eq!(reason, WK_TAG_LOOKUP_HIT);
    assert!(hit.unwrap().same(&stored));
    req.tag_version = 4;
    req.subscriber_mutation_version = 8;
    let (reason, cur) = n.lookup(b"group:g1", &req);
    assert_eq!(reason, WK_TAG_LOOKUP_STALE_REQUEST);
    assert_eq!(
        cur.unwrap().uids(0).1,
        ["new"],
        "the newer body is returned"
    );
    req.tag_version = 6;
    assert_eq!(n.reason(b"group:g1", &req), WK_TAG_LOOKUP_NEWER_REQUEST);
    req.tag_version = 5;
    req.subscriber_mutation_version = 0;
    let other = topo(2);
    req.refs = other.as_ptr();
    assert_eq!(n.reason(b"group:g1", &req), WK_TAG_LOOKUP_TOPOLOGY_MISMATCH);
    req.ref_count = 0;
    req.refs = ptr::null();
    assert_eq!(n.reason(b"group:g1", &req), WK_TAG_LOOKUP_TOPOLOGY_MISMATCH);
    req.tag_key = s(b"old");
    assert_eq!(n.reason(b"group:g1", &req), WK_TAG_LOOKUP_TAG_KEY_MISMATCH);
    let c = n.cache_counts();
    assert_eq!(c.lookups[WK_TAG_LOOKUP_HIT as usize], 2);
    assert_eq!(c.lookups[WK_TAG_LOOKUP_MISSING_REF as usize], 1);
    assert_eq!(c.lookups[WK_TAG_LOOKUP_TOPOLOGY_MISMATCH as usize], 2);
    assert_eq!((c.stored, c.tags, c.uids, c.entries), (1, 1, 1, 1));
}

#[test]
fn stale_stores_never_evict_a_newer_tag() {
    let n = Node::new(2, 60 * SEC, "f");
    let (stored, fresh) = n.store(&mut TagIn::new("fresh", 1, 9, &[(2, &["u"])]));
    assert_eq!(stored, 1);
    let (stored, kept) = n.store(&mut TagIn::new("old", 8, 8, &[(2, &["u"])]));
    assert_eq!(stored, 0, "a lower subscriber version is stale");
    assert!(kept.same(&fresh), "the current body comes back");
    let mut source = TagIn::new("fresh", 2, 9, &[(2, &["x"])]);
    source.source = b"group:src";
    source.source_smv = 5;
    assert_eq!(n.store(&mut source).0, 1);
    let mut older_source = TagIn::new("fresh", 3, 9, &[(2, &["x"])]);
    older_source.source = b"group:src";
    older_source.source_smv = 4;
    assert_eq!(n.store(&mut older_source).0, 0);
    assert_eq!(
        n.store(&mut TagIn::new("fresh", 1, 9, &[(2, &["y"])])).0,
        0,
        "the same key with a lower tag version"
    );
    let mut newer_key = TagIn::new("other", 1, 9, &[(2, &["z"])]);
    newer_key.source = b"group:src";
    newer_key.source_smv = 5;
    assert_eq!(
        n.store(&mut newer_key).0,
        1,
        "a new key with an equal subscriber version wins with a lower tag version"
    );
    let c = n.cache_counts();
    assert_eq!((c.stored, c.stale), (3, 3));
    let mut stale = false;
    // SAFETY: live cache, valid out-pointers.
    unsafe {
        for (version, want) in [(6, true), (5, false)] {
            assert_eq!(
                wk_tag_cache_is_source_stale(
                    n.cache,
                    s(b"group:g1"),
                    s(b"group:src"),
                    version,
                    &mut stale
                ),
                WK_STATUS_OK
            );
            assert_eq!(stale, want);
        }
    }
}

#[test]
fn lookup_batch_checks_everything_first() {
    let n = Node::new(2, 60 * SEC, "f");
    let (_, view) = n.store(&mut TagIn::new("k", 1, 1, &[(2, &["u"])]));
    let good = view.request();
    let channels = [s(b"group:g1"), s(b"group:none"), s(b"group:g1")];
    let requests = [good, good, good];
    let mut reasons = [99u8; 3];
    let mut views = [ptr::dangling_mut::<wk_tag_view>(); 3];
    // SAFETY: valid arrays of three.
    unsafe {
        assert_eq!(
            wk_tag_cache_lookup_batch(
                n.cache,
                channels.as_ptr(),
                requests.as_ptr(),
                3,
                reasons.as_mut_ptr(),
                views.as_mut_ptr()
            ),
            WK_STATUS_OK
        );
    }
    assert_eq!(
        reasons,
        [
            WK_TAG_LOOKUP_HIT,
            WK_TAG_LOOKUP_MISSING_REF,
            WK_TAG_LOOKUP_HIT
        ]
    );
    assert!(views[1].is_null());
    let views: Vec<View> = views.into_iter().map(View).collect();
    assert!(views[0].same(&view) && views[2].same(&view));
    let before = n.cache_counts();
    // A bad entry anywhere: nothing runs, nothing is written.
    let bad_utf8 = [s(b"group:g1"), s(b"\xff"), s(b"group:g1")];
    let mut bad_key = requests;
    bad_key[2].tag_key = s(b"\xc3\x28");
    let mut bad_refs = requests;
    bad_refs[1].ref_count = WK_TAG_REFS_MAX + 1;
    let mut reasons = [99u8; 3];
    let mut out = [ptr::null_mut::<wk_tag_view>(); 3];
    // SAFETY: valid arrays of three; oversized counts are refused unread.
    unsafe {
        for (ch, rq, want) in [
            (&bad_utf8, &requests, WK_STATUS_TAG_INVALID_UTF8),
            (&channels, &bad_key, WK_STATUS_TAG_INVALID_UTF8),
            (&channels, &bad_refs, WK_STATUS_INVALID_ARGUMENT),
        ] {
            assert_eq!(
                wk_tag_cache_lookup_batch(
                    n.cache,
                    ch.as_ptr(),
                    rq.as_ptr(),
                    3,
                    reasons.as_mut_ptr(),
                    out.as_mut_ptr()
                ),
                want
            );
        }
        for (len, want) in [
            (0, WK_STATUS_INVALID_ARGUMENT),
            (WK_TAG_BATCH_MAX + 1, WK_STATUS_INVALID_ARGUMENT),
        ] {
            assert_eq!(
                wk_tag_cache_lookup_batch(
                    n.cache,
                    channels.as_ptr(),
                    requests.as_ptr(),
                    len,
                    reasons.as_mut_ptr(),
                    out.as_mut_ptr()
                ),
                want
            );
        }
        assert_eq!(
            wk_tag_cache_lookup_batch(
                n.cache,
                ptr::null(),
                requests.as_ptr(),
                3,
                reasons.as_mut_ptr(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup_batch(
                n.cache,
                channels.as_ptr(),
                requests.as_ptr(),
                3,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        let odd = (out.as_mut_ptr() as *mut u8)
            .add(1)
            .cast::<*mut wk_tag_view>();
        assert_eq!(
            wk_tag_cache_lookup_batch(
                n.cache,
                channels.as_ptr(),
                requests.as_ptr(),
                3,
                reasons.as_mut_ptr(),
                odd
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Reasons only: no views.
        let before_alloc = allocations();
        let one = [good];
        let mut r = [99u8];
        assert_eq!(
            wk_tag_cache_lookup_batch(
                n.cache,
                channels.as_ptr(),
                one.as_ptr(),
                1,
                r.as_mut_ptr(),
                ptr::null_mut()
            ),
            WK_STATUS_OK
        );
        assert_eq!(r, [WK_TAG_LOOKUP_HIT]);
        assert!(
            allocations() - before_alloc <= 1,
            "one checked-request list per batch"
        );
    }
    assert_eq!(reasons, [99; 3]);
    assert!(out.iter().all(|v| v.is_null()));
    let after = n.cache_counts();
    assert_eq!(
        after.lookups[WK_TAG_LOOKUP_HIT as usize],
        before.lookups[WK_TAG_LOOKUP_HIT as usize] + 1,
        "only the last, good batch looked up"
    );
}

#[test]
fn channel_handles_survive_a_cleanup() {
    let n = Node::new(2, SEC, "f");
    let mut ch = ptr::null_mut();
    // SAFETY: live handles and valid pointers throughout.
    unsafe {
        assert_eq!(
            wk_tag_cache_channel(n.cache, s(b"group:g1"), &mut ch),
            WK_STATUS_OK
        );
        let mut t = TagIn::new("k", 1, 1, &[(1, &["a"]), (2, &["b"])]);
        t.channel = b"ignored";
        let t = t.c();
        let (mut stored, mut view) = (9u8, ptr::null_mut());
        assert_eq!(
            wk_tag_channel_store(ch, &t, &mut stored, &mut view),
            WK_STATUS_OK
        );
        assert_eq!(stored, 1);
        let view = View(view);
        assert_eq!(view.key(), "k");
        assert_eq!(
            text(view.info().channel_key),
            "group:g1",
            "the handle's channel"
        );
        let req = view.request();
        let mut reason = 99;
        assert_eq!(
            wk_tag_channel_lookup(ch, &req, &mut reason, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(reason, WK_TAG_LOOKUP_HIT);
        let mut cur = ptr::null_mut();
        assert_eq!(wk_tag_channel_current(ch, &mut cur), WK_STATUS_OK);
        assert!(View(cur).same(&view));
        // The cleanup reclaims the body (hit in the first tick, so two pages).
        let mut page = wk_tag_cleanup_page::default();
        assert_eq!(wk_tag_cache_advance_clock(n.cache, 3 * SEC), WK_STATUS_OK);
        let mut now = 0i64;
        assert_eq!(wk_tag_cache_now(n.cache, &mut now), WK_STATUS_OK);
        assert_eq!(now, (START + 3 * SEC) as i64);
        assert_eq!(
            wk_tag_cache_cleanup(n.cache, now, 16, &mut page),
            WK_STATUS_OK
        );
        assert_eq!(page.reclaimed, 0, "hit in this tick");
        assert_eq!(
            wk_tag_cache_cleanup(n.cache, now + 2 * SEC as i64, 16, &mut page),
            WK_STATUS_OK
        );
        assert_eq!((page.visited, page.reclaimed, page.unlinked), (1, 1, 1));
        assert!(page.wrapped);
        let mut gone = ptr::null_mut();
        assert_eq!(wk_tag_channel_current(ch, &mut gone), WK_STATUS_NOT_FOUND);
        assert!(gone.is_null());
        let mut reason = 99;
        assert_eq!(
            wk_tag_channel_lookup(ch, &req, &mut reason, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(reason, WK_TAG_LOOKUP_MISSING_REF);
        // The old view still reads its body.
        assert_eq!(view.uids(0).1, ["b"]);
        // A store through the old handle lands in a new cell.
        let mut k2 = TagIn::new("k2", 1, 2, &[(2, &["c"])]);
        let t = k2.c();
        assert_eq!(
            wk_tag_channel_store(ch, &t, &mut stored, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(stored, 1);
        assert_eq!(n.current(b"group:g1").unwrap().key(), "k2");
        let mut clone = ptr::null_mut();
        assert_eq!(wk_tag_channel_clone(ch, &mut clone), WK_STATUS_OK);
        wk_tag_channel_free(clone);
        wk_tag_channel_free(ch);
        wk_tag_channel_free(ptr::null_mut());
        let c = n.cache_counts();
        assert_eq!((c.tags, c.uids, c.reclaimed_bodies), (1, 1, 1));
    }
}

#[test]
fn leader_builds_reuse_bump_and_mint() {
    let n = Node::new(1, 60 * SEC, "leader-a");
    let first = n.build(&mut Build::new("group:g1", 1, &[(1, &["u1"])]));
    assert_eq!((first.key(), first.version()), ("leader-a-1".into(), 1));
    let second = n.build(&mut Build::new("group:g1", 2, &[(1, &["u1", "u2"])]));
    assert_eq!((second.key(), second.version()), ("leader-a-1".into(), 2));
    assert_eq!(second.uids(0), (1, vec!["u1".into(), "u2".into()]));
    let third = n.build(&mut Build::new("group:g1", 2, &[(1, &["u3"])]));
    assert_eq!(third.version(), 2, "partition contents alone do not bump");
    let mut fresh = Build::new("group:g1", 2, &[(1, &["u3"])]);
    fresh.fresh = 1;
    let fresh = n.build(&mut fresh);
    assert_eq!((fresh.key(), fresh.version()), ("leader-a-2".into(), 1));
    // Ephemeral: a new key, the current tag untouched, reachable by key.
    let mut b = Build::new("group:g1", 2, &[(1, &["x"])]);
    let r = b.c();
    let mut eph = ptr::null_mut();
    // SAFETY: live leader, valid pointers.
    unsafe {
        assert_eq!(
            wk_tag_leader_build_ephemeral(n.leader, &r, &mut eph),
            WK_STATUS_OK
        );
        let eph = View(eph);
        assert_eq!(eph.key(), "leader-a-3");
        let mut cur = ptr::null_mut();
        assert_eq!(
            wk_tag_leader_current(n.leader, s(b"group:g1"), &mut cur),
            WK_STATUS_OK
        );
        assert!(View(cur).same(&fresh));
        let mut by_key = ptr::null_mut();
        let key = eph.info().key;
        assert_eq!(
            wk_tag_leader_lookup_tag(n.leader, key, &mut by_key),
            WK_STATUS_OK
        );
        assert!(View(by_key).same(&eph));
        let mut reason = 99;
        let req = fresh.request();
        assert_eq!(
            wk_tag_leader_lookup(n.leader, s(b"group:g1"), &req, &mut reason, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(reason, WK_TAG_LOOKUP_HIT);
        let mut none = ptr::null_mut();
        assert_eq!(
            wk_tag_leader_lookup_tag(n.leader, s(b"nope"), &mut none),
            WK_STATUS_NOT_FOUND
        );
        assert_eq!(
            wk_tag_leader_current(n.leader, s(b"group:none"), &mut none),
            WK_STATUS_NOT_FOUND
        );
        assert!(none.is_null());
    }
    // Source staleness of a derived tag.
    let mut derived = Build::new("cmd:group:x", 1, &[(1, &["u"])]);
    derived.source = b"group:x";
    derived.source_smv = 10;
    let _d = n.build(&mut derived);
    let mut stale = true;
    // SAFETY: live leader, valid pointers.
    unsafe {
        for (source, version, want) in [
            (&b"group:x"[..], 10, false),
            (b"group:x", 11, true),
            (b"group:y", 11, false),
        ] {
            assert_eq!(
                wk_tag_leader_is_source_stale(
                    n.leader,
                    s(b"cmd:group:x"),
                    s(source),
                    version,
                    &mut stale
                ),
                WK_STATUS_OK
            );
            assert_eq!(stale, want);
        }
    }
    let c = n.leader_counts();
    assert_eq!(
        c.entries, 4,
        "bodies by key: two keys of group:g1, the ephemeral, cmd"
    );
    assert_eq!(c.stored, 6);
}

#[test]
fn build_by_slot_partitions_or_refuses() {
    let n = Node::new(1, 60 * SEC, "l");
    let mut b = Build::new("group:g1", 1, &[]);
    let r = b.c();
    let uids = strs(&["a", "b", "c"]);
    let slots = [0u32, 1, 0];
    let slot_nodes = [2u64, 1];
    let mut view = ptr::null_mut();
    // SAFETY: live leader, valid arrays.
    unsafe {
        assert_eq!(
            wk_tag_leader_build_by_slot(
                n.leader,
                &r,
                uids.as_ptr(),
                slots.as_ptr(),
                3,
                slot_nodes.as_ptr(),
                2,
                &mut view
            ),
            WK_STATUS_OK
        );
        let v = View(view);
        assert_eq!(v.info().partition_count, 2);
        assert_eq!(v.uids(0), (1, vec!["b".into()]));
        assert_eq!(v.uids(1), (2, vec!["a".into(), "c".into()]));
        let before = n.leader_counts();
        let unknown = [5u32, 1, 0];
        let mut none = ptr::null_mut();
        assert_eq!(
            wk_tag_leader_build_by_slot(
                n.leader,
                &r,
                uids.as_ptr(),
                unknown.as_ptr(),
                3,
                slot_nodes.as_ptr(),
                2,
                &mut none
            ),
            WK_STATUS_TAG_UNASSIGNED_SLOT
        );
        let zero_node = [0u64, 1];
        assert_eq!(
            wk_tag_leader_build_ephemeral_by_slot(
                n.leader,
                &r,
                uids.as_ptr(),
                slots.as_ptr(),
                3,
                zero_node.as_ptr(),
                2,
                &mut none
            ),
            WK_STATUS_TAG_UNASSIGNED_SLOT
        );
        // A request that carries partitions is refused.
        let mut with_parts = Build::new("group:g1", 1, &[(1, &["z"])]);
        let wp = with_parts.c();
        assert_eq!(
            wk_tag_leader_build_by_slot(
                n.leader,
                &wp,
                uids.as_ptr(),
                slots.as_ptr(),
                3,
                slot_nodes.as_ptr(),
                2,
                &mut none
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert!(none.is_null());
        assert_eq!(n.leader_counts(), before, "nothing built");
        // An empty build, and an ephemeral one.
        assert_eq!(
            wk_tag_leader_build_ephemeral_by_slot(
                n.leader,
                &r,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                0,
                &mut none
            ),
            WK_STATUS_OK
        );
        let e = View(none);
        assert_eq!(e.info().partition_count, 0);
        assert_eq!(e.key(), "l-2");
    }
}

#[test]
fn mutations_follow_the_dirty_lifecycle() {
    let n = Node::new(1, 60 * SEC, "leader-a");
    let _t = n.build(&mut Build::new("group:g1", 5, &[(1, &["a"]), (2, &["b"])]));
    assert!(n.usable(b"group:g1", 5).is_ok());
    let m = n.mutation(b"group:g1");
    assert!(n.dirty(b"group:g1"));
    assert_eq!(n.usable(b"group:g1", 5).err(), Some(WK_STATUS_TAG_DIRTY));
    let c = strs(&["c"]);
    let d = strs(&["d"]);
    let a = strs(&["a"]);
    let (mut outcome, mut view) = (0u8, ptr::null_mut());
    // SAFETY: live handles, valid arrays and out-pointers.
    unsafe {
        assert_eq!(wk_tag_mutation_add(m, 2, c.as_ptr(), 1), WK_STATUS_OK);
        assert_eq!(wk_tag_mutation_add(m, 3, d.as_ptr(), 1), WK_STATUS_OK);
        assert_eq!(wk_tag_mutation_remove(m, a.as_ptr(), 1), WK_STATUS_OK);
        assert_eq!(wk_tag_mutation_add(m, 3, ptr::null(), 0), WK_STATUS_OK);
        // A refused commit consumes nothing.
        assert_eq!(
            wk_tag_mutation_commit(m, 6, ptr::null_mut(), &mut view),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(n.dirty(b"group:g1"));
        assert_eq!(
            wk_tag_mutation_commit(m, 6, &mut outcome, &mut view),
            WK_STATUS_OK
        );
    }
    assert_eq!(outcome, WK_TAG_MUTATION_APPLIED);
    let tag = View(view);
    assert_eq!((tag.key(), tag.version()), ("leader-a-1".into(), 2));
    assert_eq!(tag.info().subscriber_mutation_version, 6);
    assert_eq!(tag.uids(0), (1, vec![]));
    assert_eq!(tag.uids(1), (2, vec!["b".into(), "c".into()]));
    assert_eq!(tag.uids(2), (3, vec!["d".into()]));
    assert!(!n.dirty(b"group:g1"));
    assert!(n.usable(b"group:g1", 6).unwrap().same(&tag));
    assert_eq!(n.usable(b"group:g1", 7).err(), Some(WK_STATUS_TAG_LAGGING));
    assert_eq!(n.usable(b"group:none", 0).err(), Some(WK_STATUS_NOT_FOUND));

    // Reset then add: one bump.
    let m = n.mutation(b"group:g1");
    let z = strs(&["z"]);
    // SAFETY: as above.
    unsafe {
        assert_eq!(wk_tag_mutation_add(m, 1, a.as_ptr(), 1), WK_STATUS_OK);
        assert_eq!(wk_tag_mutation_reset(m), WK_STATUS_OK);
        assert_eq!(wk_tag_mutation_add(m, 1, z.as_ptr(), 1), WK_STATUS_OK);
        assert_eq!(
            wk_tag_mutation_commit(m, 7, &mut outcome, ptr::null_mut()),
            WK_STATUS_OK
        );
    }
    assert_eq!(outcome, WK_TAG_MUTATION_APPLIED);
    let cur = n.usable(b"group:g1", 7).unwrap();
    assert_eq!((cur.version(), cur.info().uid_count), (3, 1));
    // A store version the tag already carries.
    let m = n.mutation(b"group:g1");
    let mut view = ptr::null_mut();
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            wk_tag_mutation_commit(m, 7, &mut outcome, &mut view),
            WK_STATUS_OK
        );
    }
    assert_eq!(outcome, WK_TAG_MUTATION_ALREADY_CURRENT);
    assert!(View(view).same(&cur));
    // An abandoned mutation leaves the channel dirty until a rebuild.
    let m = n.mutation(b"group:g1");
    // SAFETY: live handle, freed once.
    unsafe { wk_tag_mutation_free(m) };
    assert_eq!(n.usable(b"group:g1", 7).err(), Some(WK_STATUS_TAG_DIRTY));
    let _ = n.build(&mut Build::new("group:g1", 7, &[(1, &["z"])]));
    assert!(n.usable(b"group:g1", 7).is_ok());
    // No tag: nothing recorded, no view.
    let m = n.mutation(b"group:none");
    let mut view = ptr::dangling_mut();
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            wk_tag_mutation_commit(m, 1, &mut outcome, &mut view),
            WK_STATUS_OK
        );
    }
    assert_eq!(outcome, WK_TAG_MUTATION_NO_TAG);
    assert!(view.is_null());
    assert_eq!(n.usable(b"group:none", 0).err(), Some(WK_STATUS_NOT_FOUND));
}

#[test]
fn leader_cleanup_reclaims_ephemeral_bodies() {
    let n = Node::new(1, SEC, "l");
    let mut b = Build::new("group:g1", 1, &[(1, &["x"])]);
    let r = b.c();
    for _ in 0..40 {
        let mut v = ptr::null_mut();
        // SAFETY: live leader, valid pointers.
        unsafe {
            assert_eq!(
                wk_tag_leader_build_ephemeral(n.leader, &r, &mut v),
                WK_STATUS_OK
            );
            wk_tag_view_free(v);
        }
    }
    assert_eq!(n.leader_counts().entries, 40);
    let mut now = 0i64;
    let mut page = wk_tag_cleanup_page::default();
    let mut reclaimed = 0;
    // SAFETY: live leader, valid pointers.
    unsafe {
        assert_eq!(wk_tag_leader_advance_clock(n.leader, 2 * SEC), WK_STATUS_OK);
        assert_eq!(wk_tag_leader_now(n.leader, &mut now), WK_STATUS_OK);
        loop {
            assert_eq!(
                wk_tag_leader_cleanup(n.leader, now, 16, &mut page),
                WK_STATUS_OK
            );
            reclaimed += page.reclaimed;
            if page.visited == 0 {
                break;
            }
        }
    }
    assert_eq!(reclaimed, 40);
    let c = n.leader_counts();
    assert_eq!((c.entries, c.tags, c.reclaimed_bodies), (0, 0, 40));
}

// ----------------------------------------------------------------------------------------------
// The RPC.

/// The spec's golden response `{ok, tag}` (63 bytes): tag-1/group-1/v7/SMV 9/src group-0/srcSMV
/// 8/topology {4, [(1,2,7,9),(2,3,8,10)]}/partitions [(2,["u2"])].
const GOLDEN_RESPONSE: &str = "574b444701026f6b0000057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b";
/// The spec's 27-byte request `{get, "g", type 2, "t", 7, target 2, empty tag}`.
const GOLDEN_REQUEST: &str = "574b44540103676574016702017407020000000000000000000000";

fn request_fields(op: &'static [u8], key: &'static [u8], target: u64) -> wk_tag_request {
    wk_tag_request {
        op: s(op),
        channel_id: s(b"g"),
        channel_type: 2,
        tag_key: s(key),
        tag_version: 0,
        target_node_id: target,
    }
}

fn encode(r: &wk_tag_request, tag: Option<&mut TagIn>) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    let mut len = 0usize;
    let t = tag.map(|t| t.c());
    let tp = t.as_ref().map_or(ptr::null(), |t| t as *const wk_tag_in);
    // SAFETY: valid request, tag, buffer and out-pointer.
    let st = unsafe { wk_tag_request_encode(r, tp, buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(st, WK_STATUS_OK);
    buf.truncate(len);
    buf
}

fn handle(leader: &Node, frame: &[u8], channel_leader: u64) -> Result<Vec<u8>, wk_status> {
    let mut buf = vec![0u8; 4096];
    let mut len = 0usize;
    // SAFETY: live handles, valid frame, buffer and out-pointer.
    let st = unsafe {
        wk_tag_rpc_handle(
            leader.leader,
            leader.cache,
            frame.as_ptr(),
            frame.len(),
            channel_leader,
            buf.as_mut_ptr(),
            buf.len(),
            &mut len,
        )
    };
    if st != WK_STATUS_OK {
        return Err(st);
    }
    buf.truncate(len);
    Ok(buf)
}

fn store_response(
    n: &Node,
    frame: &[u8],
) -> Result<(wk_tag_response_head, u8, Option<View>), wk_status> {
    let mut head = wk_tag_response_head::default();
    let (mut stored, mut view) = (9u8, ptr::dangling_mut());
    // SAFETY: live cache, valid frame and out-pointers.
    let st = unsafe {
        wk_tag_cache_store_response(
            n.cache,
            frame.as_ptr(),
            frame.len(),
            &mut head,
            &mut stored,
            &mut view,
        )
    };
    if st != WK_STATUS_OK {
        assert_eq!(view, ptr::dangling_mut(), "untouched on {st:?}");
        return Err(st);
    }
    Ok((head, stored, (!view.is_null()).then(|| View(view))))
}

#[test]
fn request_golden_vector_and_truncations() {
    let r = request_fields(b"get", b"t", 2);
    let mut r7 = r;
    r7.tag_version = 7;
    let frame = encode(&r7, None);
    assert_eq!(frame, hex(GOLDEN_REQUEST));
    let mut len = 0usize;
    let mut short = [0u8; 8];
    // SAFETY: valid pointers; the short buffer is not written.
    unsafe {
        assert_eq!(
            wk_tag_request_encode(&r7, ptr::null(), ptr::null_mut(), 0, &mut len),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, 27);
        assert_eq!(
            wk_tag_request_encode(&r7, ptr::null(), short.as_mut_ptr(), 8, &mut len),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(short, [0; 8]);
        assert_eq!(
            wk_tag_request_encode_view(&r7, ptr::null(), ptr::null_mut(), 0, &mut len),
            WK_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, 27);
    }
    // Every truncation of the golden request, through the handler, and the spec's statuses.
    let leader = Node::new(1, 60 * SEC, "l");
    let want = |n: usize| match n {
        0..=4 => WK_STATUS_TAG_INVALID_REQUEST_CODEC,
        5 | 9 | 12 | 14..=24 => WK_STATUS_TAG_SHORT_UVARINT,
        6..=8 | 10 | 13 => WK_STATUS_TAG_SHORT_BYTES,
        11 => WK_STATUS_TAG_SHORT_CHANNEL_TYPE,
        _ => WK_STATUS_TAG_SHORT_VARINT,
    };
    for n in 0..frame.len() {
        let st = handle(&leader, &frame[..n], 1).unwrap_err();
        assert_eq!(st, want(n), "truncated at {n}");
        assert!(st.is(WK_STATUS_TAG_INVALID_FRAME));
    }
    let mut trailing = frame.clone();
    trailing.push(0);
    assert_eq!(
        handle(&leader, &trailing, 1),
        Err(WK_STATUS_TAG_TRAILING_REQUEST_BYTES)
    );
    let mut magic = frame.clone();
    magic[4] = 2;
    assert_eq!(
        handle(&leader, &magic, 1),
        Err(WK_STATUS_TAG_INVALID_REQUEST_CODEC)
    );
    assert_eq!(
        leader.leader_counts(),
        wk_tag_counts::default(),
        "nothing handled"
    );
}

#[test]
fn golden_response_stores_the_local_partition() {
    let follower = Node::new(2, 60 * SEC, "f");
    let (head, stored, view) = store_response(&follower, &hex(GOLDEN_RESPONSE)).unwrap();
    assert_eq!(
        head,
        wk_tag_response_head {
            leader_id: 0,
            status: WK_TAG_RPC_STATUS_OK,
            result: WK_TAG_RPC_RESULT_NONE
        }
    );
    assert_eq!(stored, 1);
    let view = view.unwrap();
    let i = view.info();
    assert_eq!(
        (text(i.key), text(i.channel_key)),
        ("tag-1".into(), "group-1".into())
    );
    assert_eq!((i.tag_version, i.subscriber_mutation_version), (7, 9));
    assert_eq!(text(i.source_channel_key), "group-0");
    assert_eq!(i.source_subscriber_mutation_version, 8);
    assert_eq!((i.hash_slot_table_version, i.ref_count), (4, 2));
    assert_eq!(i.created_at_ns, 200_000_000_000);
    assert_eq!(view.uids(0), (2, vec!["u2".into()]));
    // Node 3 keeps an empty partition of its own.
    let other = Node::new(3, 60 * SEC, "f");
    let (_, stored, view) = store_response(&other, &hex(GOLDEN_RESPONSE)).unwrap();
    assert_eq!(stored, 1);
    assert_eq!(view.unwrap().uids(0), (3, vec![]));
    // Not ok: nothing stored.
    let not_leader = hex("574b4447010a6e6f745f6c656164657202000000000000000000000000");
    let (head, stored, view) = store_response(&follower, &not_leader).unwrap();
    assert_eq!(
        (head.status, head.leader_id, stored),
        (WK_TAG_RPC_STATUS_NOT_LEADER, 2, 0)
    );
    assert!(view.is_none());
    let retryable = hex("574b44470109726574727961626c6500147461675f76657273696f6e5f6d69736d61746368057461672d3100080900000000000000");
    let (head, stored, _) = store_response(&follower, &retryable).unwrap();
    assert_eq!(
        (head.status, head.result, stored),
        (
            WK_TAG_RPC_STATUS_RETRYABLE,
            WK_TAG_RPC_RESULT_TAG_VERSION_MISMATCH,
            0
        )
    );
    assert_eq!(follower.cache_counts().stored, 1);
    // Bad frames.
    let golden = hex(GOLDEN_RESPONSE);
    assert_eq!(
        store_response(&follower, &golden[..golden.len() - 1]).err(),
        Some(WK_STATUS_TAG_SHORT_VARINT)
    );
    assert_eq!(
        store_response(&follower, &hex(GOLDEN_REQUEST)).err(),
        Some(WK_STATUS_TAG_INVALID_RESPONSE_CODEC)
    );
    let mut bad_key = golden.clone();
    let at = bad_key.windows(5).position(|w| w == b"tag-1").unwrap();
    bad_key[at] = 0xff;
    assert_eq!(
        store_response(&follower, &bad_key).err(),
        Some(WK_STATUS_TAG_INVALID_UTF8)
    );
    // A count above the bytes left: refused before anything is reserved.
    let huge = hex("574b444701026f6b000000000000000000ffffffff0f");
    let before = allocations();
    assert_eq!(
        store_response(&follower, &huge).err(),
        Some(WK_STATUS_TAG_REFS_COUNT_EXCEEDS_REMAINING)
    );
    assert!(
        allocations() - before < 8,
        "no allocation sized by the count"
    );
    assert_eq!(follower.cache_counts().stored, 1);
}

#[test]
fn rpc_round_trip_get_update_route_and_unknown_op() {
    let leader = Node::new(1, 60 * SEC, "leader-a");
    let follower = Node::new(2, 60 * SEC, "f");
    let built = leader.build(&mut Build::new(
        "group:g1",
        3,
        &[(1, &["u1"]), (2, &["u2"])],
    ));
    // A follower's fetch: get by key, only its partition comes back.
    let get = encode(&request_fields(b"get", b"leader-a-1", 2), None);
    let response = handle(&leader, &get, 1).unwrap();
    let (head, stored, view) = store_response(&follower, &response).unwrap();
    assert_eq!(
        (head.status, head.leader_id, stored),
        (WK_TAG_RPC_STATUS_OK, 1, 1)
    );
    let view = view.unwrap();
    assert_eq!(view.key(), "leader-a-1");
    assert_eq!(view.info().partition_count, 1);
    assert_eq!(view.uids(0), (2, vec!["u2".into()]));
    let (reason, _) = follower.lookup(b"group:g1", &built.request());
    assert_eq!(
        reason, WK_TAG_LOOKUP_HIT,
        "the follower hits the leader's reference"
    );
    // An unknown key: retryable + tag_not_current.
    let miss = encode(&request_fields(b"", b"nope", 2), None);
    let (head, stored, _) = store_response(&follower, &handle(&leader, &miss, 1).unwrap()).unwrap();
    assert_eq!(
        (head.status, head.result, stored),
        (
            WK_TAG_RPC_STATUS_RETRYABLE,
            WK_TAG_RPC_RESULT_TAG_NOT_CURRENT,
            0
        )
    );
    // Routing: no leader, another leader.
    let (head, _, _) = store_response(&follower, &handle(&leader, &get, 0).unwrap()).unwrap();
    assert_eq!(
        (head.status, head.result),
        (
            WK_TAG_RPC_STATUS_RETRYABLE,
            WK_TAG_RPC_RESULT_TAG_NOT_CURRENT
        )
    );
    let (head, _, _) = store_response(&follower, &handle(&leader, &get, 3).unwrap()).unwrap();
    assert_eq!(
        (head.status, head.leader_id),
        (WK_TAG_RPC_STATUS_NOT_LEADER, 3)
    );
    // An update pushes the built tag (every partition) into the handler node's cache.
    let update_node = Node::new(2, 60 * SEC, "u");
    let mut push = [0u8; 512];
    let mut len = 0usize;
    let fields = request_fields(b"update", b"", 0);
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(
            wk_tag_request_encode_view(&fields, built.0, push.as_mut_ptr(), push.len(), &mut len),
            WK_STATUS_OK
        );
    }
    let response = handle(&update_node, &push[..len], 2).unwrap();
    let (head, _, _) = store_response(&follower, &response).unwrap();
    assert_eq!(head.status, WK_TAG_RPC_STATUS_OK);
    let cached = update_node.current(b"group:g1").unwrap();
    assert_eq!(cached.key(), "leader-a-1");
    assert_eq!(cached.uids(0), (2, vec!["u2".into()]));
    // An update from a wk_tag_in encodes every partition as well.
    let mut t = TagIn::new("leader-a-1", 1, 3, &[(1, &["u1"]), (2, &["u2"])]);
    (t.created, t.last) = (built.info().created_at_ns, built.info().last_access_ns);
    let from_in = encode(&fields, Some(&mut t));
    assert_eq!(from_in.len(), len, "the same tag, the same frame length");
    // An unknown op is an error, not a response.
    let drop_op = encode(&request_fields(b"drop", b"", 0), None);
    assert_eq!(handle(&leader, &drop_op, 1), Err(WK_STATUS_TAG_UNKNOWN_OP));
    // Buffer too small: the needed length; retried, the same response.
    let mut needed = 0usize;
    // SAFETY: valid pointers (no buffer, cap 0).
    unsafe {
        assert_eq!(
            wk_tag_rpc_handle(
                leader.leader,
                leader.cache,
                get.as_ptr(),
                get.len(),
                1,
                ptr::null_mut(),
                0,
                &mut needed
            ),
            WK_STATUS_BUFFER_TOO_SMALL
        );
    }
    assert_eq!(needed, handle(&leader, &get, 1).unwrap().len());
    // A cache and a leader of different nodes.
    let mut buf = [0u8; 64];
    // SAFETY: live handles of two nodes, valid pointers.
    unsafe {
        assert_eq!(
            wk_tag_rpc_handle(
                leader.leader,
                follower.cache,
                get.as_ptr(),
                get.len(),
                1,
                buf.as_mut_ptr(),
                64,
                &mut len
            ),
            WK_STATUS_TAG_INVALID_CONFIG
        );
    }
}

// ----------------------------------------------------------------------------------------------
// Bad input.

#[test]
fn options_are_checked() {
    let mut cache = ptr::null_mut();
    let mut leader = ptr::null_mut();
    // SAFETY: NULL, bad and valid pointers; nothing read out of bounds.
    unsafe {
        let mut o = cache_options(2, SEC);
        assert_eq!(
            wk_tag_cache_new(ptr::null(), ptr::null(), &mut cache),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_new(&o, ptr::null(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        o.struct_size = 8;
        assert_eq!(
            wk_tag_cache_new(&o, ptr::null(), &mut cache),
            WK_STATUS_INVALID_ARGUMENT
        );
        o = cache_options(2, SEC);
        o.clock = 2;
        assert_eq!(
            wk_tag_cache_new(&o, ptr::null(), &mut cache),
            WK_STATUS_INVALID_ARGUMENT
        );
        o = cache_options(0, SEC);
        assert_eq!(
            wk_tag_cache_new(&o, ptr::null(), &mut cache),
            WK_STATUS_TAG_INVALID_CONFIG
        );
        let words = [0u64; 8];
        let odd = words
            .as_ptr()
            .cast::<u8>()
            .add(1)
            .cast::<wk_tag_cache_options>();
        assert_eq!(
            wk_tag_cache_new(odd, ptr::null(), &mut cache),
            WK_STATUS_INVALID_ARGUMENT
        );
        let dead = [DEAD; 8];
        assert_eq!(
            wk_tag_cache_new(&cache_options(2, SEC), dead.as_ptr().cast(), &mut cache),
            WK_STATUS_INVALID_HANDLE
        );
        assert!(cache.is_null());
        let mut l = leader_options(1, SEC, "p");
        assert_eq!(
            wk_tag_leader_new(ptr::null(), ptr::null(), &mut leader),
            WK_STATUS_NULL_ARGUMENT
        );
        l.struct_size = 40;
        assert_eq!(
            wk_tag_leader_new(&l, ptr::null(), &mut leader),
            WK_STATUS_INVALID_ARGUMENT
        );
        l = leader_options(0, SEC, "p");
        assert_eq!(
            wk_tag_leader_new(&l, ptr::null(), &mut leader),
            WK_STATUS_TAG_INVALID_CONFIG
        );
        l = leader_options(1, SEC, "p");
        l.key_prefix = s(b"\xff");
        assert_eq!(
            wk_tag_leader_new(&l, ptr::null(), &mut leader),
            WK_STATUS_TAG_INVALID_CONFIG
        );
        l.key_prefix = wk_str {
            ptr: dangling(),
            len: WK_TAG_STR_MAX + 1,
        };
        assert_eq!(
            wk_tag_leader_new(&l, ptr::null(), &mut leader),
            WK_STATUS_TAG_INVALID_CONFIG
        );
        l.key_prefix = wk_str {
            ptr: ptr::null(),
            len: 3,
        };
        assert_eq!(
            wk_tag_leader_new(&l, ptr::null(), &mut leader),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(leader.is_null());
        // The unix clock: keys are random 32-hex, the clock cannot be advanced.
        let mut real = cache_options(2, SEC);
        real.clock = WK_TAG_CLOCK_UNIX;
        assert_eq!(
            wk_tag_cache_new(&real, ptr::null(), &mut cache),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_tag_cache_advance_clock(cache, 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut now = 0i64;
        assert_eq!(wk_tag_cache_now(cache, &mut now), WK_STATUS_OK);
        assert!(now > START as i64 - 1_000_000 * SEC as i64);
        let mut clone = ptr::null_mut();
        assert_eq!(wk_tag_cache_clone(cache, &mut clone), WK_STATUS_OK);
        wk_tag_cache_free(clone);
        wk_tag_cache_free(cache);
        let mut real = leader_options(1, SEC, "");
        real.clock = WK_TAG_CLOCK_UNIX;
        assert_eq!(
            wk_tag_leader_new(&real, ptr::null(), &mut leader),
            WK_STATUS_OK
        );
        assert_eq!(
            wk_tag_leader_advance_clock(leader, 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut b = Build::new("c", 1, &[]);
        let r = b.c();
        let mut v = ptr::null_mut();
        assert_eq!(wk_tag_leader_build(leader, &r, &mut v), WK_STATUS_OK);
        let key = View(v).key();
        assert_eq!(key.len(), 32);
        assert!(key
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let mut clone = ptr::null_mut();
        assert_eq!(wk_tag_leader_clone(leader, &mut clone), WK_STATUS_OK);
        wk_tag_leader_free(clone);
        wk_tag_leader_free(leader);
        wk_tag_leader_free(ptr::null_mut());
        wk_tag_cache_free(ptr::null_mut());
    }
}

#[test]
fn bad_arguments_change_nothing() {
    let n = Node::new(2, SEC, "l");
    let (_, view) = n.store(&mut TagIn::new("k", 1, 1, &[(2, &["u"])]));
    let good = view.request();
    let before = (n.cache_counts(), n.leader_counts());
    let dead = [DEAD; 16];
    let dead_cache: *const wk_tag_cache = dead.as_ptr().cast();
    let dead_view: *const wk_tag_view = dead.as_ptr().cast();
    let odd_cache = (n.cache as *const u8)
        .wrapping_add(1)
        .cast::<wk_tag_cache>();
    let mistyped: *const wk_tag_cache = n.leader.cast();
    let mut reason = 77u8;
    let mut stored = 77u8;
    let mut out_view = ptr::null_mut::<wk_tag_view>();
    // SAFETY: NULL, bad and valid pointers only; oversized lengths are refused unread; the
    // "dead" handles are live memory holding the word a freed handle leaves.
    unsafe {
        // Handles: NULL, misaligned, mistyped, freed.
        for (h, want) in [
            (ptr::null(), WK_STATUS_NULL_ARGUMENT),
            (odd_cache, WK_STATUS_INVALID_HANDLE),
            (mistyped, WK_STATUS_INVALID_HANDLE),
            (dead_cache, WK_STATUS_INVALID_HANDLE),
        ] {
            assert_eq!(
                wk_tag_cache_lookup(h, s(b"group:g1"), &good, &mut reason, &mut out_view),
                want
            );
            let mut t = TagIn::new("k", 2, 2, &[]);
            let t = t.c();
            assert_eq!(wk_tag_cache_store(h, &t, &mut stored, &mut out_view), want);
            assert_eq!(wk_tag_cache_advance_clock(h, 1), want);
            let mut page = wk_tag_cleanup_page::default();
            assert_eq!(wk_tag_cache_cleanup(h, 0, 1, &mut page), want);
        }
        for (v, want) in [
            (ptr::null(), WK_STATUS_NULL_ARGUMENT),
            (dead_view, WK_STATUS_INVALID_HANDLE),
            (n.cache.cast_const().cast(), WK_STATUS_INVALID_HANDLE),
        ] {
            let mut i = view.info();
            i.tag_version = 4242;
            assert_eq!(wk_tag_view_info(v, &mut i, INFO_SIZE), want);
            assert_eq!(i.tag_version, 4242);
            let mut p = std::mem::zeroed::<wk_tag_partition_view>();
            assert_eq!(wk_tag_view_partition(v, 0, &mut p), want);
            let mut c = ptr::null_mut();
            assert_eq!(wk_tag_view_clone(v, &mut c), want);
            assert!(c.is_null());
            assert!(!wk_tag_view_same(v, view.0));
        }
        wk_tag_view_free(dead_view.cast_mut()); // ignored
        wk_tag_cache_free(dead_cache.cast_mut()); // ignored
        assert_eq!((reason, stored), (77, 77));
        assert!(out_view.is_null());

        // Out-pointers and sizes.
        let mut i = view.info();
        assert_eq!(
            wk_tag_view_info(view.0, ptr::null_mut(), INFO_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_view_info(view.0, &mut i, WK_TAG_INFO_MIN_SIZE - 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut counts = wk_tag_counts::default();
        assert_eq!(
            wk_tag_cache_counts(n.cache, &mut counts, WK_TAG_COUNTS_MIN_SIZE - 8),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(counts, wk_tag_counts::default());
        let mut words = [0u64; 4];
        let odd_reason = words.as_mut_ptr().cast::<u8>();
        let odd_view = words
            .as_mut_ptr()
            .cast::<u8>()
            .add(1)
            .cast::<*mut wk_tag_view>();
        assert_eq!(
            wk_tag_cache_lookup(n.cache, s(b"group:g1"), &good, odd_reason, odd_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup(
                n.cache,
                s(b"group:g1"),
                &good,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup(
                n.cache,
                s(b"group:g1"),
                ptr::null(),
                &mut reason,
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        let odd_request = (&good as *const wk_tag_lookup_request)
            .cast::<u8>()
            .add(1)
            .cast::<wk_tag_lookup_request>();
        assert_eq!(
            wk_tag_cache_lookup(
                n.cache,
                s(b"group:g1"),
                odd_request,
                &mut reason,
                ptr::null_mut()
            ),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(words, [0; 4]);

        // Strings: NULL with a length, too long, not UTF-8.
        let null_len = wk_str {
            ptr: ptr::null(),
            len: 4,
        };
        let long = wk_str {
            ptr: dangling(),
            len: WK_TAG_STR_MAX + 1,
        };
        for (ch, want) in [
            (null_len, WK_STATUS_NULL_ARGUMENT),
            (long, WK_STATUS_INVALID_ARGUMENT),
            (s(b"group:\xff"), WK_STATUS_TAG_INVALID_UTF8),
        ] {
            assert_eq!(
                wk_tag_cache_lookup(n.cache, ch, &good, &mut reason, ptr::null_mut()),
                want
            );
            let mut ch_out = ptr::null_mut();
            assert_eq!(wk_tag_cache_channel(n.cache, ch, &mut ch_out), want);
            assert!(ch_out.is_null());
            assert_eq!(wk_tag_cache_current(n.cache, ch, &mut out_view), want);
            assert_eq!(
                wk_tag_cache_lookup_tag(n.cache, s(b"group:g1"), ch, &mut out_view),
                want
            );
            let mut stale = false;
            assert_eq!(
                wk_tag_cache_is_source_stale(n.cache, s(b"group:g1"), ch, 1, &mut stale),
                want
            );
            let mut m = ptr::null_mut();
            assert_eq!(wk_tag_leader_begin_mutation(n.leader, ch, &mut m), want);
            assert!(m.is_null());
            let mut bad = good;
            bad.source_channel_key = ch;
            assert_eq!(
                wk_tag_cache_lookup(n.cache, s(b"group:g1"), &bad, &mut reason, ptr::null_mut()),
                want
            );
            assert_eq!(
                wk_tag_leader_lookup(n.leader, s(b"group:g1"), &bad, &mut reason, ptr::null_mut()),
                want
            );
            // Every key of a stored tag.
            for field in 0..3 {
                let mut t = TagIn::new("k", 9, 9, &[(2, &["new"])]);
                let mut c = t.c();
                match field {
                    0 => c.key = ch,
                    1 => c.channel_key = ch,
                    _ => c.source_channel_key = ch,
                }
                assert_eq!(
                    wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
                    want
                );
            }
            // Every key of a build.
            for field in 0..2 {
                let mut b = Build::new("group:g1", 9, &[(1, &["x"])]);
                let mut r = b.c();
                match field {
                    0 => r.channel_key = ch,
                    _ => r.source_channel_key = ch,
                }
                assert_eq!(wk_tag_leader_build(n.leader, &r, &mut out_view), want);
                assert_eq!(
                    wk_tag_leader_build_ephemeral(n.leader, &r, &mut out_view),
                    want
                );
            }
        }
        assert_eq!(reason, 77);
        assert!(out_view.is_null());
        assert_eq!(
            n.current(b"group:g1").unwrap().version(),
            1,
            "nothing stored"
        );

        // Arrays: oversized counts (unread), NULL with a count, a bad UID anywhere.
        let mut t = TagIn::new("k", 9, 9, &[(1, &["a"]), (2, &["new"])]);
        let base = t.c();
        let mut c = base;
        c.ref_count = WK_TAG_REFS_MAX + 1;
        c.refs = dangling();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        c = base;
        c.refs = ptr::null();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_NULL_ARGUMENT
        );
        c = base;
        c.partition_count = WK_TAG_PARTITIONS_MAX + 1;
        c.partitions = dangling();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Another node's partition is checked too, though the follower keeps only its own.
        let bad_uids = [wk_str {
            ptr: ptr::null(),
            len: 1,
        }];
        let huge_parts = [
            wk_tag_partition_in {
                node_id: 1,
                uids: bad_uids.as_ptr(),
                uid_count: 1,
            },
            *base.partitions.add(1),
        ];
        c = base;
        c.partitions = huge_parts.as_ptr();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_NULL_ARGUMENT
        );
        let too_many = [
            wk_tag_partition_in {
                node_id: 1,
                uids: dangling(),
                uid_count: WK_TAG_UIDS_MAX + 1,
            },
            *base.partitions.add(1),
        ];
        c.partitions = too_many.as_ptr();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        let long_uid = [wk_str {
            ptr: dangling(),
            len: WK_TAG_STR_MAX + 1,
        }];
        let long_parts = [
            *base.partitions,
            wk_tag_partition_in {
                node_id: 2,
                uids: long_uid.as_ptr(),
                uid_count: 1,
            },
        ];
        c.partitions = long_parts.as_ptr();
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        let odd_refs = t
            .refs
            .as_ptr()
            .cast::<u8>()
            .add(4)
            .cast::<wk_tag_slot_ref>();
        c = base;
        c.refs = odd_refs;
        c.ref_count = 1;
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        // UIDs are any bytes: invalid UTF-8 is a fine UID.
        let bin = [s(b"\xff\xfe")];
        let bin_parts = [wk_tag_partition_in {
            node_id: 2,
            uids: bin.as_ptr(),
            uid_count: 1,
        }];
        c = base;
        c.partitions = bin_parts.as_ptr();
        c.partition_count = 1;
        c.tag_version = 1;
        c.subscriber_mutation_version = 1;
        assert_eq!(stored, 77);
        assert!(out_view.is_null());
        assert_eq!(
            n.current(b"group:g1").unwrap().version(),
            1,
            "nothing stored"
        );
        assert_eq!(
            wk_tag_cache_store(n.cache, &c, &mut stored, ptr::null_mut()),
            WK_STATUS_OK
        );
        assert_eq!(stored, 1);
        let mut bin_view = ptr::null_mut();
        assert_eq!(
            wk_tag_cache_current(n.cache, s(b"group:g1"), &mut bin_view),
            WK_STATUS_OK
        );
        let bin_view = View(bin_view);
        let mut p = std::mem::zeroed::<wk_tag_partition_view>();
        assert_eq!(wk_tag_view_partition(bin_view.0, 0, &mut p), WK_STATUS_OK);
        assert_eq!(
            std::slice::from_raw_parts(p.bytes, p.bytes_len),
            b"\xff\xfe"
        );

        // Leader-side arrays and enums.
        let mut b = Build::new("group:g1", 9, &[(1, &["x"])]);
        let mut r = b.c();
        r.mint_fresh_key = 2;
        assert_eq!(
            wk_tag_leader_build(n.leader, &r, &mut out_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        r = b.c();
        assert_eq!(
            wk_tag_leader_build(n.leader, &r, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_leader_build(n.leader, ptr::null(), &mut out_view),
            WK_STATUS_NULL_ARGUMENT
        );
        let uids = strs(&["a"]);
        let slots = [0u32];
        let nodes = [1u64];
        for (u, sl, un, nd, nn, want) in [
            (
                ptr::null(),
                slots.as_ptr(),
                1,
                nodes.as_ptr(),
                1,
                WK_STATUS_NULL_ARGUMENT,
            ),
            (
                uids.as_ptr(),
                ptr::null(),
                1,
                nodes.as_ptr(),
                1,
                WK_STATUS_NULL_ARGUMENT,
            ),
            (
                uids.as_ptr(),
                slots.as_ptr(),
                1,
                ptr::null(),
                1,
                WK_STATUS_NULL_ARGUMENT,
            ),
            (
                dangling(),
                dangling(),
                WK_TAG_UIDS_MAX + 1,
                nodes.as_ptr(),
                1,
                WK_STATUS_INVALID_ARGUMENT,
            ),
            (
                uids.as_ptr(),
                slots.as_ptr(),
                1,
                dangling(),
                WK_TAG_SLOTS_MAX + 1,
                WK_STATUS_INVALID_ARGUMENT,
            ),
        ] {
            let mut plain = Build::new("group:g1", 9, &[]);
            let pr = plain.c();
            assert_eq!(
                wk_tag_leader_build_by_slot(n.leader, &pr, u, sl, un, nd, nn, &mut out_view),
                want
            );
        }
        let mut bad_uid_mut = n.mutation(b"group:g1");
        assert_eq!(
            wk_tag_mutation_add(bad_uid_mut, 1, ptr::null(), 1),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_mutation_add(bad_uid_mut, 1, dangling(), WK_TAG_UIDS_MAX + 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        let partly_bad = [
            s(b"ok"),
            wk_str {
                ptr: dangling(),
                len: WK_TAG_STR_MAX + 1,
            },
        ];
        assert_eq!(
            wk_tag_mutation_remove(bad_uid_mut, partly_bad.as_ptr(), 2),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(wk_tag_mutation_reset(ptr::null()), WK_STATUS_NULL_ARGUMENT);
        assert_eq!(
            wk_tag_mutation_reset(n.leader.cast()),
            WK_STATUS_INVALID_HANDLE
        );
        let mut outcome = 77u8;
        assert_eq!(
            wk_tag_mutation_commit(ptr::null_mut(), 1, &mut outcome, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_mutation_commit(bad_uid_mut, 1, &mut outcome, odd_view),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(outcome, 77);
        wk_tag_mutation_free(bad_uid_mut);
        bad_uid_mut = ptr::null_mut();
        wk_tag_mutation_free(bad_uid_mut);
        assert!(n.dirty(b"group:g1"), "the abandoned mutation left it dirty");
        let mut usable = ptr::null_mut();
        assert_eq!(
            wk_tag_leader_usable(n.leader, s(b"group:g1"), 0, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_leader_usable(ptr::null(), s(b"group:g1"), 0, &mut usable),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(usable.is_null());

        // Cleanup limits and counts.
        let mut page = wk_tag_cleanup_page {
            visited: 5,
            reclaimed: 5,
            unlinked: 5,
            wrapped: true,
        };
        for limit in [WK_TAG_CLEANUP_LIMIT_MAX + 1, u32::MAX] {
            assert_eq!(
                wk_tag_cache_cleanup(n.cache, i64::MAX, limit, &mut page),
                WK_STATUS_INVALID_ARGUMENT
            );
            assert_eq!(
                wk_tag_leader_cleanup(n.leader, i64::MAX, limit, &mut page),
                WK_STATUS_INVALID_ARGUMENT
            );
        }
        assert_eq!(
            wk_tag_cache_cleanup(n.cache, i64::MAX, 1, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(page.visited, 5);
        // A limit of 0 does nothing, even far past the TTL.
        assert_eq!(
            wk_tag_cache_cleanup(n.cache, i64::MAX, 0, &mut page),
            WK_STATUS_OK
        );
        assert_eq!(page, wk_tag_cleanup_page::default());
        assert_eq!(
            wk_tag_leader_cleanup(n.leader, i64::MAX, 0, &mut page),
            WK_STATUS_OK
        );
        assert_eq!(page, wk_tag_cleanup_page::default());
        assert_eq!(
            wk_tag_leader_counts(n.leader, ptr::null_mut(), COUNTS_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );

        // Frames.
        let mut len = 55usize;
        let mut buf = [0u8; 64];
        let fields = request_fields(b"get", b"k", 2);
        assert_eq!(
            wk_tag_request_encode(ptr::null(), ptr::null(), buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_request_encode(&fields, ptr::null(), ptr::null_mut(), 64, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_request_encode(&fields, ptr::null(), buf.as_mut_ptr(), 64, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let mut bad_fields = fields;
        bad_fields.tag_key = s(b"\xff");
        assert_eq!(
            wk_tag_request_encode(&bad_fields, ptr::null(), buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_TAG_INVALID_UTF8
        );
        bad_fields = fields;
        bad_fields.op = s(b"\xff");
        assert_eq!(
            wk_tag_request_encode(&bad_fields, ptr::null(), buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_OK,
            "ops are bytes"
        );
        len = 55;
        let mut bad_tag = TagIn::new("k", 1, 1, &[]);
        bad_tag.channel = b"\xff";
        let bt = bad_tag.c();
        assert_eq!(
            wk_tag_request_encode(&fields, &bt, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_TAG_INVALID_UTF8
        );
        assert_eq!(
            wk_tag_request_encode_view(&fields, dead_view, buf.as_mut_ptr(), 64, &mut len),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(len, 55);
        let frame = hex(GOLDEN_REQUEST);
        let mut head = wk_tag_response_head {
            leader_id: 5,
            status: 5,
            result: 5,
        };
        for (f, fl, want) in [
            (ptr::null(), 0, WK_STATUS_NULL_ARGUMENT),
            (
                frame.as_ptr(),
                WK_TAG_FRAME_MAX + 1,
                WK_STATUS_TAG_INVALID_FRAME,
            ),
        ] {
            assert_eq!(
                wk_tag_rpc_handle(n.leader, n.cache, f, fl, 2, buf.as_mut_ptr(), 64, &mut len),
                want
            );
            assert_eq!(
                wk_tag_cache_store_response(
                    n.cache,
                    f,
                    fl,
                    &mut head,
                    &mut stored,
                    ptr::null_mut()
                ),
                want
            );
        }
        assert_eq!(
            wk_tag_rpc_handle(
                n.leader,
                n.cache,
                frame.as_ptr(),
                frame.len(),
                2,
                ptr::null_mut(),
                64,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_rpc_handle(
                ptr::null(),
                n.cache,
                frame.as_ptr(),
                frame.len(),
                2,
                buf.as_mut_ptr(),
                64,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_rpc_handle(
                n.leader,
                n.leader.cast(),
                frame.as_ptr(),
                frame.len(),
                2,
                buf.as_mut_ptr(),
                64,
                &mut len
            ),
            WK_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            wk_tag_cache_store_response(
                n.cache,
                frame.as_ptr(),
                frame.len(),
                ptr::null_mut(),
                &mut stored,
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(head.leader_id, 5);
        assert_eq!(len, 55);
    }
    assert_eq!(n.current(b"group:g1").unwrap().info().uid_count, 1);
    let after = (n.cache_counts(), n.leader_counts());
    assert_eq!(after.0.lookups, before.0.lookups, "no refused look-up ran");
    assert_eq!(
        after.0.stored,
        before.0.stored + 1,
        "only the binary-UID store"
    );
    assert_eq!(after.1.stored, before.1.stored, "no refused build ran");
}

#[test]
fn a_panic_is_caught_and_changes_nothing() {
    use wkcore::tag::{FnTagKeys, LeaderOptions, TagLeader};
    let metrics = wkcore::metrics::Registry::new();
    let leader = TagLeader::with_metrics(
        LeaderOptions {
            local_node_id: 1,
            ttl_nanos: 0,
            clock: Arc::new(wkcore::clock::ManualClock::new(START)),
            keys: Arc::new(FnTagKeys(|| -> Box<str> { panic!("no keys today") })),
        },
        &metrics,
    );
    let raw = {
        use crate::handle::{ArcCastPtr, Guarded};
        wk_tag_leader::into_raw(Arc::new(Guarded::new::<wk_tag_leader>(Leader {
            leader,
            manual: None,
        })))
    };
    let mut b = Build::new("group:g1", 1, &[(1, &["u"])]);
    let r = b.c();
    let mut view = ptr::null_mut();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // SAFETY: a live handle and valid pointers.
    let st = unsafe { wk_tag_leader_build(raw, &r, &mut view) };
    std::panic::set_hook(hook);
    assert_eq!(st, WK_STATUS_PANIC);
    assert!(view.is_null());
    let mut counts = wk_tag_counts::default();
    // SAFETY: the leader is still usable after the panic.
    unsafe {
        assert_eq!(
            wk_tag_leader_current(raw, s(b"group:g1"), &mut view),
            WK_STATUS_NOT_FOUND
        );
        assert_eq!(
            wk_tag_leader_counts(raw, &mut counts, COUNTS_SIZE),
            WK_STATUS_OK
        );
        let mut dirty = true;
        assert_eq!(
            wk_tag_leader_is_dirty(raw, s(b"group:g1"), &mut dirty),
            WK_STATUS_OK
        );
        assert!(!dirty);
        wk_tag_leader_free(raw);
    }
    assert_eq!((counts.stored, counts.tags, counts.entries), (0, 0, 0));
}

#[test]
fn tag_families_show_in_the_registry() {
    let metrics = Metrics::new();
    let mut cache = ptr::null_mut();
    // SAFETY: valid options, registry and out-pointer.
    unsafe {
        assert_eq!(
            wk_tag_cache_new(&cache_options(2, SEC), metrics.0, &mut cache),
            WK_STATUS_OK
        );
    }
    // SAFETY: a live registry handle.
    let registry =
        unsafe { <wk_metrics_registry as crate::handle::ArcCastPtr>::try_ref(metrics.0).unwrap() };
    let mut text = String::new();
    registry.registry().render(&mut text);
    assert!(
        text.contains("wukongim_delivery_tag_lookups_total"),
        "{text}"
    );
    // SAFETY: owned, freed once.
    unsafe { wk_tag_cache_free(cache) };
}

// ----------------------------------------------------------------------------------------------
// Frames decoded, responses encoded, the handler with a host authority, the pure rules.

struct FrameH(*mut wk_tag_frame);

impl Drop for FrameH {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { wk_tag_frame_free(self.0) }
    }
}

fn bytes_of(w: wk_str) -> Vec<u8> {
    if w.len == 0 {
        return Vec::new();
    }
    // SAFETY: a string the library wrote; valid while its frame lives (the caller holds it).
    unsafe { std::slice::from_raw_parts(w.ptr, w.len) }.to_vec()
}

#[test]
fn frames_decode_and_responses_encode() {
    // The golden 79-byte request decodes field by field.
    let golden = hex("574b445401036765740767726f75702d3102057461672d310702057461672d310767726f75702d3107090767726f75702d30080402010207090203080a01020102753280c0ee8ed20b80e8c4c8d90b");
    let mut raw = ptr::null_mut();
    // SAFETY: valid pointers throughout; strings are read while the frame lives.
    unsafe {
        assert_eq!(
            wk_tag_frame_decode_request(golden.as_ptr(), golden.len(), &mut raw),
            WK_STATUS_OK
        );
        let f = FrameH(raw);
        let mut r = request_fields(b"x", b"x", 0);
        assert_eq!(wk_tag_frame_request(f.0, &mut r), WK_STATUS_OK);
        assert_eq!(bytes_of(r.op), b"get");
        assert_eq!(bytes_of(r.channel_id), b"group-1");
        assert_eq!((r.channel_type, r.tag_version, r.target_node_id), (2, 7, 2));
        let mut resp = wk_tag_response {
            status: s(b""),
            leader_id: 9,
            result: s(b""),
        };
        assert_eq!(
            wk_tag_frame_response(f.0, &mut resp),
            WK_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(resp.leader_id, 9);
        let mut i = std::mem::zeroed::<wk_tag_info>();
        assert_eq!(wk_tag_frame_tag(f.0, &mut i, INFO_SIZE), WK_STATUS_OK);
        assert_eq!(bytes_of(i.key), b"tag-1");
        assert_eq!(bytes_of(i.source_channel_key), b"group-0");
        assert_eq!((i.tag_version, i.subscriber_mutation_version), (7, 9));
        assert_eq!((i.hash_slot_table_version, i.ref_count), (4, 2));
        let refs = std::slice::from_raw_parts(i.refs, i.ref_count);
        assert_eq!(
            refs[1],
            wk_tag_slot_ref {
                slot_id: 2,
                leader_node_id: 3,
                config_epoch: 8,
                balance_version: 10
            }
        );
        assert_eq!((i.partition_count, i.uid_count), (1, 1));
        assert_eq!(i.created_at_ns, 200_000_000_000);
        assert_eq!(i.last_access_ns, 201_000_000_000);
        let mut p = wk_tag_partition_in {
            node_id: 0,
            uids: ptr::null(),
            uid_count: 0,
        };
        assert_eq!(wk_tag_frame_partition(f.0, 0, &mut p), WK_STATUS_OK);
        assert_eq!((p.node_id, p.uid_count), (2, 1));
        assert_eq!(bytes_of(*p.uids), b"u2");
        assert_eq!(wk_tag_frame_partition(f.0, 1, &mut p), WK_STATUS_NOT_FOUND);
        // A decoded frame's tag re-encodes to the same bytes (its partitions are input form).
        let parts = [p];
        let t = wk_tag_in {
            key: i.key,
            channel_key: i.channel_key,
            tag_version: i.tag_version,
            subscriber_mutation_version: i.subscriber_mutation_version,
            source_channel_key: i.source_channel_key,
            source_subscriber_mutation_version: i.source_subscriber_mutation_version,
            hash_slot_table_version: i.hash_slot_table_version,
            refs: i.refs,
            ref_count: i.ref_count,
            partitions: parts.as_ptr(),
            partition_count: 1,
            created_at_ns: i.created_at_ns,
            last_access_ns: i.last_access_ns,
        };
        let mut buf = [0u8; 128];
        let mut len = 0;
        assert_eq!(
            wk_tag_request_encode(&r, &t, buf.as_mut_ptr(), 128, &mut len),
            WK_STATUS_OK
        );
        assert_eq!(&buf[..len], &golden[..]);
        // The response golden: `ok` and the same tag.
        let ok = wk_tag_response {
            status: s(b"ok"),
            leader_id: 0,
            result: s(b""),
        };
        assert_eq!(
            wk_tag_response_encode(&ok, &t, buf.as_mut_ptr(), 128, &mut len),
            WK_STATUS_OK
        );
        assert_eq!(&buf[..len], &hex(GOLDEN_RESPONSE)[..]);
        let mut clone = ptr::null_mut();
        assert_eq!(wk_tag_frame_clone(f.0, &mut clone), WK_STATUS_OK);
        drop(f);
        let f = FrameH(clone);
        let mut i2 = std::mem::zeroed::<wk_tag_info>();
        assert_eq!(wk_tag_frame_tag(f.0, &mut i2, INFO_SIZE), WK_STATUS_OK);
        assert_eq!(bytes_of(i2.key), b"tag-1", "the clone keeps the frame");
        // Response frames.
        let nl = wk_tag_response {
            status: s(b"not_leader"),
            leader_id: 2,
            result: s(b""),
        };
        assert_eq!(
            wk_tag_response_encode(&nl, ptr::null(), buf.as_mut_ptr(), 128, &mut len),
            WK_STATUS_OK
        );
        assert_eq!(
            &buf[..len],
            &hex("574b4447010a6e6f745f6c656164657202000000000000000000000000")[..]
        );
        let mut raw = ptr::null_mut();
        assert_eq!(
            wk_tag_frame_decode_response(buf.as_ptr(), len, &mut raw),
            WK_STATUS_OK
        );
        let rf = FrameH(raw);
        assert_eq!(wk_tag_frame_response(rf.0, &mut resp), WK_STATUS_OK);
        assert_eq!(
            (bytes_of(resp.status), resp.leader_id),
            (b"not_leader".to_vec(), 2)
        );
        assert_eq!(
            wk_tag_frame_request(rf.0, &mut r),
            WK_STATUS_INVALID_ARGUMENT
        );
        // Bad input.
        let mut none = ptr::null_mut();
        assert_eq!(
            wk_tag_frame_decode_request(buf.as_ptr(), len, &mut none),
            WK_STATUS_TAG_INVALID_REQUEST_CODEC
        );
        assert_eq!(
            wk_tag_frame_decode_response(golden.as_ptr(), 3, &mut none),
            WK_STATUS_TAG_INVALID_RESPONSE_CODEC
        );
        assert_eq!(
            wk_tag_frame_decode_response(ptr::null(), 0, &mut none),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_frame_decode_response(buf.as_ptr(), len, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert!(none.is_null());
        assert_eq!(
            wk_tag_frame_tag(ptr::null(), &mut i, INFO_SIZE),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_frame_tag(rf.0, &mut i, WK_TAG_INFO_MIN_SIZE - 1),
            WK_STATUS_INVALID_ARGUMENT
        );
        let bad = wk_tag_response {
            status: wk_str {
                ptr: ptr::null(),
                len: 2,
            },
            leader_id: 0,
            result: s(b""),
        };
        assert_eq!(
            wk_tag_response_encode(&bad, ptr::null(), buf.as_mut_ptr(), 128, &mut len),
            WK_STATUS_NULL_ARGUMENT
        );
        wk_tag_frame_free(ptr::null_mut());
    }
}

/// What the test authority answers and saw.
struct Provider {
    answer: Vec<u8>,
    status: wk_status,
    calls: std::sync::atomic::AtomicU32,
    tag_key: std::sync::Mutex<Vec<u8>>,
}

unsafe extern "C" fn provide(
    user_data: *mut std::ffi::c_void,
    _op: u8,
    request: *const wk_tag_frame,
    response_out: *mut *const u8,
    response_len_out: *mut usize,
) -> wk_status {
    // SAFETY: every test passes a live `Provider`.
    let p = unsafe { &*user_data.cast::<Provider>() };
    p.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut r = request_fields(b"", b"", 0);
    // SAFETY: the handler lends a live request frame for the call.
    let st = unsafe { wk_tag_frame_request(request, &mut r) };
    assert_eq!(st, WK_STATUS_OK);
    *p.tag_key.lock().unwrap() = bytes_of(r.tag_key);
    // SAFETY: the handler's out-pointers.
    unsafe {
        *response_out = p.answer.as_ptr();
        *response_len_out = p.answer.len();
    }
    p.status
}

#[test]
fn the_handler_with_a_host_authority() {
    let answer = {
        let mut t = TagIn::new("t", 1, 1, &[(1, &["u1"]), (2, &["u2"])]);
        let t = t.c();
        let ok = wk_tag_response {
            status: s(b""),
            leader_id: 0,
            result: s(b""),
        };
        let mut buf = vec![0u8; 256];
        let mut len = 0;
        // SAFETY: valid pointers.
        let st = unsafe { wk_tag_response_encode(&ok, &t, buf.as_mut_ptr(), buf.len(), &mut len) };
        assert_eq!(st, WK_STATUS_OK);
        buf.truncate(len);
        buf
    };
    let provider = Provider {
        answer,
        status: WK_STATUS_OK,
        calls: Default::default(),
        tag_key: Default::default(),
    };
    let run =
        |p: &Provider, req: &wk_tag_request, leader: u64| -> (wk_status, u8, Option<FrameH>) {
            let frame = encode(req, None);
            let mut buf = vec![0u8; 256];
            let (mut len, mut called) = (0usize, 99u8);
            // SAFETY: valid pointers; `p` outlives the call.
            let st = unsafe {
                wk_tag_rpc_handle_with(
                    frame.as_ptr(),
                    frame.len(),
                    leader,
                    1,
                    Some(provide),
                    (p as *const Provider).cast_mut().cast(),
                    &mut called,
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut len,
                )
            };
            if st != WK_STATUS_OK {
                return (st, called, None);
            }
            let mut raw = ptr::null_mut();
            // SAFETY: valid pointers.
            let st = unsafe { wk_tag_frame_decode_response(buf.as_ptr(), len, &mut raw) };
            assert_eq!(st, WK_STATUS_OK);
            (st, called, Some(FrameH(raw)))
        };
    let head = |f: &FrameH| -> (Vec<u8>, u64, Vec<u8>) {
        let mut r = wk_tag_response {
            status: s(b""),
            leader_id: 0,
            result: s(b""),
        };
        // SAFETY: a live frame.
        assert_eq!(unsafe { wk_tag_frame_response(f.0, &mut r) }, WK_STATUS_OK);
        (bytes_of(r.status), r.leader_id, bytes_of(r.result))
    };
    // A get for target 2: only node 2's partition, the status filled, the leader filled.
    let (st, called, f) = run(&provider, &request_fields(b"get", b"t", 2), 1);
    assert_eq!((st, called), (WK_STATUS_OK, WK_TAG_OP_GET));
    let f = f.unwrap();
    assert_eq!(head(&f), (b"ok".to_vec(), 1, Vec::new()));
    assert_eq!(*provider.tag_key.lock().unwrap(), b"t");
    let mut p = wk_tag_partition_in {
        node_id: 0,
        uids: ptr::null(),
        uid_count: 0,
    };
    // SAFETY: a live frame.
    unsafe {
        assert_eq!(wk_tag_frame_partition(f.0, 0, &mut p), WK_STATUS_OK);
        assert_eq!((p.node_id, bytes_of(*p.uids)), (2, b"u2".to_vec()));
        assert_eq!(wk_tag_frame_partition(f.0, 1, &mut p), WK_STATUS_NOT_FOUND);
    }
    // A key mismatch becomes retryable + tag_not_current; an update calls update.
    let (_, _, f) = run(&provider, &request_fields(b"get", b"old", 0), 1);
    assert_eq!(
        head(&f.unwrap()),
        (b"retryable".to_vec(), 1, b"tag_not_current".to_vec())
    );
    let (_, called, _) = run(&provider, &request_fields(b"update", b"", 0), 1);
    assert_eq!(called, WK_TAG_OP_UPDATE);
    // Routing calls nothing.
    let calls = provider.calls.load(std::sync::atomic::Ordering::SeqCst);
    let (_, called, f) = run(&provider, &request_fields(b"get", b"t", 0), 2);
    assert_eq!(called, 0);
    assert_eq!(head(&f.unwrap()), (b"not_leader".to_vec(), 2, Vec::new()));
    let (_, called, f) = run(&provider, &request_fields(b"get", b"t", 0), 0);
    assert_eq!(called, 0);
    assert_eq!(
        head(&f.unwrap()),
        (b"retryable".to_vec(), 0, b"tag_not_current".to_vec())
    );
    assert_eq!(
        provider.calls.load(std::sync::atomic::Ordering::SeqCst),
        calls
    );
    // An unknown op, an authority error, an undecodable answer.
    let (st, called, _) = run(&provider, &request_fields(b"drop", b"", 0), 1);
    assert_eq!((st, called), (WK_STATUS_TAG_UNKNOWN_OP, 0));
    let failing = Provider {
        answer: Vec::new(),
        status: WK_STATUS_TIMEOUT,
        calls: Default::default(),
        tag_key: Default::default(),
    };
    assert_eq!(
        run(&failing, &request_fields(b"get", b"t", 0), 1).0,
        WK_STATUS_TIMEOUT
    );
    let garbage = Provider {
        answer: vec![1, 2, 3],
        status: WK_STATUS_OK,
        calls: Default::default(),
        tag_key: Default::default(),
    };
    assert_eq!(
        run(&garbage, &request_fields(b"get", b"t", 0), 1).0,
        WK_STATUS_TAG_INVALID_RESPONSE_CODEC
    );
    // Bad arguments: nothing is called.
    let frame = encode(&request_fields(b"get", b"t", 0), None);
    let mut len = 0usize;
    // SAFETY: NULL and valid pointers.
    unsafe {
        assert_eq!(
            wk_tag_rpc_handle_with(
                frame.as_ptr(),
                frame.len(),
                1,
                1,
                None,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                0,
                &mut len
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_rpc_handle_with(
                frame.as_ptr(),
                frame.len(),
                1,
                1,
                Some(provide),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                0,
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_rpc_handle_with(
                frame.as_ptr(),
                3,
                1,
                1,
                Some(provide),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                0,
                &mut len
            ),
            WK_STATUS_TAG_INVALID_REQUEST_CODEC
        );
    }
}

#[test]
fn redirect_and_partition_by_node() {
    let mut next = 77u64;
    // SAFETY: valid pointers throughout.
    unsafe {
        for (called, status, leader, want) in [
            (1, &b"not_leader"[..], 3, 3),
            (3, b"not_leader", 3, 0),
            (1, b"not_leader", 0, 0),
            (1, b"retryable", 3, 0),
        ] {
            assert_eq!(
                wk_tag_rpc_redirect(called, s(status), leader, &mut next),
                WK_STATUS_OK
            );
            assert_eq!(next, want);
        }
        assert_eq!(
            wk_tag_rpc_redirect(1, s(b"x"), 3, ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        let uids = strs(&["a", "b", "c"]);
        let slots = [0u32, 1, 0];
        let nodes = [2u64, 1];
        let mut view = ptr::null_mut();
        let mut slot = 99u32;
        assert_eq!(
            wk_tag_partition_by_node(
                uids.as_ptr(),
                slots.as_ptr(),
                3,
                nodes.as_ptr(),
                2,
                &mut view,
                &mut slot
            ),
            WK_STATUS_OK
        );
        assert_eq!(slot, 99);
        let v = View(view);
        assert_eq!(v.uids(0), (1, vec!["b".into()]));
        assert_eq!(v.uids(1), (2, vec!["a".into(), "c".into()]));
        assert_eq!(v.key(), "");
        let unknown = [0u32, 7, 5];
        let mut none = ptr::null_mut();
        assert_eq!(
            wk_tag_partition_by_node(
                uids.as_ptr(),
                unknown.as_ptr(),
                3,
                nodes.as_ptr(),
                2,
                &mut none,
                &mut slot
            ),
            WK_STATUS_TAG_UNASSIGNED_SLOT
        );
        assert_eq!(slot, 7, "the first unknown slot");
        assert!(none.is_null());
        assert_eq!(
            wk_tag_partition_by_node(
                uids.as_ptr(),
                unknown.as_ptr(),
                3,
                nodes.as_ptr(),
                2,
                &mut none,
                ptr::null_mut()
            ),
            WK_STATUS_TAG_UNASSIGNED_SLOT
        );
        assert_eq!(
            wk_tag_partition_by_node(
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                0,
                &mut view,
                ptr::null_mut()
            ),
            WK_STATUS_OK
        );
        let empty = View(view);
        assert_eq!(empty.info().partition_count, 0);
        assert_eq!(
            wk_tag_partition_by_node(
                uids.as_ptr(),
                slots.as_ptr(),
                3,
                nodes.as_ptr(),
                2,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            WK_STATUS_NULL_ARGUMENT
        );
    }
}

// The inline hit's crossing (`hot`).

fn zero_hot() -> wk_tag_hot {
    // SAFETY: all-zero is a valid `wk_tag_hot` (NULL pointers, zeros).
    unsafe { std::mem::zeroed() }
}

fn lookup_hot(
    n: &Node,
    channel: &[u8],
    r: &wk_tag_lookup_request,
    known: *const u64,
) -> wk_tag_hot {
    let mut hot = zero_hot();
    // SAFETY: live cache, valid request and out-pointer; `known` is only compared.
    let st = unsafe { wk_tag_cache_lookup_hot(n.cache, s(channel), r, known, &mut hot) };
    assert_eq!(st, WK_STATUS_OK);
    hot
}

fn hot_counts(n: &Node) -> wk_tag_counts {
    // SAFETY: all-zero is a valid `wk_tag_counts`.
    let mut counts: wk_tag_counts = unsafe { std::mem::zeroed() };
    // SAFETY: live cache, valid out-pointer of its size.
    let st = unsafe { wk_tag_cache_counts(n.cache, &mut counts, COUNTS_SIZE) };
    assert_eq!(st, WK_STATUS_OK);
    counts
}

fn free_hot(hot: &wk_tag_hot) {
    // SAFETY: handles the call gave, freed once (NULL is a no-op).
    unsafe {
        wk_tag_view_free(hot.view);
        wk_tag_channel_free(hot.channel);
    }
}

fn word(p: *mut u64) -> u64 {
    // SAFETY: a word the library handed out, alive while the caller's channel handle is.
    unsafe { std::sync::atomic::AtomicU64::from_ptr(p) }.load(std::sync::atomic::Ordering::SeqCst)
}

#[test]
fn hot_layout_version_is_the_headers() {
    assert_eq!(wk_tag_hot_layout_version(), WK_TAG_HOT_LAYOUT_VERSION);
    let h = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../include/wkcore.h"))
        .unwrap();
    assert!(h.contains("#define WK_TAG_HOT_LAYOUT_VERSION 1"));
    assert!(h.contains("#define WK_TAG_GEN_RETIRED 9223372036854775808ull"));
}

#[test]
fn hot_lookup_gives_the_words_and_a_stable_generation() {
    let n = Node::new(2, 10 * SEC, "p");
    let mut t = TagIn::new("k", 3, 9, &[(2, &["u1", "u2"]), (1, &["x"])]);
    let (stored, body) = n.store(&mut t);
    assert_eq!(stored, 1);
    let r = body.request();
    let hot = lookup_hot(&n, b"group:g1", &r, ptr::null());
    assert_eq!(hot.reason, WK_TAG_LOOKUP_HIT);
    assert_eq!((hot.stable, hot.same_cell, hot.has_partition), (1, 0, 1));
    assert!(!hot.channel.is_null() && !hot.view.is_null());
    assert_eq!(hot.generation, WK_TAG_GEN_VERSION_ONE);
    assert_eq!(word(hot.generation_word), hot.generation);
    assert_eq!(hot.partition.uid_count, 2);
    // Rows are whole cache lines apart.
    assert!(hot.hit_row_stride >= WK_TAG_HOT_HIT_ROW_COUNTERS && hot.hit_row_stride % 8 == 0);
    // The hit marked the body with the running tick.
    assert_eq!(word(hot.touched), word(hot.tick));
    // The host counts in its rows; the cache's counts include them.
    // SAFETY: row 5, counter 0 (hit): inside the rows the library handed out.
    let cell = unsafe { hot.hit_rows.add(5 * hot.hit_row_stride as usize) };
    // SAFETY: as above; the host adds with atomics.
    unsafe { std::sync::atomic::AtomicU64::from_ptr(cell) }
        .fetch_add(10, std::sync::atomic::Ordering::Relaxed);
    let counts = hot_counts(&n);
    assert_eq!(counts.lookups[WK_TAG_LOOKUP_HIT as usize], 11);

    // Again with the cell named: no new channel handle.
    let again = lookup_hot(&n, b"group:g1", &r, hot.generation_word);
    assert_eq!((again.same_cell, again.stable), (1, 1));
    assert!(again.channel.is_null());
    assert_eq!(again.generation_word, hot.generation_word);
    free_hot(&again);

    // A store moves the word; the new pair carries the new generation and body.
    let mut t2 = TagIn::new("k", 4, 9, &[(2, &["u3"])]);
    assert_eq!(n.store(&mut t2).0, 1);
    assert_eq!(
        word(hot.generation_word),
        hot.generation + WK_TAG_GEN_VERSION_ONE
    );
    let stale = lookup_hot(&n, b"group:g1", &r, hot.generation_word);
    assert_eq!(stale.reason, WK_TAG_LOOKUP_STALE_REQUEST);
    assert_eq!(stale.generation, hot.generation + WK_TAG_GEN_VERSION_ONE);
    assert_eq!(stale.partition.uid_count, 1);
    free_hot(&stale);
    free_hot(&hot);
}

#[test]
fn hot_lookup_of_an_unknown_or_retired_channel() {
    let n = Node::new(2, SEC, "p");
    let mut t = TagIn::new("k", 1, 1, &[(2, &["u1"])]);
    let r = {
        let (_, body) = n.store(&mut t);
        body.request()
    };
    let none = lookup_hot(&n, b"group:none", &r, ptr::null());
    assert_eq!(none.reason, WK_TAG_LOOKUP_MISSING_REF);
    assert!(none.channel.is_null() && none.view.is_null() && none.generation_word.is_null());
    assert_eq!(none.stable, 0);
    let counts = hot_counts(&n);
    assert_eq!(counts.entries, 1, "no cell for the unknown channel");

    // Hold the cell (a miss: a hit would mark the running tick), then let it be reclaimed.
    let mut miss = r;
    miss.tag_key = s(b"other");
    let held = lookup_hot(&n, b"group:g1", &miss, ptr::null());
    assert_eq!(held.reason, WK_TAG_LOOKUP_TAG_KEY_MISMATCH);
    let mut page = wk_tag_cleanup_page {
        visited: 0,
        reclaimed: 0,
        unlinked: 0,
        wrapped: false,
    };
    // SAFETY: live cache, valid out-pointer.
    let st = unsafe { wk_tag_cache_cleanup(n.cache, (START + 2 * SEC) as i64, 16, &mut page) };
    assert_eq!((st, page.reclaimed), (WK_STATUS_OK, 1));
    let w = word(held.generation_word);
    assert_ne!(w & WK_TAG_GEN_RETIRED, 0);
    assert_eq!(w & WK_TAG_GEN_WRITERS_MASK, 0);
    // The held view still reads its body.
    assert_eq!(View(held.view).uids(0).1, vec!["u1".to_string()]);
    // SAFETY: the handle the call gave, freed once.
    unsafe { wk_tag_channel_free(held.channel) };
}

#[test]
fn hot_lookup_checks_every_argument() {
    let n = Node::new(2, SEC, "p");
    let mut t = TagIn::new("k", 1, 1, &[(2, &["u1"])]);
    let (_, body) = n.store(&mut t);
    let r = body.request();
    let mut hot = zero_hot();
    // SAFETY: every call below passes a NULL, invalid or checked argument.
    unsafe {
        assert_eq!(
            wk_tag_cache_lookup_hot(ptr::null(), s(b"group:g1"), &r, ptr::null(), &mut hot),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"group:g1"), ptr::null(), ptr::null(), &mut hot),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"group:g1"), &r, ptr::null(), ptr::null_mut()),
            WK_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"\xff"), &r, ptr::null(), &mut hot),
            WK_STATUS_TAG_INVALID_UTF8
        );
        let mut bad = r;
        bad.tag_key = s(b"\xfe");
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"group:g1"), &bad, ptr::null(), &mut hot),
            WK_STATUS_TAG_INVALID_UTF8
        );
        let mut many = r;
        many.ref_count = WK_TAG_REFS_MAX + 1;
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"group:g1"), &many, ptr::null(), &mut hot),
            WK_STATUS_INVALID_ARGUMENT
        );
        let misaligned = (ptr::addr_of_mut!(hot) as *mut u8).add(1) as *mut wk_tag_hot;
        assert_eq!(
            wk_tag_cache_lookup_hot(n.cache, s(b"group:g1"), &r, ptr::null(), misaligned),
            WK_STATUS_INVALID_ARGUMENT
        );
        let mut leader_as_cache = zero_hot();
        assert_eq!(
            wk_tag_cache_lookup_hot(
                n.leader.cast(),
                s(b"group:g1"),
                &r,
                ptr::null(),
                &mut leader_as_cache
            ),
            WK_STATUS_INVALID_HANDLE
        );
    }
    // Nothing was written by a refused call.
    assert!(hot.view.is_null() && hot.channel.is_null() && hot.reason == 0);
}
