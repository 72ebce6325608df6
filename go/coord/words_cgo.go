//go:build cgo && !wkcore_purego

package coord

// The words in the cgo build: the Rust core's wk_flip, wk_counter,
// wk_exclusive_trigger and wk_windowed_counter, each guarded as the ledgers
// are (wkabi.Uses: Close waits for the calls in flight, then frees).

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// The Go constants and layouts are the header's (the array lengths are
// negative, a compile error, otherwise). WK_WINDOW_TIME_MAX is not compared:
// the header spells it ((1 << 44) - 1), an int shift that C evaluates to -1;
// the tests check the bound on the library's behaviour instead.
var (
	_ [C.WK_WINDOW_COUNT_MAX - WindowCountMax]struct{}
	_ [WindowCountMax - C.WK_WINDOW_COUNT_MAX]struct{}
	_ [C.sizeof_wk_trigger - 16]struct{}
	_ [16 - C.sizeof_wk_trigger]struct{}
	_ [unsafe.Offsetof(C.wk_trigger{}.run) - 8]struct{}
	_ [8 - unsafe.Offsetof(C.wk_trigger{}.run)]struct{}
	_ [C.WK_TRIGGER_RESULT_STARTED - 0]struct{}
	_ [0 - C.WK_TRIGGER_RESULT_STARTED]struct{}
	_ [C.WK_TRIGGER_RESULT_BUSY - 1]struct{}
	_ [1 - C.WK_TRIGGER_RESULT_BUSY]struct{}
	_ [C.WK_TRIGGER_RESULT_EXHAUSTED - 2]struct{}
	_ [2 - C.WK_TRIGGER_RESULT_EXHAUSTED]struct{}
)

// Flip is a fire-once state flip (words.go). In this build it is the Rust
// core's wk_flip: Flip is one CAS.
type Flip struct {
	uses wkabi.Uses
	p    *C.wk_flip // set at construction, never written again
}

