package deliverytag

// The leader side of a Manager made with Options.NewTagKey: the package's Go
// leader (lockfree.go) minting keys with the host's generator, in both builds.

import (
	"sync/atomic"
	"time"
)

// managerLeader is what a Manager uses of its leader side: a *Leader, or a
// hostKeyLeader when the host mints the keys.
type managerLeader interface {
	BuildLeaderTag(BuildRequest) (DeliveryTag, error)
	BuildEphemeralTag(BuildRequest) (DeliveryTag, error)
	Current(string) (DeliveryTag, bool, error)
	LookupTag(string) (DeliveryTag, bool, error)
	CurrentRef(string) (TagRef, bool, error)
	IsSourceStale(string, SourceVersion) (bool, error)
	CleanupExpired(time.Time, int) (CleanupPage, error)
	Close() error
	// lookupShared is the fence of req with the current body as upstream's
	// LookupLocalPartitionRef returns it (shared, read-only).
	lookupShared(req TagRef) (DeliveryTag, LookupReason, error)
	// check is the fence's reason alone (Leader.Check).
	check(req TagRef) (LookupReason, error)
	// lookupTagLike is LookupTag, answered from like when like is a Go copy
	// of the body found (nil: none); usedLike says it was.
	lookupTagLike(tagKey string, like *DeliveryTag) (tag DeliveryTag, ok, usedLike bool, err error)
}

func (l *Leader) check(req TagRef) (LookupReason, error) { return l.Check(req) }

// lookupShared is Lookup's answer as upstream's LookupLocalPartitionRef
// returns it.
func (l *Leader) lookupShared(req TagRef) (DeliveryTag, LookupReason, error) {
	v, reason, err := l.Lookup(req)
	if err != nil {
		return DeliveryTag{}, "", err
	}
	tag := v.shared()
	v.Release()
	return tag, reason, nil
}

// hostKeyLeader is the Go leader with the host's key generator. The
// generator runs on the goroutine that called the build, never elsewhere.
type hostKeyLeader struct {
	l      *goLeader
	closed atomic.Bool
}

// hostKeys wraps the host's generator: a key that is empty, longer than
// KeyMax or not UTF-8 (which no follower cache could store) is replaced by
// a random one.
func hostKeys(gen func() string) func() string {
	return func() string {
		if k := gen(); k != "" && checkKey(k) == nil {
			return k
		}
		return randomTagKey()
	}
}

func newHostKeyLeader(localNodeID uint64, ttl time.Duration, now func() time.Time, gen func() string) *hostKeyLeader {
	return &hostKeyLeader{l: newGoLeader(localNodeID, ttl, now, hostKeys(gen))}
}

func (h *hostKeyLeader) ok() bool { return !h.closed.Load() }

func (h *hostKeyLeader) BuildLeaderTag(req BuildRequest) (DeliveryTag, error) {
	if !h.ok() {
		return DeliveryTag{}, ErrHandleClosed
	}
	if err := checkBuildIn(&req); err != nil {
		return DeliveryTag{}, err
	}
	return h.l.build(&req).tag(), nil
}

func (h *hostKeyLeader) BuildEphemeralTag(req BuildRequest) (DeliveryTag, error) {
	if !h.ok() {
		return DeliveryTag{}, ErrHandleClosed
	}
	if err := checkBuildIn(&req); err != nil {
		return DeliveryTag{}, err
	}
	return h.l.buildEphemeral(&req).tag(), nil
}

func (h *hostKeyLeader) Current(channelKey string) (DeliveryTag, bool, error) {
	if !h.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := h.l.current(channelKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

func (h *hostKeyLeader) LookupTag(tagKey string) (DeliveryTag, bool, error) {
	if !h.ok() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	if err := checkKey(tagKey); err != nil {
		return DeliveryTag{}, false, err
	}
	if b := h.l.lookupTag(tagKey); b != nil {
		return b.tag(), true, nil
	}
	return DeliveryTag{}, false, nil
}

func (h *hostKeyLeader) CurrentRef(channelKey string) (TagRef, bool, error) {
	if !h.ok() {
		return TagRef{}, false, ErrHandleClosed
	}
	if err := checkKey(channelKey); err != nil {
		return TagRef{}, false, err
	}
	if b := h.l.current(channelKey); b != nil {
		return b.ref(), true, nil
	}
	return TagRef{}, false, nil
}

func (h *hostKeyLeader) IsSourceStale(channelKey string, source SourceVersion) (bool, error) {
	if !h.ok() {
		return false, ErrHandleClosed
	}
	if err := checkKeys(channelKey, source.ChannelKey); err != nil {
		return false, err
	}
	b := h.l.current(channelKey)
	return b != nil && sourceStale(b, source), nil
}

func (h *hostKeyLeader) CleanupExpired(now time.Time, limit int) (CleanupPage, error) {
	if !h.ok() {
		return CleanupPage{}, ErrHandleClosed
	}
	if _, _, err := cleanupLimit(limit); err != nil {
		return CleanupPage{}, err
	}
	return h.l.cleanup(unixNanos(now), limit), nil
}

func (h *hostKeyLeader) Close() error {
	if !h.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

func (h *hostKeyLeader) lookupTagLike(tagKey string, _ *DeliveryTag) (DeliveryTag, bool, bool, error) {
	t, ok, err := h.LookupTag(tagKey)
	return t, ok, false, err
}

func (h *hostKeyLeader) check(req TagRef) (LookupReason, error) {
	_, reason, err := h.lookupShared(req)
	return reason, err
}

func (h *hostKeyLeader) lookupShared(req TagRef) (DeliveryTag, LookupReason, error) {
	if !h.ok() {
		return DeliveryTag{}, "", ErrHandleClosed
	}
	b, reason := h.l.find(&req)
	if reason != LookupHit {
		if err := checkLookup(true, &req); err != nil {
			return DeliveryTag{}, "", err
		}
	}
	h.l.stats.lookup(reason)
	return sharedTag(b), reason, nil
}

// sharedTag is b as upstream's LookupLocalPartitionRef returns it, sharing
// b's storage (read-only), without an allocation.
func sharedTag(b *body) DeliveryTag {
	if b == nil {
		return DeliveryTag{}
	}
	return DeliveryTag{Key: b.key, ChannelKey: b.channelKey, TagVersion: b.tagVersion, SubscriberMutationVersion: b.smv,
		SourceChannelKey: b.sourceChannelKey, SourceSubscriberMutationVersion: b.sourceSMV, Topology: b.topology,
		Partitions: b.partitions, CreatedAt: timeOf(b.createdAt), LastAccess: timeOf(b.lastAccess.Load())}
}
