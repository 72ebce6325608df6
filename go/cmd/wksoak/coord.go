package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/coord"
)

const (
	coordWorkers   = 4
	coordRetention = 100
	roundTime      = 1000 // logical time per round
	anchors        = 64
	anchorPeriod   = 2 * roundTime
	counterIncs    = 64
	windowIncs     = 16
)

// ledgerTally is the host's count of one ledger's events, in the
// meaning of coord.Counts.
type ledgerTally struct {
	claimWon, claimLost, finWon, finDup, reconciled, rejectedFull, reclaimed atomic.Uint64
}

func (t *ledgerTally) counts() coord.Counts {
	return coord.Counts{ClaimsWon: t.claimWon.Load(), ClaimsLost: t.claimLost.Load(), FinalizationsWon: t.finWon.Load(),
		FinalizationsDuplicate: t.finDup.Load(), ReconciledTimeouts: t.reconciled.Load(),
		RejectedFull: t.rejectedFull.Load(), Reclaimed: t.reclaimed.Load()}
}

// coordSoak runs rounds of races with a barrier between phases, every
// round on a fresh logical time. Each phase's outcome is fixed by the
// contract whatever the interleaving: in the claim ledger one claim of each
// placed key wins, the reconciler times out exactly the keys whose deadline
// passed, one finalization of every other key wins and the losers learn
// the winner's outcome, a reclaim after the retention frees every record;
// in the pending ledger one insert per key wins, only the inserter's Take
// and Touch succeed, the orphan sweep and FinalizeOwn finalize exactly the
// records they name; in the hand-off ledger one claim per key wins; each
// anchor fires once per period (first seen in round 0, then every other
// round); one flip per round wins; the counter hands out every value once;
// one trigger per round starts, the others are told its run; the windowed
// counter counts every increment of the round's window.
type coordSoak struct {
	cfg      config
	chk      *checker
	claim    *coord.Ledger
	pending  *coord.Ledger
	handoff  *coord.HandoffLedger
	anchorT  *coord.AnchorTable
	flip     *coord.Flip
	counter  *coord.Counter
	trigger  *coord.ExclusiveTrigger
	window   *coord.WindowedCounter
	keys     [][]byte
	extraKey [][]byte

	tally [3]ledgerTally // claim, pending, handoff
	// takeRemoving counts losing Takes that saw the winner's removal in
	// progress (reported in the summary).
	takeRemoving atomic.Uint64
	rounds       atomic.Uint64
	opsN         atomic.Uint64

	// Per-round shared state (reset by the coordinator between rounds).
	winner  []atomic.Uint32
	outcome []atomic.Uint32
	fired   [anchors]atomic.Uint32
	firstSe [anchors]atomic.Uint32
	flipWon atomic.Uint32
	trigWon atomic.Uint32
	values  []atomic.Uint32
}

func newCoordSoak(cfg config, chk *checker) (*coordSoak, error) {
	c := &coordSoak{cfg: cfg, chk: chk}
	var err error
	if c.claim, err = coord.NewLedger(coord.LedgerConfig{Kind: coord.KindClaim, Capacity: cfg.keys, Retention: coordRetention}); err != nil {
		return nil, err
	}
	if c.pending, err = coord.NewLedger(coord.LedgerConfig{Kind: coord.KindPending, Capacity: cfg.keys, Retention: coordRetention}); err != nil {
		return nil, err
	}
	if c.handoff, err = coord.NewHandoffLedger(coord.HandoffConfig{Capacity: cfg.keys, Retention: coordRetention}); err != nil {
		return nil, err
	}
	if c.anchorT, err = coord.NewAnchorTable(anchors); err != nil {
		return nil, err
	}
	for id := uint64(1); id <= anchors; id++ {
		if err := c.anchorT.Insert(id, coord.TimeUnset); err != nil {
			return nil, err
		}
	}
	if c.flip, err = coord.NewFlip(0); err != nil {
		return nil, err
	}
	if c.counter, err = coord.NewCounter(0); err != nil {
		return nil, err
	}
	if c.trigger, err = coord.NewExclusiveTrigger(0); err != nil {
		return nil, err
	}
	if c.window, err = coord.NewWindowedCounter(); err != nil {
		return nil, err
	}
	for i := 0; i < cfg.keys; i++ {
		c.keys = append(c.keys, []byte("key-"+strconv.Itoa(i)))
	}
	c.extraKey = [][]byte{[]byte("key-extra")}
	c.winner = make([]atomic.Uint32, cfg.keys)
	c.outcome = make([]atomic.Uint32, cfg.keys)
	c.values = make([]atomic.Uint32, coordWorkers*counterIncs)
	return c, nil
}

