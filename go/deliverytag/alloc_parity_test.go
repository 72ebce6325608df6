package deliverytag

import (
	"testing"
	"time"
)

// Allocations per call against upstream's Manager: each row's upstream count
// was measured by running upstream's internal/runtime/deliverytag code itself
// (testing.AllocsPerRun, Go 1.26, the same tags); the Manager must not
// allocate more, in either build, with the core's keys and with NewTagKey.
func TestAllocationParity(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	topo := PartitionTopologyVersion{HashSlotTableVersion: 10, SlotAuthorityRefs: []SlotAuthorityRef{
		{SlotID: 1, LeaderNodeID: 1, ConfigEpoch: 10, BalanceVersion: 100},
		{SlotID: 2, LeaderNodeID: 2, ConfigEpoch: 11, BalanceVersion: 101}}}
	n := 0
	keys := func() string { n++; return "k-" + string(rune('a'+n%26)) }
	for _, mode := range []string{"core keys", "NewTagKey"} {
		t.Run(mode, func(t *testing.T) {
			opts := Options{LocalNodeID: 2, TTL: time.Minute}
			lopts := Options{LocalNodeID: 1, TTL: time.Minute}
			if mode == "NewTagKey" {
				opts.NewTagKey, lopts.NewTagKey = keys, keys
			}
			m, l := NewManager(opts), NewManager(lopts)
			defer m.Close()
			defer l.Close()
			tag := DeliveryTag{Key: "tag-ref", ChannelKey: "group:ref", TagVersion: 5, SubscriberMutationVersion: 9,
				Topology: topo, Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"u1", "u2"}}}}
			if _, ok := m.StoreFollowerPartition(tag); !ok {
				t.Fatal("store refused")
			}
			ref := TagRef{ChannelKey: tag.ChannelKey, TagKey: tag.Key, TagVersion: 5, SubscriberMutationVersion: 9, Topology: topo}
			stale, missing := ref, ref
			stale.TagVersion = 4
			missing.ChannelKey = "group:none"
			req := BuildRequest{ChannelKey: "group:b", SubscriberMutationVersion: 1, Topology: topo,
				Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u1"}}, {NodeID: 2, UIDs: []string{"u2"}}}}
			l.BuildLeaderTag(req)
			lref, _ := l.CurrentRef("group:b")
			rows := []struct {
				name     string
				upstream float64
				f        func()
			}{
				{"LookupLocalPartitionRef hit (follower)", 0, func() { m.LookupLocalPartitionRef(ref) }},
				{"LookupLocalPartitionRef hit (leader)", 0, func() { l.LookupLocalPartitionRef(lref) }},
				{"LookupLocalPartitionRef stale", 0, func() { m.LookupLocalPartitionRef(stale) }},
				{"LookupLocalPartitionRef missing", 0, func() { m.LookupLocalPartitionRef(missing) }},
				{"LookupLocalPartition hit", 3, func() { m.LookupLocalPartition(ref) }},
				{"LookupTag hit", 3, func() { m.LookupTag("tag-ref") }},
				{"LookupTag hit (leader, 2 partitions)", 4, func() { l.LookupTag(lref.TagKey) }},
				{"CurrentRef hit", 1, func() { m.CurrentRef("group:ref") }},
				{"IsSourceStale", 0, func() { m.IsSourceStale("group:ref", SourceVersion{ChannelKey: "x", SubscriberMutationVersion: 1}) }},
				{"StoreFollowerPartition, the same tag again", 12, func() { m.StoreFollowerPartition(tag) }},
				{"BuildLeaderTag, key reused", 13, func() { l.BuildLeaderTag(req) }},
			}
			for _, row := range rows {
				for i := 0; i < 10; i++ {
					row.f()
				}
				if got := testing.AllocsPerRun(200, row.f); got > row.upstream {
					t.Errorf("%s: %v allocations per call, upstream %v", row.name, got, row.upstream)
				}
			}
		})
	}
}
