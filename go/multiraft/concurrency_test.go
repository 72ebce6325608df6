package multiraft

// Many goroutines on one queue (run under -race): Close racing with every
// other call, and a bounded stress of producers, a consumer and a sampler
// checked against a mutex-based reference count.

import (
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// normalRefusal reports whether err is nil or a refusal a caller meets in
// normal operation on an open queue.
func normalRefusal(err error) bool {
	return err == nil || errors.Is(err, ErrProposalBackpressure) || err == ErrSlotBusy ||
		err == ErrConfigChangePending || err == ErrNotLeader
}

// tagged is a value of the concurrency tests: who admitted it, and its
// sequence number among that goroutine's admitted values.
type tagged struct {
	from, seq int
}

// Close concurrent with Admit, AdmitBatch, Drain, DrainInto, State,
// Counters, SetLeader, Demote and Resolve from many goroutines: every call
// returns nil, ErrHandleClosed or a normal refusal; exactly one Close
// returns nil; and every value admitted is handed exactly once, by a Drain
// or by the winning CloseAndDrain.
func TestCloseRacesWithCalls(t *testing.T) {
	rounds := 30
	if raceEnabled || debugBuild {
		rounds = 10
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		for round := 0; round < rounds; round++ {
			closeRace(t, impl, round)
		}
	})
}

func closeRace(t *testing.T, impl string, round int) {
	const (
		workers = 6
		closers = 3
	)
	q := newLeader[*tagged](t, impl, Limits{MaxQueuedControls: 64, MaxQueuedBackgroundControls: 16})
	var (
		mu       sync.Mutex
		admitted = map[*tagged]bool{}
		handed   = map[*tagged]int{}
		wins     atomic.Int32
		bad      = make(chan string, 64)
		start    = make(chan struct{})
		wg       sync.WaitGroup
	)
	report := func(format string, args ...any) {
		select {
		case bad <- fmt.Sprintf(format, args...):
		default:
		}
	}
	hand := func(c Control[*tagged]) {
		mu.Lock()
		handed[c.Value]++
		mu.Unlock()
		if c.Kind == ControlConfigChange {
			// Its admitter may have resolved it already.
			if err := c.ConfigChange.Resolve(); err != nil && err != ErrHandleClosed && err != ErrConfigChangeResolved {
				report("Resolve of a drained config change: %v", err)
			}
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(round*workers + w)))
			out := make([]Control[*tagged], 8)
			<-start
			for i := 0; ; i++ {
				var err error
				switch rng.Intn(9) {
				case 0, 1:
					v := &tagged{w, i}
					if err = q.Admit(ControlPropose, testClasses[rng.Intn(len(testClasses))], v); err == nil {
						mu.Lock()
						admitted[v] = true
						mu.Unlock()
					}
				case 2:
					vs := []*tagged{{w, i}, {w, i}, {w, i}}
					var n int
					n, err = q.AdmitBatch(ControlKind(1+rng.Intn(7)), ProposalClassBackground, vs)
					mu.Lock()
					for _, v := range vs[:n] {
						admitted[v] = true
					}
					mu.Unlock()
				case 3:
					v := &tagged{w, i}
					var cc ConfigChange
					if cc, err = q.AdmitConfigChange(v); err == nil {
						mu.Lock()
						admitted[v] = true
						mu.Unlock()
						if rng.Intn(2) == 0 {
							if e := cc.Resolve(); e != nil && e != ErrHandleClosed && e != ErrConfigChangeResolved {
								report("Resolve: %v", e)
							}
						}
					}
				case 4:
					_, err = q.Drain(1+rng.Intn(20), hand)
				case 5:
					var n int
					if n, err = q.DrainInto(out); err == nil {
						for _, c := range out[:n] {
							hand(c)
						}
					}
				case 6:
					var s SlotState
					if s, err = q.State(); err == nil && s.Queued > 64 {
						report("State %+v", s)
					}
				case 7:
					_, err = q.Counters()
				case 8:
					if rng.Intn(4) == 0 {
						err = q.Demote()
					} else {
						err = q.SetLeader()
					}
				}
				if errors.Is(err, ErrHandleClosed) {
					return
				}
				if !normalRefusal(err) {
					report("worker %d: %v", w, err)
				}
			}
		}(w)
	}
	for c := 0; c < closers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			time.Sleep(time.Duration(rand.Intn(300)) * time.Microsecond)
			err := q.CloseAndDrain(hand)
			switch err {
			case nil:
				wins.Add(1)
			case ErrHandleClosed:
			default:
				report("CloseAndDrain: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Errorf("round %d: %s", round, msg)
	}
	if n := wins.Load(); n != 1 {
		t.Fatalf("round %d: %d Closes returned nil, want 1", round, n)
	}
	for v := range admitted {
		if handed[v] != 1 {
			t.Fatalf("round %d: value %+v admitted, handed %d times", round, *v, handed[v])
		}
	}
	for v, n := range handed {
		if !admitted[v] {
			t.Fatalf("round %d: value %+v handed %d times, never admitted", round, *v, n)
		}
	}
	checkClosed(t, q)
}

