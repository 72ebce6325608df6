//go:build cgo && !wkcore_purego

package multiraft

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi/include
#include "wkcore.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// Implementation names the build: "rust" here, where the Rust core is linked;
// "go" in the pure-Go build (CGO_ENABLED=0, or the wkcore_purego tag).
const Implementation = "rust"

// slotCore is the non-generic part of a queue: the C handle, the calls in
// flight, the host's fatal error and the observer.
type slotCore struct {
	// uses guards the producers' and the other calls; drainUses the consumer's,
	// on its own line, so that draining does not take the line every
	// admission writes. Close closes both.
	uses      wkabi.Uses
	_         [56]byte
	drainUses wkabi.Uses
	_         [56]byte
	p         *C.wk_slot
	id        uint64
	obs       ProposalAdmissionObserver
	fail      atomic.Pointer[error]
}

// ControlQueue is one slot's control admission and FIFO queue of the host's
// values (see queue.go for the contract). In this build the decision, the
// order and the accounting are the Rust core's (one CAS per admission or
// batch); the values stay in Go, in a cell store indexed by each item's ring
// position, with no lock and no allocation per item.
type ControlQueue[T any] struct {
	core  *slotCore
	cells *cellStore[T]

	// The consumer side, owned by whoever holds gate.
	gate    atomic.Bool
	pending []Control[T]
	scratch []Control[T]
}

// NewControlQueue creates the queue of one slot: a follower (not leader),
// open, with nothing queued. Invalid limits give an error matching
// ErrInvalidOptions; a closed Options.Metrics gives ErrHandleClosed.
func NewControlQueue[T any](slotID uint64, opts Options) (*ControlQueue[T], error) {
	limits, err := opts.Limits.normalize()
	if err != nil {
		return nil, err
	}
	reg, err := opts.Metrics.registry()
	if err != nil {
		return nil, err
	}
	cl := C.wk_slot_limits{
		max_queued_controls:            C.uint32_t(limits.MaxQueuedControls),
		max_queued_background_controls: C.uint32_t(limits.MaxQueuedBackgroundControls),
	}
	var p *C.wk_slot
	err = reg.With(func(m wkabi.Ptr) error {
		return codeError(C.wk_slot_new((*C.wk_metrics_registry)(m), C.uint64_t(slotID), &cl, &p))
	})
	if err != nil {
		return nil, err
	}
	core := &slotCore{p: p, id: slotID, obs: opts.Observer}
	runtime.SetFinalizer(core, func(c *slotCore) { C.wk_slot_free(c.p) })
	return &ControlQueue[T]{core: core, cells: newCellStore[T](limits.MaxQueuedControls)}, nil
}

// acquire registers a call on the queue; false when it is nil or closed.
// Drain and DrainInto use the consumer's guard (consumer true).
func (q *ControlQueue[T]) acquire() bool { return q.enter(false) }

func (q *ControlQueue[T]) release() { q.leave(false) }

