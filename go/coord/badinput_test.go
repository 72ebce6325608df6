package coord

// Bad input on every method: keys empty or too long, outcomes that are not
// outcomes, the reserved time, capacities out of range, batches of the wrong
// size, out slices and payloads of the wrong length, negative limits, closed,
// nil and zero-value handles. Each is refused with its error (the same one
// from both implementations, the C ABI's first check where several are bad),
// returns zero values, and changes nothing.

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

var (
	longKey     = bytes.Repeat([]byte("k"), KeyMax+1)
	maxKey      = bytes.Repeat([]byte("m"), KeyMax)
	badTimes    = []uint64{TimeUnset}
	notOutcomes = []Outcome{0, 5, 100, 255, HostOutcomeMax + 1, math.MaxUint32}
)

// ledgerView is everything observable about a ledger's records.
type ledgerView struct {
	counts Counts
	len    int
	recs   [3]Record
}

func viewLedger(t *testing.T, l ledgerAPI) ledgerView {
	t.Helper()
	v := ledgerView{counts: mustCounts(t, l), len: mustLen(t, l)}
	for i, k := range []string{"a", "b", string(maxKey)} {
		r, ok, err := l.Get([]byte(k))
		if err != nil || !ok {
			t.Fatalf("Get(%q): %v %v", k, ok, err)
		}
		v.recs[i] = r
	}
	return v
}

// refused checks that a call was refused with exactly want (which matches
// ErrInvalidArgument unless it is ErrHandleClosed).
func refused(t *testing.T, what string, err, want error) {
	t.Helper()
	if err != want {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
	if want != ErrHandleClosed && !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("%s: %v does not match ErrInvalidArgument", what, err)
	}
}

func zeroD(t *testing.T, what string, d Decision) {
	t.Helper()
	if d != (Decision{}) {
		t.Errorf("%s: a refused call returned %v", what, d)
	}
}

