// Package baseline is a pure-Go, mutex-based implementation of upstream
// multiraft's control admission (enqueueControl, takeControlBatch,
// releaseControlBatch), written from upstream's behaviour. It exists only as the
// benchmark baseline for the cgo path and is not part of the API.
package baseline

import (
	"errors"
	"fmt"
	"sync"
)

// ControlKind numbers the control actions from 1, as upstream controlKind.
type ControlKind uint8

// The control kinds.
const (
	ControlPropose ControlKind = iota + 1
	ControlCampaign
	ControlConfigChange
	ControlTransferLeader
	ControlCompactLog
	ControlCaptureHashSlotSnapshot
	ControlFreshStatus
)

// ProposalClass is upstream's string class.
type ProposalClass string

// The proposal classes.
const (
	ProposalClassForeground ProposalClass = "foreground"
	ProposalClassBackground ProposalClass = "background"
)

func normalizeProposalClass(c ProposalClass) ProposalClass {
	if c == ProposalClassBackground {
		return ProposalClassBackground
	}
	return ProposalClassForeground
}

// Upstream errors.
var (
	ErrSlotClosed                  = errors.New("multiraft: slot closed")
	ErrNotLeader                   = errors.New("multiraft: not leader")
	ErrSlotBusy                    = errors.New("multiraft: slot busy")
	ErrProposalBackpressure        = errors.New("multiraft: proposal backpressure")
	ErrBackgroundProposalThrottled = errors.New("multiraft: background proposal throttled")
	ErrConfigChangePending         = errors.New("multiraft: config change pending")

	errProposalBusy = fmt.Errorf("%w: %w", ErrProposalBackpressure, ErrSlotBusy)
	errThrottled    = fmt.Errorf("%w: %w", ErrBackgroundProposalThrottled, ErrProposalBackpressure)
)

// Admission results, the observer's label values.
const (
	ResultOK        = "ok"
	ResultBusy      = "busy"
	ResultThrottled = "throttled"
	ResultNotLeader = "not_leader"
)

// Observer receives one event per proposal admission decision, after the
// slot lock is released (upstream ProposalAdmissionObserver).
type Observer func(slotID uint64, class ProposalClass, result string)

// Action is a queued control action; Token stands for upstream's payload.
type Action struct {
	Kind  ControlKind
	Class ProposalClass
	Token uint64
}

// Slot is one slot's admission state, everything under mu as upstream.
type Slot struct {
	ID       uint64
	Observer Observer

	mu                          sync.Mutex
	controls                    []Action
	controlWorkBuf              []Action
	maxQueuedControls           int
	maxQueuedBackgroundControls int
	queuedBackgroundControls    int
	leader                      bool
	closed                      bool
	fatalErr                    error
	pendingConfigs              int // submitted or pending config futures
}

// New returns a follower slot; limits ≤ 0 take the upstream defaults
// (8192, and half of the total with a minimum of 1).
func New(maxQueuedControls, maxQueuedBackgroundControls int) *Slot {
	if maxQueuedControls <= 0 {
		maxQueuedControls = 8192
	}
	if maxQueuedBackgroundControls <= 0 {
		maxQueuedBackgroundControls = maxQueuedControls / 2
		if maxQueuedBackgroundControls < 1 {
			maxQueuedBackgroundControls = 1
		}
	}
	return &Slot{maxQueuedControls: maxQueuedControls, maxQueuedBackgroundControls: maxQueuedBackgroundControls}
}

func queueLimitReached(limit, current int) bool { return limit > 0 && current >= limit }

// SetLeader makes the slot a leader.
func (s *Slot) SetLeader() { s.mu.Lock(); s.leader = true; s.mu.Unlock() }

// Demote makes the slot a follower.
func (s *Slot) Demote() { s.mu.Lock(); s.leader = false; s.mu.Unlock() }

// Close closes the slot (upstream CloseSlot).
func (s *Slot) Close() { s.mu.Lock(); s.closed = true; s.mu.Unlock() }

// Fail records a fatal error; the first one wins.
func (s *Slot) Fail(err error) {
	s.mu.Lock()
	if s.fatalErr == nil {
		s.fatalErr = err
	}
	s.mu.Unlock()
}

