package wkcore

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wukongim/wkcore/go/internal/baseline"
)

// Enqueue benchmarks: one op is one admitted foreground proposal on a slot
// with the default limits (8192/4096), while one consumer goroutine drains.
// A producer that meets backpressure yields and retries, so b.N items are
// admitted in the end. The baseline is the pure-Go mutex implementation of
// the upstream algorithm in internal/baseline.

const benchBatch = 64

// queue is what the benchmark drives: wkcore or the baseline.
type queue interface {
	admit(token uint64) bool        // false on backpressure
	admitBatch(tokens []uint64) int // how many leading tokens were admitted
	drain() int                     // takes what is queued; 0 when empty
}

type wkQueue struct {
	s   *Slot
	out []Item
}

func (q *wkQueue) admit(token uint64) bool {
	err := q.s.Admit(ControlPropose, ProposalClassForeground, token)
	if err != nil && !errors.Is(err, ErrProposalBackpressure) {
		panic(err)
	}
	return err == nil
}

func (q *wkQueue) admitBatch(tokens []uint64) int {
	n, err := q.s.AdmitBatch(ControlPropose, ProposalClassForeground, tokens)
	if err != nil && !errors.Is(err, ErrProposalBackpressure) {
		panic(err)
	}
	return n
}

func (q *wkQueue) drain() int {
	n, err := q.s.Drain(q.out)
	if err != nil {
		panic(err)
	}
	return n
}

type baseQueue struct {
	s    *baseline.Slot
	sink uint64
}

func (q *baseQueue) admit(token uint64) bool {
	err := q.s.EnqueueControl(baseline.Action{Kind: baseline.ControlPropose, Class: baseline.ProposalClassForeground, Token: token})
	if err != nil && !errors.Is(err, baseline.ErrProposalBackpressure) {
		panic(err)
	}
	return err == nil
}

func (q *baseQueue) admitBatch(tokens []uint64) int {
	n, err := q.s.EnqueueControlBatch(baseline.ControlPropose, baseline.ProposalClassForeground, tokens)
	if err != nil && !errors.Is(err, baseline.ErrProposalBackpressure) {
		panic(err)
	}
	return n
}

func (q *baseQueue) drain() int {
	batch := q.s.TakeControlBatch()
	for i := range batch {
		q.sink += batch[i].Token
	}
	n := len(batch)
	q.s.ReleaseControlBatch(batch)
	return n
}

// benchCounters gives the baseline an observer as cheap as wkcore's
// counters: one atomic add per decision, after the lock is released.
type benchCounters struct{ n [2][4]atomic.Uint64 }

func (c *benchCounters) observe(_ uint64, class baseline.ProposalClass, result string) {
	ci, ri := 0, 0
	if class == baseline.ProposalClassBackground {
		ci = 1
	}
	switch result {
	case baseline.ResultBusy:
		ri = 1
	case baseline.ResultThrottled:
		ri = 2
	case baseline.ResultNotLeader:
		ri = 3
	}
	c.n[ci][ri].Add(1)
}

func newBenchQueue(b *testing.B, impl string) queue {
	switch impl {
	case "wkcore":
		s, err := NewSlot(nextSlotID.Add(1), DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		if err := s.SetLeader(); err != nil {
			b.Fatal(err)
		}
		return &wkQueue{s: s, out: make([]Item, 1024)}
	case "baseline":
		s := baseline.New(8192, 4096)
		s.SetLeader()
		s.Observer = new(benchCounters).observe
		return &baseQueue{s: s}
	}
	panic(impl)
}

// startConsumer drains q until stop is called, yielding when it is empty.
func startConsumer(q queue) (stop func()) {
	var (
		done atomic.Bool
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if q.drain() == 0 {
				runtime.Gosched()
			}
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}

// admitAll admits every token, yielding on backpressure.
func admitAll(q queue, tokens []uint64) {
	for len(tokens) > 0 {
		n := q.admitBatch(tokens)
		tokens = tokens[n:]
		if n == 0 {
			runtime.Gosched()
		}
	}
}

func admitOne(q queue, token uint64) {
	for !q.admit(token) {
		runtime.Gosched()
	}
}

var benchImpls = []struct {
	name, impl string
	batch      bool
}{
	{"wkcore", "wkcore", false},
	{"wkcore_batch64", "wkcore", true},
	{"baseline", "baseline", false},
	{"baseline_batch64", "baseline", true},
}

func BenchmarkEnqueue(b *testing.B) {
	for _, bi := range benchImpls {
		b.Run(bi.name, func(b *testing.B) {
			q := newBenchQueue(b, bi.impl)
			stop := startConsumer(q)
			defer stop()
			tokens := make([]uint64, benchBatch)
			b.ReportAllocs()
			b.ResetTimer()
			if !bi.batch {
				for i := 0; i < b.N; i++ {
					admitOne(q, uint64(i))
				}
				return
			}
			for i := 0; i < b.N; i += benchBatch {
				n := min(benchBatch, b.N-i)
				for j := range tokens[:n] {
					tokens[j] = uint64(i + j)
				}
				admitAll(q, tokens[:n])
			}
		})
	}
}

func BenchmarkEnqueueParallel(b *testing.B) {
	for _, bi := range benchImpls {
		b.Run(bi.name, func(b *testing.B) {
			q := newBenchQueue(b, bi.impl)
			stop := startConsumer(q)
			defer stop()
			var next atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				base := next.Add(1) << 40
				if !bi.batch {
					for i := uint64(0); pb.Next(); i++ {
						admitOne(q, base|i)
					}
					return
				}
				tokens := make([]uint64, 0, benchBatch)
				for i := uint64(0); pb.Next(); i++ {
					tokens = append(tokens, base|i)
					if len(tokens) == benchBatch {
						admitAll(q, tokens)
						tokens = tokens[:0]
					}
				}
				if len(tokens) > 0 {
					admitAll(q, tokens)
				}
			})
		})
	}
}
