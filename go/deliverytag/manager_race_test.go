package deliverytag

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// Hits on the leader side race rebuilds that keep the key and version
// (same subscriber version and topology, other partitions): once the
// builds stop, every hit and LookupTag reads the last build's partitions,
// never a copy kept from an earlier one. Both key modes.
func TestManagerLeaderHitsRaceRebuilds(t *testing.T) {
	for _, gen := range []func() string{nil, func() string { return "host-key" }} {
		m := NewManager(Options{LocalNodeID: 1, TTL: time.Minute, KeyPrefix: "k", NewTagKey: gen})
		req := func(i int) BuildRequest {
			return BuildRequest{ChannelKey: "group:r", SubscriberMutationVersion: 1,
				Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"u" + strconv.Itoa(i)}}}}
		}
		first, _ := m.BuildLeaderTag(req(0))
		ref, _ := m.CurrentRef("group:r")
		rounds := 2000
		if debugBuild { // a GC per C call: the pointer checks, not the stress
			rounds = 200
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					tag, hit, reason := m.LookupLocalPartitionRef(ref)
					if !hit || len(tag.Partitions) != 1 {
						t.Errorf("hit %v %s, %d partitions", hit, reason, len(tag.Partitions))
						return
					}
					_, _ = m.LookupTag(first.Key)
				}
			}()
		}
		for i := 1; i <= rounds; i++ {
			if tag, ok := m.BuildLeaderTag(req(i)); !ok || tag.Key != first.Key || tag.TagVersion != 1 {
				t.Fatalf("rebuild %d: %q v%d", i, tag.Key, tag.TagVersion)
			}
		}
		close(stop)
		wg.Wait()
		want := "u" + strconv.Itoa(rounds)
		for i := 0; i < 3; i++ {
			tag, hit, _ := m.LookupLocalPartitionRef(ref)
			if !hit || tag.Partitions[0].UIDs[0] != want {
				t.Fatalf("after the builds: hit %v, %v", hit, tag.Partitions)
			}
			lt, ok := m.LookupTag(first.Key)
			if !ok || lt.Partitions[0].UIDs[0] != want {
				t.Fatalf("LookupTag after the builds: %v", lt.Partitions)
			}
		}
		_ = m.Close()
	}
}
