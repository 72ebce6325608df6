package wkcore

/*
#include "wkcore.h"
*/
import "C"

import (
	"errors"
	"strconv"
)

// Status is a wk_status value of the C ABI. Values are numbered in ranges by
// system (0–99 generic, 100–199 admission) and never reused; a newer library
// may return values this package does not know.
type Status uint32

// The statuses of the C ABI this package was written for.
const (
	// Generic statuses (0–99).
	StatusOK              Status = C.WK_STATUS_OK
	StatusNullArgument    Status = C.WK_STATUS_NULL_ARGUMENT
	StatusInvalidArgument Status = C.WK_STATUS_INVALID_ARGUMENT
	StatusPanic           Status = C.WK_STATUS_PANIC
	StatusInvalidHandle   Status = C.WK_STATUS_INVALID_HANDLE
	StatusBufferTooSmall  Status = C.WK_STATUS_BUFFER_TOO_SMALL
	StatusNotFound        Status = C.WK_STATUS_NOT_FOUND
	StatusAlreadyExists   Status = C.WK_STATUS_ALREADY_EXISTS
	StatusTimeout         Status = C.WK_STATUS_TIMEOUT
	StatusFull            Status = C.WK_STATUS_FULL

	// Admission statuses (100–199). StatusProposalBackpressure and
	// StatusBackgroundProposalThrottled are identities only: no call returns
	// them, the statuses that wrap them are returned instead.
	StatusSlotClosed                  Status = C.WK_STATUS_SLOT_CLOSED
	StatusSlotFailed                  Status = C.WK_STATUS_SLOT_FAILED
	StatusNotLeader                   Status = C.WK_STATUS_NOT_LEADER
	StatusConfigChangePending         Status = C.WK_STATUS_CONFIG_CHANGE_PENDING
	StatusSlotBusy                    Status = C.WK_STATUS_SLOT_BUSY
	StatusProposalBackpressure        Status = C.WK_STATUS_PROPOSAL_BACKPRESSURE
	StatusBackgroundProposalThrottled Status = C.WK_STATUS_BACKGROUND_PROPOSAL_THROTTLED
	StatusProposalBusy                Status = C.WK_STATUS_PROPOSAL_BUSY
	StatusProposalThrottled           Status = C.WK_STATUS_PROPOSAL_THROTTLED
	StatusSlotNotFound                Status = C.WK_STATUS_SLOT_NOT_FOUND
)

// knownStatuses is every status above: the codes this package has errors for.
// Their texts and relations are the library's (wk_status_str, wk_status_is).
var knownStatuses = [...]Status{
	StatusOK, StatusNullArgument, StatusInvalidArgument, StatusPanic, StatusInvalidHandle,
	StatusBufferTooSmall, StatusNotFound, StatusAlreadyExists, StatusTimeout, StatusFull,
	StatusSlotClosed, StatusSlotFailed, StatusNotLeader, StatusConfigChangePending,
	StatusSlotBusy, StatusProposalBackpressure, StatusBackgroundProposalThrottled,
	StatusProposalBusy, StatusProposalThrottled, StatusSlotNotFound,
}

// String returns the library's text for the status (wk_status_str): upstream's
// error text for a system's code, a neutral one for a generic code, "unknown
// status" for a value the linked library does not define.
func (s Status) String() string {
	return C.GoString(C.wk_status_str(C.wk_status(s)))
}

// statusIs reports whether s is identity or wraps it (wk_status_is).
func statusIs(s, identity Status) bool {
	return bool(C.wk_status_is(C.wk_status(s), C.wk_status(identity)))
}

// statusErr is the error of one known status: the library's text, and the
// errors of the identities the library says it wraps (for errors.Is and
// errors.As). One value per status is built at package init, so returning one
// never allocates.
type statusErr struct {
	status Status
	text   string
	wraps  []error
}

func (e *statusErr) Error() string   { return e.text }
func (e *statusErr) Unwrap() []error { return e.wraps }

// statusErrors maps a known status to its error; nil for StatusOK and values
// this package does not know.
var statusErrors = buildStatusErrors()

func buildStatusErrors() []*statusErr {
	var last Status
	for _, s := range knownStatuses {
		last = max(last, s)
	}
	table := make([]*statusErr, last+1)
	for _, s := range knownStatuses {
		if s != StatusOK {
			table[s] = &statusErr{status: s, text: s.String()}
		}
	}
	// The relations are the library's, asked once per pair.
	for _, e := range table {
		if e == nil {
			continue
		}
		for _, identity := range table {
			if identity != nil && identity != e && statusIs(e.status, identity.status) {
				e.wraps = append(e.wraps, identity)
			}
		}
	}
	return table
}

