package deliverytag

// Concurrency, for the race detector: readers while writers store newer
// versions (no reader ever sees the channel's tag go back, and the newest
// store wins whatever the order), views held across replacement and
// reclamation, cleanups racing hits and stores, and leader builds racing
// mutations.

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func stressRounds() int {
	switch {
	case debugBuild:
		return 50
	case raceEnabled:
		return 500
	}
	return 5000
}

func versionTag(channel string, v uint64) DeliveryTag {
	return DeliveryTag{Key: "k", ChannelKey: channel, TagVersion: v, SubscriberMutationVersion: v,
		Topology: testTopology(1, 1, 2), Partitions: []NodePartition{{NodeID: 2, UIDs: []string{"v" + strconv.FormatUint(v, 10)}}}}
}

// Readers see the channel's version only move forward while writers store
// every version out of order; the newest one is current at the end.
func TestReadersNeverSeeARegression(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	const channel = "group:race"
	ch, err := c.Channel(channel)
	must(t, err)
	rounds := uint64(stressRounds())
	var latest atomic.Uint64 // the highest version some store returned stored for
	var done atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for v := uint64(1); v <= rounds; v++ {
				// Writers run the versions in different orders.
				version := v
				if w == 1 {
					version = rounds + 1 - v
				}
				var stored bool
				var err error
				if w == 2 {
					_, stored, err = ch.Store(versionTag(channel, version))
				} else {
					_, stored, err = c.Store(versionTag(channel, version))
				}
				if err != nil {
					t.Error(err)
					return
				}
				for stored {
					l := latest.Load()
					if version <= l || latest.CompareAndSwap(l, version) {
						break
					}
				}
			}
		}(w)
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			var seen uint64
			for !done.Load() {
				want := latest.Load()
				ref := versionTag(channel, want).Ref()
				var v *View
				var reason LookupReason
				var err error
				if r == 0 {
					v, reason, err = ch.Lookup(ref)
				} else {
					v, reason, err = c.Lookup(ref)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if want == 0 {
					v.Release()
					continue
				}
				got := v.TagVersion()
				uid := v.UID(0)
				v.Release()
				if got < seen {
					t.Errorf("reader %d saw version %d after %d", r, got, seen)
					return
				}
				seen = got
				if got < want {
					t.Errorf("reader %d: version %d current after a store of %d", r, got, want)
					return
				}
				if reason == LookupHit && uid != "v"+strconv.FormatUint(want, 10) {
					t.Errorf("reader %d: a hit on %d read %q", r, want, uid)
					return
				}
			}
		}(r)
	}
	go func() {
		for latest.Load() < rounds {
			time.Sleep(time.Millisecond)
		}
		done.Store(true)
	}()
	wg.Wait()
	cur, ok, err := c.Current(channel)
	must(t, err)
	eq(t, [2]any{ok, cur.TagVersion}, [2]any{true, rounds}, "the newest store is current")
	counts, err := c.Counts()
	must(t, err)
	eq(t, counts.Tags, uint64(1), "one body held")
	if counts.Stored+counts.Stale != 3*rounds {
		t.Fatalf("stores counted: %+v", counts)
	}
}

// A view keeps its body readable after the channel moves on and after the
// body is reclaimed.
func TestViewOutlivesReplacementAndReclaim(t *testing.T) {
	clock := &fixedClock{time.Unix(1000, 0)}
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock.now }
	c := newCache(t, 2, time.Second, now)
	store(t, c, versionTag("g", 1))
	v, reason, err := c.Lookup(versionTag("g", 1).Ref())
	must(t, err)
	eq(t, reason, LookupHit, "hit")
	store(t, c, versionTag("g", 2))
	mu.Lock()
	clock.now = clock.now.Add(time.Hour)
	mu.Unlock()
	for i := 0; i < 3; i++ {
		_, err := c.CleanupExpired(now(), CleanupLimitMax)
		must(t, err)
	}
	_, ok, err := c.Current("g")
	must(t, err)
	eq(t, ok, false, "reclaimed")
	eq(t, v.UID(0), "v1", "the view still reads its body")
	eq(t, v.Tag().TagVersion, uint64(1), "and its fields")
	v.Release()
	must(t, c.Close())
	// A view taken before Close stays valid.
	c2 := newCache(t, 2, time.Minute, nil)
	store(t, c2, versionTag("g", 1))
	v, _, err = c2.Lookup(versionTag("g", 1).Ref())
	must(t, err)
	must(t, c2.Close())
	eq(t, v.UIDs(), []string{"v1"}, "after Close")
	v.Release()
}

