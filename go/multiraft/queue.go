package multiraft

import (
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/metrics"
)

// drainChunk is how many items a Drain takes from the queue at a time before
// it hands them to the callback.
const drainChunk = 256

var _ metrics.Source = (*MetricsRegistry)(nil)

// Render returns the Prometheus text exposition (format 0.0.4) of every
// family of the registry.
func (r *MetricsRegistry) Render() (string, error) {
	families, err := r.Families()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := metrics.Render(&b, families); err != nil {
		return "", err
	}
	return b.String(), nil
}

// handOut hands the pending items to f, oldest first, until handed reaches
// max, and returns the new handed count. Each item leaves pending (and its
// place is cleared) before f sees it, so a panicking f loses nothing and
// duplicates nothing: the next drain starts with what is left.
func handOut[T any](pending *[]Control[T], handed, max int, f func(Control[T])) int {
	for len(*pending) > 0 && handed < max {
		c := (*pending)[0]
		(*pending)[0] = Control[T]{}
		*pending = (*pending)[1:]
		handed++
		f(c)
	}
	return handed
}

// ControlQueue is one slot's control admission and FIFO queue of the host's
// values. Admission runs inline on the slot's words (engine.go), in both
// builds: one CAS for an admitted proposal, no lock, no allocation, no C
// call; the consumer side is serialized by a gate that the one worker per
// slot never waits on.
//
// The zero value is a valid queue, created on first use with the default
// options (upstream's limits, no observer, the process-wide registry, slot id
// 0): a struct that embeds a ControlQueue needs no constructor call, as
// upstream's slot literal needs none. A queue must not be copied after first
// use.
type ControlQueue[T any] struct {
	eng atomic.Pointer[engine[T]]

	// The consumer side, owned by whoever holds the engine's gate;
	// hasScratch says (to State) that scratch is allocated.
	pending    []Control[T]
	scratch    []Control[T]
	hasScratch atomic.Bool
	// pendingLen is len(pending) for Len, stored when a Drain returns or
	// unwinds.
	pendingLen atomic.Int64
}

// NewControlQueue creates the queue of one slot: a follower (not leader),
// open, with nothing queued. Invalid limits give an error matching
// ErrInvalidOptions; a closed Options.Metrics gives ErrHandleClosed.
func NewControlQueue[T any](slotID uint64, opts Options) (*ControlQueue[T], error) {
	limits, err := opts.Limits.normalize()
	if err != nil {
		return nil, err
	}
	e, err := buildEngine[T](slotID, limits, opts)
	if err != nil {
		return nil, err
	}
	q := &ControlQueue[T]{}
	q.eng.Store(e)
	return q, nil
}

func buildEngine[T any](slotID uint64, limits Limits, opts Options) (*engine[T], error) {
	reg := opts.Metrics
	if reg == nil && opts.DiscardMetrics {
		var err error
		if reg, err = discardMetrics(); err != nil {
			return nil, err
		}
	}
	hs, err := newHostedSlot(slotID, limits, reg)
	if err != nil {
		return nil, err
	}
	e := newEngine[T](hs.words, limits, slotID, opts.Observer, hs.holder)
	e.extraBytes, e.unregister = hs.bytes, hs.unregister
	return e, nil
}

// load returns the queue's engine, creating the zero value's on first use;
// nil for a nil queue (or if the default slot cannot be made).
func (q *ControlQueue[T]) load() *engine[T] {
	if q == nil {
		return nil
	}
	if e := q.eng.Load(); e != nil {
		return e
	}
	return q.lazy()
}

// lazy makes the zero value's engine; a racing first use keeps the winner's.
func (q *ControlQueue[T]) lazy() *engine[T] {
	e, err := buildEngine[T](0, DefaultLimits(), Options{})
	if err != nil {
		return nil
	}
	if q.eng.CompareAndSwap(nil, e) {
		return e
	}
	e.discard()
	return q.eng.Load()
}

// ID returns the slot id (0 for a nil queue). It stays valid after Close.
func (q *ControlQueue[T]) ID() uint64 {
	e := q.load()
	if e == nil {
		return 0
	}
	return e.id
}

// invalid answers a call refused for its arguments: ErrHandleClosed on a
// closed handle, as every call that starts after Close, else
// ErrInvalidArgument.
func (e *engine[T]) invalid() error {
	if e.closed() {
		return ErrHandleClosed
	}
	return ErrInvalidArgument
}

