//! The delivery-tag C ABI (`wkcore::tag`): the follower cache (`wk_tag_cache`) and its channel
//! handles (`wk_tag_channel`), held tag bodies (`wk_tag_view`), the leader side
//! (`wk_tag_leader`) with its membership mutations (`wk_tag_mutation`), the service-44 RPC
//! (`wk_tag_rpc_handle` over this node's leader and cache, `wk_tag_rpc_handle_with` over a host
//! authority, `wk_tag_cache_store_response`, the encoders and decoded frames `wk_tag_frame`),
//! and the tag statuses (300–399).
//!
//! | file | what |
//! |---|---|
//! | `status` | `WK_STATUS_TAG_*`, the range, the `TagError` and decode-error mappings |
//! | `types` | constants, the structs, string, slot-ref, partition and tag conversions |
//! | `view` | `wk_tag_view`: info and zero-copy partitions of one body |
//! | `cache` | `wk_tag_cache`, `wk_tag_channel`: store, look-up (single, batch), cleanup |
//! | `hot` | the inline hit's layout (`WK_TAG_HOT_*`, `WK_TAG_GEN_*`), `wk_tag_cache_lookup_hot` |
//! | `leader` | `wk_tag_leader`, `wk_tag_mutation`: builds, mutations; `wk_tag_partition_by_node` |
//! | `frame` | the RPC handlers, the fetch store, the encoders, `wk_tag_frame`, the redirect |
//!
//! # Strings
//!
//! Keys (channel, tag, source) and the leader's key prefix are `wk_str`, UTF-8 (else
//! `WK_STATUS_TAG_INVALID_UTF8`), at most `WK_TAG_STR_MAX` bytes (else
//! `WK_STATUS_INVALID_ARGUMENT`); a NULL `ptr` with `len` 0 is the empty string. UIDs, ops and
//! channel ids are any bytes. Every input is read during the call only, and checked entirely
//! before the call changes anything.
//!
//! # Views
//!
//! A tag body is immutable once published: a store or a build swaps in a new one. A view holds
//! one body (a reference count) until `wk_tag_view_free`, and every pointer read from it
//! (`wk_tag_view_info`, `wk_tag_view_partition`) stays valid that long, whatever the cache or
//! leader does meanwhile. Calls that return a view take a `wk_tag_view **` that may be NULL
//! (look-ups, stores, commits: nothing is allocated then) or is required (current, by key).
//!
//! # Time
//!
//! Tags stamp unix nanoseconds from the options' clock (`WK_TAG_CLOCK_UNIX`, or a manual clock
//! for tests). Nothing runs in the background: a host timer calls `wk_tag_cache_cleanup` and
//! `wk_tag_leader_cleanup` with the clock's reading (`wk_tag_*_now`).
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other, except that one
//! `wk_tag_mutation` is one logical change: its calls are serialized inside, and its commit or
//! free must not race another call on it.

#[cfg(test)]
mod abi_tests;
pub mod cache;
pub mod frame;
pub mod hot;
pub mod leader;
pub mod status;
pub mod types;
pub mod view;
