package multiraft

import "sync/atomic"

// The hosted slot's words and their bits: the library's layout (the C
// header's WK_SLOT_WORD_* constants; the cgo build checks these against it at
// compile time and the layout version at start), and the host's own bits
// above WK_SLOT_WORD_HOST_SHIFT.
const (
	wordsLayoutVersion = 1

	countBits  = 27
	countMask  = 1<<countBits - 1
	bgShift    = countBits
	leaderBit  = uint64(1) << 54
	closedBit  = uint64(1) << 55
	fatalBit   = uint64(1) << 56
	ccPending  = uint64(1) << 57
	hostShift  = 58
	fatalFound = uint64(1) << 32

	// The host's bits. ringShift..+5: the field k of the value storage's
	// generation in use, whose capacity is 1<<(k-1) (k >= 1). handleClosed:
	// Close ran; every call that starts after it returns ErrHandleClosed.
	ringShift    = hostShift
	ringBits     = 31
	handleClosed = uint64(1) << 63

	// refuseFast are the bits that send an admission off the fast path:
	// everything but the leader bit must be clear and the leader bit set.
	refuseFast = leaderBit | closedBit | fatalBit | handleClosed
)

// slotWords are the words a slot's admission decides on (docs/ABI.md,
// "Hosted slots"): in the library's memory in the cgo build, in Go's in the
// pure-Go build. The engine runs the same transitions on them in both.
type slotWords struct {
	state, releasedView, releasedBgView         *atomic.Uint64
	released, releasedBg, releasedOther         *atomic.Uint64
	admittedOther, committedOther, configSerial *atomic.Uint64
	fatalCode                                   *atomic.Uint64
	// outcomes: refused proposals by [class][result] (ok, busy, throttled,
	// not leader); the ok cells hold the highest ok count reported.
	outcomes *[2][4]atomic.Uint64
}

// goWords is the pure-Go build's memory for the words: the producers', the
// consumer's and the cold ones each on their own cache line, as the
// library's.
type goWords struct {
	state, releasedView, releasedBgView atomic.Uint64
	_                                   [40]byte
	released, releasedBg, releasedOther atomic.Uint64
	_                                   [40]byte
	admittedOther, committedOther       atomic.Uint64
	configSerial, fatalCode             atomic.Uint64
	outcomes                            [2][4]atomic.Uint64
}

func (g *goWords) words() slotWords {
	return slotWords{
		state: &g.state, releasedView: &g.releasedView, releasedBgView: &g.releasedBgView,
		released: &g.released, releasedBg: &g.releasedBg, releasedOther: &g.releasedOther,
		admittedOther: &g.admittedOther, committedOther: &g.committedOther,
		configSerial: &g.configSerial, fatalCode: &g.fatalCode, outcomes: &g.outcomes,
	}
}

// queuedOf is admitted - released on the modular counters.
func queuedOf(admitted, released uint64) uint64 { return (admitted - released) & countMask }

// ringField is the host's storage field k of a state word.
func ringField(w uint64) uint64 { return (w >> ringShift) & ringBits }

// admitWord is w after admitting n items (bg: background proposals; cc: a
// config change, which sets the pending bit). Each counter wraps within its
// own bits.
func admitWord(w, n uint64, bg, cc bool) uint64 {
	next := w&^countMask | (w+n)&countMask
	if bg {
		b := (w>>bgShift + n) & countMask
		next = next&^(countMask<<bgShift) | b<<bgShift
	}
	if cc {
		next |= ccPending
	}
	return next
}

// orWord sets bits of the state word and returns the word it replaced.
func orWord(a *atomic.Uint64, bits uint64) uint64 {
	for {
		w := a.Load()
		if w&bits == bits || a.CompareAndSwap(w, w|bits) {
			return w
		}
	}
}

// andNotWord clears bits of the state word and returns the word it replaced.
func andNotWord(a *atomic.Uint64, bits uint64) uint64 {
	for {
		w := a.Load()
		if w&bits == 0 || a.CompareAndSwap(w, w&^bits) {
			return w
		}
	}
}

// maxWord raises a to at least v and returns the result.
func maxWord(a *atomic.Uint64, v uint64) uint64 {
	for {
		cur := a.Load()
		if cur >= v {
			return cur
		}
		if a.CompareAndSwap(cur, v) {
			return v
		}
	}
}

// released are the consumer's counters as one reader loaded them, the total
// first.
type released struct{ total, bg, other uint64 }

func (ws slotWords) loadReleased() released {
	return released{ws.released.Load(), ws.releasedBg.Load(), ws.releasedOther.Load()}
}

func satSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// snapshot is the library's slot snapshot (wk_slot_state_get), on the same words: depths exact
// for the state word it reports, read between two equal loads of the
// released counters.
func (ws slotWords) snapshot() SlotState {
	rel := ws.loadReleased()
	var w, co uint64
	for {
		co = ws.committedOther.Load()
		w = ws.state.Load()
		again := ws.loadReleased()
		if again == rel {
			break
		}
		rel = again
	}
	qt := queuedOf(w, rel.total)
	s := SlotState{
		Queued:              int(qt),
		QueuedProposals:     int(satSub(qt, satSub(co, rel.other))),
		QueuedBackground:    int(queuedOf(w>>bgShift, rel.bg)),
		Leader:              w&leaderBit != 0,
		Closed:              w&closedBit != 0,
		Failed:              w&fatalBit != 0,
		ConfigChangePending: w&ccPending != 0,
	}
	return s
}

// counters are the library's outcome counts (wk_slot_counters_get) on the same words: ok derived
// from the admitted counters, kept monotonic in the ok cells.
func (ws slotWords) counters() AdmissionCounters {
	rel := ws.loadReleased()
	w := ws.state.Load()
	other := ws.admittedOther.Load()
	admitted := rel.total + queuedOf(w, rel.total)
	admittedBg := rel.bg + queuedOf(w>>bgShift, rel.bg)
	ok := [2]uint64{satSub(satSub(admitted, admittedBg), other), admittedBg}
	var t [2][4]uint64
	for c := range t {
		t[c][0] = maxWord(&ws.outcomes[c][0], ok[c])
		for i := 1; i < 4; i++ {
			t[c][i] = ws.outcomes[c][i].Load()
		}
	}
	return countersOf(&t)
}
