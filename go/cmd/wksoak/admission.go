package main

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/multiraft"
)

// rng is a small deterministic generator (splitmix64): each worker has its
// own, seeded from -seed and the worker's index.
type rng uint64

func newRNG(seed uint64, worker int) rng {
	return rng(seed*0x9e3779b97f4a7c15 + uint64(worker)*0xbf58476d1ce4e5b9 + 1)
}

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// The admission soak: producers admit proposals (foreground and
// background) and config changes into several slots; one consumer takes
// them in batches, resolves the config changes, and flips each slot's
// leadership from time to time.
//
// A value is (producer, sequence, kind): a producer's sequence for a slot
// counts only its admitted values, so the values one producer admitted into
// one slot are exactly 0, 1, 2, … and the consumer, which sees one slot's
// FIFO, must take them in that order: each admitted value taken exactly once,
// none invented, none lost (the end checks the counts).
type admission struct {
	cfg config
	chk *checker
	qs  []*multiraft.ControlQueue[uint64]

	// Host tallies: proposals by class (0 foreground, 1 background) and
	// result, config changes by outcome.
	res       [2][4]atomic.Uint64 // ok, busy, throttled, not_leader
	ccOK      atomic.Uint64
	ccPending atomic.Uint64
	ccBusy    atomic.Uint64
	ccNotLead atomic.Uint64
	taken     atomic.Uint64
	resolved  atomic.Uint64
	flips     atomic.Uint64

	admitted [][]uint64 // [producer][slot]: admitted count, published when the producer stops
	expect   [][]uint64 // [slot][producer]: the consumer's next expected sequence
}

const (
	valKindFG = iota
	valKindBG
	valKindCC
)

var resultNames = [4]multiraft.AdmissionResult{multiraft.AdmissionOK, multiraft.AdmissionBusy,
	multiraft.AdmissionThrottled, multiraft.AdmissionNotLeader}
var classNames = [2]multiraft.ProposalClass{multiraft.ProposalClassForeground, multiraft.ProposalClassBackground}

func encodeValue(producer int, seq uint64, kind int) uint64 {
	return uint64(producer)<<48 | seq<<2 | uint64(kind)
}

func decodeValue(v uint64) (producer int, seq uint64, kind int) {
	return int(v >> 48), (v >> 2) & (1<<46 - 1), int(v & 3)
}

func newAdmission(cfg config, chk *checker) (*admission, error) {
	a := &admission{cfg: cfg, chk: chk}
	for i := 0; i < cfg.slots; i++ {
		q, err := multiraft.NewControlQueue[uint64](uint64(i+1), multiraft.Options{
			Limits: multiraft.Limits{MaxQueuedControls: 256, MaxQueuedBackgroundControls: 64}})
		if err != nil {
			return nil, err
		}
		if err := q.SetLeader(); err != nil {
			return nil, err
		}
		a.qs = append(a.qs, q)
		a.expect = append(a.expect, make([]uint64, cfg.producers))
	}
	a.admitted = make([][]uint64, cfg.producers)
	return a, nil
}

func (a *admission) name() string { return "admission" }
func (a *admission) populate()    {}

func (a *admission) ops() uint64 {
	var n uint64
	for c := range a.res {
		for r := range a.res[c] {
			n += a.res[c][r].Load()
		}
	}
	return n + a.ccOK.Load() + a.ccPending.Load() + a.ccBusy.Load() + a.ccNotLead.Load() + a.taken.Load()
}

func (a *admission) libBytes() uint64 {
	var n uint64
	for _, q := range a.qs {
		if st, err := q.State(); err == nil {
			n += uint64(st.MemoryBytes)
		}
	}
	return n
}

func (a *admission) relations() []relation {
	var out []relation
	for c := range a.res {
		for r := range a.res[c] {
			out = append(out, relation{
				series: famKey("wukongim_slot_proposal_admission_total", "class", string(classNames[c]), "result", string(resultNames[r])),
				host:   a.res[c][r].Load()})
		}
	}
	return out
}

func (a *admission) run(ctx context.Context) {
	var producers sync.WaitGroup
	done := make(chan struct{})
	for p := 0; p < a.cfg.producers; p++ {
		producers.Add(1)
		go func(p int) { defer producers.Done(); a.produce(ctx, p) }(p)
	}
	consumed := make(chan struct{})
	go func() { defer close(consumed); a.consume(done) }()
	producers.Wait()
	close(done)
	<-consumed
}

func (a *admission) produce(ctx context.Context, p int) {
	r := newRNG(a.cfg.seed, 100+p)
	next := make([]uint64, len(a.qs))
	var checks uint64
	for i := 0; ; i++ {
		if i&255 == 0 && ctx.Err() != nil {
			break
		}
		s := r.intn(len(a.qs))
		q := a.qs[s]
		x := r.intn(64)
		switch {
		case x == 0:
			_, err := q.AdmitConfigChange(encodeValue(p, next[s], valKindCC))
			switch {
			case err == nil:
				next[s]++
				a.ccOK.Add(1)
			case errors.Is(err, multiraft.ErrConfigChangePending):
				a.ccPending.Add(1)
			case errors.Is(err, multiraft.ErrNotLeader):
				a.ccNotLead.Add(1)
			case errors.Is(err, multiraft.ErrSlotBusy):
				a.ccBusy.Add(1)
			default:
				a.chk.failf("admission: slot %d: config change refused with %v", s, err)
			}
		default:
			c := 0
			kind := valKindFG
			if x < 16 {
				c, kind = 1, valKindBG
			}
			err := q.Admit(multiraft.ControlPropose, classNames[c], encodeValue(p, next[s], kind))
			switch {
			case err == nil:
				next[s]++
				a.res[c][0].Add(1)
			case errors.Is(err, multiraft.ErrNotLeader):
				a.res[c][3].Add(1)
			case errors.Is(err, multiraft.ErrBackgroundProposalThrottled):
				if c == 0 {
					a.chk.failf("admission: slot %d: a foreground proposal was throttled: %v", s, err)
				}
				if !errors.Is(err, multiraft.ErrProposalBackpressure) {
					a.chk.failf("admission: a throttled proposal does not match ErrProposalBackpressure: %v", err)
				}
				a.res[c][2].Add(1)
			case errors.Is(err, multiraft.ErrSlotBusy):
				if !errors.Is(err, multiraft.ErrProposalBackpressure) {
					a.chk.failf("admission: a busy proposal does not match ErrProposalBackpressure: %v", err)
				}
				a.res[c][1].Add(1)
			default:
				a.chk.failf("admission: slot %d: proposal refused with %v", s, err)
			}
			checks++
		}
		if i&63 == 0 {
			runtime.Gosched()
		}
	}
	a.chk.pass(groupInvariant, checks)
	a.admitted[p] = next
}

