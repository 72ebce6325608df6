package multiraft

import (
	"slices"
	"sync"
	"unsafe"
)

// mutexQueue is upstream multiraft's control admission in pure Go:
// enqueueControl's check order, the FIFO slice and its spare buffer, the
// background counter, all under one mutex. It is the pure-Go build's
// ControlQueue (queue_purego.go) and, in every build, the baseline the
// benchmarks put beside the Rust core. Its behaviour is the Rust core's: the
// same scenario files and tests run against both.
//
// Where upstream has no counterpart (partial drains, tickets for config
// changes, Fail with a first-wins error), it does what the Rust core does: a
// drain of k items frees k places and the background quota of the background
// proposals among them (a drain of everything resets it, as upstream's
// takeControlBatch), and the pending config change is cleared only by its
// ticket.
type mutexQueue[T any] struct {
	id       uint64
	limits   Limits
	observer ProposalAdmissionObserver
	registry *goRegistry

	mu               sync.Mutex
	controls         []Control[T]
	spare            []Control[T]
	queuedBackground int
	queuedProposals  int
	leader           bool
	slotClosed       bool
	handleClosed     bool
	failErr          error
	configSerial     uint64 // odd: a config change is pending, with this ticket
	outcomes         [2][4]uint64

	// drainMu serializes consumers; pending holds items a consumer took but
	// did not hand over because the callback panicked.
	drainMu sync.Mutex
	pending []Control[T]
	scratch []Control[T]
}

func newMutexQueue[T any](id uint64, opts Options, registry *goRegistry) (*mutexQueue[T], error) {
	limits, err := opts.Limits.normalize()
	if err != nil {
		return nil, err
	}
	registry.used.Store(true)
	return &mutexQueue[T]{id: id, limits: limits, observer: opts.Observer, registry: registry}, nil
}

func queueLimitReached(limit, current int) bool { return limit > 0 && current >= limit }

// admitLocked runs enqueueControl's checks, in upstream's order, and queues c.
func (q *mutexQueue[T]) admitLocked(c *Control[T]) (AdmissionResult, error) {
	if q.handleClosed {
		return "", errQueueClosed
	}
	if q.slotClosed {
		return "", errSlotClosed
	}
	if q.failErr != nil {
		return "", q.failErr
	}
	c.Class = c.Class.Normalize()
	if (c.Kind == ControlPropose || c.Kind == ControlConfigChange) && !q.leader {
		return AdmissionNotLeader, errNotLeader
	}
	if c.Kind == ControlConfigChange && q.configSerial&1 == 1 {
		return "", errConfigChangePending
	}
	if queueLimitReached(q.limits.MaxQueuedControls, len(q.controls)) {
		if c.Kind == ControlPropose {
			return AdmissionBusy, errProposalBusy
		}
		return AdmissionBusy, errSlotBusy
	}
	bg := c.Kind == ControlPropose && c.Class.background()
	if bg && queueLimitReached(q.limits.MaxQueuedBackgroundControls, q.queuedBackground) {
		return AdmissionThrottled, errProposalThrottled
	}
	if bg {
		q.queuedBackground++
	}
	if c.Kind == ControlPropose {
		q.queuedProposals++
	}
	if c.Kind == ControlConfigChange {
		q.configSerial++
		c.ConfigChange = ConfigChange{r: q, ticket: q.configSerial}
	}
	q.controls = append(q.controls, *c)
	return AdmissionOK, nil
}

// countLocked records a proposal decision in the queue's counters.
func (q *mutexQueue[T]) countLocked(class ProposalClass, result AdmissionResult, n uint64) {
	c, i := outcomeIndex(class, result)
	q.outcomes[c][i] += n
	q.registry.add(class, result, n)
}

func (q *mutexQueue[T]) observe(class ProposalClass, result AdmissionResult) {
	q.observer.ObserveSlotProposalAdmission(SlotID(q.id), class, string(result))
}

// check answers a call refused for its arguments: ErrHandleClosed on a closed
// handle, as every call that starts after close, else ErrInvalidArgument
// (nil when valid).
func (q *mutexQueue[T]) check(valid bool) error {
	q.mu.Lock()
	closed := q.handleClosed
	q.mu.Unlock()
	if closed {
		return ErrHandleClosed
	}
	if !valid {
		return ErrInvalidArgument
	}
	return nil
}

func (q *mutexQueue[T]) admit(kind ControlKind, class ProposalClass, v T) (ConfigChange, error) {
	if !kind.Valid() {
		return ConfigChange{}, q.check(false)
	}
	c := Control[T]{Kind: kind, Class: class, Value: v}
	q.mu.Lock()
	result, err := q.admitLocked(&c)
	if result != "" && kind == ControlPropose {
		q.countLocked(c.Class, result, 1)
	}
	q.mu.Unlock()
	if result != "" && kind == ControlPropose && q.observer != nil {
		q.observe(c.Class, result)
	}
	return c.ConfigChange, err
}

func (q *mutexQueue[T]) admitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	if !kind.Valid() || len(vs) == 0 {
		return 0, q.check(kind.Valid())
	}
	class = class.Normalize()
	var (
		n      int
		err    error
		result AdmissionResult
	)
	q.mu.Lock()
	for i := range vs {
		c := Control[T]{Kind: kind, Class: class, Value: vs[i]}
		if result, err = q.admitLocked(&c); err != nil {
			break
		}
		n++
	}
	if kind == ControlPropose {
		if n > 0 {
			q.countLocked(class, AdmissionOK, uint64(n))
		}
		if err != nil && result != "" {
			// Every refused item counts, as the Rust core counts a refused run.
			q.countLocked(class, result, uint64(len(vs)-n))
		}
	}
	q.mu.Unlock()
	if kind == ControlPropose && q.observer != nil {
		for i := 0; i < n; i++ {
			q.observe(class, AdmissionOK)
		}
		if err != nil && result != "" {
			q.observe(class, result)
		}
	}
	return n, err
}

