package deliverytag

// Upstream's internal/runtime/deliverytag/manager_test.go, one test each,
// against the build's Cache (the follower side) and Leader (the leader
// side): upstream's Manager serves both roles, so each test uses the side
// its steps exercise (manager_facade_test.go runs them on Manager itself).

import (
	"reflect"
	"testing"
	"time"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eq[T any](t *testing.T, got, want T, what ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: got %#v, want %#v", what, got, want)
	}
}

// testTopology is upstream's fixture.
func testTopology(tableVersion uint64, nodeIDs ...uint64) PartitionTopologyVersion {
	refs := make([]SlotAuthorityRef, 0, len(nodeIDs))
	for slotID, nodeID := range nodeIDs {
		refs = append(refs, SlotAuthorityRef{SlotID: uint32(slotID + 1), LeaderNodeID: nodeID,
			ConfigEpoch: tableVersion + uint64(slotID), BalanceVersion: uint64(slotID + 100)})
	}
	return PartitionTopologyVersion{HashSlotTableVersion: tableVersion, SlotAuthorityRefs: refs}
}

// fixedClock is a settable Now.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

func newCache(t *testing.T, node uint64, ttl time.Duration, now func() time.Time) *Cache {
	t.Helper()
	c, err := NewCache(CacheOptions{LocalNodeID: node, TTL: ttl, Now: now})
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newLeader(t *testing.T, node uint64, ttl time.Duration, now func() time.Time, prefix string) *Leader {
	t.Helper()
	l, err := NewLeader(LeaderOptions{LocalNodeID: node, TTL: ttl, Now: now, KeyPrefix: prefix})
	must(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func store(t *testing.T, c *Cache, tag DeliveryTag) (DeliveryTag, bool) {
	t.Helper()
	got, ok, err := c.Store(tag)
	must(t, err)
	return got, ok
}

// lookupCopy is upstream's LookupLocalPartition: the reason and a copy of
// the current body.
func lookupCopy(t *testing.T, c *Cache, ref TagRef) (DeliveryTag, bool, LookupReason) {
	t.Helper()
	v, reason, err := c.Lookup(ref)
	must(t, err)
	defer v.Release()
	return v.Tag(), reason == LookupHit, reason
}

func build(t *testing.T, l *Leader, req BuildRequest) DeliveryTag {
	t.Helper()
	tag, err := l.BuildLeaderTag(req)
	must(t, err)
	return tag
}

func TestTagVersionIncrementsWithoutChangingKey(t *testing.T) {
	clock := &fixedClock{time.Unix(100, 0)}
	l := newLeader(t, 1, time.Minute, clock.Now, "leader-a")
	topology := testTopology(10, 1, 2)
	initial := build(t, l, BuildRequest{ChannelKey: "group:alpha", SubscriberMutationVersion: 1, Topology: topology,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1", "u3"}}, {NodeID: 2, UIDs: []string{"u2"}}}})
	eq(t, initial.Key, "leader-a-1", "key")
	eq(t, initial.TagVersion, uint64(1), "version")

	updated := build(t, l, BuildRequest{ChannelKey: "group:alpha", SubscriberMutationVersion: 2, Topology: topology,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}, {NodeID: 2, UIDs: []string{"u2", "u4"}}}})
	eq(t, updated.Key, initial.Key, "key kept")
	eq(t, updated.TagVersion, uint64(2), "version bumped")
	eq(t, updated.SubscriberMutationVersion, uint64(2), "smv")
	eq(t, updated.PartitionForNode(1).UIDs, []string{"u1"}, "node 1")
	eq(t, updated.PartitionForNode(2).UIDs, []string{"u2", "u4"}, "node 2")
	eq(t, updated.CreatedAt.UnixNano(), clock.now.UnixNano(), "created")

	// Partition contents alone do not bump the version.
	same := build(t, l, BuildRequest{ChannelKey: "group:alpha", SubscriberMutationVersion: 2, Topology: topology,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u9"}}}})
	eq(t, same.TagVersion, uint64(2), "contents only")
}

func TestFollowerCachesOnlyLocalPartitionTag(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	leaderTag := DeliveryTag{Key: "tag-1", ChannelKey: "group:beta", TagVersion: 4, SubscriberMutationVersion: 7,
		Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1", "u3"}},
			{NodeID: 2, UIDs: []string{"u2"}}, {NodeID: 3, UIDs: []string{"u4"}}}}
	stored, ok := store(t, c, leaderTag)
	eq(t, ok, true, "stored")
	eq(t, stored.Partitions, []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}, "stored partitions")

	cached, ok, err := c.LookupTag("group:beta", "tag-1")
	must(t, err)
	eq(t, ok, true, "cached")
	eq(t, cached.Partitions, []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}, "cached partitions")
	eq(t, len(cached.PartitionForNode(1).UIDs), 0, "node 1 is not kept")

	// A tag without this node's partition stores an empty one.
	none, ok := store(t, c, DeliveryTag{Key: "tag-1", ChannelKey: "group:beta", TagVersion: 5,
		SubscriberMutationVersion: 7, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
	eq(t, ok, true, "stored without a local partition")
	eq(t, len(none.Partitions), 1, "one partition")
	eq(t, none.Partitions[0].NodeID, uint64(2), "the local node's")
	eq(t, len(none.Partitions[0].UIDs), 0, "empty")
}

func TestStaleRequestDoesNotEvictNewerLocalTag(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	current := DeliveryTag{Key: "tag-1", ChannelKey: "group:gamma", TagVersion: 5, SubscriberMutationVersion: 9,
		Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}
	_, ok := store(t, c, current)
	eq(t, ok, true, "stored")

	stale := TagRef{ChannelKey: "group:gamma", TagKey: "tag-1", TagVersion: 4, SubscriberMutationVersion: 8,
		Topology: testTopology(10, 1, 2)}
	cached, hit, reason := lookupCopy(t, c, stale)
	eq(t, hit, false, "hit")
	eq(t, reason, LookupStaleRequest, "reason")
	eq(t, cached.PartitionForNode(2).UIDs, []string{"new"}, "current body returned")

	cached, ok, err := c.LookupTag("group:gamma", "tag-1")
	must(t, err)
	eq(t, ok, true, "kept")
	eq(t, cached.TagVersion, uint64(5), "version")
	eq(t, cached.PartitionForNode(2).UIDs, []string{"new"}, "uids")
}

func TestStaleDifferentTagKeyDoesNotEvictNewerLocalTag(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	fresh := DeliveryTag{Key: "leader-b-1", ChannelKey: "group:fresh", TagVersion: 1, SubscriberMutationVersion: 9,
		Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}
	_, ok := store(t, c, fresh)
	eq(t, ok, true, "stored")

	oldDelayedResponse := DeliveryTag{Key: "leader-a-8", ChannelKey: "group:fresh", TagVersion: 8,
		SubscriberMutationVersion: 8, Topology: testTopology(10, 1, 2),
		Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"old"}}}}
	stored, ok := store(t, c, oldDelayedResponse)
	eq(t, ok, false, "refused")
	eq(t, stored.Key, fresh.Key, "current returned")
	eq(t, stored.PartitionForNode(2).UIDs, []string{"new"}, "current uids")

	current, ok, err := c.CurrentRef("group:fresh")
	must(t, err)
	eq(t, ok, true, "ref")
	eq(t, current.TagKey, fresh.Key, "ref key")
	eq(t, current.SubscriberMutationVersion, uint64(9), "ref smv")
}

func TestLookupLocalPartitionRejectsSubscriberAndSourceFenceMismatch(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	current := DeliveryTag{Key: "tag-source", ChannelKey: "cmd:group:source", TagVersion: 3,
		SubscriberMutationVersion: 5, SourceChannelKey: "group:source", SourceSubscriberMutationVersion: 11,
		Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}
	_, ok := store(t, c, current)
	eq(t, ok, true, "stored")

	ref := current.Ref()
	_, hit, reason := lookupCopy(t, c, ref)
	eq(t, [2]any{hit, reason}, [2]any{true, LookupHit}, "exact")

	ref.SubscriberMutationVersion = current.SubscriberMutationVersion - 1
	_, hit, reason = lookupCopy(t, c, ref)
	eq(t, [2]any{hit, reason}, [2]any{false, LookupStaleRequest}, "smv - 1")

	ref = current.Ref()
	ref.SourceSubscriberMutationVersion = current.SourceSubscriberMutationVersion - 1
	_, hit, reason = lookupCopy(t, c, ref)
	eq(t, [2]any{hit, reason}, [2]any{false, LookupStaleRequest}, "source smv - 1")
}

func TestLookupLocalPartitionRefReturnsSharedTagWithoutAllocating(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	c := newCache(t, 2, time.Minute, nil)
	current := DeliveryTag{Key: "tag-ref", ChannelKey: "group:ref", TagVersion: 5, SubscriberMutationVersion: 9,
		Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u1", "u2"}}}}
	_, ok := store(t, c, current)
	eq(t, ok, true, "stored")
	ref := TagRef{ChannelKey: current.ChannelKey, TagKey: current.Key, TagVersion: current.TagVersion,
		SubscriberMutationVersion: current.SubscriberMutationVersion, Topology: current.Topology}

	var reason LookupReason
	var first, second string
	lookup := func() {
		v, r, err := c.Lookup(ref)
		if err != nil {
			t.Fatal(err)
		}
		reason, first, second = r, v.UID(0), v.UID(1)
		v.Release()
	}
	for i := 0; i < 10; i++ {
		lookup()
	}
	if allocs := testing.AllocsPerRun(100, lookup); allocs != 0 && !raceEnabled {
		t.Fatalf("%v allocations per hit", allocs)
	}
	eq(t, reason, LookupHit, "reason")
	eq(t, []string{first, second}, []string{"u1", "u2"}, "shared uids")
}

func TestPartitionTopologyMismatchForcesRefetch(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	_, ok := store(t, c, DeliveryTag{Key: "tag-topology", ChannelKey: "group:delta", TagVersion: 3,
		SubscriberMutationVersion: 6, Topology: testTopology(10, 1, 2),
		Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}})
	eq(t, ok, true, "stored")

	_, hit, reason := lookupCopy(t, c, TagRef{ChannelKey: "group:delta", TagKey: "tag-topology", TagVersion: 3,
		SubscriberMutationVersion: 6, Topology: testTopology(11, 1, 2)})
	eq(t, [2]any{hit, reason}, [2]any{false, LookupTopologyMismatch}, "table version")

	changedAuthority := testTopology(10, 1, 2)
	changedAuthority.SlotAuthorityRefs[1].BalanceVersion++
	_, hit, reason = lookupCopy(t, c, TagRef{ChannelKey: "group:delta", TagKey: "tag-topology", TagVersion: 3,
		SubscriberMutationVersion: 6, Topology: changedAuthority})
	eq(t, [2]any{hit, reason}, [2]any{false, LookupTopologyMismatch}, "balance version")

	reordered := testTopology(10, 1, 2)
	reordered.SlotAuthorityRefs[0], reordered.SlotAuthorityRefs[1] = reordered.SlotAuthorityRefs[1], reordered.SlotAuthorityRefs[0]
	_, hit, reason = lookupCopy(t, c, TagRef{ChannelKey: "group:delta", TagKey: "tag-topology", TagVersion: 3,
		SubscriberMutationVersion: 6, Topology: reordered})
	eq(t, [2]any{hit, reason}, [2]any{false, LookupTopologyMismatch}, "order matters")
}

func TestTTLCleanupRemovesColdTagsAndStaleChannelRefs(t *testing.T) {
	clock := &fixedClock{time.Unix(200, 0)}
	l := newLeader(t, 1, time.Second, clock.Now, "leader")
	tag := build(t, l, BuildRequest{ChannelKey: "group:ttl", SubscriberMutationVersion: 1, Topology: testTopology(1, 1),
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
	if tag.Key == "" {
		t.Fatal("no key")
	}
	clock.now = clock.now.Add(2 * time.Second)
	page, err := l.CleanupExpired(clock.now, CleanupLimitMax)
	must(t, err)
	eq(t, page.Reclaimed, 1, "removed")
	_, ok, err := l.LookupTag(tag.Key)
	must(t, err)
	eq(t, ok, false, "body gone")
	_, ok, err = l.CurrentRef("group:ttl")
	must(t, err)
	eq(t, ok, false, "ref gone")

	// The follower side too.
	c := newCache(t, 2, time.Second, clock.Now)
	store(t, c, DeliveryTag{Key: "k", ChannelKey: "group:ttl", TagVersion: 1, SubscriberMutationVersion: 1,
		Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u"}}}})
	clock.now = clock.now.Add(2 * time.Second)
	page, err = c.CleanupExpired(clock.now, CleanupLimitMax)
	must(t, err)
	eq(t, page.Reclaimed, 1, "follower body removed")
	_, ok, err = c.CurrentRef("group:ttl")
	must(t, err)
	eq(t, ok, false, "follower ref gone")
	counts, err := c.Counts()
	must(t, err)
	eq(t, [2]uint64{counts.Tags, counts.UIDs}, [2]uint64{0, 0}, "held")
}

func TestDerivedTagStaleWhenSourceSubscriberMutationVersionAdvances(t *testing.T) {
	l := newLeader(t, 1, time.Minute, nil, "leader")
	tag := build(t, l, BuildRequest{ChannelKey: "cmd:group:omega", SubscriberMutationVersion: 1,
		SourceChannelKey: "group:omega", SourceSubscriberMutationVersion: 10, Topology: testTopology(1, 1),
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
	eq(t, tag.SourceSubscriberMutationVersion, uint64(10), "source smv")
	for _, c := range []struct {
		channel string
		source  SourceVersion
		stale   bool
	}{
		{"cmd:group:omega", SourceVersion{"group:omega", 10}, false},
		{"cmd:group:omega", SourceVersion{"group:omega", 11}, true},
		{"cmd:group:omega", SourceVersion{"group:other", 11}, false},
		{"nothing", SourceVersion{"group:omega", 11}, false},
	} {
		stale, err := l.IsSourceStale(c.channel, c.source)
		must(t, err)
		eq(t, stale, c.stale, c.channel, c.source)
	}
}

func TestLeaderIncarnationCanMintFreshTagKey(t *testing.T) {
	oldFollowerTag := DeliveryTag{Key: "leader-a-1", ChannelKey: "group:zeta", TagVersion: 8,
		SubscriberMutationVersion: 8, Topology: testTopology(1, 2),
		Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"old"}}}}
	l := newLeader(t, 2, time.Minute, nil, "leader-b")
	fresh := build(t, l, BuildRequest{ChannelKey: "group:zeta", SubscriberMutationVersion: 9,
		Topology: testTopology(1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}},
		MintFreshKey: true})
	eq(t, fresh.Key, "leader-b-1", "fresh key")
	eq(t, fresh.TagVersion, uint64(1), "version 1")

	follower := newCache(t, 2, time.Minute, nil)
	_, ok := store(t, follower, oldFollowerTag)
	eq(t, ok, true, "old stored")
	storedFresh, ok := store(t, follower, fresh)
	eq(t, ok, true, "fresh replaces old despite a lower version")
	eq(t, storedFresh.Key, fresh.Key, "stored key")
	eq(t, storedFresh.PartitionForNode(2).UIDs, []string{"new"}, "stored uids")

	_, hit, reason := lookupCopy(t, follower, oldFollowerTag.Ref())
	eq(t, [2]any{hit, reason}, [2]any{false, LookupTagKeyMismatch}, "old ref")
	current, ok, err := follower.CurrentRef("group:zeta")
	must(t, err)
	eq(t, ok, true, "ref")
	eq(t, current.TagKey, fresh.Key, "current key")

	// A rebuild without MintFreshKey reuses it; with it, a new one.
	again := build(t, l, BuildRequest{ChannelKey: "group:zeta", SubscriberMutationVersion: 9,
		Topology: testTopology(1, 2), MintFreshKey: true})
	eq(t, again.Key, "leader-b-2", "minted again")
}

func TestBuildEphemeralTagDoesNotReplaceCurrentRef(t *testing.T) {
	l := newLeader(t, 1, time.Minute, nil, "tag")
	topology := testTopology(10, 1, 2)
	reusable := build(t, l, BuildRequest{ChannelKey: "group:ephemeral", SubscriberMutationVersion: 1,
		Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
	ephemeral, err := l.BuildEphemeralTag(BuildRequest{ChannelKey: "group:ephemeral", SubscriberMutationVersion: 99,
		Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"scoped"}}}})
	must(t, err)
	if reusable.Key == ephemeral.Key {
		t.Fatal("the ephemeral tag reused the key")
	}
	eq(t, ephemeral.TagVersion, uint64(1), "ephemeral version")

	ref, ok, err := l.CurrentRef("group:ephemeral")
	must(t, err)
	eq(t, ok, true, "ref")
	eq(t, ref.TagKey, reusable.Key, "current stays")
	reason, err := l.Check(reusable.Ref())
	must(t, err)
	eq(t, reason, LookupHit, "reusable still hits")

	cached, ok, err := l.LookupTag(ephemeral.Key)
	must(t, err)
	eq(t, ok, true, "ephemeral by key")
	eq(t, cached.PartitionForNode(1).UIDs, []string{"scoped"}, "ephemeral uids")
}
