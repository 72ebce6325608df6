package deliverytag

import "time"

// LookupReason explains why a look-up can or cannot reuse the cached tag:
// upstream's type and strings (also the metric label of
// wukongim_delivery_tag_lookups_total).
type LookupReason string

// The look-up reasons, in the fence's order (upstream's constants).
const (
	// LookupHit: the request matches the current tag.
	LookupHit LookupReason = "hit"
	// LookupMissingRef: no tag is current for the channel.
	LookupMissingRef LookupReason = "missing_ref"
	// LookupMissingTag: the current reference has no body. Kept for
	// upstream parity; a reference and its body are published together
	// here, so no look-up reports it.
	LookupMissingTag LookupReason = "missing_tag"
	// LookupTagKeyMismatch: the request names another incarnation.
	LookupTagKeyMismatch LookupReason = "tag_key_mismatch"
	// LookupStaleRequest: the request is older than the current tag.
	LookupStaleRequest LookupReason = "stale_request"
	// LookupNewerRequest: the request is newer than the current tag (fetch
	// it).
	LookupNewerRequest LookupReason = "newer_request"
	// LookupTopologyMismatch: the request was built against another
	// topology (fetch again).
	LookupTopologyMismatch LookupReason = "topology_mismatch"
)

// lookupReasons are the reasons in the C ABI's code order (WK_TAG_LOOKUP_*).
var lookupReasons = [...]LookupReason{LookupHit, LookupMissingRef, LookupMissingTag, LookupTagKeyMismatch,
	LookupStaleRequest, LookupNewerRequest, LookupTopologyMismatch}

// SlotAuthorityRef records the authoritative owner and versions of one hash
// slot when a tag was built. Its layout is the C ABI's wk_tag_slot_ref
// (a slice of them crosses to C as it is).
type SlotAuthorityRef struct {
	SlotID         uint32
	LeaderNodeID   uint64
	ConfigEpoch    uint64
	BalanceVersion uint64
}

// PartitionTopologyVersion is the full partition authority shape a tag was
// built against.
type PartitionTopologyVersion struct {
	HashSlotTableVersion uint64
	SlotAuthorityRefs    []SlotAuthorityRef
}

// Equal is upstream's: the same table version and the same refs, element by
// element, in order (never reduced to a maximum).
func (v PartitionTopologyVersion) Equal(other PartitionTopologyVersion) bool {
	if v.HashSlotTableVersion != other.HashSlotTableVersion || len(v.SlotAuthorityRefs) != len(other.SlotAuthorityRefs) {
		return false
	}
	for i := range v.SlotAuthorityRefs {
		if v.SlotAuthorityRefs[i] != other.SlotAuthorityRefs[i] {
			return false
		}
	}
	return true
}

// Clone returns a deep copy.
func (v PartitionTopologyVersion) Clone() PartitionTopologyVersion {
	out := v
	out.SlotAuthorityRefs = append([]SlotAuthorityRef(nil), v.SlotAuthorityRefs...)
	return out
}

// NodePartition is the subscriber UIDs one node delivers to.
type NodePartition struct {
	NodeID uint64
	UIDs   []string
}

// Clone returns a deep copy.
func (p NodePartition) Clone() NodePartition {
	out := p
	out.UIDs = append([]string(nil), p.UIDs...)
	return out
}

// DeliveryTag is a node-local subscriber snapshot for one tag incarnation.
// Values returned by this package are copies the caller owns (a View is the
// zero-copy access).
type DeliveryTag struct {
	Key                             string
	ChannelKey                      string
	TagVersion                      uint64
	SubscriberMutationVersion       uint64
	SourceChannelKey                string
	SourceSubscriberMutationVersion uint64
	Topology                        PartitionTopologyVersion
	Partitions                      []NodePartition
	CreatedAt                       time.Time
	// LastAccess is the latest exact access: the store or build that made
	// the body, and look-ups by key. Hits are tracked per cleanup interval
	// instead (see the package docs), so they do not move it.
	LastAccess time.Time
}

// PartitionForNode returns a copy of nodeID's partition, or an empty one
// for nodeID if the tag has none (upstream's).
func (t DeliveryTag) PartitionForNode(nodeID uint64) NodePartition {
	for _, p := range t.Partitions {
		if p.NodeID == nodeID {
			return p.Clone()
		}
	}
	return NodePartition{NodeID: nodeID}
}

// Ref returns the channel-level reference this tag makes current.
func (t DeliveryTag) Ref() TagRef {
	return TagRef{
		ChannelKey:                      t.ChannelKey,
		TagKey:                          t.Key,
		TagVersion:                      t.TagVersion,
		SubscriberMutationVersion:       t.SubscriberMutationVersion,
		SourceChannelKey:                t.SourceChannelKey,
		SourceSubscriberMutationVersion: t.SourceSubscriberMutationVersion,
		Topology:                        t.Topology.Clone(),
	}
}

// Clone returns a deep copy.
func (t DeliveryTag) Clone() DeliveryTag {
	out := t
	out.Topology = t.Topology.Clone()
	out.Partitions = clonePartitions(t.Partitions)
	return out
}

