package coord

// Many goroutines on one handle (run under -race): racing claims, a receipt
// racing the reconciler, two rotations with one token, a burst of hand-off
// retries, two replicas sharing an anchor table, slot reuse under churn, and
// Close racing every other call. Each checks that exactly one caller won
// and that the counters agree.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// rounds scales a stress test down under -race and -tags debug.
func rounds(n int) int {
	switch {
	case debugBuild: // a GC per C call: the pointer checks, not the stress
		return max(n/200, 2)
	case raceEnabled:
		return max(n/5, 2)
	}
	return n
}

// race runs f(g) on n goroutines released together and waits for them.
func race(n int, f func(g int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(g)
		}()
	}
	close(start)
	wg.Wait()
}

// N goroutines claim one placed record: exactly one wins, every other is
// told lost (the record claimed), and the record holds the winner's id and
// runner.
func TestClaimRaceHasOneWinner(t *testing.T) {
	const claimers = 8
	n := rounds(1000)
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindClaim, Capacity: 4, Retention: 0})
		out := make([]Decision, 1)
		for r := 0; r < n; r++ {
			key := []byte(fmt.Sprintf("p:%d:1:a", r))
			if placed, err := l.Place([][]byte{key}, 900, DeadlineNever, 0, out); placed != 1 || err != nil {
				t.Fatalf("round %d: Place: %d %v %v", r, placed, out, err)
			}
			var decisions [claimers]Decision
			var errs [claimers]error
			race(claimers, func(g int) {
				decisions[g], errs[g] = l.Claim(key, 900, uint64(5000+g), uint64(g+1), 1)
			})
			winner := -1
			for g := 0; g < claimers; g++ {
				switch {
				case errs[g] != nil:
					t.Fatalf("round %d: claimer %d: %v", r, g, errs[g])
				case decisions[g] == wonClaimed:
					if winner >= 0 {
						t.Fatalf("round %d: claimers %d and %d both won", r, winner, g)
					}
					winner = g
				case decisions[g] != Decision{Result: ResultLost, State: StateClaimed}:
					t.Fatalf("round %d: claimer %d: %v", r, g, decisions[g])
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no claimer won", r)
			}
			rec, ok, err := l.Get(key)
			if err != nil || !ok || rec.State != StateClaimed || rec.ID != uint64(5000+winner) || rec.Runner != uint64(winner+1) {
				t.Fatalf("round %d: record %+v %v %v, winner %d", r, rec, ok, err, winner)
			}
			expectD(t, "finalize", wonFinal(OutcomeSucceeded))(l.Finalize(key, OutcomeSucceeded, 0, 2))
			if p, err := l.Reclaim(2, 4); err != nil || p.Changed != 1 {
				t.Fatalf("round %d: Reclaim %+v %v", r, p, err)
			}
		}
		c := mustCounts(t, l)
		if c.ClaimsWon != uint64(n) || c.ClaimsLost != uint64(n*(claimers-1)) || c.Reclaimed != uint64(n) {
			t.Fatalf("counts %+v", c)
		}
	})
}

// A receipt racing the reconciler on many due records: each record is
// finalized exactly once, by the receipt or by the timeout, and the loser
// is told the winner's outcome.
func TestFinalizeRacesReconcile(t *testing.T) {
	records := 256
	if debugBuild { // a GC per C call
		records = 64
	}
	n := rounds(100)
	forEachImpl(t, func(t *testing.T, impl string) {
		for r := 0; r < n; r++ {
			l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: records, Retention: 1000})
			keys := make([][]byte, records)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("r%d", i))
				expectD(t, "insert", wonPlaced)(l.Insert(keys[i], uint64(i), 0, 10, 0))
			}
			receipts := make([]Decision, records)
			var timedOut atomic.Int64
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range keys {
					d, err := l.Finalize(keys[i], OutcomeSucceeded, uint64(i)+1, 20)
					if err != nil {
						t.Error(err)
						return
					}
					receipts[i] = d
				}
			}()
			go func() {
				defer wg.Done()
				for {
					p, err := l.Reconcile(20, 16)
					if err != nil {
						t.Error(err)
						return
					}
					timedOut.Add(int64(p.Changed))
					if p.Wrapped {
						return
					}
				}
			}()
			wg.Wait()
			won := 0
			for i, d := range receipts {
				rec, ok, err := l.Get(keys[i])
				if err != nil || !ok || rec.State != StateFinalized {
					t.Fatalf("round %d: %s: %+v %v %v", r, keys[i], rec, ok, err)
				}
				switch d {
				case wonFinal(OutcomeSucceeded):
					won++
					if rec.Outcome != OutcomeSucceeded || rec.Payload != uint64(i)+1 {
						t.Fatalf("round %d: %s won by the receipt, record %+v", r, keys[i], rec)
					}
				case duplicate(OutcomeTimedOut):
					if rec.Outcome != OutcomeTimedOut || rec.Duplicates != 1 || rec.LastDuplicatePayload != uint64(i)+1 {
						t.Fatalf("round %d: %s timed out, record %+v", r, keys[i], rec)
					}
				default:
					t.Fatalf("round %d: %s: receipt %v", r, keys[i], d)
				}
			}
			if won+int(timedOut.Load()) != records {
				t.Fatalf("round %d: %d receipts won, %d timed out, of %d", r, won, timedOut.Load(), records)
			}
			c := mustCounts(t, l)
			if c.FinalizationsWon != uint64(won) || c.ReconciledTimeouts != uint64(timedOut.Load()) ||
				c.FinalizationsDuplicate != uint64(records-won) {
				t.Fatalf("round %d: counts %+v, %d won", r, c, won)
			}
			must(t, l.Close())
		}
	})
}

