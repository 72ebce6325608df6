package deliverytag

// Upstream's manager_test.go, test for test, on the Manager facade and on
// the faithful port of upstream's manager (upstream_port_test.go): the same
// test bodies, so the facade is a drop-in and the port is faithful.

import (
	"sync"
	"testing"
	"time"
)

// managerAPI is upstream's Manager method set.
type managerAPI interface {
	BuildLeaderTag(BuildRequest) (DeliveryTag, bool)
	BuildEphemeralTag(BuildRequest) (DeliveryTag, bool)
	StoreFollowerPartition(DeliveryTag) (DeliveryTag, bool)
	LookupLocalPartitionRef(TagRef) (DeliveryTag, bool, LookupReason)
	LookupLocalPartition(TagRef) (DeliveryTag, bool, LookupReason)
	LookupTag(string) (DeliveryTag, bool)
	CurrentRef(string) (TagRef, bool)
	IsSourceStale(string, SourceVersion) bool
	CleanupExpired() int
}

type newManagerFunc func(t *testing.T, local uint64, ttl time.Duration, now func() time.Time, prefix string) managerAPI

var managerImpls = []struct {
	name string
	make newManagerFunc
}{
	{"manager", func(t *testing.T, local uint64, ttl time.Duration, now func() time.Time, prefix string) managerAPI {
		m := NewManager(Options{LocalNodeID: local, TTL: ttl, Now: now, KeyPrefix: prefix})
		if m == nil {
			t.Fatal("NewManager refused its options")
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}},
	{"upstream", func(_ *testing.T, local uint64, ttl time.Duration, now func() time.Time, prefix string) managerAPI {
		return newUpManager(local, ttl, now, sequentialKeys(prefix))
	}},
}

func forEachManager(t *testing.T, body func(t *testing.T, newM newManagerFunc)) {
	for _, impl := range managerImpls {
		t.Run(impl.name, func(t *testing.T) { body(t, impl.make) })
	}
}

func mustStoreFollower(t *testing.T, m managerAPI, tag DeliveryTag) bool {
	t.Helper()
	_, ok := m.StoreFollowerPartition(tag)
	return ok
}

func TestManagerTagVersionIncrementsWithoutChangingKey(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		now := time.Unix(100, 0)
		m := newM(t, 1, time.Minute, func() time.Time { return now }, "leader-a")
		topology := testTopology(10, 1, 2)
		initial, created := m.BuildLeaderTag(BuildRequest{ChannelKey: "group:alpha", SubscriberMutationVersion: 1,
			Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1", "u3"}}, {NodeID: 2, UIDs: []string{"u2"}}}})
		eq(t, created, true, "created")
		eq(t, initial.Key, "leader-a-1", "key")
		eq(t, initial.TagVersion, uint64(1), "version")
		updated, created := m.BuildLeaderTag(BuildRequest{ChannelKey: "group:alpha", SubscriberMutationVersion: 2,
			Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}, {NodeID: 2, UIDs: []string{"u2", "u4"}}}})
		eq(t, created, true, "created")
		eq(t, updated.Key, initial.Key, "key kept")
		eq(t, updated.TagVersion, uint64(2), "version")
		eq(t, updated.SubscriberMutationVersion, uint64(2), "smv")
		eq(t, updated.PartitionForNode(1).UIDs, []string{"u1"}, "node 1")
		eq(t, updated.PartitionForNode(2).UIDs, []string{"u2", "u4"}, "node 2")
	})
}

func TestManagerFollowerCachesOnlyLocalPartitionTag(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		stored, ok := m.StoreFollowerPartition(DeliveryTag{Key: "tag-1", ChannelKey: "group:beta", TagVersion: 4,
			SubscriberMutationVersion: 7, Topology: testTopology(10, 1, 2), Partitions: []NodePartition{
				{NodeID: 1, UIDs: []string{"u1", "u3"}}, {NodeID: 2, UIDs: []string{"u2"}}, {NodeID: 3, UIDs: []string{"u4"}}}})
		eq(t, ok, true, "stored")
		eq(t, stored.Partitions, []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}, "stored partitions")
		cached, ok := m.LookupTag("tag-1")
		eq(t, ok, true, "by key")
		eq(t, cached.Partitions, []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}, "cached partitions")
		eq(t, len(cached.PartitionForNode(1).UIDs), 0, "node 1 not kept")
	})
}

