//! wkcore: the lock-free coordination core of WuKongIM.
//!
//! WuKongIM's hottest coordination paths, re-built on atomics, model-checked with loom and
//! exported through a stable C ABI (crate `wkcore-ffi`) to Go and C++ hosts:
//!
//! - [`admission`]: per-slot proposal admission QoS (foreground/background classes, typed
//!   refusals, outcome counters) and its lock-free FIFO control queue.
//! - [`codec`]: byte-exact wire codecs (forwarded proposals, payload envelopes).
//! - [`coord`]: lock-free coordination primitives that make duplicate work harmless (anchors,
//!   fire-once flips, counters, exclusive triggers).
//! - [`owner`]: the MQTT owner registry: admitted operation scopes, fences, leases, quiescence.
//! - [`tag`]: delivery tags: leader snapshots and the follower partition cache.
//! - [`metrics`]: closed-name counter families and their Prometheus text exposition.
//! - [`clock`]: injected monotonic time.
//!
//! Concurrency primitives come only from the crate-private `sync` module, which swaps in loom's
//! under `--cfg wkcore_loom` (see `loom-tests/`).
#![deny(unsafe_op_in_unsafe_fn)]

pub mod admission;
pub mod clock;
pub mod codec;
pub mod coord;
#[cfg(wkcore_loom)]
pub mod hazard;
#[cfg(not(wkcore_loom))]
pub(crate) mod hazard;
pub mod metrics;
pub mod owner;
pub(crate) mod sync;
pub mod tag;
pub(crate) mod word;
