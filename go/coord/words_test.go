package coord

// The words (Flip, Counter, ExclusiveTrigger, WindowedCounter) on both
// implementations side by side: the build's types (the Rust core with cgo,
// sync/atomic without) and the sync/atomic implementation compiled in every
// build. The write-up's scenarios under concurrency (run with -race), bad
// input that changes nothing, closed, nil and zero-value handles, Close
// racing the calls, random sequences that must agree call for call, and no
// allocation on the hot path.

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"sync/atomic"
	"testing"
)

type flipAPI interface {
	Flip(from, to uint64) (bool, error)
	Get() (uint64, error)
	Close() error
}

type counterAPI interface {
	Increment() (uint64, error)
	Get() (uint64, error)
	Close() error
}

type triggerAPI interface {
	Trigger() (uint64, error)
	Finish(run uint64) (bool, error)
	Active() (uint64, error)
	LastRun() (uint64, error)
	Close() error
}

type windowedAPI interface {
	Increment(now, window uint64) (uint32, error)
	Count(now uint64) (uint32, error)
	Close() error
}

var (
	_ flipAPI     = (*Flip)(nil)
	_ flipAPI     = (*atomicFlip)(nil)
	_ counterAPI  = (*Counter)(nil)
	_ counterAPI  = (*atomicCounter)(nil)
	_ triggerAPI  = (*ExclusiveTrigger)(nil)
	_ triggerAPI  = (*atomicTrigger)(nil)
	_ windowedAPI = (*WindowedCounter)(nil)
	_ windowedAPI = (*atomicWindowedCounter)(nil)
)

// implAtomic names the sync/atomic implementation of the words; the
// exported types go by Implementation ("rust" or "go").
const implAtomic = "atomic"

func forEachWordImpl(t *testing.T, body func(t *testing.T, impl string)) {
	t.Helper()
	for _, impl := range []string{Implementation, implAtomic} {
		t.Run(impl, func(t *testing.T) { body(t, impl) })
	}
}

// closeWordAtCleanup closes c at cleanup unless the test did.
func closeWordAtCleanup(tb testing.TB, impl string, c closer) {
	tb.Cleanup(func() {
		if err := c.Close(); err != nil && !errors.Is(err, ErrHandleClosed) {
			tb.Errorf("%s: Close at cleanup: %v", impl, err)
		}
	})
}

func newFlipOf(tb testing.TB, impl string, state uint64) flipAPI {
	tb.Helper()
	var f flipAPI = newAtomicFlip(state)
	if impl == Implementation {
		x, err := NewFlip(state)
		if err != nil {
			tb.Fatalf("NewFlip(%d): %v", state, err)
		}
		f = x
	}
	closeWordAtCleanup(tb, impl, f)
	return f
}

func newCounterOf(tb testing.TB, impl string, value uint64) counterAPI {
	tb.Helper()
	var c counterAPI = newAtomicCounter(value)
	if impl == Implementation {
		x, err := NewCounter(value)
		if err != nil {
			tb.Fatalf("NewCounter(%d): %v", value, err)
		}
		c = x
	}
	closeWordAtCleanup(tb, impl, c)
	return c
}

func newTriggerOf(tb testing.TB, impl string, lastRun uint64) triggerAPI {
	tb.Helper()
	var tr triggerAPI = newAtomicTrigger(lastRun)
	if impl == Implementation {
		x, err := NewExclusiveTrigger(lastRun)
		if err != nil {
			tb.Fatalf("NewExclusiveTrigger(%d): %v", lastRun, err)
		}
		tr = x
	}
	closeWordAtCleanup(tb, impl, tr)
	return tr
}

func newWindowedOf(tb testing.TB, impl string) windowedAPI {
	tb.Helper()
	var c windowedAPI = newAtomicWindowedCounter()
	if impl == Implementation {
		x, err := NewWindowedCounter()
		if err != nil {
			tb.Fatalf("NewWindowedCounter: %v", err)
		}
		c = x
	}
	closeWordAtCleanup(tb, impl, c)
	return c
}

func mustU64(tb testing.TB, what string, want uint64) func(uint64, error) {
	return func(v uint64, err error) {
		tb.Helper()
		if err != nil || v != want {
			tb.Errorf("%s: %d, %v; want %d", what, v, err, want)
		}
	}
}