func (c *coordSoak) name() string     { return "coord" }
func (c *coordSoak) populate()        {}
func (c *coordSoak) ops() uint64      { return c.opsN.Load() }
func (c *coordSoak) libBytes() uint64 { return 0 }

var ledgerNames = [3]string{"claim", "pending", "handoff"}

func (c *coordSoak) relations() []relation {
	var out []relation
	for i := range c.tally {
		t := c.tally[i].counts()
		l := ledgerNames[i]
		out = append(out,
			relation{famKey("wkcore_coord_claims_total", "ledger", l, "result", "won"), t.ClaimsWon},
			relation{famKey("wkcore_coord_claims_total", "ledger", l, "result", "lost"), t.ClaimsLost},
			relation{famKey("wkcore_coord_finalizations_total", "ledger", l, "result", "won"), t.FinalizationsWon},
			relation{famKey("wkcore_coord_finalizations_total", "ledger", l, "result", "duplicate"), t.FinalizationsDuplicate},
			relation{famKey("wkcore_coord_reconciled_timeouts_total", "ledger", l), t.ReconciledTimeouts},
			relation{famKey("wkcore_coord_rejected_total", "ledger", l, "reason", "full"), t.RejectedFull},
			relation{famKey("wkcore_coord_reclaimed_total", "ledger", l), t.Reclaimed},
		)
	}
	return out
}

// parallel runs f on every worker and waits: a phase of a round.
func parallel(f func(g int)) {
	var wg sync.WaitGroup
	for g := 0; g < coordWorkers; g++ {
		wg.Add(1)
		go func(g int) { defer wg.Done(); f(g) }(g)
	}
	wg.Wait()
}

func (c *coordSoak) run(ctx context.Context) {
	for r := uint64(0); ctx.Err() == nil; r++ {
		c.round(r)
		c.rounds.Add(1)
	}
}

// order returns worker g's key order: all keys, from its own offset.
func (c *coordSoak) order(g, i int) int { return (i + g*len(c.keys)/coordWorkers) % len(c.keys) }

func (c *coordSoak) reset() {
	for i := range c.winner {
		c.winner[i].Store(0)
		c.outcome[i].Store(0)
	}
}

func (c *coordSoak) round(r uint64) {
	t := r * roundTime
	c.claimRound(r, t)
	c.pendingRound(r, t)
	c.handoffRound(r, t)
	c.wordsRound(r, t)
}

func (c *coordSoak) decision(what string, d coord.Decision, err error) bool {
	c.opsN.Add(1)
	if err != nil {
		c.chk.failf("coord: %s: %v", what, err)
		return false
	}
	return true
}

// timed reports whether key i's deadline passes in its round (one in 8).
func timed(i int) bool { return i%8 == 0 }

