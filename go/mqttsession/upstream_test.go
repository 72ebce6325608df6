package mqttsession

// Upstream's owner tests (internal/runtime/mqttsession: owner_test.go,
// owner_operation_test.go, owner_sweeper_test.go and
// owner_sweeper_integration_test.go), one test each, named as upstream's,
// against both implementations where they use only Owners. Fixture as
// upstream's (harness_test.go).

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestOwnerAdmissionRequiresLiveExactCommittedActivation(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 3, 1)
		now := clock.Now()
		owner := mustReserve(t, r, ownerClaim("client"), okClose)
		eq(t, owner.ConnectionID, uint64(1), "connection id")
		eq(t, owner.NodeID, uint64(3), "node")
		eq(t, owner.BootID, "boot", "boot")
		_, err := r.Begin(context.Background(), owner)
		is(t, err, ErrOwnerFenced)
		must(t, r.Activate(owner, 1, now.Add(5*time.Second)))
		must(t, r.Activate(owner, 1, now.Add(5*time.Second)))
		mustFail(t, r.Activate(owner, 1, now.Add(6*time.Second)))
		op := mustBegin(t, r, context.Background(), owner)
		_, err = r.Begin(context.Background(), owner)
		is(t, err, ErrOwnerLimit)
		op.Done()
		op.Done()
		eq(t, r.Snapshot().Operations, 0, "operations")
		for _, change := range []func(*Owner){
			func(o *Owner) { o.Key.ClientID = "other" },
			func(o *Owner) { o.SessionGeneration++ },
			func(o *Owner) { o.OwnerGeneration++ },
			func(o *Owner) { o.NodeID++ },
			func(o *Owner) { o.BootID = "old" },
		} {
			bad := owner
			change(&bad)
			_, err = r.Begin(context.Background(), bad)
			is(t, err, ErrOwnerUnknown)
			is(t, r.Quiesce(context.Background(), bad), ErrOwnerUnknown)
		}
		mustFail(t, r.Renew(owner, 1, now.Add(7*time.Second)))
		must(t, r.Renew(owner, 2, now.Add(7*time.Second)))
		clock.Add(7 * time.Second)
		now = clock.Now()
		_, err = r.Begin(context.Background(), owner)
		is(t, err, ErrOwnerFenced)
		is(t, r.Renew(owner, 3, now.Add(time.Second)), ErrOwnerFenced)
		must(t, r.Quiesce(context.Background(), owner))
		// A retired issued identity stays closed without an unbounded tombstone.
		must(t, r.Quiesce(context.Background(), owner))
		future := owner
		future.ConnectionID++
		is(t, r.Quiesce(context.Background(), future), ErrOwnerUnknown)
	})
}

func TestOwnerQuiescenceWaitsForTransportAndAdmittedWork(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 2, 2)
		now := clock.Now()
		closing, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		owner := mustReserve(t, r, ownerClaim("client"), func(context.Context) error {
			calls.Add(1)
			close(closing)
			<-release
			return nil
		})
		must(t, r.Activate(owner, 1, now.Add(time.Second)))
		op := mustBegin(t, r, context.Background(), owner)
		finished := make(chan error, 2)
		go func() { finished <- r.Quiesce(context.Background(), owner) }()
		<-closing
		is(t, op.Context().Err(), context.Canceled)
		is(t, context.Cause(op.Context()), ErrOwnerFenced)
		_, err := r.Begin(context.Background(), owner)
		is(t, err, ErrOwnerFenced)
		go func() { finished <- r.Quiesce(context.Background(), owner) }()
		close(release)
		time.Sleep(10 * time.Millisecond)
		select {
		case err := <-finished:
			t.Fatalf("quiesced before operation drain: %v", err)
		default:
		}
		op.Done()
		must(t, <-finished)
		must(t, <-finished)
		eq(t, calls.Load(), int32(1), "close calls")
		eq(t, r.Snapshot().Held, 0, "held")
		newOwner := mustReserve(t, r, ownerClaim("client"), okClose)
		if newOwner.ConnectionID <= owner.ConnectionID {
			t.Fatalf("connection id %d reused after %d", newOwner.ConnectionID, owner.ConnectionID)
		}
		must(t, r.Activate(newOwner, 2, now.Add(time.Second)))
		must(t, r.Quiesce(context.Background(), owner))
		live := mustBegin(t, r, context.Background(), newOwner)
		live.Done()
		must(t, r.Close(context.Background()))
	})
}