func mustU32(tb testing.TB, what string, want uint32) func(uint32, error) {
	return func(v uint32, err error) {
		tb.Helper()
		if err != nil || v != want {
			tb.Errorf("%s: %d, %v; want %d", what, v, err, want)
		}
	}
}

func mustBool(tb testing.TB, what string, want bool) func(bool, error) {
	return func(v bool, err error) {
		tb.Helper()
		if err != nil || v != want {
			tb.Errorf("%s: %v, %v; want %v", what, v, err, want)
		}
	}
}

const (
	online  uint64 = 1
	offline uint64 = 2
)

// N goroutines flip online → offline: exactly one flips (and would alert);
// the recovery offline → online likewise; from == to flips nothing.
func TestFlipConcurrentHasOneFlipper(t *testing.T) {
	const flippers = 8
	n := rounds(500)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		f := newFlipOf(t, impl, online)
		for r := 0; r < n; r++ {
			for _, tr := range [][2]uint64{{online, offline}, {offline, online}} {
				var flipped atomic.Int32
				race(flippers, func(int) {
					ok, err := f.Flip(tr[0], tr[1])
					if err != nil {
						t.Errorf("Flip: %v", err)
					}
					if ok {
						flipped.Add(1)
					}
				})
				if got := flipped.Load(); got != 1 {
					t.Fatalf("round %d, %d → %d: %d flippers, want 1", r, tr[0], tr[1], got)
				}
				mustU64(t, "Get", tr[1])(f.Get())
			}
		}
		mustBool(t, "Flip(online, online)", false)(f.Flip(online, online))
		mustBool(t, "Flip(offline, offline)", false)(f.Flip(offline, offline))
		mustBool(t, "Flip(offline, online) from online", false)(f.Flip(offline, online))
		mustU64(t, "Get", online)(f.Get())
		mustBool(t, "Flip(online, MaxUint64)", true)(f.Flip(online, math.MaxUint64))
		mustBool(t, "Flip(MaxUint64, 0)", true)(f.Flip(math.MaxUint64, 0))
		mustU64(t, "Get", 0)(f.Get())
	})
}

// N goroutines × M increments: exactly N·M, every returned value unique (the
// values start+1 … start+N·M), and the wrap at 2^64.
func TestCounterConcurrentIncrementsAreUnique(t *testing.T) {
	const goroutines = 8
	m := rounds(2000)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		const start = 1000
		c := newCounterOf(t, impl, start)
		got := make([][]uint64, goroutines)
		race(goroutines, func(g int) {
			vs := make([]uint64, 0, m)
			for i := 0; i < m; i++ {
				v, err := c.Increment()
				if err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
				vs = append(vs, v)
			}
			got[g] = vs
		})
		mustU64(t, "Get", start+goroutines*uint64(m))(c.Get())
		var all []uint64
		for _, vs := range got {
			for i := 1; i < len(vs); i++ {
				if vs[i] <= vs[i-1] {
					t.Fatalf("one goroutine's values went back: %d then %d", vs[i-1], vs[i])
				}
			}
			all = append(all, vs...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i, v := range all {
			if v != start+1+uint64(i) {
				t.Fatalf("values are not start+1 … start+N·M: [%d] = %d", i, v)
			}
		}
		w := newCounterOf(t, impl, math.MaxUint64-1)
		mustU64(t, "Increment to MaxUint64", math.MaxUint64)(w.Increment())
		mustU64(t, "Increment wraps", 0)(w.Increment())
		mustU64(t, "Get", 0)(w.Get())
	})
}

