package mqttsession

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestOptionsBounds(t *testing.T) {
	clock := newFakeClock()
	base := fixtureOptions(clock, 4, 4)
	for i, change := range []func(*OwnerOptions){
		func(o *OwnerOptions) { o.NodeID = 0 },
		func(o *OwnerOptions) { o.BootID = "" },
		func(o *OwnerOptions) { o.BootID = " \t" },
		func(o *OwnerOptions) { o.BootID = "a\x00b" },
		func(o *OwnerOptions) { o.BootID = "\xff" },
		func(o *OwnerOptions) { o.BootID = strings.Repeat("x", 129) },
		func(o *OwnerOptions) { o.Capacity = 0 },
		func(o *OwnerOptions) { o.Capacity = CapacityMax + 1 },
		func(o *OwnerOptions) { o.MaxOperations = 0 },
		func(o *OwnerOptions) { o.MaxOperations = MaxOperationsMax + 1 },
		func(o *OwnerOptions) { o.PendingTimeout = 0 },
		func(o *OwnerOptions) { o.PendingTimeout = -1 },
		func(o *OwnerOptions) { o.PendingTimeout = time.Minute + 1 },
		func(o *OwnerOptions) { o.MaxLease = 0 },
		func(o *OwnerOptions) { o.MaxLease = time.Minute + 1 },
		func(o *OwnerOptions) { o.CloseRetry = 0 },
		func(o *OwnerOptions) { o.CloseRetry = time.Minute + 1 },
		func(o *OwnerOptions) { o.Now = func() time.Time { return time.Now().Round(0) } },
	} {
		o := base
		change(&o)
		if r, err := NewOwners(o); err != ErrOwnerInvalid || r != nil {
			t.Errorf("case %d: %v %v", i, r, err)
		}
		if _, err := newMutexOwners(o); err != ErrOwnerInvalid {
			t.Errorf("case %d (mutex): %v", i, err)
		}
	}
	edge := base
	edge.Capacity, edge.MaxOperations = CapacityMax, MaxOperationsMax
	edge.PendingTimeout, edge.MaxLease, edge.CloseRetry = time.Minute, time.Minute, time.Minute
	edge.BootID = strings.Repeat("x", 128)
	edge.Now = nil
	if _, err := NewOwners(edge); err != nil {
		t.Fatalf("the edge of every bound: %v", err)
	}
}

func TestValidIdentity(t *testing.T) {
	for _, c := range []struct {
		s     string
		limit int
		ok    bool
	}{
		{"a", 1, true}, {"", 10, false}, {"ab", 1, false}, {strings.Repeat("x", 1024), 1024, true},
		{strings.Repeat("x", 1025), 1024, false}, {"é", 1, false}, {"a\x00b", 10, false}, {" \t\n", 10, false},
		{"\u3000", 10, false}, {" a ", 10, true}, {"\xff", 10, false},
	} {
		if ValidIdentity(c.s, c.limit) != c.ok {
			t.Errorf("ValidIdentity(%q, %d) != %v", c.s, c.limit, c.ok)
		}
	}
	o := Owner{Key: Key{"n", "c"}, SessionGeneration: 1, OwnerGeneration: 2, NodeID: 3, BootID: "b", ConnectionID: 4}
	must(t, o.Validate())
	for i, change := range []func(*Owner){
		func(o *Owner) { o.Key.Namespace = "" },
		func(o *Owner) { o.Key.ClientID = "\x00" },
		func(o *Owner) { o.SessionGeneration = 0 },
		func(o *Owner) { o.OwnerGeneration = 0 },
		func(o *Owner) { o.NodeID = 0 },
		func(o *Owner) { o.ConnectionID = 0 },
		func(o *Owner) { o.BootID = strings.Repeat("x", 129) },
	} {
		bad := o
		change(&bad)
		if err := bad.Validate(); err != ErrInvalidIdentity {
			t.Errorf("case %d: %v", i, err)
		}
	}
	is(t, Key{"", "c"}.Validate(), ErrInvalidIdentity)
}