func (c *coordSoak) claimRound(r, t uint64) {
	c.reset()
	l, tl := c.claim, &c.tally[0]
	n := len(c.keys)
	var timedKeys, other [][]byte
	for i, k := range c.keys {
		if timed(i) {
			timedKeys = append(timedKeys, k)
		} else {
			other = append(other, k)
		}
	}
	placeholder := r + 1
	for _, batch := range []struct {
		keys     [][]byte
		deadline uint64
	}{{timedKeys, t + 10}, {other, coord.DeadlineNever}} {
		out := make([]coord.Decision, len(batch.keys))
		placed, err := l.Place(batch.keys, placeholder, batch.deadline, t, out)
		c.opsN.Add(1)
		if err != nil || placed != len(batch.keys) {
			c.chk.failf("coord: claim round %d: Place placed %d of %d: %v", r, placed, len(batch.keys), err)
			return
		}
	}
	// The ledger is full: one more key is refused, and counted.
	out := make([]coord.Decision, 1)
	if placed, err := l.Place(c.extraKey, placeholder, coord.DeadlineNever, t, out); err != nil || placed != 0 || out[0].Result != coord.ResultFull {
		c.chk.failf("coord: claim round %d: Place into a full ledger: %d, %v, %v", r, placed, out[0], err)
	}
	tl.rejectedFull.Add(1)
	c.opsN.Add(1)

	parallel(func(g int) {
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			d, err := l.Claim(c.keys[i], placeholder, r*coordWorkers+uint64(g)+1, uint64(g)+1, t+1)
			if !c.decision("Claim", d, err) {
				return
			}
			switch d.Result {
			case coord.ResultWon:
				tl.claimWon.Add(1)
				if !c.winner[i].CompareAndSwap(0, uint32(g)+1) {
					c.chk.failf("coord: claim round %d key %d: two claims won (workers %d and %d)", r, i, c.winner[i].Load()-1, g)
				}
			case coord.ResultLost:
				tl.claimLost.Add(1)
			default:
				tl.claimLost.Add(1)
				c.chk.failf("coord: claim round %d key %d: Claim decided %v", r, i, d)
			}
		}
	})
	for i := range c.winner {
		if c.winner[i].Load() == 0 {
			c.chk.failf("coord: claim round %d key %d: no claim won", r, i)
		}
	}
	c.chk.pass(groupInvariant, uint64(n))

	c.reconcile("claim", r, func(lim int) (coord.Page, error) { return l.Reconcile(t+20, lim) }, n/8, tl)

	parallel(func(g int) {
		mine := coord.HostOutcomeMin + coord.Outcome(g)
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			d, err := l.Finalize(c.keys[i], mine, uint64(g), t+30)
			if !c.decision("Finalize", d, err) {
				return
			}
			switch d.Result {
			case coord.ResultWon:
				tl.finWon.Add(1)
				if timed(i) {
					c.chk.failf("coord: claim round %d key %d: a timed-out record finalized again", r, i)
				}
				if !c.outcome[i].CompareAndSwap(0, uint32(mine)) {
					c.chk.failf("coord: claim round %d key %d: two finalizations won", r, i)
				}
			case coord.ResultDuplicate:
				tl.finDup.Add(1)
				if timed(i) && d.Outcome != coord.OutcomeTimedOut {
					c.chk.failf("coord: claim round %d key %d: a duplicate learned %v, the reconciler timed it out", r, i, d.Outcome)
				}
				if !timed(i) && d.Outcome < coord.HostOutcomeMin {
					c.chk.failf("coord: claim round %d key %d: a duplicate learned %v", r, i, d.Outcome)
				}
			default:
				c.chk.failf("coord: claim round %d key %d: Finalize decided %v", r, i, d)
			}
		}
	})
	for i := range c.keys {
		rec, ok, err := l.Get(c.keys[i])
		c.opsN.Add(1)
		want := coord.OutcomeTimedOut
		if !timed(i) {
			want = coord.Outcome(c.outcome[i].Load())
		}
		if err != nil || !ok || rec.State != coord.StateFinalized || rec.Outcome != want ||
			rec.Duplicates != coordWorkers-1+boolU64(timed(i)) {
			c.chk.failf("coord: claim round %d key %d: record %+v (%v, %v), want finalized %v with %d duplicates", r, i, rec, ok, err,
				want, coordWorkers-1+boolU64(timed(i)))
		}
	}
	c.chk.pass(groupInvariant, uint64(n))
	c.reclaim("claim", r, func(lim int) (coord.Page, error) { return l.Reclaim(t+30+coordRetention+1, lim) }, n, tl)
	if k, err := l.Len(); err != nil || k != 0 {
		c.chk.failf("coord: claim round %d: %d records left after the reclaim (%v)", r, k, err)
	}
}