// N goroutines trigger at once: exactly one starts run 1, every other is
// told run 1 holds the key; only run 1 can finish it; after it finishes the
// next trigger gets run 2.
func TestTriggerConcurrentStartsOneRun(t *testing.T) {
	const triggers = 8
	n := rounds(300)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		tr := newTriggerOf(t, impl, 0)
		for r := uint64(1); r <= uint64(n); r++ {
			var started atomic.Int32
			race(triggers, func(int) {
				run, err := tr.Trigger()
				var busy BusyError
				switch {
				case err == nil:
					started.Add(1)
					if run != r {
						t.Errorf("started run %d, want %d", run, r)
					}
				case errors.As(err, &busy):
					if busy.Run != r || run != 0 || !errors.Is(err, ErrBusy) || errors.Is(err, ErrInvalidArgument) {
						t.Errorf("refused: %d, %v (%#v); want BusyError{Run: %d}", run, err, err, r)
					}
				default:
					t.Errorf("Trigger: %d, %v", run, err)
				}
			})
			if got := started.Load(); got != 1 {
				t.Fatalf("round %d: %d started, want 1", r, got)
			}
			mustU64(t, "Active", r)(tr.Active())
			mustU64(t, "LastRun", r)(tr.LastRun())
			mustBool(t, "Finish(previous run)", false)(tr.Finish(r - 1))
			mustBool(t, "Finish(next run)", false)(tr.Finish(r + 1))
			mustU64(t, "Active after a wrong Finish", r)(tr.Active())
			var finished atomic.Int32
			race(triggers, func(int) {
				ok, err := tr.Finish(r)
				if err != nil {
					t.Errorf("Finish: %v", err)
				}
				if ok {
					finished.Add(1)
				}
			})
			if got := finished.Load(); got != 1 {
				t.Fatalf("round %d: %d finished, want 1", r, got)
			}
			mustU64(t, "Active after Finish", 0)(tr.Active())
			mustU64(t, "LastRun after Finish", r)(tr.LastRun())
		}
	})
}

// Goroutines loop trigger → (hold) → finish: the started runs are 1, 2, 3, …
// each once, never two at a time, and a refused caller is told a run that
// was started.
func TestTriggerChurnRunsOneAtATime(t *testing.T) {
	const goroutines = 6
	m := rounds(1500)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		tr := newTriggerOf(t, impl, 0)
		var holding atomic.Int32
		runs := make([][]uint64, goroutines)
		race(goroutines, func(g int) {
			for i := 0; i < m; i++ {
				run, err := tr.Trigger()
				if err != nil {
					var busy BusyError
					if !errors.As(err, &busy) || busy.Run == 0 {
						t.Errorf("Trigger: %v", err)
						return
					}
					continue
				}
				if h := holding.Add(1); h != 1 {
					t.Errorf("run %d started while %d held the key", run, h-1)
				}
				runs[g] = append(runs[g], run)
				holding.Add(-1)
				if ok, err := tr.Finish(run); !ok || err != nil {
					t.Errorf("Finish(%d): %v %v", run, ok, err)
				}
			}
		})
		var all []uint64
		for _, rs := range runs {
			all = append(all, rs...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i, r := range all {
			if r != uint64(i)+1 {
				t.Fatalf("runs are not 1 … %d: [%d] = %d", len(all), i, r)
			}
		}
		mustU64(t, "LastRun", uint64(len(all)))(tr.LastRun())
		mustU64(t, "Active", 0)(tr.Active())
	})
}

// A trigger resumes after its last run, only the holder finishes, and the
// run numbers stop at RunMax without wrapping.
func TestTriggerRunNumbers(t *testing.T) {
	forEachWordImpl(t, func(t *testing.T, impl string) {
		tr := newTriggerOf(t, impl, 41)
		mustBool(t, "Finish with nothing active", false)(tr.Finish(41))
		mustBool(t, "Finish(42) before it started", false)(tr.Finish(42))
		mustU64(t, "Trigger", 42)(tr.Trigger())
		for _, run := range []uint64{0, 41, 43, RunMax, RunMax + 1, math.MaxUint64} {
			mustBool(t, fmt.Sprintf("Finish(%d)", run), false)(tr.Finish(run))
		}
		mustU64(t, "Active", 42)(tr.Active())
		mustBool(t, "Finish(42)", true)(tr.Finish(42))
		mustBool(t, "a second Finish(42)", false)(tr.Finish(42))
		mustU64(t, "LastRun", 42)(tr.LastRun())

		for _, last := range []uint64{RunMax, RunMax + 1, math.MaxUint64} {
			x := newTriggerOf(t, impl, last)
			mustU64(t, "LastRun (clamped)", RunMax)(x.LastRun())
			if run, err := x.Trigger(); run != 0 || err != ErrExhausted {
				t.Errorf("Trigger after RunMax: %d, %v; want ErrExhausted", run, err)
			}
			mustU64(t, "Active", 0)(x.Active())
			mustU64(t, "LastRun", RunMax)(x.LastRun())
		}
		y := newTriggerOf(t, impl, RunMax-1)
		mustU64(t, "Trigger RunMax", RunMax)(y.Trigger())
		if run, err := y.Trigger(); run != 0 || err != (BusyError{Run: RunMax}) {
			t.Errorf("Trigger while RunMax is active: %d, %v", run, err)
		}
		mustBool(t, "Finish(RunMax)", true)(y.Finish(RunMax))
		if run, err := y.Trigger(); run != 0 || err != ErrExhausted {
			t.Errorf("Trigger after RunMax finished: %d, %v; want ErrExhausted", run, err)
		}
		mustU64(t, "Active", 0)(y.Active())
	})
}

