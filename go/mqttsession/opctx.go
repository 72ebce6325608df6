package mqttsession

import (
	"context"
	"time"
)

// An operation's own context, made by its first Context() call (Begin makes
// none): cancelled synchronously when its owner's fence signal is raised (a
// child of that signal, so Fence, StopAdmission and the rest cancel it
// before they return, with the signal's cause), when the caller's context
// ends (with its cause, through context.AfterFunc, as upstream), and by Done
// (context.Canceled). Its values and deadline are the caller's.
type opContext struct {
	ctx    opCtx
	cancel context.CancelCauseFunc
	stop   func() bool
}

// opCtx is the context handed out: cancellation from inner (a child of the
// fence signal), values and deadline from the caller's context.
//
// Value asks inner first: inner's chain is made of this package's cancel
// contexts over context.Background, which hold no user value, so the only
// keys it answers are the context package's own (its cancel-context key,
// whose Done is this context's Done). That lets a child of an operation's
// context attach to inner directly instead of watching it from a goroutine.
type opCtx struct {
	inner  context.Context
	values context.Context
}

func (c opCtx) Deadline() (time.Time, bool) { return c.values.Deadline() }
func (c opCtx) Done() <-chan struct{}       { return c.inner.Done() }
func (c opCtx) Err() error                  { return c.inner.Err() }
func (c opCtx) Value(key any) any {
	if v := c.inner.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

func newOpContext(parent, fence context.Context) *opContext {
	inner, cancel := context.WithCancelCause(fence)
	c := &opContext{ctx: opCtx{inner: inner, values: parent}, cancel: cancel, stop: func() bool { return false }}
	if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
		if parent.Err() != nil {
			cancel(context.Cause(parent))
		}
	}
	return c
}

func (c *opContext) release() {
	c.stop()
	c.cancel(context.Canceled)
}

// invalidContext is the Context() of a nil operation: cancelled, cause
// ErrOwnerInvalid.
var invalidContext = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrOwnerInvalid)
	return ctx
}()
