//go:build cgo && !wkcore_purego

package multiraft

// Differential tests: the Go inline path against the library's own path.
//
//   - TestDifferentialSequential runs one random command sequence on a queue
//     (the engine, inline on a hosted slot's words) and on a library slot
//     that admits through its own ring (wk_slot_admit and the rest), and
//     compares every outcome, every drained item, the snapshot and the
//     counters after every command; and the library's own snapshot and
//     counters of the hosted slot, read from the words the engine wrote.
//   - TestDifferentialConcurrent drives the hosted slot from both sides at
//     once: Go producers and a Go consumer inline, while the library's calls
//     (leader, demote, config change resolve, snapshot, counters) work on the
//     same words; every decision is tallied and checked against the library's
//     counters, and its snapshots against the limits while the threads run.

import (
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wukongim/wkcore/go/internal/slotabi"
	"github.com/wukongim/wkcore/go/internal/status"
)

// statusOf is the C status of a Go refusal (0 for nil).
func statusOf(err error) uint32 {
	if err == nil {
		return 0
	}
	var s *status.Error
	if errors.As(err, &s) {
		return uint32(s.Code())
	}
	return ^uint32(0)
}

func libState(s SlotState) slotabi.State {
	return slotabi.State{Queued: uint32(s.Queued), QueuedBackground: uint32(s.QueuedBackground),
		QueuedProposals: uint32(s.QueuedProposals), Leader: s.Leader, Closed: s.Closed,
		Fatal: s.Failed, ConfigChangePending: s.ConfigChangePending}
}

func TestDifferentialSequential(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { differentialSequential(t, seed, 4000) })
	}
}

func differentialSequential(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	limit, limitBg := 6+rng.Intn(20), 1+rng.Intn(6)
	q, err := NewControlQueue[uint64](1, Options{Limits: Limits{MaxQueuedControls: limit,
		MaxQueuedBackgroundControls: limitBg}, Metrics: benchRegistry(t)})
	must(t, err)
	defer q.Close()
	lib := slotabi.New(uint32(limit), uint32(limitBg))
	hosted := slotabi.Of(q.cSlot())
	var tickets []uint64
	var seq uint64
	kinds := []ControlKind{ControlPropose, ControlPropose, ControlPropose, ControlConfigChange,
		ControlTransferLeader, ControlCompactLog, ControlFreshStatus}
	for step := 0; step < steps; step++ {
		kind := kinds[rng.Intn(len(kinds))]
		class := ProposalClassForeground
		if rng.Intn(2) == 0 {
			class = ProposalClassBackground
		}
		what := ""
		switch r := rng.Intn(100); {
		case r < 40:
			what = fmt.Sprintf("admit %v %v", kind, class)
			seq++
			var goErr error
			var ticket uint64
			if kind == ControlConfigChange {
				var cc ConfigChange
				cc, goErr = q.AdmitConfigChange(seq)
				ticket = cc.ticket
			} else {
				goErr = q.Admit(kind, class, seq)
			}
			libClass := rawClassOf(class)
			if kind == ControlConfigChange {
				libClass = 0 // AdmitConfigChange is foreground
			}
			st, _, libTicket := lib.Admit(uint32(kind), libClass)
			if statusOf(goErr) != st || ticket != libTicket {
				t.Fatalf("step %d %s: go %v (ticket %d), library %d (ticket %d)", step, what, goErr, ticket, st, libTicket)
			}
			if ticket != 0 {
				tickets = append(tickets, ticket)
			}
		case r < 55:
			n := 1 + rng.Intn(8)
			what = fmt.Sprintf("batch %d %v %v", n, kind, class)
			vs := make([]uint64, n)
			got, goErr := q.AdmitBatch(kind, class, vs)
			st, refused, admitted, _ := lib.AdmitBatch(uint32(kind), uint32(rawClassOf(class)), n)
			if st != 0 || got != admitted || statusOf(goErr) != refused {
				t.Fatalf("step %d %s: go %d %v, library %d %d (status %d)", step, what, got, goErr, admitted, refused, st)
			}
		case r < 80:
			n := 1 + rng.Intn(10)
			what = fmt.Sprintf("drain %d", n)
			out := make([]Control[uint64], n)
			got, goErr := q.DrainInto(out)
			st, items := lib.Drain(n)
			if goErr != nil || st != 0 || got != len(items) {
				t.Fatalf("step %d %s: go %d %v, library %d (status %d)", step, what, got, goErr, len(items), st)
			}
			for i, it := range items {
				if uint8(out[i].Kind) != it.Kind || rawClassOf(out[i].Class) != uint32(it.Class) {
					t.Fatalf("step %d %s: item %d: go %v/%v, library %d/%d", step, what, i, out[i].Kind, out[i].Class, it.Kind, it.Class)
				}
			}
		case r < 88:
			what = "set leader"
			must(t, q.SetLeader())
			lib.SetLeader()
		case r < 94:
			what = "demote"
			must(t, q.Demote())
			lib.Demote()
		case r < 98 && len(tickets) > 0:
			tk := tickets[rng.Intn(len(tickets))]
			what = fmt.Sprintf("resolve %d", tk)
			goErr := ConfigChange{r: q.load(), ticket: tk}.Resolve()
			if st := lib.Resolve(tk); statusOf(goErr) != st {
				t.Fatalf("step %d %s: go %v, library %d", step, what, goErr, st)
			}
		case r == 98 && step > steps/2:
			what = "close slot"
			must(t, q.CloseSlot())
			lib.CloseSlot()
		case r == 99 && step > steps/2:
			what = "fail"
			if _, err := q.Fail(errSlotFailed); err != nil {
				t.Fatal(err)
			}
			lib.Fail(1)
		default:
			continue
		}
		s := mustState(t, q)
		if got, want, hostedLib := libState(s), lib.State(), hosted.State(); got != want || hostedLib != want {
			t.Fatalf("step %d %s: state go %+v, library %+v, library on the hosted words %+v", step, what, got, want, hostedLib)
		}
		c, err := q.Counters()
		must(t, err)
		if got, want, hostedLib := countsTable(c), lib.Counters(), hosted.Counters(); got != want || hostedLib != want {
			t.Fatalf("step %d %s: counters go %v, library %v, library on the hosted words %v", step, what, got, want, hostedLib)
		}
	}
}