const minute uint64 = 60_000

// Five failed logins inside 15 minutes: the fifth returns 5 (and locks); the
// count is 5 until the window ends and 0 from its end; the next failure
// opens a new window.
func TestWindowedCounterFiveFailuresLock(t *testing.T) {
	forEachWordImpl(t, func(t *testing.T, impl string) {
		c := newWindowedOf(t, impl)
		const t0 = 1_764_000_000_000
		mustU32(t, "Count before any", 0)(c.Count(t0))
		for i := uint64(0); i < 5; i++ {
			mustU32(t, fmt.Sprintf("failure %d", i+1), uint32(i+1))(c.Increment(t0+i*minute, 15*minute))
		}
		mustU32(t, "Count at the start", 5)(c.Count(t0))
		mustU32(t, "Count before the end", 5)(c.Count(t0 + 15*minute - 1))
		mustU32(t, "Count at the end", 0)(c.Count(t0 + 15*minute))
		mustU32(t, "Count after the end", 0)(c.Count(t0 + 16*minute))
		mustU32(t, "Count long after", 0)(c.Count(math.MaxUint64))
		mustU32(t, "a failure after the window", 1)(c.Increment(t0+16*minute, 15*minute))
		mustU32(t, "Count in the new window", 1)(c.Count(t0 + 30*minute))
		mustU32(t, "Count at the new end", 0)(c.Count(t0 + 31*minute))
		// The window is the first increment's: a later, longer window does
		// not extend it.
		mustU32(t, "a second failure", 2)(c.Increment(t0+17*minute, 60*minute))
		mustU32(t, "Count at the first window's end", 0)(c.Count(t0 + 31*minute))
		// The bounds: the last end accepted is WindowTimeMax.
		mustU32(t, "Increment ending at WindowTimeMax", 1)(c.Increment(WindowTimeMax-1, 1))
		mustU32(t, "Count just before", 1)(c.Count(WindowTimeMax - 1))
		mustU32(t, "Count at WindowTimeMax", 0)(c.Count(WindowTimeMax))
	})
}

// N goroutines × M increments in one window: the counts returned are
// exactly 1 … N·M.
func TestWindowedCounterConcurrentCountsAreUnique(t *testing.T) {
	const goroutines = 8
	m := rounds(1000)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		c := newWindowedOf(t, impl)
		got := make([][]uint32, goroutines)
		race(goroutines, func(g int) {
			for i := 0; i < m; i++ {
				n, err := c.Increment(10+uint64(i%7), 1000)
				if err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
				got[g] = append(got[g], n)
			}
		})
		var all []uint32
		for _, ns := range got {
			all = append(all, ns...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i, n := range all {
			if n != uint32(i)+1 {
				t.Fatalf("counts are not 1 … N·M: [%d] = %d", i, n)
			}
		}
		mustU32(t, "Count", uint32(goroutines*m))(c.Count(500))
		mustU32(t, "Count at the end", 0)(c.Count(1010))
	})
}