func (q *ControlQueue[T]) enter(consumer bool) bool {
	if q == nil || q.core == nil || !q.core.guard(consumer).Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (q *ControlQueue[T]) leave(consumer bool) {
	runtime.KeepAlive(q.core)
	q.core.guard(consumer).Release()
}

func (c *slotCore) guard(consumer bool) *wkabi.Uses {
	if consumer {
		return &c.drainUses
	}
	return &c.uses
}

// ID returns the slot id (0 for a nil queue). It stays valid after Close.
func (q *ControlQueue[T]) ID() uint64 {
	if q == nil || q.core == nil {
		return 0
	}
	return q.core.id
}

// codeError maps a status of a call without a slot: nil for OK.
func codeError(st C.wk_status) error {
	return status.Lookup(status.Code(st))
}

// err maps a refusal or failure of a call on the slot to its error; the hot
// refusals without a lookup.
func (c *slotCore) err(st C.wk_status) error {
	switch st {
	case C.WK_STATUS_OK:
		return nil
	case C.WK_STATUS_PROPOSAL_BUSY:
		return errProposalBusy
	case C.WK_STATUS_PROPOSAL_THROTTLED:
		return errProposalThrottled
	case C.WK_STATUS_SLOT_BUSY:
		return errSlotBusy
	case C.WK_STATUS_NOT_LEADER:
		return errNotLeader
	case C.WK_STATUS_SLOT_CLOSED:
		return errSlotClosed
	case C.WK_STATUS_CONFIG_CHANGE_PENDING:
		return errConfigChangePending
	case C.WK_STATUS_SLOT_FAILED:
		if e := c.fail.Load(); e != nil {
			return *e
		}
		return errSlotFailed
	}
	return codeError(st)
}

// observe reports a proposal decision to the observer.
func (c *slotCore) observe(class ProposalClass, err error, n int) {
	result := AdmissionOK
	if err != nil {
		if result = refusalResult(err); result == "" {
			return
		}
	}
	class = class.Normalize()
	for i := 0; i < n; i++ {
		c.obs.ObserveSlotProposalAdmission(c.id, class, result)
	}
}

func rawClass(class ProposalClass) C.wk_proposal_class {
	if class.background() {
		return C.WK_PROPOSAL_CLASS_BACKGROUND
	}
	return C.WK_PROPOSAL_CLASS_FOREGROUND
}

// Admit queues v as one control action of kind, or says why not (queue.go).
func (q *ControlQueue[T]) Admit(kind ControlKind, class ProposalClass, v T) error {
	_, err := q.admit(kind, class, v)
	return err
}

// AdmitConfigChange queues v as a config change and returns the ticket that
// resolves it.
func (q *ControlQueue[T]) AdmitConfigChange(v T) (ConfigChange, error) {
	return q.admit(ControlConfigChange, ProposalClassForeground, v)
}

func (q *ControlQueue[T]) admit(kind ControlKind, class ProposalClass, v T) (ConfigChange, error) {
	if !q.acquire() {
		return ConfigChange{}, ErrHandleClosed
	}
	var adm C.wk_admission
	st := C.wk_slot_admit(q.core.p, C.wk_control_kind(kind), rawClass(class), 0, &adm)
	var cc ConfigChange
	if st == C.WK_STATUS_OK {
		one := [1]T{v}
		q.cells.put(uint32(adm.position), kind, class.background(), uint64(adm.config_change), one[:])
		if adm.config_change != 0 {
			cc = ConfigChange{r: q.core, ticket: uint64(adm.config_change)}
		}
	}
	q.release()
	if st == C.WK_STATUS_OK {
		if kind == ControlPropose && q.core.obs != nil {
			q.core.observe(class, nil, 1)
		}
		return cc, nil
	}
	err := q.core.err(st)
	if kind == ControlPropose && q.core.obs != nil {
		q.core.observe(class, err, 1)
	}
	return ConfigChange{}, err
}

// AdmitBatch admits the leading values that fit, in order.
func (q *ControlQueue[T]) AdmitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	if !q.acquire() {
		return 0, ErrHandleClosed
	}
	admitted, err := q.admitBatch(kind, class, vs)
	q.release()
	if kind == ControlPropose && q.core.obs != nil {
		q.core.observe(class, nil, admitted)
		if err != nil {
			q.core.observe(class, err, 1)
		}
	}
	return admitted, err
}

func (q *ControlQueue[T]) admitBatch(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	if len(vs) == 0 {
		if !kind.Valid() {
			return 0, ErrInvalidArgument
		}
		return 0, nil
	}
	bg := class.background()
	admitted := 0
	for len(vs) > 0 {
		chunk := vs[:min(len(vs), MaxLimit)]
		var res C.wk_batch_result
		st := C.wk_slot_admit_batch(q.core.p, C.wk_control_kind(kind), rawClass(class), nil,
			C.size_t(len(chunk)), &res)
		if st != C.WK_STATUS_OK {
			return admitted, q.core.err(st)
		}
		n := int(res.admitted)
		if n > 0 {
			q.cells.put(uint32(res.first_position), kind, bg, uint64(res.config_change), chunk[:n])
		}
		admitted += n
		if res.refused != C.WK_STATUS_OK {
			return admitted, q.core.err(res.refused)
		}
		vs = vs[len(chunk):]
	}
	return admitted, nil
}

