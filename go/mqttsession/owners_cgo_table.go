//go:build cgo && !wkcore_purego

package mqttsession

import (
	"sync"
	"sync/atomic"
)

// The Go side's map from connection id to owner wrapper, read by every
// Begin. A read writes nothing shared (no reader count, no lock word): it
// loads the shard's table and probes slots with atomic loads, so parallel
// Begins on distinct owners share no written cache line. Writes (Reserve,
// a retirement, a prune) are the cold path: they take the shard's mutex,
// store into the slots atomically, and replace the table (copy, then
// publish) only to grow it or to clear its tombstones, amortized O(1).

// ownerShards is the number of shards (a power of two): consecutive
// connection ids fall in distinct shards, and id/ownerShards is an id's
// home slot in its shard (ids are minted in order, so homes are dense).
const ownerShards = 64

// ownerTableMin is a table's smallest size (a power of two).
const ownerTableMin = 8

// ownerTable is one shard's open-addressed table (linear probing). A slot
// holds nil (ends every probe), tombstone (a removed wrapper; probes go on)
// or a wrapper. Each id is inserted at most once (ids are never reused), so
// an insert may take the first tombstone on its probe.
type ownerTable struct {
	mask  uint64
	slots []atomic.Pointer[cgoOwner]
}

// tombstone marks a removed slot; its connection id (0) matches no id get
// looks for.
var tombstone = new(cgoOwner)

type ownerShard struct {
	tab atomic.Pointer[ownerTable]
	mu  sync.Mutex
	// live counts the wrappers in tab, used the slots that are not nil
	// (live plus tombstones); both are written under mu only.
	live, used int
	_          [64 - 8 - 8 - 16]byte
}

func newOwnerTable(size int) *ownerTable {
	return &ownerTable{mask: uint64(size - 1), slots: make([]atomic.Pointer[cgoOwner], size)}
}

// get returns the wrapper of connection id, nil if none. Lock-free; a read
// that races a removal may still find the removed wrapper (as a read made
// just before it would), whose retired owner the core then refuses.
func (s *ownerShard) get(id uint64) *cgoOwner {
	if id == 0 {
		return nil
	}
	t := s.tab.Load()
	for i := id / ownerShards; ; i++ {
		w := t.slots[i&t.mask].Load()
		if w == nil || w.owner.ConnectionID == id {
			return w
		}
	}
}

// put inserts w (its id not in the table). Under mu.
func (s *ownerShard) put(w *cgoOwner) {
	t := s.tab.Load()
	if (s.used+1)*4 > len(t.slots)*3 {
		t = s.rebuild(s.live + 1)
	}
	for i := w.owner.ConnectionID / ownerShards; ; i++ {
		p := &t.slots[i&t.mask]
		switch p.Load() {
		case nil:
			s.used++
		case tombstone:
		default:
			continue
		}
		p.Store(w)
		s.live++
		return
	}
}

// remove takes w out of the table; false if it is not there. Under mu.
func (s *ownerShard) remove(w *cgoOwner) bool {
	t := s.tab.Load()
	for i := w.owner.ConnectionID / ownerShards; ; i++ {
		p := &t.slots[i&t.mask]
		switch p.Load() {
		case nil:
			return false
		case w:
			s.live--
			if t.slots[(i+1)&t.mask].Load() != nil {
				p.Store(tombstone)
				return true
			}
			// The next slot ends every probe that reaches it, so no probe
			// needs this slot, nor the tombstones just before it, to go on.
			for p.Store(nil); ; {
				s.used--
				i--
				p = &t.slots[i&t.mask]
				if p.Load() != tombstone {
					return true
				}
				p.Store(nil)
			}
		}
	}
}

// rebuild publishes a copy of the table without tombstones, sized for want
// wrappers at most half full, and returns it. Under mu. Readers of the old
// table go on reading it (it is never written again).
func (s *ownerShard) rebuild(want int) *ownerTable {
	size := ownerTableMin
	for size < 2*want {
		size *= 2
	}
	old := s.tab.Load()
	t := newOwnerTable(size)
	for i := range old.slots {
		w := old.slots[i].Load()
		if w == nil || w == tombstone {
			continue
		}
		for j := w.owner.ConnectionID / ownerShards; ; j++ {
			if p := &t.slots[j&t.mask]; p.Load() == nil {
				p.Store(w)
				break
			}
		}
	}
	s.used = s.live
	s.tab.Store(t)
	return t
}

// each calls f on every wrapper in the table; f may remove the one it is
// given. Under mu.
func (s *ownerShard) each(f func(w *cgoOwner)) {
	t := s.tab.Load()
	for i := range t.slots {
		if w := t.slots[i].Load(); w != nil && w != tombstone {
			f(w)
		}
	}
}
