package wkcore

import (
	"errors"
	"testing"
)

func TestAdmissionRegistry(t *testing.T) {
	r, err := NewAdmissionRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := newTestSlot(t, Limits{}, true)
	if err := r.Insert(s); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	if err := r.Insert(s); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second Insert: %v", err)
	}
	got, err := r.Get(s.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ID() != s.ID() {
		t.Fatalf("Get id %d, want %d", got.ID(), s.ID())
	}
	// The handle from Get is the same slot.
	if err := got.Admit(ControlPropose, ProposalClassForeground, 5); err != nil {
		t.Fatal(err)
	}
	got.Close()
	if st, _ := s.State(); st.Queued != 1 {
		t.Fatalf("state %+v", st)
	}
	if _, err := r.Get(s.ID() + 1_000_000); !errors.Is(err, ErrSlotNotFound) {
		t.Fatalf("Get unknown: %v", err)
	}
	// The registry keeps its own reference: closing every handle of ours
	// leaves the slot reachable through it.
	r2, err := r.Clone()
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	s.Close()
	again, err := r2.Get(id)
	if err != nil {
		t.Fatalf("Get after Close of the inserted handle: %v", err)
	}
	if st, _ := again.State(); st.Queued != 1 {
		t.Fatalf("state %+v", st)
	}
	again.Close()
	if err := r2.Remove(id); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if err := r.Remove(id); !errors.Is(err, ErrSlotNotFound) {
		t.Fatalf("second Remove: %v", err)
	}
	r2.Close()
	r2.Close()
	if _, err := r2.Get(id); err != ErrHandleClosed {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := r2.Insert(newTestSlot(t, Limits{}, false)); err != ErrHandleClosed {
		t.Fatalf("Insert after Close: %v", err)
	}
	if err := r.Insert(s); err != ErrHandleClosed {
		t.Fatalf("Insert of a closed slot: %v", err)
	}
	if err := r2.Remove(id); err != ErrHandleClosed {
		t.Fatalf("Remove after Close: %v", err)
	}
	if _, err := r2.Clone(); err != ErrHandleClosed {
		t.Fatalf("Clone after Close: %v", err)
	}
}

// Goroutines each take their own handle (Clone or registry Get), use it and
// Close it, while the original handle is closed midway: the slot lives on
// as long as any handle does.
func TestHandlesAcrossGoroutines(t *testing.T) {
	r, err := NewAdmissionRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := NewSlot(nextSlotID.Add(1), Limits{MaxQueuedControls: 1 << 13})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if err := r.Insert(s); err != nil {
		t.Fatal(err)
	}
	const workers = 8
	rounds := scale(500)
	handles := make([]*Slot, workers)
	for i := range handles {
		if handles[i], err = s.Clone(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(h *Slot) {
			defer h.Close()
			for i := 0; i < rounds; i++ {
				g, err := r.Get(id)
				if err != nil {
					errs <- err
					return
				}
				c, err := g.Clone()
				g.Close()
				if err != nil {
					errs <- err
					return
				}
				err = c.Admit(ControlTransferLeader, ProposalClassForeground, uint64(i))
				c.Close()
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- h.Admit(ControlCompactLog, ProposalClassForeground, 0)
		}(handles[w])
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	last, err := r.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	if st, _ := last.State(); st.Queued != uint32(workers*(rounds+1)) {
		t.Fatalf("queued %d, want %d", st.Queued, workers*(rounds+1))
	}
}
