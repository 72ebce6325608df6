package wkprometheus_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/wukongim/wkcore/go/metrics"
	"github.com/wukongim/wkcore/go/multiraft"
	wkprometheus "github.com/wukongim/wkcore/go/prometheus"
)

const admissionFamily = "wukongim_slot_proposal_admission_total"

// fakeSource returns fixed families, or err.
type fakeSource struct {
	families []metrics.Family
	err      error
	calls    int
	mu       sync.Mutex
}

func (s *fakeSource) Families() ([]metrics.Family, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	return s.families, nil
}

func fakeFamilies() []metrics.Family {
	return []metrics.Family{
		{
			Name: "fake_requests_total", Help: `Requests, by "kind" \ with a backslash` + "\nand a newline.",
			Type: metrics.Counter, Labels: []string{"kind", "code"},
			Series: []metrics.Series{
				{LabelValues: []string{"read", "200"}, Value: 7},
				{LabelValues: []string{"write", `a"b\c` + "\nd"}, Value: 0},
				{LabelValues: []string{"read", "500"}, Value: 1 << 40},
			},
		},
		{Name: "fake_queue_depth", Help: "Queue depth.", Type: metrics.Gauge,
			Series: []metrics.Series{{Value: 3}}},
		{Name: "fake_future_thing", Help: "A type of a newer core.", Type: metrics.Type(9),
			Labels: []string{"x"}, Series: []metrics.Series{{LabelValues: []string{"y"}, Value: 5}}},
		{Name: "fake_empty_total", Help: "No series yet.", Type: metrics.Counter, Labels: []string{"a"}},
	}
}

const fakeExposition = `# HELP fake_future_thing A type of a newer core.
# TYPE fake_future_thing untyped
fake_future_thing{x="y"} 5
# HELP fake_queue_depth Queue depth.
# TYPE fake_queue_depth gauge
fake_queue_depth 3
# HELP fake_requests_total Requests, by "kind" \\ with a backslash\nand a newline.
# TYPE fake_requests_total counter
fake_requests_total{code="200",kind="read"} 7
fake_requests_total{code="500",kind="read"} 1.099511627776e+12
fake_requests_total{code="a\"b\\c\nd",kind="write"} 0
`

func TestFakeSourceExposition(t *testing.T) {
	src := &fakeSource{families: fakeFamilies()}
	c := wkprometheus.New(src)
	if err := testutil.CollectAndCompare(c, strings.NewReader(fakeExposition)); err != nil {
		t.Fatal(err)
	}
	if src.calls != 1 {
		t.Fatalf("one scrape called Families %d times, want 1", src.calls)
	}
	if n := testutil.CollectAndCount(c); n != 5 {
		t.Fatalf("CollectAndCount = %d, want 5", n)
	}
}

// The collector reports what metrics.Render writes, escaping included, for
// every family that has series.
func TestFakeSourceMatchesRender(t *testing.T) {
	families := fakeFamilies()[:3]
	// Prometheus writes label names sorted and the text parser keeps their
	// order, so give the first family its labels in that order.
	f := &families[0]
	f.Labels = []string{f.Labels[1], f.Labels[0]}
	series := make([]metrics.Series, len(f.Series))
	for i, s := range f.Series {
		series[i] = metrics.Series{LabelValues: []string{s.LabelValues[1], s.LabelValues[0]}, Value: s.Value}
	}
	f.Series = series
	var b strings.Builder
	if err := metrics.Render(&b, families); err != nil {
		t.Fatal(err)
	}
	c := wkprometheus.New(&fakeSource{families: families})
	if err := testutil.CollectAndCompare(c, strings.NewReader(b.String())); err != nil {
		t.Fatalf("%v\nRender wrote:\n%s", err, b.String())
	}
}

func TestDescribeSendsNothing(t *testing.T) {
	ch := make(chan *prometheus.Desc, 16)
	wkprometheus.New(&fakeSource{families: fakeFamilies()}).Describe(ch)
	close(ch)
	if n := len(ch); n != 0 {
		t.Fatalf("Describe sent %d descriptors, want none (unchecked collector)", n)
	}
}

