//go:build cgo && !wkcore_purego

package deliverytag

// The C blocks a write hands the library are built with Go's typed stores
// (tagIn, buildIn): a store of a pointer field runs Go's write barrier
// while a collection marks, and the barrier reads the word it overwrites
// and marks what it points at. So the block must hold no word a collector
// could take for a Go pointer before the first store: fresh malloc memory
// holds whatever its last user left (a copy of a Go string's address from
// another system's request, say), and a stale Go address there made the
// collector mark a freed object ("found pointer to free object", "found bad
// pointer in Go heap"). A block is zeroed memory.

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A block comes back zeroed even when the allocator hands out memory its
// last user filled (the same size, on the same thread: glibc's cache is
// LIFO): no word the first typed store overwrites is anything but zero.
func TestCBlockIsZeroedMemory(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tag := versionTag("group:zero", 1)
	parts := localParts(&tag, 2)
	for i := 0; i < 64; i++ {
		poisonTagIn(&tag, parts, ^uintptr(0)-uintptr(i))
		for off, b := range tagInBytes(&tag, parts) {
			if b != 0 {
				t.Fatalf("round %d: byte %d of a fresh C block is %#x, not zero", i, off, b)
			}
		}
	}
}

// The crash itself: stores whose C blocks come from memory that holds a
// word no Go pointer can be (the runtime's own clobbered-word pattern,
// which its pointer check always reports), while collections mark. With
// malloc'd blocks this died within a few hundred stores ("found bad pointer
// in Go heap", in cblock.partitions); a stale address of a freed Go object
// left there by another call made the soak die the same way, or with
// "found pointer to free object". The rounds are bounded; the outcome does
// not depend on timing.
func TestStoreOverStaleWordsInCMemory(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	// A live heap of pointers, so that each collection marks for a while.
	live := make([]*[8]uintptr, 1<<16)
	for i := range live {
		live[i] = new([8]uintptr)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			runtime.GC()
		}
	}()
	const clobbered = uintptr(0xdeaddeaddeaddead)
	runtime.LockOSThread()
	rounds := 2000
	if testing.Short() {
		rounds = 500
	}
	if debugBuild { // every C call collects: the stale words are checked at each
		rounds = 200
	}
	for i := 0; i < rounds; i++ {
		tag := versionTag("group:stale", uint64(i+1))
		poisonTagIn(&tag, localParts(&tag, 2), clobbered)
		if _, _, err := c.Store(tag); err != nil {
			t.Fatal(err)
		}
	}
	runtime.UnlockOSThread()
	done.Store(true)
	wg.Wait()
	runtime.KeepAlive(live)
}

// A replaced snapshot's Go memory goes in the first collection that finds
// it unreachable: only the word that owns its view waits for a finalizer.
// (With the finalizer on the snapshot, that collection kept the snapshot
// and all it reaches — its Go copy of the body and UIDs — one more cycle,
// for the finalizer: under churn the live heap grew with the store rate.)
func TestReplacedSnapshotsGoInOneCollection(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	const channel = "group:snaps"
	const rounds = 64
	uids := make([]string, 2048)
	for i := range uids {
		uids[i] = "uid-" + strconv.Itoa(i)
	}
	// No collection but the test's own: what one collection frees is
	// then exactly what the test asks about.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var base, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&base)
	for v := uint64(1); v <= rounds; v++ {
		tag := versionTag(channel, v)
		tag.Partitions[0].UIDs = uids
		if _, _, err := c.Store(tag); err != nil {
			t.Fatal(err)
		}
		// The look-up holds the new body's snapshot; CurrentRef makes its
		// Go copy (the UIDs too: tens of KiB of Go memory per snapshot).
		if _, reason, err := c.Lookup(tag.Ref()); err != nil || reason != LookupHit {
			t.Fatalf("version %d: %v %v", v, reason, err)
		}
		if _, _, err := c.CurrentRef(channel); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// 63 snapshots are replaced (over 2 MiB of copies); the current one
	// and the test's own garbage-free state remain.
	if grown := int64(after.HeapAlloc) - int64(base.HeapAlloc); grown > 1<<20 {
		t.Fatalf("one collection after %d replaced snapshots left the heap %d bytes larger: they were kept",
			rounds-1, grown)
	}
	runtime.KeepAlive(c)
}