func TestLedgerBadInputChangesNothing(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 8, Retention: 100})
		for _, k := range [][]byte{[]byte("a"), []byte("b"), maxKey} {
			expectD(t, "insert", wonPlaced)(l.Insert(k, 7, 1, 50, 0))
		}
		expectD(t, "finalize b", wonFinal(OutcomeFailed))(l.Finalize([]byte("b"), OutcomeFailed, 3, 5))
		before := viewLedger(t, l)
		check := func(what string) {
			t.Helper()
			if after := viewLedger(t, l); after != before {
				t.Errorf("%s changed the ledger: %+v, was %+v", what, after, before)
			}
		}
		badKeys := [][]byte{nil, {}, longKey, bytes.Repeat([]byte("x"), 1<<16)}
		for _, k := range badKeys {
			d, err := l.Insert(k, 1, 1, 1, 1)
			refused(t, "Insert(bad key)", err, ErrInvalidKey)
			zeroD(t, "Insert", d)
			_, err = l.Insert(k, 1, 1, 1, TimeUnset)
			refused(t, "Insert(bad key, bad time)", err, ErrInvalidKey)
			d, err = l.Claim(k, 7, 8, 1, 1)
			refused(t, "Claim(bad key)", err, ErrInvalidKey)
			zeroD(t, "Claim", d)
			d, err = l.Finalize(k, OutcomeSucceeded, 1, 1)
			refused(t, "Finalize(bad key)", err, ErrInvalidKey)
			zeroD(t, "Finalize", d)
			_, err = l.Finalize(k, 0, 1, TimeUnset)
			refused(t, "Finalize(bad key, outcome, time)", err, ErrInvalidKey)
			d, err = l.Take(k, 7)
			refused(t, "Take(bad key)", err, ErrInvalidKey)
			zeroD(t, "Take", d)
			d, err = l.Touch(k, 1, 1)
			refused(t, "Touch(bad key)", err, ErrInvalidKey)
			zeroD(t, "Touch", d)
			r, ok, err := l.Get(k)
			refused(t, "Get(bad key)", err, ErrInvalidKey)
			if ok || r != (Record{}) {
				t.Errorf("Get(bad key): %+v %v", r, ok)
			}
		}
		check("a bad key")
		for _, now := range badTimes {
			_, err := l.Insert([]byte("new"), 1, 1, 1, now)
			refused(t, "Insert(bad time)", err, ErrInvalidTime)
			_, err = l.Claim([]byte("a"), 7, 8, 1, now)
			refused(t, "Claim(bad time)", err, ErrInvalidTime)
			_, err = l.Finalize([]byte("a"), OutcomeSucceeded, 1, now)
			refused(t, "Finalize(bad time)", err, ErrInvalidTime)
			_, err = l.Touch([]byte("a"), 1, now)
			refused(t, "Touch(bad time)", err, ErrInvalidTime)
			_, err = l.Reconcile(now, 8)
			refused(t, "Reconcile(bad time)", err, ErrInvalidTime)
			_, err = l.Reclaim(now, 8)
			refused(t, "Reclaim(bad time)", err, ErrInvalidTime)
			_, err = l.FinalizeOwn(1, OutcomeFailed, now, 8)
			refused(t, "FinalizeOwn(bad time)", err, ErrInvalidTime)
			_, err = l.FinalizeOwn(0, OutcomeFailed, now, 8)
			refused(t, "FinalizeOwn(runner 0, bad time)", err, ErrInvalidTime)
			_, err = l.SweepOrphans(now, 0, 8)
			refused(t, "SweepOrphans(bad time)", err, ErrInvalidTime)
		}
		check("the reserved time")
		for _, o := range notOutcomes {
			d, err := l.Finalize([]byte("a"), o, 1, 1)
			refused(t, "Finalize(not an outcome)", err, ErrInvalidOutcome)
			zeroD(t, "Finalize", d)
			_, err = l.Finalize([]byte("a"), o, 1, TimeUnset)
			refused(t, "Finalize(not an outcome, bad time)", err, ErrInvalidOutcome)
			p, err := l.FinalizeOwn(1, o, 1, 8)
			refused(t, "FinalizeOwn(not an outcome)", err, ErrInvalidOutcome)
			if p != (Page{}) {
				t.Errorf("FinalizeOwn refused with page %+v", p)
			}
			_, err = l.FinalizeBatch([][]byte{[]byte("a")}, nil, o, 1, make([]Decision, 1))
			refused(t, "FinalizeBatch(not an outcome)", err, ErrInvalidOutcome)
		}
		check("an outcome that is not one")
		for _, limit := range []int{-1, math.MinInt} {
			_, err := l.Reconcile(100, limit)
			refused(t, "Reconcile(negative limit)", err, ErrInvalidArgument)
			_, err = l.Reclaim(1000, limit)
			refused(t, "Reclaim(negative limit)", err, ErrInvalidArgument)
			_, err = l.FinalizeOwn(1, OutcomeFailed, 10, limit)
			refused(t, "FinalizeOwn(negative limit)", err, ErrInvalidArgument)
			_, err = l.SweepOrphans(10000, 0, limit)
			refused(t, "SweepOrphans(negative limit)", err, ErrInvalidArgument)
		}
		check("a negative limit")

		// Batches.
		good := [][]byte{[]byte("a"), []byte("new")}
		tooMany := make([][]byte, BatchMax+1)
		for i := range tooMany {
			tooMany[i] = []byte("z")
		}
		out := make([]Decision, len(good))
		type batchCase struct {
			what string
			keys [][]byte
			out  []Decision
			now  uint64
			want error
		}
		cases := []batchCase{
			{"no keys", nil, nil, 1, ErrInvalidArgument},
			{"empty keys", [][]byte{}, []Decision{}, 1, ErrInvalidArgument},
			{"too many keys", tooMany, make([]Decision, len(tooMany)), 1, ErrInvalidArgument},
			{"too many keys, bad time", tooMany, nil, TimeUnset, ErrInvalidArgument},
			{"an empty key", [][]byte{[]byte("a"), {}}, out, 1, ErrInvalidKey},
			{"a long key", [][]byte{longKey, []byte("a")}, out, 1, ErrInvalidKey},
			{"a bad key, bad time, short out", [][]byte{[]byte("a"), longKey}, nil, TimeUnset, ErrInvalidKey},
			{"bad time", good, out, TimeUnset, ErrInvalidTime},
			{"bad time, short out", good, out[:1], TimeUnset, ErrInvalidTime},
			{"nil out", good, nil, 1, ErrInvalidArgument},
			{"short out", good, out[:1], 1, ErrInvalidArgument},
			{"long out", good, make([]Decision, 3), 1, ErrInvalidArgument},
		}
		for _, c := range cases {
			for i := range c.out {
				c.out[i] = Decision{Result: 99}
			}
			n, err := l.Place(c.keys, 1, DeadlineNever, c.now, c.out)
			refused(t, "Place("+c.what+")", err, c.want)
			if n != 0 {
				t.Errorf("Place(%s) placed %d", c.what, n)
			}
			n, err = l.FinalizeBatch(c.keys, nil, OutcomeSucceeded, c.now, c.out)
			refused(t, "FinalizeBatch("+c.what+")", err, c.want)
			if n != 0 {
				t.Errorf("FinalizeBatch(%s) won %d", c.what, n)
			}
			for i := range c.out {
				if c.out[i] != (Decision{Result: 99}) {
					t.Errorf("%s: a refused batch wrote out[%d] = %v", c.what, i, c.out[i])
				}
			}
		}
		for _, payloads := range [][]uint64{{}, {1}, {1, 2, 3}} {
			_, err := l.FinalizeBatch(good, payloads, OutcomeSucceeded, 1, out)
			refused(t, "FinalizeBatch(wrong payloads)", err, ErrInvalidArgument)
			_, err = l.FinalizeBatch(good, payloads, 0, TimeUnset, out)
			refused(t, "FinalizeBatch(wrong payloads, outcome, time)", err, ErrInvalidArgument)
			_, err = l.FinalizeBatch([][]byte{{}, []byte("a")}, payloads, OutcomeSucceeded, 1, out)
			refused(t, "FinalizeBatch(wrong payloads, bad key)", err, ErrInvalidKey)
		}
		_, err := l.FinalizeBatch(good, nil, 0, TimeUnset, nil)
		refused(t, "FinalizeBatch(outcome, time, out)", err, ErrInvalidOutcome)
		_, err = l.FinalizeBatch(good, nil, OutcomeFailed, TimeUnset, nil)
		refused(t, "FinalizeBatch(time, out)", err, ErrInvalidTime)
		check("a bad batch")

		// The largest key and the largest batch are accepted.
		big := make([][]byte, BatchMax)
		for i := range big {
			big[i] = maxKey
		}
		bigOut := make([]Decision, BatchMax)
		won, err := l.FinalizeBatch(big, nil, OutcomeSucceeded, 1, bigOut)
		if err != nil || won != 1 || bigOut[0] != wonFinal(OutcomeSucceeded) || bigOut[BatchMax-1] != duplicate(OutcomeSucceeded) {
			t.Fatalf("FinalizeBatch of %d: %d %v, %v %v", BatchMax, won, err, bigOut[0], bigOut[BatchMax-1])
		}
	})
}

