//go:build !cgo || wkcore_purego

// The pure-Go build (CGO_ENABLED=0, or the wkcore_purego tag): Cache and
// Leader are the lock-free Go implementation (lockfree.go). The cgo build's
// are cgo.go, over the Rust core's delivery-tag C ABI.

package deliverytag

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Implementation names the build: "go" here (the lock-free Go
// implementation), "rust" where the Rust core is linked (cgo.go).
const Implementation = "go"

// Cache is the follower's partition cache (see the package docs). Its
// methods are safe for concurrent use.
type Cache struct {
	c      *goCache
	closed atomic.Bool
}

// NewCache creates an empty cache: ErrInvalidConfig for a LocalNodeID of 0.
func NewCache(opts CacheOptions) (*Cache, error) {
	if opts.LocalNodeID == 0 {
		return nil, ErrInvalidConfig
	}
	c := &Cache{c: newGoCache(opts.LocalNodeID, opts.TTL, opts.Now)}
	trackStats(c, &c.c.stats)
	return c, nil
}

func (c *Cache) ok() bool { return c != nil && c.c != nil && !c.closed.Load() }

// LocalNodeID returns the node whose partition the cache keeps (0 for a nil
// cache).
func (c *Cache) LocalNodeID() uint64 {
	if c == nil || c.c == nil {
		return 0
	}
	return c.c.localNodeID
}

// Store is upstream's StoreFollowerPartition: it keeps tag's local
// partition (an empty one if tag has none for this node) unless tag is
// stale against the channel's current tag (see the package docs). It
// returns a copy of the stored body and true, or of the current body and
// false when refused.
func (c *Cache) Store(tag DeliveryTag) (DeliveryTag, bool, error) {
	if !c.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkTagIn(&tag, c.c.localNodeID); err != nil {
		return DeliveryTag{}, false, err
	}
	b, stored := c.c.store(nil, &tag)
	return b.tag(), stored, nil
}

// Lookup is upstream's LookupLocalPartitionRef: the fence of req against
// the channel's current tag. The View holds the current body, zero-copy, on
// a hit and on every miss from the key check on (callers adopt it on
// LookupStaleRequest and LookupTagKeyMismatch); it is nil on
// LookupMissingRef. Release it when done.
func (c *Cache) Lookup(req TagRef) (*View, LookupReason, error) {
	if !c.ok() {
		return nil, "", ErrHandleClosed
	}
	b, reason := c.c.find(&req)
	if reason != LookupHit {
		if err := checkLookup(true, &req); err != nil {
			return nil, "", err
		}
	}
	c.c.stats.lookup(reason)
	return viewOf(b), reason, nil
}

// Check is Lookup without the view: the reason only.
func (c *Cache) Check(req TagRef) (LookupReason, error) {
	if !c.ok() {
		return "", ErrHandleClosed
	}
	_, reason := c.c.find(&req)
	if reason != LookupHit {
		if err := checkLookup(true, &req); err != nil {
			return "", err
		}
	}
	c.c.stats.lookup(reason)
	return reason, nil
}

// LookupTag is upstream's LookupTag for a follower: a copy of the body
// cached under tagKey for channelKey (bodies are kept per channel; a
// follower holds only the current incarnation), its access time refreshed.
func (c *Cache) LookupTag(channelKey, tagKey string) (DeliveryTag, bool, error) {
	if !c.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKeys(channelKey, tagKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := c.c.lookupTag(channelKey, tagKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

// Current returns a copy of the channel's current body.
func (c *Cache) Current(channelKey string) (DeliveryTag, bool, error) {
	if !c.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := c.c.current(channelKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

// CurrentRef is upstream's CurrentRef: a copy of the channel's reference.
func (c *Cache) CurrentRef(channelKey string) (TagRef, bool, error) {
	if !c.ok() {
		return TagRef{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return TagRef{}, false, err
	}
	if b := c.c.current(channelKey); b != nil {
		return b.ref(), true, nil
	}
	return TagRef{}, false, nil
}

// IsSourceStale is upstream's IsSourceStale: true when the channel's tag
// records source.ChannelKey with a lower source version than source's;
// false without a tag or a source.
func (c *Cache) IsSourceStale(channelKey string, source SourceVersion) (bool, error) {
	if !c.ok() {
		return false, ErrHandleClosed
	}
	if err := checkKeys(channelKey, source.ChannelKey); err != nil {
		return false, err
	}
	b := c.c.current(channelKey)
	return b != nil && sourceStale(b, source), nil
}

// Channel returns a handle on channelKey's entry (made if the channel has
// none yet): look-ups and stores that skip the channel map.
func (c *Cache) Channel(channelKey string) (*Channel, error) {
	if !c.ok() {
		return nil, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return nil, err
	}
	return &Channel{cache: c, cell: c.c.cell(channelKey)}, nil
}

// CleanupExpired reclaims the cold bodies and dangling references of up to
// limit channels (at most CleanupLimitMax) at now: one page of a pass that
// the next call continues. Meant for a host timer; with a TTL ≤ 0 it does
// nothing. ErrInvalidArgument for a negative limit.
func (c *Cache) CleanupExpired(now time.Time, limit int) (CleanupPage, error) {
	if !c.ok() {
		return CleanupPage{}, ErrHandleClosed
	}
	if _, _, err := cleanupLimit(limit); err != nil {
		return CleanupPage{}, err
	}
	return c.c.cleanup(unixNanos(now), limit), nil
}

// Len returns how many channels have an entry (a moment's view).
func (c *Cache) Len() (int, error) {
	if !c.ok() {
		return 0, ErrHandleClosed
	}
	return c.c.channels(), nil
}

// Counts returns the cache's counters.
func (c *Cache) Counts() (Counts, error) {
	if !c.ok() {
		return Counts{}, ErrHandleClosed
	}
	return c.c.stats.counts(), nil
}

// Close stops the cache: every call after it returns ErrHandleClosed, and
// so does a second Close. Views taken before stay valid until released.
func (c *Cache) Close() error {
	if c == nil || c.c == nil || !c.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// Channel is a handle on one channel's entry of a Cache: its look-ups and
// stores skip the channel map. Safe for concurrent use.
type Channel struct {
	cache  *Cache
	cell   *cacheCell
	closed atomic.Bool
}

func (h *Channel) ok() bool { return h != nil && h.cell != nil && !h.closed.Load() && h.cache.ok() }

// Key returns the channel key ("" for a nil handle).
func (h *Channel) Key() string {
	if h == nil || h.cell == nil {
		return ""
	}
	return h.cell.channelKey
}

// Lookup is Cache.Lookup on this channel (req.ChannelKey is ignored).
func (h *Channel) Lookup(req TagRef) (*View, LookupReason, error) {
	if !h.ok() {
		return nil, "", ErrHandleClosed
	}
	b, reason := h.cache.c.findCell(h.cell, &req)
	if reason != LookupHit {
		if err := checkLookup(false, &req); err != nil {
			return nil, "", err
		}
	}
	h.cache.c.stats.lookup(reason)
	return viewOf(b), reason, nil
}

// Check is Lookup without the view.
func (h *Channel) Check(req TagRef) (LookupReason, error) {
	if !h.ok() {
		return "", ErrHandleClosed
	}
	_, reason := h.cache.c.findCell(h.cell, &req)
	if reason != LookupHit {
		if err := checkLookup(false, &req); err != nil {
			return "", err
		}
	}
	h.cache.c.stats.lookup(reason)
	return reason, nil
}

// Store is Cache.Store for this channel (tag.ChannelKey is ignored).
func (h *Channel) Store(tag DeliveryTag) (DeliveryTag, bool, error) {
	if !h.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	// The tag's own channel key is checked, as the C ABI does, but not used.
	if err := checkTagIn(&tag, h.cache.c.localNodeID); err != nil {
		return DeliveryTag{}, false, err
	}
	b, stored := h.cache.c.store(h.cell, &tag)
	return b.tag(), stored, nil
}

// Current returns a copy of the channel's current body.
func (h *Channel) Current() (DeliveryTag, bool, error) {
	if !h.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if b := h.cache.c.currentCell(h.cell); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

// Close releases the handle; a second Close returns ErrHandleClosed.
func (h *Channel) Close() error {
	if h == nil || h.cell == nil || !h.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// View is one look-up's hold on a cached body: zero-copy access to its
// UIDs, valid until Release. A View is for one goroutine at a time; it must
// not be used after Release (it is recycled).
type View struct {
	b *body
}

var viewPool = sync.Pool{New: func() any { return new(View) }}

func viewOf(b *body) *View {
	if b == nil {
		return nil
	}
	v := viewPool.Get().(*View)
	v.b = b
	return v
}

// Release lets the body go and recycles the view. Strings read from it stay
// valid in this build; in the cgo build they point into the library's
// memory and must not be used after Release (copy them, or use UIDs).
func (v *View) Release() {
	if v == nil || v.b == nil {
		return
	}
	v.b = nil
	viewPool.Put(v)
}

// Ref returns a copy of the body's reference.
func (v *View) Ref() TagRef {
	if v == nil || v.b == nil {
		return TagRef{}
	}
	return v.b.ref()
}

// Tag returns a deep copy of the body.
func (v *View) Tag() DeliveryTag {
	if v == nil || v.b == nil {
		return DeliveryTag{}
	}
	return v.b.tag()
}

// shared is the body as upstream's LookupLocalPartitionRef returns it:
// sharing the cache's storage (read-only), without an allocation.
func (v *View) shared() DeliveryTag {
	if v == nil {
		return DeliveryTag{}
	}
	return sharedTag(v.b)
}

// TagVersion returns the body's tag version.
func (v *View) TagVersion() uint64 {
	if v == nil || v.b == nil {
		return 0
	}
	return v.b.tagVersion
}

// SubscriberMutationVersion returns the body's subscriber mutation version.
func (v *View) SubscriberMutationVersion() uint64 {
	if v == nil || v.b == nil {
		return 0
	}
	return v.b.smv
}

// Len returns how many UIDs the body holds across its partitions (a
// cache's body has one, the local node's).
func (v *View) Len() int {
	if v == nil || v.b == nil {
		return 0
	}
	return v.b.uidCount
}

// UID returns the i-th UID across the partitions, in order, without a
// copy (valid until Release in the cgo build). It panics if i is out of
// range.
func (v *View) UID(i int) string {
	for _, p := range v.b.partitions {
		if i < len(p.UIDs) {
			return p.UIDs[i]
		}
		i -= len(p.UIDs)
	}
	panic("deliverytag: View.UID index out of range")
}

// UIDs returns a copy of every UID across the partitions, in order.
func (v *View) UIDs() []string {
	if v == nil || v.b == nil {
		return nil
	}
	out := make([]string, 0, v.b.uidCount)
	for _, p := range v.b.partitions {
		out = append(out, p.UIDs...)
	}
	return out
}

// Partitions returns how many partitions the body has.
func (v *View) Partitions() int {
	if v == nil || v.b == nil {
		return 0
	}
	return len(v.b.partitions)
}

// Partition returns the i-th partition, zero-copy. It panics if i is out of
// range.
func (v *View) Partition(i int) PartitionView {
	return PartitionView{p: &v.b.partitions[i]}
}

// PartitionForNode returns nodeID's partition, zero-copy, or an empty one
// for nodeID if the body has none.
func (v *View) PartitionForNode(nodeID uint64) PartitionView {
	if v != nil && v.b != nil {
		for i := range v.b.partitions {
			if v.b.partitions[i].NodeID == nodeID {
				return PartitionView{p: &v.b.partitions[i]}
			}
		}
	}
	return PartitionView{node: nodeID}
}

// PartitionView is one partition of a View, valid while the View is held.
type PartitionView struct {
	p    *NodePartition
	node uint64
}

// NodeID returns the node that delivers to the partition's UIDs.
func (p PartitionView) NodeID() uint64 {
	if p.p == nil {
		return p.node
	}
	return p.p.NodeID
}

// Len returns how many UIDs the partition holds.
func (p PartitionView) Len() int {
	if p.p == nil {
		return 0
	}
	return len(p.p.UIDs)
}

// UID returns the i-th UID without a copy. It panics if i is out of range.
func (p PartitionView) UID(i int) string { return p.p.UIDs[i] }

// UIDs returns a copy of the partition's UIDs.
func (p PartitionView) UIDs() []string {
	if p.p == nil {
		return nil
	}
	return append([]string(nil), p.p.UIDs...)
}

// Leader is the channel leader's side (see the package docs). Its methods
// are safe for concurrent use.
type Leader struct {
	l      *goLeader
	closed atomic.Bool
}

// NewLeader creates an empty leader side: ErrInvalidConfig for a
// LocalNodeID of 0 or a KeyPrefix that is not UTF-8.
func NewLeader(opts LeaderOptions) (*Leader, error) {
	if opts.LocalNodeID == 0 || checkKey(opts.KeyPrefix) != nil {
		return nil, ErrInvalidConfig
	}
	keys := randomTagKey
	if opts.KeyPrefix != "" {
		keys = sequentialKeys(opts.KeyPrefix)
	}
	l := &Leader{l: newGoLeader(opts.LocalNodeID, opts.TTL, opts.Now, keys)}
	trackStats(l, &l.l.stats)
	return l, nil
}

func (l *Leader) ok() bool { return l != nil && l.l != nil && !l.closed.Load() }

// LocalNodeID returns this node (0 for a nil leader).
func (l *Leader) LocalNodeID() uint64 {
	if l == nil || l.l == nil {
		return 0
	}
	return l.l.localNodeID
}

// BuildLeaderTag is upstream's BuildLeaderTag (see the package docs); it
// returns a copy of the tag built.
func (l *Leader) BuildLeaderTag(req BuildRequest) (DeliveryTag, error) {
	if !l.ok() {
		return DeliveryTag{}, ErrHandleClosed
	}
	if err := checkBuildIn(&req); err != nil {
		return DeliveryTag{}, err
	}
	return l.l.build(&req).tag(), nil
}

// BuildEphemeralTag is upstream's BuildEphemeralTag: a body under a fresh
// key, version 1, reachable only by key (LookupTag); the channel's current
// tag is not touched.
func (l *Leader) BuildEphemeralTag(req BuildRequest) (DeliveryTag, error) {
	if !l.ok() {
		return DeliveryTag{}, ErrHandleClosed
	}
	if err := checkBuildIn(&req); err != nil {
		return DeliveryTag{}, err
	}
	return l.l.buildEphemeral(&req).tag(), nil
}

// Lookup is the fence of req against the channel's current tag (the
// leader's reuse check), as Cache.Lookup; the View holds every partition.
func (l *Leader) Lookup(req TagRef) (*View, LookupReason, error) {
	if !l.ok() {
		return nil, "", ErrHandleClosed
	}
	b, reason := l.l.find(&req)
	if reason != LookupHit {
		if err := checkLookup(true, &req); err != nil {
			return nil, "", err
		}
	}
	l.l.stats.lookup(reason)
	return viewOf(b), reason, nil
}

// Check is Lookup without the view.
func (l *Leader) Check(req TagRef) (LookupReason, error) {
	if !l.ok() {
		return "", ErrHandleClosed
	}
	_, reason := l.l.find(&req)
	if reason != LookupHit {
		if err := checkLookup(true, &req); err != nil {
			return "", err
		}
	}
	l.l.stats.lookup(reason)
	return reason, nil
}

// LookupTag is upstream's LookupTag: a copy of the body under tagKey
// (current, ephemeral, or an older incarnation not yet reclaimed), for the
// authority fetch; its access time is refreshed.
func (l *Leader) LookupTag(tagKey string) (DeliveryTag, bool, error) {
	if !l.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKey(tagKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := l.l.lookupTag(tagKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

// lookupTagLike is LookupTag (this build copies nothing out of foreign
// memory, so like is not needed).
func (l *Leader) lookupTagLike(tagKey string, _ *DeliveryTag) (DeliveryTag, bool, bool, error) {
	t, ok, err := l.LookupTag(tagKey)
	return t, ok, false, err
}

// Current returns a copy of the channel's current tag.
func (l *Leader) Current(channelKey string) (DeliveryTag, bool, error) {
	if !l.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := l.l.current(channelKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

// CurrentRef is upstream's CurrentRef.
func (l *Leader) CurrentRef(channelKey string) (TagRef, bool, error) {
	if !l.ok() {
		return TagRef{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return TagRef{}, false, err
	}
	if b := l.l.current(channelKey); b != nil {
		return b.ref(), true, nil
	}
	return TagRef{}, false, nil
}

// IsSourceStale is upstream's IsSourceStale (as Cache.IsSourceStale).
func (l *Leader) IsSourceStale(channelKey string, source SourceVersion) (bool, error) {
	if !l.ok() {
		return false, ErrHandleClosed
	}
	if err := checkKeys(channelKey, source.ChannelKey); err != nil {
		return false, err
	}
	b := l.l.current(channelKey)
	return b != nil && sourceStale(b, source), nil
}

// Usable returns a view of the channel's current tag if a message may use
// it: ErrNotFound without a tag, ErrDirty while a membership change is
// pending or after one failed (until a build), ErrLagging when its
// subscriber mutation version is below authoritativeVersion (the store's).
// Any of the three: rebuild. Release the view when done.
func (l *Leader) Usable(channelKey string, authoritativeVersion uint64) (*View, error) {
	if !l.ok() {
		return nil, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return nil, err
	}
	b, err := l.l.usable(channelKey, authoritativeVersion)
	if err != nil {
		return nil, err
	}
	return viewOf(b), nil
}

// IsDirty reports whether a membership change of the channel is pending, or
// one failed since its last build.
func (l *Leader) IsDirty(channelKey string) (bool, error) {
	if !l.ok() {
		return false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return false, err
	}
	return l.l.isDirty(channelKey), nil
}

// BeginMutation marks the channel dirty, before the host writes the
// membership change to its store; the Mutation collects the change and
// Commit applies it with the store's version (see Mutation).
func (l *Leader) BeginMutation(channelKey string) (*Mutation, error) {
	if !l.ok() {
		return nil, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return nil, err
	}
	m := &Mutation{m: l.l.beginMutation(channelKey)}
	// A Mutation dropped open is a failed store write (as the core's Drop).
	runtime.SetFinalizer(m, func(m *Mutation) {
		if m.m.open {
			m.m.abandon()
		}
	})
	return m, nil
}

// CleanupExpired reclaims up to limit bodies (at most CleanupLimitMax) idle
// past the TTL at now, clearing a channel's current tag when it was the
// body reclaimed. ErrInvalidArgument for a negative limit.
func (l *Leader) CleanupExpired(now time.Time, limit int) (CleanupPage, error) {
	if !l.ok() {
		return CleanupPage{}, ErrHandleClosed
	}
	if _, _, err := cleanupLimit(limit); err != nil {
		return CleanupPage{}, err
	}
	return l.l.cleanup(unixNanos(now), limit), nil
}

// Bodies returns how many bodies are held by key (a moment's view).
func (l *Leader) Bodies() (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.l.bodies(), nil
}

// Counts returns the leader's counters.
func (l *Leader) Counts() (Counts, error) {
	if !l.ok() {
		return Counts{}, ErrHandleClosed
	}
	return l.l.stats.counts(), nil
}

// Close stops the leader side: every call after it returns ErrHandleClosed,
// and so does a second Close.
func (l *Leader) Close() error {
	if l == nil || l.l == nil || !l.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// Mutation is one logical membership change of a channel, open from before
// the host writes its store until Commit with the store's version; chunks
// accumulate (Reset, Add, Remove). Abandon (a failed or partial store
// write) leaves the channel dirty, so its tag is rebuilt before its next
// use; so does a Mutation dropped without either. Not for concurrent use.
type Mutation struct {
	m *goMutation
}

func (m *Mutation) open() bool { return m != nil && m.m != nil && m.m.open }

// Reset clears every partition (reset / remove-all), before this
// mutation's adds.
func (m *Mutation) Reset() error {
	if !m.open() {
		return ErrHandleClosed
	}
	m.m.doReset()
	return nil
}

// Add adds uids to nodeID's partition (the node that owns each UID's
// slot).
func (m *Mutation) Add(nodeID uint64, uids ...string) error {
	if !m.open() {
		return ErrHandleClosed
	}
	if err := checkUIDs(uids); err != nil {
		return err
	}
	m.m.add(nodeID, uids)
	return nil
}

// Remove removes uids from whichever partition holds them.
func (m *Mutation) Remove(uids ...string) error {
	if !m.open() {
		return ErrHandleClosed
	}
	if err := checkUIDs(uids); err != nil {
		return err
	}
	m.m.remove(uids)
	return nil
}

// Commit applies the mutation with the version the store returned: one tag
// version bump however many chunks it had, the key unchanged; it clears
// this mutation's dirty mark. The tag is a copy of the updated (or, for
// MutationAlreadyCurrent, the current) tag. Commit ends the mutation: a
// second call returns ErrHandleClosed.
func (m *Mutation) Commit(storeVersion uint64) (MutationResult, DeliveryTag, error) {
	if !m.open() {
		return 0, DeliveryTag{}, ErrHandleClosed
	}
	res, b, err := m.m.commit(storeVersion)
	runtime.SetFinalizer(m, nil)
	if err != nil || b == nil {
		return res, DeliveryTag{}, err
	}
	return res, b.tag(), nil
}

// Abandon ends the mutation without applying it: the channel stays dirty
// until its next build.
func (m *Mutation) Abandon() error {
	if !m.open() {
		return ErrHandleClosed
	}
	m.m.abandon()
	runtime.SetFinalizer(m, nil)
	return nil
}
