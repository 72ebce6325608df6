//go:build cgo && !wkcore_purego

package deliverytag

// The inline hit against the library's look-up, on the same channel: the
// Rust path (wk_tag_cache_lookup, the crossing every look-up made before the
// inline path) is the specification, and the Go path (hotFind: the held
// snapshot, the generation word, the fence in Go) must answer the same.

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// rustLookup is the library's look-up of r (the crossing): its reason and
// the version of the body it answers with (0: none).
func rustLookup(t *testing.T, c *Cache, r *TagRef) (LookupReason, uint64) {
	v, reason, err := lookupView(onCache, unsafe.Pointer(c.p), r)
	if err != nil {
		t.Error(err)
		return "", 0
	}
	if v == nil {
		return reason, 0
	}
	defer v.Release()
	if got, want := v.UID(0), "v"+strconv.FormatUint(v.TagVersion(), 10); got != want {
		t.Errorf("rust body: uid %q with version %d", got, v.TagVersion())
	}
	return reason, v.TagVersion()
}

// goLookup is the inline look-up of r: its reason and body version.
func goLookup(t *testing.T, c *Cache, r *TagRef) (LookupReason, uint64) {
	s, reason, err := c.hotFind(r.ChannelKey, r, true)
	if err != nil {
		t.Error(err)
		return "", 0
	}
	if s == nil {
		return reason, 0
	}
	v := hotView(s)
	if got, want := v.UID(0), "v"+strconv.FormatUint(s.b.tagVersion, 10); got != want {
		t.Errorf("go body: uid %q with version %d (a torn snapshot)", got, s.b.tagVersion)
	}
	return reason, s.b.tagVersion
}

// expectReason is the fence of a request at version want against a body at
// version have (key, subscriber version and topology equal otherwise).
func expectReason(want, have uint64) LookupReason {
	switch {
	case have == 0:
		return LookupMissingRef
	case want < have:
		return LookupStaleRequest
	case want > have:
		return LookupNewerRequest
	}
	return LookupHit
}