func TestHandoffBadInputChangesNothing(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newHandoff(t, impl, HandoffConfig{Capacity: 4, Retention: 100})
		key := hk("group-1", 1)
		expectD(t, "claim", wonPlaced)(l.Claim(key, 50, 0))
		view := func() [3]any {
			r, ok, err := l.Get(key)
			if err != nil || !ok {
				t.Fatalf("Get: %v %v", ok, err)
			}
			return [3]any{r, mustCounts(t, l), mustLen(t, l)}
		}
		before := view()
		tagless := key
		tagless.TagKey = ""
		badKeys := []HandoffKey{
			{},
			{ChannelID: "", TagKey: "t", MessageID: 1},
			{ChannelID: string(bytes.Repeat([]byte("c"), ChannelIDMax+1))},
			{ChannelID: "c", TagKey: string(bytes.Repeat([]byte("t"), TagKeyMax+1))},
			{ChannelID: string(bytes.Repeat([]byte("c"), 1000)), TagKey: string(bytes.Repeat([]byte("t"), 1000))},
		}
		for _, k := range badKeys {
			d, err := l.Claim(k, 1, 1)
			refused(t, "Claim(bad key)", err, ErrInvalidKey)
			zeroD(t, "Claim", d)
			_, err = l.Claim(k, 1, TimeUnset)
			refused(t, "Claim(bad key, bad time)", err, ErrInvalidKey)
			d, err = l.Complete(k, OutcomeSucceeded, 1)
			refused(t, "Complete(bad key)", err, ErrInvalidKey)
			zeroD(t, "Complete", d)
			_, err = l.Complete(k, 0, TimeUnset)
			refused(t, "Complete(bad key, outcome, time)", err, ErrInvalidKey)
			r, ok, err := l.Get(k)
			refused(t, "Get(bad key)", err, ErrInvalidKey)
			if ok || r != (Record{}) {
				t.Errorf("Get(bad key): %+v %v", r, ok)
			}
			out := make([]Decision, 2)
			n, err := l.ClaimBatch([]HandoffKey{tagless, k}, 1, 1, out)
			refused(t, "ClaimBatch(a bad key)", err, ErrInvalidKey)
			if n != 0 || out[0] != (Decision{}) {
				t.Errorf("ClaimBatch(a bad key): %d %v", n, out)
			}
		}
		for _, o := range notOutcomes {
			_, err := l.Complete(key, o, 1)
			refused(t, "Complete(not an outcome)", err, ErrInvalidOutcome)
			_, err = l.Complete(key, o, TimeUnset)
			refused(t, "Complete(not an outcome, bad time)", err, ErrInvalidOutcome)
		}
		_, err := l.Claim(tagless, 1, TimeUnset)
		refused(t, "Claim(bad time)", err, ErrInvalidTime)
		_, err = l.Complete(key, OutcomeFailed, TimeUnset)
		refused(t, "Complete(bad time)", err, ErrInvalidTime)
		_, err = l.Reconcile(TimeUnset, 4)
		refused(t, "Reconcile(bad time)", err, ErrInvalidTime)
		_, err = l.Reclaim(TimeUnset, 4)
		refused(t, "Reclaim(bad time)", err, ErrInvalidTime)
		_, err = l.Reconcile(100, -1)
		refused(t, "Reconcile(negative limit)", err, ErrInvalidArgument)
		_, err = l.Reclaim(1000, -1)
		refused(t, "Reclaim(negative limit)", err, ErrInvalidArgument)
		tooMany := make([]HandoffKey, BatchMax+1)
		for i := range tooMany {
			tooMany[i] = tagless
		}
		for _, c := range []struct {
			what string
			keys []HandoffKey
			out  []Decision
			now  uint64
			want error
		}{
			{"no keys", nil, nil, 1, ErrInvalidArgument},
			{"too many keys", tooMany, make([]Decision, len(tooMany)), 1, ErrInvalidArgument},
			{"bad time", []HandoffKey{tagless}, make([]Decision, 1), TimeUnset, ErrInvalidTime},
			{"bad time, no out", []HandoffKey{tagless}, nil, TimeUnset, ErrInvalidTime},
			{"no out", []HandoffKey{tagless}, nil, 1, ErrInvalidArgument},
			{"long out", []HandoffKey{tagless}, make([]Decision, 2), 1, ErrInvalidArgument},
		} {
			n, err := l.ClaimBatch(c.keys, 1, c.now, c.out)
			refused(t, "ClaimBatch("+c.what+")", err, c.want)
			if n != 0 {
				t.Errorf("ClaimBatch(%s): %d", c.what, n)
			}
		}
		if after := view(); after != before {
			t.Errorf("bad input changed the ledger: %+v, was %+v", after, before)
		}
	})
}

