package multiraft

import "testing"

// In steady state no call allocates per item: Admit, AdmitBatch, Drain and
// DrainInto of pointer values, refusals included. mutexQueue's slices grow
// on the first rounds (upstream's spare buffer), so each measure runs after
// a warm-up.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		q := newLeader[*action](t, impl, Limits{MaxQueuedControls: 64, MaxQueuedBackgroundControls: 16})
		a := newAction(1)
		batch := make([]*action, 8)
		for i := range batch {
			batch[i] = newAction(i)
		}
		out := make([]Control[*action], 64)
		var sink *action
		onto := func(c Control[*action]) { sink = c.Value }
		full := make([]*action, 64)
		for i := range full {
			full[i] = a
		}
		measures := []struct {
			name string
			f    func()
		}{
			{"Admit+DrainInto", func() {
				_ = q.Admit(ControlPropose, ProposalClassForeground, a)
				_, _ = q.DrainInto(out)
			}},
			{"AdmitBatch+DrainInto", func() {
				_, _ = q.AdmitBatch(ControlPropose, ProposalClassBackground, batch)
				_, _ = q.DrainInto(out)
			}},
			{"AdmitBatch+Drain", func() {
				_, _ = q.AdmitBatch(ControlTransferLeader, ProposalClassForeground, batch)
				_, _ = q.Drain(64, onto)
			}},
			{"refusals", func() {
				_, _ = q.AdmitBatch(ControlPropose, ProposalClassForeground, full) // fills the queue
				_ = q.Admit(ControlPropose, ProposalClassForeground, a)            // busy
				_ = q.Admit(ControlCompactLog, ProposalClassForeground, a)         // busy
				_, _ = q.AdmitBatch(ControlPropose, ProposalClassBackground, batch)
				_, _ = q.DrainInto(out)
			}},
			{"State+Counters", func() {
				_, _ = q.State()
				_, _ = q.Counters()
			}},
		}
		for _, m := range measures {
			for i := 0; i < 100; i++ {
				m.f()
			}
			if allocs := testing.AllocsPerRun(500, m.f); allocs != 0 {
				t.Errorf("%s: %v allocations per run, want 0", m.name, allocs)
			}
		}
		_ = sink
	})
}
