package mqttsession

import "github.com/wukongim/wkcore/go/internal/status"

// The owner codes of the C ABI (200–299). 206 and 207 are the two ways a
// wait ends early; they map to context.Canceled and context.DeadlineExceeded
// themselves, never to an error of this package, and 211 (the node RPC's
// frame error) belongs to the RPC codec, so none of the three is registered
// here.
const (
	codeOwnerInvalid          status.Code = 200
	codeOwnerFenced           status.Code = 201
	codeOwnerUnknown          status.Code = 202
	codeOwnerLimit            status.Code = 203
	codeOwnerStopped          status.Code = 204
	codeOwnerClose            status.Code = 205
	codeOwnerCanceled         status.Code = 206
	codeOwnerDeadlineExceeded status.Code = 207
	codeInvalidIdentity       status.Code = 208
	codeOwnerSweeperInvalid   status.Code = 209
	codeOwnerSweeperStopping  status.Code = 210
	codeInvalidFrame          status.Code = 211
)

// Upstream's sentinels, with upstream's exact texts. Match with errors.Is
// (or ==: every call returns these values themselves, never a wrapper).
var (
	// ErrOwnerInvalid: a malformed request (a nil registry or context, a bad
	// claim or owner, a lease out of bounds, a sweep limit out of range).
	ErrOwnerInvalid error = errOwnerInvalid
	// ErrOwnerFenced: the owner admits no work (not active, fenced, expired,
	// retired, or the operation is done).
	ErrOwnerFenced error = errOwnerFenced
	// ErrOwnerUnknown: isolation cannot be proved (another node or boot, an
	// id never issued, an identity that differs from the held owner's, or an
	// owner whose effect is uncertain).
	ErrOwnerUnknown error = errOwnerUnknown
	// ErrOwnerLimit: the registry's capacity or the owner's MaxOperations is
	// reached; nothing queues.
	ErrOwnerLimit error = errOwnerLimit
	// ErrOwnerStopped: admission stopped.
	ErrOwnerStopped error = errOwnerStopped
	// ErrOwnerClose: the transport close failed (its own error or panic text
	// is dropped).
	ErrOwnerClose error = errOwnerClose
	// ErrInvalidIdentity: Key.Validate and Owner.Validate refused.
	ErrInvalidIdentity error = errInvalidIdentity
	// ErrOwnerSweeperInvalid: an OwnerSweeper's options break a bound, or it
	// is nil or given a nil context.
	ErrOwnerSweeperInvalid error = errOwnerSweeperInvalid
	// ErrOwnerSweeperStopping: Start while a stopped run has not joined.
	ErrOwnerSweeperStopping error = errOwnerSweeperStopping
)

var (
	errOwnerInvalid          = status.New(codeOwnerInvalid, "mqttsession: invalid owner execution request")
	errOwnerFenced           = status.New(codeOwnerFenced, "mqttsession: owner execution fenced")
	errOwnerUnknown          = status.New(codeOwnerUnknown, "mqttsession: owner isolation unproved")
	errOwnerLimit            = status.New(codeOwnerLimit, "mqttsession: owner execution capacity reached")
	errOwnerStopped          = status.New(codeOwnerStopped, "mqttsession: owner execution stopped")
	errOwnerClose            = status.New(codeOwnerClose, "mqttsession: transport close failed")
	errInvalidIdentity       = status.New(codeInvalidIdentity, "mqttsession: invalid identity")
	errOwnerSweeperInvalid   = status.New(codeOwnerSweeperInvalid, "mqttsession: invalid owner sweeper configuration")
	errOwnerSweeperStopping  = status.New(codeOwnerSweeperStopping, "mqttsession: owner sweeper still draining")
	registeredOwnerSentinels = []*status.Error{errOwnerInvalid, errOwnerFenced, errOwnerUnknown, errOwnerLimit,
		errOwnerStopped, errOwnerClose, errInvalidIdentity, errOwnerSweeperInvalid, errOwnerSweeperStopping}
)

func init() {
	status.Register(registeredOwnerSentinels...)
}
