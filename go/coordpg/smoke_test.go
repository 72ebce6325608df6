package coordpg

import (
	"context"
	"errors"
	"testing"

	"github.com/wukongim/wkcore/go/coord"
)

func TestSmokeEveryStatement(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	l, err := s.Ledger(unique("smoke"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: 8, Retention: 10})
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Insert(ctx, []byte("a"), 1, 7, 100, 5)
	if err != nil || d != (coord.Decision{Result: coord.ResultWon, State: coord.StatePlaced}) {
		t.Fatalf("insert: %v %v", d, err)
	}
	d, err = l.Insert(ctx, []byte("a"), 1, 7, 100, 5)
	if err != nil || d.Result != coord.ResultLost {
		t.Fatalf("insert again: %v %v", d, err)
	}
	out := make([]coord.Decision, 3)
	n, err := l.Place(ctx, [][]byte{[]byte("b"), []byte("a"), []byte("b")}, 9, coord.DeadlineNever, 5, out)
	if err != nil || n != 1 || out[0].Result != coord.ResultWon || out[1].Result != coord.ResultLost || out[2].Result != coord.ResultLost {
		t.Fatalf("place: %d %v %v", n, out, err)
	}
	if d, err = l.Claim(ctx, []byte("b"), 9, 99, 3, 6); err != nil || d.Result != coord.ResultWon {
		t.Fatalf("claim: %v %v", d, err)
	}
	if d, err = l.Claim(ctx, []byte("b"), 9, 98, 3, 6); err != nil || d.Result != coord.ResultLost {
		t.Fatalf("claim again: %v %v", d, err)
	}
	if d, err = l.Finalize(ctx, []byte("b"), coord.OutcomeSucceeded, 5, 7); err != nil || d.Result != coord.ResultWon {
		t.Fatalf("finalize: %v %v", d, err)
	}
	if d, err = l.Finalize(ctx, []byte("b"), coord.OutcomeFailed, 6, 8); err != nil || d.Result != coord.ResultDuplicate || d.Outcome != coord.OutcomeSucceeded {
		t.Fatalf("finalize dup: %v %v", d, err)
	}
	fo := make([]coord.Decision, 2)
	if n, err = l.FinalizeBatch(ctx, [][]byte{[]byte("a"), []byte("z")}, nil, coord.OutcomeFailed, 9, fo); err != nil || n != 1 || fo[1].Result != coord.ResultNotFound {
		t.Fatalf("batch: %d %v %v", n, fo, err)
	}
	if p, err := l.Reclaim(ctx, 100, 10); err != nil || p.Changed != 2 {
		t.Fatalf("reclaim: %+v %v", p, err)
	}
	if _, err := l.Finalize(ctx, []byte("b"), coord.Outcome(7), 0, 1); !errors.Is(err, coord.ErrInvalidOutcome) {
		t.Fatalf("bad outcome: %v", err)
	}
	a, _ := s.Anchors(unique("anchors"), 4)
	if err := a.Insert(ctx, 1, coord.TimeUnset); err != nil {
		t.Fatal(err)
	}
	if f, err := a.TryFire(ctx, 1, 10, 5); err != nil || f.Kind != coord.FireAnchoredFirstSeen {
		t.Fatalf("fire: %v %v", f, err)
	}
	if f, err := a.TryFire(ctx, 1, 12, 5); err != nil || f != (coord.Fire{Kind: coord.FireNotDue, Value: 15}) {
		t.Fatalf("fire: %v %v", f, err)
	}
	if f, err := a.TryFire(ctx, 1, 15, 5); err != nil || f != (coord.Fire{Kind: coord.FireFired, Value: 10}) {
		t.Fatalf("fire: %v %v", f, err)
	}
	fl, _ := s.Flips(unique("flip"), 0)
	if ok, err := fl.Flip(ctx, []byte("k"), 0, 1); !ok || err != nil {
		t.Fatalf("flip %v %v", ok, err)
	}
	if ok, err := fl.Flip(ctx, []byte("k"), 0, 1); ok || err != nil {
		t.Fatalf("flip again %v %v", ok, err)
	}
	c, _ := s.Counters(unique("ctr"))
	for i := uint64(1); i <= 3; i++ {
		if v, err := c.Increment(ctx, []byte("k")); v != i || err != nil {
			t.Fatalf("ctr %v %v", v, err)
		}
	}
	tr, _ := s.Triggers(unique("trg"))
	if r, err := tr.Trigger(ctx, []byte("k")); r != 1 || err != nil {
		t.Fatalf("trigger %v %v", r, err)
	}
	var busy coord.BusyError
	if _, err := tr.Trigger(ctx, []byte("k")); !errors.As(err, &busy) || busy.Run != 1 {
		t.Fatalf("busy %v", err)
	}
	w, _ := s.Windows(unique("win"))
	for i := uint32(1); i <= 3; i++ {
		if v, err := w.Increment(ctx, []byte("k"), 10, 5); v != i || err != nil {
			t.Fatalf("win %v %v", v, err)
		}
	}
	if v, err := w.Count(ctx, []byte("k"), 15); v != 0 || err != nil {
		t.Fatalf("win count %v %v", v, err)
	}
}
