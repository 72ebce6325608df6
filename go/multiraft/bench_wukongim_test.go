package multiraft

// Benchmarks in WuKongIM's call shape, beside the faithful port of upstream's
// control admission (upstream_port_test.go): the slot admits one
// controlAction value per call (WuKongIM never batches admissions) and the
// slot's worker takes what is queued. "upstream" is the port (g.mu and the
// slice swap), "wkcore" the build's ControlQueue of the same values
// (Implementation says which build). Results go to docs/PERFORMANCE.md,
// never into assertions.
//
//	go test -run '^$' -bench 'WuKongIM' -count 6 ./multiraft/ | benchstat -

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// wkAction is the value both sides queue.
func wkAction() upControlAction {
	return upControlAction{kind: upControlPropose, data: make([]byte, 16), future: &upFuture{}}
}

func newWKQueue(b testing.TB, leader bool) *ControlQueue[upControlAction] {
	b.Helper()
	q, err := NewControlQueue[upControlAction](1, Options{Metrics: benchRegistry(b)})
	if err != nil {
		b.Fatal(err)
	}
	if leader {
		must(b, q.SetLeader())
	}
	b.Cleanup(func() { q.Close() })
	return q
}

// benchRegistry is a registry of the benchmark's own, so the process-wide
// one is not filled by millions of decisions.
func benchRegistry(b testing.TB) *MetricsRegistry {
	r, err := NewMetricsRegistry()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

func newUpLeader() *upSlot {
	g := newUpSlot(1)
	g.role = upRoleLeader
	return g
}

// One goroutine admits one proposal per op; every 64 the worker takes them
// all (upstream: takeControlBatch and releaseControlBatch; wkcore: DrainInto
// into the worker's buffer).
func BenchmarkWuKongIMAdmit(b *testing.B) {
	b.Run("upstream", func(b *testing.B) {
		g := newUpLeader()
		a := wkAction()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += singleRound {
			n := min(singleRound, b.N-i)
			for j := 0; j < n; j++ {
				if err := g.enqueueControl(a); err != nil {
					b.Fatal(err)
				}
			}
			batch := g.takeControlBatch()
			if len(batch) != n {
				b.Fatalf("took %d of %d", len(batch), n)
			}
			g.releaseControlBatch(batch)
		}
	})
	b.Run("wkcore-"+Implementation, func(b *testing.B) {
		q := newWKQueue(b, true)
		a := wkAction()
		out := make([]Control[upControlAction], singleRound)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += singleRound {
			n := min(singleRound, b.N-i)
			for j := 0; j < n; j++ {
				if err := q.Admit(ControlPropose, ProposalClassForeground, a); err != nil {
					b.Fatal(err)
				}
			}
			if got, err := q.DrainInto(out); err != nil || got != n {
				b.Fatalf("took %d of %d: %v", got, n, err)
			}
		}
	})
}

// A proposal refused on a follower (not_leader), observed.
func BenchmarkWuKongIMNotLeader(b *testing.B) {
	b.Run("upstream", func(b *testing.B) {
		g := newUpSlot(1)
		g.observer = nopObserver{}
		a := wkAction()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := g.enqueueControl(a); err != errNotLeader {
				b.Fatal(err)
			}
		}
	})
	b.Run("wkcore-"+Implementation, func(b *testing.B) {
		q, err := NewControlQueue[upControlAction](1, Options{Metrics: benchRegistry(b), Observer: nopObserver{}})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		a := wkAction()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := q.Admit(ControlPropose, ProposalClassForeground, a); err != ErrNotLeader {
				b.Fatal(err)
			}
		}
	})
}

type nopObserver struct{}

func (nopObserver) ObserveSlotProposalAdmission(SlotID, ProposalClass, string) {}

// Two producers admit b.N proposals in all (a busy refusal yields and
// retries) while the worker takes continuously; busy/op is the busy refusals
// per admitted item in the same run.
func BenchmarkWuKongIMTwoProducers(b *testing.B) {
	run := func(b *testing.B, admit func(upControlAction) error, take func() int) {
		a := wkAction()
		var busy atomic.Int64
		var done atomic.Bool
		var taken atomic.Int64
		var worker sync.WaitGroup
		worker.Add(1)
		b.ReportAllocs()
		b.ResetTimer()
		go func() {
			defer worker.Done()
			for {
				n := take()
				taken.Add(int64(n))
				if n == 0 {
					if done.Load() && taken.Load() == int64(b.N) {
						return
					}
					runtime.Gosched()
				}
			}
		}()
		var producers sync.WaitGroup
		for p := 0; p < 2; p++ {
			n := b.N / 2
			if p == 0 {
				n = b.N - b.N/2
			}
			producers.Add(1)
			go func(n int) {
				defer producers.Done()
				for i := 0; i < n; {
					err := admit(a)
					if err == nil {
						i++
						continue
					}
					if err != errProposalBusy {
						b.Error(err)
						return
					}
					busy.Add(1)
					runtime.Gosched()
				}
			}(n)
		}
		producers.Wait()
		done.Store(true)
		worker.Wait()
		b.StopTimer()
		b.ReportMetric(float64(busy.Load())/float64(b.N), "busy/op")
	}
	b.Run("upstream", func(b *testing.B) {
		g := newUpLeader()
		run(b, g.enqueueControl, func() int {
			batch := g.takeControlBatch()
			n := len(batch)
			g.releaseControlBatch(batch)
			return n
		})
	})
	b.Run("wkcore-"+Implementation, func(b *testing.B) {
		q := newWKQueue(b, true)
		out := make([]Control[upControlAction], 256)
		run(b, func(a upControlAction) error { return q.Admit(ControlPropose, ProposalClassForeground, a) },
			func() int {
				n, err := q.DrainInto(out)
				if err != nil {
					b.Error(err)
				}
				clear(out[:n])
				return n
			})
	})
}

// The memory a busy slot holds at depth 1 after 20 000 admissions (B/slot);
// the op is one admission and its take.
func BenchmarkWuKongIMMemory(b *testing.B) {
	const admissions = 20000
	b.Run("upstream", func(b *testing.B) {
		g := newUpLeader()
		a := wkAction()
		for i := 0; i < max(b.N, admissions); i++ {
			must(b, g.enqueueControl(a))
			g.releaseControlBatch(g.takeControlBatch())
		}
		b.ReportMetric(float64(g.memoryBytes()), "B/slot")
	})
	b.Run("wkcore-"+Implementation, func(b *testing.B) {
		q := newWKQueue(b, true)
		a := wkAction()
		out := make([]Control[upControlAction], 1)
		for i := 0; i < max(b.N, admissions); i++ {
			must(b, q.Admit(ControlPropose, ProposalClassForeground, a))
			if n, err := q.DrainInto(out); n != 1 || err != nil {
				b.Fatal(n, err)
			}
		}
		b.ReportMetric(float64(mustState(b, q).MemoryBytes), "B/slot")
	})
}

// The floors of an admission: one CAS and one release store on words of
// their own (the least an inline admission does), and in the cgo build one
// cgo crossing (BenchmarkWuKongIMCrossing, bench_cgo_test.go), what each
// admission cost when it was a C call.
func BenchmarkWuKongIMFloor(b *testing.B) {
	var w, tag atomic.Uint64
	for i := 0; i < b.N; i++ {
		v := w.Load()
		if !w.CompareAndSwap(v, v+1) {
			b.Fatal("uncontended CAS failed")
		}
		publish(&tag, v)
	}
}
