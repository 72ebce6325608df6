package deliverytag

// A faithful port of upstream's manager (internal/runtime/deliverytag:
// manager.go, cache.go): one sync.RWMutex over two maps of value copies
// (tags by key, channel references by channel); every look-up, the hit path
// included, takes the exclusive lock because a hit writes LastAccess back
// into the map. Used only as the benchmark baseline ("upstream") and by
// TestUpstreamPortMatchesUpstreamTests, which runs upstream's tests on it.

import (
	"sync"
	"time"
)

type upTagCache struct {
	tags       map[string]DeliveryTag
	channelRef map[string]TagRef
}

func (c *upTagCache) put(tag DeliveryTag) {
	c.tags[tag.Key] = tag.Clone()
	c.channelRef[tag.ChannelKey] = tag.Ref()
}

func (c *upTagCache) getRef(channelKey string) (TagRef, bool) {
	ref, ok := c.channelRef[channelKey]
	if !ok {
		return TagRef{}, false
	}
	out := ref
	out.Topology = ref.Topology.Clone()
	return out, true
}

func (c *upTagCache) cleanupExpired(now time.Time, ttl time.Duration) int {
	if ttl <= 0 {
		return 0
	}
	removed := 0
	for key, tag := range c.tags {
		if now.Sub(tag.LastAccess) <= ttl {
			continue
		}
		delete(c.tags, key)
		removed++
	}
	for channelKey, ref := range c.channelRef {
		if _, ok := c.tags[ref.TagKey]; !ok {
			delete(c.channelRef, channelKey)
		}
	}
	return removed
}

type upManager struct {
	mu          sync.RWMutex
	localNodeID uint64
	ttl         time.Duration
	now         func() time.Time
	newTagKey   func() string
	cache       upTagCache
}

func newUpManager(localNodeID uint64, ttl time.Duration, now func() time.Time, newTagKey func() string) *upManager {
	if now == nil {
		now = time.Now
	}
	if newTagKey == nil {
		newTagKey = randomTagKey
	}
	return &upManager{localNodeID: localNodeID, ttl: ttl, now: now, newTagKey: newTagKey,
		cache: upTagCache{tags: map[string]DeliveryTag{}, channelRef: map[string]TagRef{}}}
}

func (m *upManager) BuildLeaderTag(request BuildRequest) (DeliveryTag, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	ref, hasRef := m.cache.channelRef[request.ChannelKey]
	key := ""
	version := uint64(1)
	if hasRef && !request.MintFreshKey {
		key = ref.TagKey
		version = ref.TagVersion
		if request.SubscriberMutationVersion != ref.SubscriberMutationVersion ||
			request.SourceChannelKey != ref.SourceChannelKey ||
			request.SourceSubscriberMutationVersion != ref.SourceSubscriberMutationVersion ||
			!request.Topology.Equal(ref.Topology) {
			version++
		}
	}
	if key == "" {
		key = m.newTagKey()
	}
	tag := DeliveryTag{Key: key, ChannelKey: request.ChannelKey, TagVersion: version,
		SubscriberMutationVersion: request.SubscriberMutationVersion, SourceChannelKey: request.SourceChannelKey,
		SourceSubscriberMutationVersion: request.SourceSubscriberMutationVersion, Topology: request.Topology.Clone(),
		Partitions: clonePartitions(request.Partitions), CreatedAt: now, LastAccess: now}
	m.cache.put(tag)
	return tag.Clone(), true
}

func (m *upManager) BuildEphemeralTag(request BuildRequest) (DeliveryTag, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	tag := DeliveryTag{Key: m.newTagKey(), ChannelKey: request.ChannelKey, TagVersion: 1,
		SubscriberMutationVersion: request.SubscriberMutationVersion, SourceChannelKey: request.SourceChannelKey,
		SourceSubscriberMutationVersion: request.SourceSubscriberMutationVersion, Topology: request.Topology.Clone(),
		Partitions: clonePartitions(request.Partitions), CreatedAt: now, LastAccess: now}
	m.cache.tags[tag.Key] = tag.Clone()
	return tag.Clone(), true
}