// The count saturates at WindowCountMax.
func TestWindowedCounterSaturates(t *testing.T) {
	if debugBuild {
		t.Skip("2^20 increments, each a GC under -tags debug")
	}
	forEachWordImpl(t, func(t *testing.T, impl string) {
		c := newWindowedOf(t, impl)
		for i := uint32(1); i <= WindowCountMax; i++ {
			n, err := c.Increment(5, 100)
			if err != nil || n != i {
				t.Fatalf("increment %d: %d, %v", i, n, err)
			}
		}
		mustU32(t, "past the maximum", WindowCountMax)(c.Increment(6, 100))
		mustU32(t, "past the maximum again", WindowCountMax)(c.Increment(104, 100))
		mustU32(t, "Count", WindowCountMax)(c.Count(104))
		mustU32(t, "a new window", 1)(c.Increment(105, 100))
	})
}

// An invalid window (0, or ending past WindowTimeMax, overflow included) is
// ErrInvalidTime, returns 0 and changes nothing.
func TestWindowedCounterBadInputChangesNothing(t *testing.T) {
	forEachWordImpl(t, func(t *testing.T, impl string) {
		c := newWindowedOf(t, impl)
		for i := uint32(1); i <= 3; i++ {
			mustU32(t, "Increment", i)(c.Increment(100, 50))
		}
		probes := []uint64{0, 99, 100, 149, 150, math.MaxUint64}
		view := func() []uint32 {
			t.Helper()
			v := make([]uint32, len(probes))
			for i, p := range probes {
				n, err := c.Count(p)
				if err != nil {
					t.Fatalf("Count(%d): %v", p, err)
				}
				v[i] = n
			}
			return v
		}
		before := view()
		if want := []uint32{3, 3, 3, 3, 0, 0}; !reflect.DeepEqual(before, want) {
			t.Fatalf("counts %v, want %v", before, want)
		}
		bad := [][2]uint64{
			{100, 0}, {0, 0}, {math.MaxUint64, 0},
			{WindowTimeMax, 1}, {WindowTimeMax - 1, 2}, {0, WindowTimeMax + 1}, {1, WindowTimeMax},
			{WindowTimeMax + 1, 1}, {math.MaxUint64, 1}, {1, math.MaxUint64}, {math.MaxUint64, math.MaxUint64},
			{1 << 63, 1 << 63}, {TimeUnset, 10},
		}
		for _, b := range bad {
			n, err := c.Increment(b[0], b[1])
			refused(t, fmt.Sprintf("Increment(%d, %d)", b[0], b[1]), err, ErrInvalidTime)
			if n != 0 {
				t.Errorf("Increment(%d, %d): a refused call returned %d", b[0], b[1], n)
			}
			if after := view(); !reflect.DeepEqual(after, before) {
				t.Fatalf("Increment(%d, %d) changed the counter: %v, was %v", b[0], b[1], after, before)
			}
		}
		// The accepted edges.
		mustU32(t, "Increment(0, WindowTimeMax)", 1)(newWindowedOf(t, impl).Increment(0, WindowTimeMax))
		mustU32(t, "Increment(WindowTimeMax-1, 1)", 1)(newWindowedOf(t, impl).Increment(WindowTimeMax-1, 1))
		mustU32(t, "Increment still counts", 4)(c.Increment(149, 1))
	})
}