// countingObserver counts observer calls by class and result.
type countingObserver struct{ n [2][4]atomic.Uint64 }

func (o *countingObserver) ObserveSlotProposalAdmission(_ SlotID, class ProposalClass, result string) {
	c, r := outcomeIndex(class, AdmissionResult(result))
	o.n[c][r].Add(1)
}

// reference is the test's own count of decisions: what the producers saw,
// under a mutex.
type reference struct {
	mu       sync.Mutex
	counters AdmissionCounters
	observed [2][4]uint64
}

// Four producers (single and batch admissions, both classes, config changes
// and other kinds), one consumer and one sampler of State and Counters, for
// a bounded number of operations each (never a time slice: the test asserts
// behaviour, not how much work fits in a moment). Every sample keeps the limits (Queued, QueuedBackground)
// and QueuedProposals <= Queued, and the counters never go down; at the end
// every value admitted was drained exactly once, in each producer's order,
// and the counters, the observer and the registry agree with the
// producers' own count.
func TestStress(t *testing.T) {
	rounds := 20000
	if testing.Short() || debugBuild || raceEnabled {
		rounds = 3000
	}
	forEachImpl(t, func(t *testing.T, impl string) { stress(t, impl, rounds) })
}

func stress(t *testing.T, impl string, rounds int) {
	const producers = 4
	limits := Limits{MaxQueuedControls: 96, MaxQueuedBackgroundControls: 24}
	obs := &countingObserver{}
	reg := newTestRegistry(t)
	q := newQueue[*tagged](t, impl, Options{Limits: limits, Observer: obs, Metrics: reg})
	must(t, q.SetLeader())
	var (
		ref       reference
		produced  atomic.Bool // the producers have stopped
		producing sync.WaitGroup
		others    sync.WaitGroup
		next      [producers]int // per producer: values admitted
		drained   [producers][]int
		samples   atomic.Int64
		errs      = make(chan error, 16)
	)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	start := make(chan struct{})
	for p := 0; p < producers; p++ {
		producing.Add(1)
		go func(p int) {
			defer producing.Done()
			rng := rand.New(rand.NewSource(int64(p)))
			var local reference
			count := func(class ProposalClass, err error, n int) {
				result := AdmissionOK
				switch {
				case errors.Is(err, ErrSlotBusy):
					result = AdmissionBusy
				case errors.Is(err, ErrBackgroundProposalThrottled):
					result = AdmissionThrottled
				case err != nil:
					fail(fmt.Errorf("producer %d: proposal refused with %v", p, err))
				}
				*counterField(&local.counters, class.Normalize(), result) += uint64(n)
				c, r := outcomeIndex(class, result)
				if err == nil {
					local.observed[c][r] += uint64(n)
				} else {
					local.observed[c][r]++
				}
			}
			seq := 0
			batch := make([]*tagged, 0, 16)
			<-start
			for round := 0; round < rounds; round++ {
				class := ProposalClassForeground
				if rng.Intn(3) == 0 {
					class = ProposalClassBackground
				}
				kind := ControlPropose
				switch rng.Intn(16) {
				case 0:
					kind = ControlTransferLeader
				case 1:
					kind = ControlCompactLog
				case 2:
					kind = ControlFreshStatus
				case 3:
					kind = ControlConfigChange
				}
				var (
					n   int
					err error
				)
				switch {
				case kind == ControlConfigChange && rng.Intn(2) == 0:
					_, err = q.AdmitConfigChange(&tagged{p, seq})
					if err == nil {
						n = 1
					}
				case rng.Intn(2) == 0:
					if err = q.Admit(kind, class, &tagged{p, seq}); err == nil {
						n = 1
					}
					if kind == ControlPropose {
						count(class, err, 1)
					}
				default:
					batch = batch[:0]
					for i := 0; i < 1+rng.Intn(16); i++ {
						batch = append(batch, &tagged{p, seq + i})
					}
					n, err = q.AdmitBatch(kind, class, batch)
					if kind == ControlPropose {
						count(class, nil, n)
						if err != nil {
							count(class, err, len(batch)-n)
						}
					}
				}
				if !normalRefusal(err) || err == ErrNotLeader {
					fail(fmt.Errorf("producer %d: %v %v", p, kind, err))
					return
				}
				seq += n
				if err != nil {
					runtime.Gosched()
				}
			}
			next[p] = seq
			ref.mu.Lock()
			defer ref.mu.Unlock()
			for c := range local.observed {
				for r := range local.observed[c] {
					ref.observed[c][r] += local.observed[c][r]
				}
			}
			ref.counters = addCounters(ref.counters, local.counters)
		}(p)
	}
	// The consumer drains until the producers are done and the queue is empty.
	others.Add(1)
	consumerDone := make(chan struct{})
	go func() {
		defer others.Done()
		defer close(consumerDone)
		rng := rand.New(rand.NewSource(99))
		out := make([]Control[*tagged], 32)
		take := func(c Control[*tagged]) {
			v := c.Value
			if c.Kind == ControlConfigChange {
				if err := c.ConfigChange.Resolve(); err != nil && err != ErrConfigChangeResolved {
					fail(fmt.Errorf("Resolve: %v", err))
				}
			}
			drained[v.from] = append(drained[v.from], v.seq)
		}
		<-start
		for {
			finished := produced.Load()
			var n int
			var err error
			if rng.Intn(2) == 0 {
				n, err = q.Drain(1+rng.Intn(64), take)
			} else {
				n, err = q.DrainInto(out[:1+rng.Intn(len(out))])
				for _, c := range out[:n] {
					take(c)
				}
			}
			if err != nil {
				fail(fmt.Errorf("consumer: %v", err))
				return
			}
			if n == 0 {
				if finished {
					if s, err := q.State(); err != nil || s.Queued == 0 {
						return
					}
				}
				runtime.Gosched()
			}
		}
	}()
	// The sampler checks the invariants on every sample.
	others.Add(1)
	go func() {
		defer others.Done()
		var last AdmissionCounters
		<-start
		for i := 0; ; i++ {
			// At least minSamples, however the goroutines were scheduled.
			select {
			case <-consumerDone:
				if i >= minSamples {
					return
				}
			default:
			}
			s, err := q.State()
			if err != nil {
				fail(fmt.Errorf("State: %v", err))
				return
			}
			if s.Queued > limits.MaxQueuedControls || s.QueuedBackground > limits.MaxQueuedBackgroundControls ||
				s.QueuedProposals > s.Queued || s.QueuedBackground > s.Queued || s.QueuedBackground < 0 || !s.Leader ||
				s.Closed || s.Failed {
				fail(fmt.Errorf("sample %d: state %+v", i, s))
				return
			}
			c, err := q.Counters()
			if err != nil {
				fail(fmt.Errorf("Counters: %v", err))
				return
			}
			if !countersAtLeast(c, last) {
				fail(fmt.Errorf("sample %d: counters went down: %+v after %+v", i, c, last))
				return
			}
			last = c
			samples.Add(1)
			if i%64 == 63 {
				runtime.GC() // the values queued must stay reachable
			}
			runtime.Gosched()
		}
	}()
	close(start)
	producing.Wait()
	produced.Store(true)
	others.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	total := 0
	for p := range drained {
		total += next[p]
		if len(drained[p]) != next[p] {
			t.Errorf("producer %d: %d admitted, %d drained", p, next[p], len(drained[p]))
		}
		for i, seq := range drained[p] {
			if seq != i {
				t.Errorf("producer %d: drained value %d is seq %d (FIFO broken or a value lost or doubled)", p, i, seq)
				break
			}
		}
	}
	got := mustCounters(t, q)
	if got != ref.counters {
		t.Errorf("counters %+v, reference %+v", got, ref.counters)
	}
	for c := range ref.observed {
		for r := range ref.observed[c] {
			if g := obs.n[c][r].Load(); g != ref.observed[c][r] {
				t.Errorf("observer %s/%s: %d calls, reference %d", familyClasses[c], familyResults[r], g, ref.observed[c][r])
			}
		}
	}
	if impl == Implementation {
		checkRegistry(t, reg, got)
	}
	t.Logf("%s: %d values admitted and drained, %d samples, counters %+v", impl, total, samples.Load(), got)
	if total == 0 || samples.Load() < minSamples {
		t.Errorf("only %d values and %d samples: the stress did not run", total, samples.Load())
	}
}

// minSamples is how many samples the stress sampler takes at the least.
const minSamples = 10

func addCounters(a, b AdmissionCounters) AdmissionCounters {
	for _, class := range scenarioClasses {
		for _, result := range scenarioResults {
			*counterField(&a, class, result) += b.Get(class, result)
		}
	}
	return a
}

func countersAtLeast(c, last AdmissionCounters) bool {
	for _, class := range scenarioClasses {
		for _, result := range scenarioResults {
			if c.Get(class, result) < last.Get(class, result) {
				return false
			}
		}
	}
	return true
}