func rawClassOf(c ProposalClass) uint32 {
	if c.background() {
		return 1
	}
	return 0
}

func TestDifferentialConcurrent(t *testing.T) {
	const limit, limitBg = 64, 16
	rounds := 30000
	if raceEnabled {
		rounds = 5000
	}
	q, err := NewControlQueue[uint64](1, Options{Limits: Limits{MaxQueuedControls: limit,
		MaxQueuedBackgroundControls: limitBg}, Metrics: benchRegistry(t)})
	must(t, err)
	defer q.Close()
	lib := slotabi.Of(q.cSlot())
	lib.SetLeader()
	var tally [2][4]atomic.Uint64
	var ccPending atomic.Pointer[ConfigChange]
	var failures atomic.Int32
	fail := func(format string, args ...any) {
		if failures.Add(1) == 1 {
			t.Errorf(format, args...)
		}
	}
	var producers, others sync.WaitGroup
	var stop atomic.Bool
	for p := 0; p < 2; p++ {
		producers.Add(1)
		go func(p int) {
			defer producers.Done()
			rng := rand.New(rand.NewSource(int64(p + 1)))
			for i := 0; i < rounds; i++ {
				class := ProposalClassForeground
				if rng.Intn(3) == 0 {
					class = ProposalClassBackground
				}
				if rng.Intn(16) == 0 {
					cc, err := q.AdmitConfigChange(uint64(p)<<32 | uint64(i))
					if err == nil {
						ccPending.Store(&cc)
					} else if err != errConfigChangePending && err != errNotLeader && err != errSlotBusy {
						fail("config change: %v", err)
					}
					continue
				}
				err := q.Admit(ControlPropose, class, uint64(p)<<32|uint64(i))
				result := AdmissionOK
				if err != nil {
					if result = refusalResult(err); result == "" {
						fail("admit: %v", err)
					}
				}
				c, r := outcomeIndex(class, result)
				tally[c][r].Add(1)
				if err != nil {
					// Let the consumer and the library's side move on.
					runtime.Gosched()
				}
			}
		}(p)
	}
	// The consumer: FIFO per producer.
	others.Add(1)
	go func() {
		defer others.Done()
		last := [2]int64{-1, -1}
		out := make([]Control[uint64], 8)
		for {
			n, err := q.DrainInto(out)
			if err != nil {
				fail("drain: %v", err)
				return
			}
			for _, c := range out[:n] {
				p, i := c.Value>>32, int64(c.Value&(1<<32-1))
				if i <= last[p] {
					fail("producer %d: %d after %d", p, i, last[p])
				}
				last[p] = i
			}
			if n == 0 {
				if stop.Load() {
					return
				}
				runtime.Gosched()
			}
		}
	}()
	// The library's side, on the same words: role flips, resolves, and
	// samples of its snapshot and counters checked while the others run.
	others.Add(1)
	go func() {
		defer others.Done()
		rng := rand.New(rand.NewSource(9))
		var prev [2][4]uint64
		for !stop.Load() {
			switch rng.Intn(8) {
			case 0:
				lib.Demote()
			case 1, 2:
				lib.SetLeader()
			case 3:
				if cc := ccPending.Swap(nil); cc != nil {
					lib.Resolve(cc.ticket)
				}
			}
			s := lib.State()
			if s.Queued > limit || s.QueuedBackground > limitBg || s.QueuedProposals > s.Queued {
				fail("library snapshot over the limits: %+v", s)
			}
			c := lib.Counters()
			for i := range c {
				for j := range c[i] {
					if c[i][j] < prev[i][j] {
						fail("library counter [%d][%d] went back: %d after %d", i, j, c[i][j], prev[i][j])
					}
				}
			}
			prev = c
			if g := mustState(t, q); g.Queued > limit || g.QueuedBackground > limitBg {
				fail("go snapshot over the limits: %+v", g)
			}
			runtime.Gosched()
		}
	}()
	producers.Wait()
	stop.Store(true)
	others.Wait()
	var rest []Control[uint64]
	for {
		out := make([]Control[uint64], 64)
		n, _ := q.DrainInto(out)
		if n == 0 {
			break
		}
		rest = append(rest, out[:n]...)
	}
	var want [2][4]uint64
	for i := range tally {
		for j := range tally[i] {
			want[i][j] = tally[i][j].Load()
		}
	}
	c, err := q.Counters()
	must(t, err)
	t.Logf("decisions [class][ok busy throttled not_leader]: %v; %d left queued at the end", want, len(rest))
	if got, lc := countsTable(c), lib.Counters(); got != want || lc != want {
		t.Fatalf("counters: go %v, library %v, tally %v", got, lc, want)
	}
	if s := mustState(t, q); libState(s) != lib.State() || s.Queued != 0 {
		t.Fatalf("state: go %+v, library %+v", s, lib.State())
	}
}
