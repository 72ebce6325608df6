package multiraft

// Bad input: nil and zero-value queues, nil callbacks, empty buffers, unknown
// kinds, callbacks and observers that panic. Each is an error or a documented
// no-op, never a crash, and changes nothing.

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// checkClosedBadArgs checks that a closed (or nil) q refuses calls with bad
// arguments with ErrHandleClosed too: a call that starts after Close returns
// ErrHandleClosed, whatever its arguments.
func checkClosedBadArgs[T any](t *testing.T, q queue[T]) {
	t.Helper()
	var v T
	for _, kind := range []ControlKind{0, 8, 255} {
		if err := q.Admit(kind, ProposalClassForeground, v); err != ErrHandleClosed {
			t.Errorf("Admit(%v): %v", kind, err)
		}
		if n, err := q.AdmitBatch(kind, ProposalClassForeground, []T{v}); n != 0 || err != ErrHandleClosed {
			t.Errorf("AdmitBatch(%v): %d, %v", kind, n, err)
		}
		if n, err := q.AdmitBatch(kind, ProposalClassForeground, nil); n != 0 || err != ErrHandleClosed {
			t.Errorf("AdmitBatch(%v, nil): %d, %v", kind, n, err)
		}
	}
	if n, err := q.AdmitBatch(ControlPropose, ProposalClassForeground, nil); n != 0 || err != ErrHandleClosed {
		t.Errorf("AdmitBatch(nil): %d, %v", n, err)
	}
	f := func(Control[T]) { t.Error("callback called") }
	for _, max := range []int{0, -1} {
		if n, err := q.Drain(max, f); n != 0 || err != ErrHandleClosed {
			t.Errorf("Drain(%d): %d, %v", max, n, err)
		}
	}
	if n, err := q.Drain(10, nil); n != 0 || err != ErrHandleClosed {
		t.Errorf("Drain(nil): %d, %v", n, err)
	}
	for _, out := range [][]Control[T]{nil, {}} {
		if n, err := q.DrainInto(out); n != 0 || err != ErrHandleClosed {
			t.Errorf("DrainInto(%v): %d, %v", out, n, err)
		}
	}
	if ok, err := q.Fail(nil); ok || err != ErrHandleClosed {
		t.Errorf("Fail(nil): %v, %v", ok, err)
	}
}

// A nil *ControlQueue returns ErrHandleClosed from every method.
func TestNilQueue(t *testing.T) {
	var nilQueue *ControlQueue[int]
	checkClosed[int](t, nilQueue)
	checkClosedBadArgs[int](t, nilQueue)
	if nilQueue.ID() != 0 {
		t.Errorf("ID = %d", nilQueue.ID())
	}
	if n, err := nilQueue.Visit(func(Control[int]) bool { return true }); n != 0 || err != ErrHandleClosed {
		t.Errorf("Visit: %d, %v", n, err)
	}
}

// A ControlQueue declared, not constructed, is a queue with the default
// options, made on first use (also when goroutines race to use it first);
// after Close it refuses every call, as any queue.
func TestZeroQueueWorksLazily(t *testing.T) {
	type slot struct {
		id       uint64
		controls ControlQueue[*action]
	}
	s := &slot{id: 7}
	if err := s.controls.Admit(ControlPropose, ProposalClassForeground, newAction(0)); err != ErrNotLeader {
		t.Fatalf("Admit on the zero value: %v, want ErrNotLeader (a new queue is a follower)", err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.controls.SetLeader()
		}()
	}
	wg.Wait()
	for i := 1; i <= 3; i++ {
		must(t, s.controls.Admit(ControlPropose, ProposalClassForeground, newAction(i)))
	}
	st := mustState(t, &s.controls)
	if st.Queued != 3 || !st.Leader || s.controls.ID() != 0 || s.controls.Len() != 3 {
		t.Fatalf("state %+v, id %d, len %d", st, s.controls.ID(), s.controls.Len())
	}
	out := make([]Control[*action], 8)
	if n, err := s.controls.DrainInto(out); n != 3 || err != nil {
		t.Fatalf("DrainInto: %d, %v", n, err)
	}
	must(t, s.controls.Close())
	if err := s.controls.Admit(ControlPropose, ProposalClassForeground, nil); !errors.Is(err, ErrSlotClosed) ||
		!errors.Is(err, ErrHandleClosed) {
		t.Errorf("Admit after Close: %v, want ErrSlotClosed and ErrHandleClosed", err)
	}
	checkClosed[*action](t, &s.controls)
	checkClosedBadArgs[*action](t, &s.controls)
}

