package mqttsession

import (
	"context"
	"testing"
	"time"
)

// Begin allocates nothing but its *Operation, Done nothing, and a refusal
// nothing; the operation's context is paid only by Context().
func TestBeginDoneAllocations(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		r, clock := ownerFixture(t, impl, 4, 4)
		o := activeOwner(t, r, clock, "c", okClose)
		pending := mustReserve(t, r, ownerClaim("p"), okClose)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clock.Add(0)
		_ = time.Now
		measures := []struct {
			name string
			want float64
			f    func()
		}{
			{"Begin+Done", 1, func() {
				op, err := r.Begin(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				op.Done()
			}},
			{"Begin refused (fenced)", 0, func() { _, _ = r.Begin(ctx, pending) }},
		}
		if impl != Implementation {
			// The harness's mutex adapter allocates its own record the same way.
			measures[0].want = 1
		}
		for _, m := range measures {
			for i := 0; i < 10; i++ {
				m.f()
			}
			if allocs := testing.AllocsPerRun(200, m.f); allocs > m.want {
				t.Errorf("%s: %v allocations per call, want ≤ %v", m.name, allocs, m.want)
			}
		}
	})
}