func boolU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// reconcile runs one pass of the reconciler and checks it timed out want.
func (c *coordSoak) reconcile(ledger string, r uint64, f func(int) (coord.Page, error), want int, tl *ledgerTally) {
	p, err := f(len(c.keys))
	c.opsN.Add(1)
	if err != nil {
		c.chk.failf("coord: %s round %d: Reconcile: %v", ledger, r, err)
		return
	}
	tl.reconciled.Add(uint64(p.Changed))
	if p.Changed != want || p.Scanned != len(c.keys) {
		c.chk.failf("coord: %s round %d: Reconcile timed out %d (scanned %d), want %d", ledger, r, p.Changed, p.Scanned, want)
	}
	c.chk.pass(groupInvariant, 1)
}

func (c *coordSoak) reclaim(ledger string, r uint64, f func(int) (coord.Page, error), want int, tl *ledgerTally) {
	p, err := f(len(c.keys))
	c.opsN.Add(1)
	if err != nil {
		c.chk.failf("coord: %s round %d: Reclaim: %v", ledger, r, err)
		return
	}
	tl.reclaimed.Add(uint64(p.Changed))
	if p.Changed != want {
		c.chk.failf("coord: %s round %d: Reclaim freed %d, want %d", ledger, r, p.Changed, want)
	}
	c.chk.pass(groupInvariant, 1)
}

// The pending ledger's keys: i%4 == 0 are taken, 1 touched (then finalized
// by FinalizeOwn), 2 and 3 left quiet (the orphan sweep finalizes them).
func (c *coordSoak) pendingRound(r, t uint64) {
	c.reset()
	l, tl := c.pending, &c.tally[1]
	n := len(c.keys)
	idOf := func(g int) uint64 { return r*coordWorkers + uint64(g) + 1 }
	parallel(func(g int) {
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			d, err := l.Insert(c.keys[i], idOf(g), uint64(g)+1, coord.DeadlineNever, t)
			if !c.decision("Insert", d, err) {
				return
			}
			switch d.Result {
			case coord.ResultWon:
				if !c.winner[i].CompareAndSwap(0, uint32(g)+1) {
					c.chk.failf("coord: pending round %d key %d: two inserts won", r, i)
				}
			case coord.ResultLost:
			default:
				c.chk.failf("coord: pending round %d key %d: Insert decided %v", r, i, d)
			}
		}
	})
	parallel(func(g int) {
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			mine := c.winner[i].Load() == uint32(g)+1
			switch i % 4 {
			case 0:
				d, err := l.Take(c.keys[i], idOf(g))
				if !c.decision("Take", d, err) {
					return
				}
				if (d.Result == coord.ResultWon) != mine {
					c.chk.failf("coord: pending round %d key %d: Take by worker %d decided %v (inserter %d)", r, i, g, d, c.winner[i].Load()-1)
				}
				if d.Result == coord.ResultWon {
					tl.finWon.Add(1)
					tl.reclaimed.Add(1)
				} else if d.Result == coord.ResultDuplicate && d.Outcome == coord.OutcomeSucceeded {
					// The cgo build: a Take that races the winning Take's
					// removal sees the record terminal (removing, outcome
					// succeeded); it changes nothing and counts nothing.
					c.takeRemoving.Add(1)
				} else if d.Result != coord.ResultMismatch && d.Result != coord.ResultNotFound {
					c.chk.failf("coord: pending round %d key %d: a losing Take decided %v", r, i, d)
				}
			case 1:
				d, err := l.Touch(c.keys[i], uint64(g)+1, t+5)
				if !c.decision("Touch", d, err) {
					return
				}
				if (d.Result == coord.ResultWon) != mine || (!mine && d.Result != coord.ResultMismatch) {
					c.chk.failf("coord: pending round %d key %d: Touch by worker %d decided %v (inserter %d)", r, i, g, d, c.winner[i].Load()-1)
				}
			}
		}
	})
	c.chk.pass(groupInvariant, uint64(n))
	// The orphan sweep at t+8 with quiet 5 finds the untouched records
	// (refreshed at t) and not the touched ones (t+5).
	p, err := l.SweepOrphans(t+8, 5, n)
	c.opsN.Add(1)
	if err != nil || p.Changed != n/2 {
		c.chk.failf("coord: pending round %d: SweepOrphans finalized %d, want %d (%v)", r, p.Changed, n/2, err)
	}
	tl.finWon.Add(uint64(p.Changed))
	var touched [coordWorkers]int
	for i := 1; i < n; i += 4 {
		touched[c.winner[i].Load()-1]++
	}
	for g := 0; g < coordWorkers; g++ {
		p, err := l.FinalizeOwn(uint64(g)+1, coord.OutcomeFailed, t+10, n)
		c.opsN.Add(1)
		if err != nil || p.Changed != touched[g] {
			c.chk.failf("coord: pending round %d: FinalizeOwn(runner %d) finalized %d, want %d (%v)", r, g+1, p.Changed, touched[g], err)
		}
		tl.finWon.Add(uint64(p.Changed))
	}
	parallel(func(g int) {
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			d, err := l.Finalize(c.keys[i], coord.OutcomeSucceeded, 0, t+20)
			if !c.decision("Finalize", d, err) {
				return
			}
			want := coord.OutcomeOrphaned
			switch i % 4 {
			case 0:
				if d.Result != coord.ResultNotFound {
					c.chk.failf("coord: pending round %d key %d: Finalize of a taken record decided %v", r, i, d)
				}
				continue
			case 1:
				want = coord.OutcomeFailed
			}
			if d.Result != coord.ResultDuplicate || d.Outcome != want {
				c.chk.failf("coord: pending round %d key %d: Finalize decided %v, want a duplicate of %v", r, i, d, want)
			}
			tl.finDup.Add(1)
		}
	})
	c.chk.pass(groupInvariant, uint64(n))
	c.reclaim("pending", r, func(lim int) (coord.Page, error) { return l.Reclaim(t+20+coordRetention+1, lim) }, 3*n/4, tl)
	if k, err := l.Len(); err != nil || k != 0 {
		c.chk.failf("coord: pending round %d: %d records left after the reclaim (%v)", r, k, err)
	}
}

