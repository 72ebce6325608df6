package wkcore

/*
#include "wkcore.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
)

// Upstream multiraft sentinels, with upstream texts.
var (
	// ErrSlotClosed is returned by a closed slot.
	ErrSlotClosed = errors.New("multiraft: slot closed")
	// ErrNotLeader is returned for a proposal or config change on a follower.
	ErrNotLeader = errors.New("multiraft: not leader")
	// ErrSlotBusy is returned when the slot's control queue is full.
	ErrSlotBusy = errors.New("multiraft: slot busy")
	// ErrProposalBackpressure matches every busy or throttled proposal.
	ErrProposalBackpressure = errors.New("multiraft: proposal backpressure")
	// ErrBackgroundProposalThrottled is returned when the background cap is reached.
	ErrBackgroundProposalThrottled = errors.New("multiraft: background proposal throttled")
	// ErrConfigChangePending is returned for a config change while another is pending.
	ErrConfigChangePending = errors.New("multiraft: config change pending")
)

// wkcore sentinels: misuse of the API and library faults.
var (
	// ErrInvalidArgument reports an argument the library refused (unknown
	// control kind, limit above 1<<24, empty drain buffer …).
	ErrInvalidArgument = errors.New("wkcore: invalid argument")
	// ErrNullArgument reports a NULL pointer reaching the C ABI; the Go layer
	// never passes one, so it indicates a bug in this package.
	ErrNullArgument = errors.New("wkcore: null argument")
	// ErrPanic reports a panic caught at the C ABI boundary.
	ErrPanic = errors.New("wkcore: panic in library")
	// ErrHandleClosed is returned by every method of a wrapper after Close.
	ErrHandleClosed = errors.New("wkcore: handle closed")
	// ErrNotFound is returned by registry look-ups of an unknown id.
	ErrNotFound = errors.New("wkcore: not found")
	// ErrAlreadyExists is returned when inserting an id that is registered.
	ErrAlreadyExists = errors.New("wkcore: already exists")
	// ErrBufferTooSmall reports an output buffer the library could not fill.
	ErrBufferTooSmall = errors.New("wkcore: buffer too small")
)

// Joined upstream identities, built once so that the hot path never allocates.
var (
	// errProposalBusy: a busy Propose matches both ErrProposalBackpressure and
	// ErrSlotBusy ("multiraft: proposal backpressure: multiraft: slot busy").
	errProposalBusy = fmt.Errorf("%w: %w", ErrProposalBackpressure, ErrSlotBusy)
	// errBackgroundThrottled matches both ErrBackgroundProposalThrottled and
	// ErrProposalBackpressure.
	errBackgroundThrottled = fmt.Errorf("%w: %w", ErrBackgroundProposalThrottled, ErrProposalBackpressure)
)

// FatalError is the error of a slot that recorded a fatal code (Slot.Fail).
// Every later admission returns it.
type FatalError struct {
	// Code is the first fatal code recorded on the slot.
	Code uint32
}

// Error implements error.
func (e FatalError) Error() string {
	return "wkcore: slot failed with fatal code " + strconv.FormatUint(uint64(e.Code), 10)
}

// Status is a wk_status value of the C ABI.
type Status uint32

// The statuses of the C ABI; values are fixed and never reused.
const (
	StatusOK                  Status = C.WK_STATUS_OK
	StatusNullArgument        Status = C.WK_STATUS_NULL_ARGUMENT
	StatusInvalidArgument     Status = C.WK_STATUS_INVALID_ARGUMENT
	StatusPanic               Status = C.WK_STATUS_PANIC
	StatusClosed              Status = C.WK_STATUS_CLOSED
	StatusFatal               Status = C.WK_STATUS_FATAL
	StatusNotLeader           Status = C.WK_STATUS_NOT_LEADER
	StatusConfigChangePending Status = C.WK_STATUS_CONFIG_CHANGE_PENDING
	StatusBusy                Status = C.WK_STATUS_BUSY
	StatusThrottled           Status = C.WK_STATUS_THROTTLED
	StatusBufferTooSmall      Status = C.WK_STATUS_BUFFER_TOO_SMALL
	StatusNotFound            Status = C.WK_STATUS_NOT_FOUND
	StatusAlreadyExists       Status = C.WK_STATUS_ALREADY_EXISTS
)

// String returns the library's name for the status (wk_status_str), which is
// "unknown status" for values the library does not know.
func (s Status) String() string {
	return C.GoString(C.wk_status_str(C.wk_status(s)))
}

// unknownStatusError is returned for a status missing from statusErrors, which
// would mean the library is newer than this package.
type unknownStatusError Status

func (e unknownStatusError) Error() string {
	return "wkcore: unexpected status " + strconv.FormatUint(uint64(e), 10) + " (" + Status(e).String() + ")"
}

// statusErrors is the one table from wk_status to error. Two entries depend on
// the call: StatusBusy is errProposalBusy for ControlPropose (see
// errorForStatus), and StatusFatal needs the slot's fatal code (see
// Slot.statusError). StatusOK maps to nil.
var statusErrors = [...]error{
	StatusOK:                  nil,
	StatusNullArgument:        ErrNullArgument,
	StatusInvalidArgument:     ErrInvalidArgument,
	StatusPanic:               ErrPanic,
	StatusClosed:              ErrSlotClosed,
	StatusFatal:               FatalError{},
	StatusNotLeader:           ErrNotLeader,
	StatusConfigChangePending: ErrConfigChangePending,
	StatusBusy:                ErrSlotBusy,
	StatusThrottled:           errBackgroundThrottled,
	StatusBufferTooSmall:      ErrBufferTooSmall,
	StatusNotFound:            ErrNotFound,
	StatusAlreadyExists:       ErrAlreadyExists,
}

// errorForStatus maps a status of a call made for kind (0 when the call is not
// an admission) to its error. A FatalError it returns has Code 0; Slot methods
// fill in the real code.
func errorForStatus(s Status, kind ControlKind) error {
	if s == StatusBusy && kind == ControlPropose {
		return errProposalBusy
	}
	if int(s) < len(statusErrors) {
		return statusErrors[s]
	}
	return unknownStatusError(s)
}

// statusError maps the status of a call that is not an admission.
func statusError(st C.wk_status) error {
	return errorForStatus(Status(st), 0)
}
