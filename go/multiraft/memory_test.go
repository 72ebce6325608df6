package multiraft

import "testing"

// A busy slot's memory follows its depth, not its history: after 10^6
// admit+take cycles at depths 1 to 4 (the worker takes everything each
// cycle), the queue holds at most 4 KiB, words included, in both builds.
func TestMemoryByDepth(t *testing.T) {
	const bound = 4 << 10
	cycles := 1_000_000
	if raceEnabled || debugBuild {
		cycles = 100_000
	}
	q := newWKQueue(t, true)
	a := wkAction()
	out := make([]Control[upControlAction], 4)
	for i := 0; i < cycles; i++ {
		depth := 1 + i%4
		for j := 0; j < depth; j++ {
			must(t, q.Admit(ControlPropose, ProposalClassForeground, a))
		}
		if n, err := q.DrainInto(out); n != depth || err != nil {
			t.Fatalf("cycle %d: took %d of %d: %v", i, n, depth, err)
		}
	}
	s := mustState(t, q)
	t.Logf("MemoryBytes after %d cycles at depth <= 4: %d", cycles, s.MemoryBytes)
	if s.MemoryBytes > bound || s.Queued != 0 {
		t.Fatalf("MemoryBytes %d (queued %d), want at most %d", s.MemoryBytes, s.Queued, bound)
	}
}
