package coord

import (
	"fmt"
	"testing"
)

// In steady state no call on the hot path allocates: single-key decisions,
// batches of 64 (the cgo build reuses its key buffer), reads, scans and the
// anchor table, wins and refusals alike. The mutex implementation too,
// except where it keeps a new key (Insert, Place and hand-off claims that
// win copy the key into the map), which these measures do not exercise.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	if debugBuild {
		t.Skip("-tags debug runs a GC per C call")
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 128, Retention: 1 << 40})
		keys := make([][]byte, 64)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("receipt:%d", i))
			expectD(t, "insert", wonPlaced)(l.Insert(keys[i], uint64(i), 1, DeadlineNever, 0))
		}
		pending, nope := []byte("pending"), []byte("nope")
		expectD(t, "insert", wonPlaced)(l.Insert(pending, 5, 1, DeadlineNever, 0))
		if n, err := l.FinalizeBatch(keys, nil, OutcomeSucceeded, 1, make([]Decision, 64)); n != 64 || err != nil {
			t.Fatalf("FinalizeBatch: %d %v", n, err)
		}
		out := make([]Decision, 64)
		payloads := make([]uint64, 64)
		h := newHandoff(t, impl, HandoffConfig{Capacity: 64, Retention: 1 << 40})
		hkeys := make([]HandoffKey, 64)
		for i := range hkeys {
			hkeys[i] = hk("group-1", uint64(i))
		}
		if n, err := h.ClaimBatch(hkeys, DeadlineNever, 0, out); n != 64 || err != nil {
			t.Fatalf("ClaimBatch: %d %v", n, err)
		}
		a := newAnchors(t, impl, 4)
		must(t, a.Insert(1, 0))
		now := uint64(1)
		measures := []struct {
			name string
			f    func()
		}{
			{"Finalize (duplicate)", func() { _, _ = l.Finalize(keys[3], OutcomeSucceeded, 9, 2) }},
			{"FinalizeBatch of 64 (duplicates)", func() { _, _ = l.FinalizeBatch(keys, payloads, OutcomeFailed, 2, out) }},
			{"FinalizeBatch of 64, no payloads", func() { _, _ = l.FinalizeBatch(keys, nil, OutcomeFailed, 2, out) }},
			{"Finalize (not found)", func() { _, _ = l.Finalize(nope, OutcomeSucceeded, 9, 2) }},
			{"Claim (duplicate)", func() { _, _ = l.Claim(keys[3], 3, 4, 1, 2) }},
			{"Claim (mismatch)", func() { _, _ = l.Claim(pending, 4, 4, 1, 2) }},
			{"Insert (lost)", func() { _, _ = l.Insert(pending, 5, 1, DeadlineNever, 2) }},
			{"Place of 64 (duplicates)", func() { _, _ = l.Place(keys, 1, DeadlineNever, 2, out) }},
			{"Take (mismatch)", func() { _, _ = l.Take(pending, 6) }},
			{"Touch", func() { _, _ = l.Touch(pending, 1, 3) }},
			{"Get", func() { _, _, _ = l.Get(keys[5]) }},
			{"Len+Counts", func() { _, _ = l.Len(); _, _ = l.Counts() }},
			{"Reconcile+Reclaim+sweeps", func() {
				_, _ = l.Reconcile(2, 16)
				_, _ = l.Reclaim(2, 16)
				_, _ = l.FinalizeOwn(9, OutcomeFailed, 2, 16)
				_, _ = l.SweepOrphans(2, 1<<40, 16)
			}},
			{"a refusal", func() { _, _ = l.Finalize(keys[0], 0, 1, 1) }},
			{"hand-off Claim (lost)", func() { _, _ = h.Claim(hkeys[7], DeadlineNever, 1) }},
			{"hand-off ClaimBatch of 64 (lost)", func() { _, _ = h.ClaimBatch(hkeys, DeadlineNever, 1, out) }},
			{"hand-off Complete", func() { _, _ = h.Complete(hkeys[9], OutcomeSucceeded, 1) }},
			{"hand-off Get", func() { _, _, _ = h.Get(hkeys[9]) }},
			{"TryFire (fired)", func() { now++; _, _ = a.TryFire(1, now, 1) }},
			{"TryFire (not due)", func() { _, _ = a.TryFire(1, now, 1<<40) }},
			{"Advance+AnchorUnset+Get", func() {
				_, _ = a.Advance(1, now, now+1)
				now++
				_, _ = a.AnchorUnset(1, now)
				_, _ = a.Get(1)
			}},
		}
		for _, m := range measures {
			for i := 0; i < 10; i++ {
				m.f()
			}
			if allocs := testing.AllocsPerRun(200, m.f); allocs != 0 {
				t.Errorf("%s: %v allocations per call, want 0", m.name, allocs)
			}
		}
	})
}
