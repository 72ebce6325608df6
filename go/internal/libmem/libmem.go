// Package libmem carries the reader of the C library's own heap from the
// package that links the library (internal/wkabi, in the cgo build) to
// go/metrics, which has no cgo of its own. In the pure-Go build nothing sets
// Read.
package libmem

// Stats is wk_memory_stats: the library's heap at one moment.
type Stats struct {
	LiveBytes   uint64
	LiveBlocks  uint64
	Allocations uint64
	Threads     uint64
}

// Read reads the linked library's heap now; nil when no library is linked.
// It is set once, by a package initializer, before main runs.
var Read func() Stats