func TestAnchorTableBadInputChangesNothing(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		a := newAnchors(t, impl, 2)
		must(t, a.Insert(1, 100))
		held := 1
		check := func(what string) {
			t.Helper()
			if v, err := a.Get(1); err != nil || v != 100 || mustLen(t, a) != held {
				t.Errorf("%s changed the table: %d %v", what, v, err)
			}
		}
		for _, id := range []uint64{1, 99} {
			f, err := a.TryFire(id, TimeUnset, 1)
			refused(t, "TryFire(bad time)", err, ErrInvalidTime)
			if f != (Fire{}) {
				t.Errorf("TryFire refused with %+v", f)
			}
			won, err := a.Advance(id, 100, TimeUnset)
			refused(t, "Advance(bad next)", err, ErrInvalidTime)
			if won {
				t.Error("a refused Advance won")
			}
			_, err = a.AnchorUnset(id, TimeUnset)
			refused(t, "AnchorUnset(bad time)", err, ErrInvalidTime)
		}
		check("the reserved time")
		// An unset expected value matches nothing (no error): the anchor is
		// never advanced by accident.
		if won, err := a.Advance(1, TimeUnset, 5); won || err != nil {
			t.Errorf("Advance(from unset): %v %v", won, err)
		}
		for _, err := range []error{a.Remove(99), func() error { _, err := a.Get(99); return err }(),
			func() error { _, err := a.TryFire(99, 1, 1); return err }(),
			func() error { _, err := a.Advance(99, 1, 2); return err }(),
			func() error { _, err := a.AnchorUnset(99, 1); return err }()} {
			if err != ErrNotFound {
				t.Errorf("unknown id: %v, want ErrNotFound", err)
			}
		}
		if err := a.Insert(1, 5); err != ErrAlreadyExists {
			t.Errorf("Insert(known id): %v", err)
		}
		check("an unknown or known id")
		must(t, a.Insert(2, TimeUnset))
		held = 2
		if err := a.Insert(3, 1); err != ErrFull {
			t.Errorf("Insert(full): %v", err)
		}
		if err := a.Insert(1, 1); err != ErrAlreadyExists {
			t.Errorf("Insert(full, known id): %v (a known id is checked first)", err)
		}
		if v, err := a.Get(2); err != nil || v != TimeUnset {
			t.Errorf("an anchor inserted unset: %d %v", v, err)
		}
		check("a full table")
	})
}

