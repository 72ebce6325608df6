package multiraft

// Single-goroutine benchmarks: the cost of the calls themselves, with no
// consumer racing the producer, so the figure does not depend on how two
// goroutines happen to interleave (see docs/PERFORMANCE.md, "Go: why the
// pipeline figures are bimodal"). One goroutine admits and then drains what
// it admitted, in rounds of 64 items, at upstream's default limits; the
// build's ControlQueue beside mutexQueue carrying the same values.
//
//	go test -run '^$' -bench 'Single' -count 6 ./multiraft/ | benchstat -

import (
	"testing"
	"time"
)

const singleRound = 64

// One op: one item admitted with Admit; every 64 items one DrainInto takes
// them back.
func BenchmarkSingleAdmit(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			v := benchValue()
			out := make([]Control[*benchAction], singleRound)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += singleRound {
				n := min(singleRound, b.N-i)
				for j := 0; j < n; j++ {
					if err := q.Admit(ControlPropose, ProposalClassForeground, v); err != nil {
						b.Fatal(err)
					}
				}
				if got, err := q.DrainInto(out[:n]); err != nil || got != n {
					b.Fatalf("drained %d of %d: %v", got, n, err)
				}
			}
		})
	}
}

// The floor of a Go FIFO of values: a buffered channel of the default limit,
// one send per item and the receives of every 64, in one goroutine.
func BenchmarkSingleAdmitChanFloor(b *testing.B) {
	ch := make(chan *benchAction, DefaultMaxQueuedControls)
	v := benchValue()
	var sink uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += singleRound {
		n := min(singleRound, b.N-i)
		for j := 0; j < n; j++ {
			ch <- v
		}
		for j := 0; j < n; j++ {
			sink += (<-ch).target
		}
	}
	_ = sink
}

// One op: one batch of 64 admitted with AdmitBatch and taken back with one
// DrainInto; ns/item is the time per item.
func BenchmarkSingleAdmitBatch64(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			vs := make([]*benchAction, singleRound)
			for i := range vs {
				vs[i] = benchValue()
			}
			out := make([]Control[*benchAction], singleRound)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if n, err := q.AdmitBatch(ControlPropose, ProposalClassForeground, vs); err != nil || n != singleRound {
					b.Fatalf("admitted %d: %v", n, err)
				}
				if got, err := q.DrainInto(out); err != nil || got != singleRound {
					b.Fatalf("drained %d: %v", got, err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*singleRound), "ns/item")
		})
	}
}