func TestManagerStaleRequestDoesNotEvictNewerLocalTag(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		eq(t, mustStoreFollower(t, m, DeliveryTag{Key: "tag-1", ChannelKey: "group:gamma", TagVersion: 5,
			SubscriberMutationVersion: 9, Topology: testTopology(10, 1, 2),
			Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}), true, "stored")
		cached, hit, reason := m.LookupLocalPartition(TagRef{ChannelKey: "group:gamma", TagKey: "tag-1", TagVersion: 4,
			SubscriberMutationVersion: 8, Topology: testTopology(10, 1, 2)})
		eq(t, [2]any{hit, reason}, [2]any{false, LookupStaleRequest}, "stale")
		eq(t, cached.PartitionForNode(2).UIDs, []string{"new"}, "current returned")
		cached, ok := m.LookupTag("tag-1")
		eq(t, ok, true, "kept")
		eq(t, cached.TagVersion, uint64(5), "version")
		eq(t, cached.PartitionForNode(2).UIDs, []string{"new"}, "uids")
	})
}

func TestManagerStaleDifferentTagKeyDoesNotEvictNewerLocalTag(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		fresh := DeliveryTag{Key: "leader-b-1", ChannelKey: "group:fresh", TagVersion: 1, SubscriberMutationVersion: 9,
			Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}
		eq(t, mustStoreFollower(t, m, fresh), true, "stored")
		stored, ok := m.StoreFollowerPartition(DeliveryTag{Key: "leader-a-8", ChannelKey: "group:fresh", TagVersion: 8,
			SubscriberMutationVersion: 8, Topology: testTopology(10, 1, 2),
			Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"old"}}}})
		eq(t, ok, false, "refused")
		eq(t, stored.Key, fresh.Key, "current key")
		eq(t, stored.PartitionForNode(2).UIDs, []string{"new"}, "current uids")
		current, ok := m.CurrentRef("group:fresh")
		eq(t, ok, true, "ref")
		eq(t, [2]any{current.TagKey, current.SubscriberMutationVersion}, [2]any{fresh.Key, uint64(9)}, "ref")
	})
}

func TestManagerLookupLocalPartitionRejectsSubscriberAndSourceFenceMismatch(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		current := DeliveryTag{Key: "tag-source", ChannelKey: "cmd:group:source", TagVersion: 3, SubscriberMutationVersion: 5,
			SourceChannelKey: "group:source", SourceSubscriberMutationVersion: 11, Topology: testTopology(10, 1, 2),
			Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}}
		eq(t, mustStoreFollower(t, m, current), true, "stored")
		ref := current.Ref()
		ref.SubscriberMutationVersion--
		_, hit, reason := m.LookupLocalPartition(ref)
		eq(t, [2]any{hit, reason}, [2]any{false, LookupStaleRequest}, "smv")
		ref = current.Ref()
		ref.SourceSubscriberMutationVersion--
		_, hit, reason = m.LookupLocalPartition(ref)
		eq(t, [2]any{hit, reason}, [2]any{false, LookupStaleRequest}, "source smv")
	})
}

func TestManagerLookupLocalPartitionRefReturnsSharedTagWithoutAllocating(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		current := DeliveryTag{Key: "tag-ref", ChannelKey: "group:ref", TagVersion: 5, SubscriberMutationVersion: 9,
			Topology: testTopology(10, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u1", "u2"}}}}
		eq(t, mustStoreFollower(t, m, current), true, "stored")
		ref := TagRef{ChannelKey: current.ChannelKey, TagKey: current.Key, TagVersion: current.TagVersion,
			SubscriberMutationVersion: current.SubscriberMutationVersion, Topology: current.Topology}
		var tag DeliveryTag
		var hit bool
		var reason LookupReason
		lookup := func() { tag, hit, reason = m.LookupLocalPartitionRef(ref) }
		for i := 0; i < 10; i++ {
			lookup()
		}
		allocs := testing.AllocsPerRun(100, lookup)
		// The facade shares the body in both builds: in the cgo build, a Go
		// copy of the held snapshot made once (the hit runs inline).
		if !raceEnabled && !debugBuild && allocs != 0 {
			t.Fatalf("%v allocations per hit", allocs)
		}
		eq(t, [2]any{hit, reason}, [2]any{true, LookupHit}, "hit")
		eq(t, tag.Partitions[0].UIDs, []string{"u1", "u2"}, "shared uids")
	})
}

