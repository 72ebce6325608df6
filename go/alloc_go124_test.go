//go:build go1.24

package wkcore

import "testing"

// With the #cgo noescape/nocallback directives (cgo_go124.go) the hot calls
// keep their out-parameters on the stack: no allocation per call, busy
// outcomes included.
func TestHotPathDoesNotAllocate(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per call")
	}
	s := newTestSlot(t, Limits{MaxQueuedControls: 64}, true)
	tokens := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	out := make([]Item, 64)
	allocs := testing.AllocsPerRun(1000, func() {
		_ = s.Admit(ControlPropose, ProposalClassForeground, 9)
		_, _ = s.AdmitBatch(ControlPropose, ProposalClassBackground, tokens)
		_, _ = s.Drain(out)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Admit+AdmitBatch+Drain, want 0", allocs)
	}
}