// admissions makes a few decisions of every kind on a queue counting in reg:
// foreground ok 2, busy 1, not_leader 1; background ok 1, busy 1, throttled 1,
// not_leader 1.
func admissions(t *testing.T, reg *multiraft.MetricsRegistry) {
	t.Helper()
	q, err := multiraft.NewControlQueue[int](1, multiraft.Options{
		Metrics: reg,
		Limits:  multiraft.Limits{MaxQueuedControls: 3, MaxQueuedBackgroundControls: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	fg, bg := multiraft.ProposalClassForeground, multiraft.ProposalClassBackground
	steps := []struct {
		class multiraft.ProposalClass
		want  error
	}{
		{fg, multiraft.ErrNotLeader},
		{bg, multiraft.ErrNotLeader},
		{"", nil}, // SetLeader
		{fg, nil},
		{bg, nil},
		{bg, multiraft.ErrBackgroundProposalThrottled},
		{fg, nil},
		{fg, multiraft.ErrSlotBusy},
		{bg, multiraft.ErrSlotBusy},
	}
	for i, s := range steps {
		if s.class == "" {
			if err := q.SetLeader(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := q.Admit(multiraft.ControlPropose, s.class, i)
		if (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
			t.Fatalf("step %d (%s): Admit = %v, want %v", i, s.class, err, s.want)
		}
	}
}

const admissionHelp = "Slot proposal admission decisions, by proposal class and result."

func admissionExposition(name, labels string) string {
	return `# HELP ` + name + ` ` + admissionHelp + `
# TYPE ` + name + ` counter
` + name + `{class="background",` + labels + `result="busy"} 1
` + name + `{class="background",` + labels + `result="not_leader"} 1
` + name + `{class="background",` + labels + `result="ok"} 1
` + name + `{class="background",` + labels + `result="throttled"} 1
` + name + `{class="foreground",` + labels + `result="busy"} 1
` + name + `{class="foreground",` + labels + `result="not_leader"} 1
` + name + `{class="foreground",` + labels + `result="ok"} 2
` + name + `{class="foreground",` + labels + `result="throttled"} 0
`
}

func newRegistry(t *testing.T) *multiraft.MetricsRegistry {
	t.Helper()
	reg, err := multiraft.NewMetricsRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

func TestMultiraftRegistry(t *testing.T) {
	reg := newRegistry(t)
	admissions(t, reg)
	c := wkprometheus.New(reg)
	if err := testutil.CollectAndCompare(c, strings.NewReader(admissionExposition(admissionFamily, "")), admissionFamily); err != nil {
		t.Fatalf("%s build: %v", multiraft.Implementation, err)
	}
	// The registry's own Render says the same.
	text, err := reg.Render()
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(text), admissionFamily); err != nil {
		t.Fatalf("collector and Render differ: %v\nRender:\n%s", err, text)
	}
}

func TestConstLabels(t *testing.T) {
	reg := newRegistry(t)
	admissions(t, reg)
	c := wkprometheus.New(reg,
		wkprometheus.WithConstLabels(prometheus.Labels{"node": "0"}),
		wkprometheus.WithConstLabels(prometheus.Labels{"node": "7", "cluster": "c1"}))
	want := admissionExposition(admissionFamily, `cluster="c1",node="7",`)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), admissionFamily); err != nil {
		t.Fatal(err)
	}
}

// hostRegistry is a registry where the host (as WuKongIM does) already has a
// family of the admission family's name, with other help.
func hostRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	r := prometheus.NewRegistry()
	host := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: admissionFamily, Help: "The host's own help.",
	}, []string{"class", "result"})
	r.MustRegister(host)
	host.WithLabelValues("foreground", "ok").Add(42)
	return r
}

const hostExposition = `# HELP ` + admissionFamily + ` The host's own help.
# TYPE ` + admissionFamily + ` counter
` + admissionFamily + `{class="foreground",result="ok"} 42
`

func TestSameNameWithoutRenameFailsGather(t *testing.T) {
	r := hostRegistry(t)
	reg := newRegistry(t)
	admissions(t, reg)
	// Unchecked: registration succeeds, the conflict shows at Gather.
	if _, err := wkprometheus.Register(r, reg); err != nil {
		t.Fatalf("Register = %v, want nil (unchecked collector)", err)
	}
	_, err := r.Gather()
	if err == nil || !strings.Contains(err.Error(), "has help") || !strings.Contains(err.Error(), admissionFamily) {
		t.Fatalf("Gather = %v, want the duplicate family's help conflict", err)
	}
}