// Capacities out of range and unknown kinds are refused with
// ErrInvalidCapacity; a closed registry with ErrHandleClosed.
func TestConstructorRefusals(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		for _, capacity := range []int{0, -1, math.MinInt, LedgerCapacityMax + 1, math.MaxInt} {
			for _, kind := range []Kind{KindClaim, KindPending} {
				l, err := makeLedger(t, impl, LedgerConfig{Kind: kind, Capacity: capacity})
				refused(t, "ledger capacity", err, ErrInvalidCapacity)
				if l != nil {
					t.Errorf("a ledger of capacity %d", capacity)
				}
			}
			h, err := makeHandoff(t, impl, HandoffConfig{Capacity: capacity})
			refused(t, "hand-off capacity", err, ErrInvalidCapacity)
			if h != nil {
				t.Errorf("a hand-off ledger of capacity %d", capacity)
			}
		}
		for _, capacity := range []int{0, -1, AnchorTableCapacityMax + 1, math.MaxInt} {
			a, err := makeAnchors(t, impl, capacity)
			refused(t, "anchor capacity", err, ErrInvalidCapacity)
			if a != nil {
				t.Errorf("an anchor table of capacity %d", capacity)
			}
		}
		for _, kind := range []Kind{2, 3, math.MaxUint32} {
			l, err := makeLedger(t, impl, LedgerConfig{Kind: kind, Capacity: 1})
			refused(t, "unknown kind", err, ErrInvalidCapacity)
			if l != nil {
				t.Errorf("a ledger of kind %v", kind)
			}
		}
		for _, capacity := range []int{1, 1000} {
			l := newLedger(t, impl, LedgerConfig{Kind: KindClaim, Capacity: capacity})
			must(t, l.Close())
		}
	})
	r := newTestRegistry(t)
	must(t, r.Close())
	if l, err := NewLedger(LedgerConfig{Capacity: 1, Metrics: r}); l != nil || err != ErrHandleClosed {
		t.Errorf("NewLedger with a closed registry: %v %v", l, err)
	}
	if l, err := NewHandoffLedger(HandoffConfig{Capacity: 1, Metrics: r}); l != nil || err != ErrHandleClosed {
		t.Errorf("NewHandoffLedger with a closed registry: %v %v", l, err)
	}
	// A closed registry is checked before the capacity, in both builds.
	if _, err := NewLedger(LedgerConfig{Capacity: 0, Metrics: r}); err != ErrHandleClosed {
		t.Errorf("NewLedger(capacity 0) with a closed registry: %v", err)
	}
}

// checkClosedLedger checks that every method of l refuses with
// ErrHandleClosed, bad arguments included.
func checkClosedLedger(t *testing.T, l ledgerAPI) {
	t.Helper()
	out := make([]Decision, 1)
	for _, key := range [][]byte{[]byte("a"), nil, longKey} {
		for _, now := range []uint64{1, TimeUnset} {
			errs := map[string]error{}
			_, errs["Insert"] = l.Insert(key, 1, 1, 1, now)
			_, errs["Place"] = l.Place([][]byte{key}, 1, 1, now, out)
			_, errs["Place(nil)"] = l.Place(nil, 1, 1, now, nil)
			_, errs["Claim"] = l.Claim(key, 1, 2, 1, now)
			_, errs["Finalize"] = l.Finalize(key, OutcomeSucceeded, 1, now)
			_, errs["Finalize(0)"] = l.Finalize(key, 0, 1, now)
			_, errs["FinalizeBatch"] = l.FinalizeBatch([][]byte{key}, []uint64{1, 2}, 0, now, nil)
			_, errs["Take"] = l.Take(key, 1)
			_, errs["Touch"] = l.Touch(key, 1, now)
			_, errs["Reconcile"] = l.Reconcile(now, -1)
			_, errs["Reclaim"] = l.Reclaim(now, 1)
			_, errs["FinalizeOwn"] = l.FinalizeOwn(1, 0, now, 1)
			_, errs["SweepOrphans"] = l.SweepOrphans(now, 1, 1)
			_, _, errs["Get"] = l.Get(key)
			_, errs["Len"] = l.Len()
			_, errs["Counts"] = l.Counts()
			errs["Close"] = l.Close()
			for name, err := range errs {
				if err != ErrHandleClosed {
					t.Errorf("%s on a closed ledger: %v", name, err)
				}
			}
		}
	}
}

