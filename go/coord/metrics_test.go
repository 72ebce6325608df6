package coord

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wukongim/wkcore/go/metrics"
)

// wantFamilies are the coordination families, their order and their series,
// as the Rust core declares them (core/src/coord/counts.rs).
var wantFamilies = []struct {
	name, help string
	labels     string
	series     []string
}{
	{"wkcore_coord_claims_total", "Coordination ledger claims, by ledger and result (won, lost).", "ledger,result",
		[]string{"claim,won", "claim,lost", "pending,won", "pending,lost", "handoff,won", "handoff,lost"}},
	{"wkcore_coord_finalizations_total", "Coordination ledger finalizations, by ledger and result (won, duplicate).",
		"ledger,result", []string{"claim,won", "claim,duplicate", "pending,won", "pending,duplicate", "handoff,won",
			"handoff,duplicate"}},
	{"wkcore_coord_reconciled_timeouts_total", "PENDING records the reconciler timed out, by ledger.", "ledger",
		[]string{"claim", "pending", "handoff"}},
	{"wkcore_coord_rejected_total", "Inserts a coordination ledger refused, by ledger and reason (full).",
		"ledger,reason", []string{"claim,full", "pending,full", "handoff,full"}},
	{"wkcore_coord_reclaimed_total",
		"Terminal records reclaimed after their retention (or removed by compare-and-delete), by ledger.", "ledger",
		[]string{"claim", "pending", "handoff"}},
}

// seriesValue is the value of one series of families, by family name and
// joined label values.
func seriesValue(t *testing.T, families []metrics.Family, name, labels string) uint64 {
	t.Helper()
	for _, f := range families {
		if f.Name == name {
			for _, s := range f.Series {
				if strings.Join(s.LabelValues, ",") == labels {
					return s.Value
				}
			}
		}
	}
	t.Fatalf("no series %s{%s}", name, labels)
	return 0
}

// checkFamilies checks the shape of families: exactly the coordination
// families, in order, with every series.
func checkFamilies(t *testing.T, families []metrics.Family) {
	t.Helper()
	if len(families) != len(wantFamilies) {
		t.Fatalf("%d families, want %d: %+v", len(families), len(wantFamilies), families)
	}
	for i, want := range wantFamilies {
		f := families[i]
		if f.Name != want.name || f.Help != want.help || f.Type != metrics.Counter ||
			strings.Join(f.Labels, ",") != want.labels || len(f.Series) != len(want.series) {
			t.Fatalf("family %d: %+v, want %+v", i, f, want)
		}
		for j, s := range f.Series {
			if strings.Join(s.LabelValues, ",") != want.series[j] {
				t.Errorf("%s series %d: %q, want %s", f.Name, j, s.LabelValues, want.series[j])
			}
		}
	}
}

// checkCountsIn checks that the series of one ledger label are want.
func checkCountsIn(t *testing.T, families []metrics.Family, label string, want Counts) {
	t.Helper()
	got := Counts{
		ClaimsWon:              seriesValue(t, families, "wkcore_coord_claims_total", label+",won"),
		ClaimsLost:             seriesValue(t, families, "wkcore_coord_claims_total", label+",lost"),
		FinalizationsWon:       seriesValue(t, families, "wkcore_coord_finalizations_total", label+",won"),
		FinalizationsDuplicate: seriesValue(t, families, "wkcore_coord_finalizations_total", label+",duplicate"),
		ReconciledTimeouts:     seriesValue(t, families, "wkcore_coord_reconciled_timeouts_total", label),
		RejectedFull:           seriesValue(t, families, "wkcore_coord_rejected_total", label+",full"),
		Reclaimed:              seriesValue(t, families, "wkcore_coord_reclaimed_total", label),
	}
	if got != want {
		t.Errorf("ledger=%q series %+v, want %+v", label, got, want)
	}
}