// A queue that was closed refuses every call with ErrHandleClosed, bad
// arguments included.
func TestClosedQueueRefusesBadArguments(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		q := newLeader[int](t, impl, Limits{})
		must(t, q.Close())
		checkClosedBadArgs(t, q)
	})
}

// snapshot is everything observable about a queue but its values.
type snapshot struct {
	state    SlotState
	counters AdmissionCounters
	observed int
}

func snap[T any](t *testing.T, q queue[T], obs *recorder) snapshot {
	t.Helper()
	return snapshot{mustState(t, q), mustCounters(t, q), len(obs.results)}
}

// Bad arguments on an open queue are refused with ErrInvalidArgument (an
// empty batch of a known kind is a no-op), and change nothing: state,
// counters, observer, and the values queued.
func TestBadInputChangesNothing(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, leader := range []bool{true, false} {
			obs := &recorder{}
			q := newQueue[int](t, impl, Options{Limits: Limits{MaxQueuedControls: 4, MaxQueuedBackgroundControls: 2}, Observer: obs})
			if leader {
				must(t, q.SetLeader())
				must(t, q.Admit(ControlPropose, ProposalClassBackground, 1))
			}
			must(t, q.Admit(ControlTransferLeader, ProposalClassForeground, 2))
			before := snap(t, q, obs)
			check := func(what string) {
				t.Helper()
				if after := snap(t, q, obs); after != before {
					t.Errorf("leader %v: %s changed the queue: %+v, was %+v", leader, what, after, before)
				}
			}
			for _, kind := range []ControlKind{0, 8, 255} {
				if err := q.Admit(kind, ProposalClassForeground, 3); err != ErrInvalidArgument {
					t.Errorf("Admit(%v): %v", kind, err)
				}
				if err := q.Admit(kind, ProposalClassBackground, 3); err != ErrInvalidArgument {
					t.Errorf("Admit(%v, background): %v", kind, err)
				}
				if n, err := q.AdmitBatch(kind, ProposalClassForeground, []int{3, 4}); n != 0 || err != ErrInvalidArgument {
					t.Errorf("AdmitBatch(%v): %d, %v", kind, n, err)
				}
				if n, err := q.AdmitBatch(kind, ProposalClassForeground, nil); n != 0 || err != ErrInvalidArgument {
					t.Errorf("AdmitBatch(%v, nil): %d, %v", kind, n, err)
				}
				check("an unknown kind")
			}
			for _, vs := range [][]int{nil, {}} {
				for kind := ControlPropose; kind <= ControlFreshStatus; kind++ {
					if n, err := q.AdmitBatch(kind, ProposalClassBackground, vs); n != 0 || err != nil {
						t.Errorf("AdmitBatch(%v, %v): %d, %v; want the no-op 0, nil", kind, vs, n, err)
					}
				}
			}
			check("an empty batch")
			called := false
			f := func(Control[int]) { called = true }
			for _, max := range []int{0, -1, -1 << 40} {
				if n, err := q.Drain(max, f); n != 0 || err != ErrInvalidArgument {
					t.Errorf("Drain(%d): %d, %v", max, n, err)
				}
			}
			for _, max := range []int{0, 1, 10} {
				if n, err := q.Drain(max, nil); n != 0 || err != ErrInvalidArgument {
					t.Errorf("Drain(%d, nil): %d, %v", max, n, err)
				}
			}
			if called {
				t.Error("a refused Drain called its callback")
			}
			for _, out := range [][]Control[int]{nil, {}, make([]Control[int], 0, 8)} {
				if n, err := q.DrainInto(out); n != 0 || err != ErrInvalidArgument {
					t.Errorf("DrainInto(len 0, cap %d): %d, %v", cap(out), n, err)
				}
			}
			if ok, err := q.Fail(nil); ok || err != ErrInvalidArgument {
				t.Errorf("Fail(nil): %v, %v", ok, err)
			}
			check("a bad drain or Fail(nil)")
			var values []int
			for _, c := range drainAll(t, q) {
				values = append(values, c.Value)
			}
			if want := map[bool][]int{true: {1, 2}, false: {2}}[leader]; !slices.Equal(values, want) {
				t.Errorf("leader %v: drained %v, want %v", leader, values, want)
			}
		}
	})
}