// Two (or more) refreshes with one token: exactly one Take wins and the pair
// is gone; the others find it gone (not found) or being removed (a
// duplicate of the take's succeeded).
func TestTakesOfOneTokenHaveOneWinner(t *testing.T) {
	n := rounds(5000)
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, takers := range []int{2, 6} {
			l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 2, Retention: 1000})
			for r := 0; r < n; r++ {
				key := []byte("refresh:" + fmt.Sprint(r))
				expectD(t, "insert", wonPlaced)(l.Insert(key, 77, 0, DeadlineNever, 0))
				decisions := make([]Decision, takers)
				race(takers, func(g int) {
					d, err := l.Take(key, 77)
					if err != nil {
						t.Error(err)
					}
					decisions[g] = d
				})
				won := 0
				for _, d := range decisions {
					switch d {
					case wonNone:
						won++
					case notFound, duplicate(OutcomeSucceeded):
					default:
						t.Fatalf("%d takers, round %d: a take got %v", takers, r, d)
					}
				}
				if won != 1 {
					t.Fatalf("%d takers, round %d: %d takes won: %v", takers, r, won, decisions)
				}
				if _, ok, _ := l.Get(key); ok || mustLen(t, l) != 0 {
					t.Fatalf("round %d: the pair is still there", r)
				}
			}
			if c := mustCounts(t, l); c.FinalizationsWon != uint64(n) || c.Reclaimed != uint64(n) {
				t.Fatalf("%d takers: counts %+v", takers, c)
			}
		}
	})
}

// A burst of hand-off claims of one key (leader retries, a log replay), by
// Claim and ClaimBatch at once: exactly one wins; every other is told the
// hand-off is in flight.
func TestHandoffClaimBurst(t *testing.T) {
	const claimers, each = 8, 16
	n := rounds(300)
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newHandoff(t, impl, HandoffConfig{Capacity: 4, Retention: 0})
		for r := 0; r < n; r++ {
			key := hk("group-1", uint64(1000+r))
			var wins atomic.Int64
			race(claimers, func(g int) {
				if g%2 == 0 {
					for i := 0; i < each; i++ {
						d, err := l.Claim(key, DeadlineNever, 0)
						if err != nil {
							t.Error(err)
							return
						}
						if d == wonPlaced {
							wins.Add(1)
						} else if d != lostPlaced {
							t.Errorf("claim: %v", d)
						}
					}
					return
				}
				keys := make([]HandoffKey, each)
				for i := range keys {
					keys[i] = key
				}
				out := make([]Decision, each)
				won, err := l.ClaimBatch(keys, DeadlineNever, 0, out)
				if err != nil {
					t.Error(err)
					return
				}
				wins.Add(int64(won))
				for _, d := range out {
					if d != wonPlaced && d != lostPlaced {
						t.Errorf("claim batch: %v", d)
					}
				}
			})
			if wins.Load() != 1 {
				t.Fatalf("round %d: %d claims won", r, wins.Load())
			}
			expectD(t, "complete", wonFinal(OutcomeSucceeded))(l.Complete(key, OutcomeSucceeded, 1))
			expectD(t, "replay", duplicate(OutcomeSucceeded))(l.Claim(key, DeadlineNever, 2))
			if p, err := l.Reclaim(2, 4); err != nil || p.Changed != 1 {
				t.Fatalf("round %d: Reclaim %+v %v", r, p, err)
			}
		}
		c := mustCounts(t, l)
		if c.ClaimsWon != uint64(n) || c.ClaimsLost != uint64(n*(claimers*each-1+1)) || c.FinalizationsWon != uint64(n) {
			t.Fatalf("counts %+v", c)
		}
	})
}

