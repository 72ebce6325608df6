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

// cell holds one queued value on the Go side, at the index of its ring
// position. seq is the cell's turn: 2*lap when it is free for the position of
// that lap, 2*lap+1 when it holds that position's value (lap = position /
// capacity, modulo the laps in positionModulus). The zero value is free for
// lap 0, so a segment needs no initialization.
type cell[T any] struct {
	seq    atomic.Uint32
	kind   ControlKind
	bg     bool
	ticket uint64
	value  T
}

type segment[T any] struct {
	cells []cell[T]
}

// cellStore is the Go-side storage of a queue's values: a power-of-two number
// of cells (at least the queue limit, so a producer never waits for a cell in
// normal operation) in segments allocated on first use and kept (the
// high-water mark, as upstream's slice keeps its backing array).
//
// # The cell protocol
//
// The core decides admission and order; this store only carries values. A
// producer learns its position from the core's admission, after the core has
// published the item, so a consumer may take the position before the value is
// stored. Each cell therefore has a turn (seq): the producer of position p
// waits (rarely: only if the consumer of p - capacity has not read it yet),
// stores the value and sets seq to full; the consumer of p waits until seq is
// full (only if it overtook the producer), reads the value, clears it and
// sets seq to free for p + capacity. Go's atomics are sequentially
// consistent: the producer's seq store publishes its value stores to the
// consumer's seq load, and the consumer's store publishes its clear to the
// next lap's producer. Neither side waits on the other's callback or lock:
// a consumer copies values out before it calls anything.
type cellStore[T any] struct {
	segs      []atomic.Pointer[segment[T]]
	segShift  uint
	segMask   uint32
	capShift  uint
	lapMask   uint32
	allocated atomic.Int64
}

func newCellStore[T any](limit int) *cellStore[T] {
	capacity := 1
	if limit > 1 {
		capacity = 1 << bits.Len(uint(limit-1))
	}
	segCells := max(min(capacity, 256), capacity>>12)
	s := &cellStore[T]{
		segs:     make([]atomic.Pointer[segment[T]], capacity/segCells),
		segShift: uint(bits.TrailingZeros(uint(segCells))),
		segMask:  uint32(segCells - 1),
		capShift: uint(bits.TrailingZeros(uint(capacity))),
	}
	s.lapMask = uint32(positionModulus>>s.capShift) - 1
	return s
}

func (s *cellStore[T]) at(position uint32) *cell[T] {
	index := position & (1<<s.capShift - 1)
	slot := &s.segs[index>>s.segShift]
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
	return &seg.cells[index&s.segMask]
}

func (s *cellStore[T]) lap(position uint32) uint32 {
	return (position >> s.capShift) & s.lapMask
}

// put stores the value of position (producer side).
func (s *cellStore[T]) put(position uint32, kind ControlKind, bg bool, ticket uint64, v T) {
	c := s.at(position)
	lap := s.lap(position)
	for c.seq.Load() != 2*lap {
		runtime.Gosched()
	}
	c.kind, c.bg, c.ticket, c.value = kind, bg, ticket, v
	c.seq.Store(2*lap + 1)
}

// take moves the value of position out (consumer side).
func (s *cellStore[T]) take(position uint32, r configResolver) Control[T] {
	c := s.at(position)
	lap := s.lap(position)
	for c.seq.Load() != 2*lap+1 {
		runtime.Gosched()
	}
	out := Control[T]{Kind: c.kind, Class: ProposalClassForeground, Value: c.value}
	if c.bg {
		out.Class = ProposalClassBackground
	}
	if c.ticket != 0 {
		out.ConfigChange = ConfigChange{r: r, ticket: c.ticket}
	}
	var zero T
	c.value, c.ticket = zero, 0
	c.seq.Store(2 * ((lap + 1) & s.lapMask))
	return out
}

// memoryBytes is the store's table and allocated segments.
func (s *cellStore[T]) memoryBytes() int {
	var zero cell[T]
	table := len(s.segs) * int(unsafe.Sizeof(s.segs[0]))
	return table + int(s.allocated.Load())*int(s.segMask+1)*int(unsafe.Sizeof(zero))
}
