//go:build cgo && !wkcore_purego

package mqttsession

import (
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

// The shard table against a map: random inserts (each id once, as ids are
// minted) and removals, then every id looked up; the counts and the free
// slot that ends every probe checked after each step.
func TestOwnerTableModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 8; round++ {
		var s ownerShard
		s.tab.Store(newOwnerTable(ownerTableMin))
		model := map[uint64]*cgoOwner{}
		var ids []uint64
		next := uint64(1 + rng.Intn(3))
		for step := 0; step < 1500; step++ {
			if len(model) == 0 || rng.Intn(3) != 0 {
				// This shard's ids, with gaps (other shards' and skipped ids).
				id := next*ownerShards + uint64(round%ownerShards)
				next += uint64(1 + rng.Intn(4))
				w := &cgoOwner{owner: Owner{ConnectionID: id}}
				s.put(w)
				model[id] = w
				ids = append(ids, id)
			} else {
				id := ids[rng.Intn(len(ids))]
				w, ok := model[id]
				if !ok {
					w = &cgoOwner{owner: Owner{ConnectionID: id}}
				}
				if got := s.remove(w); got != ok {
					t.Fatalf("round %d step %d: remove(%d) = %v, want %v", round, step, id, got, ok)
				}
				delete(model, id)
			}
			tab := s.tab.Load()
			if s.live != len(model) || s.used < s.live || s.used*4 > len(tab.slots)*3 {
				t.Fatalf("round %d step %d: live %d used %d size %d, want live %d", round, step, s.live, s.used,
					len(tab.slots), len(model))
			}
			used := 0
			for i := range tab.slots {
				if tab.slots[i].Load() != nil {
					used++
				}
			}
			if used != s.used {
				t.Fatalf("round %d step %d: %d slots used, counted %d", round, step, used, s.used)
			}
		}
		for _, id := range ids {
			if got := s.get(id); got != model[id] {
				t.Fatalf("round %d: get(%d) = %v, want %v", round, id, got, model[id])
			}
		}
		if s.get(0) != nil {
			t.Fatal("get(0) found a slot")
		}
		n, before := 0, len(model)
		s.each(func(w *cgoOwner) {
			if model[w.owner.ConnectionID] != w {
				t.Fatalf("each visited %d, not in the table", w.owner.ConnectionID)
			}
			if rng.Intn(2) == 0 && s.remove(w) {
				delete(model, w.owner.ConnectionID)
			}
			n++
		})
		if n != before || s.live != len(model) {
			t.Fatalf("round %d: each visited %d of %d, live %d, want %d", round, n, before, s.live, len(model))
		}
		for id, w := range model {
			if s.get(id) != w {
				t.Fatalf("round %d: get(%d) lost after each", round, id)
			}
		}
	}
}

// Readers never miss a wrapper that stays in the table while a writer
// inserts, removes and rebuilds around it (run with -race).
func TestOwnerTableConcurrentReads(t *testing.T) {
	var s ownerShard
	s.tab.Store(newOwnerTable(ownerTableMin))
	const stable = 16
	keep := make([]*cgoOwner, stable)
	for i := range keep {
		keep[i] = &cgoOwner{owner: Owner{ConnectionID: uint64(2*i+1) * ownerShards}}
		s.mu.Lock()
		s.put(keep[i])
		s.mu.Unlock()
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() || n < 1000; n++ {
				w := keep[n%stable]
				if s.get(w.owner.ConnectionID) != w {
					t.Errorf("get(%d) missed a held wrapper", w.owner.ConnectionID)
					return
				}
			}
		}()
	}
	var churn []*cgoOwner
	for i := 0; i < 5000; i++ {
		s.mu.Lock()
		w := &cgoOwner{owner: Owner{ConnectionID: uint64(2*stable+i) * ownerShards}}
		s.put(w)
		churn = append(churn, w)
		if len(churn) > 40 {
			s.remove(churn[0])
			churn = churn[1:]
		}
		s.mu.Unlock()
	}
	stop.Store(true)
	wg.Wait()
}