// The end-to-end check: two replicas share one anchor table and run the
// same monitor rules, each walking the same clock tick by tick. Every
// period fires exactly once (by whichever replica got there first): the
// firings of a rule are exactly at every multiple of the period, each
// advancing from the one before, after one first-seen anchoring at tick 0.
func TestReplicasFireOncePerPeriod(t *testing.T) {
	const (
		replicas = 2
		rules    = 3
		period   = 10
	)
	ticks := uint64(rounds(50000))
	if debugBuild {
		ticks = 100 // a GC per TryFire
	}
	forEachImpl(t, func(t *testing.T, impl string) {
		a := newAnchors(t, impl, rules)
		for id := uint64(1); id <= rules; id++ {
			must(t, a.Insert(id, TimeUnset))
		}
		type firing struct {
			replica  int
			kind     FireKind
			previous uint64
			now      uint64
		}
		var mu sync.Mutex
		fired := map[uint64][]firing{}
		race(replicas, func(g int) {
			for now := uint64(0); now <= ticks; now++ {
				for id := uint64(1); id <= rules; id++ {
					f, err := a.TryFire(id, now, period)
					if err != nil {
						t.Error(err)
						return
					}
					switch f.Kind {
					case FireFired, FireAnchoredFirstSeen:
						mu.Lock()
						fired[id] = append(fired[id], firing{g, f.Kind, f.Value, now})
						mu.Unlock()
					case FireNotDue:
						if f.Value <= now {
							t.Errorf("not due until %d at %d", f.Value, now)
						}
					}
				}
				if now%64 == 0 {
					runtime.Gosched()
				}
			}
		})
		for id := uint64(1); id <= rules; id++ {
			fs := fired[id]
			// Sort by now: firings advance the anchor, so they are ordered.
			for i := 1; i < len(fs); i++ {
				for j := i; j > 0 && fs[j].now < fs[j-1].now; j-- {
					fs[j], fs[j-1] = fs[j-1], fs[j]
				}
			}
			if uint64(len(fs)) != ticks/period+1 {
				t.Fatalf("rule %d: %d firings over %d ticks, want %d", id, len(fs), ticks, ticks/period+1)
			}
			if fs[0].kind != FireAnchoredFirstSeen || fs[0].now != 0 {
				t.Fatalf("rule %d: first event %+v, want the first-seen anchoring at 0", id, fs[0])
			}
			byReplica := [replicas]int{}
			for i, f := range fs[1:] {
				want := uint64(i+1) * period
				if f.kind != FireFired || f.now != want || f.previous != want-period {
					t.Fatalf("rule %d: firing %d is %+v, want one at %d from %d", id, i+1, f, want, want-period)
				}
				byReplica[f.replica]++
			}
			t.Logf("rule %d: %d periods, fired by the replicas %v", id, len(fs)-1, byReplica)
			if v, err := a.Get(id); err != nil || v != ticks/period*period {
				t.Fatalf("rule %d: anchor %d %v", id, v, err)
			}
		}
	})
}

