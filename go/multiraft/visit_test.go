package multiraft

import (
	"slices"
	"sync"
	"testing"
)

// Visit sees what is queued, oldest first, with kinds, classes and config
// change tickets, takes nothing, stops when told, and sees items a panicking
// Drain left behind first; Len counts them. The ring grows under the queued
// items (more than its first four cells) without Visit or Drain noticing.
func TestVisitSeesTheQueueWithoutTakingIt(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		q := newLeader[int](t, impl, Limits{MaxQueuedControls: 64, MaxQueuedBackgroundControls: 8})
		must(t, q.Admit(ControlPropose, ProposalClassBackground, 1))
		if _, err := q.AdmitBatch(ControlTransferLeader, ProposalClassForeground, []int{2, 3, 4}); err != nil {
			t.Fatal(err)
		}
		cc, err := q.AdmitConfigChange(5)
		must(t, err)
		for v := 6; v <= 12; v++ {
			must(t, q.Admit(ControlPropose, ProposalClassForeground, v))
		}
		var seen []Control[int]
		n, err := q.Visit(func(c Control[int]) bool { seen = append(seen, c); return true })
		if err != nil || n != 12 || len(seen) != 12 || q.Len() != 12 {
			t.Fatalf("Visit: %d, %v, seen %d, Len %d", n, err, len(seen), q.Len())
		}
		if seen[0].Class != ProposalClassBackground || seen[1].Kind != ControlTransferLeader ||
			seen[4].Kind != ControlConfigChange || seen[4].ConfigChange.ticket != cc.ticket || seen[5].Value != 6 {
			t.Fatalf("visited %+v", seen)
		}
		// Stopping early.
		if n, _ := q.Visit(func(c Control[int]) bool { return c.Value < 3 }); n != 3 {
			t.Fatalf("Visit stopped after %d, want 3", n)
		}
		// A Drain whose callback panics leaves the rest of its chunk pending:
		// Visit sees it first.
		func() {
			defer func() { _ = recover() }()
			q.Drain(12, func(c Control[int]) {
				if c.Value == 2 {
					panic("stop")
				}
			})
		}()
		var rest []int
		q.Visit(func(c Control[int]) bool { rest = append(rest, c.Value); return true })
		if want := []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; !slices.Equal(rest, want) || q.Len() != len(want) {
			t.Fatalf("after the panicking Drain: visited %v (Len %d), want %v", rest, q.Len(), want)
		}
		var drained []int
		q.Drain(64, func(c Control[int]) { drained = append(drained, c.Value) })
		if !slices.Equal(drained, rest) {
			t.Fatalf("drained %v, visited %v", drained, rest)
		}
		if n, _ := q.Visit(func(Control[int]) bool { return true }); n != 0 || q.Len() != 0 {
			t.Fatalf("empty queue: visited %d, Len %d", n, q.Len())
		}
		if _, err := q.Visit(nil); err != ErrInvalidArgument {
			t.Fatalf("Visit(nil): %v", err)
		}
	})
}

// While producers admit, every Visit sees a prefix of what the consumer then
// drains, in order.
func TestVisitWhileProducing(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		q := newLeader[int](t, impl, Limits{MaxQueuedControls: 4096})
		const n = 2000
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				must(t, q.Admit(ControlPropose, ProposalClassForeground, i))
			}
		}()
		next := 0
		for next < n {
			var seen []int
			q.Visit(func(c Control[int]) bool { seen = append(seen, c.Value); return true })
			for i, v := range seen {
				if v != next+i {
					t.Fatalf("visited %v from %d", seen, next)
				}
			}
			out := make([]Control[int], 1+next%7)
			got, err := q.DrainInto(out)
			must(t, err)
			for _, c := range out[:got] {
				if c.Value != next {
					t.Fatalf("drained %d, want %d", c.Value, next)
				}
				next++
			}
		}
		wg.Wait()
	})
}
