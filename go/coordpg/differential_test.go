package coordpg

// A property-style test: random command sequences go to both backends (the
// in-memory types through go/coord's adapters, and PostgreSQL) and every
// decision, record, page's "changed", length and count must agree. The
// in-memory ledgers are sized so that they never fill, and scans use a
// limit of the whole capacity (one pass), the two in-memory details the
// database does not share.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/wukongim/wkcore/go/coord"
)

const diffCapacity = 64

func TestDifferentialLedger(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		ml, err := coord.NewLedger(coord.LedgerConfig{Kind: coord.KindPending, Capacity: diffCapacity, Retention: 20, Metrics: registry(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ml.Close() })
		mem := coord.MemoryLedger(ml)
		pg, err := s.Ledger(unique("diff"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: diffCapacity, Retention: 20})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 99))
		now := uint64(0)
		key := func() []byte { return []byte(fmt.Sprintf("k%d", r.IntN(8))) }
		keys := func() [][]byte {
			n := 1 + r.IntN(4)
			out := make([][]byte, n)
			for i := range out {
				out[i] = key()
			}
			return out
		}
		small := func() uint64 { return uint64(r.IntN(4)) }
		outcome := func() coord.Outcome {
			return []coord.Outcome{coord.OutcomeSucceeded, coord.OutcomeFailed, 300}[r.IntN(3)]
		}
		deadline := func() uint64 {
			if r.IntN(4) == 0 {
				return coord.DeadlineNever
			}
			return now + uint64(r.IntN(30))
		}
		for i := 0; i < 300; i++ {
			now += uint64(r.IntN(4))
			var a, b any
			var name string
			switch op := r.IntN(14); op {
			case 0, 1:
				name = "insert"
				k, id, runner, dl := key(), small(), small(), deadline()
				a, b = pair(mem.Insert(ctx, k, id, runner, dl, now))(pg.Insert(ctx, k, id, runner, dl, now))
			case 2:
				name = "place"
				ks, ph, dl := keys(), small(), deadline()
				o1, o2 := make([]coord.Decision, len(ks)), make([]coord.Decision, len(ks))
				n1, e1 := mem.Place(ctx, ks, ph, dl, now, o1)
				n2, e2 := pg.Place(ctx, ks, ph, dl, now, o2)
				a, b = []any{n1, e1, o1}, []any{n2, e2, o2}
			case 3, 4:
				name = "claim"
				k, ph, rid, runner := key(), small(), 100+small(), 1+small()
				a, b = pair(mem.Claim(ctx, k, ph, rid, runner, now))(pg.Claim(ctx, k, ph, rid, runner, now))
			case 5, 6:
				name = "finalize"
				k, o, p := key(), outcome(), small()
				a, b = pair(mem.Finalize(ctx, k, o, p, now))(pg.Finalize(ctx, k, o, p, now))
			case 7:
				name = "finalize_batch"
				ks, o := keys(), outcome()
				pl := make([]uint64, len(ks))
				for j := range pl {
					pl[j] = small()
				}
				o1, o2 := make([]coord.Decision, len(ks)), make([]coord.Decision, len(ks))
				n1, e1 := mem.FinalizeBatch(ctx, ks, pl, o, now, o1)
				n2, e2 := pg.FinalizeBatch(ctx, ks, pl, o, now, o2)
				a, b = []any{n1, e1, o1}, []any{n2, e2, o2}
			case 8:
				name = "take"
				k, id := key(), small()
				a, b = pair(mem.Take(ctx, k, id))(pg.Take(ctx, k, id))
			case 9:
				name = "touch"
				k, runner := key(), small()
				a, b = pair(mem.Touch(ctx, k, runner, now))(pg.Touch(ctx, k, runner, now))
			case 10:
				name = "reconcile"
				a, b = pages(mem.Reconcile(ctx, now, diffCapacity))(pg.Reconcile(ctx, now, diffCapacity))
			case 11:
				name = "reclaim"
				a, b = pages(mem.Reclaim(ctx, now, diffCapacity))(pg.Reclaim(ctx, now, diffCapacity))
			case 12:
				runner, o := small(), outcome()
				name = "finalize_own"
				a, b = pages(mem.FinalizeOwn(ctx, runner, o, now, diffCapacity))(pg.FinalizeOwn(ctx, runner, o, now, diffCapacity))
			case 13:
				quiet := uint64(r.IntN(20))
				name = "sweep_orphans"
				a, b = pages(mem.SweepOrphans(ctx, now, quiet, diffCapacity))(pg.SweepOrphans(ctx, now, quiet, diffCapacity))
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d step %d %s: memory %v, postgres %v", seed, i, name, a, b)
			}
			for j := 0; j < 8; j++ {
				k := []byte(fmt.Sprintf("k%d", j))
				r1, ok1, e1 := mem.Get(ctx, k)
				r2, ok2, e2 := pg.Get(ctx, k)
				if r1 != r2 || ok1 != ok2 || e1 != e2 {
					t.Fatalf("seed %d step %d after %s: record %s: memory %+v %v %v, postgres %+v %v %v", seed, i, name, k, r1, ok1, e1, r2, ok2, e2)
				}
			}
		}
		n1, _ := mem.Len(ctx)
		n2, _ := pg.Len(ctx)
		c1, _ := mem.Counts()
		c2, _ := pg.Counts()
		if n1 != n2 || c1 != c2 {
			t.Fatalf("seed %d: len %d/%d counts %+v / %+v", seed, n1, n2, c1, c2)
		}
	}
}