//nolint:staticcheck // nil contexts on purpose
func TestBadInput(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 2, 1)
		now := clock.Now()
		for i, c := range []Claim{
			{Key: Key{"", "c"}, UID: "u", SessionGeneration: 1, OwnerGeneration: 1},
			{Key: Key{"n", " "}, UID: "u", SessionGeneration: 1, OwnerGeneration: 1},
			{Key: Key{"n", "c"}, UID: "", SessionGeneration: 1, OwnerGeneration: 1},
			{Key: Key{"n", "c"}, UID: strings.Repeat("u", 1025), SessionGeneration: 1, OwnerGeneration: 1},
			{Key: Key{"n", "c"}, UID: "u", SessionGeneration: 0, OwnerGeneration: 1},
			{Key: Key{"n", "c"}, UID: "u", SessionGeneration: 1, OwnerGeneration: 0},
		} {
			if _, err := r.Reserve(c, okClose); err != ErrOwnerInvalid {
				t.Errorf("claim %d: %v", i, err)
			}
		}
		_, err := r.Reserve(ownerClaim("c"), nil)
		is(t, err, ErrOwnerInvalid)
		o := mustReserve(t, r, ownerClaim("c"), okClose)
		// Leases: revision 0, no monotonic reading, not after now, too long.
		is(t, r.Activate(o, 0, now.Add(time.Second)), ErrOwnerInvalid)
		is(t, r.Activate(o, 1, now.Add(time.Second).Round(0)), ErrOwnerInvalid)
		is(t, r.Activate(o, 1, now), ErrOwnerInvalid)
		is(t, r.Activate(o, 1, now.Add(10*time.Second+1)), ErrOwnerInvalid)
		must(t, r.Activate(o, 1, now.Add(10*time.Second)))
		// Malformed identities.
		for i, change := range []func(*Owner){
			func(o *Owner) { o.ConnectionID = 0 },
			func(o *Owner) { o.NodeID = 0 },
			func(o *Owner) { o.SessionGeneration = 0 },
			func(o *Owner) { o.BootID = "" },
			func(o *Owner) { o.Key.ClientID = "" },
		} {
			bad := o
			change(&bad)
			_, err := r.Begin(context.Background(), bad)
			is(t, err, ErrOwnerInvalid)
			is(t, r.Quiesce(context.Background(), bad), ErrOwnerInvalid)
			is(t, r.Fence(bad), ErrOwnerInvalid)
			is(t, r.Activate(bad, 2, now.Add(time.Second)), ErrOwnerInvalid)
			is(t, r.Renew(bad, 2, now.Add(time.Second)), ErrOwnerInvalid)
			_ = i
		}
		// Nil contexts, bad limits.
		_, err = r.Begin(nil, o)
		is(t, err, ErrOwnerInvalid)
		is(t, r.Quiesce(nil, o), ErrOwnerInvalid)
		is(t, r.Close(nil), ErrOwnerInvalid)
		for _, limit := range []int{-1, 0, 257} {
			n, err := r.Sweep(context.Background(), limit)
			is(t, err, ErrOwnerInvalid)
			eq(t, n, 0, "visited")
		}
		_, err = r.Sweep(nil, 1)
		is(t, err, ErrOwnerInvalid)
		s := r.Snapshot()
		eq(t, s.Held, 1, "nothing changed")
		eq(t, s.Stopped, false, "not stopped")
		// Cancelled contexts return their error exactly.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = r.Begin(ctx, o)
		is(t, err, context.Canceled)
		is(t, r.Quiesce(ctx, o), context.Canceled)
		n, err := r.Sweep(ctx, 1)
		is(t, err, context.Canceled)
		eq(t, n, 0, "visited")
		dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer dcancel()
		is(t, r.Quiesce(dctx, o), context.DeadlineExceeded)
		// Use after Close: admission answers ErrOwnerStopped; the rest still works.
		must(t, r.Close(context.Background()))
		_, err = r.Reserve(ownerClaim("d"), okClose)
		is(t, err, ErrOwnerStopped)
		_, err = r.Begin(context.Background(), o)
		is(t, err, ErrOwnerStopped)
		is(t, r.Activate(o, 2, now.Add(time.Second)), ErrOwnerStopped)
		is(t, r.Renew(o, 2, now.Add(time.Second)), ErrOwnerStopped)
		must(t, r.Quiesce(context.Background(), o))
		must(t, r.Fence(o))
		must(t, r.Close(context.Background()))
		r.StopAdmission()
		eq(t, r.Snapshot(), OwnerSnapshot{Stopped: true}, "snapshot after Close")
		p, err := r.Retirement()
		must(t, err)
		eq(t, p, RetiredBoot{nodeID: 3, bootID: "boot", lastConnectionID: 1}, "retirement")
	})
	// A nil registry.
	var nilOwners *Owners
	_, err := nilOwners.Reserve(ownerClaim("c"), okClose)
	is(t, err, ErrOwnerInvalid)
	_, err = nilOwners.Begin(context.Background(), Owner{})
	is(t, err, ErrOwnerInvalid)
	is(t, nilOwners.Activate(Owner{}, 1, time.Now()), ErrOwnerInvalid)
	is(t, nilOwners.Renew(Owner{}, 1, time.Now()), ErrOwnerInvalid)
	is(t, nilOwners.Quiesce(context.Background(), Owner{}), ErrOwnerInvalid)
	is(t, nilOwners.Fence(Owner{}), ErrOwnerInvalid)
	is(t, nilOwners.Close(context.Background()), ErrOwnerInvalid)
	_, err = nilOwners.Sweep(context.Background(), 1)
	is(t, err, ErrOwnerInvalid)
	_, err = nilOwners.Retirement()
	is(t, err, ErrOwnerInvalid)
	nilOwners.StopAdmission()
	eq(t, nilOwners.Snapshot(), OwnerSnapshot{Stopped: true}, "nil snapshot")
	var nilOp *Operation
	nilOp.Done()
	is(t, nilOp.MarkUncertain(), ErrOwnerInvalid)
	is(t, nilOp.Context().Err(), context.Canceled)
	is(t, context.Cause(nilOp.Context()), ErrOwnerInvalid)
	var zeroOwners Owners
	_, err = zeroOwners.Reserve(ownerClaim("c"), okClose)
	is(t, err, ErrOwnerInvalid)
	is(t, Isolation{}.Quiesce(context.Background(), Owner{}), ErrOwnerInvalid)
}

