package mqttsession

// The operation's context: made only when asked for, cancelled by the
// owner's fence, by stop, by the caller's context and by Done, and never
// ending the operation by itself. The close callback runs on the calling
// goroutine.

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

type ctxKey struct{}

func activeOwner(t *testing.T, r ownersAPI, clock *fakeClock, client string, f CloseTransport) Owner {
	t.Helper()
	o := mustReserve(t, r, ownerClaim(client), f)
	must(t, r.Activate(o, 1, clock.Now().Add(5*time.Second)))
	return o
}

func TestOperationContextIsCancelledByFenceStopCallerAndDone(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		t.Run("fence", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			before := mustBegin(t, r, context.Background(), o)
			after := mustBegin(t, r, context.Background(), o)
			ctx := before.Context()
			if ctx.Err() != nil || before.Context() != ctx {
				t.Fatal("a live operation's context is cancelled or not stable")
			}
			must(t, r.Fence(o))
			is(t, ctx.Err(), context.Canceled)
			is(t, context.Cause(ctx), ErrOwnerFenced)
			// Made after the fence: already cancelled.
			is(t, after.Context().Err(), context.Canceled)
			is(t, context.Cause(after.Context()), ErrOwnerFenced)
			eq(t, r.Snapshot().Operations, 2, "operations")
			before.Done()
			after.Done()
			must(t, r.Quiesce(context.Background(), o))
		})
		t.Run("stop", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			op := mustBegin(t, r, context.Background(), o)
			ctx := op.Context()
			r.StopAdmission()
			is(t, ctx.Err(), context.Canceled)
			is(t, context.Cause(ctx), ErrOwnerStopped)
			eq(t, r.Snapshot().Operations, 1, "operations")
			is(t, op.Check(), context.Canceled)
			op.Done()
			must(t, r.Close(context.Background()))
		})
		t.Run("caller", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
			op := mustBegin(t, r, parent, o)
			ctx := op.Context()
			eq(t, ctx.Value(ctxKey{}), any("v"), "the caller's values")
			boom := errors.New("boom")
			cancel(boom)
			<-ctx.Done()
			is(t, context.Cause(ctx), boom)
			is(t, op.Check(), context.Canceled)
			eq(t, r.Snapshot().Operations, 1, "cancellation never ends an operation")
			// Made after the caller's cancellation: already cancelled.
			op2, err := r.Begin(parent, o)
			is(t, err, context.Canceled)
			if op2 != nil {
				t.Fatal("an operation from a cancelled context")
			}
			op.Done()
			eq(t, r.Snapshot().Operations, 0, "operations")
		})
		t.Run("deadline", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			parent, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			op := mustBegin(t, r, parent, o)
			want, _ := parent.Deadline()
			got, ok := op.Context().Deadline()
			if !ok || !got.Equal(want) {
				t.Fatalf("deadline %v %v, want the caller's %v", got, ok, want)
			}
			op.Done()
		})
		t.Run("done", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			op := mustBegin(t, r, context.Background(), o)
			ctx := op.Context()
			op.Done()
			is(t, ctx.Err(), context.Canceled)
			is(t, context.Cause(ctx), context.Canceled)
			late := mustBegin(t, r, context.Background(), o)
			late.Done()
			is(t, late.Context().Err(), context.Canceled)
			// A child of an operation's context follows it.
			op3 := mustBegin(t, r, context.Background(), o)
			child, cancelChild := context.WithCancel(op3.Context())
			defer cancelChild()
			op3.Done()
			is(t, child.Err(), context.Canceled)
		})
		t.Run("expiry via check", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			op := mustBegin(t, r, context.Background(), o)
			ctx := op.Context()
			clock.Add(5 * time.Second)
			is(t, op.Check(), ErrOwnerFenced)
			is(t, ctx.Err(), context.Canceled)
			is(t, context.Cause(ctx), ErrOwnerFenced)
			op.Done()
		})
		t.Run("expiry via begin", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			op := mustBegin(t, r, context.Background(), o)
			ctx := op.Context()
			clock.Add(5 * time.Second)
			_, err := r.Begin(context.Background(), o)
			is(t, err, ErrOwnerFenced)
			is(t, ctx.Err(), context.Canceled)
			op.Done()
		})
		t.Run("mark uncertain", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			o := activeOwner(t, r, clock, "c", okClose)
			op := mustBegin(t, r, context.Background(), o)
			ctx := op.Context()
			must(t, op.MarkUncertain())
			is(t, ctx.Err(), context.Canceled)
			is(t, context.Cause(ctx), ErrOwnerFenced)
			op.Done()
			is(t, r.Quiesce(context.Background(), o), ErrOwnerUnknown)
		})
		t.Run("close callback start", func(t *testing.T) {
			r, clock := ownerFixture(t, impl, 4, 4)
			var seen atomic.Value
			var op opAPI
			o := activeOwner(t, r, clock, "c", func(context.Context) error {
				seen.Store(op.Context().Err())
				return nil
			})
			op = mustBegin(t, r, context.Background(), o)
			done := make(chan error, 1)
			go func() { done <- r.Quiesce(context.Background(), o) }()
			for seen.Load() == nil {
				time.Sleep(time.Millisecond)
			}
			is(t, seen.Load().(error), context.Canceled)
			op.Done()
			must(t, <-done)
		})
	})
}