// catch runs f and returns what it panicked with (nil if it returned).
func catch(f func()) (recovered any) {
	defer func() { recovered = recover() }()
	f()
	return nil
}

type panicValue struct{ at int }

// A Drain callback that panics propagates its panic; the value it panicked
// on counts as handed over, and the next Drain (or DrainInto, or
// CloseAndDrain) hands the remaining values first, in order: nothing lost,
// nothing handed twice.
func TestDrainCallbackPanic(t *testing.T) {
	const queued = 600 // more than two of Drain's chunks
	ats := []int{0, 100, drainChunk - 1, drainChunk, queued - 1}
	kinds := []ControlKind{ControlPropose, ControlCompactLog, ControlFreshStatus}
	if debugBuild {
		// A GC per C call: one position, and the values admitted in one batch.
		ats = []int{drainChunk - 1}
		kinds = kinds[:1]
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, next := range []string{"Drain", "DrainInto", "CloseAndDrain"} {
			for _, at := range ats {
				q := newLeader[*action](t, impl, Limits{MaxQueuedControls: 1000})
				admit := func(from, to int) {
					t.Helper()
					if len(kinds) == 1 {
						vs := make([]*action, 0, to-from)
						for i := from; i < to; i++ {
							vs = append(vs, newAction(i))
						}
						if n, err := q.AdmitBatch(kinds[0], ProposalClassForeground, vs); n != len(vs) || err != nil {
							t.Fatalf("AdmitBatch: %d, %v", n, err)
						}
						return
					}
					for i := from; i < to; i++ {
						must(t, q.Admit(kinds[i%3], ProposalClassForeground, newAction(i)))
					}
				}
				admit(0, queued)
				var handed []int
				onto := func(c Control[*action]) {
					if !c.Value.intact() || c.Kind != kinds[c.Value.id%len(kinds)] {
						t.Errorf("handed %+v", c)
					}
					handed = append(handed, c.Value.id)
				}
				r := catch(func() {
					_, _ = q.Drain(1000, func(c Control[*action]) {
						onto(c)
						if c.Value.id == at {
							panic(panicValue{at})
						}
					})
				})
				if r != (panicValue{at}) {
					t.Fatalf("%s after a panic at %d: recovered %v", next, at, r)
				}
				if len(handed) != at+1 {
					t.Fatalf("panic at %d: %d handed", at, len(handed))
				}
				if s := mustState(t, q); s.Queued > queued-at-1 {
					t.Errorf("panic at %d: %d still queued", at, s.Queued)
				}
				// The queue stays usable: admissions go on, behind what is left.
				admit(queued, queued+10)
				switch next {
				case "Drain":
					// A second panic, inside the values the first left.
					second := min(at+7, queued+9)
					r := catch(func() {
						_, _ = q.Drain(1000, func(c Control[*action]) {
							onto(c)
							if c.Value.id == second {
								panic(panicValue{second})
							}
						})
					})
					if r != (panicValue{second}) {
						t.Fatalf("second panic at %d: recovered %v", second, r)
					}
					for _, c := range drainAll(t, q) {
						onto(c)
					}
				case "DrainInto":
					out := make([]Control[*action], 7)
					for {
						n, err := q.DrainInto(out)
						must(t, err)
						if n == 0 {
							break
						}
						for _, c := range out[:n] {
							onto(c)
						}
					}
				case "CloseAndDrain":
					must(t, q.CloseAndDrain(onto))
				}
				want := make([]int, queued+10)
				for i := range want {
					want[i] = i
				}
				if !slices.Equal(handed, want) {
					t.Fatalf("%s after a panic at %d: handed %v", next, at, handed)
				}
			}
		}
	})
}

