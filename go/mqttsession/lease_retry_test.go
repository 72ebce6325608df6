package mqttsession

import (
	"context"
	"testing"
	"time"
)

// An exact retry of an installed lease (the same revision and the same
// until) is nil with the real clock too, however much time passed between
// the two calls; a different until is not a retry. Both builds.
func TestExactLeaseRetryWithTheRealClock(t *testing.T) {
	r, err := NewOwners(OwnerOptions{NodeID: 3, BootID: "boot", Capacity: 2, MaxOperations: 1,
		PendingTimeout: time.Minute, MaxLease: time.Minute, CloseRetry: time.Second})
	must(t, err)
	o, err := r.Reserve(ownerClaim("c"), okClose)
	must(t, err)
	until := time.Now().Add(30 * time.Second)
	must(t, r.Activate(o, 1, until))
	for i := 0; i < 100; i++ {
		must(t, r.Activate(o, 1, until))
	}
	is(t, r.Activate(o, 1, until.Add(time.Second)), ErrOwnerFenced)
	renewed := until.Add(5 * time.Second)
	must(t, r.Renew(o, 2, renewed))
	for i := 0; i < 100; i++ {
		must(t, r.Renew(o, 2, renewed))
	}
	is(t, r.Renew(o, 2, renewed.Add(time.Second)), ErrOwnerFenced)
	op, err := r.Begin(context.Background(), o)
	must(t, err)
	op.Done()
	must(t, r.Close(context.Background()))
}
