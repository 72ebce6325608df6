package multiraft

import (
	"errors"

	"github.com/wukongim/wkcore/go/internal/status"
)

// The admission codes of the C ABI (100–199); the cgo build's tests check them
// against the header, both builds' tests against testdata/admission/statuses.json.
const (
	codeSlotClosed                  status.Code = 100
	codeSlotFailed                  status.Code = 101
	codeNotLeader                   status.Code = 102
	codeConfigChangePending         status.Code = 103
	codeSlotBusy                    status.Code = 104
	codeProposalBackpressure        status.Code = 105
	codeBackgroundProposalThrottled status.Code = 106
	codeProposalBusy                status.Code = 107
	codeProposalThrottled           status.Code = 108
	codeSlotNotFound                status.Code = 109
	codeConfigChangeStale           status.Code = 110
)

// Sentinels of upstream multiraft, with upstream's texts. A host aliases its
// own sentinels to these (var ErrSlotBusy = multiraft.ErrSlotBusy) so that
// errors.Is keeps working across the swap. Match with errors.Is, never by text.
var (
	// ErrSlotClosed is returned by a closed slot.
	ErrSlotClosed error = errSlotClosed
	// ErrNotLeader is returned for a proposal or config change on a follower.
	ErrNotLeader error = errNotLeader
	// ErrConfigChangePending is returned for a config change while another is
	// admitted and not resolved.
	ErrConfigChangePending error = errConfigChangePending
	// ErrSlotBusy is returned when the control queue is full for a kind
	// other than a proposal, and matched by a busy proposal's error.
	ErrSlotBusy error = errSlotBusy
	// ErrProposalBackpressure is matched by every busy or throttled proposal:
	// back off and retry.
	ErrProposalBackpressure error = errProposalBackpressure
	// ErrBackgroundProposalThrottled is matched by a background proposal
	// refused because the background quota is used up.
	ErrBackgroundProposalThrottled error = errBackgroundProposalThrottled
	// ErrSlotNotFound is upstream's error for a slot id a runtime does not
	// have; this package does not return it, it is here for hosts to alias.
	ErrSlotNotFound error = errSlotNotFound
	// ErrInvalidOptions is matched by the error of invalid Limits.
	ErrInvalidOptions = errors.New("multiraft: invalid options")
	// ErrConfigChangeResolved is returned by ConfigChange.Resolve for a config
	// change already resolved (a second Resolve) or for the zero ConfigChange.
	// It is wkcore's own: upstream has no tickets.
	ErrConfigChangeResolved error = errConfigChangeStale
)

// Generic sentinels, shared by every wkcore package.
var (
	// ErrHandleClosed is returned by every method after Close, and by a Close
	// that lost the race with another. An admission after Close returns an
	// error that matches both it and ErrSlotClosed (errors.Is), so a host's
	// upstream code that expects ErrSlotClosed from a torn-down slot keeps
	// working.
	ErrHandleClosed = status.ErrHandleClosed
	// ErrInvalidArgument reports an argument refused (an unknown control kind,
	// a nil callback, an empty drain buffer …); nothing changed.
	ErrInvalidArgument error = status.ErrInvalidArgument
	// ErrPanic reports a panic caught at the C ABI boundary.
	ErrPanic error = status.ErrPanic
)

var (
	errSlotClosed                  = status.New(codeSlotClosed, "multiraft: slot closed")
	errSlotFailed                  = status.New(codeSlotFailed, "multiraft: slot failed")
	errNotLeader                   = status.New(codeNotLeader, "multiraft: not leader")
	errConfigChangePending         = status.New(codeConfigChangePending, "multiraft: config change pending")
	errSlotBusy                    = status.New(codeSlotBusy, "multiraft: slot busy")
	errProposalBackpressure        = status.New(codeProposalBackpressure, "multiraft: proposal backpressure")
	errBackgroundProposalThrottled = status.New(codeBackgroundProposalThrottled, "multiraft: background proposal throttled")
	// errProposalBusy is the error upstream's enqueueControl returns for a
	// busy proposal: it matches ErrProposalBackpressure and ErrSlotBusy.
	errProposalBusy = status.New(codeProposalBusy, "multiraft: proposal backpressure: multiraft: slot busy",
		errSlotBusy, errProposalBackpressure)
	// errProposalThrottled is the error of a throttled background proposal:
	// it matches ErrBackgroundProposalThrottled and ErrProposalBackpressure.
	errProposalThrottled = status.New(codeProposalThrottled,
		"multiraft: background proposal throttled: multiraft: proposal backpressure",
		errBackgroundProposalThrottled, errProposalBackpressure)
	errSlotNotFound      = status.New(codeSlotNotFound, "multiraft: slot not found")
	errConfigChangeStale = status.New(codeConfigChangeStale, "wkcore: config change already resolved")
	// errQueueClosed refuses an admission after Close: it matches both
	// ErrSlotClosed (what upstream's closed slot returns) and ErrHandleClosed.
	errQueueClosed = status.New(codeSlotClosed, "multiraft: slot closed", errSlotClosed, status.ErrHandleClosed)

	errNegativeLimit = wrapInvalidOptions("max queued controls must be >= 0")
)

func init() {
	status.Register(errSlotClosed, errSlotFailed, errNotLeader, errConfigChangePending, errSlotBusy,
		errProposalBackpressure, errBackgroundProposalThrottled, errProposalBusy, errProposalThrottled,
		errSlotNotFound, errConfigChangeStale)
}

type invalidOptions string

func wrapInvalidOptions(detail string) error { return invalidOptions(detail) }

func (e invalidOptions) Error() string { return ErrInvalidOptions.Error() + ": " + string(e) }
func (e invalidOptions) Unwrap() error { return ErrInvalidOptions }

// refusalResult is the observer result of a proposal refused with err ("" for
// refusals that are not observed: closed, failed, config change pending).
func refusalResult(err error) AdmissionResult {
	switch err {
	case errProposalBusy:
		return AdmissionBusy
	case errProposalThrottled:
		return AdmissionThrottled
	case errNotLeader:
		return AdmissionNotLeader
	}
	return ""
}
