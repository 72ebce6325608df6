//go:build cgo && !wkcore_purego

package mqttsession

import (
	"testing"
	"time"
)

// benchFloorExtra: two cgo crossings (the pre-inline Begin+Done's cost
// floor) and one read of a hosted registry's clock as Go reads it.
func benchFloorExtra(b *testing.B) {
	b.Run("crossing2", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			crossingFloor()
			crossingFloor()
		}
	})
	r, err := NewOwners(OwnerOptions{NodeID: 3, BootID: "boot", Capacity: 1, MaxOperations: 1,
		PendingTimeout: time.Second, MaxLease: time.Second, CloseRetry: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("clock", func(b *testing.B) {
		var sink uint64
		for i := 0; i < b.N; i++ {
			sink += r.c.reg.clock.now()
		}
		_ = sink
	})
}
