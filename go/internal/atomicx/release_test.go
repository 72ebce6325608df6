package atomicx

import (
	"sync"
	"sync/atomic"
	"testing"
)

// A value published with StoreRelease is seen by a reader that loads the
// flag with sync/atomic and sees it set.
func TestStoreReleasePublishes(t *testing.T) {
	const rounds = 2000
	for i := 0; i < rounds; i++ {
		var data [4]uint64
		var flag uint64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for atomic.LoadUint64(&flag) == 0 {
			}
			for j, d := range data {
				if d != uint64(i+j+1) {
					t.Errorf("round %d: data[%d] = %d after the flag", i, j, d)
				}
			}
		}()
		for j := range data {
			data[j] = uint64(i + j + 1)
		}
		StoreRelease(&flag, 1)
		wg.Wait()
	}
}

func TestStoreReleaseStores(t *testing.T) {
	var v uint64
	StoreRelease(&v, 1<<63|7)
	if got := atomic.LoadUint64(&v); got != 1<<63|7 {
		t.Fatalf("got %#x", got)
	}
}
