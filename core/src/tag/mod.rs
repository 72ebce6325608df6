//! Delivery tags: leader-built, node-partitioned subscriber snapshots, and the follower's cache
//! of its own partition with a stale-safe swap.
//!
//! - [`types`]: the tag body ([`DeliveryTag`]), its partitions with compact UID lists
//!   ([`Uids`]), the topology version ([`PartitionTopology`]) and the channel reference
//!   ([`TagRef`]).
//! - [`mod@fence`]: upstream's look-up fence and stale-store rule as pure functions.
//! - [`PartitionCache`] (follower) and [`TagLeader`] (leader): `docs/TAG.md` has the model.
//! - [`rpc`]: the service-44 handler's routing and normalization rules; the codec itself is
//!   [`crate::codec::delivery_tag`].
//! - [`hot`]: the words and generation protocol of a host that runs the follower hit inline.
//! - [`handoff`]: the idempotent leader → target shard hand-off over a coordination ledger.
//! - [`metrics`]: the `wukongim_delivery_tag_*` families.

pub mod cache;
pub mod error;
pub mod fence;
pub mod handoff;
pub mod hot;
pub mod key;
pub mod leader;
pub mod metrics;
pub(crate) mod reclaim;
pub mod rpc;
pub mod types;

pub use cache::{
    CacheOptions, ChannelHandle, CleanupPage, HostedLookup, Lookup, PartitionCache, StoreOutcome,
    CLEANUP_LIMIT_MAX,
};
pub use error::TagError;
pub use fence::{fence, is_stale_store, LookupReason, LookupRequest, StoreVersions};
pub use handoff::{Dispatch, HandoffError, HandoffStatus, ShardHandoffs};
pub use hot::{generation_retired, host_layout, HostBodyMarks, HostChannelWords};
pub use key::{FnTagKeys, RandomTagKeys, SequentialTagKeys, TagKeys};
pub use leader::{
    partition_by_node, BuildRequest, LeaderOptions, Mutation, MutationOutcome, TagLeader,
};
pub use metrics::{declare_tag_families, tag_families, TagCounts};
pub use types::{
    DeliveryTag, NodePartition, PartitionTopology, SlotAuthorityRef, TagParts, TagRef,
    TopologyView, Uids,
};

/// Upstream's production TTL: one minute.
pub const PRODUCTION_TTL_NANOS: u64 = 60_000_000_000;

/// Wall-clock time as unix nanoseconds (what tags stamp and put on the wire).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnixClock;

impl crate::clock::Clock for UnixClock {
    fn now_nanos(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    }
}
