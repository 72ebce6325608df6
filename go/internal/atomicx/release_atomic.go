//go:build race || !(amd64 || arm64)

package atomicx

import (
	"sync/atomic"
)

// StoreRelease is sync/atomic's Store here: under -race (the race detector
// sees it) and where no release-store instruction is written out
// (release_asm.go).
func StoreRelease(addr *uint64, v uint64) {
	atomic.StoreUint64(addr, v)
}
