package mqttsession

// The owner's inline protocol (the futex shape): Begin and Done run as the
// host's own atomic operations on the owner's state word, crossing into the
// library only on the slow path. The layout below is the library's
// (wkcore::owner::host, WK_OWNER_WORD_* in wkcore.h): the cgo build checks
// every constant against the header at compile time and the library's layout
// version at start (owners_cgo.go). The code is plain Go over *uint64, so it
// runs on any words: the library's in the cgo build.

import (
	"math/bits"
	"sync/atomic"
	_ "unsafe" // go:linkname

	"github.com/wukongim/wkcore/go/mqttsession/internal/tsc"
)

// nanotime is the Go runtime's monotonic clock: CLOCK_MONOTONIC in
// nanoseconds on Linux, the clock of a hosted registry without an invariant
// TSC (WK_OWNER_CLOCK_MONOTONIC). (runtime.nanotime is one of the runtime
// functions kept linkable for outside packages.)
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// hostClock is a registry clock the host reads itself: the manual clock's
// word, the time-stamp counter scaled as the library publishes
// (((tsc-origin)*mul)>>32), or the monotonic clock.
type hostClock struct {
	word   *uint64 // clockWord: the reading
	origin uint64  // clockTSC
	mul    uint64  // clockTSC
	kind   uint8
}

// Clock kinds (WK_OWNER_CLOCK_*).
const (
	clockPrivate   = 0 // not readable by the host: every Begin crosses
	clockMonotonic = 1
	clockWord      = 2
	clockTSC       = 3
)

// now is the clock's reading: the library's own formula for each kind.
func (c *hostClock) now() uint64 {
	switch c.kind {
	case clockTSC:
		t := tsc.Read()
		if t <= c.origin {
			return 0
		}
		hi, lo := bits.Mul64(t-c.origin, c.mul)
		return hi<<32 | lo>>32
	case clockWord:
		return atomic.LoadUint64(c.word)
	}
	return uint64(nanotime())
}

// The state word's layout, version wordLayoutVersion.
const (
	wordLayoutVersion          = 1
	wordOpsMask         uint64 = 0x7ff  // admitted scopes (the lowest bits: +1 admits one)
	wordStageMask       uint64 = 0x1800 // the stage
	wordStageActive     uint64 = 0x1000 // the only stage that admits
	wordStageClosing    uint64 = 0x1800 // fenced
	wordTransportClosed uint64 = 0x4000 // the close callback succeeded
	wordComplete        uint64 = 0x8000 // retired (or an uncertain owner's barrier)
	// A done whose new word n has n&wordRetireMask == wordRetireValue would
	// retire the owner (the last scope of a closing owner whose transport is
	// closed): that transition is the library's alone.
	wordRetireMask  = wordStageMask | wordTransportClosed | wordComplete | wordOpsMask
	wordRetireValue = wordStageClosing | wordTransportClosed
	// gaugeRows is the number of host rows of the operation gauge.
	gaugeRows = 64
)

// hostWords is what the inline path of one owner touches: the registry's
// stopped word, the owner's state and lease words, and the owner's gauge row
// (begun, then ended). Every pointer is the library's memory, valid while
// the owner's handle lives.
type hostWords struct {
	stopped *uint64
	state   *uint64
	lease   *uint64
	begun   *uint64
	ended   *uint64
	maxOps  uint64
}

// Orderings: Go's atomics are sequentially consistent, at least the
// library's Acquire loads and AcqRel CASes. The stopped load pairs with the
// library's Release store in stop_admission; the state word's CASes with the
// library's CASes on the same word (fences, the close, the retiring end);
// the lease load, made after the state load, with the Release store an
// activation or renewal makes before it bumps the lease sequence in the
// word, so the lease read is at least as new as the word CASed from. The
// gauge adds are statistics (the library sums ended, then begun).

// inlineBegin admits one scope, the library's begin step for step: stopped,
// the stage, the lease against the clock (read after the state word, as the
// library does), the bound, then the CAS. False means "take the slow path"
// (the library decides again and answers the refusal); nothing changed.
func inlineBegin(h *hostWords, clock *hostClock) bool {
	if atomic.LoadUint64(h.stopped) != 0 {
		return false
	}
	s := atomic.LoadUint64(h.state)
	for {
		if s&wordStageMask != wordStageActive {
			return false
		}
		lease := atomic.LoadUint64(h.lease)
		if clock.now() >= lease {
			return false
		}
		if s&wordOpsMask >= h.maxOps {
			return false
		}
		if atomic.CompareAndSwapUint64(h.state, s, s+1) {
			atomic.AddUint64(h.begun, 1)
			return true
		}
		s = atomic.LoadUint64(h.state)
	}
}

// inlineEnd ends one admitted scope unless that end would retire the owner
// (or no scope is counted, which only a broken caller causes): false means
// "take the slow path" (wk_owner_scope_end), and nothing changed. The
// caller's once-only done flag comes first.
func inlineEnd(h *hostWords) bool {
	s := atomic.LoadUint64(h.state)
	for {
		if s&wordOpsMask == 0 || (s-1)&wordRetireMask == wordRetireValue {
			return false
		}
		if atomic.CompareAndSwapUint64(h.state, s, s-1) {
			atomic.AddUint64(h.ended, 1)
			return true
		}
		s = atomic.LoadUint64(h.state)
	}
}