// goid returns the calling goroutine's id (from its stack header).
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	n, _ := strconv.ParseUint(string(b), 10, 64)
	return n
}

func TestCloseCallbackRunsOnTheCallingGoroutine(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 4, 4)
		var ran atomic.Uint64
		o := activeOwner(t, r, clock, "c", func(ctx context.Context) error {
			ran.Store(goid())
			if ctx.Value(ctxKey{}) != "mine" {
				t.Error("the callback's context is not derived from the caller's")
			}
			return nil
		})
		ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
		must(t, r.Quiesce(ctx, o))
		eq(t, ran.Load(), goid(), "the callback's goroutine")

		// A panic is recovered into ErrOwnerClose, on the same goroutine; the
		// owner stays fenced and held.
		p := activeOwner(t, r, clock, "p", func(context.Context) error {
			ran.Store(goid())
			panic("secret")
		})
		ran.Store(0)
		is(t, r.Quiesce(context.Background(), p), ErrOwnerClose)
		eq(t, ran.Load(), goid(), "the panicking callback's goroutine")
		eq(t, r.Snapshot().Held, 1, "held")
		eq(t, r.Snapshot().Closing, 1, "closing")

		// The context errors pass through exactly, wrapped or not.
		for _, tc := range []struct{ ret, want error }{
			{context.Canceled, context.Canceled},
			{context.DeadlineExceeded, context.DeadlineExceeded},
			{errors.Join(errors.New("x"), context.DeadlineExceeded), context.DeadlineExceeded},
			{errors.New("other"), ErrOwnerClose},
		} {
			r, clock := ownerFixture(t, impl, 4, 4)
			ret := tc.ret
			q := activeOwner(t, r, clock, "q", func(context.Context) error { return ret })
			is(t, r.Quiesce(context.Background(), q), tc.want)
			is(t, r.Fence(q), nil)
			_, err := r.Begin(context.Background(), q)
			is(t, err, ErrOwnerFenced)
		}
	})
}

// Concurrent quiescers share one close attempt and all learn its failure.
func TestQuiesceCoalescesOnOneCloseAttempt(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 4, 4)
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		o := activeOwner(t, r, clock, "c", func(context.Context) error {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
				return errors.New("failed")
			}
			return nil
		})
		results := make(chan error, 4)
		go func() { results <- r.Quiesce(context.Background(), o) }()
		<-entered
		for i := 0; i < 3; i++ {
			go func() { results <- r.Quiesce(context.Background(), o) }()
		}
		time.Sleep(10 * time.Millisecond)
		close(release)
		for i := 0; i < 4; i++ {
			is(t, <-results, ErrOwnerClose)
		}
		eq(t, calls.Load(), int32(1), "one attempt")
		must(t, r.Quiesce(context.Background(), o))
		eq(t, calls.Load(), int32(2), "the retry")
	})
}

// A quiesce whose context runs out while operations drain returns exactly
// context.DeadlineExceeded and keeps the owner.
func TestQuiesceDeadlineLeavesTheOwner(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 4, 4)
		o := activeOwner(t, r, clock, "c", okClose)
		op := mustBegin(t, r, context.Background(), o)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		is(t, r.Quiesce(ctx, o), context.DeadlineExceeded)
		eq(t, r.Snapshot().Held, 1, "held")
		eq(t, r.Snapshot().Operations, 1, "operations")
		op.Done()
		must(t, r.Quiesce(context.Background(), o))
		eq(t, r.Snapshot().Held, 0, "held")
	})
}
