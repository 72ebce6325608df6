// Package deliverytag is wkcore's delivery-tag cache for Go hosts, shaped
// like upstream's internal/runtime/deliverytag (DeliveryTag, NodePartition,
// TagRef, PartitionTopologyVersion, SlotAuthorityRef, the LookupReason
// strings, Manager) and its service-44 RPC (internal/access/node), so a
// WuKongIM call site swaps by import path.
//
// A channel's leader materializes a delivery tag: a subscriber snapshot of
// one tag incarnation (its key), split into per-node partitions of UIDs.
// Followers cache only their own partition, and every look-up is fenced
// against the reference the delivery was planned with: key, tag version,
// subscriber mutation versions and the partition topology.
//
//   - Cache is the follower side. Store is upstream's
//     StoreFollowerPartition: it keeps the local partition unless the tag
//     is stale (a lower subscriber version; the same source with a lower
//     source version; the same key with a lower tag version), so a delayed
//     old tag never evicts a newer one. Lookup is upstream's
//     LookupLocalPartitionRef: the fence in upstream's order, and a View of
//     the current body on a hit and on every miss from the key check on
//     (callers adopt it on LookupStaleRequest and LookupTagKeyMismatch).
//     Check is the reason alone. Channel returns a handle for hot callers
//     that skips the channel map.
//   - Leader is the leader side: BuildLeaderTag (the key and version
//     reused, the version bumped iff the subscriber version, source or
//     topology changed; a fresh key with MintFreshKey), BuildEphemeralTag,
//     LookupTag (the authority fetch by key), and membership changes with
//     the dirty lifecycle: BeginMutation marks the channel dirty before the
//     host writes its store, Add, Remove and Reset collect the change, and
//     Commit applies it with the store's version (one version bump, the
//     same key), or Abandon leaves the channel dirty until a rebuild.
//     Usable refuses a dirty or lagging tag (rebuild).
//   - Manager is upstream's Manager, method for method, over one Leader and
//     one Cache.
//   - RPCHandler, Client, the codec (EncodeRequest, DecodeResponse, …) and
//     PartitionByNode are upstream's RPC and partitioning rules, in Go in
//     both builds.
//
// # Views
//
// A View is one look-up's hold on an immutable body: Len and UID read the
// UIDs without a copy (in the cgo build, straight from the library's
// memory), UIDs and Tag copy. Release it when done; strings read from it
// must not be used after Release in the cgo build, and the View itself must
// not be used after Release in either (it is recycled, or, for a cache's
// look-up in the cgo build, shared by the look-ups of one snapshot, which
// is why a hit allocates nothing). A later store or cleanup never changes what a held
// View reads.
//
// # Hits, TTL and cleanup
//
// A hit takes no lock and writes no shared memory but a per-stripe counter:
// instead of stamping the time (upstream writes LastAccess back under an
// exclusive lock), it marks the body with the current cleanup tick, once
// per tick. CleanupExpired is a bounded page of one pass (at most
// CleanupLimitMax entries; the next call continues), meant for a host
// timer: nothing here starts a goroutine. A body idle past the TTL at the
// page's now (strictly, as upstream) is reclaimed, measured from the later
// of its LastAccess (store, build, look-up by key) and the end of the tick
// of its latest hit; a page ends the current tick once it has lasted a 32nd
// of the TTL. So reclamation is never earlier than upstream's exact clock,
// and later by at most one tick and one cleanup interval. Upstream
// configures a one-minute TTL but never calls its cleanup; call this one.
//
// # Builds
//
// The cgo build (Implementation "rust") runs the Rust core's cache and
// leader over the C ABI (wk_tag_*). A cache's look-up (Cache and Channel:
// Lookup, Check) runs inline, in Go, without a C call: the package holds
// each channel's current body (a view of it) and the generation it belongs
// to, and a hit loads the channel's generation word from the library's
// memory, runs the fence on the held fields, marks the hit and counts it in
// the library's memory as the library does; only a changed or unknown
// snapshot crosses (wk_tag_cache_lookup_hot), once (hot_cgo.go). The
// leader's look-ups are one C call each. Strings cross as pointer and
// length, read during the call only, and writes copy what C keeps into one
// C allocation. With
// CGO_ENABLED=0 or -tags wkcore_purego (Implementation "go") Cache and
// Leader are the same algorithm in Go (lockfree.go): one immutable snapshot
// per channel in an atomic pointer, swapped by CompareAndSwap under the
// stale rule, a sync.Map index, the same cleanup ticks and pages. It is
// compiled in the cgo build too (the benchmarks' "purego" column). Both
// builds check arguments in the C ABI's order and refuse the same input
// with the same error: a channel, tag or source key that is not UTF-8 is
// ErrInvalidUTF8 (UIDs may be any bytes), a key or UID longer than KeyMax
// or a list past its limit ErrInvalidArgument, a partition past 2^32-1
// bytes ErrTooLarge. The errors are the C ABI's statuses 300–399 with the
// library's texts (decode errors: upstream's access/node texts, each also
// matching ErrInvalidFrame); match them with errors.Is.
//
// # Handles
//
// Every method of Cache, Channel and Leader is safe for concurrent use. A
// look-up takes no in-flight count (that would be a write to one shared
// cache line per call), so Close only stops the handle: every call after it
// returns ErrHandleClosed (as do nil and zero handles), Views taken before
// stay valid, and in the cgo build the library's reference is dropped once
// the handle is unreachable. Mutations and Views have one owner each and
// free their C handle themselves (a finalizer is the safety net for one
// dropped unreleased: a dropped Mutation counts as abandoned).
//
// # Metrics
//
// Metrics exports wukongim_delivery_tag_lookups_total{result},
// wukongim_delivery_tag_stores_total{result},
// wukongim_delivery_tag_cached{kind} and
// wukongim_delivery_tag_reclaimed_total{kind}, summed over the process's
// caches and leaders, in both builds (see go/prometheus for a collector).
//
// # Keys
//
// A Leader's keys are minted by the core (random, or LeaderOptions.KeyPrefix
// in sequence): the core never calls into the host. A Manager made with
// upstream's Options.NewTagKey mints with the host's generator instead, on
// the goroutine of the build, and its leader side is then the package's Go
// leader in both builds (Manager.Leader is nil).
package deliverytag
