package wkcore

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The admission family as upstream names it; only these tests name it, to
// check its values against a slot's own counters.
const admissionFamily = "wukongim_slot_proposal_admission_total"

func newTestRegistry(t testing.TB) *MetricsRegistry {
	t.Helper()
	r, err := NewMetricsRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// admitMix makes s (a leader with limits 3/1) produce a known set of
// decisions: fg ok 2, fg busy 1, bg ok 1, bg throttled 1, bg not_leader 1.
func admitMix(t *testing.T, s *Slot) AdmissionCounters {
	t.Helper()
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

func slotIn(t *testing.T, r *MetricsRegistry) *Slot {
	t.Helper()
	s, err := NewSlotIn(r, nextSlotID.Add(1), Limits{MaxQueuedControls: 3, MaxQueuedBackgroundControls: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.SetLeader(); err != nil {
		t.Fatal(err)
	}
	return s
}

func findFamily(families []MetricFamily, name string) *MetricFamily {
	for i := range families {
		if families[i].Name == name {
			return &families[i]
		}
	}
	return nil
}

// admissionCounts reads the admission family of r as counters (zero when r
// has no such family).
func admissionCounts(t *testing.T, r *MetricsRegistry) AdmissionCounters {
	t.Helper()
	families, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	f := findFamily(families, admissionFamily)
	if f == nil {
		return AdmissionCounters{}
	}
	if f.Type != MetricTypeCounter || f.Help == "" || len(f.Series) != 8 {
		t.Fatalf("family %+v", f)
	}
	label := func(s MetricSeries, name string) string {
		for i, l := range f.Labels {
			if l == name {
				return s.LabelValues[i]
			}
		}
		t.Fatalf("family %s has no label %q: %v", f.Name, name, f.Labels)
		return ""
	}
	var c AdmissionCounters
	fields := map[[2]string]*uint64{
		{"foreground", "ok"}: &c.ForegroundOK, {"foreground", "busy"}: &c.ForegroundBusy,
		{"foreground", "throttled"}: &c.ForegroundThrottled, {"foreground", "not_leader"}: &c.ForegroundNotLeader,
		{"background", "ok"}: &c.BackgroundOK, {"background", "busy"}: &c.BackgroundBusy,
		{"background", "throttled"}: &c.BackgroundThrottled, {"background", "not_leader"}: &c.BackgroundNotLeader,
	}
	for _, s := range f.Series {
		p := fields[[2]string{label(s, "class"), label(s, "result")}]
		if p == nil {
			t.Fatalf("unexpected series %v", s.LabelValues)
		}
		*p = s.Value
	}
	return c
}

func addCounters(a, b AdmissionCounters) AdmissionCounters {
	return AdmissionCounters{
		a.ForegroundOK + b.ForegroundOK, a.ForegroundBusy + b.ForegroundBusy,
		a.ForegroundThrottled + b.ForegroundThrottled, a.ForegroundNotLeader + b.ForegroundNotLeader,
		a.BackgroundOK + b.BackgroundOK, a.BackgroundBusy + b.BackgroundBusy,
		a.BackgroundThrottled + b.BackgroundThrottled, a.BackgroundNotLeader + b.BackgroundNotLeader,
	}
}

func TestMetricsRegistriesAreIsolated(t *testing.T) {
	r1, r2 := newTestRegistry(t), newTestRegistry(t)
	for _, r := range []*MetricsRegistry{r1, r2} {
		if families, err := r.Snapshot(); err != nil || len(families) != 0 {
			t.Fatalf("fresh registry: %v %v", families, err)
		}
		if text, err := r.Render(); err != nil || text != "" {
			t.Fatalf("fresh registry renders %q, %v", text, err)
		}
	}
	global, err := GlobalMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer global.Close()
	globalBefore := admissionCounts(t, global)

	want1 := admitMix(t, slotIn(t, r1))
	if got := admissionCounts(t, r1); got != want1 {
		t.Fatalf("r1 %+v, want %+v", got, want1)
	}
	if got := admissionCounts(t, r2); got != (AdmissionCounters{}) {
		t.Fatalf("r2 sees r1's slot: %+v", got)
	}
	// Two slots in r2 sum; r1 does not see them.
	want2 := addCounters(admitMix(t, slotIn(t, r2)), admitMix(t, slotIn(t, r2)))
	if got := admissionCounts(t, r2); got != want2 {
		t.Fatalf("r2 %+v, want %+v", got, want2)
	}
	if got := admissionCounts(t, r1); got != want1 {
		t.Fatalf("r1 changed: %+v", got)
	}
	// NewSlot counts in the process-wide registry only. Other tests may run
	// in parallel with this one; none does, so the delta is exact.
	wantG := addCounters(globalBefore, admitMix(t, newTestSlot(t, Limits{MaxQueuedControls: 3, MaxQueuedBackgroundControls: 1}, true)))
	if got := admissionCounts(t, global); got != wantG {
		t.Fatalf("global %+v, want %+v", got, wantG)
	}
	if got := admissionCounts(t, r1); got != want1 {
		t.Fatalf("r1 sees a global slot: %+v", got)
	}
}

// Slots keep counting in a registry after its handle is closed, and the
// counts of a closed slot handle stay.
func TestMetricsRegistryOutlivesItsHandle(t *testing.T) {
	r := newTestRegistry(t)
	s := slotIn(t, r)
	view, err := r.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	r.Close()
	want := admitMix(t, s)
	s.Close()
	if got := admissionCounts(t, view); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

func TestMetricsRegistryClose(t *testing.T) {
	r, err := NewMetricsRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r.Close()
	if _, err := r.Snapshot(); err != ErrHandleClosed {
		t.Errorf("Snapshot: %v", err)
	}
	if _, err := r.Render(); err != ErrHandleClosed {
		t.Errorf("Render: %v", err)
	}
	if _, err := r.Clone(); err != ErrHandleClosed {
		t.Errorf("Clone: %v", err)
	}
	if _, err := NewSlotIn(r, 1, Limits{}); err != ErrHandleClosed {
		t.Errorf("NewSlotIn: %v", err)
	}
	if _, err := NewSlotIn(nil, 1, Limits{}); err != ErrHandleClosed {
		t.Errorf("NewSlotIn(nil): %v", err)
	}
	// A Collector of a closed registry reports the error on every scrape.
	reg := prometheus.NewRegistry()
	reg.MustRegister(r.Collector())
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), ErrHandleClosed.Error()) {
		t.Errorf("Gather: %v", err)
	}
	var nilReg *MetricsRegistry
	nilReg.Close()
}

func TestFinalizerReleasesForgottenRegistries(t *testing.T) {
	for i := 0; i < 50; i++ {
		r, err := NewMetricsRegistry()
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSlotIn(r, uint64(i+1), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Admit(ControlTransferLeader, ProposalClassForeground, 1)
		if _, err := GlobalMetrics(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}

// canonical writes a family as text with its metrics sorted, so that two
// sources of the same family compare equal whatever their order.
func canonical(t *testing.T, mf *dto.MetricFamily) string {
	t.Helper()
	var lines []string
	for _, m := range mf.GetMetric() {
		var b strings.Builder
		pairs := append([]*dto.LabelPair(nil), m.GetLabel()...)
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].GetName() < pairs[j].GetName() })
		for _, l := range pairs {
			fmt.Fprintf(&b, "%s=%q,", l.GetName(), l.GetValue())
		}
		var v float64
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			v = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			v = m.GetGauge().GetValue()
		default:
			v = m.GetUntyped().GetValue()
		}
		lines = append(lines, fmt.Sprintf("{%s} %v", b.String(), v))
	}
	sort.Strings(lines)
	return fmt.Sprintf("%s %v %q\n%s", mf.GetName(), mf.GetType(), mf.GetHelp(), strings.Join(lines, "\n"))
}

func parseRender(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("render is not valid text exposition: %v\n%s", err, text)
	}
	return families
}

// The Collector reports exactly what the library renders, for every family.
func TestCollectorMatchesRender(t *testing.T) {
	r := newTestRegistry(t)
	c := r.Collector()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	if got, err := reg.Gather(); err != nil || len(got) != 0 {
		t.Fatalf("empty registry gathers %v, %v", got, err)
	}
	admitMix(t, slotIn(t, r))
	admitMix(t, slotIn(t, r))

	r.renderHint.Store(1) // take the BUFFER_TOO_SMALL path first
	text, err := r.Render()
	if err != nil {
		t.Fatal(err)
	}
	rendered := parseRender(t, text)
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snapshot) == 0 || len(gathered) != len(snapshot) || len(rendered) != len(snapshot) {
		t.Fatalf("%d families gathered, %d rendered, %d in the snapshot", len(gathered), len(rendered), len(snapshot))
	}
	for _, g := range gathered {
		want, ok := rendered[g.GetName()]
		if !ok {
			t.Fatalf("gathered %s, which Render does not print", g.GetName())
		}
		if a, b := canonical(t, g), canonical(t, want); a != b {
			t.Errorf("Collector:\n%s\nRender:\n%s", a, b)
		}
		f := findFamily(snapshot, g.GetName())
		if f == nil || len(g.GetMetric()) != len(f.Series) {
			t.Errorf("%s: %d series gathered, snapshot %+v", g.GetName(), len(g.GetMetric()), f)
		}
	}
	if got := admissionCounts(t, r); got.ForegroundOK != 4 || got.BackgroundNotLeader != 2 {
		t.Fatalf("admission %+v", got)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	// A second Render reuses the remembered size.
	if again, err := r.Render(); err != nil || again != text {
		t.Fatalf("second render: %q %v", again, err)
	}
}

// NewCollector and RenderMetrics read the process-wide registry.
func TestGlobalCollectorAndRender(t *testing.T) {
	newTestSlot(t, Limits{}, true) // the global registry has the admission family
	c := NewCollector()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	text, err := RenderMetrics()
	if err != nil {
		t.Fatal(err)
	}
	rendered := parseRender(t, text)
	if len(gathered) == 0 || len(gathered) != len(rendered) {
		t.Fatalf("%d families gathered, %d rendered", len(gathered), len(rendered))
	}
	for _, g := range gathered {
		if want, ok := rendered[g.GetName()]; !ok || want.GetHelp() != g.GetHelp() || want.GetType() != g.GetType() ||
			len(want.GetMetric()) != len(g.GetMetric()) {
			t.Errorf("%s: gathered %v, rendered %v", g.GetName(), g, want)
		}
	}
	if n := testutil.CollectAndCount(c, admissionFamily); n != 8 {
		t.Fatalf("CollectAndCount(%s) = %d, want 8", admissionFamily, n)
	}
	// A second Collector for the same registry is refused at Gather time:
	// the registry checks what unchecked collectors report.
	dup := prometheus.NewRegistry()
	dup.MustRegister(c, NewCollector())
	if _, err := dup.Gather(); err == nil {
		t.Error("two Collectors of one registry gathered without error")
	}
}

func TestMetricTypeString(t *testing.T) {
	if MetricTypeCounter.String() != "counter" || MetricTypeGauge.String() != "gauge" || MetricType(7).String() != "metric_type(7)" {
		t.Fatal(MetricTypeCounter, MetricTypeGauge, MetricType(7))
	}
}