// ConfigChangeResolved resolves one submitted/pending config change.
func (s *Slot) ConfigChangeResolved() {
	s.mu.Lock()
	if s.pendingConfigs > 0 {
		s.pendingConfigs--
	}
	s.mu.Unlock()
}

// admitLocked runs the check order of upstream enqueueControl and returns the
// observer result ("" for no event) and the error.
func (s *Slot) admitLocked(a *Action) (string, error) {
	if s.closed {
		return "", ErrSlotClosed
	}
	if s.fatalErr != nil {
		return "", s.fatalErr
	}
	a.Class = normalizeProposalClass(a.Class)
	if (a.Kind == ControlPropose || a.Kind == ControlConfigChange) && !s.leader {
		return ResultNotLeader, ErrNotLeader
	}
	if a.Kind == ControlConfigChange && s.configChangePendingLocked() {
		return "", ErrConfigChangePending
	}
	if queueLimitReached(s.maxQueuedControls, len(s.controls)) {
		if a.Kind == ControlPropose {
			return ResultBusy, errProposalBusy
		}
		return ResultBusy, ErrSlotBusy
	}
	if a.Kind == ControlPropose && a.Class == ProposalClassBackground &&
		queueLimitReached(s.maxQueuedBackgroundControls, s.queuedBackgroundControls) {
		return ResultThrottled, errThrottled
	}
	if a.Kind == ControlPropose && a.Class == ProposalClassBackground {
		s.queuedBackgroundControls++
	}
	s.controls = append(s.controls, *a)
	return ResultOK, nil
}

func (s *Slot) configChangePendingLocked() bool {
	if s.pendingConfigs > 0 {
		return true
	}
	for i := range s.controls {
		if s.controls[i].Kind == ControlConfigChange {
			return true
		}
	}
	return false
}

// EnqueueControl admits one action (upstream enqueueControl).
func (s *Slot) EnqueueControl(a Action) error {
	s.mu.Lock()
	result, err := s.admitLocked(&a)
	s.mu.Unlock()
	if result != "" && a.Kind == ControlPropose && s.Observer != nil {
		s.Observer(s.ID, a.Class, result)
	}
	return err
}

// EnqueueControlBatch admits the leading tokens under one lock hold and
// returns how many were admitted and the first refusal. Upstream has no batch
// call; this is the fair mutex counterpart of wk_slot_admit_batch.
func (s *Slot) EnqueueControlBatch(kind ControlKind, class ProposalClass, tokens []uint64) (int, error) {
	var (
		err     error
		result  string
		n       int
		refused bool
	)
	class = normalizeProposalClass(class)
	s.mu.Lock()
	for _, t := range tokens {
		a := Action{Kind: kind, Class: class, Token: t}
		result, err = s.admitLocked(&a)
		if err != nil {
			refused = true
			break
		}
		n++
	}
	s.mu.Unlock()
	if kind == ControlPropose && s.Observer != nil {
		for i := 0; i < n; i++ {
			s.Observer(s.ID, class, ResultOK)
		}
		if refused && result != "" {
			s.Observer(s.ID, class, result)
		}
	}
	return n, err
}

// TakeControlBatch detaches the queue (upstream takeControlBatch): it returns
// the queued actions, resets the background counter and installs the spare
// buffer as the new queue.
func (s *Slot) TakeControlBatch() []Action {
	s.mu.Lock()
	batch := s.controls
	s.queuedBackgroundControls = 0
	s.controls = s.controlWorkBuf[:0]
	s.controlWorkBuf = nil
	s.mu.Unlock()
	return batch
}

// ReleaseControlBatch zeroes batch and keeps it as the next spare buffer
// (upstream releaseControlBatch).
func (s *Slot) ReleaseControlBatch(batch []Action) {
	clear(batch)
	s.mu.Lock()
	s.controlWorkBuf = batch[:0]
	s.mu.Unlock()
}

// QueueConfigChangeFuture marks a submitted config change (test helper).
func (s *Slot) QueueConfigChangeFuture() { s.mu.Lock(); s.pendingConfigs++; s.mu.Unlock() }

// Len returns the number of queued actions.
func (s *Slot) Len() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.controls) }
