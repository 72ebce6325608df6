package wkprometheus

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/wukongim/wkcore/go/metrics"
)

// Collector is a prometheus.Collector reporting the families of a
// metrics.Source at every scrape. It is unchecked (Describe sends nothing);
// see the package documentation. It is safe for concurrent use.
type Collector struct {
	src         metrics.Source
	constLabels prometheus.Labels
	namespace   string
	rename      func(string) string
	filter      func(string) bool
}

// Option configures a Collector.
type Option func(*Collector)

// WithConstLabels adds labels with fixed values (a node id, say) to every
// metric the Collector reports. Several calls merge; a later value of the same
// label wins. A label that is also one of a family's own labels makes that
// family's metrics invalid at Gather.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *Collector) {
		if c.constLabels == nil {
			c.constLabels = make(prometheus.Labels, len(labels))
		}
		for k, v := range labels {
			c.constLabels[k] = v
		}
	}
}

// WithNamespace prefixes every reported name with namespace and an
// underscore: WithNamespace("wkcore") reports
// wukongim_slot_proposal_admission_total as
// wkcore_wukongim_slot_proposal_admission_total. The prefix is applied after
// WithRename. An empty namespace adds nothing.
func WithNamespace(namespace string) Option {
	return func(c *Collector) { c.namespace = namespace }
}

// WithRename maps a family's name (as the Source reports it) to the name it is
// reported under. It lets a host that already has a family of the same name
// register wkcore's under another; the package documentation describes the
// alternative, the host's own observer. A name that is not a valid Prometheus
// metric name makes the family's metrics invalid at Gather. A later call
// replaces an earlier one; nil restores the identity.
func WithRename(rename func(name string) string) Option {
	return func(c *Collector) { c.rename = rename }
}

// WithFamilies reports only the families for which keep returns true; keep is
// called with the name the Source reports (before WithRename and
// WithNamespace). A later call replaces an earlier one; nil keeps every
// family.
func WithFamilies(keep func(name string) bool) Option {
	return func(c *Collector) { c.filter = keep }
}

// New returns a Collector over src. src must not be nil.
func New(src metrics.Source, opts ...Option) *Collector {
	if src == nil {
		panic("wkprometheus: New with a nil metrics.Source")
	}
	c := &Collector{src: src}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// Register creates a Collector over src and registers it in reg (nil:
// prometheus.DefaultRegisterer). As the Collector is unchecked, a conflict
// with another collector's family shows at Gather, not here.
func Register(reg prometheus.Registerer, src metrics.Source, opts ...Option) (*Collector, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	c := New(src, opts...)
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends nothing: the families are known only at scrape, so the
// Collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect takes one Source.Families() and sends every series of every family
// kept as a const metric. A Source error is sent as an invalid metric, which
// fails the Gather with that error.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	families, err := c.src.Families()
	if err != nil {
		err = fmt.Errorf("wkprometheus: metrics source: %w", err)
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		return
	}
	for i := range families {
		f := &families[i]
		if c.filter != nil && !c.filter(f.Name) {
			continue
		}
		if len(f.Series) == 0 {
			continue
		}
		desc := prometheus.NewDesc(c.name(f.Name), f.Help, f.Labels, c.constLabels)
		vt := valueType(f.Type)
		for _, s := range f.Series {
			m, err := prometheus.NewConstMetric(desc, vt, float64(s.Value), s.LabelValues...)
			if err != nil {
				m = prometheus.NewInvalidMetric(desc, err)
			}
			ch <- m
		}
	}
}

// name is the name family name is reported under.
func (c *Collector) name(name string) string {
	if c.rename != nil {
		name = c.rename(name)
	}
	if c.namespace != "" && name != "" {
		name = c.namespace + "_" + name
	}
	return name
}

func valueType(t metrics.Type) prometheus.ValueType {
	switch t {
	case metrics.Counter:
		return prometheus.CounterValue
	case metrics.Gauge:
		return prometheus.GaugeValue
	}
	return prometheus.UntypedValue
}

var _ prometheus.Collector = (*Collector)(nil)
