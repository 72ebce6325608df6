//go:build !cgo || wkcore_purego

package multiraft

// Implementation names the build: "go" here (CGO_ENABLED=0, or the
// wkcore_purego tag), "rust" where the Rust core is linked.
const Implementation = "go"

// ControlQueue is one slot's control admission and FIFO queue of the host's
// values (see queue.go for the contract). In this build it is upstream's
// algorithm under a mutex, with the same API and behaviour as the Rust core's.
type ControlQueue[T any] struct {
	m *mutexQueue[T]
}

// NewControlQueue creates the queue of one slot: a follower (not leader),
// open, with nothing queued. Invalid limits give an error matching
// ErrInvalidOptions; a closed Options.Metrics gives ErrHandleClosed.
func NewControlQueue[T any](slotID uint64, opts Options) (*ControlQueue[T], error) {
	reg := globalGoRegistry()
	if opts.Metrics != nil {
		if opts.Metrics.closed() {
			return nil, ErrHandleClosed
		}
		reg = opts.Metrics.g
	}
	m, err := newMutexQueue[T](slotID, opts, reg)
	if err != nil {
		return nil, err
	}
	return &ControlQueue[T]{m: m}, nil
}

func (q *ControlQueue[T]) ok() bool { return q != nil && q.m != nil }

// ID returns the slot id (0 for a nil queue). It stays valid after Close.
func (q *ControlQueue[T]) ID() uint64 {
	if !q.ok() {
		return 0
	}
	return q.m.id
}

// Admit queues v as one control action of kind, or says why not (queue.go).
func (q *ControlQueue[T]) Admit(kind ControlKind, class ProposalClass, v T) error {
	if !q.ok() {
		return ErrHandleClosed
	}
	_, err := q.m.admit(kind, class, v)
	return err
}

// AdmitConfigChange queues v as a config change and returns the ticket that
// resolves it.
func (q *ControlQueue[T]) AdmitConfigChange(v T) (ConfigChange, error) {
	if !q.ok() {
		return ConfigChange{}, ErrHandleClosed
	}
	return q.m.admit(ControlConfigChange, ProposalClassForeground, v)
}

// AdmitBatch admits the leading values that fit, in order.
func (q *ControlQueue[T]) AdmitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	if !q.ok() {
		return 0, ErrHandleClosed
	}
	return q.m.admitBatch(kind, class, vs)
}

// Drain hands up to max queued actions, oldest first, to f.
func (q *ControlQueue[T]) Drain(max int, f func(Control[T])) (int, error) {
	if !q.ok() {
		return 0, ErrHandleClosed
	}
	return q.m.drain(max, f)
}

// DrainInto moves up to len(out) queued actions, oldest first, into out.
func (q *ControlQueue[T]) DrainInto(out []Control[T]) (int, error) {
	if !q.ok() {
		return 0, ErrHandleClosed
	}
	return q.m.drainInto(out)
}

// SetLeader makes the slot a leader: it admits proposals and config changes.
func (q *ControlQueue[T]) SetLeader() error {
	if !q.ok() {
		return ErrHandleClosed
	}
	return q.m.setLeader()
}

// Demote makes the slot a follower.
func (q *ControlQueue[T]) Demote() error {
	if !q.ok() {
		return ErrHandleClosed
	}
	return q.m.demote()
}

// CloseSlot closes the slot, as upstream's CloseSlot.
func (q *ControlQueue[T]) CloseSlot() error {
	if !q.ok() {
		return ErrHandleClosed
	}
	return q.m.closeSlot()
}

// Fail records err as the slot's fatal error; the first one wins.
func (q *ControlQueue[T]) Fail(err error) (bool, error) {
	if !q.ok() {
		return false, ErrHandleClosed
	}
	return q.m.fail(err)
}

// State returns a point-in-time view of the queue.
func (q *ControlQueue[T]) State() (SlotState, error) {
	if !q.ok() {
		return SlotState{}, ErrHandleClosed
	}
	return q.m.state()
}

// Counters returns the queue's proposal admission counters.
func (q *ControlQueue[T]) Counters() (AdmissionCounters, error) {
	if !q.ok() {
		return AdmissionCounters{}, ErrHandleClosed
	}
	return q.m.counters()
}

// Close closes the slot and releases the queue, dropping what is queued.
func (q *ControlQueue[T]) Close() error { return q.CloseAndDrain(nil) }

// CloseAndDrain closes the slot, hands every action still queued to f (when
// not nil), oldest first, and releases the queue.
func (q *ControlQueue[T]) CloseAndDrain(f func(Control[T])) error {
	if !q.ok() {
		return ErrHandleClosed
	}
	return q.m.close(f)
}