func TestOwnerFailedCloseStaysFencedAndConsumesCapacity(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, mode := range []string{"error", "panic", "cancel"} {
			t.Run(mode, func(t *testing.T) {
				r, clock := ownerFixture(t, impl, 1, 1)
				entered := make(chan struct{})
				var calls atomic.Int32
				owner := mustReserve(t, r, ownerClaim("client"), func(ctx context.Context) error {
					if calls.Add(1) > 1 {
						return nil
					}
					close(entered)
					switch mode {
					case "error":
						return errors.New("close failed")
					case "panic":
						panic("sensitive callback diagnostic")
					default:
						<-ctx.Done()
						return ctx.Err()
					}
				})
				must(t, r.Activate(owner, 1, clock.Now().Add(time.Second)))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				finished := make(chan error, 1)
				go func() { finished <- r.Quiesce(ctx, owner) }()
				<-entered
				cancel()
				err := <-finished
				if mode == "cancel" {
					is(t, err, context.Canceled)
				} else {
					is(t, err, ErrOwnerClose)
				}
				if strings.Contains(err.Error(), "sensitive") || strings.Contains(err.Error(), "private") {
					t.Fatalf("the callback's text leaked: %v", err)
				}
				_, err = r.Begin(context.Background(), owner)
				is(t, err, ErrOwnerFenced)
				_, err = r.Reserve(ownerClaim("other"), okClose)
				is(t, err, ErrOwnerLimit)
				eq(t, r.Snapshot().Closing, 1, "closing")
				must(t, r.Quiesce(context.Background(), owner))
				eq(t, r.Snapshot().Held, 0, "held")
			})
		}
	})
}

func TestOwnerExpiryIsBoundedAndRenewalDoesNotGrowDeadlineQueue(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 4, 2)
		now := clock.Now()
		var closed atomic.Int32
		closeFn := func(context.Context) error { closed.Add(1); return nil }
		first := mustReserve(t, r, ownerClaim("same"), closeFn)
		second := mustReserve(t, r, ownerClaim("same"), closeFn)
		must(t, r.Activate(first, 1, now.Add(2*time.Second)))
		for revision := uint64(2); revision <= 100; revision++ {
			must(t, r.Renew(first, revision, now.Add(3*time.Second)))
		}
		eq(t, r.Snapshot().Deadlines, 2, "deadlines")
		clock.Add(1500 * time.Millisecond)
		n, err := r.Sweep(context.Background(), 1)
		must(t, err)
		eq(t, n, 1, "visited")
		must(t, r.Quiesce(context.Background(), second))
		eq(t, closed.Load(), int32(1), "closed")
		op := mustBegin(t, r, context.Background(), first)
		op.Done()
		clock.Add(2 * time.Second)
		n, err = r.Sweep(context.Background(), 1)
		must(t, err)
		eq(t, n, 1, "visited")
		eq(t, r.Snapshot().Held, 0, "held")
		eq(t, r.Snapshot().Deadlines, 0, "deadlines")
		_, err = r.Sweep(context.Background(), 257)
		is(t, err, ErrOwnerInvalid)
		mustReserve(t, r, ownerClaim("x"), closeFn)
		must(t, r.Close(context.Background()))
		_, err = r.Reserve(ownerClaim("y"), closeFn)
		is(t, err, ErrOwnerStopped)
	})
}

func TestOwnerCancellationDoesNotFinishAnOperation(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 1, 1)
		owner := mustReserve(t, r, ownerClaim("client"), okClose)
		must(t, r.Activate(owner, 1, clock.Now().Add(time.Second)))
		ctx, cancel := context.WithCancel(context.Background())
		op := mustBegin(t, r, ctx, owner)
		cancel()
		<-op.Context().Done()
		eq(t, r.Snapshot().Operations, 1, "operations")
		blocked, stop := context.WithCancel(context.Background())
		stop()
		is(t, r.Close(blocked), context.Canceled)
		_, err := r.Begin(context.Background(), owner)
		is(t, err, ErrOwnerStopped)
		op.Done()
		must(t, r.Close(context.Background()))
		eq(t, r.Snapshot().Held, 0, "held")
	})
}

