package deliverytag

// Manager: upstream's deliverytag.Manager, method for method, over one
// Leader and one Cache, so that a WuKongIM call site swaps by import path.

import (
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Manager: upstream's Options, and KeyPrefix.
type Options struct {
	LocalNodeID uint64
	TTL         time.Duration
	// Now stamps creation and access times (nil: time.Now).
	Now func() time.Time
	// NewTagKey is upstream's key generator: when set, it mints every fresh
	// tag key (KeyPrefix is then ignored), called on the goroutine that
	// called the build (BuildLeaderTag, BuildEphemeralTag), never on
	// another. The leader side is then the package's Go leader in both
	// builds (the core mints keys itself and never calls into the host),
	// so Leader() is nil and its counts are not in deliverytag.Metrics. A key that is
	// empty, longer than KeyMax or not UTF-8 is replaced by a random one.
	NewTagKey func() string
	// KeyPrefix, without NewTagKey: see LeaderOptions.KeyPrefix (empty:
	// random keys, upstream's default; "p": p-1, p-2, …, what upstream's
	// tests' sequence generator makes). It must be UTF-8 of at most KeyMax
	// bytes.
	KeyPrefix string
}

// Manager is upstream's node-local delivery tag manager: one Leader (what
// BuildLeaderTag and BuildEphemeralTag make) and one Cache (what
// StoreFollowerPartition stores). Each channel's current tag is the one its
// latest build or store made, as upstream's single channel map has it;
// look-ups, CurrentRef and IsSourceStale read that side, take no lock and
// write no shared memory per hit. Every method is safe for concurrent use,
// and, as upstream's, a nil *Manager answers zero values (IsSourceStale
// true, look-ups LookupMissingRef).
//
// Beyond upstream: CleanupExpired reclaims by the cleanup ticks (a body hit
// since the previous cleanup is kept one more interval; see the package
// docs), and must be called from a timer (upstream configures a TTL but
// never calls it). Differences from upstream's single map, in corners:
// LookupTag finds a follower body by its key only while it is its channel's
// current one (a follower keeps only the current incarnation); a store
// after a build of the same channel on this node is judged against the
// build's tag and against the cache's own last entry.
type Manager struct {
	leader managerLeader
	cache  *Cache
	now    func() time.Time
	// sides records, per channel, which side wrote its current tag last,
	// and orders the writes of one channel.
	sides sync.Map // string → *managerSide
	// keys maps the tag key of a stored follower body to its channel, for
	// LookupTag by key.
	keys sync.Map // string → string
	// built maps the tag key of a kept leader copy (managerSide.built) to
	// its channel's entry, for LookupTag by key.
	built sync.Map // string → *managerSide
	// cleaning serializes CleanupExpired.
	cleaning sync.Mutex
}

const (
	sideNone uint32 = iota
	sideLeader
	sideCache
)

// managerSide is one channel's entry: which side wrote its current tag
// last (read without the lock), and the lock its writes take. A cleanup
// unlinks an entry whose channel has no tag left, marking it dead first
// under the lock, so a writer that held the old entry retries on a new one.
type managerSide struct {
	mu    sync.Mutex
	dead  bool
	which atomic.Uint32
	// built holds the Go copy of the channel's current leader body, kept at
	// its first hit, which later hits return without copying the body again.
	// Every build and store replaces it with a fresh empty record, before and
	// after the write: a reader that loaded a record checks, after reading
	// the leader, that it is still the one (else a write came between), and
	// keeps a copy only by CompareAndSwap on the record it loaded.
	built atomic.Pointer[keptTag]
}

// keptTag is one record of managerSide.built; tag nil: no copy kept.
type keptTag struct{ tag *DeliveryTag }

// invalidate starts a new record (see managerSide.built). Ordering: the
// store (sequentially consistent) before a build pairs with a reader's
// second load after its leader read: a reader whose leader read saw the new
// body sees the new record.
func (s *managerSide) invalidate() { s.built.Store(&keptTag{}) }

// kept returns the record and its copy (nil when none).
func (s *managerSide) kept() (*keptTag, *DeliveryTag) {
	k := s.built.Load()
	if k == nil {
		return nil, nil
	}
	return k, k.tag
}

// NewManager creates an empty manager; nil (upstream's nil Manager) when
// the options are refused (a LocalNodeID of 0, a KeyPrefix that is not
// UTF-8).
func NewManager(options Options) *Manager {
	now := options.Now
	if now == nil {
		now = time.Now
	}
	var leader managerLeader
	if options.NewTagKey != nil {
		if options.LocalNodeID == 0 {
			return nil
		}
		leader = newHostKeyLeader(options.LocalNodeID, options.TTL, now, options.NewTagKey)
	} else {
		l, err := NewLeader(LeaderOptions{LocalNodeID: options.LocalNodeID, TTL: options.TTL, Now: now,
			KeyPrefix: options.KeyPrefix})
		if err != nil {
			return nil
		}
		leader = l
	}
	cache, err := NewCache(CacheOptions{LocalNodeID: options.LocalNodeID, TTL: options.TTL, Now: now})
	if err != nil {
		return nil
	}
	return &Manager{leader: leader, cache: cache, now: now}
}

// Leader returns the manager's leader side (nil for a nil manager and for
// one made with NewTagKey).
func (m *Manager) Leader() *Leader {
	if m == nil {
		return nil
	}
	l, _ := m.leader.(*Leader)
	return l
}

// Cache returns the manager's follower cache (nil for a nil manager).
func (m *Manager) Cache() *Cache {
	if m == nil {
		return nil
	}
	return m.cache
}

// Close closes both sides.
func (m *Manager) Close() error {
	if m == nil {
		return ErrHandleClosed
	}
	err1, err2 := m.leader.Close(), m.cache.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// lockSide returns the channel's live entry, locked.
func (m *Manager) lockSide(channelKey string) *managerSide {
	for {
		v, ok := m.sides.Load(channelKey)
		if !ok {
			v, _ = m.sides.LoadOrStore(channelKey, &managerSide{})
		}
		s := v.(*managerSide)
		s.mu.Lock()
		if !s.dead {
			return s
		}
		s.mu.Unlock()
	}
}

func (m *Manager) which(channelKey string) uint32 {
	if v, ok := m.sides.Load(channelKey); ok {
		return v.(*managerSide).which.Load()
	}
	return sideNone
}

// BuildLeaderTag is upstream's: the channel's tag built on the leader side
// (see Leader.BuildLeaderTag); false only when the request is refused.
func (m *Manager) BuildLeaderTag(request BuildRequest) (DeliveryTag, bool) {
	if m == nil {
		return DeliveryTag{}, false
	}
	s := m.lockSide(request.ChannelKey)
	defer s.mu.Unlock()
	s.invalidate()
	tag, err := m.leader.BuildLeaderTag(request)
	s.invalidate() // the next hit keeps a copy of this build
	if err != nil {
		return DeliveryTag{}, false
	}
	s.which.Store(sideLeader)
	return tag, true
}

// BuildEphemeralTag is upstream's: a one-message body under a fresh key,
// reachable only by LookupTag.
func (m *Manager) BuildEphemeralTag(request BuildRequest) (DeliveryTag, bool) {
	if m == nil {
		return DeliveryTag{}, false
	}
	tag, err := m.leader.BuildEphemeralTag(request)
	return tag, err == nil
}

// StoreFollowerPartition is upstream's: this node's partition of tag
// stored unless tag is stale against the channel's current tag, whose copy
// is returned with false then.
func (m *Manager) StoreFollowerPartition(tag DeliveryTag) (DeliveryTag, bool) {
	if m == nil {
		return DeliveryTag{}, false
	}
	s := m.lockSide(tag.ChannelKey)
	defer s.mu.Unlock()
	if s.which.Load() == sideLeader {
		if cur, ok, err := m.leader.Current(tag.ChannelKey); err == nil && ok && staleIncoming(&cur, &tag) {
			return cur, false
		}
	}
	stored, ok, err := m.cache.Store(tag)
	if err != nil {
		return DeliveryTag{}, false
	}
	if ok {
		s.invalidate()
		s.which.Store(sideCache)
		m.keys.Store(stored.Key, stored.ChannelKey)
	}
	return stored, ok
}

// staleIncoming is upstream's stale rule on two tags.
func staleIncoming(cur, in *DeliveryTag) bool {
	return in.SubscriberMutationVersion < cur.SubscriberMutationVersion ||
		(in.SourceChannelKey == cur.SourceChannelKey &&
			in.SourceSubscriberMutationVersion < cur.SourceSubscriberMutationVersion) ||
		(cur.Key == in.Key && in.TagVersion < cur.TagVersion)
}

// LookupLocalPartitionRef is upstream's: the fence of request against the
// channel's current tag; the tag is the current body on a hit and on every
// miss from the key check on. It shares the cache's storage and must be
// treated as read-only; in the pure-Go build it is returned without a copy
// or an allocation, in the cgo build it is a copy (Cache.Lookup is the
// zero-copy form there).
func (m *Manager) LookupLocalPartitionRef(request TagRef) (DeliveryTag, bool, LookupReason) {
	if m == nil {
		return DeliveryTag{}, false, LookupMissingRef
	}
	var tag DeliveryTag
	var reason LookupReason
	var err error
	v, _ := m.sides.Load(request.ChannelKey)
	side, _ := v.(*managerSide)
	which := sideNone
	if side != nil {
		which = side.which.Load()
	}
	switch which {
	case sideLeader:
		// A hit on the kept copy's body returns the copy (the fence runs in
		// the leader, which marks the hit): a hit's key and versions are the
		// copy's, and only a build makes a body of the same key and version
		// (a mutation bumps the version); a build meanwhile replaced the
		// record, which the second load sees.
		k, t := side.kept()
		if t != nil && t.Key == request.TagKey && t.TagVersion == request.TagVersion &&
			t.SubscriberMutationVersion == request.SubscriberMutationVersion {
			if r, err := m.leader.check(request); err == nil && r == LookupHit && side.built.Load() == k {
				out := *t
				out.LastAccess = m.now()
				return out, true, LookupHit
			}
		}
		k = side.built.Load()
		tag, reason, err = m.leader.lookupShared(request)
		if err == nil && reason == LookupHit && (k == nil || k.tag == nil) {
			kept := tag // the Manager's own copy, handed out read-only
			if side.built.CompareAndSwap(k, &keptTag{tag: &kept}) {
				m.built.Store(kept.Key, side)
			}
		}
	case sideCache:
		var v *View
		v, reason, err = m.cache.Lookup(request)
		if err == nil {
			tag = v.shared()
			v.Release()
		}
	default:
		return DeliveryTag{}, false, LookupMissingRef
	}
	if err != nil {
		return DeliveryTag{}, false, LookupMissingRef
	}
	return tag, reason == LookupHit, reason
}

// LookupLocalPartition is LookupLocalPartitionRef with a copy of the body.
func (m *Manager) LookupLocalPartition(request TagRef) (DeliveryTag, bool, LookupReason) {
	tag, hit, reason := m.LookupLocalPartitionRef(request)
	return tag.Clone(), hit, reason
}

// LookupTag is upstream's: a copy of the body under tagKey (a build, an
// ephemeral build, or a stored follower body while it is current), its
// access time refreshed.
func (m *Manager) LookupTag(tagKey string) (DeliveryTag, bool) {
	if m == nil {
		return DeliveryTag{}, false
	}
	channel, stored := m.keys.Load(tagKey)
	fromCache := func() (DeliveryTag, bool) {
		if !stored {
			return DeliveryTag{}, false
		}
		tag, ok, err := m.cache.LookupTag(channel.(string), tagKey)
		return tag, ok && err == nil
	}
	if stored && m.which(channel.(string)) == sideCache {
		if tag, ok := fromCache(); ok {
			return tag, true
		}
	}
	var side *managerSide
	var k *keptTag
	var like *DeliveryTag
	if v, ok := m.built.Load(tagKey); ok {
		side = v.(*managerSide)
		k, like = side.kept()
	}
	tag, ok, usedLike, err := m.leader.lookupTagLike(tagKey, like)
	if usedLike && side.built.Load() != k {
		// A build replaced the copy while the leader was read: read again.
		tag, ok, err = m.leader.LookupTag(tagKey)
	}
	if err == nil && ok {
		return tag, true
	}
	return fromCache()
}

// CurrentRef is upstream's: a copy of the channel's current reference.
func (m *Manager) CurrentRef(channelKey string) (TagRef, bool) {
	if m == nil {
		return TagRef{}, false
	}
	var ref TagRef
	var ok bool
	var err error
	switch m.which(channelKey) {
	case sideLeader:
		ref, ok, err = m.leader.CurrentRef(channelKey)
	case sideCache:
		ref, ok, err = m.cache.CurrentRef(channelKey)
	}
	return ref, ok && err == nil
}

// IsSourceStale is upstream's: whether the channel's derived tag lags its
// source's version (true for a nil manager).
func (m *Manager) IsSourceStale(channelKey string, source SourceVersion) bool {
	if m == nil {
		return true
	}
	var stale bool
	switch m.which(channelKey) {
	case sideLeader:
		stale, _ = m.leader.IsSourceStale(channelKey, source)
	case sideCache:
		stale, _ = m.cache.IsSourceStale(channelKey, source)
	}
	return stale
}

// CleanupExpired is upstream's: it removes the bodies idle past the TTL
// (one full pass over both sides, now by Now) and the channel references
// left without one, and returns how many bodies it removed.
func (m *Manager) CleanupExpired() int {
	if m == nil {
		return 0
	}
	m.cleaning.Lock()
	defer m.cleaning.Unlock()
	now := m.now()
	removed := 0
	for _, clean := range []func(time.Time, int) (CleanupPage, error){m.leader.CleanupExpired, m.cache.CleanupExpired} {
		for {
			page, err := clean(now, CleanupLimitMax)
			removed += page.Reclaimed
			if err != nil || page.Wrapped || page.Visited == 0 {
				break
			}
		}
	}
	// Forget the keys and sides of what went.
	m.keys.Range(func(k, ch any) bool {
		if cur, ok, err := m.cache.CurrentRef(ch.(string)); err == nil && (!ok || cur.TagKey != k.(string)) {
			m.keys.CompareAndDelete(k, ch)
		}
		return true
	})
	m.built.Range(func(k, v any) bool {
		if _, t := v.(*managerSide).kept(); t == nil || t.Key != k.(string) {
			m.built.CompareAndDelete(k, v)
		}
		return true
	})
	m.sides.Range(func(ch, v any) bool {
		s := v.(*managerSide)
		s.mu.Lock()
		var ok bool
		switch s.which.Load() {
		case sideLeader:
			_, ok, _ = m.leader.CurrentRef(ch.(string))
		case sideCache:
			_, ok, _ = m.cache.CurrentRef(ch.(string))
		}
		if !ok {
			s.dead = true
			s.invalidate()
			s.which.Store(sideNone)
			m.sides.CompareAndDelete(ch, s)
		}
		s.mu.Unlock()
		return true
	})
	return removed
}