func (c *coordSoak) handoffRound(r, t uint64) {
	c.reset()
	l, tl := c.handoff, &c.tally[2]
	n := len(c.keys)
	key := func(i int) coord.HandoffKey {
		return coord.HandoffKey{ChannelID: "ch" + strconv.Itoa(i%64), ChannelType: 1, MessageID: r*uint64(n) + uint64(i),
			TargetNodeID: 2, TagKey: "tag", TagVersion: 1}
	}
	parallel(func(g int) {
		var timedIdx, otherIdx []int
		for j := 0; j < n; j++ {
			if i := c.order(g, j); timed(i) {
				timedIdx = append(timedIdx, i)
			} else {
				otherIdx = append(otherIdx, i)
			}
		}
		for _, b := range []struct {
			idx      []int
			deadline uint64
		}{{timedIdx, t + 10}, {otherIdx, coord.DeadlineNever}} {
			keys := make([]coord.HandoffKey, len(b.idx))
			for j, i := range b.idx {
				keys[j] = key(i)
			}
			out := make([]coord.Decision, len(keys))
			won, err := l.ClaimBatch(keys, b.deadline, t, out)
			c.opsN.Add(1)
			if err != nil {
				c.chk.failf("coord: handoff round %d: ClaimBatch: %v", r, err)
				return
			}
			count := 0
			for j, d := range out {
				i := b.idx[j]
				switch d.Result {
				case coord.ResultWon:
					count++
					tl.claimWon.Add(1)
					if !c.winner[i].CompareAndSwap(0, uint32(g)+1) {
						c.chk.failf("coord: handoff round %d key %d: two claims won", r, i)
					}
				case coord.ResultLost:
					tl.claimLost.Add(1)
				default:
					tl.claimLost.Add(1)
					c.chk.failf("coord: handoff round %d key %d: a claim decided %v", r, i, d)
				}
			}
			if count != won {
				c.chk.failf("coord: handoff round %d: ClaimBatch said %d won, its decisions %d", r, won, count)
			}
		}
	})
	for i := range c.winner {
		if c.winner[i].Load() == 0 {
			c.chk.failf("coord: handoff round %d key %d: no claim won", r, i)
		}
	}
	c.chk.pass(groupInvariant, uint64(n))
	c.reconcile("handoff", r, func(lim int) (coord.Page, error) { return l.Reconcile(t+20, lim) }, n/8, tl)
	parallel(func(g int) {
		for j := 0; j < n; j++ {
			i := c.order(g, j)
			d, err := l.Complete(key(i), coord.OutcomeSucceeded, t+30)
			if !c.decision("Complete", d, err) {
				return
			}
			switch d.Result {
			case coord.ResultWon:
				tl.finWon.Add(1)
				if timed(i) || !c.outcome[i].CompareAndSwap(0, 1) {
					c.chk.failf("coord: handoff round %d key %d: a second completion won", r, i)
				}
			case coord.ResultDuplicate:
				tl.finDup.Add(1)
				if want := map[bool]coord.Outcome{true: coord.OutcomeTimedOut, false: coord.OutcomeSucceeded}[timed(i)]; d.Outcome != want {
					c.chk.failf("coord: handoff round %d key %d: a duplicate completion learned %v, want %v", r, i, d.Outcome, want)
				}
			default:
				c.chk.failf("coord: handoff round %d key %d: Complete decided %v", r, i, d)
			}
		}
	})
	for i := range c.keys {
		if !timed(i) && c.outcome[i].Load() == 0 {
			c.chk.failf("coord: handoff round %d key %d: no completion won", r, i)
		}
	}
	c.chk.pass(groupInvariant, uint64(n))
	c.reclaim("handoff", r, func(lim int) (coord.Page, error) { return l.Reclaim(t+30+coordRetention+1, lim) }, n, tl)
	if k, err := l.Len(); err != nil || k != 0 {
		c.chk.failf("coord: handoff round %d: %d hand-offs left after the reclaim (%v)", r, k, err)
	}
}

