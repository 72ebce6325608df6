package deliverytag

import (
	"testing"
	"time"
)

// A hit allocates nothing, through every path: the look-up with a view (a
// recycled View; in the cgo build the C view is freed by the next look-up,
// in the same C call), the reason-only Check, a Channel handle, the
// leader's reuse check, and a miss that returns the current body. Reading
// the UIDs copies nothing.
func TestLookupAllocations(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under -race")
	}
	c := newCache(t, 2, time.Minute, nil)
	tag := benchTag(0)
	store(t, c, tag)
	ref := tag.Ref()
	stale := ref
	stale.TagVersion--
	ch, err := c.Channel(tag.ChannelKey)
	must(t, err)
	l := newLeader(t, 2, time.Minute, nil, "l")
	built := build(t, l, BuildRequest{ChannelKey: tag.ChannelKey, SubscriberMutationVersion: 9,
		Topology: tag.Topology, Partitions: tag.Partitions})
	leaderRef := built.Ref()
	engine := newGoCache(2, time.Minute, nil)
	engine.store(nil, &tag)

	var sink int
	viewed := func(v *View, reason LookupReason, err error, want LookupReason) {
		if err != nil || reason != want {
			t.Fatal(reason, err)
		}
		for i := 0; i < v.Len(); i++ {
			sink += len(v.UID(i))
		}
		sink += v.PartitionForNode(2).Len()
		v.Release()
	}
	for _, m := range []struct {
		name string
		f    func()
	}{
		{"Cache.Lookup hit", func() { v, r, err := c.Lookup(ref); viewed(v, r, err, LookupHit) }},
		{"Cache.Lookup stale_request", func() { v, r, err := c.Lookup(stale); viewed(v, r, err, LookupStaleRequest) }},
		{"Cache.Check", func() {
			if r, err := c.Check(ref); err != nil || r != LookupHit {
				t.Fatal(r, err)
			}
		}},
		{"Channel.Lookup", func() { v, r, err := ch.Lookup(ref); viewed(v, r, err, LookupHit) }},
		{"Channel.Check", func() {
			if r, err := ch.Check(ref); err != nil || r != LookupHit {
				t.Fatal(r, err)
			}
		}},
		{"Leader.Check", func() {
			if r, err := l.Check(leaderRef); err != nil || r != LookupHit {
				t.Fatal(r, err)
			}
		}},
		{"the Go engine", func() {
			if b, r := engine.lookup(&ref); r != LookupHit || len(b.partitions[0].UIDs) != 64 {
				t.Fatal(r)
			}
		}},
	} {
		for i := 0; i < 10; i++ {
			m.f()
		}
		if allocs := testing.AllocsPerRun(200, m.f); allocs != 0 {
			t.Errorf("%s: %v allocations per call", m.name, allocs)
		}
	}
	_ = sink
}
