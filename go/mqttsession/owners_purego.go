//go:build !cgo || wkcore_purego

// The pure-Go build (CGO_ENABLED=0, or the wkcore_purego tag): Owners is the
// mutex implementation. The cgo build's Owners is owners_cgo.go, over the
// Rust core's owner C ABI.

package mqttsession

import (
	"context"
	"time"
)

// Implementation names the build: "go" here (the mutex implementation),
// "rust" where the Rust core is linked (owners_cgo.go).
const Implementation = "go"

// Owners tracks bounded owner execution. In this build it is the mutex
// implementation (mutex_owners.go): one short registry lock protects the
// map, the counts and the indexed deadline heap; no callback or wait runs
// under it. The host owns bounded Sweep calls (or an OwnerSweeper); the
// registry creates no goroutine per session.
type Owners struct {
	m *mutexOwners
}

// NewOwners creates a registry: ErrOwnerInvalid if an option breaks a bound
// or Now returns a time without a monotonic reading.
func NewOwners(opts OwnerOptions) (*Owners, error) {
	m, err := newMutexOwners(opts)
	if err != nil {
		return nil, err
	}
	r := &Owners{m: m}
	trackOwners(r)
	return r, nil
}

func (r *Owners) ok() bool { return r != nil && r.m != nil }

func (r *Owners) identity() (uint64, string) { return r.m.opts.NodeID, r.m.opts.BootID }

// Reserve publishes a pending owner for claim, minting the next connection
// id; closeTransport is its transport's close (non-nil). ErrOwnerInvalid,
// ErrOwnerStopped, or ErrOwnerLimit (capacity reached). The owner is due
// PendingTimeout from now unless activated.
func (r *Owners) Reserve(claim Claim, closeTransport CloseTransport) (Owner, error) {
	if !r.ok() {
		return Owner{}, ErrOwnerInvalid
	}
	return r.m.reserve(claim, closeTransport)
}

// Activate opens execution only after the caller proves this exact committed
// owner (its lease receipt revision) and derives a conservative deadline
// until (a time of Now's clock, with a monotonic reading). An exact retry of
// the installed lease is nil.
func (r *Owners) Activate(owner Owner, revision uint64, until time.Time) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.m.installLease(owner, revision, until, false)
}

// Renew accepts a newer committed receipt only while the existing lease is
// live. Neither a delayed renewal nor an exact retry can resurrect a fenced
// owner.
func (r *Owners) Renew(owner Owner, revision uint64, until time.Time) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.m.installLease(owner, revision, until, true)
}

// Begin admits one operation of owner: the admission ordering point shared
// with Quiesce and lease expiry. ErrOwnerInvalid (nil ctx, malformed owner),
// ctx.Err(), ErrOwnerStopped, ErrOwnerUnknown, ErrOwnerFenced (not active,
// fenced, retired, or the lease expired, which fences it here) or
// ErrOwnerLimit (MaxOperations admitted; nothing queues).
func (r *Owners) Begin(ctx context.Context, owner Owner) (*Operation, error) {
	if !r.ok() {
		return nil, ErrOwnerInvalid
	}
	e, err := r.m.begin(ctx, owner)
	if err != nil {
		return nil, err
	}
	op := &Operation{}
	op.op.entry, op.op.parent = e, ctx
	return op, nil
}

// Fence stops owner's admission without a transport call or a wait: its
// operations' contexts are cancelled and it is due for closing after
// CloseRetry. A retired owner: nil.
func (r *Owners) Fence(owner Owner) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.m.fence(owner)
}

// Quiesce proves owner isolated: it fences it, closes its transport (one
// attempt shared by every concurrent caller, run on the goroutine of the
// caller that started it) and waits until every admitted operation is Done.
// nil also for an owner issued here and retired since. A failed close keeps
// the owner fenced and holding capacity (ErrOwnerClose, or the callback's
// context error); an uncertain owner answers ErrOwnerUnknown; a ctx that
// ends returns ctx.Err() and leaves the attempt and the owner as they are.
func (r *Owners) Quiesce(ctx context.Context, owner Owner) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.m.quiesce(ctx, owner)
}

// StopAdmission makes Reserve, Activate, Renew and Begin return
// ErrOwnerStopped from now on and cancels every operation's context.
// Idempotent.
func (r *Owners) StopAdmission() {
	if r.ok() {
		r.m.stopAdmission()
	}
}

// Close stops admission, then quiesces every held owner until none is left;
// it returns the first error (an uncertain owner makes it ErrOwnerUnknown
// for good). It can be retried.
func (r *Owners) Close(ctx context.Context) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.m.close(ctx)
}

// Sweep fences and quiesces due owners, earliest deadline first, visiting
// at most limit (1..256); it stops at the first error and returns how many
// it visited.
func (r *Owners) Sweep(ctx context.Context, limit int) (int, error) {
	if !r.ok() {
		return 0, ErrOwnerInvalid
	}
	return r.m.sweep(ctx, limit)
}

// Snapshot returns the counts in constant time; a nil registry reports
// {Stopped: true}.
func (r *Owners) Snapshot() OwnerSnapshot {
	if !r.ok() {
		return OwnerSnapshot{Stopped: true}
	}
	return r.m.snapshot()
}

// Retirement mints the proof that this boot holds nothing more: it needs
// admission stopped and no owner held, else ErrOwnerUnknown.
func (r *Owners) Retirement() (RetiredBoot, error) {
	if !r.ok() {
		return RetiredBoot{}, ErrOwnerInvalid
	}
	return r.m.retirement()
}

// sweepCounts returns the sweep counts (turns, visited, failures), for the
// scenario replay.
func (r *Owners) sweepCounts() [3]uint64 { return r.m.sweepCounts() }

// Operation covers every effect of one admitted command or delivery. Done
// must run after all effects finish; cancellation alone never releases it.
type Operation struct {
	op mutexOp
}

// Done ends the operation. Idempotent; safe concurrently with the
// transport's close or expiry.
func (o *Operation) Done() {
	if o != nil && o.op.entry != nil {
		o.op.finish()
	}
}

// Check returns nil while the owner is active, its lease holds and the
// operation is not done; ErrOwnerFenced once done or when the lease expired
// (which fences the owner here); the caller context's error, or
// context.Canceled once the owner is fenced or admission stopped.
func (o *Operation) Check() error {
	if o == nil || o.op.entry == nil {
		return ErrOwnerInvalid
	}
	return o.op.check()
}

// MarkUncertain records, for good, that the owner's effect is uncertain and
// fences it: its quiescence can never be proved (ErrOwnerUnknown) and it
// keeps its capacity. Idempotent; ErrOwnerFenced once the operation is done
// or the owner retired.
func (o *Operation) MarkUncertain() error {
	if o == nil || o.op.entry == nil {
		return ErrOwnerInvalid
	}
	return o.op.markUncertain()
}

// UID returns the UID reserved with the owner (also after Done); "" for a
// nil operation.
func (o *Operation) UID() string {
	if o == nil || o.op.entry == nil {
		return ""
	}
	return o.op.entry.uid
}

// Context returns the operation's context, made on the first call: derived
// from Begin's ctx, cancelled when the owner is fenced (cause
// ErrOwnerFenced), when admission stops (cause ErrOwnerStopped) and by Done
// (context.Canceled). Cancelling it never ends the operation.
func (o *Operation) Context() context.Context {
	if o == nil || o.op.entry == nil {
		return invalidContext
	}
	return o.op.context()
}
