package deliverytag

// The follower's hit path, side by side: the package's Cache ("wkcore": the
// Rust core in the cgo build, the lock-free Go implementation in the pure-Go
// build), the lock-free Go implementation itself ("purego", compiled in both
// builds) and the faithful port of upstream's manager ("upstream": the
// exclusive lock, LastAccess written back). One op is one look-up that hits
// and reads the partition's UID count and first UID, zero-copy (upstream's
// LookupLocalPartitionRef returns the cache's own slices). Results go to
// docs, never into assertions.
//
//	go test -run '^$' -bench TagLookupHit -benchtime 200ms ./deliverytag/

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// benchChannels is how many channels the parallel benchmark spreads over
// (each goroutine hits its own; channels are independent).
const benchChannels = 64

// benchLookup is the hit of one implementation: the UID count and first
// UID of channel i's body, and whether it hit.
type benchLookup struct {
	name  string
	setup func(b *testing.B) func(i int) (int, string, bool)
}

func benchTag(i int) DeliveryTag {
	uids := make([]string, 64)
	for j := range uids {
		uids[j] = "uid-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
	}
	return DeliveryTag{Key: "tag-" + strconv.Itoa(i), ChannelKey: "group:bench-" + strconv.Itoa(i), TagVersion: 3,
		SubscriberMutationVersion: 9, Topology: testTopology(10, 1, 2),
		Partitions: []NodePartition{{NodeID: 1, UIDs: []string{"elsewhere"}}, {NodeID: 2, UIDs: uids}}}
}

func benchRefs() []TagRef {
	refs := make([]TagRef, benchChannels)
	for i := range refs {
		refs[i] = benchTag(i).Ref()
	}
	return refs
}

func benchImpls() []benchLookup {
	refs := benchRefs()
	return []benchLookup{
		{name: "wkcore", setup: func(b *testing.B) func(int) (int, string, bool) {
			c, err := NewCache(CacheOptions{LocalNodeID: 2, TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close() })
			for i := range refs {
				if _, ok, err := c.Store(benchTag(i)); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
			return func(i int) (int, string, bool) {
				v, reason, err := c.Lookup(refs[i])
				if err != nil {
					b.Fatal(err)
				}
				n, first := v.Len(), v.UID(0)
				v.Release()
				return n, first, reason == LookupHit
			}
		}},
		{name: "purego", setup: func(b *testing.B) func(int) (int, string, bool) {
			c := newGoCache(2, time.Minute, nil)
			for i := range refs {
				tag := benchTag(i)
				if _, ok := c.store(nil, &tag); !ok {
					b.Fatal("not stored")
				}
			}
			return func(i int) (int, string, bool) {
				body, reason := c.lookup(&refs[i])
				uids := body.partitions[0].UIDs
				return len(uids), uids[0], reason == LookupHit
			}
		}},
		{name: "upstream", setup: func(b *testing.B) func(int) (int, string, bool) {
			m := newUpManager(2, time.Minute, nil, nil)
			for i := range refs {
				if _, ok := m.StoreFollowerPartition(benchTag(i)); !ok {
					b.Fatal("not stored")
				}
			}
			return func(i int) (int, string, bool) {
				tag, hit, _ := m.LookupLocalPartitionRef(refs[i])
				uids := tag.Partitions[0].UIDs
				return len(uids), uids[0], hit
			}
		}},
	}
}

// One op: a hit and its first UID, one goroutine.
func BenchmarkTagLookupHit(b *testing.B) {
	for _, impl := range benchImpls() {
		b.Run(impl.name, func(b *testing.B) {
			lookup := impl.setup(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if n, first, hit := lookup(0); !hit || n != 64 || first == "" {
					b.Fatal("miss")
				}
			}
		})
	}
}

// One op: a hit and its first UID, GOMAXPROCS goroutines, each on its own
// channel of 64.
func BenchmarkTagLookupHitParallel(b *testing.B) {
	for _, impl := range benchImpls() {
		b.Run(impl.name, func(b *testing.B) {
			lookup := impl.setup(b)
			var next atomic.Uint32
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ch := int(next.Add(1)-1) % benchChannels
				for pb.Next() {
					if n, first, hit := lookup(ch); !hit || n != 64 || first == "" {
						b.Error("miss")
						return
					}
				}
			})
		})
	}
}
