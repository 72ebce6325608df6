package coord

import "github.com/wukongim/wkcore/go/internal/status"

// The coordination codes of the C ABI (400–499); the cgo build's tests check
// them against the header, both builds' tests against
// testdata/coord/statuses.json.
const (
	codeInvalidKey      status.Code = 400
	codeInvalidOutcome  status.Code = 401
	codeInvalidCapacity status.Code = 402
	codeInvalidTime     status.Code = 403
)

// The coordination errors: arguments a call refuses, having changed nothing.
// Each matches ErrInvalidArgument too (errors.Is), as the C statuses wrap
// WK_STATUS_INVALID_ARGUMENT. Upstream has no such errors; the texts are
// wkcore's. Match with errors.Is, never by text.
var (
	// ErrInvalidKey: a key is empty or longer than its maximum (KeyMax; in a
	// HandoffKey, ChannelIDMax / TagKeyMax, or an empty ChannelID).
	ErrInvalidKey error = errInvalidKey
	// ErrInvalidOutcome: an outcome code that is not an outcome (0, 5–255,
	// or above 65535).
	ErrInvalidOutcome error = errInvalidOutcome
	// ErrInvalidCapacity: a capacity of 0 or above its maximum, or an
	// unknown ledger Kind.
	ErrInvalidCapacity error = errInvalidCapacity
	// ErrInvalidTime: a time (or anchor value) of TimeUnset, which is
	// reserved.
	ErrInvalidTime error = errInvalidTime
)

// Generic sentinels, shared by every wkcore package.
var (
	// ErrHandleClosed is returned by every method after Close (whatever the
	// arguments), by a nil or zero-value handle, and by a Close that lost
	// the race with another.
	ErrHandleClosed = status.ErrHandleClosed
	// ErrInvalidArgument reports an argument refused: a batch of 0 or more
	// than BatchMax keys, an out slice or payloads of the wrong length, a
	// negative limit. Every coordination error matches it too.
	ErrInvalidArgument error = status.ErrInvalidArgument
	// ErrNotFound is returned by the AnchorTable for an unknown id.
	ErrNotFound error = status.ErrNotFound
	// ErrAlreadyExists is returned by AnchorTable.Insert for an id it holds.
	ErrAlreadyExists error = status.ErrAlreadyExists
	// ErrFull is returned by AnchorTable.Insert when the table holds its
	// capacity. (A full ledger is a Decision, ResultFull, not an error.)
	ErrFull error = status.ErrFull
	// ErrPanic reports a panic caught at the C ABI boundary.
	ErrPanic error = status.ErrPanic
)

var (
	errInvalidKey      = status.New(codeInvalidKey, "coord: invalid key", status.ErrInvalidArgument)
	errInvalidOutcome  = status.New(codeInvalidOutcome, "coord: invalid outcome", status.ErrInvalidArgument)
	errInvalidCapacity = status.New(codeInvalidCapacity, "coord: invalid capacity", status.ErrInvalidArgument)
	errInvalidTime     = status.New(codeInvalidTime, "coord: invalid time", status.ErrInvalidArgument)
)

func init() {
	status.Register(errInvalidKey, errInvalidOutcome, errInvalidCapacity, errInvalidTime)
}

// checkTime refuses the reserved time.
func checkTime(now uint64) error {
	if now == TimeUnset {
		return errInvalidTime
	}
	return nil
}

// checkOutcome refuses a code that is not an outcome.
func checkOutcome(o Outcome) error {
	if !o.Valid() {
		return errInvalidOutcome
	}
	return nil
}
