package coord

// The two implementations side by side on random sequences: every call,
// bad arguments included, gets the same decision, page, record, count and
// error from the build's types (the Rust core with cgo) and from the mutex
// implementation. This is what lets the pure-Go build claim the same
// contract beyond the scenario file: slot order, free-slot reuse, scan
// cursors and counting rules included.

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

type call struct {
	what string
	got  []any
}

func results(vs ...any) []any { return vs }

func TestDifferentialLedger(t *testing.T) {
	seeds := rounds(40)
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		capacity := 1 + rng.Intn(8)
		retention := uint64(rng.Intn(20))
		kind := Kind(rng.Intn(2))
		a := newLedger(t, Implementation, LedgerConfig{Kind: kind, Capacity: capacity, Retention: retention})
		b := newLedger(t, implMutex, LedgerConfig{Kind: kind, Capacity: capacity, Retention: retention})
		now := uint64(0)
		key := func() []byte {
			switch rng.Intn(40) {
			case 0:
				return nil
			case 1:
				return longKey
			}
			return []byte(fmt.Sprintf("k%d", rng.Intn(3*capacity)))
		}
		keys := func() [][]byte {
			ks := make([][]byte, rng.Intn(capacity+2))
			for i := range ks {
				ks[i] = key()
			}
			return ks
		}
		outcome := func() Outcome {
			switch rng.Intn(20) {
			case 0:
				return Outcome(rng.Intn(256))
			case 1:
				return Outcome(256 + rng.Intn(1000))
			}
			return Outcome(1 + rng.Intn(4))
		}
		t_ := func() uint64 {
			if rng.Intn(50) == 0 {
				return TimeUnset
			}
			now += uint64(rng.Intn(4))
			return now
		}
		deadline := func() uint64 {
			if rng.Intn(4) == 0 {
				return DeadlineNever
			}
			return now + uint64(rng.Intn(15))
		}
		limit := func() int { return rng.Intn(capacity+3) - (rng.Intn(30) / 29) }
		small := func() uint64 { return uint64(rng.Intn(4)) }
		for i := 0; i < 400; i++ {
			op := rng.Intn(14)
			k, ks, o, tm, dl, lim, x, y := key(), keys(), outcome(), t_(), deadline(), limit(), small(), small()
			run := func(l ledgerAPI) call {
				switch op {
				case 0:
					d, err := l.Insert(k, x, y, dl, tm)
					return call{fmt.Sprintf("Insert(%q, %d, %d, %d, %d)", k, x, y, dl, tm), results(d, err)}
				case 1:
					out := make([]Decision, len(ks)+rng.Intn(2)*0)
					n, err := l.Place(ks, x, dl, tm, out)
					return call{fmt.Sprintf("Place(%q, %d, %d, %d)", ks, x, dl, tm), results(out, n, err)}
				case 2:
					d, err := l.Claim(k, x, y+10, y, tm)
					return call{fmt.Sprintf("Claim(%q, %d, %d, %d)", k, x, y+10, tm), results(d, err)}
				case 3, 4:
					d, err := l.Finalize(k, o, x, tm)
					return call{fmt.Sprintf("Finalize(%q, %d, %d, %d)", k, o, x, tm), results(d, err)}
				case 5:
					out := make([]Decision, len(ks))
					var payloads []uint64
					if x > 0 {
						payloads = make([]uint64, len(ks))
						for j := range payloads {
							payloads[j] = uint64(j) * x
						}
					}
					n, err := l.FinalizeBatch(ks, payloads, o, tm, out)
					return call{fmt.Sprintf("FinalizeBatch(%q, %v, %d, %d)", ks, payloads, o, tm), results(out, n, err)}
				case 6:
					d, err := l.Take(k, x)
					return call{fmt.Sprintf("Take(%q, %d)", k, x), results(d, err)}
				case 7:
					d, err := l.Touch(k, y, tm)
					return call{fmt.Sprintf("Touch(%q, %d, %d)", k, y, tm), results(d, err)}
				case 8:
					p, err := l.Reconcile(tm, lim)
					return call{fmt.Sprintf("Reconcile(%d, %d)", tm, lim), results(p, err)}
				case 9:
					p, err := l.Reclaim(tm, lim)
					return call{fmt.Sprintf("Reclaim(%d, %d)", tm, lim), results(p, err)}
				case 10:
					p, err := l.FinalizeOwn(y, o, tm, lim)
					return call{fmt.Sprintf("FinalizeOwn(%d, %d, %d, %d)", y, o, tm, lim), results(p, err)}
				case 11:
					p, err := l.SweepOrphans(tm, x*3, lim)
					return call{fmt.Sprintf("SweepOrphans(%d, %d, %d)", tm, x*3, lim), results(p, err)}
				case 12:
					r, ok, err := l.Get(k)
					return call{fmt.Sprintf("Get(%q)", k), results(r, ok, err)}
				default:
					n, err := l.Len()
					c, err2 := l.Counts()
					return call{"Len+Counts", results(n, err, c, err2)}
				}
			}
			ca, cb := run(a), run(b)
			if !reflect.DeepEqual(ca.got, cb.got) {
				t.Fatalf("seed %d (kind %v, capacity %d, retention %d), call %d: %s:\n\t%s: %+v\n\t%s: %+v",
					seed, kind, capacity, retention, i, ca.what, Implementation, ca.got, implMutex, cb.got)
			}
		}
	}
}

