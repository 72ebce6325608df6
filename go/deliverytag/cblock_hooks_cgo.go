//go:build cgo && !wkcore_purego

package deliverytag

// Test hooks for the C blocks a write hands the library (cblock): test
// files cannot use cgo, so these live here; nothing else calls them.

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include <stdlib.h>
#include <stdint.h>
#include "tag_cgo.h"

// Leaves `count` freed chunks of `size` bytes, every word of which is `word`,
// at the head of this thread's allocator cache: the next allocations of that
// size on this thread get them back (glibc's per-thread cache is LIFO),
// holding what a previous owner of the memory left there.
static void wkgo_poison_chunks(size_t size, uintptr_t word, int count) {
	void *chunks[16];
	if (count > 16) count = 16;
	for (int i = 0; i < count; i++) {
		// volatile: the compiler may not drop the stores (nor, with them,
		// the allocation and the free).
		volatile uintptr_t *p = (volatile uintptr_t *)malloc(size);
		chunks[i] = (void *)p;
		if (p == NULL) continue;
		for (size_t j = 0; j < size / sizeof *p; j++) p[j] = word;
	}
	for (int i = count - 1; i >= 0; i--) free(chunks[i]);
}
*/
import "C"

import "unsafe"

// poisonTagIn leaves freed C memory of the size tagIn allocates for t and
// parts, filled with word, for the next allocations on this thread (the
// caller locks its OS thread).
func poisonTagIn(t *DeliveryTag, parts []NodePartition, word uintptr) {
	size := blockSize(C.sizeof_wk_tag_in, []string{t.Key, t.ChannelKey, t.SourceChannelKey},
		len(t.Topology.SlotAuthorityRefs), parts)
	C.wkgo_poison_chunks(C.size_t(size), C.uintptr_t(word), 4)
}

// tagInBytes is a copy of the C block tagIn builds for t and parts, taken
// before anything is written into it: what its typed stores overwrite.
func tagInBytes(t *DeliveryTag, parts []NodePartition) []byte {
	size := blockSize(C.sizeof_wk_tag_in, []string{t.Key, t.ChannelKey, t.SourceChannelKey},
		len(t.Topology.SlotAuthorityRefs), parts)
	b := newCBlock(size)
	defer b.free()
	return append([]byte(nil), unsafe.Slice((*byte)(b.base), int(b.size))...)
}