// After Close every method returns ErrHandleClosed and zero values, a second
// Close too; nil and zero-value handles of the exported types likewise.
func TestWordsClosedHandles(t *testing.T) {
	check := func(t *testing.T, what string, v any, err error) {
		t.Helper()
		if err != ErrHandleClosed {
			t.Errorf("%s: %v, want ErrHandleClosed", what, err)
		}
		if !reflect.ValueOf(v).IsZero() {
			t.Errorf("%s: a refused call returned %v", what, v)
		}
	}
	type words struct {
		f flipAPI
		c counterAPI
		t triggerAPI
		w windowedAPI
	}
	exercise := func(t *testing.T, h words) {
		t.Helper()
		b, err := h.f.Flip(1, 2)
		check(t, "Flip.Flip", b, err)
		v, err := h.f.Get()
		check(t, "Flip.Get", v, err)
		check(t, "Flip.Close", 0, h.f.Close())
		v, err = h.c.Increment()
		check(t, "Counter.Increment", v, err)
		v, err = h.c.Get()
		check(t, "Counter.Get", v, err)
		check(t, "Counter.Close", 0, h.c.Close())
		v, err = h.t.Trigger()
		check(t, "ExclusiveTrigger.Trigger", v, err)
		b, err = h.t.Finish(1)
		check(t, "ExclusiveTrigger.Finish", b, err)
		v, err = h.t.Active()
		check(t, "ExclusiveTrigger.Active", v, err)
		v, err = h.t.LastRun()
		check(t, "ExclusiveTrigger.LastRun", v, err)
		check(t, "ExclusiveTrigger.Close", 0, h.t.Close())
		n, err := h.w.Increment(1, 10)
		check(t, "WindowedCounter.Increment", n, err)
		n, err = h.w.Increment(1, 0) // closed comes before the bad window
		check(t, "WindowedCounter.Increment(bad window)", n, err)
		n, err = h.w.Count(1)
		check(t, "WindowedCounter.Count", n, err)
		check(t, "WindowedCounter.Close", 0, h.w.Close())
	}
	forEachWordImpl(t, func(t *testing.T, impl string) {
		h := words{newFlipOf(t, impl, 1), newCounterOf(t, impl, 5), newTriggerOf(t, impl, 0), newWindowedOf(t, impl)}
		mustU64(t, "Trigger", 1)(h.t.Trigger())
		mustU32(t, "Increment", 1)(h.w.Increment(1, 10))
		for _, c := range []closer{h.f, h.c, h.t, h.w} {
			must(t, c.Close())
		}
		exercise(t, h)
	})
	t.Run("nil", func(t *testing.T) {
		exercise(t, words{(*Flip)(nil), (*Counter)(nil), (*ExclusiveTrigger)(nil), (*WindowedCounter)(nil)})
		exercise(t, words{(*atomicFlip)(nil), (*atomicCounter)(nil), (*atomicTrigger)(nil), (*atomicWindowedCounter)(nil)})
	})
	t.Run("zero", func(t *testing.T) {
		exercise(t, words{new(Flip), new(Counter), new(ExclusiveTrigger), new(WindowedCounter)})
	})
}

// Close races every call: each call succeeds or returns ErrHandleClosed,
// exactly one Close wins, and nothing runs on the freed handle (-race and
// the C side's checks would see it).
func TestWordsCloseRacesCalls(t *testing.T) {
	const callers, closers = 6, 3
	n := rounds(200)
	forEachWordImpl(t, func(t *testing.T, impl string) {
		for r := 0; r < n; r++ {
			f, c := newFlipOf(t, impl, 0), newCounterOf(t, impl, 0)
			tr, w := newTriggerOf(t, impl, 0), newWindowedOf(t, impl)
			var closed atomic.Int32
			ok := func(err error) {
				if err != nil && err != ErrHandleClosed {
					var busy BusyError
					if !errors.As(err, &busy) {
						t.Errorf("a call racing Close: %v", err)
					}
				}
			}
			race(callers+closers, func(g int) {
				if g >= callers {
					for _, x := range []closer{f, c, tr, w} {
						if x.Close() == nil {
							closed.Add(1)
						}
					}
					return
				}
				for i := 0; i < 20; i++ {
					_, err := f.Flip(uint64(i), uint64(i+1))
					ok(err)
					_, err = c.Increment()
					ok(err)
					run, err := tr.Trigger()
					ok(err)
					if err == nil {
						_, err = tr.Finish(run)
						ok(err)
					}
					_, err = w.Increment(uint64(i), 5)
					ok(err)
					_, err = w.Count(uint64(i))
					ok(err)
				}
			})
			if got := closed.Load(); got != 4 {
				t.Fatalf("round %d: %d Closes won, want 4 (one per handle)", r, got)
			}
		}
	})
}

