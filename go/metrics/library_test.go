package metrics_test

import (
	"testing"

	"github.com/wukongim/wkcore/go/coord"
	"github.com/wukongim/wkcore/go/metrics"
)

// TestReadLibraryMemory: in the cgo build the library's heap holds what the
// program's ledgers hold and gives it back when they close; the pure-Go build
// links no library and says so.
func TestReadLibraryMemory(t *testing.T) {
	newLedger := func(capacity int) *coord.Ledger {
		l, err := coord.NewLedger(coord.LedgerConfig{Kind: coord.KindClaim, Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// One ledger first: what the library sets up once is counted before the baseline.
	if err := newLedger(64).Close(); err != nil {
		t.Fatal(err)
	}
	before, ok := metrics.ReadLibraryMemory()
	if ok != libraryLinked {
		t.Fatalf("ReadLibraryMemory ok = %v in this build, want %v", ok, libraryLinked)
	}
	if !ok {
		if before != (metrics.LibraryMemory{}) {
			t.Fatalf("no library, yet %+v", before)
		}
		return
	}
	const ledgers, capacity = 16, 4096
	var held []*coord.Ledger
	for range ledgers {
		held = append(held, newLedger(capacity))
	}
	during, _ := metrics.ReadLibraryMemory()
	// Each record is at least a 64-bit state word and a key word.
	if during.LiveBytes < before.LiveBytes+ledgers*capacity*16 || during.LiveBlocks < before.LiveBlocks+ledgers {
		t.Fatalf("%d ledgers of %d records: before %+v, with them %+v", ledgers, capacity, before, during)
	}
	if during.Allocations < before.Allocations+ledgers || during.Threads == 0 {
		t.Fatalf("before %+v, with the ledgers %+v", before, during)
	}
	for _, l := range held {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := metrics.ReadLibraryMemory()
	if after.LiveBytes > during.LiveBytes-ledgers*capacity*16 {
		t.Fatalf("closed every ledger: with them %+v, after %+v", during, after)
	}
}
