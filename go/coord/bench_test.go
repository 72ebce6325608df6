package coord

// Benchmarks of the hot calls, side by side: the build's types ("rust" with
// cgo, "go" without) and the mutex implementation ("mutex"), on the same
// keys. One op is one receipt (Finalize, FinalizeBatch64: ns/op is per
// receipt in both), one claim, or one TryFire. The records a round
// consumes are reset between rounds with the timer stopped. Results go to
// docs, never into assertions.
//
//	go test -run '^$' -bench . -benchtime 200ms ./coord/

import (
	"fmt"
	"sync/atomic"
	"testing"
)

const benchRound = 4096 // records per round (BatchMax: one Place)

var benchImpls = []string{Implementation, implMutex}

func benchKeys(prefix string) [][]byte {
	keys := make([][]byte, benchRound)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("%s:%08d:target", prefix, i))
	}
	return keys
}

// refill puts a PENDING record under every key of a round (placed with
// placeholder 1), after reclaiming the previous round's.
func refill(b *testing.B, l ledgerAPI, keys [][]byte, now uint64, out []Decision) {
	if _, err := l.Reclaim(now, benchRound); err != nil {
		b.Fatal(err)
	}
	if n, err := l.Place(keys, 1, DeadlineNever, now, out); n != len(keys) || err != nil {
		b.Fatalf("Place: %d %v (%v)", n, err, out[0])
	}
}

func newBenchLedger(b *testing.B, impl string, kind Kind) ledgerAPI {
	return newLedger(b, impl, LedgerConfig{Kind: kind, Capacity: benchRound, Retention: 0})
}

// One op: one receipt finalized with Finalize (each one wins).
func BenchmarkFinalize(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			l := newBenchLedger(b, impl, KindPending)
			keys := benchKeys("receipt")
			out := make([]Decision, benchRound)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; {
				b.StopTimer()
				refill(b, l, keys, uint64(i+1), out)
				b.StartTimer()
				n := min(benchRound, b.N-i)
				for _, k := range keys[:n] {
					if d, err := l.Finalize(k, OutcomeSucceeded, 7, uint64(i+1)); err != nil || d.Result != ResultWon {
						b.Fatalf("Finalize: %v %v", d, err)
					}
				}
				i += n
			}
		})
	}
}

// One op: one receipt, finalized 64 at a time with FinalizeBatch (each one
// wins); ns/op is per receipt, comparable with BenchmarkFinalize.
func BenchmarkFinalizeBatch64(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			l := newBenchLedger(b, impl, KindPending)
			keys := benchKeys("receipt")
			out := make([]Decision, benchRound)
			payloads := make([]uint64, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; {
				b.StopTimer()
				refill(b, l, keys, uint64(i+1), out)
				b.StartTimer()
				n := min(benchRound, b.N-i)
				for j := 0; j < n; j += 64 {
					m := min(64, n-j)
					if won, err := l.FinalizeBatch(keys[j:j+m], payloads[:m], OutcomeSucceeded, uint64(i+1), out[:m]); err != nil || won != m {
						b.Fatalf("FinalizeBatch: %d %v", won, err)
					}
				}
				i += n
			}
		})
	}
}

// One op: one duplicate receipt (a record already finalized), the retry
// path, with Finalize.
func BenchmarkFinalizeDuplicate(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			l := newBenchLedger(b, impl, KindPending)
			keys := benchKeys("receipt")
			out := make([]Decision, benchRound)
			refill(b, l, keys, 1, out)
			if _, err := l.FinalizeBatch(keys, nil, OutcomeSucceeded, 1, out); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d, _ := l.Finalize(keys[i%benchRound], OutcomeSucceeded, 8, 2); d.Result != ResultDuplicate {
					b.Fatalf("Finalize: %v", d)
				}
			}
		})
	}
}

// One op: one duplicate receipt, GOMAXPROCS goroutines at once on distinct
// keys of one ledger (the mutex serializes them; the core does not).
func BenchmarkFinalizeDuplicateParallel(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			l := newBenchLedger(b, impl, KindPending)
			keys := benchKeys("receipt")
			out := make([]Decision, benchRound)
			refill(b, l, keys, 1, out)
			if _, err := l.FinalizeBatch(keys, nil, OutcomeSucceeded, 1, out); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 997 // each goroutine on its own keys
				for pb.Next() {
					i += 7
					if d, _ := l.Finalize(keys[i%benchRound], OutcomeSucceeded, 8, 2); d.Result != ResultDuplicate {
						b.Errorf("Finalize: %v", d)
						return
					}
				}
			})
		})
	}
}

// One op: one two-phase claim that wins (the placeholder swapped for the
// request id).
func BenchmarkClaim(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			l := newBenchLedger(b, impl, KindClaim)
			keys := benchKeys("pending:job:batch")
			out := make([]Decision, benchRound)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; {
				b.StopTimer()
				if i > 0 {
					if _, err := l.FinalizeBatch(keys, nil, OutcomeSucceeded, uint64(i), out); err != nil {
						b.Fatal(err)
					}
				}
				refill(b, l, keys, uint64(i+1), out)
				b.StartTimer()
				n := min(benchRound, b.N-i)
				for j, k := range keys[:n] {
					if d, err := l.Claim(k, 1, uint64(j+2), 9, uint64(i+1)); err != nil || d.Result != ResultWon {
						b.Fatalf("Claim: %v %v", d, err)
					}
				}
				i += n
			}
		})
	}
}

// One op: one TryFire that fires (period 1, the clock advancing by one per
// call): the CAS path.
func BenchmarkTryFire(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			a := newAnchors(b, impl, 1024)
			for id := uint64(0); id < 1024; id++ {
				must(b, a.Insert(id, 0))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if f, err := a.TryFire(uint64(i)&1023, uint64(i/1024+1), 1); err != nil || f.Kind != FireFired {
					b.Fatalf("TryFire: %+v %v", f, err)
				}
			}
		})
	}
}

// One op: one TryFire that is not due: the read-only path every replica
// takes on most ticks.
func BenchmarkTryFireNotDue(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			a := newAnchors(b, impl, 1024)
			for id := uint64(0); id < 1024; id++ {
				must(b, a.Insert(id, 0))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if f, err := a.TryFire(uint64(i)&1023, 5, 60); err != nil || f.Kind != FireNotDue {
					b.Fatalf("TryFire: %+v %v", f, err)
				}
			}
		})
	}
}
