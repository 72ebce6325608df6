package coord

// The coordination words: Flip, Counter, ExclusiveTrigger, WindowedCounter,
// one atomic word each (docs/COORD.md, "Words"). With cgo they are the Rust
// core's wk_flip, wk_counter, wk_exclusive_trigger and wk_windowed_counter
// (words_cgo.go); without, the sync/atomic implementations below
// (words_purego.go), which are also compiled in the cgo build so that the
// tests put both side by side. Both make the same transitions on the same
// word layout:
//
//   - Flip: a host-chosen state; Flip(from, to) is one CAS, true for the one
//     caller that moved it (from == to flips nothing).
//   - Counter: Increment is one fetch-add and returns the new value (unique
//     to its caller; it wraps at 2^64).
//   - ExclusiveTrigger: {run number (63 bits), active (1 bit)}. Trigger moves
//     "inactive, last run N" to "run N+1 active" in one CAS; while a run is
//     active every other Trigger is refused with a BusyError naming it.
//     Finish(run) ends the run only for the run that holds the key. Run
//     numbers go up to RunMax; after it Trigger is ErrExhausted (no wrap).
//   - WindowedCounter: {window end (44 bits), count (20 bits)}. Increment(now,
//     window) opens a new window (count 1, ending now+window) when now is at
//     or past the end, else adds one (saturating at WindowCountMax) and
//     returns the new count; Count(now) is 0 once the window has ended. A
//     window of 0, or now+window above WindowTimeMax, is ErrInvalidTime.
//
// Every method is safe for concurrent use, Close included, as the ledgers'
// (doc.go, "Handles"): after Close, and on a nil or zero-value handle, every
// method returns ErrHandleClosed and zero values.

import (
	"errors"
	"strconv"
	"sync/atomic"
)

// The limits of the words (the C header's WK_WINDOW_TIME_MAX and
// WK_WINDOW_COUNT_MAX; the run numbers' 2^63-1 of wk_trigger_result).
const (
	// WindowTimeMax is the latest window end a WindowedCounter holds (2^44-1):
	// Increment refuses now+window above it (ErrInvalidTime).
	WindowTimeMax uint64 = 1<<44 - 1
	// WindowCountMax is the largest count of a WindowedCounter (2^20-1);
	// increments beyond it saturate.
	WindowCountMax uint32 = 1<<20 - 1
	// RunMax is the last run number of an ExclusiveTrigger (2^63-1). A
	// trigger created with a larger last run starts at RunMax.
	RunMax uint64 = 1<<63 - 1
)

var (
	// ErrBusy is what ExclusiveTrigger.Trigger's BusyError matches
	// (errors.Is): another run holds the key. It is a decision, not a
	// refused argument: it does not match ErrInvalidArgument.
	ErrBusy = errors.New("coord: trigger busy")
	// ErrExhausted is returned by ExclusiveTrigger.Trigger once run RunMax
	// has started: the run numbers are used up (they never wrap).
	ErrExhausted = errors.New("coord: trigger run numbers exhausted")
)

// BusyError is ExclusiveTrigger.Trigger's refusal while run Run is active:
// Run is the run that holds the key (the one a refused caller may wait for or
// report). It matches ErrBusy (errors.Is); errors.As retrieves it.
type BusyError struct {
	Run uint64
}

// Error returns "coord: trigger busy: run N is active".
func (e BusyError) Error() string {
	return "coord: trigger busy: run " + strconv.FormatUint(e.Run, 10) + " is active"
}

// Is reports whether target is ErrBusy.
func (e BusyError) Is(target error) bool { return target == ErrBusy }

// checkWindow refuses a window of 0 and a window that would end after
// WindowTimeMax (overflow included), as the C ABI.
func checkWindow(now, window uint64) error {
	if window == 0 || now > WindowTimeMax || window > WindowTimeMax-now {
		return errInvalidTime
	}
	return nil
}

// atomicFlip is the sync/atomic implementation of Flip.
type atomicFlip struct {
	closed atomic.Bool
	state  atomic.Uint64
}

func newAtomicFlip(state uint64) *atomicFlip {
	f := new(atomicFlip)
	f.state.Store(state)
	return f
}

func (f *atomicFlip) open() bool { return f != nil && !f.closed.Load() }

func (f *atomicFlip) Flip(from, to uint64) (bool, error) {
	if !f.open() {
		return false, ErrHandleClosed
	}
	if from == to {
		return false, nil
	}
	return f.state.CompareAndSwap(from, to), nil
}

