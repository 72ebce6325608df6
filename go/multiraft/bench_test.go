package multiraft

// Benchmarks of admission with a consumer draining, side by side: the
// build's ControlQueue ("rust" with cgo, "go" without) and mutexQueue
// ("mutex", upstream's algorithm under a mutex), carrying the same values, a
// pointer to a small struct like upstream's controlAction, at upstream's
// default limits (8192, 4096). A producer that meets backpressure yields and
// retries, so every benchmark admits all its items. Results go to
// docs/PERFORMANCE.md, never into assertions.
//
//	go test -run '^$' -bench . -benchtime 200ms ./multiraft/

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchAction is the benchmarks' value, shaped like upstream's
// controlAction (kind, data, class, future and request pointers).
type benchAction struct {
	kind   uint8
	data   []byte
	class  ProposalClass
	future *struct{ done chan struct{} }
	target uint64
}

const benchBatch = 64

var benchImpls = []string{Implementation, implMutex}

func newBenchQueue(b *testing.B, impl string) queue[*benchAction] {
	b.Helper()
	q := newQueue[*benchAction](b, impl, Options{})
	must(b, q.SetLeader())
	return q
}

// consumer drains q on its own goroutine, yielding when it is empty, and
// counts what it took.
type consumer struct {
	stop   atomic.Bool
	taken  atomic.Int64
	empty  atomic.Int64 // drains that found nothing
	drains atomic.Int64 // drains that took something
	wg     sync.WaitGroup
}

func startConsumer(b *testing.B, q queue[*benchAction]) *consumer {
	c := &consumer{}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		out := make([]Control[*benchAction], 256)
		var sink uint64
		for !c.stop.Load() {
			n, err := q.DrainInto(out)
			if err != nil {
				b.Error(err)
				return
			}
			for i := range out[:n] {
				sink += out[i].Value.target
			}
			if n == 0 {
				c.empty.Add(1)
				runtime.Gosched()
				continue
			}
			c.drains.Add(1)
			c.taken.Add(int64(n))
		}
		_ = sink
	}()
	b.Cleanup(c.halt)
	return c
}

func (c *consumer) halt() { c.stop.Store(true); c.wg.Wait() }

// backpressure counts the retries of producers that met a full queue.
var backpressure atomic.Int64

// reportRegime reports how the producer and the consumer interleaved: items
// per non-empty drain, empty drains and backpressure retries per item. The
// pipeline figures depend on it (docs/PERFORMANCE.md, "why the pipeline
// figures are bimodal").
func reportRegime(b *testing.B, c *consumer, items int) {
	drains := max(c.drains.Load(), 1)
	b.ReportMetric(float64(c.taken.Load())/float64(drains), "items/drain")
	b.ReportMetric(float64(c.empty.Load())/float64(items), "empty/item")
	b.ReportMetric(float64(backpressure.Swap(0))/float64(items), "full/item")
}

func admitOne(b *testing.B, q queue[*benchAction], v *benchAction) {
	for {
		err := q.Admit(ControlPropose, ProposalClassForeground, v)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrProposalBackpressure) {
			b.Fatal(err)
		}
		backpressure.Add(1)
		runtime.Gosched()
	}
}

func admitAll(b *testing.B, q queue[*benchAction], vs []*benchAction) {
	for len(vs) > 0 {
		n, err := q.AdmitBatch(ControlPropose, ProposalClassForeground, vs)
		if err != nil && !errors.Is(err, ErrProposalBackpressure) {
			b.Fatal(err)
		}
		vs = vs[n:]
		if n == 0 {
			backpressure.Add(1)
			runtime.Gosched()
		}
	}
}

func benchValue() *benchAction {
	return &benchAction{kind: 1, data: []byte("payload"), class: ProposalClassForeground,
		future: &struct{ done chan struct{} }{}, target: 7}
}

// One op: one item admitted with Admit while a consumer drains.
func BenchmarkAdmit(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			c := startConsumer(b, q)
			v := benchValue()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				admitOne(b, q, v)
			}
			b.StopTimer()
			reportRegime(b, c, b.N)
		})
	}
}

// One op: one batch of 64 items admitted with AdmitBatch while a consumer
// drains; ns/item is the time per item.
func BenchmarkAdmitBatch64(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			c := startConsumer(b, q)
			vs := make([]*benchAction, benchBatch)
			for i := range vs {
				vs[i] = benchValue()
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				admitAll(b, q, vs)
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchBatch), "ns/item")
			b.StopTimer()
			reportRegime(b, c, b.N*benchBatch)
		})
	}
}

// One op: one item through the queue, admitted by one producer and taken by
// one consumer that spins on DrainInto; the clock stops when the consumer has
// taken them all. How the two goroutines interleave decides the figure (see
// the items/drain metric and docs/PERFORMANCE.md): BenchmarkPipelineWoken is
// the shape upstream runs.
func BenchmarkPipeline1P1C(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			v := benchValue()
			b.ReportAllocs()
			b.ResetTimer()
			c := startConsumer(b, q)
			for i := 0; i < b.N; i++ {
				admitOne(b, q, v)
			}
			for c.taken.Load() < int64(b.N) {
				runtime.Gosched()
			}
			b.StopTimer()
			c.halt()
			reportRegime(b, c, b.N)
		})
	}
}

// One op: one item through the queue in upstream's shape: the producer admits
// and then wakes the slot's worker through a coalescing channel of one (as
// upstream's scheduler.enqueue marks a slot dirty), and the worker, when
// woken, drains everything queued. The consumer runs only when there is work,
// so the figure does not depend on a spinning consumer's luck.
func BenchmarkPipelineWoken(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			v := benchValue()
			wake := make(chan struct{}, 1)
			var taken, drains atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				out := make([]Control[*benchAction], 256)
				for range wake {
					for {
						n, err := q.DrainInto(out)
						if err != nil {
							b.Error(err)
							return
						}
						if n == 0 {
							break
						}
						drains.Add(1)
						taken.Add(int64(n))
					}
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for {
					err := q.Admit(ControlPropose, ProposalClassForeground, v)
					if err == nil {
						break
					}
					if !errors.Is(err, ErrProposalBackpressure) {
						b.Fatal(err)
					}
					backpressure.Add(1)
					runtime.Gosched()
				}
				select {
				case wake <- struct{}{}:
				default:
				}
			}
			for taken.Load() < int64(b.N) {
				select {
				case wake <- struct{}{}:
				default:
				}
				runtime.Gosched()
			}
			b.StopTimer()
			close(wake)
			<-done
			b.ReportMetric(float64(taken.Load())/float64(max(drains.Load(), 1)), "items/drain")
			b.ReportMetric(float64(backpressure.Swap(0))/float64(b.N), "full/item")
		})
	}
}

// One op: one item admitted with Admit by GOMAXPROCS producers at once
// (b.RunParallel) while a consumer drains.
func BenchmarkParallelProducers(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run(impl, func(b *testing.B) {
			q := newBenchQueue(b, impl)
			c := startConsumer(b, q)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				v := benchValue()
				for pb.Next() {
					admitOne(b, q, v)
				}
			})
			b.StopTimer()
			reportRegime(b, c, b.N)
		})
	}
}
