package mqttsession

import (
	"context"
	"testing"
	"time"
)

// Allocations per call against upstream's registry: each row's upstream
// count was measured by running upstream's internal/runtime/mqttsession code
// itself (testing.AllocsPerRun, Go 1.26, a registry on the real clock); this
// package must not allocate more, in either build.
func TestAllocationParity(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	r, err := NewOwners(OwnerOptions{NodeID: 3, BootID: "boot", Capacity: 8, MaxOperations: 1,
		PendingTimeout: time.Minute, MaxLease: time.Minute, CloseRetry: time.Second})
	must(t, err)
	o, err := r.Reserve(ownerClaim("c"), okClose)
	must(t, err)
	until := time.Now().Add(50 * time.Second)
	must(t, r.Activate(o, 1, until))
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var held *Operation
	rows := []struct {
		name     string
		upstream float64
		setup    func()
		f        func()
	}{
		{"Begin+Done, background context", 3, nil, func() {
			op, _ := r.Begin(ctx, o)
			op.Done()
		}},
		{"Begin+Done, cancellable context", 6, nil, func() {
			op, _ := r.Begin(cctx, o)
			op.Done()
		}},
		{"Begin refused (MaxOperations)", 0, func() { held, _ = r.Begin(ctx, o) }, func() { _, _ = r.Begin(ctx, o) }},
		{"Activate, an exact retry", 0, func() { held.Done() }, func() { _ = r.Activate(o, 1, until) }},
		{"Snapshot", 0, nil, func() { _ = r.Snapshot() }},
	}
	for _, row := range rows {
		if row.setup != nil {
			row.setup()
		}
		for i := 0; i < 10; i++ {
			row.f()
		}
		if got := testing.AllocsPerRun(200, row.f); got > row.upstream {
			t.Errorf("%s: %v allocations per call, upstream %v", row.name, got, row.upstream)
		}
	}
	must(t, r.Close(ctx))
}