// Sentinels of upstream multiraft's identities. Their texts are the library's
// (upstream's). A refusal matches every identity it wraps: match with
// errors.Is, never by text.
var (
	// ErrSlotClosed is returned by a closed slot.
	ErrSlotClosed error = statusErrors[StatusSlotClosed]
	// ErrSlotFailed is matched (errors.Is) by every FatalError.
	ErrSlotFailed error = statusErrors[StatusSlotFailed]
	// ErrNotLeader is returned for a proposal or config change on a follower.
	ErrNotLeader error = statusErrors[StatusNotLeader]
	// ErrConfigChangePending is returned for a config change while another is pending.
	ErrConfigChangePending error = statusErrors[StatusConfigChangePending]
	// ErrSlotBusy is returned when the control queue is full for a kind other
	// than a proposal, and matched by a busy proposal's error.
	ErrSlotBusy error = statusErrors[StatusSlotBusy]
	// ErrProposalBackpressure is matched by every busy or throttled proposal:
	// back off and retry.
	ErrProposalBackpressure error = statusErrors[StatusProposalBackpressure]
	// ErrBackgroundProposalThrottled is matched by a background proposal
	// refused because the background quota is used up.
	ErrBackgroundProposalThrottled error = statusErrors[StatusBackgroundProposalThrottled]
	// ErrSlotNotFound is returned by AdmissionRegistry look-ups of an unknown id.
	ErrSlotNotFound error = statusErrors[StatusSlotNotFound]
)

// Sentinels of the generic statuses: misuse of the API and library faults.
var (
	// ErrNullArgument reports a NULL pointer reaching the C ABI; the Go layer
	// never passes one, so it indicates a bug in this package.
	ErrNullArgument error = statusErrors[StatusNullArgument]
	// ErrInvalidArgument reports an argument the library refused (unknown
	// control kind, limit above MaxLimit, empty drain buffer …).
	ErrInvalidArgument error = statusErrors[StatusInvalidArgument]
	// ErrPanic reports a panic caught at the C ABI boundary.
	ErrPanic error = statusErrors[StatusPanic]
	// ErrInvalidHandle reports a handle the library did not recognize; the Go
	// layer never passes one, so it indicates a bug in this package.
	ErrInvalidHandle error = statusErrors[StatusInvalidHandle]
	// ErrBufferTooSmall reports an output buffer the library could not fill.
	ErrBufferTooSmall error = statusErrors[StatusBufferTooSmall]
	// ErrNotFound reports a look-up of a key that has no entry.
	ErrNotFound error = statusErrors[StatusNotFound]
	// ErrAlreadyExists is returned when inserting a key that is present, such
	// as a slot id already in an AdmissionRegistry.
	ErrAlreadyExists error = statusErrors[StatusAlreadyExists]
)

// ErrHandleClosed is returned by every method of a wrapper after Close. It is
// the Go layer's own: no C call is made on a closed wrapper.
var ErrHandleClosed = errors.New("wkcore: handle closed")

// FatalError is the error of a slot that recorded a fatal code (Slot.Fail).
// Every later admission returns it. It matches ErrSlotFailed (errors.Is).
type FatalError struct {
	// Code is the first fatal code recorded on the slot.
	Code uint32
}

// Error returns the library's text of StatusSlotFailed and the code, as the
// Rust core prints it: "multiraft: slot failed (fatal code 7)".
func (e FatalError) Error() string {
	return ErrSlotFailed.Error() + " (fatal code " + strconv.FormatUint(uint64(e.Code), 10) + ")"
}

// Unwrap returns ErrSlotFailed.
func (e FatalError) Unwrap() error { return ErrSlotFailed }

// unknownStatusError is returned for a status this package does not know,
// which means the linked library is newer than the package.
type unknownStatusError Status

func (e unknownStatusError) Error() string {
	return "wkcore: status " + strconv.FormatUint(uint64(e), 10) +
		" is unknown to this Go package (newer library?): " + Status(e).String()
}

// Is reports the identities the library says the status wraps, so that a
// newer library's refusal still matches the sentinels this package has.
func (e unknownStatusError) Is(target error) bool {
	t, ok := target.(*statusErr)
	return ok && statusIs(Status(e), t.status)
}

// errorForStatus maps a status to its error: nil for StatusOK, the status's
// error otherwise. StatusSlotFailed gives ErrSlotFailed; Slot methods turn it
// into a FatalError with the slot's code.
func errorForStatus(s Status) error {
	if s == StatusOK {
		return nil
	}
	if int(s) < len(statusErrors) {
		if e := statusErrors[s]; e != nil {
			return e
		}
	}
	return unknownStatusError(s)
}

// statusError maps the status of a C call.
func statusError(st C.wk_status) error {
	return errorForStatus(Status(st))
}