func TestRetirementAndIsolation(t *testing.T) {
	r, _ := publicFixture(t, 10, 4)
	o, err := r.Reserve(ownerClaim("c"), okClose)
	must(t, err)
	proof := RetiredBoot{nodeID: 3, bootID: "old", lastConnectionID: 5}
	iso := Isolation{Owners: r, Retired: RetiredBoots{proof}}
	//lint:ignore SA1012 the nil-context case
	is(t, iso.Quiesce(nil, o), ErrOwnerInvalid) //nolint:staticcheck
	foreign := o
	foreign.NodeID = 9
	is(t, iso.Quiesce(context.Background(), foreign), ErrOwnerUnknown)
	old := o
	old.BootID = "old"
	must(t, iso.Quiesce(context.Background(), old))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	is(t, iso.Quiesce(ctx, old), context.Canceled)
	old.ConnectionID = 6
	is(t, iso.Quiesce(context.Background(), old), ErrOwnerUnknown)
	old.BootID = "older"
	is(t, iso.Quiesce(context.Background(), old), ErrOwnerUnknown)
	_, err = r.Retirement()
	is(t, err, ErrOwnerUnknown)
	must(t, iso.Quiesce(context.Background(), o))
	bad := o
	bad.ConnectionID = 0
	is(t, iso.Quiesce(context.Background(), bad), ErrOwnerInvalid)
	_, err = r.Retirement()
	is(t, err, ErrOwnerUnknown) // not stopped yet
	must(t, r.Close(context.Background()))
	p, err := r.Retirement()
	must(t, err)
	eq(t, p.lastConnectionID, uint64(1), "last id")
	n, b, l := p.Identity()
	eq(t, n, uint64(3), "node")
	eq(t, b, "boot", "boot")
	eq(t, l, uint64(1), "last")
	if (RetiredBoot{}).Covers(Owner{}) {
		t.Fatal("the zero proof covers something")
	}
}