func TestManagerPartitionTopologyMismatchForcesRefetch(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "unused")
		eq(t, mustStoreFollower(t, m, DeliveryTag{Key: "tag-topology", ChannelKey: "group:delta", TagVersion: 3,
			SubscriberMutationVersion: 6, Topology: testTopology(10, 1, 2),
			Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u2"}}}}), true, "stored")
		_, hit, reason := m.LookupLocalPartition(TagRef{ChannelKey: "group:delta", TagKey: "tag-topology", TagVersion: 3,
			SubscriberMutationVersion: 6, Topology: testTopology(11, 1, 2)})
		eq(t, [2]any{hit, reason}, [2]any{false, LookupTopologyMismatch}, "table")
		changed := testTopology(10, 1, 2)
		changed.SlotAuthorityRefs[1].BalanceVersion++
		_, hit, reason = m.LookupLocalPartition(TagRef{ChannelKey: "group:delta", TagKey: "tag-topology", TagVersion: 3,
			SubscriberMutationVersion: 6, Topology: changed})
		eq(t, [2]any{hit, reason}, [2]any{false, LookupTopologyMismatch}, "balance")
	})
}

func TestManagerTTLCleanupRemovesColdTagsAndStaleChannelRefs(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		var mu sync.Mutex
		now := time.Unix(200, 0)
		m := newM(t, 1, time.Second, func() time.Time { mu.Lock(); defer mu.Unlock(); return now }, "leader")
		tag, _ := m.BuildLeaderTag(BuildRequest{ChannelKey: "group:ttl", SubscriberMutationVersion: 1,
			Topology: testTopology(1, 1), Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
		if tag.Key == "" {
			t.Fatal("no key")
		}
		mu.Lock()
		now = now.Add(2 * time.Second)
		mu.Unlock()
		eq(t, m.CleanupExpired(), 1, "removed")
		_, ok := m.LookupTag(tag.Key)
		eq(t, ok, false, "body gone")
		_, ok = m.CurrentRef("group:ttl")
		eq(t, ok, false, "ref gone")
	})
}

func TestManagerDerivedTagStaleWhenSourceSubscriberMutationVersionAdvances(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 1, time.Minute, time.Now, "leader")
		tag, _ := m.BuildLeaderTag(BuildRequest{ChannelKey: "cmd:group:omega", SubscriberMutationVersion: 1,
			SourceChannelKey: "group:omega", SourceSubscriberMutationVersion: 10, Topology: testTopology(1, 1),
			Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
		eq(t, tag.SourceSubscriberMutationVersion, uint64(10), "source smv")
		eq(t, m.IsSourceStale("cmd:group:omega", SourceVersion{"group:omega", 10}), false, "same")
		eq(t, m.IsSourceStale("cmd:group:omega", SourceVersion{"group:omega", 11}), true, "advanced")
	})
}

func TestManagerLeaderIncarnationCanMintFreshTagKey(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 2, time.Minute, time.Now, "leader-b")
		old := DeliveryTag{Key: "leader-a-1", ChannelKey: "group:zeta", TagVersion: 8, SubscriberMutationVersion: 8,
			Topology: testTopology(1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"old"}}}}
		eq(t, mustStoreFollower(t, m, old), true, "old stored")
		fresh, created := m.BuildLeaderTag(BuildRequest{ChannelKey: "group:zeta", SubscriberMutationVersion: 9,
			Topology: testTopology(1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"new"}}}, MintFreshKey: true})
		eq(t, created, true, "created")
		eq(t, fresh.Key, "leader-b-1", "fresh key")
		follower := newM(t, 2, time.Minute, time.Now, "unused")
		eq(t, mustStoreFollower(t, follower, old), true, "old stored on the follower")
		storedFresh, ok := follower.StoreFollowerPartition(fresh)
		eq(t, ok, true, "fresh stored")
		eq(t, storedFresh.Key, fresh.Key, "key")
		eq(t, storedFresh.PartitionForNode(2).UIDs, []string{"new"}, "uids")
		_, hit, reason := follower.LookupLocalPartition(old.Ref())
		eq(t, [2]any{hit, reason}, [2]any{false, LookupTagKeyMismatch}, "old ref")
		current, ok := follower.CurrentRef("group:zeta")
		eq(t, [2]any{ok, current.TagKey}, [2]any{true, fresh.Key}, "current")
	})
}

