//go:build cgo && !wkcore_purego

package wkabi

import "testing"

// The floor of every per-call figure of the cgo build: one cgo crossing into
// the library and back (wk_abi_version does nothing but return a constant),
// and the in-flight guard every handle call takes around it.
func BenchmarkCgoCall(b *testing.B) {
	var sink uint32
	for i := 0; i < b.N; i++ {
		sink += Version()
	}
	_ = sink
}

func BenchmarkUsesAcquireRelease(b *testing.B) {
	var u Uses
	for i := 0; i < b.N; i++ {
		if !u.Acquire() {
			b.Fatal("closed")
		}
		u.Release()
	}
}