func TestOwnerOperationRetainsIdentityAndRechecksLiveLease(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 1, 1)
		claim := ownerClaim("client")
		o := mustReserve(t, r, claim, okClose)
		claim.UID = "mallory"
		must(t, r.Activate(o, 1, clock.Now().Add(time.Second)))
		op := mustBegin(t, r, context.Background(), o)
		eq(t, op.UID(), "alice", "uid")
		must(t, op.Check())
		clock.Add(time.Second)
		is(t, op.Check(), ErrOwnerFenced)
		mustFail(t, op.Context().Err())
		is(t, op.Check(), context.Canceled)
		eq(t, r.Snapshot().Operations, 1, "operations")
		op.Done()
		is(t, op.Check(), ErrOwnerFenced)
		eq(t, op.UID(), "alice", "uid")
		must(t, r.Quiesce(context.Background(), o))
	})
	var absent *Operation
	eq(t, absent.UID(), "", "nil UID")
	is(t, absent.Check(), ErrOwnerInvalid)
}

func TestOwnerUncertainEffectCannotProduceQuiescenceProof(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 1, 1)
		physical := make(chan struct{})
		var calls atomic.Int32
		o := mustReserve(t, r, ownerClaim("client"), func(context.Context) error {
			calls.Add(1)
			close(physical)
			return nil
		})
		must(t, r.Activate(o, 1, clock.Now().Add(time.Second)))
		op := mustBegin(t, r, context.Background(), o)
		result := make(chan error, 2)
		go func() { result <- r.Quiesce(context.Background(), o) }()
		<-physical
		must(t, op.MarkUncertain())
		must(t, op.MarkUncertain())
		go func() { result <- r.Quiesce(context.Background(), o) }()
		op.Done()
		is(t, <-result, ErrOwnerUnknown)
		is(t, <-result, ErrOwnerUnknown)
		s := r.Snapshot()
		eq(t, s.Uncertain, 1, "uncertain")
		eq(t, s.Held, 1, "held")
		eq(t, s.Operations, 0, "operations")
		is(t, op.MarkUncertain(), ErrOwnerFenced)
		_, err := r.Reserve(ownerClaim("other"), okClose)
		is(t, err, ErrOwnerLimit)
		clock.Add(3 * time.Second)
		_, err = r.Sweep(context.Background(), 1)
		is(t, err, ErrOwnerUnknown)
		is(t, r.Close(context.Background()), ErrOwnerUnknown)
		eq(t, r.Snapshot().Held, 1, "held")
		eq(t, calls.Load(), int32(1), "close calls")
		_, err = r.Retirement()
		is(t, err, ErrOwnerUnknown)
	})
}

func TestOwnerFenceDoesNotWaitOrForgetAdmittedWork(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 10, 4)
		var calls atomic.Int32
		o := mustReserve(t, r, ownerClaim("c"), func(context.Context) error { calls.Add(1); return nil })
		must(t, r.Activate(o, 1, clock.Now().Add(5*time.Second)))
		op := mustBegin(t, r, context.Background(), o)
		must(t, r.Fence(o))
		eq(t, calls.Load(), int32(0), "close calls")
		is(t, op.Context().Err(), context.Canceled)
		is(t, context.Cause(op.Context()), ErrOwnerFenced)
		_, err := r.Begin(context.Background(), o)
		is(t, err, ErrOwnerFenced)
		eq(t, r.Snapshot().Operations, 1, "operations")
		op.Done()
		must(t, r.Quiesce(context.Background(), o))
		eq(t, calls.Load(), int32(1), "close calls")
		must(t, r.Fence(o))
		next := o
		next.ConnectionID++
		is(t, r.Fence(next), ErrOwnerUnknown)
	})
}