// exercise runs the same decisions on a claim, a pending and a hand-off
// ledger and returns their counts; the claim ledger is closed at the end.
func exercise(t *testing.T, claim, pending ledgerAPI, handoff handoffAPI) (Counts, Counts, Counts) {
	t.Helper()
	out := make([]Decision, 3)
	keys := [][]byte{[]byte("p:1:a"), []byte("p:1:b"), []byte("p:1:c")}
	if n, err := claim.Place(keys, 9, 5, 0, out); n != 3 || err != nil {
		t.Fatalf("Place: %d %v", n, err)
	}
	expectD(t, "claim", wonClaimed)(claim.Claim(keys[0], 9, 100, 1, 1))
	expectD(t, "claim lost", Decision{Result: ResultLost, State: StateClaimed})(claim.Claim(keys[0], 9, 101, 2, 1))
	expectD(t, "claim mismatch", Decision{Result: ResultMismatch, State: StatePlaced})(claim.Claim(keys[1], 8, 101, 2, 1))
	if n, err := claim.Place([][]byte{[]byte("x"), []byte("y")}, 9, 5, 0, out[:2]); n != 0 || err != nil {
		t.Fatalf("Place full: %d %v", n, err)
	}
	if p, err := claim.Reconcile(5, 3); p.Changed != 3 || err != nil {
		t.Fatalf("Reconcile: %+v %v", p, err)
	}
	expectD(t, "insert", wonPlaced)(pending.Insert([]byte("r1"), 1, 7, DeadlineNever, 0))
	expectD(t, "insert", wonPlaced)(pending.Insert([]byte("r2"), 1, 7, DeadlineNever, 0))
	if n, err := pending.FinalizeBatch([][]byte{[]byte("r1"), []byte("r1"), []byte("zz")}, nil, OutcomeSucceeded, 2, out); n != 1 || err != nil {
		t.Fatalf("FinalizeBatch: %d %v", n, err)
	}
	expectD(t, "take", wonNone)(pending.Take([]byte("r2"), 1))
	if p, err := pending.Reclaim(1000, 4); p.Changed != 1 || err != nil {
		t.Fatalf("Reclaim: %+v %v", p, err)
	}
	k := hk("group", 1)
	expectD(t, "hand-off", wonPlaced)(handoff.Claim(k, DeadlineNever, 0))
	expectD(t, "retry", lostPlaced)(handoff.Claim(k, DeadlineNever, 0))
	expectD(t, "complete", wonFinal(OutcomeFailed))(handoff.Complete(k, OutcomeFailed, 1))
	expectD(t, "complete again", duplicate(OutcomeFailed))(handoff.Complete(k, OutcomeSucceeded, 1))
	expectD(t, "full", full)(handoff.Claim(hk("group", 2), DeadlineNever, 0))
	cc, pc, hc := mustCounts(t, claim), mustCounts(t, pending), mustCounts(t, handoff)
	must(t, claim.Close())
	return cc, pc, hc
}

var (
	wantClaimCounts   = Counts{ClaimsWon: 1, ClaimsLost: 2, ReconciledTimeouts: 3, RejectedFull: 2}
	wantPendingCounts = Counts{FinalizationsWon: 2, FinalizationsDuplicate: 1, Reclaimed: 2}
	wantHandoffCounts = Counts{ClaimsWon: 1, ClaimsLost: 1, FinalizationsWon: 1, FinalizationsDuplicate: 1, RejectedFull: 1}
)

// A fresh registry has no family; the coordination families appear, at
// zero, once a ledger is created in it; ledgers count in their kind's series
// (a closed ledger's counts stay), and the registry renders them.
func TestMetricsRegistry(t *testing.T) {
	r := newTestRegistry(t)
	if families, err := r.Families(); err != nil || len(families) != 0 {
		t.Fatalf("fresh registry: %+v, %v", families, err)
	}
	a, err := NewAnchorTable(4)
	must(t, err)
	defer a.Close()
	if families, err := r.Families(); err != nil || len(families) != 0 {
		t.Fatalf("anchor tables count nothing: %+v, %v", families, err)
	}
	claim, err := NewLedger(LedgerConfig{Kind: KindClaim, Capacity: 4, Metrics: r})
	must(t, err)
	families, err := r.Families()
	must(t, err)
	checkFamilies(t, families)
	for _, f := range families {
		for _, s := range f.Series {
			if s.Value != 0 {
				t.Errorf("a fresh ledger's %s%v = %d", f.Name, s.LabelValues, s.Value)
			}
		}
	}
	pending, err := NewLedger(LedgerConfig{Kind: KindPending, Capacity: 4, Retention: 10, Metrics: r})
	must(t, err)
	defer pending.Close()
	handoff, err := NewHandoffLedger(HandoffConfig{Capacity: 1, Retention: 10, Metrics: r})
	must(t, err)
	defer handoff.Close()
	cc, pc, hc := exercise(t, claim, pending, handoff)
	if cc != wantClaimCounts || pc != wantPendingCounts || hc != wantHandoffCounts {
		t.Fatalf("counts %+v %+v %+v", cc, pc, hc)
	}
	families, err = r.Families()
	must(t, err)
	checkFamilies(t, families)
	checkCountsIn(t, families, "claim", cc) // closed: its counts stay
	checkCountsIn(t, families, "pending", pc)
	checkCountsIn(t, families, "handoff", hc)
	text, err := r.Render()
	must(t, err)
	for _, line := range []string{
		"# HELP wkcore_coord_claims_total Coordination ledger claims, by ledger and result (won, lost).\n",
		"# TYPE wkcore_coord_claims_total counter\n",
		`wkcore_coord_claims_total{ledger="claim",result="lost"} 2` + "\n",
		`wkcore_coord_finalizations_total{ledger="handoff",result="duplicate"} 1` + "\n",
		`wkcore_coord_reconciled_timeouts_total{ledger="claim"} 3` + "\n",
		`wkcore_coord_rejected_total{ledger="handoff",reason="full"} 1` + "\n",
		`wkcore_coord_reclaimed_total{ledger="pending"} 2` + "\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("Render lacks %q:\n%s", line, text)
		}
	}
	if got, want := strings.Count(text, "\n"), 5*2+6+6+3+3+3; got != want {
		t.Errorf("Render: %d lines, want %d:\n%s", got, want, text)
	}
	// A second ledger of a kind adds to its series.
	more, err := NewLedger(LedgerConfig{Kind: KindPending, Capacity: 1, Metrics: r})
	must(t, err)
	defer more.Close()
	expectD(t, "insert", wonPlaced)(more.Insert([]byte("a"), 1, 0, 1, 0))
	expectD(t, "insert", full)(more.Insert([]byte("b"), 1, 0, 1, 0))
	families, err = r.Families()
	must(t, err)
	want := pc
	want.RejectedFull++
	checkCountsIn(t, families, "pending", want)
	// Closing the handle leaves the ledgers counting; the handle refuses.
	must(t, r.Close())
	if _, err := r.Families(); err != ErrHandleClosed {
		t.Fatalf("Families after Close: %v", err)
	}
	if _, err := r.Render(); err != ErrHandleClosed {
		t.Fatalf("Render after Close: %v", err)
	}
	if err := r.Close(); err != ErrHandleClosed {
		t.Fatalf("second Close: %v", err)
	}
	expectD(t, "after the registry's Close", wonFinal(OutcomeSucceeded))(more.Finalize([]byte("a"), OutcomeSucceeded, 0, 1))
}