// TagRef is the channel-level fence a look-up is checked against: which
// incarnation and version of a tag the delivery was planned with.
type TagRef struct {
	ChannelKey string
	TagKey     string
	TagVersion uint64
	// SubscriberMutationVersion: 0 is not checked.
	SubscriberMutationVersion uint64
	// SourceChannelKey: empty is not checked.
	SourceChannelKey string
	// SourceSubscriberMutationVersion: 0 is not checked.
	SourceSubscriberMutationVersion uint64
	Topology                        PartitionTopologyVersion
}

// SourceVersion is the current durable subscriber version of a derived
// channel's source.
type SourceVersion struct {
	ChannelKey                string
	SubscriberMutationVersion uint64
}

// BuildRequest is the authoritative material a leader tag is built from.
type BuildRequest struct {
	ChannelKey string
	// SubscriberMutationVersion is the store's version the subscribers were
	// read at (a tag never invents one).
	SubscriberMutationVersion       uint64
	SourceChannelKey                string
	SourceSubscriberMutationVersion uint64
	// Topology must come from one consistent snapshot of the control plane.
	Topology   PartitionTopologyVersion
	Partitions []NodePartition
	// MintFreshKey: a new leader incarnation (a fresh key and version 1,
	// even if the channel has a tag).
	MintFreshKey bool
}

// CleanupPage is what one CleanupExpired call did.
type CleanupPage struct {
	// Visited is how many channels (a Cache) or bodies (a Leader) the page
	// looked at.
	Visited int
	// Reclaimed is how many bodies it removed (upstream's return value).
	Reclaimed int
	// Unlinked is how many channel references it removed: those of
	// reclaimed bodies and, in a Cache, channels that never held one.
	Unlinked int
	// Wrapped: the page finished a pass over every entry.
	Wrapped bool
}

// CleanupLimitMax is the largest page CleanupExpired visits; a larger limit
// is clipped to it.
const CleanupLimitMax = 4096

// MutationResult is what a committed membership mutation did.
type MutationResult uint8

const (
	// MutationApplied: the tag was updated with the store's version (same
	// key, version + 1).
	MutationApplied MutationResult = iota + 1
	// MutationNoTag: the channel has no tag; nothing was recorded (the next
	// message builds one).
	MutationNoTag
	// MutationAlreadyCurrent: the tag already carries this store version or
	// a later one; unchanged.
	MutationAlreadyCurrent
)

// String returns the result's name.
func (r MutationResult) String() string {
	switch r {
	case MutationApplied:
		return "applied"
	case MutationNoTag:
		return "no_tag"
	case MutationAlreadyCurrent:
		return "already_current"
	}
	return "unknown"
}

// Counts are one Cache's or Leader's counters: look-ups by reason (in the
// order of the LookupReason constants), stores (stored, stale), what it
// holds, and what its cleanups reclaimed.
type Counts struct {
	Lookups         [7]uint64
	Stored          uint64
	Stale           uint64
	Tags            uint64
	UIDs            uint64
	ReclaimedBodies uint64
	ReclaimedRefs   uint64
}

// LookupsOf returns the look-ups that ended with reason.
func (c Counts) LookupsOf(reason LookupReason) uint64 {
	for i, r := range lookupReasons {
		if r == reason {
			return c.Lookups[i]
		}
	}
	return 0
}

func clonePartitions(in []NodePartition) []NodePartition {
	if len(in) == 0 {
		return nil
	}
	out := make([]NodePartition, len(in))
	for i, p := range in {
		out[i] = p.Clone()
	}
	return out
}

// unixNanos is t as unix nanoseconds, 0 for the zero time (the wire's and the
// core's convention).
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// timeOf is the inverse of unixNanos.
func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// ttlNanos is a TTL as the core takes it: ≤ 0 is 0, never reclaimed.
func ttlNanos(ttl time.Duration) uint64 {
	if ttl <= 0 {
		return 0
	}
	return uint64(ttl)
}

// uidsFit reports whether a partition's UID bytes fit the core's compact
// list (at most 2^32-1 bytes in all).
func uidsFit(uids []string) bool {
	var n uint64
	for _, u := range uids {
		n += uint64(len(u))
	}
	return n <= 1<<32-1
}

// CacheOptions configures a Cache.
type CacheOptions struct {
	// LocalNodeID is the node the cache serves (non-zero): the only
	// partition it keeps.
	LocalNodeID uint64
	// TTL is how long a body may stay idle before CleanupExpired reclaims
	// it (≤ 0: never, as upstream's). Production: one minute.
	TTL time.Duration
	// Now stamps creation and access times (nil: time.Now). In the cgo
	// build a cache made with Now runs the core on a manual clock that
	// follows it (tests).
	Now func() time.Time
}

// LeaderOptions configures a Leader.
type LeaderOptions struct {
	// LocalNodeID is this node (non-zero).
	LocalNodeID uint64
	// TTL is how long a body may stay idle before CleanupExpired reclaims
	// it (≤ 0: never).
	TTL time.Duration
	// Now stamps creation and access times (nil: time.Now); as
	// CacheOptions.Now.
	Now func() time.Time
	// KeyPrefix: empty gives random tag keys (16 random bytes as 32
	// lowercase hex characters, upstream's); otherwise keys are
	// <KeyPrefix>-1, <KeyPrefix>-2, … (tests, as upstream's
	// newSequenceKeyGen). It must be UTF-8.
	KeyPrefix string
}