func TestOwnerSweeperValidatesBounds(t *testing.T) {
	owners, _ := publicFixture(t, 1, 1)
	for i, change := range []func(*OwnerSweeperOptions){
		func(o *OwnerSweeperOptions) { o.Owners = nil },
		func(o *OwnerSweeperOptions) { o.Limit = -1 },
		func(o *OwnerSweeperOptions) { o.Limit = 257 },
		func(o *OwnerSweeperOptions) { o.Interval = -1 },
		func(o *OwnerSweeperOptions) { o.Interval = time.Minute + 1 },
		func(o *OwnerSweeperOptions) { o.TurnTimeout = -1 },
		func(o *OwnerSweeperOptions) { o.TurnTimeout = 5*time.Second + 1 },
	} {
		o := OwnerSweeperOptions{Owners: owners}
		change(&o)
		_, err := NewOwnerSweeper(o)
		if err != ErrOwnerSweeperInvalid {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners})
	must(t, err)
	eq(t, w.Options().Limit, 256, "limit")
	eq(t, w.Options().Interval, 250*time.Millisecond, "interval")
	eq(t, w.Options().TurnTimeout, 250*time.Millisecond, "turn timeout")
	//lint:ignore SA1012 upstream's nil-context case
	is(t, w.Start(nil), ErrOwnerSweeperInvalid) //nolint:staticcheck
	//lint:ignore SA1012 upstream's nil-context case
	is(t, w.Stop(nil), ErrOwnerSweeperInvalid) //nolint:staticcheck
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	is(t, w.Start(ctx), context.Canceled)
	must(t, w.Stop(context.Background()))
	var absent *OwnerSweeper
	is(t, absent.Start(context.Background()), ErrOwnerSweeperInvalid)
	is(t, absent.Stop(context.Background()), ErrOwnerSweeperInvalid)
}

func TestOwnerSweeperBoundsDueWorkAndPreservesRenewal(t *testing.T) {
	owners, clock := publicFixture(t, 4, 1)
	now := clock.Now()
	var closed atomic.Int32
	closeFn := func(context.Context) error { closed.Add(1); return nil }
	live, err := owners.Reserve(ownerClaim("renewed"), closeFn)
	must(t, err)
	must(t, owners.Activate(live, 1, now.Add(time.Second)))
	must(t, owners.Renew(live, 2, now.Add(5*time.Second)))
	for _, id := range []string{"pending-a", "pending-b", "expired-active"} {
		o, err := owners.Reserve(ownerClaim(id), closeFn)
		must(t, err)
		if id == "expired-active" {
			must(t, owners.Activate(o, 1, now.Add(time.Second)))
		}
	}
	clock.Add(2 * time.Second)
	w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners, Limit: 2})
	must(t, err)
	o := w.Turn(context.Background())
	eq(t, o.Visited, 2, "visited")
	eq(t, o.Failures, 0, "failures")
	eq(t, o.Owners.Held, 2, "held")
	o = w.Turn(context.Background())
	eq(t, o.Visited, 1, "visited")
	eq(t, o.Owners.Held, 1, "held")
	eq(t, closed.Load(), int32(3), "closed")
	op, err := owners.Begin(context.Background(), live)
	must(t, err)
	op.Done()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	eq(t, w.Turn(ctx).Visited, 0, "visited")
	eq(t, closed.Load(), int32(3), "closed")
	must(t, owners.Close(context.Background()))
}

func TestOwnerSweeperYieldsFailedCloseAndRetainsUncertainBarrier(t *testing.T) {
	for _, mode := range []string{"error", "panic", "uncertain"} {
		t.Run(mode, func(t *testing.T) {
			owners, clock := publicFixture(t, 2, 1)
			var attempts atomic.Int32
			bad, err := owners.Reserve(ownerClaim("bad"), func(context.Context) error {
				if attempts.Add(1) == 1 {
					if mode == "error" {
						return errors.New("private diagnostic")
					}
					if mode == "panic" {
						panic("private diagnostic")
					}
				}
				return nil
			})
			must(t, err)
			if mode == "uncertain" {
				must(t, owners.Activate(bad, 1, clock.Now().Add(time.Second)))
				op, err := owners.Begin(context.Background(), bad)
				must(t, err)
				must(t, op.MarkUncertain())
				op.Done()
			}
			_, err = owners.Reserve(ownerClaim("good"), okClose)
			must(t, err)
			clock.Add(2 * time.Second)
			w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners})
			must(t, err)
			o := w.Turn(context.Background())
			eq(t, o.Visited, 1, "visited")
			eq(t, o.Failures, 1, "failures")
			eq(t, o.Owners.Held, 2, "held")
			o = w.Turn(context.Background())
			eq(t, o.Visited, 1, "the failed owner must yield to another due owner")
			eq(t, o.Failures, 0, "failures")
			eq(t, o.Owners.Held, 1, "held")
			clock.Add(2 * time.Second)
			o = w.Turn(context.Background())
			if mode == "uncertain" {
				eq(t, o.Failures, 1, "failures")
				eq(t, o.Owners.Uncertain, 1, "uncertain")
				eq(t, o.Owners.Held, 1, "held")
				eq(t, attempts.Load(), int32(1), "physical closure must not repeat after success")
				is(t, owners.Quiesce(context.Background(), bad), ErrOwnerUnknown)
			} else {
				eq(t, o.Failures, 0, "failures")
				eq(t, o.Owners.Held, 0, "held")
				eq(t, attempts.Load(), int32(2), "attempts")
			}
		})
	}
}

