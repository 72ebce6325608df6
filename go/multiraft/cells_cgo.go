//go:build cgo && !wkcore_purego

package multiraft

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// positionModulus is the core's WK_SLOT_POSITION_MODULUS: positions count
// modulo 2^27.
const positionModulus = 1 << 27

const positionMask = positionModulus - 1

// cell holds one queued value on the Go side, at the index of its ring
// position. head is non-zero only in the first cell of a run that a producer
// published and the consumer has not read yet (see cellStore).
type cell[T any] struct {
	head   atomic.Uint64
	kind   ControlKind
	bg     bool
	ticket uint64
	value  T
}

type segment[T any] struct {
	cells []cell[T]
}

// runTag is the head word of a run of n values from position p: the position
// (27 bits), the length (27 bits: at most MaxLimit) and a ready bit, so it is
// never 0.
func runTag(p uint32, n int) uint64 {
	return 1<<63 | uint64(n)<<27 | uint64(p&positionMask)
}

// cellStore is the Go-side storage of a queue's values: a power-of-two number
// of cells in segments allocated on first use and kept (the high-water mark,
// as upstream's slice keeps its backing array).
//
// # The run protocol
//
// The core decides admission and order; this store only carries values. A
// producer learns its positions from the core's admission, after the core has
// published the items, so a consumer may take positions from the core before
// their values are stored. So a producer writes the values of its run (one
// Admit: one value; one AdmitBatch call: all it admitted) with plain stores and
// then publishes the run with one atomic store of its tag into the run's first
// cell; the consumer, reading positions in order, waits at a run's first cell
// for that tag (only if it overtook the producer), clears it, and reads the
// run's values with plain loads. One atomic store per run on each side, not
// per value: a batch of 64 costs two.
//
// Reuse: capacity is at least the queue limit plus drainChunk, the most the
// consumer takes from the core at once, and the consumer reads everything it
// took before it takes again. The core admits position p only after it handed
// out p - limit, so by then the consumer has read every position up to
// p - capacity and the producer's cells are free. The consumer publishes how
// far it has read (consumed, one store per take) and the producer checks it
// (through a producers' copy, consumedSeen) before it writes: the check never
// waits in practice, and it is
// the edge that orders the consumer's reads before the next lap's writes for
// Go's memory model and the race detector, which do not see the core's
// atomics. Every other cross-goroutine access is ordered by the head tags.
type cellStore[T any] struct {
	segs      []atomic.Pointer[segment[T]]
	segShift  uint
	segMask   uint32
	capMask   uint32
	allocated atomic.Int64
	_         [64]byte
	// consumed is the count (mod 2^27) of positions the consumer has read,
	// written by the consumer once per take.
	consumed atomic.Uint32
	_        [60]byte
	// consumedSeen is a value of consumed that a producer loaded, on the
	// producers' own line: producers check against it and load consumed only
	// when it is not enough (about once per capacity - limit positions), so
	// the consumer's stores do not take a line from every admission.
	consumedSeen atomic.Uint32
	_            [60]byte

	// The consumer's cursor (under the queue's consumer gate).
	next    uint32
	runLeft int
}

func newCellStore[T any](limit int) *cellStore[T] {
	need := limit + drainChunk
	capacity := 1 << bits.Len(uint(need-1))
	segCells := max(min(capacity, 256), capacity>>12)
	return &cellStore[T]{
		segs:     make([]atomic.Pointer[segment[T]], capacity/segCells),
		segShift: uint(bits.TrailingZeros(uint(segCells))),
		segMask:  uint32(segCells - 1),
		capMask:  uint32(capacity - 1),
	}
}

// seg returns the segment of position p, allocating it on first use.
func (s *cellStore[T]) seg(p uint32) []cell[T] {
	slot := &s.segs[(p&s.capMask)>>s.segShift]
	seg := slot.Load()
	if seg == nil {
		fresh := &segment[T]{cells: make([]cell[T], s.segMask+1)}
		if slot.CompareAndSwap(nil, fresh) {
			s.allocated.Add(1)
			seg = fresh
		} else {
			seg = slot.Load()
		}
	}
	return seg.cells
}

// put stores the run of vs from position p and publishes it (producer side).
// ticket is the first value's config-change ticket (0 for none).
func (s *cellStore[T]) put(p uint32, kind ControlKind, bg bool, ticket uint64, vs []T) {
	// Wait until the consumer has read p + len(vs) - capacity (never, in
	// practice: see the type's docs). A stale consumedSeen only errs toward
	// loading consumed, and it is refreshed whenever it is not enough. Both
	// values were stored after the consumer read every position below them,
	// so either load orders those reads before the writes below (the reuse
	// itself is safe by the capacity argument; this is the edge Go sees).
	if (p+uint32(len(vs))-s.consumedSeen.Load())&positionMask > s.capMask+1 {
		for {
			c := s.consumed.Load()
			if (p+uint32(len(vs))-c)&positionMask <= s.capMask+1 {
				s.consumedSeen.Store(c)
				break
			}
			runtime.Gosched()
		}
	}
	var head *cell[T]
	for i := 0; i < len(vs); {
		cells := s.seg(p + uint32(i))
		at := int((p + uint32(i)) & s.segMask)
		n := min(len(cells)-at, len(vs)-i)
		dst := cells[at : at+n]
		src := vs[i : i+n]
		for j := range dst {
			c := &dst[j]
			c.kind, c.bg, c.value = kind, bg, src[j]
		}
		if i == 0 {
			head = &cells[at]
			head.ticket = ticket
		}
		i += n
	}
	head.head.Store(runTag(p, len(vs)))
}

// takeInto moves the values of positions p.. into out (consumer side, under
// the gate), len(out) of them, and marks them read.
func (s *cellStore[T]) takeInto(p uint32, out []Control[T], r configResolver) {
	var zero T
	for i := 0; i < len(out); {
		q := p + uint32(i)
		cells := s.seg(q)
		at := int(q & s.segMask)
		if s.runLeft == 0 {
			h := &cells[at].head
			tag := h.Load()
			for tag&(1<<63) == 0 || uint32(tag)&positionMask != q&positionMask {
				runtime.Gosched()
				tag = h.Load()
			}
			h.Store(0)
			s.runLeft = int(tag>>27) & positionMask
		}
		n := min(len(cells)-at, len(out)-i, s.runLeft)
		src := cells[at : at+n]
		dst := out[i : i+n]
		for j := range src {
			c, o := &src[j], &dst[j]
			o.Kind, o.Value = c.kind, c.value
			c.value = zero
			if c.bg {
				o.Class = ProposalClassBackground
			} else {
				o.Class = ProposalClassForeground
			}
			if c.ticket != 0 {
				o.ConfigChange = ConfigChange{r: r, ticket: c.ticket}
				c.ticket = 0
			} else if o.ConfigChange.r != nil {
				o.ConfigChange = ConfigChange{}
			}
		}
		s.runLeft -= n
		i += n
	}
	s.consumed.Store((p + uint32(len(out))) & positionMask)
}

// memoryBytes is the store's table and allocated segments.
func (s *cellStore[T]) memoryBytes() int {
	var zero cell[T]
	table := len(s.segs) * int(unsafe.Sizeof(s.segs[0]))
	return table + int(s.allocated.Load())*int(s.segMask+1)*int(unsafe.Sizeof(zero))
}