func (m *upManager) StoreFollowerPartition(tag DeliveryTag) (DeliveryTag, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if current, ok := m.cache.channelRef[tag.ChannelKey]; ok {
		if tag.SubscriberMutationVersion < current.SubscriberMutationVersion ||
			(tag.SourceChannelKey == current.SourceChannelKey &&
				tag.SourceSubscriberMutationVersion < current.SourceSubscriberMutationVersion) ||
			(current.TagKey == tag.Key && tag.TagVersion < current.TagVersion) {
			currentTag, hasTag := m.cache.tags[current.TagKey]
			if !hasTag {
				return DeliveryTag{}, false
			}
			return currentTag.Clone(), false
		}
	}
	now := m.now()
	local := tag.Clone()
	local.Partitions = []NodePartition{tag.PartitionForNode(m.localNodeID)}
	local.LastAccess = now
	if local.CreatedAt.IsZero() {
		local.CreatedAt = now
	}
	m.cache.put(local)
	return local.Clone(), true
}

// LookupLocalPartitionRef is upstream's hit path: the exclusive lock, the
// fence, LastAccess written back; the body shares the cache's slices.
func (m *upManager) LookupLocalPartitionRef(request TagRef) (DeliveryTag, bool, LookupReason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookupLocalPartitionLocked(request)
}

func (m *upManager) LookupLocalPartition(request TagRef) (DeliveryTag, bool, LookupReason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tag, hit, reason := m.lookupLocalPartitionLocked(request)
	return tag.Clone(), hit, reason
}

func (m *upManager) lookupLocalPartitionLocked(request TagRef) (DeliveryTag, bool, LookupReason) {
	current, ok := m.cache.channelRef[request.ChannelKey]
	if !ok {
		return DeliveryTag{}, false, LookupMissingRef
	}
	tag, ok := m.cache.tags[current.TagKey]
	if !ok {
		return DeliveryTag{}, false, LookupMissingTag
	}
	if current.TagKey != request.TagKey {
		return tag, false, LookupTagKeyMismatch
	}
	if request.TagVersion < current.TagVersion {
		return tag, false, LookupStaleRequest
	}
	if request.TagVersion > current.TagVersion {
		return tag, false, LookupNewerRequest
	}
	if request.SubscriberMutationVersion != 0 {
		if request.SubscriberMutationVersion < current.SubscriberMutationVersion {
			return tag, false, LookupStaleRequest
		}
		if request.SubscriberMutationVersion > current.SubscriberMutationVersion {
			return tag, false, LookupNewerRequest
		}
	}
	if request.SourceChannelKey != "" && request.SourceChannelKey != current.SourceChannelKey {
		return tag, false, LookupStaleRequest
	}
	if request.SourceSubscriberMutationVersion != 0 {
		if request.SourceSubscriberMutationVersion < current.SourceSubscriberMutationVersion {
			return tag, false, LookupStaleRequest
		}
		if request.SourceSubscriberMutationVersion > current.SourceSubscriberMutationVersion {
			return tag, false, LookupNewerRequest
		}
	}
	if !current.Topology.Equal(request.Topology) {
		return tag, false, LookupTopologyMismatch
	}
	tag.LastAccess = m.now()
	m.cache.tags[current.TagKey] = tag
	return tag, true, LookupHit
}

func (m *upManager) LookupTag(tagKey string) (DeliveryTag, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tag, ok := m.cache.tags[tagKey]
	if !ok {
		return DeliveryTag{}, false
	}
	tag.LastAccess = m.now()
	m.cache.tags[tagKey] = tag
	return tag.Clone(), true
}

func (m *upManager) CurrentRef(channelKey string) (TagRef, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.cache.getRef(channelKey)
}

func (m *upManager) IsSourceStale(channelKey string, source SourceVersion) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ref, ok := m.cache.channelRef[channelKey]
	if !ok || ref.SourceChannelKey == "" {
		return false
	}
	return ref.SourceChannelKey == source.ChannelKey && ref.SourceSubscriberMutationVersion < source.SubscriberMutationVersion
}

func (m *upManager) CleanupExpired() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache.cleanupExpired(m.now(), m.ttl)
}
