//go:build !cgo || wkcore_purego

package coord

// The words in the pure-Go build: the sync/atomic implementations of
// words.go, with the same transitions and word layouts as the Rust core's.

// Flip is a fire-once state flip (words.go). In this build it is one
// sync/atomic word.
type Flip struct {
	a *atomicFlip
}

// NewFlip creates a flip in state.
func NewFlip(state uint64) (*Flip, error) { return &Flip{a: newAtomicFlip(state)}, nil }

// Flip moves the state from from to to; true only for the one caller that
// did (false when the state is not from, and when from == to).
func (f *Flip) Flip(from, to uint64) (bool, error) {
	if f == nil {
		return false, ErrHandleClosed
	}
	return f.a.Flip(from, to)
}

// Get returns the current state.
func (f *Flip) Get() (uint64, error) {
	if f == nil {
		return 0, ErrHandleClosed
	}
	return f.a.Get()
}

// Close releases the flip. A second Close returns ErrHandleClosed.
func (f *Flip) Close() error {
	if f == nil {
		return ErrHandleClosed
	}
	return f.a.Close()
}

// Counter is a counter whose increment returns the new value (words.go). In
// this build it is one sync/atomic word.
type Counter struct {
	a *atomicCounter
}

// NewCounter creates a counter at value.
func NewCounter(value uint64) (*Counter, error) { return &Counter{a: newAtomicCounter(value)}, nil }

// Increment adds one and returns the new value, unique to this call (it
// wraps at 2^64).
func (c *Counter) Increment() (uint64, error) {
	if c == nil {
		return 0, ErrHandleClosed
	}
	return c.a.Increment()
}

// Get returns the current value.
func (c *Counter) Get() (uint64, error) {
	if c == nil {
		return 0, ErrHandleClosed
	}
	return c.a.Get()
}

// Close releases the counter. A second Close returns ErrHandleClosed.
func (c *Counter) Close() error {
	if c == nil {
		return ErrHandleClosed
	}
	return c.a.Close()
}

// ExclusiveTrigger lets one run at a time hold a key, numbering the runs
// (words.go). In this build it is one sync/atomic word.
type ExclusiveTrigger struct {
	a *atomicTrigger
}

// NewExclusiveTrigger creates an inactive trigger whose last run was lastRun
// (0: none; above RunMax: RunMax); the next Trigger starts lastRun+1.
func NewExclusiveTrigger(lastRun uint64) (*ExclusiveTrigger, error) {
	return &ExclusiveTrigger{a: newAtomicTrigger(lastRun)}, nil
}

// Trigger starts the next run and returns its number, for exactly one of
// many concurrent callers. While a run is active it returns a BusyError
// naming that run (errors.Is(err, ErrBusy)); once RunMax has started,
// ErrExhausted.
func (t *ExclusiveTrigger) Trigger() (uint64, error) {
	if t == nil {
		return 0, ErrHandleClosed
	}
	return t.a.Trigger()
}

// Finish ends run run; true only when run held the key (and now nothing
// does).
func (t *ExclusiveTrigger) Finish(run uint64) (bool, error) {
	if t == nil {
		return false, ErrHandleClosed
	}
	return t.a.Finish(run)
}

// Active returns the active run, or 0 when none is (runs start at 1).
func (t *ExclusiveTrigger) Active() (uint64, error) {
	if t == nil {
		return 0, ErrHandleClosed
	}
	return t.a.Active()
}

// LastRun returns the last run started, active or finished (0 before the
// first).
func (t *ExclusiveTrigger) LastRun() (uint64, error) {
	if t == nil {
		return 0, ErrHandleClosed
	}
	return t.a.LastRun()
}

// Close releases the trigger. A second Close returns ErrHandleClosed.
func (t *ExclusiveTrigger) Close() error {
	if t == nil {
		return ErrHandleClosed
	}
	return t.a.Close()
}

// WindowedCounter counts events in a fixed window that expires (words.go).
// In this build it is one sync/atomic word.
type WindowedCounter struct {
	a *atomicWindowedCounter
}

// NewWindowedCounter creates a windowed counter at zero.
func NewWindowedCounter() (*WindowedCounter, error) {
	return &WindowedCounter{a: newAtomicWindowedCounter()}, nil
}

// Increment counts one at now in a window of window (the same unit as now):
// a new window (count 1, ending now+window) when the last one has ended,
// else one more (saturating at WindowCountMax). It returns the new count. A
// window of 0, or now+window above WindowTimeMax, is ErrInvalidTime.
func (c *WindowedCounter) Increment(now, window uint64) (uint32, error) {
	if c == nil {
		return 0, ErrHandleClosed
	}
	return c.a.Increment(now, window)
}

// Count returns the count at now: 0 once the window has ended.
func (c *WindowedCounter) Count(now uint64) (uint32, error) {
	if c == nil {
		return 0, ErrHandleClosed
	}
	return c.a.Count(now)
}

// Close releases the counter. A second Close returns ErrHandleClosed.
func (c *WindowedCounter) Close() error {
	if c == nil {
		return ErrHandleClosed
	}
	return c.a.Close()
}
