package multiraft

// The harness the package's tests share: one interface over ControlQueue[T]
// (the build's implementation: the Rust core with cgo, Go without) and
// mutexQueue[T] (upstream's algorithm under a mutex, compiled in both builds),
// so each behaviour test runs against both side by side.

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

// queue is the API the tests drive.
type queue[T any] interface {
	ID() uint64
	Admit(kind ControlKind, class ProposalClass, v T) error
	AdmitConfigChange(v T) (ConfigChange, error)
	AdmitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error)
	Drain(max int, f func(Control[T])) (int, error)
	DrainInto(out []Control[T]) (int, error)
	SetLeader() error
	Demote() error
	CloseSlot() error
	Fail(err error) (bool, error)
	State() (SlotState, error)
	Counters() (AdmissionCounters, error)
	Close() error
	CloseAndDrain(f func(Control[T])) error
	Len() int
	Visit(f func(Control[T]) bool) (int, error)
}

var (
	_ queue[int] = (*ControlQueue[int])(nil)
	_ queue[int] = mutexAdapter[int]{}
)

// mutexAdapter gives mutexQueue the exported method set, calling each
// method's counterpart with nothing added.
type mutexAdapter[T any] struct{ m *mutexQueue[T] }

func (a mutexAdapter[T]) ID() uint64 { return a.m.id }

func (a mutexAdapter[T]) Admit(kind ControlKind, class ProposalClass, v T) error {
	_, err := a.m.admit(kind, class, v)
	return err
}

func (a mutexAdapter[T]) AdmitConfigChange(v T) (ConfigChange, error) {
	return a.m.admit(ControlConfigChange, ProposalClassForeground, v)
}

func (a mutexAdapter[T]) AdmitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	return a.m.admitBatch(kind, class, vs)
}

func (a mutexAdapter[T]) Drain(max int, f func(Control[T])) (int, error) { return a.m.drain(max, f) }
func (a mutexAdapter[T]) DrainInto(out []Control[T]) (int, error)        { return a.m.drainInto(out) }
func (a mutexAdapter[T]) SetLeader() error                               { return a.m.setLeader() }
func (a mutexAdapter[T]) Demote() error                                  { return a.m.demote() }
func (a mutexAdapter[T]) CloseSlot() error                               { return a.m.closeSlot() }
func (a mutexAdapter[T]) Fail(err error) (bool, error)                   { return a.m.fail(err) }
func (a mutexAdapter[T]) State() (SlotState, error)                      { return a.m.state() }
func (a mutexAdapter[T]) Counters() (AdmissionCounters, error)           { return a.m.counters() }
func (a mutexAdapter[T]) Close() error                                   { return a.m.close(nil) }
func (a mutexAdapter[T]) CloseAndDrain(f func(Control[T])) error         { return a.m.close(f) }
func (a mutexAdapter[T]) Len() int                                       { return a.m.len() }
func (a mutexAdapter[T]) Visit(f func(Control[T]) bool) (int, error)     { return a.m.visit(f) }

// implMutex names mutexQueue; ControlQueue goes by Implementation ("rust" or
// "go").
const implMutex = "mutex"

// impls are the implementations every behaviour test runs against.
var impls = []string{Implementation, implMutex}

// nextSlotID hands out distinct slot ids across tests.
var nextSlotID atomic.Uint64

// forEachImpl runs body as one subtest per implementation.
func forEachImpl(t *testing.T, body func(t *testing.T, impl string)) {
	t.Helper()
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) { body(t, impl) })
	}
}

// newQueue makes a queue of impl with opts, counting in a registry of the
// test's own unless opts.Metrics says otherwise, and closes it at cleanup.
func newQueue[T any](tb testing.TB, impl string, opts Options) queue[T] {
	tb.Helper()
	q, err := makeQueue[T](tb, impl, nextSlotID.Add(1), opts)
	if err != nil {
		tb.Fatalf("%s: new queue with %+v: %v", impl, opts.Limits, err)
	}
	tb.Cleanup(func() {
		if err := q.Close(); err != nil && !errors.Is(err, ErrHandleClosed) {
			tb.Errorf("%s: Close at cleanup: %v", impl, err)
		}
	})
	return q
}

// makeQueue makes a queue of impl, or says why not; nothing is cleaned up.
func makeQueue[T any](tb testing.TB, impl string, id uint64, opts Options) (queue[T], error) {
	tb.Helper()
	switch impl {
	case implMutex:
		m, err := newMutexQueue[T](id, opts, new(goRegistry))
		if err != nil {
			return nil, err
		}
		return mutexAdapter[T]{m}, nil
	case Implementation:
		if opts.Metrics == nil {
			opts.Metrics = newTestRegistry(tb)
		}
		q, err := NewControlQueue[T](id, opts)
		if err != nil {
			return nil, err
		}
		return q, nil
	}
	tb.Fatalf("unknown implementation %q", impl)
	return nil, nil
}

// newTestRegistry returns a registry of the test's own, so that the tests'
// counts stay out of the process-wide one.
func newTestRegistry(tb testing.TB) *MetricsRegistry {
	tb.Helper()
	r, err := NewMetricsRegistry()
	if err != nil {
		tb.Fatalf("NewMetricsRegistry: %v", err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// newLeader makes a leader queue of impl with limits.
func newLeader[T any](tb testing.TB, impl string, limits Limits) queue[T] {
	tb.Helper()
	q := newQueue[T](tb, impl, Options{Limits: limits})
	must(tb, q.SetLeader())
	return q
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func mustState[T any](tb testing.TB, q queue[T]) SlotState {
	tb.Helper()
	s, err := q.State()
	if err != nil {
		tb.Fatalf("State: %v", err)
	}
	return s
}

func mustCounters[T any](tb testing.TB, q queue[T]) AdmissionCounters {
	tb.Helper()
	c, err := q.Counters()
	if err != nil {
		tb.Fatalf("Counters: %v", err)
	}
	return c
}

// drainAll drains q with Drain until it is empty and returns what it handed.
func drainAll[T any](tb testing.TB, q queue[T]) []Control[T] {
	tb.Helper()
	var out []Control[T]
	for {
		n, err := q.Drain(1000, func(c Control[T]) { out = append(out, c) })
		if err != nil {
			tb.Fatalf("Drain: %v", err)
		}
		if n == 0 {
			return out
		}
	}
}

// action is a host value like upstream's controlAction: a pointer to a
// struct with a payload.
type action struct {
	id      int
	payload []byte
}

func newAction(id int) *action {
	return &action{id: id, payload: []byte{byte(id), byte(id >> 8), 0xa5}}
}

// intact reports whether a carries the payload newAction gave it.
func (a *action) intact() bool {
	return a != nil && len(a.payload) == 3 && a.payload[0] == byte(a.id) && a.payload[1] == byte(a.id>>8) &&
		a.payload[2] == 0xa5
}

// recorder is an observer that records every call.
type recorder struct {
	slots   []uint64
	results []string
}

func (r *recorder) ObserveSlotProposalAdmission(slotID SlotID, class ProposalClass, result string) {
	r.slots = append(r.slots, uint64(slotID))
	r.results = append(r.results, string(class)+":"+result)
}

// check fails tb unless the recorded results are want, all for slot id.
func (r *recorder) check(tb testing.TB, id uint64, want ...string) {
	tb.Helper()
	if !slices.Equal(r.results, want) {
		tb.Errorf("observer saw %q, want %q", r.results, want)
	}
	for _, s := range r.slots {
		if s != id {
			tb.Errorf("observer got slot id %d, want %d", s, id)
			break
		}
	}
}
