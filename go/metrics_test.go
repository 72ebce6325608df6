package wkcore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

// admitMix makes one slot produce a known set of decisions and returns them
// as counters: fg ok 2, fg busy 1, bg ok 1, bg throttled 1, bg not_leader 1.
func admitMix(t *testing.T) AdmissionCounters {
	t.Helper()
	s := newTestSlot(t, Limits{MaxQueuedControls: 3, MaxQueuedBackgroundControls: 1}, true)
	_ = s.Admit(ControlPropose, ProposalClassBackground, 1)
	_ = s.Admit(ControlPropose, ProposalClassBackground, 2)
	_, _ = s.AdmitBatch(ControlPropose, ProposalClassForeground, []uint64{3, 4, 5})
	_ = s.Demote()
	_ = s.Admit(ControlPropose, ProposalClassBackground, 6)
	want := AdmissionCounters{ForegroundOK: 2, ForegroundBusy: 1, BackgroundOK: 1, BackgroundThrottled: 1, BackgroundNotLeader: 1}
	if c, _ := s.Counters(); c != want {
		t.Fatalf("slot counters %+v, want %+v", c, want)
	}
	return want
}

func addCounters(a, b AdmissionCounters) AdmissionCounters {
	return AdmissionCounters{
		a.ForegroundOK + b.ForegroundOK, a.ForegroundBusy + b.ForegroundBusy,
		a.ForegroundThrottled + b.ForegroundThrottled, a.ForegroundNotLeader + b.ForegroundNotLeader,
		a.BackgroundOK + b.BackgroundOK, a.BackgroundBusy + b.BackgroundBusy,
		a.BackgroundThrottled + b.BackgroundThrottled, a.BackgroundNotLeader + b.BackgroundNotLeader,
	}
}

func TestReadMetricsSumsSlots(t *testing.T) {
	before, err := ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	delta := admitMix(t)
	after, err := ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if want := addCounters(before.SlotProposalAdmission, delta); after.SlotProposalAdmission != want {
		t.Fatalf("totals %+v, want %+v", after.SlotProposalAdmission, want)
	}
}

func TestCollector(t *testing.T) {
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c, AdmissionMetricName); n != 8 {
		t.Fatalf("CollectAndCount = %d, want 8", n)
	}
	before, err := ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	want := addCounters(before.SlotProposalAdmission, admitMix(t))

	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", AdmissionMetricName, admissionMetricHelp, AdmissionMetricName)
	for _, s := range admissionSeries {
		fmt.Fprintf(&b, "%s{class=%q,result=%q} %d\n", AdmissionMetricName, s.class, s.result, want.Get(s.class, s.result))
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()), AdmissionMetricName); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

func TestRenderMetricsMatchesSnapshot(t *testing.T) {
	admitMix(t)
	renderSizeHint.Store(1) // force the BUFFER_TOO_SMALL path first
	text, err := RenderMetrics()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "# TYPE "+AdmissionMetricName+" counter\n") {
		t.Fatalf("no TYPE line for %s in:\n%s", AdmissionMetricName, text)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("render is not valid text exposition: %v\n%s", err, text)
	}
	fam := families[AdmissionMetricName]
	if fam == nil || len(fam.GetMetric()) != 8 {
		t.Fatalf("family %s: %v", AdmissionMetricName, fam)
	}
	if fam.GetHelp() != admissionMetricHelp {
		t.Errorf("HELP %q differs from the Collector's %q", fam.GetHelp(), admissionMetricHelp)
	}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := snap.SlotProposalAdmission.Get(ProposalClass(labels["class"]), AdmissionResult(labels["result"]))
		if got := m.GetCounter().GetValue(); got != float64(want) {
			t.Errorf("%v = %v, want %d", labels, got, want)
		}
	}
	// A second call reuses the remembered size.
	if again, err := RenderMetrics(); err != nil || !strings.HasPrefix(again, text[:strings.Index(text, "\n")]) {
		t.Fatalf("second render: %v", err)
	}
}