func TestDifferentialHandoff(t *testing.T) {
	seeds := rounds(40)
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		capacity := 1 + rng.Intn(6)
		retention := uint64(rng.Intn(20))
		a := newHandoff(t, Implementation, HandoffConfig{Capacity: capacity, Retention: retention})
		b := newHandoff(t, implMutex, HandoffConfig{Capacity: capacity, Retention: retention})
		now := uint64(0)
		key := func() HandoffKey {
			k := HandoffKey{ChannelID: fmt.Sprint("g", rng.Intn(2)), ChannelType: uint8(rng.Intn(2)),
				MessageID: uint64(rng.Intn(3)), TargetNodeID: 3, TagKey: []string{"", "t"}[rng.Intn(2)],
				TagVersion: uint64(rng.Intn(2))}
			if rng.Intn(40) == 0 {
				k.ChannelID = ""
			}
			return k
		}
		for i := 0; i < 300; i++ {
			op := rng.Intn(7)
			k := key()
			ks := make([]HandoffKey, rng.Intn(capacity+2))
			for j := range ks {
				ks[j] = key()
			}
			now += uint64(rng.Intn(4))
			tm, dl := now, now+uint64(rng.Intn(10))
			if rng.Intn(50) == 0 {
				tm = TimeUnset
			}
			o := Outcome(1 + rng.Intn(4))
			lim := rng.Intn(capacity + 2)
			run := func(l handoffAPI) call {
				switch op {
				case 0:
					d, err := l.Claim(k, dl, tm)
					return call{fmt.Sprintf("Claim(%+v, %d, %d)", k, dl, tm), results(d, err)}
				case 1:
					out := make([]Decision, len(ks))
					n, err := l.ClaimBatch(ks, dl, tm, out)
					return call{fmt.Sprintf("ClaimBatch(%+v, %d, %d)", ks, dl, tm), results(out, n, err)}
				case 2:
					d, err := l.Complete(k, o, tm)
					return call{fmt.Sprintf("Complete(%+v, %d, %d)", k, o, tm), results(d, err)}
				case 3:
					p, err := l.Reconcile(tm, lim)
					return call{fmt.Sprintf("Reconcile(%d, %d)", tm, lim), results(p, err)}
				case 4:
					p, err := l.Reclaim(tm, lim)
					return call{fmt.Sprintf("Reclaim(%d, %d)", tm, lim), results(p, err)}
				case 5:
					r, ok, err := l.Get(k)
					return call{fmt.Sprintf("Get(%+v)", k), results(r, ok, err)}
				default:
					n, err := l.Len()
					c, err2 := l.Counts()
					return call{"Len+Counts", results(n, err, c, err2)}
				}
			}
			ca, cb := run(a), run(b)
			if !reflect.DeepEqual(ca.got, cb.got) {
				t.Fatalf("seed %d, call %d: %s:\n\t%s: %+v\n\t%s: %+v", seed, i, ca.what, Implementation, ca.got,
					implMutex, cb.got)
			}
		}
	}
}

func TestDifferentialAnchors(t *testing.T) {
	seeds := rounds(40)
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		capacity := 1 + rng.Intn(4)
		a := newAnchors(t, Implementation, capacity)
		b := newAnchors(t, implMutex, capacity)
		now := uint64(0)
		for i := 0; i < 300; i++ {
			op := rng.Intn(6)
			id := uint64(rng.Intn(capacity + 2))
			now += uint64(rng.Intn(5))
			tm, period := now, uint64(rng.Intn(8))
			if rng.Intn(30) == 0 {
				tm = TimeUnset
			}
			value := []uint64{TimeUnset, now}[rng.Intn(2)]
			expected := []uint64{TimeUnset, now, now - uint64(rng.Intn(5)), 0}[rng.Intn(4)]
			run := func(t anchorsAPI) call {
				switch op {
				case 0:
					return call{fmt.Sprintf("Insert(%d, %d)", id, value), results(t.Insert(id, value))}
				case 1:
					return call{fmt.Sprintf("Remove(%d)", id), results(t.Remove(id))}
				case 2:
					f, err := t.TryFire(id, tm, period)
					return call{fmt.Sprintf("TryFire(%d, %d, %d)", id, tm, period), results(f, err)}
				case 3:
					won, err := t.Advance(id, expected, tm)
					return call{fmt.Sprintf("Advance(%d, %d, %d)", id, expected, tm), results(won, err)}
				case 4:
					won, err := t.AnchorUnset(id, tm)
					return call{fmt.Sprintf("AnchorUnset(%d, %d)", id, tm), results(won, err)}
				default:
					v, err := t.Get(id)
					n, err2 := t.Len()
					return call{fmt.Sprintf("Get(%d)+Len", id), results(v, err, n, err2)}
				}
			}
			ca, cb := run(a), run(b)
			if !reflect.DeepEqual(ca.got, cb.got) {
				t.Fatalf("seed %d, call %d: %s:\n\t%s: %+v\n\t%s: %+v", seed, i, ca.what, Implementation, ca.got,
					implMutex, cb.got)
			}
		}
	}
}