// Cleanups race hits and stores on many channels: nothing breaks, hits
// only read whole bodies, and the counts add up once everything is cold.
func TestCleanupRacesHitsAndStores(t *testing.T) {
	var clockNs atomic.Int64
	clockNs.Store(time.Unix(1000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clockNs.Load()) }
	c := newCache(t, 2, time.Millisecond, now)
	l := newLeader(t, 2, time.Millisecond, now, "l")
	rounds := stressRounds()
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				channel := "g" + strconv.Itoa(i%16)
				v := uint64(i + 1)
				if _, _, err := c.Store(versionTag(channel, v)); err != nil {
					t.Error(err)
					return
				}
				if _, err := l.BuildEphemeralTag(BuildRequest{ChannelKey: channel, SubscriberMutationVersion: v}); err != nil {
					t.Error(err)
					return
				}
				view, reason, err := c.Lookup(versionTag(channel, v).Ref())
				if err != nil {
					t.Error(err)
					return
				}
				if view != nil {
					if n := view.Len(); n != 1 || view.UID(0) == "" {
						t.Errorf("a torn body: %d UIDs, reason %s", n, reason)
					}
					view.Release()
				}
				clockNs.Add(int64(time.Microsecond))
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := c.CleanupExpired(now(), 7); err != nil {
				t.Error(err)
				return
			}
			if _, err := l.CleanupExpired(now(), 7); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 2*rounds && !stop.Load(); i++ {
		time.Sleep(100 * time.Microsecond)
		cc, err := c.Counts()
		must(t, err)
		if cc.Stored+cc.Stale >= uint64(2*rounds) {
			break
		}
	}
	// Let the writers finish before stopping the cleaner.
	writersDone := make(chan struct{})
	go func() {
		for {
			cc, _ := c.Counts()
			if cc.Stored+cc.Stale >= uint64(2*rounds) {
				close(writersDone)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	<-writersDone
	stop.Store(true)
	wg.Wait()
	// Everything cold: full passes reclaim it all (hits of the current
	// tick are kept one more pass).
	clockNs.Add(int64(time.Hour))
	for i := 0; i < 8; i++ {
		clockNs.Add(int64(time.Second))
		for {
			page, err := c.CleanupExpired(now(), CleanupLimitMax)
			must(t, err)
			if page.Wrapped {
				break
			}
		}
		for {
			page, err := l.CleanupExpired(now(), CleanupLimitMax)
			must(t, err)
			if page.Wrapped {
				break
			}
		}
	}
	cc, err := c.Counts()
	must(t, err)
	eq(t, [2]uint64{cc.Tags, cc.UIDs}, [2]uint64{0, 0}, "cache holds nothing")
	n, err := c.Len()
	must(t, err)
	eq(t, n, 0, "no channel linked")
	lc, err := l.Counts()
	must(t, err)
	eq(t, lc.Tags, uint64(0), "leader holds nothing")
	if lc.ReclaimedBodies != uint64(2*rounds) {
		t.Fatalf("leader reclaimed %d of %d", lc.ReclaimedBodies, 2*rounds)
	}
}

// Builds and membership commits of one channel race: every change lands
// once, the key never changes, and the version counts them.
func TestLeaderBuildsRaceMutations(t *testing.T) {
	l := newLeader(t, 1, time.Minute, nil, "l")
	const channel = "group:m"
	first := build(t, l, BuildRequest{ChannelKey: channel, SubscriberMutationVersion: 1})
	rounds := stressRounds() / 10
	var store atomic.Uint64
	store.Store(1)
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				m, err := l.BeginMutation(channel)
				if err != nil {
					t.Error(err)
					return
				}
				if err := m.Add(uint64(w+1), "u"+strconv.Itoa(w)+"-"+strconv.Itoa(i)); err != nil {
					t.Error(err)
					return
				}
				res, tag, err := m.Commit(store.Add(1))
				if err != nil || (res != MutationApplied && res != MutationAlreadyCurrent) || tag.Key != first.Key {
					t.Errorf("commit: %v %v %q", res, err, tag.Key)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	dirty, err := l.IsDirty(channel)
	must(t, err)
	eq(t, dirty, false, "every mutation committed")
	v, err := l.Usable(channel, 0)
	must(t, err)
	ref := v.Ref()
	v.Release()
	eq(t, ref.TagKey, first.Key, "key kept")
	if ref.TagVersion < 2 || ref.TagVersion > uint64(1+3*rounds) {
		t.Fatalf("version %d after %d commits", ref.TagVersion, 3*rounds)
	}
}
