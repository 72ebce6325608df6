package multiraft

import (
	"strings"
	"testing"

	"github.com/wukongim/wkcore/go/metrics"
)

// checkRegistry checks that r holds exactly the admission family, with the
// values of want (the registry's only queue's counters).
func checkRegistry(t *testing.T, r *MetricsRegistry, want AdmissionCounters) {
	t.Helper()
	families, err := r.Families()
	if err != nil {
		t.Fatalf("Families: %v", err)
	}
	if len(families) != 1 {
		t.Fatalf("%d families, want the admission family: %+v", len(families), families)
	}
	f := families[0]
	if f.Name != "wukongim_slot_proposal_admission_total" || f.Type != metrics.Counter ||
		f.Help != "Slot proposal admission decisions, by proposal class and result." ||
		strings.Join(f.Labels, ",") != "class,result" || len(f.Series) != 8 {
		t.Fatalf("family %+v", f)
	}
	i := 0
	for _, class := range scenarioClasses {
		for _, result := range scenarioResults {
			s := f.Series[i]
			i++
			if len(s.LabelValues) != 2 || s.LabelValues[0] != string(class) || s.LabelValues[1] != string(result) {
				t.Errorf("series %d: labels %q, want %s, %s", i-1, s.LabelValues, class, result)
			}
			if s.Value != want.Get(class, result) {
				t.Errorf("series %s/%s = %d, want %d", class, result, s.Value, want.Get(class, result))
			}
		}
	}
}

// A queue counts its proposal decisions in its registry, which renders them
// in the Prometheus text format; a registry sums its queues; a fresh one
// has no family until a queue is created in it.
func TestMetricsRegistry(t *testing.T) {
	r := newTestRegistry(t)
	if families, err := r.Families(); err != nil || len(families) != 0 {
		t.Fatalf("fresh registry: %+v, %v", families, err)
	}
	a, err := NewControlQueue[int](1, Options{Limits: Limits{MaxQueuedControls: 2, MaxQueuedBackgroundControls: 1}, Metrics: r})
	must(t, err)
	defer a.Close()
	b, err := NewControlQueue[int](2, Options{Metrics: r})
	must(t, err)
	defer b.Close()
	checkRegistry(t, r, AdmissionCounters{})
	_ = a.Admit(ControlPropose, ProposalClassForeground, 1) // not leader
	must(t, a.SetLeader())
	must(t, a.Admit(ControlPropose, ProposalClassBackground, 2))
	_ = a.Admit(ControlPropose, ProposalClassBackground, 3)                      // throttled
	_, _ = a.AdmitBatch(ControlPropose, ProposalClassForeground, []int{4, 5, 6}) // 1 ok, 2 busy
	must(t, b.SetLeader())
	_, _ = b.AdmitBatch(ControlPropose, ProposalClassForeground, []int{7, 8})
	_ = a.Admit(ControlCompactLog, ProposalClassForeground, 9) // not a proposal
	want := AdmissionCounters{ForegroundOK: 3, ForegroundBusy: 2, ForegroundNotLeader: 1, BackgroundOK: 1, BackgroundThrottled: 1}
	ca, cb := mustCounters[int](t, a), mustCounters[int](t, b)
	if addCounters(ca, cb) != want || cb != (AdmissionCounters{ForegroundOK: 2}) {
		t.Fatalf("counters %+v and %+v", ca, cb)
	}
	checkRegistry(t, r, want)
	text, err := r.Render()
	must(t, err)
	for _, line := range []string{
		"# HELP wukongim_slot_proposal_admission_total Slot proposal admission decisions, by proposal class and result.\n",
		"# TYPE wukongim_slot_proposal_admission_total counter\n",
		`wukongim_slot_proposal_admission_total{class="foreground",result="ok"} 3` + "\n",
		`wukongim_slot_proposal_admission_total{class="background",result="throttled"} 1` + "\n",
		`wukongim_slot_proposal_admission_total{class="background",result="not_leader"} 0` + "\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("Render lacks %q:\n%s", line, text)
		}
	}
	if strings.Count(text, "\n") != 10 {
		t.Errorf("Render: %d lines, want 10:\n%s", strings.Count(text, "\n"), text)
	}
	// Closing the handle leaves the queues counting; the handle refuses.
	must(t, r.Close())
	if _, err := r.Families(); err != ErrHandleClosed {
		t.Fatalf("Families after Close: %v", err)
	}
	if _, err := r.Render(); err != ErrHandleClosed {
		t.Fatalf("Render after Close: %v", err)
	}
	drainAll[int](t, a)
	must(t, a.Admit(ControlPropose, ProposalClassForeground, 10))
}

// The process-wide registry: Close releases nothing, a second Close is
// refused, and a new handle still reads it.
func TestGlobalMetrics(t *testing.T) {
	g, err := GlobalMetrics()
	must(t, err)
	q, err := NewControlQueue[int](3, Options{})
	must(t, err)
	defer q.Close()
	must(t, q.SetLeader())
	before := globalOK(t)
	must(t, q.Admit(ControlPropose, ProposalClassForeground, 1))
	if after := globalOK(t); after < before+1 {
		t.Errorf("global foreground/ok %d, then %d", before, after)
	}
	must(t, g.Close())
	if err := g.Close(); err != ErrHandleClosed {
		t.Errorf("second Close: %v", err)
	}
	if _, err := g.Families(); err != ErrHandleClosed {
		t.Errorf("Families after Close: %v", err)
	}
	globalOK(t)
}

func globalOK(t *testing.T) uint64 {
	t.Helper()
	g, err := GlobalMetrics()
	must(t, err)
	families, err := g.Families()
	must(t, err)
	for _, f := range families {
		if f.Name == "wukongim_slot_proposal_admission_total" {
			for _, s := range f.Series {
				if s.LabelValues[0] == "foreground" && s.LabelValues[1] == "ok" {
					return s.Value
				}
			}
		}
	}
	t.Fatalf("no admission family in the global registry: %+v", families)
	return 0
}
