// Package metrics holds the generic shape of wkcore's metric families, with no
// dependency: a Source (such as multiraft.MetricsRegistry) reports Families,
// Render writes them as Prometheus text, and the separate module
// github.com/wukongim/wkcore/go/prometheus turns them into a
// prometheus.Collector. Nothing here names a family: a family a system adds is
// exported with no change to this package.
package metrics

import (
	"io"
	"strconv"
	"strings"
)

// Type is the Prometheus type of a family.
type Type uint32

// The metric types; the values are the C ABI's enum wk_metric_type.
const (
	Counter Type = 0
	Gauge   Type = 1
)

// String returns "counter", "gauge", or "metric_type(N)" for a type of a
// newer library.
func (t Type) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	}
	return "metric_type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Family is one metric family at one moment: its name, help, type, label
// names and every series (zeros included).
type Family struct {
	// Name is the metric name.
	Name string
	// Help is the HELP text (unescaped).
	Help string
	// Type is counter or gauge.
	Type Type
	// Labels are the label names, in order.
	Labels []string
	// Series are the family's series, in the source's order.
	Series []Series
}

// Series is one series of a family.
type Series struct {
	// LabelValues has one value per label name of the family, in its order.
	LabelValues []string
	// Value is the series' value (counters and gauges are non-negative integers).
	Value uint64
}

// Source reports the families of one registry. Families returns one moment's
// values; it is safe for concurrent use.
type Source interface {
	Families() ([]Family, error)
}

// Render writes families in the Prometheus text exposition format 0.0.4: a
// HELP and a TYPE line per family, then one line per series.
func Render(w io.Writer, families []Family) error {
	var b strings.Builder
	for _, f := range families {
		b.WriteString("# HELP ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		b.WriteString(escapeHelp(f.Help))
		b.WriteString("\n# TYPE ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		switch f.Type {
		case Counter, Gauge:
			b.WriteString(f.Type.String())
		default:
			b.WriteString("untyped")
		}
		b.WriteByte('\n')
		for _, s := range f.Series {
			b.WriteString(f.Name)
			if len(f.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range f.Labels {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(l)
					b.WriteString(`="`)
					if i < len(s.LabelValues) {
						b.WriteString(escapeLabel(s.LabelValues[i]))
					}
					b.WriteByte('"')
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(strconv.FormatUint(s.Value, 10))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// Keep returns the families of fams whose name keep accepts, in order (fams
// itself is not changed).
func Keep(fams []Family, keep func(name string) bool) []Family {
	out := make([]Family, 0, len(fams))
	for _, f := range fams {
		if keep(f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// Exclude returns a Source with src's families but those named in names: a
// host that exports some families itself (WuKongIM's own owner or admission
// families, say) registers wkcore's collector over this, so no name is
// collected twice.
func Exclude(src Source, names ...string) Source {
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	return excluded{src: src, drop: drop}
}

type excluded struct {
	src  Source
	drop map[string]bool
}

// Families returns the source's families without the excluded ones.
func (e excluded) Families() ([]Family, error) {
	fams, err := e.src.Families()
	if err != nil {
		return nil, err
	}
	return Keep(fams, func(n string) bool { return !e.drop[n] }), nil
}