// NewFlip creates a flip in state.
func NewFlip(state uint64) (*Flip, error) {
	var p *C.wk_flip
	if st := C.wk_flip_new(C.uint64_t(state), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	f := &Flip{p: p}
	runtime.SetFinalizer(f, func(f *Flip) { C.wk_flip_free(f.p) })
	return f, nil
}

func (f *Flip) acquire() bool {
	if f == nil || f.p == nil || !f.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (f *Flip) release() {
	runtime.KeepAlive(f)
	f.uses.Release()
}

// Flip moves the state from from to to; true only for the one caller that
// did (false when the state is not from, and when from == to).
func (f *Flip) Flip(from, to uint64) (bool, error) {
	if !f.acquire() {
		return false, ErrHandleClosed
	}
	var flipped C.bool
	st := C.wk_flip_flip(f.p, C.uint64_t(from), C.uint64_t(to), &flipped)
	f.release()
	if st != C.WK_STATUS_OK {
		return false, statusErr(st)
	}
	return bool(flipped), nil
}

// Get returns the current state.
func (f *Flip) Get() (uint64, error) {
	if !f.acquire() {
		return 0, ErrHandleClosed
	}
	v := C.wk_flip_get(f.p)
	f.release()
	return uint64(v), nil
}

// Close releases the flip (as Ledger.Close).
func (f *Flip) Close() error {
	if f == nil || f.p == nil || !f.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(f, nil)
	C.wk_flip_free(f.p)
	return nil
}

// Counter is a counter whose increment returns the new value (words.go). In
// this build it is the Rust core's wk_counter: Increment is one fetch-add.
type Counter struct {
	uses wkabi.Uses
	p    *C.wk_counter // set at construction, never written again
}

// NewCounter creates a counter at value.
func NewCounter(value uint64) (*Counter, error) {
	var p *C.wk_counter
	if st := C.wk_counter_new(C.uint64_t(value), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	c := &Counter{p: p}
	runtime.SetFinalizer(c, func(c *Counter) { C.wk_counter_free(c.p) })
	return c, nil
}

func (c *Counter) acquire() bool {
	if c == nil || c.p == nil || !c.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (c *Counter) release() {
	runtime.KeepAlive(c)
	c.uses.Release()
}

// Increment adds one and returns the new value, unique to this call (it
// wraps at 2^64).
func (c *Counter) Increment() (uint64, error) {
	if !c.acquire() {
		return 0, ErrHandleClosed
	}
	var v C.uint64_t
	st := C.wk_counter_increment(c.p, &v)
	c.release()
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return uint64(v), nil
}

// Get returns the current value.
func (c *Counter) Get() (uint64, error) {
	if !c.acquire() {
		return 0, ErrHandleClosed
	}
	v := C.wk_counter_get(c.p)
	c.release()
	return uint64(v), nil
}

// Close releases the counter (as Ledger.Close).
func (c *Counter) Close() error {
	if c == nil || c.p == nil || !c.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(c, nil)
	C.wk_counter_free(c.p)
	return nil
}

// ExclusiveTrigger lets one run at a time hold a key, numbering the runs
// (words.go). In this build it is the Rust core's wk_exclusive_trigger:
// Trigger and Finish are one CAS each.
type ExclusiveTrigger struct {
	uses wkabi.Uses
	p    *C.wk_exclusive_trigger // set at construction, never written again
}

// NewExclusiveTrigger creates an inactive trigger whose last run was lastRun
// (0: none; above RunMax: RunMax); the next Trigger starts lastRun+1.
func NewExclusiveTrigger(lastRun uint64) (*ExclusiveTrigger, error) {
	// The package clamps, as documented; the C ABI refuses what its word cannot hold.
	lastRun = min(lastRun, RunMax)
	var p *C.wk_exclusive_trigger
	if st := C.wk_exclusive_trigger_new(C.uint64_t(lastRun), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	t := &ExclusiveTrigger{p: p}
	runtime.SetFinalizer(t, func(t *ExclusiveTrigger) { C.wk_exclusive_trigger_free(t.p) })
	return t, nil
}

func (t *ExclusiveTrigger) acquire() bool {
	if t == nil || t.p == nil || !t.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (t *ExclusiveTrigger) release() {
	runtime.KeepAlive(t)
	t.uses.Release()
}

// Trigger starts the next run and returns its number, for exactly one of
// many concurrent callers. While a run is active it returns a BusyError
// naming that run (errors.Is(err, ErrBusy)); once RunMax has started,
// ErrExhausted.
func (t *ExclusiveTrigger) Trigger() (uint64, error) {
	if !t.acquire() {
		return 0, ErrHandleClosed
	}
	var out C.wk_trigger
	st := C.wk_exclusive_trigger_trigger(t.p, &out)
	t.release()
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	switch out.result {
	case C.WK_TRIGGER_RESULT_STARTED:
		return uint64(out.run), nil
	case C.WK_TRIGGER_RESULT_BUSY:
		return 0, BusyError{Run: uint64(out.run)}
	}
	return 0, ErrExhausted
}

// Finish ends run run; true only when run held the key (and now nothing
// does).
func (t *ExclusiveTrigger) Finish(run uint64) (bool, error) {
	if !t.acquire() {
		return false, ErrHandleClosed
	}
	var finished C.bool
	st := C.wk_exclusive_trigger_finish(t.p, C.uint64_t(run), &finished)
	t.release()
	if st != C.WK_STATUS_OK {
		return false, statusErr(st)
	}
	return bool(finished), nil
}

// Active returns the active run, or 0 when none is (runs start at 1).
func (t *ExclusiveTrigger) Active() (uint64, error) {
	if !t.acquire() {
		return 0, ErrHandleClosed
	}
	v := C.wk_exclusive_trigger_active_get(t.p)
	t.release()
	return uint64(v), nil
}

// LastRun returns the last run started, active or finished (0 before the
// first).
func (t *ExclusiveTrigger) LastRun() (uint64, error) {
	if !t.acquire() {
		return 0, ErrHandleClosed
	}
	v := C.wk_exclusive_trigger_last_run_get(t.p)
	t.release()
	return uint64(v), nil
}

// Close releases the trigger (as Ledger.Close).
func (t *ExclusiveTrigger) Close() error {
	if t == nil || t.p == nil || !t.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(t, nil)
	C.wk_exclusive_trigger_free(t.p)
	return nil
}

// WindowedCounter counts events in a fixed window that expires (words.go).
// In this build it is the Rust core's wk_windowed_counter: Increment is one
// CAS loop on {window end, count}.
type WindowedCounter struct {
	uses wkabi.Uses
	p    *C.wk_windowed_counter // set at construction, never written again
}

// NewWindowedCounter creates a windowed counter at zero.
func NewWindowedCounter() (*WindowedCounter, error) {
	var p *C.wk_windowed_counter
	if st := C.wk_windowed_counter_new(&p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	c := &WindowedCounter{p: p}
	runtime.SetFinalizer(c, func(c *WindowedCounter) { C.wk_windowed_counter_free(c.p) })
	return c, nil
}

func (c *WindowedCounter) acquire() bool {
	if c == nil || c.p == nil || !c.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (c *WindowedCounter) release() {
	runtime.KeepAlive(c)
	c.uses.Release()
}

// Increment counts one at now in a window of window (the same unit as now):
// a new window (count 1, ending now+window) when the last one has ended,
// else one more (saturating at WindowCountMax). It returns the new count. A
// window of 0, or now+window above WindowTimeMax, is ErrInvalidTime.
func (c *WindowedCounter) Increment(now, window uint64) (uint32, error) {
	if !c.acquire() {
		return 0, ErrHandleClosed
	}
	var n C.uint32_t
	st := C.wk_windowed_counter_increment(c.p, C.uint64_t(now), C.uint64_t(window), &n)
	c.release()
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return uint32(n), nil
}

// Count returns the count at now: 0 once the window has ended.
func (c *WindowedCounter) Count(now uint64) (uint32, error) {
	if !c.acquire() {
		return 0, ErrHandleClosed
	}
	n := C.wk_windowed_counter_count_get(c.p, C.uint64_t(now))
	c.release()
	return uint32(n), nil
}

// Close releases the counter (as Ledger.Close).
func (c *WindowedCounter) Close() error {
	if c == nil || c.p == nil || !c.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(c, nil)
	C.wk_windowed_counter_free(c.p)
	return nil
}