// Random sequences, bad input included, give the same results and errors
// from the build's types and the sync/atomic implementation.
func TestDifferentialWords(t *testing.T) {
	seeds := rounds(40)
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		edge := func() uint64 {
			switch rng.Intn(8) {
			case 0:
				return math.MaxUint64 - uint64(rng.Intn(2))
			case 1:
				return RunMax - 1 + uint64(rng.Intn(3))
			case 2:
				return WindowTimeMax - 1 + uint64(rng.Intn(3))
			}
			return uint64(rng.Intn(4))
		}
		first := edge()
		lastRun := uint64(rng.Intn(3))
		if rng.Intn(4) == 0 {
			lastRun = RunMax - uint64(rng.Intn(3))
		}
		fa, fb := newFlipOf(t, Implementation, first), newFlipOf(t, implAtomic, first)
		ca, cb := newCounterOf(t, Implementation, first), newCounterOf(t, implAtomic, first)
		ta, tb := newTriggerOf(t, Implementation, lastRun), newTriggerOf(t, implAtomic, lastRun)
		wa, wb := newWindowedOf(t, Implementation), newWindowedOf(t, implAtomic)
		now := uint64(rng.Intn(100))
		if rng.Intn(4) == 0 {
			now = WindowTimeMax - uint64(rng.Intn(200))
		}
		for i := 0; i < 300; i++ {
			op := rng.Intn(12)
			x, y := edge(), edge()
			run := uint64(0)
			if l, err := ta.LastRun(); err == nil {
				run = l - 1 + uint64(rng.Intn(3))
			}
			if rng.Intn(20) == 0 {
				run = edge()
			}
			now += uint64(rng.Intn(5))
			window := uint64(1 + rng.Intn(20))
			switch rng.Intn(15) {
			case 0:
				window = 0
			case 1:
				window = edge()
			}
			tm := now
			if rng.Intn(25) == 0 {
				tm = edge()
			}
			closeIt := rng.Intn(300) == 0
			do := func(f flipAPI, c counterAPI, tr triggerAPI, w windowedAPI) []any {
				var h closer
				var out []any
				switch op {
				case 0:
					v, err := f.Flip(x, y)
					out, h = results(v, err), f
				case 1:
					v, err := f.Get()
					out, h = results(v, err), f
				case 2:
					v, err := c.Increment()
					out, h = results(v, err), c
				case 3:
					v, err := c.Get()
					out, h = results(v, err), c
				case 4, 5:
					v, err := tr.Trigger()
					out, h = results(v, err), tr
				case 6:
					v, err := tr.Finish(run)
					out, h = results(v, err), tr
				case 7:
					a, err1 := tr.Active()
					l, err2 := tr.LastRun()
					out, h = results(a, err1, l, err2), tr
				case 8, 9:
					v, err := w.Increment(tm, window)
					out, h = results(v, err), w
				default:
					v, err := w.Count(tm)
					out, h = results(v, err), w
				}
				if closeIt {
					out = append(out, h.Close())
				}
				return out
			}
			a, b := do(fa, ca, ta, wa), do(fb, cb, tb, wb)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d, step %d, op %d (x=%d y=%d run=%d now=%d window=%d): %s %v, %s %v",
					seed, i, op, x, y, run, tm, window, Implementation, a, implAtomic, b)
			}
		}
	}
}

// No call on the words allocates: decisions, refusals (a closed handle, an
// invalid window) and reads.
func TestWordsDoNotAllocate(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	forEachWordImpl(t, func(t *testing.T, impl string) {
		f, c := newFlipOf(t, impl, 0), newCounterOf(t, impl, 0)
		tr, w := newTriggerOf(t, impl, 0), newWindowedOf(t, impl)
		closed := newFlipOf(t, impl, 0)
		must(t, closed.Close())
		var now uint64
		measures := []struct {
			name string
			f    func()
		}{
			{"Flip+Get", func() { _, _ = f.Flip(0, 1); _, _ = f.Flip(1, 0); _, _ = f.Get() }},
			{"Flip (lost)", func() { _, _ = f.Flip(7, 8) }},
			{"Increment+Get", func() { _, _ = c.Increment(); _, _ = c.Get() }},
			{"Trigger+Finish", func() {
				run, _ := tr.Trigger()
				_, _ = tr.Finish(run)
			}},
			{"Active+LastRun+Finish (lost)", func() { _, _ = tr.Active(); _, _ = tr.LastRun(); _, _ = tr.Finish(0) }},
			{"windowed Increment+Count", func() { now++; _, _ = w.Increment(now, 10); _, _ = w.Count(now) }},
			{"windowed Increment (invalid time)", func() { _, _ = w.Increment(1, 0) }},
			{"closed", func() { _, _ = closed.Flip(0, 1) }},
		}
		for _, m := range measures {
			if n := testing.AllocsPerRun(200, m.f); n != 0 {
				t.Errorf("%s: %v allocations per call", m.name, n)
			}
		}
	})
}