func TestRenameAvoidsDuplicate(t *testing.T) {
	cases := []struct {
		name, exported string
		opt            wkprometheus.Option
	}{
		{"namespace", "wkcore_" + admissionFamily, wkprometheus.WithNamespace("wkcore")},
		{"rename", "wkcore_slot_proposal_admission_total", wkprometheus.WithRename(func(n string) string {
			return strings.Replace(n, "wukongim_", "wkcore_", 1)
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := hostRegistry(t)
			reg := newRegistry(t)
			admissions(t, reg)
			if _, err := wkprometheus.Register(r, reg, tc.opt, wkprometheus.WithConstLabels(prometheus.Labels{"node": "1"})); err != nil {
				t.Fatal(err)
			}
			want := hostExposition + admissionExposition(tc.exported, `node="1",`)
			if err := testutil.GatherAndCompare(r, strings.NewReader(want), admissionFamily, tc.exported); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRenameThenNamespace(t *testing.T) {
	src := &fakeSource{families: fakeFamilies()[1:2]}
	c := wkprometheus.New(src, wkprometheus.WithNamespace("ns"),
		wkprometheus.WithRename(func(n string) string { return "renamed_" + n }))
	want := `# HELP ns_renamed_fake_queue_depth Queue depth.
# TYPE ns_renamed_fake_queue_depth gauge
ns_renamed_fake_queue_depth 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

var errSource = errors.New("source is broken")

func TestSourceErrorIsInvalidMetric(t *testing.T) {
	r := prometheus.NewRegistry()
	ok := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other_gauge", Help: "Another collector."})
	r.MustRegister(ok)
	if _, err := wkprometheus.Register(r, &fakeSource{err: errSource}); err != nil {
		t.Fatal(err)
	}
	mfs, err := r.Gather()
	if err == nil {
		t.Fatal("Gather = nil error, want the source's error")
	}
	// One error: Gather returns it unwrapped from its MultiError.
	if !errors.Is(err, errSource) {
		t.Fatalf("Gather error = %#v, want one error matching errSource", err)
	}
	if !strings.Contains(err.Error(), "wkprometheus: metrics source: source is broken") {
		t.Fatalf("Gather error = %q", err)
	}
	// The other collectors' metrics are still gathered.
	if len(mfs) != 1 || mfs[0].GetName() != "other_gauge" {
		t.Fatalf("Gather families = %v, want other_gauge", mfs)
	}

	// A closed registry is a Source error too.
	reg, err := multiraft.NewMetricsRegistry()
	if err != nil {
		t.Fatal(err)
	}
	c := wkprometheus.New(reg)
	reg.Close()
	if err := testutil.CollectAndCompare(c, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), "metrics source") {
		t.Fatalf("closed registry: %v, want a source error", err)
	}
}

func TestFilter(t *testing.T) {
	src := &fakeSource{families: fakeFamilies()}
	var seen []string
	c := wkprometheus.New(src, wkprometheus.WithNamespace("ns"), wkprometheus.WithFamilies(func(n string) bool {
		seen = append(seen, n)
		return n == "fake_queue_depth"
	}))
	want := `# HELP ns_fake_queue_depth Queue depth.
# TYPE ns_fake_queue_depth gauge
ns_fake_queue_depth 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	// The filter sees the source's names, before the namespace.
	if len(seen) != 4 || seen[0] != "fake_requests_total" {
		t.Fatalf("filter saw %q", seen)
	}

	// Filtering out the admission family of a real registry leaves nothing of it.
	reg := newRegistry(t)
	admissions(t, reg)
	c = wkprometheus.New(reg, wkprometheus.WithFamilies(func(n string) bool { return n != admissionFamily }))
	if n := testutil.CollectAndCount(c, admissionFamily); n != 0 {
		t.Fatalf("filtered family reported %d series", n)
	}
}

func TestInvalidFamiliesFailGather(t *testing.T) {
	cases := map[string]struct {
		families []metrics.Family
		opts     []wkprometheus.Option
		want     string
	}{
		"label values": {
			families: []metrics.Family{{Name: "a_total", Help: "h", Labels: []string{"x", "y"},
				Series: []metrics.Series{{LabelValues: []string{"only"}, Value: 1}}}},
			want: "inconsistent label cardinality",
		},
		"const label clash": {
			families: []metrics.Family{{Name: "a_total", Help: "h", Labels: []string{"node"},
				Series: []metrics.Series{{LabelValues: []string{"1"}, Value: 1}}}},
			opts: []wkprometheus.Option{wkprometheus.WithConstLabels(prometheus.Labels{"node": "2"})},
			want: "duplicate label names",
		},
		"bad name": {
			families: []metrics.Family{{Name: "a_total", Help: "h", Series: []metrics.Series{{Value: 1}}}},
			opts:     []wkprometheus.Option{wkprometheus.WithRename(func(string) string { return "not a name" })},
			want:     "is not a valid metric name",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := prometheus.NewRegistry()
			if _, err := wkprometheus.Register(r, &fakeSource{families: tc.families}, tc.opts...); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Gather(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Gather = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Scrapes run while queues admit; run with -race.
func TestConcurrentScrapes(t *testing.T) {
	reg := newRegistry(t)
	q, err := multiraft.NewControlQueue[int](2, multiraft.Options{Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.SetLeader(); err != nil {
		t.Fatal(err)
	}
	r := prometheus.NewRegistry()
	if _, err := wkprometheus.Register(r, reg); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if err := q.Admit(multiraft.ControlPropose, multiraft.ProposalClassForeground, i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			if _, err := r.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != admissionFamily {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := m.GetLabel()
			if l[0].GetValue() == "foreground" && l[1].GetValue() == "ok" {
				if got := m.GetCounter().GetValue(); got != n {
					t.Fatalf("foreground ok = %v, want %d", got, n)
				}
				return
			}
		}
	}
	t.Fatal("foreground ok series not found")
}