// takeLocked removes the first n queued items, in order, into dst (which has
// room for them) and frees their quota. Taking everything swaps in the spare
// buffer, as upstream's takeControlBatch.
func (q *mutexQueue[T]) takeLocked(dst []Control[T]) int {
	n := min(len(dst), len(q.controls))
	copy(dst, q.controls[:n])
	for i := range dst[:n] {
		if dst[i].Kind == ControlPropose {
			q.queuedProposals--
			if dst[i].Class.background() {
				q.queuedBackground--
			}
		}
	}
	if n == len(q.controls) {
		clear(q.controls)
		q.controls, q.spare = q.spare[:0], q.controls[:0]
	} else {
		rest := copy(q.controls, q.controls[n:])
		clear(q.controls[rest:])
		q.controls = q.controls[:rest]
	}
	return n
}

func (q *mutexQueue[T]) drain(max int, f func(Control[T])) (int, error) {
	if max <= 0 || f == nil {
		return 0, q.check(false)
	}
	q.drainMu.Lock()
	defer q.drainMu.Unlock()
	handed := 0
	for handed < max {
		if len(q.pending) == 0 {
			q.mu.Lock()
			if q.handleClosed {
				q.mu.Unlock()
				if handed == 0 {
					return 0, ErrHandleClosed
				}
				break
			}
			if cap(q.scratch) == 0 {
				// Under mu too: state reads its capacity.
				q.scratch = make([]Control[T], drainChunk)
			}
			n := q.takeLocked(q.scratch[:min(max-handed, len(q.scratch))])
			q.mu.Unlock()
			if n == 0 {
				break
			}
			q.pending = q.scratch[:n]
		}
		handed = handOut(&q.pending, handed, max, f)
	}
	return handed, nil
}

func (q *mutexQueue[T]) drainInto(out []Control[T]) (int, error) {
	if len(out) == 0 {
		return 0, q.check(false)
	}
	q.drainMu.Lock()
	defer q.drainMu.Unlock()
	n := copy(out, q.pending)
	clear(q.pending[:n])
	q.pending = q.pending[n:]
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return 0, ErrHandleClosed
	}
	return n + q.takeLocked(out[n:]), nil
}

// visit hands the queued items, oldest first, to f until it returns false.
func (q *mutexQueue[T]) visit(f func(Control[T]) bool) (int, error) {
	if f == nil {
		return 0, q.check(false)
	}
	q.drainMu.Lock()
	defer q.drainMu.Unlock()
	q.mu.Lock()
	if q.handleClosed {
		q.mu.Unlock()
		return 0, ErrHandleClosed
	}
	items := append(slices.Clone(q.pending), q.controls...)
	q.mu.Unlock()
	for i, c := range items {
		if !f(c) {
			return i + 1, nil
		}
	}
	return len(items), nil
}

func (q *mutexQueue[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return 0
	}
	return len(q.controls) + len(q.pending)
}

func (q *mutexQueue[T]) withLock(f func()) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return ErrHandleClosed
	}
	f()
	return nil
}

func (q *mutexQueue[T]) setLeader() error { return q.withLock(func() { q.leader = true }) }
func (q *mutexQueue[T]) demote() error    { return q.withLock(func() { q.leader = false }) }
func (q *mutexQueue[T]) closeSlot() error { return q.withLock(func() { q.slotClosed = true }) }

func (q *mutexQueue[T]) fail(err error) (bool, error) {
	if err == nil {
		return false, q.check(false)
	}
	recorded := false
	e := q.withLock(func() {
		if q.failErr == nil {
			q.failErr, recorded = err, true
		}
	})
	return recorded, e
}

func (q *mutexQueue[T]) resolveConfigChange(ticket uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return ErrHandleClosed
	}
	if ticket != q.configSerial || ticket&1 == 0 {
		return errConfigChangeStale
	}
	q.configSerial++
	return nil
}

func (q *mutexQueue[T]) state() (SlotState, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return SlotState{}, ErrHandleClosed
	}
	var zero Control[T]
	return SlotState{
		Queued:              len(q.controls),
		QueuedProposals:     q.queuedProposals,
		QueuedBackground:    q.queuedBackground,
		Leader:              q.leader,
		Closed:              q.slotClosed,
		Failed:              q.failErr != nil,
		FailErr:             q.failErr,
		ConfigChangePending: q.configSerial&1 == 1,
		MemoryBytes: (cap(q.controls)+cap(q.spare)+cap(q.scratch))*int(unsafe.Sizeof(zero)) +
			int(unsafe.Sizeof(*q)),
	}, nil
}

func (q *mutexQueue[T]) counters() (AdmissionCounters, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.handleClosed {
		return AdmissionCounters{}, ErrHandleClosed
	}
	return countersOf(&q.outcomes), nil
}

// close closes the slot and the handle; f (when not nil) receives every item
// still queued, in order, so the host can cancel them. A second close returns
// ErrHandleClosed.
func (q *mutexQueue[T]) close(f func(Control[T])) error {
	q.drainMu.Lock()
	defer q.drainMu.Unlock()
	q.mu.Lock()
	if q.handleClosed {
		q.mu.Unlock()
		return ErrHandleClosed
	}
	q.slotClosed, q.handleClosed = true, true
	rest := append(q.pending, q.controls...)
	q.pending, q.controls, q.spare, q.scratch = nil, nil, nil, nil
	q.queuedBackground, q.queuedProposals = 0, 0
	q.mu.Unlock()
	if f != nil {
		for _, c := range rest {
			f(c)
		}
	}
	return nil
}
