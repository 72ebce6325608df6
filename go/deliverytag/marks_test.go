package deliverytag

import (
	"sync/atomic"
	"testing"
)

// The access marks only grow: a hit that loaded an older tick, or a fetch by
// key that read the clock earlier, and that stores after a newer one, must
// not move the mark back (which would let a cleanup reclaim the body early).
// Both orders are replayed by hand.

func TestBodyTickMarkNeverMovesBack(t *testing.T) {
	b := &body{}
	b.touch(3)
	b.touch(2) // a reader that loaded tick 2 marks after the reader of tick 3
	if got := b.touched.Load(); got != 3 {
		t.Fatalf("mark %d after hits in ticks 3 then 2, want 3", got)
	}
	b.touch(4)
	if got := b.touched.Load(); got != 4 {
		t.Fatalf("mark %d after a hit in tick 4, want 4", got)
	}
}

func TestBodyLastAccessNeverMovesBack(t *testing.T) {
	b := &body{}
	b.lastAccess.Store(500)
	raiseInt64(&b.lastAccess, 100) // fetched at 100, stored after the fetch at 500
	if got := b.lastAccess.Load(); got != 500 {
		t.Fatalf("last access %d, want 500", got)
	}
	raiseInt64(&b.lastAccess, 900)
	if got := b.lastAccess.Load(); got != 900 {
		t.Fatalf("last access %d, want 900", got)
	}
}

func TestRaiseUint64(t *testing.T) {
	var w uint64 = 3
	raiseUint64(&w, 2)
	if atomic.LoadUint64(&w) != 3 {
		t.Fatalf("raised to %d, want 3", w)
	}
	raiseUint64(&w, 7)
	if atomic.LoadUint64(&w) != 7 {
		t.Fatalf("raised to %d, want 7", w)
	}
}
