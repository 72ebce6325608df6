package wkcore

/*
#include "wkcore.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Limits are the admission limits of a slot. Zero means the default:
// MaxQueuedControls 8192, MaxQueuedBackgroundControls half of
// MaxQueuedControls (at least 1). Either limit above MaxLimit is refused.
type Limits struct {
	// MaxQueuedControls caps the control queue (every kind counts).
	MaxQueuedControls uint32
	// MaxQueuedBackgroundControls caps the queued background proposals.
	MaxQueuedBackgroundControls uint32
}

// MaxLimit is the largest value either limit may have (1<<24); it is also
// the largest batch AdmitBatch passes to the library in one call.
const MaxLimit = 1 << 24

// DefaultLimits returns the upstream defaults, 8192 and 4096.
func DefaultLimits() Limits {
	return Limits{MaxQueuedControls: 8192, MaxQueuedBackgroundControls: 4096}
}

// Item is one control action taken from a slot by Drain. Its memory layout is
// that of the C struct wk_item, so Drain writes straight into the caller's
// slice.
type Item struct {
	// Token is the caller's token given to Admit or AdmitBatch.
	Token uint64
	// Kind is the control kind the token was admitted with.
	Kind ControlKind
	// class is the raw wk_proposal_class (see Class).
	class uint8
	_     [6]byte
}

// Class returns the proposal class the item was admitted with.
func (it Item) Class() ProposalClass { return proposalClassFromRaw(it.class) }

// Compile-time checks that Item matches wk_item: each array has length 0 only
// when the two sides agree, and a negative length does not compile.
var (
	_ [unsafe.Sizeof(Item{}) - C.sizeof_wk_item]struct{}
	_ [C.sizeof_wk_item - unsafe.Sizeof(Item{})]struct{}
	_ [unsafe.Offsetof(Item{}.Kind) - unsafe.Offsetof(C.wk_item{}.kind)]struct{}
	_ [unsafe.Offsetof(C.wk_item{}.kind) - unsafe.Offsetof(Item{}.Kind)]struct{}
	_ [unsafe.Offsetof(Item{}.class) - unsafe.Offsetof(C.wk_item{}.proposal_class)]struct{}
	_ [unsafe.Offsetof(C.wk_item{}.proposal_class) - unsafe.Offsetof(Item{}.class)]struct{}
)

// SlotState is a point-in-time view of a slot.
type SlotState struct {
	// Queued is the number of queued control actions.
	Queued uint32
	// QueuedBackground is the number of queued background proposals: those
	// admitted since the last Drain that took everything (as upstream's
	// counter, which is not an in-flight count).
	QueuedBackground uint32
	// Leader reports whether the slot admits proposals and config changes.
	Leader bool
	// Closed reports whether Close was called on the slot (not the handle).
	Closed bool
	// Fatal reports whether a fatal code was recorded; FatalCode is that code.
	Fatal     bool
	FatalCode uint32
	// ConfigChangePending reports a queued or unresolved config change.
	ConfigChangePending bool
}

// AdmissionCounters counts proposal admission decisions by class and result,
// as upstream's ProposalAdmissionObserver sees them.
type AdmissionCounters struct {
	ForegroundOK, ForegroundBusy, ForegroundThrottled, ForegroundNotLeader uint64
	BackgroundOK, BackgroundBusy, BackgroundThrottled, BackgroundNotLeader uint64
}

// Get returns the counter for one class (normalized) and result; an unknown
// result gives 0.
func (c AdmissionCounters) Get(class ProposalClass, result AdmissionResult) uint64 {
	fg := class.Normalize() == ProposalClassForeground
	switch result {
	case AdmissionOK:
		return pick(fg, c.ForegroundOK, c.BackgroundOK)
	case AdmissionBusy:
		return pick(fg, c.ForegroundBusy, c.BackgroundBusy)
	case AdmissionThrottled:
		return pick(fg, c.ForegroundThrottled, c.BackgroundThrottled)
	case AdmissionNotLeader:
		return pick(fg, c.ForegroundNotLeader, c.BackgroundNotLeader)
	}
	return 0
}

func pick(first bool, a, b uint64) uint64 {
	if first {
		return a
	}
	return b
}

func countersFromC(c *C.wk_admission_counters) AdmissionCounters {
	return AdmissionCounters{
		ForegroundOK:        uint64(c.foreground_ok),
		ForegroundBusy:      uint64(c.foreground_busy),
		ForegroundThrottled: uint64(c.foreground_throttled),
		ForegroundNotLeader: uint64(c.foreground_not_leader),
		BackgroundOK:        uint64(c.background_ok),
		BackgroundBusy:      uint64(c.background_busy),
		BackgroundThrottled: uint64(c.background_throttled),
		BackgroundNotLeader: uint64(c.background_not_leader),
	}
}

// Slot is a handle to one slot's admission queue (wk_slot). Many goroutines
// may admit at once; Drain calls are serialized by the library. Close must
// not run concurrently with other methods of the same handle.
type Slot struct {
	p  *C.wk_slot
	id uint64
}

// NewSlot creates a slot with the given id and limits, counted in the
// process-wide metrics registry (GlobalMetrics). A new slot is a follower
// (not leader), open, with nothing queued. A limit above MaxLimit gives
// ErrInvalidArgument.
func NewSlot(id uint64, limits Limits) (*Slot, error) {
	return newSlotIn(nil, id, limits)
}

// NewSlotIn is NewSlot counting in reg instead of the process-wide registry.
// The slot keeps counting there after reg is closed. A nil or closed reg
// gives ErrHandleClosed.
func NewSlotIn(reg *MetricsRegistry, id uint64, limits Limits) (*Slot, error) {
	if reg.closed() {
		return nil, ErrHandleClosed
	}
	s, err := newSlotIn(reg.ptr(), id, limits)
	runtime.KeepAlive(reg)
	return s, err
}

// newSlotIn creates a slot in metrics (NULL: the process-wide registry).
func newSlotIn(metrics *C.wk_metrics_registry, id uint64, limits Limits) (*Slot, error) {
	cl := C.wk_slot_limits{
		max_queued_controls:            C.uint32_t(limits.MaxQueuedControls),
		max_queued_background_controls: C.uint32_t(limits.MaxQueuedBackgroundControls),
	}
	var p *C.wk_slot
	if st := C.wk_slot_new(metrics, C.uint64_t(id), &cl, &p); st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newSlot(p, id), nil
}

func newSlot(p *C.wk_slot, id uint64) *Slot {
	s := &Slot{p: p, id: id}
	runtime.SetFinalizer(s, (*Slot).Close)
	return s
}

// ptr returns the C handle. Callers check closed() first; ptr panics if they
// did not. Under -tags debug it forces a GC first, so that a missing
// runtime.KeepAlive shows up as a use-after-free in tests.
func (s *Slot) ptr() *C.wk_slot {
	if s.p == nil {
		panic("wkcore: Slot used after Close")
	}
	maybeGC()
	return s.p
}

func (s *Slot) closed() bool { return s == nil || s.p == nil }

// ID returns the slot id. It stays valid after Close.
func (s *Slot) ID() uint64 {
	if s == nil {
		return 0
	}
	return s.id
}

// Clone returns a second handle to the same slot, with its own Close.
func (s *Slot) Clone() (*Slot, error) {
	if s.closed() {
		return nil, ErrHandleClosed
	}
	var p *C.wk_slot
	st := C.wk_slot_clone(s.ptr(), &p)
	runtime.KeepAlive(s)
	if st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newSlot(p, uint64(C.wk_slot_id_get(p))), nil
}

// Close releases this handle. It is idempotent; the slot itself lives on
// while other handles (clones, a registry) refer to it. To stop admissions on
// the slot for every handle, use CloseSlot.
func (s *Slot) Close() {
	if s.closed() {
		return
	}
	runtime.SetFinalizer(s, nil)
	C.wk_slot_free(s.p)
	s.p = nil
}

// statusError maps st, the result of a call on the slot, to an error; for
// StatusSlotFailed it fetches the slot's fatal code and returns a FatalError.
func (s *Slot) statusError(st C.wk_status) error {
	if st != C.WK_STATUS_SLOT_FAILED {
		return statusError(st)
	}
	var state C.wk_slot_state
	st = C.wk_slot_state_get(s.ptr(), &state, C.sizeof_wk_slot_state)
	runtime.KeepAlive(s)
	if st != C.WK_STATUS_OK {
		return statusError(st)
	}
	return FatalError{Code: uint32(state.fatal_code)}
}

// Admit queues one control action carrying token, or says why not: in order,
// ErrSlotClosed, a FatalError, ErrNotLeader (Propose, ConfigChange on a
// follower), ErrConfigChangePending, busy (ErrSlotBusy; for a proposal an
// error that matches both ErrProposalBackpressure and ErrSlotBusy),
// throttled (background proposals: matches ErrBackgroundProposalThrottled and
// ErrProposalBackpressure). An unknown kind gives ErrInvalidArgument. The
// class matters only for ControlPropose. Admit never allocates.
func (s *Slot) Admit(kind ControlKind, class ProposalClass, token uint64) error {
	if s.closed() {
		return ErrHandleClosed
	}
	st := C.wk_slot_admit(s.ptr(), C.uint32_t(kind), class.raw(), C.uint64_t(token))
	runtime.KeepAlive(s)
	if st == C.WK_STATUS_OK {
		return nil
	}
	return s.statusError(st)
}

// AdmitBatch admits the leading tokens that fit, in order, with one
// decision for the whole batch where possible. It returns how many were
// admitted and, when some were not, the error Admit would have returned for
// the first refused one. An empty batch admits nothing and returns (0, nil).
// A batch larger than MaxLimit is passed in chunks.
func (s *Slot) AdmitBatch(kind ControlKind, class ProposalClass, tokens []uint64) (admitted int, err error) {
	if s.closed() {
		return 0, ErrHandleClosed
	}
	for len(tokens) > 0 {
		chunk := tokens
		if len(chunk) > MaxLimit {
			chunk = chunk[:MaxLimit]
		}
		var res C.wk_batch_result
		st := C.wk_slot_admit_batch(s.ptr(), C.uint32_t(kind), class.raw(),
			(*C.uint64_t)(unsafe.Pointer(&chunk[0])), C.size_t(len(chunk)), &res)
		runtime.KeepAlive(s)
		runtime.KeepAlive(tokens)
		if st != C.WK_STATUS_OK {
			return admitted, s.statusError(st)
		}
		admitted += int(res.admitted)
		if res.refused != C.WK_STATUS_OK {
			return admitted, s.statusError(res.refused)
		}
		tokens = tokens[len(chunk):]
	}
	return admitted, nil
}

// Drain moves up to len(out) queued actions, oldest first, into out and
// returns how many. Each item taken frees its quota, so a Drain that takes
// everything resets the background quota as upstream's takeControlBatch does.
// Concurrent Drain calls are serialized. An empty out gives
// ErrInvalidArgument.
func (s *Slot) Drain(out []Item) (int, error) {
	if s.closed() {
		return 0, ErrHandleClosed
	}
	if len(out) == 0 {
		return 0, ErrInvalidArgument
	}
	var n C.size_t
	st := C.wk_slot_drain(s.ptr(), (*C.wk_item)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &n)
	runtime.KeepAlive(s)
	runtime.KeepAlive(out)
	if st != C.WK_STATUS_OK {
		return 0, statusError(st)
	}
	return int(n), nil
}

// simple runs a wk_status call on the handle.
func (s *Slot) simple(f func(*C.wk_slot) C.wk_status) error {
	if s.closed() {
		return ErrHandleClosed
	}
	st := f(s.ptr())
	runtime.KeepAlive(s)
	if st == C.WK_STATUS_OK {
		return nil
	}
	return s.statusError(st)
}

// SetLeader makes the slot a leader: it admits proposals and config changes.
func (s *Slot) SetLeader() error {
	return s.simple(func(p *C.wk_slot) C.wk_status { return C.wk_slot_set_leader(p) })
}

// Demote makes the slot a follower, as a queued higher-term message does
// upstream; the very next proposal or config change gets ErrNotLeader.
func (s *Slot) Demote() error {
	return s.simple(func(p *C.wk_slot) C.wk_status { return C.wk_slot_demote(p) })
}

// CloseSlot closes the slot itself, as upstream Runtime.CloseSlot: every later admission,
// through any handle, gets ErrSlotClosed. The handle stays usable (State,
// Drain …) until Close.
func (s *Slot) CloseSlot() error {
	return s.simple(func(p *C.wk_slot) C.wk_status { return C.wk_slot_close(p) })
}

// ConfigChangeResolved marks the pending config change as resolved.
func (s *Slot) ConfigChangeResolved() error {
	return s.simple(func(p *C.wk_slot) C.wk_status { return C.wk_slot_config_change_resolved(p) })
}

// Fail records a fatal code; the first code wins. It reports whether this
// call recorded it (false when one was already recorded). After it, every
// admission returns a FatalError with the first code.
func (s *Slot) Fail(code uint32) (recorded bool, err error) {
	if s.closed() {
		return false, ErrHandleClosed
	}
	st := C.wk_slot_fail(s.ptr(), C.uint32_t(code))
	runtime.KeepAlive(s)
	switch st {
	case C.WK_STATUS_OK:
		return true, nil
	case C.WK_STATUS_SLOT_FAILED:
		return false, nil
	}
	return false, statusError(st)
}

// State returns a point-in-time view of the slot.
func (s *Slot) State() (SlotState, error) {
	if s.closed() {
		return SlotState{}, ErrHandleClosed
	}
	var c C.wk_slot_state
	st := C.wk_slot_state_get(s.ptr(), &c, C.sizeof_wk_slot_state)
	runtime.KeepAlive(s)
	if st != C.WK_STATUS_OK {
		return SlotState{}, statusError(st)
	}
	return SlotState{
		Queued:              uint32(c.queued),
		QueuedBackground:    uint32(c.queued_background),
		Leader:              c.leader != 0,
		Closed:              c.closed != 0,
		Fatal:               c.fatal != 0,
		FatalCode:           uint32(c.fatal_code),
		ConfigChangePending: c.config_change_pending != 0,
	}, nil
}

// Counters returns this slot's proposal admission counters.
func (s *Slot) Counters() (AdmissionCounters, error) {
	if s.closed() {
		return AdmissionCounters{}, ErrHandleClosed
	}
	var c C.wk_admission_counters
	st := C.wk_slot_counters_get(s.ptr(), &c, C.sizeof_wk_admission_counters)
	runtime.KeepAlive(s)
	if st != C.WK_STATUS_OK {
		return AdmissionCounters{}, statusError(st)
	}
	return countersFromC(&c), nil
}