// lock takes the consumer gate; consumers are serialized, and the one per
// slot that hosts run never waits.
func (q *ControlQueue[T]) lock() {
	for !q.gate.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func (q *ControlQueue[T]) unlock() { q.gate.Store(false) }

// takeInto takes up to len(out) items from the core into out (consumer side,
// under the gate), drainChunk at a time at most (the cell store relies on
// it), and returns how many.
func (q *ControlQueue[T]) takeInto(out []Control[T]) (int, error) {
	taken := 0
	for taken < len(out) {
		var res C.wk_drain_result
		want := min(len(out)-taken, drainChunk)
		if st := C.wk_slot_take(q.core.p, C.size_t(want), &res); st != C.WK_STATUS_OK {
			return taken, q.core.err(st)
		}
		n := int(res.count)
		if n == 0 {
			break
		}
		q.cells.takeInto(uint32(res.first_position), out[taken:taken+n], q.core)
		taken += n
		if n < want {
			break
		}
	}
	return taken, nil
}

// enterConsumer starts a Drain or DrainInto: ErrHandleClosed on a closed
// queue (whatever the arguments), ErrInvalidArgument for bad ones, else the
// consumer's guard and gate are held until leaveConsumer.
func (q *ControlQueue[T]) enterConsumer(argsOK bool) error {
	if !argsOK {
		if q == nil || q.core == nil || q.core.uses.Closed() {
			return ErrHandleClosed
		}
		return ErrInvalidArgument
	}
	if !q.enter(true) {
		return ErrHandleClosed
	}
	q.lock()
	return nil
}

func (q *ControlQueue[T]) leaveConsumer() {
	q.unlock()
	q.leave(true)
}

// Drain hands up to max queued actions, oldest first, to f.
func (q *ControlQueue[T]) Drain(max int, f func(Control[T])) (int, error) {
	if err := q.enterConsumer(max > 0 && f != nil); err != nil {
		return 0, err
	}
	defer q.leaveConsumer()
	handed := 0
	for handed < max {
		if len(q.pending) == 0 {
			if q.scratch == nil {
				q.scratch = make([]Control[T], drainChunk)
			}
			n, err := q.takeInto(q.scratch[:min(max-handed, drainChunk)])
			if err != nil {
				return handed, err
			}
			if n == 0 {
				break
			}
			q.pending = q.scratch[:n]
		}
		handed = handOut(&q.pending, handed, max, f)
	}
	return handed, nil
}

// DrainInto moves up to len(out) queued actions, oldest first, into out.
func (q *ControlQueue[T]) DrainInto(out []Control[T]) (int, error) {
	if err := q.enterConsumer(len(out) > 0); err != nil {
		return 0, err
	}
	defer q.leaveConsumer()
	n := copy(out, q.pending)
	clear(q.pending[:n])
	q.pending = q.pending[n:]
	if n == len(out) {
		return n, nil
	}
	m, err := q.takeInto(out[n:])
	return n + m, err
}

// call runs a C call on the slot.
func (q *ControlQueue[T]) call(f func(*C.wk_slot) C.wk_status) error {
	if !q.acquire() {
		return ErrHandleClosed
	}
	st := f(q.core.p)
	q.release()
	return q.core.err(st)
}

// SetLeader makes the slot a leader: it admits proposals and config changes.
func (q *ControlQueue[T]) SetLeader() error {
	return q.call(func(p *C.wk_slot) C.wk_status { return C.wk_slot_set_leader(p) })
}

// Demote makes the slot a follower.
func (q *ControlQueue[T]) Demote() error {
	return q.call(func(p *C.wk_slot) C.wk_status { return C.wk_slot_demote(p) })
}

// CloseSlot closes the slot, as upstream's CloseSlot.
func (q *ControlQueue[T]) CloseSlot() error {
	return q.call(func(p *C.wk_slot) C.wk_status { return C.wk_slot_close(p) })
}

// Fail records err as the slot's fatal error; the first one wins.
func (q *ControlQueue[T]) Fail(err error) (bool, error) {
	if !q.acquire() {
		return false, ErrHandleClosed
	}
	defer q.release()
	if err == nil {
		return false, ErrInvalidArgument
	}
	// The Go error is recorded first, so a refusal that sees the core's
	// fatal flag finds it; the core's flag is what refuses.
	if !q.core.fail.CompareAndSwap(nil, &err) {
		return false, nil
	}
	switch st := C.wk_slot_fail(q.core.p, 1); st {
	case C.WK_STATUS_OK, C.WK_STATUS_SLOT_FAILED:
		return true, nil
	default:
		return true, codeError(st)
	}
}

func (c *slotCore) resolveConfigChange(ticket uint64) error {
	if !c.uses.Acquire() {
		return ErrHandleClosed
	}
	st := C.wk_slot_config_change_resolve(c.p, C.uint64_t(ticket))
	runtime.KeepAlive(c)
	c.uses.Release()
	if st == C.WK_STATUS_CONFIG_CHANGE_STALE {
		return errConfigChangeStale
	}
	return c.err(st)
}

// State returns a point-in-time view of the queue.
func (q *ControlQueue[T]) State() (SlotState, error) {
	if !q.acquire() {
		return SlotState{}, ErrHandleClosed
	}
	defer q.release()
	var c C.wk_slot_state
	if st := C.wk_slot_state_get(q.core.p, &c, C.sizeof_wk_slot_state); st != C.WK_STATUS_OK {
		return SlotState{}, q.core.err(st)
	}
	s := SlotState{
		Queued:              int(c.queued),
		QueuedProposals:     int(c.queued_proposals),
		QueuedBackground:    int(c.queued_background),
		Leader:              c.leader != 0,
		Closed:              c.closed != 0,
		Failed:              c.fatal != 0,
		ConfigChangePending: c.config_change_pending != 0,
		MemoryBytes:         int(c.memory_bytes) + q.cells.memoryBytes() + int(unsafe.Sizeof(*q)),
	}
	if s.Failed {
		s.FailErr = q.core.err(C.WK_STATUS_SLOT_FAILED)
	}
	return s, nil
}

// Counters returns the queue's proposal admission counters.
func (q *ControlQueue[T]) Counters() (AdmissionCounters, error) {
	if !q.acquire() {
		return AdmissionCounters{}, ErrHandleClosed
	}
	defer q.release()
	var c C.wk_admission_counters
	if st := C.wk_slot_counters_get(q.core.p, &c, C.sizeof_wk_admission_counters); st != C.WK_STATUS_OK {
		return AdmissionCounters{}, q.core.err(st)
	}
	return AdmissionCounters{
		ForegroundOK: uint64(c.foreground_ok), ForegroundBusy: uint64(c.foreground_busy),
		ForegroundThrottled: uint64(c.foreground_throttled), ForegroundNotLeader: uint64(c.foreground_not_leader),
		BackgroundOK: uint64(c.background_ok), BackgroundBusy: uint64(c.background_busy),
		BackgroundThrottled: uint64(c.background_throttled), BackgroundNotLeader: uint64(c.background_not_leader),
	}, nil
}

// Close closes the slot and releases the queue, dropping what is queued.
func (q *ControlQueue[T]) Close() error { return q.CloseAndDrain(nil) }

// CloseAndDrain closes the slot, hands every action still queued to f (when
// not nil), oldest first, and releases the queue: its C memory is freed here,
// not by a finalizer. It waits for calls in flight on the queue; calls that
// start after it return ErrHandleClosed, and so does a second Close.
func (q *ControlQueue[T]) CloseAndDrain(f func(Control[T])) error {
	if q == nil || q.core == nil || !q.core.uses.Close() {
		return ErrHandleClosed
	}
	// This call won uses; it is the only one to close drainUses.
	q.core.drainUses.Close()
	c := q.core
	C.wk_slot_close(c.p)
	// No call is in flight and none can start: the consumer side is ours.
	rest := q.pending
	q.pending = nil
	var buf [drainChunk]Control[T]
	for {
		n, err := q.takeInto(buf[:])
		if err != nil || n == 0 {
			break
		}
		rest = append(rest, buf[:n]...)
		clear(buf[:n])
	}
	runtime.SetFinalizer(c, nil)
	C.wk_slot_free(c.p)
	c.p = nil
	q.cells, q.scratch = nil, nil
	if f != nil {
		for _, ctl := range rest {
			f(ctl)
		}
	}
	return nil
}
