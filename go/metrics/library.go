package metrics

import "github.com/wukongim/wkcore/go/internal/libmem"

// LibraryMemory is the C library's own heap: what every system of the linked
// libwkcore holds (wk_memory_stats_get). The process's resident set also holds
// what the C allocator keeps for itself (free lists, per-thread arenas and
// their fragmentation); this does not, so a resident set that grows while
// LiveBytes stays flat is the allocator's, not the library's.
type LibraryMemory struct {
	// LiveBytes is the bytes the library has allocated and not freed (the
	// sizes it asked for).
	LiveBytes uint64
	// LiveBlocks is the blocks the library has allocated and not freed.
	LiveBlocks uint64
	// Allocations counts the library's allocations since it was loaded; it
	// never decreases.
	Allocations uint64
	// Threads counts the threads that have allocated through the library
	// (up to 128).
	Threads uint64
}

// ReadLibraryMemory reads the library's heap now. ok is false when no C
// library is linked: the pure-Go build (-tags wkcore_purego or
// CGO_ENABLED=0), or a program that imports no wkcore system package. While
// other goroutines call the library each field is a recent value, not one
// moment's state.
func ReadLibraryMemory() (m LibraryMemory, ok bool) {
	read := libmem.Read
	if read == nil {
		return LibraryMemory{}, false
	}
	s := read()
	return LibraryMemory{LiveBytes: s.LiveBytes, LiveBlocks: s.LiveBlocks,
		Allocations: s.Allocations, Threads: s.Threads}, true
}