// Slot reuse under churn: goroutines insert, claim, finalize, read and
// reclaim their own keys in a ledger far smaller than the keys they use, so
// slots pass from key to key all the time. Nobody ever sees another key's
// record, and every transition a goroutine makes on its own key wins.
func TestChurnKeepsRecordsApart(t *testing.T) {
	const workers = 4
	n := rounds(5000)
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 8, Retention: 0})
		var fulls atomic.Int64
		race(workers, func(g int) {
			for i := 0; i < n; i++ {
				id := uint64(g)<<32 | uint64(i)
				key := []byte(fmt.Sprintf("w%d:%d", g, i))
				for {
					d, err := l.Insert(key, id, uint64(g+1), DeadlineNever, 1)
					if err != nil {
						t.Error(err)
						return
					}
					if d == wonPlaced {
						break
					}
					if d != full {
						t.Errorf("insert %s: %v", key, d)
						return
					}
					fulls.Add(1)
					if _, err := l.Reclaim(2, 8); err != nil {
						t.Error(err)
						return
					}
					runtime.Gosched()
				}
				if d, err := l.Touch(key, uint64(g+1), 1); err != nil || d != wonPlaced {
					t.Errorf("touch %s: %v %v", key, d, err)
					return
				}
				if d, err := l.Finalize(key, OutcomeSucceeded, id+1, 2); err != nil || d != wonFinal(OutcomeSucceeded) {
					t.Errorf("finalize %s: %v %v", key, d, err)
					return
				}
				if rec, ok, err := l.Get(key); err != nil {
					t.Error(err)
					return
				} else if ok && (rec.ID != id || rec.Runner != uint64(g+1) ||
					(rec.State == StateFinalized && rec.Payload != id+1)) {
					t.Errorf("%s: another key's record %+v", key, rec)
					return
				}
				if i%3 == 0 {
					if _, err := l.Reclaim(2, 4); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
		c := mustCounts(t, l)
		if c.FinalizationsWon != uint64(workers*n) || c.RejectedFull != uint64(fulls.Load()) {
			t.Fatalf("counts %+v, %d full", c, fulls.Load())
		}
	})
}

// Close racing every other call: each call returns its normal result or
// ErrHandleClosed, exactly one Close returns nil, and nothing crashes.
func TestCloseRacesWithCalls(t *testing.T) {
	n := rounds(30)
	forEachImpl(t, func(t *testing.T, impl string) {
		for r := 0; r < n; r++ {
			l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 16, Retention: 0})
			h := newHandoff(t, impl, HandoffConfig{Capacity: 16, Retention: 0})
			a := newAnchors(t, impl, 4)
			must(t, a.Insert(1, TimeUnset))
			var wins [3]atomic.Int32
			ok := func(err error) bool { return err == nil || errors.Is(err, ErrHandleClosed) }
			race(9, func(g int) {
				switch g {
				case 0, 1, 2:
					for i := 0; i < 3; i++ {
						if err := []closer{l, h, a}[i].Close(); err == nil {
							wins[i].Add(1)
						} else if err != ErrHandleClosed {
							t.Errorf("Close: %v", err)
						}
					}
					return
				}
				out := make([]Decision, 2)
				for i := 0; i < 200; i++ {
					key := []byte(fmt.Sprintf("k%d", i%8))
					checks := []error{}
					_, err := l.Insert(key, 1, 1, 5, 1)
					checks = append(checks, err)
					_, err = l.Finalize(key, OutcomeFailed, 1, 2)
					checks = append(checks, err)
					_, err = l.FinalizeBatch([][]byte{key, key}, nil, OutcomeFailed, 2, out)
					checks = append(checks, err)
					_, err = l.Reclaim(3, 8)
					checks = append(checks, err)
					_, _, err = l.Get(key)
					checks = append(checks, err)
					_, err = l.Counts()
					checks = append(checks, err)
					_, err = h.Claim(hk("c", uint64(i%8)), 5, 1)
					checks = append(checks, err)
					_, err = h.Reconcile(6, 4)
					checks = append(checks, err)
					_, err = h.Reclaim(6, 4)
					checks = append(checks, err)
					_, err = a.TryFire(1, uint64(i), 3)
					checks = append(checks, err)
					for _, err := range checks {
						if !ok(err) {
							t.Errorf("a call racing Close: %v", err)
							return
						}
					}
				}
			})
			for i := range wins {
				if wins[i].Load() != 1 {
					t.Fatalf("round %d: handle %d: %d Closes won", r, i, wins[i].Load())
				}
			}
		}
	})
}

