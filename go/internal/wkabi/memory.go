//go:build cgo && !wkcore_purego

package wkabi

/*
#include "wkcore.h"
*/
import "C"

import "github.com/wukongim/wkcore/go/internal/libmem"

func init() { libmem.Read = readMemory }

// readMemory is wk_memory_stats_get, which cannot fail for a local of the
// full size.
func readMemory() libmem.Stats {
	var s C.wk_memory_stats
	C.wk_memory_stats_get(&s, C.size_t(C.sizeof_wk_memory_stats))
	return libmem.Stats{
		LiveBytes:   uint64(s.live_bytes),
		LiveBlocks:  uint64(s.live_blocks),
		Allocations: uint64(s.allocations_total),
		Threads:     uint64(s.threads),
	}
}