// panicObserver panics on one result.
type panicObserver struct {
	on    AdmissionResult
	calls int
}

func (o *panicObserver) ObserveSlotProposalAdmission(_ SlotID, _ ProposalClass, result string) {
	o.calls++
	if AdmissionResult(result) == o.on {
		panic(o)
	}
}

// An observer that panics propagates from Admit after the decision took
// effect; the queue stays usable.
func TestObserverPanic(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		obs := &panicObserver{on: AdmissionOK}
		q := newQueue[int](t, impl, Options{Limits: Limits{MaxQueuedControls: 2, MaxQueuedBackgroundControls: 1}, Observer: obs})
		must(t, q.SetLeader())
		if r := catch(func() { _ = q.Admit(ControlPropose, ProposalClassForeground, 1) }); r != obs {
			t.Fatalf("recovered %v", r)
		}
		if s := mustState(t, q); s.Queued != 1 {
			t.Fatalf("state %+v after the observer's panic, want the item queued", s)
		}
		obs.on = AdmissionBusy
		must(t, q.Admit(ControlPropose, ProposalClassForeground, 2))
		if r := catch(func() { _ = q.Admit(ControlPropose, ProposalClassForeground, 3) }); r != obs {
			t.Fatalf("recovered %v", r)
		}
		drainAll(t, q)
		obs.on = AdmissionOK
		if r := catch(func() { _, _ = q.AdmitBatch(ControlPropose, ProposalClassForeground, []int{4, 5, 6}) }); r != obs {
			t.Fatalf("batch: recovered %v", r)
		}
		if s := mustState(t, q); s.Queued != 2 {
			t.Fatalf("state %+v after the observer's panic in a batch", s)
		}
		obs.on = ""
		var values []int
		for _, c := range drainAll(t, q) {
			values = append(values, c.Value)
		}
		must(t, q.Admit(ControlPropose, ProposalClassBackground, 7))
		for _, c := range drainAll(t, q) {
			values = append(values, c.Value)
		}
		if !slices.Equal(values, []int{4, 5, 7}) {
			t.Fatalf("drained %v", values)
		}
		if c := mustCounters(t, q); c != (AdmissionCounters{ForegroundOK: 4, ForegroundBusy: 2, BackgroundOK: 1}) {
			t.Fatalf("counters %+v", c)
		}
	})
}

// Errors of a refused construction, and a closed registry.
func TestNewControlQueueRefusals(t *testing.T) {
	r := newTestRegistry(t)
	must(t, r.Close())
	if q, err := NewControlQueue[int](1, Options{Metrics: r}); q != nil || err != ErrHandleClosed {
		t.Fatalf("NewControlQueue with a closed registry: %v, %v", q, err)
	}
	if err := r.Close(); err != ErrHandleClosed {
		t.Fatalf("second registry Close: %v", err)
	}
	var nilRegistry *MetricsRegistry
	if _, err := nilRegistry.Families(); err != ErrHandleClosed {
		t.Fatalf("nil registry Families: %v", err)
	}
	if err := nilRegistry.Close(); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("nil registry Close: %v", err)
	}
}