// Stores race look-ups: every Go look-up sits between two Rust look-ups
// of the same request, so its body's version lies between theirs (stores
// only move forward), it equals their answer whenever they agree, and its
// reason is the fence of its own body. At the end, with nothing racing,
// both paths answer every request the same, and every look-up was counted
// once.
func TestInlineHitMatchesTheLibraryUnderStores(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	const channel = "group:diff"
	rounds := uint64(stressRounds())
	ref := func(v uint64) TagRef {
		r := versionTag(channel, v).Ref()
		return r
	}
	var latest atomic.Uint64
	var done atomic.Bool
	var lookups atomic.Uint64
	var wg sync.WaitGroup
	// Two writers, one of them through a Channel handle: every version, in
	// order (a refused store is one already passed).
	ch, err := c.Channel(channel)
	must(t, err)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for v := uint64(1); v <= rounds; v++ {
				var err error
				if w == 0 {
					_, _, err = c.Store(versionTag(channel, v))
				} else {
					_, _, err = ch.Store(versionTag(channel, v))
				}
				if err != nil {
					t.Error(err)
					return
				}
				for {
					l := latest.Load()
					if l >= v || latest.CompareAndSwap(l, v) {
						break
					}
				}
			}
		}(w)
	}
	var readers sync.WaitGroup
	for g := 0; g < 3; g++ {
		readers.Add(1)
		go func(g int) {
			defer readers.Done()
			for i := 0; !done.Load() && i < 4*int(rounds); i++ {
				// Requests near the newest version: hits, stale and newer ones.
				want := latest.Load() + uint64(i%3) - 1
				r := ref(want)
				r1, v1 := rustLookup(t, c, &r)
				rg, vg := goLookup(t, c, &r)
				r2, v2 := rustLookup(t, c, &r)
				lookups.Add(3)
				if vg < v1 || vg > v2 {
					t.Errorf("request %d: go body %d outside the rust bodies %d..%d", want, vg, v1, v2)
					return
				}
				if v1 == v2 && (rg != r1 || rg != r2) {
					t.Errorf("request %d at body %d: go %s, rust %s / %s", want, v1, rg, r1, r2)
					return
				}
				if e := expectReason(want, vg); rg != e {
					t.Errorf("request %d on body %d: go %s, the fence says %s", want, vg, rg, e)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	done.Store(true)
	readers.Wait()
	if t.Failed() {
		return
	}
	// Quiescent: every request, both paths, the same answer.
	for want := uint64(0); want <= rounds+1; want += 1 + rounds/64 {
		r := ref(want)
		rr, vr := rustLookup(t, c, &r)
		rg, vg := goLookup(t, c, &r)
		lookups.Add(2)
		eq(t, [2]any{rg, vg}, [2]any{rr, vr}, "request", want)
		eq(t, vr, rounds, "the newest body")
	}
	counts, err := c.Counts()
	must(t, err)
	var total uint64
	for _, n := range counts.Lookups {
		total += n
	}
	eq(t, total, lookups.Load(), "look-ups counted (library and host rows)")
}

// Cleanups race look-ups and stores: the inline path never answers with a
// torn or reclaimed-and-freed body (its view keeps what it reads), and once
// the racing stops both paths agree again, for a channel that was retired
// and stored anew as well.
func TestInlineHitMatchesTheLibraryUnderCleanups(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Unix(1_000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	c := newCache(t, 2, time.Second, now)
	const channel = "group:diff-cleanup"
	rounds := stressRounds()
	var stored atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for v := uint64(1); v <= uint64(rounds); v++ {
			if _, _, err := c.Store(versionTag(channel, v)); err != nil {
				t.Error(err)
				return
			}
			stored.Store(v)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			// Two seconds per page: whatever was not stored since is cold.
			at := clock.Add(int64(2 * time.Second))
			if _, err := c.CleanupExpired(time.Unix(0, at), CleanupLimitMax); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 2*rounds; i++ {
			want := stored.Load()
			r := versionTag(channel, want).Ref()
			reason, v := goLookup(t, c, &r)
			if v == 0 && reason != LookupMissingRef || v != 0 && reason != expectReason(want, v) {
				t.Errorf("request %d: %s on body %d", want, reason, v)
				return
			}
		}
	}()
	wg.Wait()
	// Reclaim everything, then store anew: a retired cell's state is
	// replaced, and both paths agree. A body hit in the tick that was still
	// current when the threads stopped has that tick's end as its bound, and
	// the tick ends only at the next cleanup: reclamation may come one tick
	// and one cleanup interval after the TTL (docs/TAG.md), so two passes,
	// each past the TTL, reclaim every body whatever the interleaving was.
	for pass := 0; pass < 2; pass++ {
		clock.Add(int64(10 * time.Second))
		for {
			page, err := c.CleanupExpired(now(), CleanupLimitMax)
			must(t, err)
			if page.Wrapped {
				break
			}
		}
	}
	r := versionTag(channel, 7).Ref()
	rr, vr := rustLookup(t, c, &r)
	rg, vg := goLookup(t, c, &r)
	eq(t, [2]any{rg, vg}, [2]any{rr, vr}, "reclaimed")
	eq(t, rg, LookupMissingRef, "reclaimed")
	store(t, c, versionTag(channel, 7))
	for i := 0; i < 3; i++ {
		rr, vr = rustLookup(t, c, &r)
		rg, vg = goLookup(t, c, &r)
		eq(t, [2]any{rg, vg}, [2]any{rr, vr}, "stored anew")
		eq(t, rg, LookupHit, "stored anew")
	}
}

// The held state follows the library: a hit is inline once the snapshot is
// held (the generation word unchanged), a store makes the next look-up
// cross once, a retired cell's state leaves the index at the next sweep.
func TestInlineStateFollowsTheCell(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Unix(1_000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	c := newCache(t, 2, time.Second, now)
	const channel = "group:held"
	store(t, c, versionTag(channel, 1))
	r := versionTag(channel, 1).Ref()
	held := func() *hotSnap {
		e, ok := c.hot.m.Load(channel)
		if !ok {
			return nil
		}
		return e.snap.Load()
	}
	eq(t, held() == nil, true, "nothing held before a look-up")
	reason, err := c.Check(r)
	must(t, err)
	eq(t, reason, LookupHit, "first")
	s := held()
	if s == nil {
		t.Fatal("the first look-up holds the snapshot")
	}
	for i := 0; i < 3; i++ {
		v, reason, err := c.Lookup(r)
		must(t, err)
		eq(t, reason, LookupHit, "inline")
		eq(t, v == &s.v, true, "the held snapshot's view")
		v.Release()
	}
	store(t, c, versionTag(channel, 2))
	reason, err = c.Check(r)
	must(t, err)
	eq(t, reason, LookupStaleRequest, "after a store")
	if s2 := held(); s2 == nil || s2 == s || s2.b.tagVersion != 2 {
		t.Fatal("the crossing holds the new snapshot")
	}
	// The sweep drops a replaced snapshot and unlinks a retired cell.
	clock.Add(int64(5 * time.Second))
	page, err := c.CleanupExpired(now(), CleanupLimitMax)
	must(t, err)
	eq(t, page.Reclaimed, 1, "reclaimed")
	if _, ok := c.hot.m.Load(channel); ok {
		t.Fatal("the retired cell's state is still indexed")
	}
	reason, err = c.Check(r)
	must(t, err)
	eq(t, reason, LookupMissingRef, "retired")
}

// The index of held states: inserts past several growths, removals leave
// tombstones that later inserts reuse, compare-and-swap and -delete act only
// on the entry named.
func TestHotMap(t *testing.T) {
	var m hotMap
	if _, ok := m.Load("none"); ok {
		t.Fatal("an empty map found a key")
	}
	states := map[string]*hotChan{}
	for i := 0; i < 1000; i++ {
		k := "ch-" + strconv.Itoa(i)
		h := &hotChan{key: k}
		got, loaded := m.LoadOrStore(h)
		eq(t, [2]any{got == h, loaded}, [2]any{true, false}, "stored", k)
		states[k] = h
	}
	for k, h := range states {
		got, ok := m.Load(k)
		eq(t, [2]any{got == h, ok}, [2]any{true, true}, "found", k)
		again, loaded := m.LoadOrStore(&hotChan{key: k})
		eq(t, [2]any{again == h, loaded}, [2]any{true, true}, "kept", k)
	}
	for i := 0; i < 1000; i += 2 {
		k := "ch-" + strconv.Itoa(i)
		eq(t, m.CompareAndDelete(k, &hotChan{key: k}), false, "deleted another", k)
		eq(t, m.CompareAndDelete(k, states[k]), true, "deleted", k)
		eq(t, m.CompareAndDelete(k, states[k]), false, "deleted twice", k)
		if _, ok := m.Load(k); ok {
			t.Fatal("found a deleted key", k)
		}
	}
	for i := 1; i < 1000; i += 2 {
		k := "ch-" + strconv.Itoa(i)
		next := &hotChan{key: k}
		eq(t, m.CompareAndSwap(k, next, next), false, "swapped another", k)
		eq(t, m.CompareAndSwap(k, states[k], next), true, "swapped", k)
		got, ok := m.Load(k)
		eq(t, [2]any{got == next, ok}, [2]any{true, true}, "the swapped one", k)
	}
	// Tombstones are reused and cleared by growth: many more rounds of
	// insert-and-delete leave the table bounded.
	for i := 0; i < 20000; i++ {
		k := "churn-" + strconv.Itoa(i)
		h := &hotChan{key: k}
		m.LoadOrStore(h)
		m.CompareAndDelete(k, h)
	}
	if n := len(m.t.Load().slots); n > 4096 {
		t.Fatalf("%d slots for 500 live keys", n)
	}
}

// The floors beside BenchmarkTagLookupHit (cgo build): "atomic" is the
// inline hit's own shared-memory cost (an acquire load of a word in the
// library's memory and a counter add), "crossing" the cheapest cgo call
// (wk_tag_hot_layout_version), and "crossing-lookup" the hit as one crossing
// per look-up (wk_tag_cache_lookup with a view), the shape the inline path
// replaced.
func BenchmarkTagHitFloor(b *testing.B) {
	c, err := NewCache(CacheOptions{LocalNodeID: 2, TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	tag := benchTag(0)
	if _, ok, err := c.Store(tag); err != nil || !ok {
		b.Fatal(ok, err)
	}
	ref := tag.Ref()
	if _, reason, err := c.hotFind(ref.ChannelKey, &ref, true); err != nil || reason != LookupHit {
		b.Fatal(reason, err)
	}
	h, _ := c.hot.m.Load(ref.ChannelKey)
	b.Run("atomic", func(b *testing.B) {
		b.ReportAllocs()
		var sink uint64
		for i := 0; i < b.N; i++ {
			sink += atomic.LoadUint64(h.word)
			h.count(LookupHit)
		}
		_ = sink
	})
	b.Run("crossing", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hotLayoutVersionOfLibrary()
		}
	})
	b.Run("crossing-lookup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			v, reason, err := lookupView(onCache, unsafe.Pointer(c.p), &ref)
			if err != nil || reason != LookupHit || v.UID(0) == "" {
				b.Fatal(reason, err)
			}
			v.Release()
		}
	})
	runtime.KeepAlive(c)
}

// A library of another inline-hit layout stops the package at start,
// naming both layouts; the linked one passes.
func TestHotLayoutIsChecked(t *testing.T) {
	hotLayoutCheck(hotLayoutVersionOfLibrary())
	defer func() {
		msg, _ := recover().(string)
		if msg != "deliverytag: the linked libwkcore.a has inline-hit layout 2, this package was built for 1: "+
			"rebuild the library (scripts/go-lib) and this package from one checkout" {
			t.Fatalf("got %q", msg)
		}
	}()
	hotLayoutCheck(hotLayoutVersion + 1)
}