// Admit queues v as one control action of kind, or says why not (see the
// package docs for the refusals, in upstream's order).
func (q *ControlQueue[T]) Admit(kind ControlKind, class ProposalClass, v T) error {
	e := q.load()
	if e == nil {
		return ErrHandleClosed
	}
	if !kind.Valid() {
		return e.invalid()
	}
	_, err := e.admitOne(kind, class, &v)
	return err
}

// AdmitConfigChange queues v as a config change and returns the ticket that
// resolves it.
func (q *ControlQueue[T]) AdmitConfigChange(v T) (ConfigChange, error) {
	e := q.load()
	if e == nil {
		return ConfigChange{}, ErrHandleClosed
	}
	ticket, err := e.admitOne(ControlConfigChange, ProposalClassForeground, &v)
	if err != nil {
		return ConfigChange{}, err
	}
	return ConfigChange{r: e, ticket: ticket}, nil
}

// AdmitBatch admits the leading values that fit, in order, with one decision
// per run (at most MaxLimit values), and returns how many; the error says why
// the rest were not admitted. A config change batch admits at most one value.
func (q *ControlQueue[T]) AdmitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	e := q.load()
	if e == nil {
		return 0, ErrHandleClosed
	}
	if !kind.Valid() {
		return 0, e.invalid()
	}
	if len(vs) == 0 {
		if e.closed() {
			return 0, ErrHandleClosed
		}
		return 0, nil
	}
	return e.admitRun(kind, class, vs)
}

// enterConsumer starts a Drain or DrainInto: ErrHandleClosed on a closed
// queue (whatever the arguments), ErrInvalidArgument for bad ones, else the
// gate is held until the caller unlocks it.
func (q *ControlQueue[T]) enterConsumer(argsOK bool) (*engine[T], error) {
	e := q.load()
	if e == nil {
		return nil, ErrHandleClosed
	}
	if !argsOK {
		return nil, e.invalid()
	}
	e.lock()
	if e.closed() {
		e.unlock()
		return nil, ErrHandleClosed
	}
	return e, nil
}

// Drain hands up to max queued actions, oldest first, to f, and returns how
// many. f runs on the calling goroutine while this Drain holds the consumer
// side (see the package docs, "Callbacks").
func (q *ControlQueue[T]) Drain(max int, f func(Control[T])) (int, error) {
	e, err := q.enterConsumer(max > 0 && f != nil)
	if err != nil {
		return 0, err
	}
	defer e.unlock()
	defer func() { q.pendingLen.Store(int64(len(q.pending))) }()
	handed := 0
	for handed < max {
		if len(q.pending) == 0 {
			if q.scratch == nil {
				q.scratch = make([]Control[T], drainChunk)
				q.hasScratch.Store(true)
			}
			n := e.take(q.scratch[:min(max-handed, drainChunk)], e)
			if n == 0 {
				break
			}
			q.pending = q.scratch[:n]
		}
		handed = handOut(&q.pending, handed, max, f)
	}
	return handed, nil
}

// DrainInto moves up to len(out) queued actions, oldest first, into out and
// returns how many: a worker's batch take into its own buffer, with no
// callback (so it may run while the worker holds its own locks).
func (q *ControlQueue[T]) DrainInto(out []Control[T]) (int, error) {
	e, err := q.enterConsumer(len(out) > 0)
	if err != nil {
		return 0, err
	}
	defer e.unlock()
	n := copy(out, q.pending)
	clear(q.pending[:n])
	q.pending = q.pending[n:]
	q.pendingLen.Store(int64(len(q.pending)))
	if n == len(out) {
		return n, nil
	}
	return n + e.take(out[n:], e), nil
}

// Len returns how many control actions are queued, every kind (upstream's
// len(controls)); State gives the per-class counts.
func (q *ControlQueue[T]) Len() int {
	e := q.load()
	if e == nil || e.closed() {
		return 0
	}
	return e.snapshot().Queued + int(q.pendingLen.Load())
}

// Visit hands the queued actions, oldest first, to f without taking them,
// until f returns false, and returns how many it handed: a look at what is
// queued (upstream's reads of controls[i]) and the way to cancel queued
// requests in place, as upstream's failPendingLocked does, while they stay
// queued for the worker. It runs on the consumer side, so it waits for a
// Drain in flight, and f must not call Drain, DrainInto, Visit, Close or
// CloseAndDrain on the same queue. Actions admitted while it runs may or may
// not be visited.
func (q *ControlQueue[T]) Visit(f func(Control[T]) bool) (int, error) {
	e, err := q.enterConsumer(f != nil)
	if err != nil {
		return 0, err
	}
	defer e.unlock()
	n := 0
	for _, c := range q.pending {
		n++
		if !f(c) {
			return n, nil
		}
	}
	return n + e.visit(f, e), nil
}

