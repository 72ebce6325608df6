package multiraft

import "testing"

// Allocations per call against upstream's admission: upstream's counts were
// measured on its enqueueControl / takeControlBatch / releaseControlBatch
// (as upstream_port_test.go reproduces them: upstream's slot cannot be built
// outside its package), testing.AllocsPerRun after a warm-up. The queue must
// not allocate more, in either build.
func TestAllocationParity(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	q, err := NewControlQueue[*action](1, Options{Limits: Limits{MaxQueuedControls: 64, MaxQueuedBackgroundControls: 16}})
	must(t, err)
	defer q.Close()
	must(t, q.SetLeader())
	a := newAction(1)
	out := make([]Control[*action], 128)
	rows := []struct {
		name     string
		upstream float64
		f        func()
	}{
		{"admit + take", 0, func() { _ = q.Admit(ControlPropose, "", a); _, _ = q.DrainInto(out) }},
		{"busy", 0, func() {
			for i := 0; i < 65; i++ {
				_ = q.Admit(ControlPropose, "", a)
			}
			_, _ = q.DrainInto(out)
		}},
		{"throttled", 0, func() {
			for i := 0; i < 17; i++ {
				_ = q.Admit(ControlPropose, ProposalClassBackground, a)
			}
			_, _ = q.DrainInto(out)
		}},
		{"not leader", 0, func() { _ = q.Demote(); _ = q.Admit(ControlPropose, "", a); _ = q.SetLeader() }},
	}
	for _, row := range rows {
		for i := 0; i < 100; i++ {
			row.f()
		}
		if got := testing.AllocsPerRun(500, row.f); got > row.upstream {
			t.Errorf("%s: %v allocations per call, upstream %v", row.name, got, row.upstream)
		}
	}
}