// consume takes from every slot in turn until done is closed and the queues
// are empty.
func (a *admission) consume(done <-chan struct{}) {
	buf := make([]multiraft.Control[uint64], 32)
	var checks uint64
	stopping := false
	demoted := -1
	for round := 0; ; round++ {
		if !stopping {
			select {
			case <-done:
				stopping = true
				if demoted >= 0 {
					a.leader(demoted, true)
					demoted = -1
				}
			default:
			}
		}
		// Every 512 rounds one slot becomes a follower for 64 rounds.
		if !stopping && round%512 == 0 {
			demoted = (round / 512) % len(a.qs)
			a.leader(demoted, false)
		} else if demoted >= 0 && round%512 == 64 {
			a.leader(demoted, true)
			demoted = -1
		}
		took := 0
		for s, q := range a.qs {
			n, err := q.DrainInto(buf)
			if err != nil {
				a.chk.failf("admission: slot %d: DrainInto: %v", s, err)
				return
			}
			took += n
			for _, c := range buf[:n] {
				p, seq, kind := decodeValue(c.Value)
				if p >= len(a.expect[s]) {
					a.chk.failf("admission: slot %d: took a value of no producer: %#x", s, c.Value)
					continue
				}
				if seq != a.expect[s][p] {
					a.chk.failf("admission: slot %d producer %d: took sequence %d, expected %d (a value lost, doubled or out of order)",
						s, p, seq, a.expect[s][p])
				}
				a.expect[s][p] = seq + 1
				wantKind, wantClass := multiraft.ControlPropose, multiraft.ProposalClassForeground
				switch kind {
				case valKindBG:
					wantClass = multiraft.ProposalClassBackground
				case valKindCC:
					wantKind = multiraft.ControlConfigChange
				}
				if c.Kind != wantKind || (kind != valKindCC && c.Class != wantClass) {
					a.chk.failf("admission: slot %d: value %#x taken as %v/%s, admitted as %v/%s", s, c.Value, c.Kind, c.Class, wantKind, wantClass)
				}
				if kind == valKindCC {
					if err := c.ConfigChange.Resolve(); err != nil {
						a.chk.failf("admission: slot %d: resolving a taken config change: %v", s, err)
					}
					if err := c.ConfigChange.Resolve(); !errors.Is(err, multiraft.ErrConfigChangeResolved) {
						a.chk.failf("admission: slot %d: a second Resolve returned %v, want ErrConfigChangeResolved", s, err)
					}
					a.resolved.Add(1)
					checks += 2
				}
				checks += 2
			}
			clear(buf[:n])
			a.taken.Add(uint64(n))
		}
		if stopping && took == 0 {
			break
		}
		if took == 0 {
			runtime.Gosched()
		}
	}
	a.chk.pass(groupInvariant, checks)
}

func (a *admission) leader(s int, lead bool) {
	var err error
	if lead {
		err = a.qs[s].SetLeader()
	} else {
		err = a.qs[s].Demote()
	}
	if err != nil {
		a.chk.failf("admission: slot %d: leadership flip: %v", s, err)
	}
	a.flips.Add(1)
}

func (a *admission) final(fams famSample) {
	var perQueue [2][4]uint64
	for s, q := range a.qs {
		for p := range a.admitted {
			var n uint64
			if a.admitted[p] != nil {
				n = a.admitted[p][s]
			}
			a.chk.eq("admission: slot "+itoa(s)+" producer "+itoa(p)+": values taken", a.expect[s][p], n)
		}
		st, err := q.State()
		if err != nil {
			a.chk.failf("admission: slot %d: State: %v", s, err)
			continue
		}
		if st.Queued != 0 || st.QueuedProposals != 0 || st.QueuedBackground != 0 || st.ConfigChangePending || !st.Leader {
			a.chk.failf("admission: slot %d: not quiescent at the end: %+v", s, st)
		} else {
			a.chk.pass(groupInvariant, 1)
		}
		c, err := q.Counters()
		if err != nil {
			a.chk.failf("admission: slot %d: Counters: %v", s, err)
			continue
		}
		for ci, class := range classNames {
			for ri, res := range resultNames {
				perQueue[ci][ri] += c.Get(class, res)
			}
		}
	}
	for ci, class := range classNames {
		for ri, res := range resultNames {
			a.chk.eq("admission: queues' Counters "+string(class)+"/"+string(res), perQueue[ci][ri], a.res[ci][ri].Load())
		}
	}
	a.chk.eq("admission: config changes resolved", a.resolved.Load(), a.ccOK.Load())
}