// wordsRound races the anchors, the flip, the counter, the trigger and the
// windowed counter.
func (c *coordSoak) wordsRound(r, t uint64) {
	for i := range c.fired {
		c.fired[i].Store(0)
		c.firstSe[i].Store(0)
	}
	c.flipWon.Store(0)
	c.trigWon.Store(0)
	for i := range c.values {
		c.values[i].Store(0)
	}
	base, err := c.counter.Get()
	if err != nil {
		c.chk.failf("coord: Counter.Get: %v", err)
		return
	}
	run := r + 1
	parallel(func(g int) {
		for id := uint64(1); id <= anchors; id++ {
			f, err := c.anchorT.TryFire(id, t, anchorPeriod)
			c.opsN.Add(1)
			if err != nil {
				c.chk.failf("coord: TryFire: %v", err)
				return
			}
			switch f.Kind {
			case coord.FireFired:
				c.fired[id-1].Add(1)
			case coord.FireAnchoredFirstSeen:
				c.firstSe[id-1].Add(1)
			case coord.FireNotDue, coord.FireLost:
			default:
				c.chk.failf("coord: TryFire decided %v", f.Kind)
			}
		}
		if ok, err := c.flip.Flip(r, r+1); err != nil {
			c.chk.failf("coord: Flip: %v", err)
		} else if ok && !c.flipWon.CompareAndSwap(0, 1) {
			c.chk.failf("coord: round %d: two flips won", r)
		}
		for k := 0; k < counterIncs; k++ {
			v, err := c.counter.Increment()
			if err != nil {
				c.chk.failf("coord: Counter.Increment: %v", err)
				return
			}
			off := v - base - 1
			if off >= uint64(len(c.values)) || c.values[off].Add(1) != 1 {
				c.chk.failf("coord: round %d: the counter handed out %d twice or out of range (base %d)", r, v, base)
			}
		}
		got, err := c.trigger.Trigger()
		var busy coord.BusyError
		switch {
		case err == nil:
			if got != run || !c.trigWon.CompareAndSwap(0, 1) {
				c.chk.failf("coord: round %d: trigger started run %d (want %d, one winner)", r, got, run)
			}
		case errors.As(err, &busy):
			if busy.Run != run {
				c.chk.failf("coord: round %d: a busy trigger named run %d, the active one is %d", r, busy.Run, run)
			}
		default:
			c.chk.failf("coord: Trigger: %v", err)
		}
		for k := 0; k < windowIncs; k++ {
			if _, err := c.window.Increment(t, roundTime/2); err != nil {
				c.chk.failf("coord: WindowedCounter.Increment: %v", err)
				return
			}
		}
		c.opsN.Add(counterIncs + windowIncs + 2)
	})
	for id := 0; id < anchors; id++ {
		wantFired, wantFirst := uint32(0), uint32(0)
		switch {
		case r == 0:
			wantFirst = 1
		case r%2 == 0:
			wantFired = 1
		}
		if c.fired[id].Load() != wantFired || c.firstSe[id].Load() != wantFirst {
			c.chk.failf("coord: round %d anchor %d: fired %d, anchored first-seen %d; want %d and %d", r, id+1,
				c.fired[id].Load(), c.firstSe[id].Load(), wantFired, wantFirst)
		}
	}
	if c.flipWon.Load() != 1 || c.trigWon.Load() != 1 {
		c.chk.failf("coord: round %d: %d flips and %d triggers won, want one each", r, c.flipWon.Load(), c.trigWon.Load())
	}
	if v, err := c.counter.Get(); err != nil || v != base+uint64(len(c.values)) {
		c.chk.failf("coord: round %d: the counter is at %d, want %d (%v)", r, v, base+uint64(len(c.values)), err)
	}
	if ok, err := c.trigger.Finish(run); err != nil || !ok {
		c.chk.failf("coord: round %d: Finish of the active run: %v, %v", r, ok, err)
	}
	if ok, err := c.trigger.Finish(run); err != nil || ok {
		c.chk.failf("coord: round %d: a second Finish: %v, %v", r, ok, err)
	}
	if n, err := c.window.Count(t); err != nil || n != coordWorkers*windowIncs {
		c.chk.failf("coord: round %d: the window counted %d, want %d (%v)", r, n, coordWorkers*windowIncs, err)
	}
	if n, err := c.window.Count(t + roundTime/2 + 1); err != nil || n != 0 {
		c.chk.failf("coord: round %d: the window after its end counted %d (%v)", r, n, err)
	}
	c.chk.pass(groupInvariant, anchors+6)
	c.opsN.Add(6)
}

