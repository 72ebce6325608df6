//go:build cgo && !wkcore_purego

package multiraft

import (
	"testing"

	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// One cgo crossing into the cheapest C call of the ABI: what an admission
// cost on top of its work when every admission was a C call.
func BenchmarkWuKongIMCrossing(b *testing.B) {
	var sink uint32
	for i := 0; i < b.N; i++ {
		sink += wkabi.Version()
	}
	_ = sink
}