// SetLeader makes the slot a leader: it admits proposals and config changes.
func (q *ControlQueue[T]) SetLeader() error {
	e := q.load()
	if e == nil {
		return ErrHandleClosed
	}
	return e.setFlag(leaderBit, true)
}

// Demote makes the slot a follower: from the very next admission, proposals
// and config changes are refused with ErrNotLeader.
func (q *ControlQueue[T]) Demote() error {
	e := q.load()
	if e == nil {
		return ErrHandleClosed
	}
	return e.setFlag(leaderBit, false)
}

// CloseSlot closes the slot, as upstream's CloseSlot: every later admission
// is refused with ErrSlotClosed; what is queued stays queued for Drain.
func (q *ControlQueue[T]) CloseSlot() error {
	e := q.load()
	if e == nil {
		return ErrHandleClosed
	}
	return e.setFlag(closedBit, true)
}

// Fail records err as the slot's fatal error; the first one wins (true):
// every later admission is refused with it.
func (q *ControlQueue[T]) Fail(err error) (bool, error) {
	e := q.load()
	if e == nil {
		return false, ErrHandleClosed
	}
	if err == nil {
		return false, e.invalid()
	}
	return e.failWith(err)
}

// State returns a point-in-time view of the queue.
func (q *ControlQueue[T]) State() (SlotState, error) {
	e := q.load()
	if e == nil || e.closed() {
		return SlotState{}, ErrHandleClosed
	}
	s := e.snapshot()
	s.MemoryBytes = e.memoryBytes() + e.extraBytes + int(unsafe.Sizeof(*q))
	if q.hasScratch.Load() {
		s.MemoryBytes += drainChunk * int(unsafe.Sizeof(Control[T]{}))
	}
	return s, nil
}

// Limits returns the queue's limits as normalized (defaults filled in,
// values above MaxLimit clamped): what upstream's slot reads from its
// maxQueuedControls / maxQueuedBackgroundControls fields. ErrHandleClosed
// after Close.
func (q *ControlQueue[T]) Limits() (Limits, error) {
	e := q.load()
	if e == nil || e.closed() {
		return Limits{}, ErrHandleClosed
	}
	return Limits{MaxQueuedControls: int(e.limit), MaxQueuedBackgroundControls: int(e.limitBg)}, nil
}

// Closed reports whether CloseSlot or Close was called (true for a nil
// queue too, which admits nothing): upstream's slot closed field.
func (q *ControlQueue[T]) Closed() bool {
	s, err := q.State()
	return err != nil || s.Closed
}

// FailErr returns the error Fail recorded (nil if none): upstream's slot
// fatalErr field. After Close it returns nil.
func (q *ControlQueue[T]) FailErr() error {
	s, err := q.State()
	if err != nil {
		return nil
	}
	return s.FailErr
}

// discardMetrics is the registry of the queues made with DiscardMetrics:
// one for the process, that no source reads.
var discardMetrics = sync.OnceValues(NewMetricsRegistry)

// Counters returns the queue's proposal admission counters.
func (q *ControlQueue[T]) Counters() (AdmissionCounters, error) {
	e := q.load()
	if e == nil || e.closed() {
		return AdmissionCounters{}, ErrHandleClosed
	}
	return e.counters(), nil
}

// Close closes the slot and releases the queue, dropping what is queued.
func (q *ControlQueue[T]) Close() error { return q.CloseAndDrain(nil) }

// CloseAndDrain closes the slot, hands every action still queued to f (when
// not nil), oldest first, so the host can cancel them, and releases the
// queue's storage. Calls that start after it return ErrHandleClosed, and so
// does a second Close. It waits for a Drain in flight; admissions that won
// just before it are handed to f too. The few hundred bytes of the slot's
// words are released with the queue itself, by the garbage collector: an
// admission running inline may still read them.
func (q *ControlQueue[T]) CloseAndDrain(f func(Control[T])) error {
	e := q.load()
	if e == nil || !e.closeHandle() {
		return ErrHandleClosed
	}
	e.lock()
	rest := e.takeRest(q.pending, e)
	q.pending, q.scratch = nil, nil
	q.pendingLen.Store(0)
	e.unlock()
	if e.unregister != nil {
		e.unregister()
	}
	if f != nil {
		for _, c := range rest {
			f(c)
		}
	}
	return nil
}