// The mutex implementation's Go registry has the same families, series and
// values as the build's registry (the Rust core's in the cgo build) after
// the same decisions.
func TestGoFamiliesMatchTheBuilds(t *testing.T) {
	r := newTestRegistry(t)
	newL := func(kind Kind, capacity int) ledgerAPI {
		l, err := NewLedger(LedgerConfig{Kind: kind, Capacity: capacity, Retention: 10, Metrics: r})
		must(t, err)
		return l
	}
	h, err := NewHandoffLedger(HandoffConfig{Capacity: 1, Retention: 10, Metrics: r})
	must(t, err)
	defer h.Close()
	p := newL(KindPending, 4)
	defer p.Close()
	exercise(t, newL(KindClaim, 4), p, h)

	g := new(goRegistry)
	newM := func(kind Kind, capacity int) ledgerAPI {
		l, err := newMutexLedger(LedgerConfig{Kind: kind, Capacity: capacity, Retention: 10}, g)
		must(t, err)
		return l
	}
	mh, err := newMutexHandoffLedger(HandoffConfig{Capacity: 1, Retention: 10}, g)
	must(t, err)
	exercise(t, newM(KindClaim, 4), newM(KindPending, 4), mh)

	got, err := r.Families()
	must(t, err)
	want := g.families()
	checkFamilies(t, want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the build's families (%s)\n%+v\nthe Go registry's\n%+v", Implementation, got, want)
	}
}

// The process-wide registry: ledgers without a registry count there; its
// handle's Close releases nothing, a second Close is refused, and a new
// handle still reads it.
func TestGlobalMetrics(t *testing.T) {
	g, err := GlobalMetrics()
	must(t, err)
	before, err := g.Families()
	must(t, err)
	var was uint64
	if len(before) > 0 {
		was = seriesValue(t, before, "wkcore_coord_rejected_total", "pending,full")
	}
	l, err := NewLedger(LedgerConfig{Kind: KindPending, Capacity: 1})
	must(t, err)
	defer l.Close()
	expectD(t, "insert", wonPlaced)(l.Insert([]byte("a"), 1, 0, 1, 0))
	expectD(t, "insert", full)(l.Insert([]byte("b"), 1, 0, 1, 0))
	must(t, g.Close())
	if err := g.Close(); err != ErrHandleClosed {
		t.Errorf("second Close: %v", err)
	}
	if _, err := g.Families(); err != ErrHandleClosed {
		t.Errorf("Families after Close: %v", err)
	}
	g2, err := GlobalMetrics()
	must(t, err)
	after, err := g2.Families()
	must(t, err)
	if now := seriesValue(t, after, "wkcore_coord_rejected_total", "pending,full"); now < was+1 {
		t.Errorf("global pending/full %d, then %d", was, now)
	}
}