func pair[T any](x T, e error) func(T, error) (any, any) {
	return func(y T, f error) (any, any) { return []any{x, e}, []any{y, f} }
}

// pages keeps what both backends share of a page: the records it changed.
func pages(x coord.Page, e error) func(coord.Page, error) (any, any) {
	return func(y coord.Page, f error) (any, any) { return []any{x.Changed, e}, []any{y.Changed, f} }
}

func TestDifferentialAnchorsAndWords(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	mt, err := coord.NewAnchorTable(1024)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mt.Close() })
	ma := coord.MemoryAnchors(mt)
	pa, _ := s.Anchors(unique("diff"), 1024)
	mf, mc, mtr, mw := coord.NewMemoryFlips(1), coord.NewMemoryCounters(), coord.NewMemoryTriggers(), coord.NewMemoryWindows()
	t.Cleanup(func() { _, _, _, _ = mf.Close(), mc.Close(), mtr.Close(), mw.Close() })
	pf, _ := s.Flips(unique("diff"), 1)
	pc, _ := s.Counters(unique("diff"))
	pt, _ := s.Triggers(unique("diff"))
	pw, _ := s.Windows(unique("diff"))
	r := rand.New(rand.NewPCG(7, 7))
	now := uint64(0)
	for i := 0; i < 400; i++ {
		now += uint64(r.IntN(3))
		id := uint64(r.IntN(4))
		k := []byte(fmt.Sprintf("w%d", r.IntN(3)))
		var a, b any
		var name string
		switch r.IntN(12) {
		case 0:
			name = "anchor insert"
			v := coord.TimeUnset
			if r.IntN(2) == 0 {
				v = now
			}
			a, b = ma.Insert(ctx, id, v), pa.Insert(ctx, id, v)
		case 1:
			name = "anchor remove"
			a, b = ma.Remove(ctx, id), pa.Remove(ctx, id)
		case 2, 3:
			name = "try_fire"
			p := uint64(r.IntN(5))
			a, b = pair(ma.TryFire(ctx, id, now, p))(pa.TryFire(ctx, id, now, p))
		case 4:
			name = "advance"
			exp, next := now-uint64(r.IntN(3)), now+uint64(r.IntN(2))
			if exp > now {
				exp = 0
			}
			if r.IntN(5) == 0 {
				exp = coord.TimeUnset
			}
			a, b = pair(ma.Advance(ctx, id, exp, next))(pa.Advance(ctx, id, exp, next))
		case 5:
			name = "anchor_unset"
			a, b = pair(ma.AnchorUnset(ctx, id, now))(pa.AnchorUnset(ctx, id, now))
		case 6:
			name = "flip"
			from, to := uint64(r.IntN(3)), uint64(r.IntN(3))
			a, b = pair(mf.Flip(ctx, k, from, to))(pf.Flip(ctx, k, from, to))
		case 7:
			name = "counter"
			a, b = pair(mc.Increment(ctx, k))(pc.Increment(ctx, k))
		case 8:
			name = "trigger"
			a, b = pair(mtr.Trigger(ctx, k))(pt.Trigger(ctx, k))
		case 9:
			name = "finish"
			run := uint64(r.IntN(6))
			a, b = pair(mtr.Finish(ctx, k, run))(pt.Finish(ctx, k, run))
		case 10:
			name = "window"
			w := uint64(r.IntN(6))
			a, b = pair(mw.Increment(ctx, k, now, w))(pw.Increment(ctx, k, now, w))
		case 11:
			name = "reads"
			v1, e1 := ma.Get(ctx, id)
			v2, e2 := pa.Get(ctx, id)
			f1, _ := mf.Get(ctx, k)
			f2, _ := pf.Get(ctx, k)
			c1, _ := mc.Get(ctx, k)
			c2, _ := pc.Get(ctx, k)
			t1, _ := mtr.Active(ctx, k)
			t2, _ := pt.Active(ctx, k)
			l1, _ := mtr.LastRun(ctx, k)
			l2, _ := pt.LastRun(ctx, k)
			w1, _ := mw.Count(ctx, k, now)
			w2, _ := pw.Count(ctx, k, now)
			a, b = []any{v1, e1, f1, c1, t1, l1, w1}, []any{v2, e2, f2, c2, t2, l2, w2}
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d %s: memory %v, postgres %v", i, name, a, b)
		}
	}
}