// Late writers never touch the next record of a slot: with one slot, a
// record is finalized, reclaimed and the slot refilled with the next key over
// and over, while other goroutines keep claiming, refreshing and finalizing
// the key they last heard of. Their writes (a claim's id and runner, a
// heartbeat, a duplicate's audit) land on their own key's record or nowhere:
// each new record is exactly as its insert made it until they hear of it.
func TestLateWritersNeverTouchTheNextRecord(t *testing.T) {
	const writers = 3
	n := rounds(20000)
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 1, Retention: 0})
		var current atomic.Int64
		var stop atomic.Bool
		key := func(c int64) []byte { return []byte(fmt.Sprintf("k%d", c)) }
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					c := current.Load()
					k := key(c)
					var err error
					switch i % 3 {
					case 0:
						_, err = l.Claim(k, uint64(1000+c), uint64(5000+w), uint64(9+w), 1)
					case 1:
						_, err = l.Touch(k, 7, 1)
					case 2:
						_, err = l.Finalize(k, OutcomeFailed, uint64(77+w), 1)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		now := uint64(1)
		expectD(t, "insert", wonPlaced)(l.Insert(key(0), 1000, 7, DeadlineNever, now))
		for c := int64(0); c < int64(n); c++ {
			d, err := l.Finalize(key(c), OutcomeSucceeded, 1, now)
			if err != nil || (d != wonFinal(OutcomeSucceeded) && d != duplicate(OutcomeFailed)) {
				t.Fatalf("cycle %d: finalize %v %v", c, d, err)
			}
			now++
			for try := 0; ; try++ {
				p, err := l.Reclaim(now, 1)
				if err != nil {
					t.Fatal(err)
				}
				if p.Changed == 1 {
					break
				}
				if try == 1_000_000 {
					stop.Store(true)
					t.Fatalf("cycle %d: the finalized record is never reclaimed", c)
				}
				runtime.Gosched() // a late writer holds the record for a moment
			}
			next := key(c + 1)
			expectD(t, "insert", wonPlaced)(l.Insert(next, uint64(1000+c+1), 7, DeadlineNever, now))
			want := Record{State: StatePlaced, ID: uint64(1000 + c + 1), Runner: 7, Deadline: DeadlineNever,
				RefreshedAt: now, FinalizedAt: TimeUnset}
			if r, ok, err := l.Get(next); err != nil || !ok || r != want {
				t.Fatalf("cycle %d: the next record is %+v (%v, %v), want %+v", c, r, ok, err, want)
			}
			current.Store(c + 1)
		}
		stop.Store(true)
		wg.Wait()
	})
}

// A transition that changes nothing wins for nobody: an advance to the
// value it expects, and a period-0 firing at the anchor's own time, are not
// wins (else every racing caller would be told it won). Found by the C++
// suite; the core's fix makes a firing always move the anchor (due at
// anchor + max(period, 1)).
func TestNoOpAnchorTransitionsWinForNobody(t *testing.T) {
	const racers = 8
	n := rounds(200)
	forEachImpl(t, func(t *testing.T, impl string) {
		a := newAnchors(t, impl, 2)
		must(t, a.Insert(1, 100))
		if won, err := a.Advance(1, 100, 100); won || err != nil {
			t.Errorf("Advance(100 -> 100): %v %v", won, err)
		}
		if f, err := a.TryFire(1, 100, 0); err != nil || f != (Fire{Kind: FireNotDue, Value: 101}) {
			t.Errorf("TryFire(at the anchor, period 0): %+v %v", f, err)
		}
		for r := 0; r < n; r++ {
			at, err := a.Get(1)
			must(t, err)
			var advanced, fired atomic.Int32
			race(racers, func(g int) {
				if g%2 == 0 {
					if won, err := a.Advance(1, at, at); err != nil || won {
						advanced.Add(1)
					}
					return
				}
				if f, err := a.TryFire(1, at+1, 0); err == nil && f.Kind == FireFired {
					fired.Add(1)
				}
			})
			if advanced.Load() != 0 || fired.Load() != 1 {
				t.Fatalf("round %d: %d no-op advances won, %d callers fired at one instant", r, advanced.Load(), fired.Load())
			}
		}
	})
}

// An insert of an id the table holds never makes it look full to an insert
// of a new id (the core used to reserve a place before it looked the id up;
// found by the C++ suite).
func TestInsertOfAKnownAnchorNeverLooksFull(t *testing.T) {
	n := rounds(20000)
	forEachImpl(t, func(t *testing.T, impl string) {
		a := newAnchors(t, impl, 2)
		must(t, a.Insert(1, 100))
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := a.Insert(1, 5); err != ErrAlreadyExists {
					t.Errorf("Insert(known id): %v", err)
					return
				}
			}
		}()
		full := 0
		for i := 0; i < n; i++ {
			switch err := a.Insert(2, 5); err {
			case nil:
				must(t, a.Remove(2))
			case ErrFull:
				full++
			default:
				t.Fatalf("Insert(new id): %v", err)
			}
		}
		stop.Store(true)
		wg.Wait()
		if full != 0 {
			t.Fatalf("a table holding 1 anchor of 2 refused a new id as full %d times of %d", full, n)
		}
	})
}