func (f *atomicFlip) Get() (uint64, error) {
	if !f.open() {
		return 0, ErrHandleClosed
	}
	return f.state.Load(), nil
}

func (f *atomicFlip) Close() error {
	if f == nil || !f.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// atomicCounter is the sync/atomic implementation of Counter.
type atomicCounter struct {
	closed atomic.Bool
	value  atomic.Uint64
}

func newAtomicCounter(value uint64) *atomicCounter {
	c := new(atomicCounter)
	c.value.Store(value)
	return c
}

func (c *atomicCounter) open() bool { return c != nil && !c.closed.Load() }

func (c *atomicCounter) Increment() (uint64, error) {
	if !c.open() {
		return 0, ErrHandleClosed
	}
	return c.value.Add(1), nil
}

func (c *atomicCounter) Get() (uint64, error) {
	if !c.open() {
		return 0, ErrHandleClosed
	}
	return c.value.Load(), nil
}

func (c *atomicCounter) Close() error {
	if c == nil || !c.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// triggerActive is the active bit of an ExclusiveTrigger's word; the run
// number is the 63 bits above it.
const triggerActive uint64 = 1

// atomicTrigger is the sync/atomic implementation of ExclusiveTrigger.
type atomicTrigger struct {
	closed atomic.Bool
	word   atomic.Uint64
}

func newAtomicTrigger(lastRun uint64) *atomicTrigger {
	t := new(atomicTrigger)
	t.word.Store(min(lastRun, RunMax) << 1)
	return t
}

func (t *atomicTrigger) open() bool { return t != nil && !t.closed.Load() }

func (t *atomicTrigger) Trigger() (uint64, error) {
	if !t.open() {
		return 0, ErrHandleClosed
	}
	for {
		w := t.word.Load()
		run := w >> 1
		if w&triggerActive != 0 {
			return 0, BusyError{Run: run}
		}
		if run == RunMax {
			return 0, ErrExhausted
		}
		if t.word.CompareAndSwap(w, (run+1)<<1|triggerActive) {
			return run + 1, nil
		}
	}
}

func (t *atomicTrigger) Finish(run uint64) (bool, error) {
	if !t.open() {
		return false, ErrHandleClosed
	}
	if run == 0 || run > RunMax {
		return false, nil
	}
	return t.word.CompareAndSwap(run<<1|triggerActive, run<<1), nil
}

func (t *atomicTrigger) Active() (uint64, error) {
	if !t.open() {
		return 0, ErrHandleClosed
	}
	if w := t.word.Load(); w&triggerActive != 0 {
		return w >> 1, nil
	}
	return 0, nil
}

func (t *atomicTrigger) LastRun() (uint64, error) {
	if !t.open() {
		return 0, ErrHandleClosed
	}
	return t.word.Load() >> 1, nil
}

func (t *atomicTrigger) Close() error {
	if t == nil || !t.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// The fields of a WindowedCounter's word: the window end in the high 44
// bits, the count in the low 20.
const (
	windowCountBits = 20
	windowCountMask = uint64(WindowCountMax)
)

// atomicWindowedCounter is the sync/atomic implementation of
// WindowedCounter.
type atomicWindowedCounter struct {
	closed atomic.Bool
	word   atomic.Uint64
}

func newAtomicWindowedCounter() *atomicWindowedCounter { return new(atomicWindowedCounter) }

func (c *atomicWindowedCounter) open() bool { return c != nil && !c.closed.Load() }

func (c *atomicWindowedCounter) Increment(now, window uint64) (uint32, error) {
	if !c.open() {
		return 0, ErrHandleClosed
	}
	if err := checkWindow(now, window); err != nil {
		return 0, err
	}
	for {
		w := c.word.Load()
		end, count := w>>windowCountBits, uint32(w&windowCountMask)
		if now >= end {
			end, count = now+window, 1
		} else if count < WindowCountMax {
			count++
		}
		if c.word.CompareAndSwap(w, end<<windowCountBits|uint64(count)) {
			return count, nil
		}
	}
}

func (c *atomicWindowedCounter) Count(now uint64) (uint32, error) {
	if !c.open() {
		return 0, ErrHandleClosed
	}
	w := c.word.Load()
	if now >= w>>windowCountBits {
		return 0, nil
	}
	return uint32(w & windowCountMask), nil
}

func (c *atomicWindowedCounter) Close() error {
	if c == nil || !c.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}