// Bad input gets the in-memory backend's errors, never a store error.
func TestBadInputSameErrors(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	pg, _ := s.Ledger(unique("bad"), coord.LedgerConfig{Kind: coord.KindClaim, Capacity: 4})
	ml, _ := coord.NewLedger(coord.LedgerConfig{Kind: coord.KindClaim, Capacity: 4, Metrics: registry(t)})
	t.Cleanup(func() { _ = ml.Close() })
	mem := coord.MemoryLedger(ml)
	long := make([]byte, coord.KeyMax+1)
	for _, l := range []coord.LedgerStore{mem, pg} {
		checks := []struct {
			err  error
			want error
		}{
			{second(l.Insert(ctx, nil, 1, 0, 1, 1)), coord.ErrInvalidKey},
			{second(l.Insert(ctx, long, 1, 0, 1, 1)), coord.ErrInvalidKey},
			{second(l.Insert(ctx, []byte("k"), 1, 0, 1, coord.TimeUnset)), coord.ErrInvalidTime},
			{second(l.Finalize(ctx, []byte("k"), 0, 0, 1)), coord.ErrInvalidOutcome},
			{second(l.Finalize(ctx, []byte("k"), 5, 0, 1)), coord.ErrInvalidOutcome},
			{second(l.Reconcile(ctx, 1, -1)), coord.ErrInvalidArgument},
			{second(l.Place(ctx, nil, 1, 1, 1, nil)), coord.ErrInvalidArgument},
			{second(l.Place(ctx, [][]byte{[]byte("a")}, 1, 1, 1, nil)), coord.ErrInvalidArgument},
			{second(l.FinalizeOwn(ctx, 1, 9, 1, 1)), coord.ErrInvalidOutcome},
		}
		for i, c := range checks {
			if !errors.Is(c.err, c.want) {
				t.Errorf("%T check %d: %v, want %v", l, i, c.err, c.want)
			}
			var se *StoreError
			if errors.As(c.err, &se) {
				t.Errorf("%T check %d: a store error for bad input: %v", l, i, c.err)
			}
		}
	}
	if _, err := s.Ledger("x", coord.LedgerConfig{Kind: 7, Capacity: 1}); !errors.Is(err, coord.ErrInvalidCapacity) {
		t.Errorf("kind 7: %v", err)
	}
	w, _ := s.Windows(unique("bad"))
	if _, err := w.Increment(ctx, []byte("k"), 1, 0); !errors.Is(err, coord.ErrInvalidTime) {
		t.Errorf("window 0: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