func TestManagerBuildEphemeralTagDoesNotReplaceCurrentRef(t *testing.T) {
	forEachManager(t, func(t *testing.T, newM newManagerFunc) {
		m := newM(t, 1, time.Minute, time.Now, "tag")
		topology := testTopology(10, 1, 2)
		reusable, created := m.BuildLeaderTag(BuildRequest{ChannelKey: "group:ephemeral", SubscriberMutationVersion: 1,
			Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}}})
		eq(t, created, true, "created")
		ephemeral, created := m.BuildEphemeralTag(BuildRequest{ChannelKey: "group:ephemeral", SubscriberMutationVersion: 99,
			Topology: topology, Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"scoped"}}}})
		eq(t, created, true, "created")
		if reusable.Key == ephemeral.Key {
			t.Fatal("same key")
		}
		ref, ok := m.CurrentRef("group:ephemeral")
		eq(t, [2]any{ok, ref.TagKey}, [2]any{true, reusable.Key}, "current stays")
		cached, ok := m.LookupTag(ephemeral.Key)
		eq(t, ok, true, "by key")
		eq(t, cached.PartitionForNode(1).UIDs, []string{"scoped"}, "uids")
	})
}

// The facade's own rules: a nil manager answers upstream's zero values;
// the latest write of a channel decides which side answers; a follower
// store on the leader node is judged against the build; the cleanup
// forgets what went.
func TestManagerFacade(t *testing.T) {
	var nilM *Manager
	if _, ok := nilM.BuildLeaderTag(BuildRequest{}); ok {
		t.Error("nil BuildLeaderTag")
	}
	if _, hit, reason := nilM.LookupLocalPartitionRef(TagRef{}); hit || reason != LookupMissingRef {
		t.Error("nil lookup")
	}
	if !nilM.IsSourceStale("c", SourceVersion{}) || nilM.CleanupExpired() != 0 || nilM.Leader() != nil || nilM.Cache() != nil {
		t.Error("nil manager")
	}
	if NewManager(Options{}) != nil {
		t.Error("a local node of 0 was accepted")
	}
	m := NewManager(Options{LocalNodeID: 1, TTL: time.Minute, KeyPrefix: "l"})
	defer m.Close()
	built, _ := m.BuildLeaderTag(BuildRequest{ChannelKey: "c", SubscriberMutationVersion: 5,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"a"}}, {NodeID: 2, UIDs: []string{"b"}}}})
	_, hit, _ := m.LookupLocalPartitionRef(built.Ref())
	eq(t, hit, true, "the leader's tag answers")
	// An older follower store is refused against the build.
	cur, ok := m.StoreFollowerPartition(DeliveryTag{Key: "other", ChannelKey: "c", TagVersion: 9, SubscriberMutationVersion: 4})
	eq(t, [3]any{ok, cur.Key, len(cur.Partitions)}, [3]any{false, built.Key, 2}, "stale against the build")
	// A newer one takes over the channel.
	stored, ok := m.StoreFollowerPartition(DeliveryTag{Key: "other", ChannelKey: "c", TagVersion: 1, SubscriberMutationVersion: 6,
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"x"}}}})
	eq(t, ok, true, "newer store")
	ref, _ := m.CurrentRef("c")
	eq(t, ref.TagKey, "other", "the cache's tag is current")
	byKey, ok := m.LookupTag("other")
	eq(t, [2]any{ok, byKey.PartitionForNode(1).UIDs}, [2]any{true, []string{"x"}}, "by key")
	byKey, ok = m.LookupTag(built.Key)
	eq(t, [2]any{ok, len(byKey.Partitions)}, [2]any{true, 2}, "the build stays by key")
	_, hit, _ = m.LookupLocalPartitionRef(stored.Ref())
	eq(t, hit, true, "the store answers")
	// Building again makes the leader's current.
	again, _ := m.BuildLeaderTag(BuildRequest{ChannelKey: "c", SubscriberMutationVersion: 7})
	ref, _ = m.CurrentRef("c")
	eq(t, ref.TagKey, again.Key, "rebuilt")
}