func TestOwnerSweeperJoinedStopAndFreshRestart(t *testing.T) {
	owners, clock := publicFixture(t, 2, 1)
	entered, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	_, err := owners.Reserve(ownerClaim("slow"), func(ctx context.Context) error {
		calls.Add(1)
		close(entered)
		<-ctx.Done()
		close(cancelled)
		<-release // deliberately violates prompt cancellation, to test the joined Stop
		return ctx.Err()
	})
	must(t, err)
	clock.Add(2 * time.Second)
	w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners, Interval: time.Minute, TurnTimeout: 5 * time.Second})
	must(t, err)
	start, cancelStart := context.WithCancel(context.Background())
	must(t, w.Start(start))
	must(t, w.Start(start))
	<-entered
	cancelStart()
	select {
	case <-cancelled:
		t.Fatal("the start context owns the run's lifetime")
	case <-time.After(10 * time.Millisecond):
	}
	stop, cancelStop := context.WithCancel(context.Background())
	cancelStop()
	is(t, w.Stop(stop), context.Canceled)
	<-cancelled
	is(t, w.Start(context.Background()), ErrOwnerSweeperStopping)
	eq(t, owners.Snapshot().Held, 1, "held")
	close(release)
	joined, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	must(t, w.Stop(joined))
	eq(t, calls.Load(), int32(1), "calls")
	observed := make(chan OwnerSweepObservation, 1)
	w.Options().Observe = func(o OwnerSweepObservation) {
		select {
		case observed <- o:
		default:
		}
	}
	must(t, w.Start(context.Background()))
	o := <-observed
	eq(t, o.Owners.Closing, 1, "Stop must not reset retained cleanup to zero")
	eq(t, o.Visited, 0, "the retry deadline must remain intact across a restart")
	must(t, w.Stop(joined))
}

func TestOwnerSweeperTimesOutDrainWithoutDiscardingOperations(t *testing.T) {
	// The turn ends while the sweep waits for the admitted operation: by a
	// cancellation raised from the close callback (so the visit has been
	// counted, whatever the machine's speed), and, second, by the turn's
	// own timeout while the callback holds the turn.
	for _, mode := range []string{"cancelled", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			owners, clock := publicFixture(t, 2, 1)
			turn, endTurn := context.WithCancel(context.Background())
			defer endTurn()
			var calls atomic.Int32
			owner, err := owners.Reserve(ownerClaim("draining"), func(ctx context.Context) error {
				switch {
				case calls.Add(1) > 1:
				case mode == "cancelled":
					endTurn()
				case ctx.Done() != nil:
					<-ctx.Done() // the turn's deadline (a later Quiesce's context never ends)
				}
				return nil
			})
			must(t, err)
			must(t, owners.Activate(owner, 1, clock.Now().Add(time.Second)))
			op, err := owners.Begin(context.Background(), owner)
			must(t, err)
			clock.Add(2 * time.Second)
			// Cancelled: only the callback ends the turn (the longest timeout);
			// timeout: the shortest.
			turnTimeout := 5 * time.Second
			if mode == "timeout" {
				turnTimeout = time.Millisecond
			}
			w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners, TurnTimeout: turnTimeout})
			must(t, err)
			o := w.Turn(turn)
			if mode == "cancelled" {
				eq(t, o.Visited, 1, "visited")
			} else if o.Visited > 1 {
				t.Fatalf("visited %d", o.Visited)
			}
			eq(t, o.Failures, 1, "failures")
			eq(t, o.Owners.Operations, 1, "operations")
			eq(t, o.Owners.Held, 1, "held")
			if o.Visited == 1 {
				is(t, op.Context().Err(), context.Canceled)
			}
			op.Done()
			must(t, owners.Quiesce(context.Background(), owner))
			eq(t, owners.Snapshot().Held, 0, "held")
		})
	}
}