// notes are the summary's lines about the run's rounds.
func (c *coordSoak) notes() []string {
	return []string{fmt.Sprintf("%d rounds; %d losing Takes saw the winning Take's removal in progress (duplicate/succeeded)",
		c.rounds.Load(), c.takeRemoving.Load())}
}

func (c *coordSoak) final(fams famSample) {
	for i, h := range []interface{ Counts() (coord.Counts, error) }{c.claim, c.pending, c.handoff} {
		got, err := h.Counts()
		if err != nil {
			c.chk.failf("coord: Counts: %v", err)
			continue
		}
		want := c.tally[i].counts()
		l := ledgerNames[i]
		c.chk.eq("coord: "+l+": Counts.ClaimsWon", got.ClaimsWon, want.ClaimsWon)
		c.chk.eq("coord: "+l+": Counts.ClaimsLost", got.ClaimsLost, want.ClaimsLost)
		c.chk.eq("coord: "+l+": Counts.FinalizationsWon", got.FinalizationsWon, want.FinalizationsWon)
		c.chk.eq("coord: "+l+": Counts.FinalizationsDuplicate", got.FinalizationsDuplicate, want.FinalizationsDuplicate)
		c.chk.eq("coord: "+l+": Counts.ReconciledTimeouts", got.ReconciledTimeouts, want.ReconciledTimeouts)
		c.chk.eq("coord: "+l+": Counts.RejectedFull", got.RejectedFull, want.RejectedFull)
		c.chk.eq("coord: "+l+": Counts.Reclaimed", got.Reclaimed, want.Reclaimed)
	}
	rounds := c.rounds.Load()
	if v, err := c.flip.Get(); err != nil || v != rounds {
		c.chk.failf("coord: the flip is at %d after %d rounds (%v)", v, rounds, err)
	}
	if v, err := c.trigger.LastRun(); err != nil || v != rounds {
		c.chk.failf("coord: the trigger's last run is %d after %d rounds (%v)", v, rounds, err)
	}
	if v, err := c.counter.Get(); err != nil || v != rounds*coordWorkers*counterIncs {
		c.chk.failf("coord: the counter is at %d after %d rounds (%v)", v, rounds, err)
	}
	c.chk.pass(groupTally, 3)
}