func checkClosedHandoff(t *testing.T, l handoffAPI) {
	t.Helper()
	for _, key := range []HandoffKey{hk("c", 1), {}} {
		errs := map[string]error{}
		_, errs["Claim"] = l.Claim(key, 1, 1)
		_, errs["ClaimBatch"] = l.ClaimBatch([]HandoffKey{key}, 1, TimeUnset, nil)
		_, errs["ClaimBatch(nil)"] = l.ClaimBatch(nil, 1, 1, nil)
		_, errs["Complete"] = l.Complete(key, 0, 1)
		_, errs["Reconcile"] = l.Reconcile(TimeUnset, 1)
		_, errs["Reclaim"] = l.Reclaim(1, -1)
		_, _, errs["Get"] = l.Get(key)
		_, errs["Len"] = l.Len()
		_, errs["Counts"] = l.Counts()
		errs["Close"] = l.Close()
		for name, err := range errs {
			if err != ErrHandleClosed {
				t.Errorf("%s on a closed hand-off ledger: %v", name, err)
			}
		}
	}
}

func checkClosedAnchors(t *testing.T, a anchorsAPI) {
	t.Helper()
	errs := map[string]error{}
	errs["Insert"] = a.Insert(1, 1)
	errs["Remove"] = a.Remove(1)
	_, errs["TryFire"] = a.TryFire(1, TimeUnset, 1)
	_, errs["Advance"] = a.Advance(1, 1, TimeUnset)
	_, errs["AnchorUnset"] = a.AnchorUnset(1, 1)
	_, errs["Get"] = a.Get(1)
	_, errs["Len"] = a.Len()
	errs["Close"] = a.Close()
	for name, err := range errs {
		if err != ErrHandleClosed {
			t.Errorf("%s on a closed anchor table: %v", name, err)
		}
	}
}

// A closed handle refuses every call with ErrHandleClosed, whatever the
// arguments, and a second Close too.
func TestClosedHandlesRefuseEverything(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		l := newLedger(t, impl, LedgerConfig{Kind: KindPending, Capacity: 4})
		expectD(t, "insert", wonPlaced)(l.Insert([]byte("a"), 1, 1, 1, 1))
		must(t, l.Close())
		checkClosedLedger(t, l)
		h := newHandoff(t, impl, HandoffConfig{Capacity: 4})
		must(t, h.Close())
		checkClosedHandoff(t, h)
		a := newAnchors(t, impl, 4)
		must(t, a.Insert(1, TimeUnset))
		must(t, a.Close())
		checkClosedAnchors(t, a)
	})
}

// A nil handle, and one declared but not constructed, refuse every call
// with ErrHandleClosed.
func TestNilAndZeroHandles(t *testing.T) {
	var (
		nilLedger  *Ledger
		nilHandoff *HandoffLedger
		nilAnchors *AnchorTable
	)
	checkClosedLedger(t, nilLedger)
	checkClosedLedger(t, &Ledger{})
	checkClosedHandoff(t, nilHandoff)
	checkClosedHandoff(t, &HandoffLedger{})
	checkClosedAnchors(t, nilAnchors)
	checkClosedAnchors(t, &AnchorTable{})
	var nilRegistry *MetricsRegistry
	if _, err := nilRegistry.Families(); err != ErrHandleClosed {
		t.Errorf("nil registry Families: %v", err)
	}
	if err := nilRegistry.Close(); err != ErrHandleClosed {
		t.Errorf("nil registry Close: %v", err)
	}
	if _, err := (&MetricsRegistry{}).Families(); err != ErrHandleClosed {
		t.Errorf("zero registry Families: %v", err)
	}
}
