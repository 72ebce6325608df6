package multiraft

// A faithful port of upstream WuKongIM's control admission in
// pkg/slot/multiraft, as its slot runs it: enqueueControl's checks under the
// slot's mutex g.mu, the controls slice of controlAction values with its
// spare work buffer, the background counter reset by takeControlBatch, and
// releaseControlBatch zeroing the batch and keeping it as the next spare. It
// is the baseline the WuKongIM-shape benchmarks (bench_wukongim_test.go) put
// beside ControlQueue; it is test code, never shipped.

import (
	"sync"
	"unsafe"
)

type upControlKind uint8

const (
	upControlPropose upControlKind = iota + 1
	upControlCampaign
	upControlConfigChange
)

type upRole uint8

const (
	upRoleFollower upRole = iota
	upRoleLeader
)

// upFuture stands for upstream's future: what a queued action points at.
type upFuture struct {
	done chan struct{}
	err  error
}

// upControlAction is upstream's controlAction: a value in the slice.
type upControlAction struct {
	kind           upControlKind
	data           []byte
	proposalClass  ProposalClass
	future         *upFuture
	target         uint64
	strictTransfer bool
}

type upSlot struct {
	id uint64

	mu                          sync.Mutex
	role                        upRole
	closed                      bool
	fatalErr                    error
	controls                    []upControlAction
	controlWorkBuf              []upControlAction
	queuedBackgroundControls    int
	maxQueuedControls           int
	maxQueuedBackgroundControls int
	pendingConfig               *upFuture
	observer                    ProposalAdmissionObserver
}

func newUpSlot(id uint64) *upSlot {
	return &upSlot{id: id, maxQueuedControls: DefaultMaxQueuedControls,
		maxQueuedBackgroundControls: DefaultMaxQueuedBackgroundControls}
}

type upAdmissionEvent struct {
	ok     bool
	class  ProposalClass
	result AdmissionResult
}

// enqueueControl is upstream's, check for check.
func (g *upSlot) enqueueControl(action upControlAction) error {
	g.mu.Lock()
	event, err := g.enqueueControlLocked(action)
	g.mu.Unlock()
	if event.ok && g.observer != nil {
		g.observer.ObserveSlotProposalAdmission(SlotID(g.id), event.class, string(event.result))
	}
	return err
}

func (g *upSlot) enqueueControlLocked(action upControlAction) (upAdmissionEvent, error) {
	if g.closed {
		return upAdmissionEvent{}, errSlotClosed
	}
	if g.fatalErr != nil {
		return upAdmissionEvent{}, g.fatalErr
	}
	action.proposalClass = action.proposalClass.Normalize()
	event := func(result AdmissionResult) upAdmissionEvent {
		if action.kind != upControlPropose {
			return upAdmissionEvent{}
		}
		return upAdmissionEvent{ok: true, class: action.proposalClass, result: result}
	}
	if (action.kind == upControlPropose || action.kind == upControlConfigChange) && g.role != upRoleLeader {
		return event(AdmissionNotLeader), errNotLeader
	}
	if action.kind == upControlConfigChange && g.configChangePendingLocked() {
		return upAdmissionEvent{}, errConfigChangePending
	}
	if queueLimitReached(g.maxQueuedControls, len(g.controls)) {
		if action.kind == upControlPropose {
			return event(AdmissionBusy), errProposalBusy
		}
		return event(AdmissionBusy), errSlotBusy
	}
	if action.kind == upControlPropose && action.proposalClass.background() &&
		queueLimitReached(g.maxQueuedBackgroundControls, g.queuedBackgroundControls) {
		return event(AdmissionThrottled), errProposalThrottled
	}
	if action.kind == upControlPropose && action.proposalClass.background() {
		g.queuedBackgroundControls++
	}
	g.controls = append(g.controls, action)
	return event(AdmissionOK), nil
}

// configChangePendingLocked scans, as upstream, the pending future and the
// queued controls.
func (g *upSlot) configChangePendingLocked() bool {
	if g.pendingConfig != nil {
		return true
	}
	for i := range g.controls {
		if g.controls[i].kind == upControlConfigChange {
			return true
		}
	}
	return false
}

// takeControlBatch is upstream's: the whole slice, the background counter
// reset, the spare installed.
func (g *upSlot) takeControlBatch() []upControlAction {
	g.mu.Lock()
	defer g.mu.Unlock()
	batch := g.controls
	g.queuedBackgroundControls = 0
	g.controls = g.controlWorkBuf[:0]
	g.controlWorkBuf = nil
	return batch
}

// releaseControlBatch zeroes the batch and keeps it as the next spare.
func (g *upSlot) releaseControlBatch(batch []upControlAction) {
	clear(batch)
	g.mu.Lock()
	g.controlWorkBuf = batch[:0]
	g.mu.Unlock()
}

// memoryBytes is the slot's backing arrays and the fields that admission
// uses (what a busy slot holds for its queue).
func (g *upSlot) memoryBytes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var a upControlAction
	return int(unsafe.Sizeof(*g)) + (cap(g.controls)+cap(g.controlWorkBuf))*int(unsafe.Sizeof(a))
}
