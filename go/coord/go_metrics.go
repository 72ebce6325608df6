package coord

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/metrics"
)

var _ metrics.Source = (*MetricsRegistry)(nil)

// Render returns the Prometheus text exposition (format 0.0.4) of every
// family of the registry.
func (r *MetricsRegistry) Render() (string, error) {
	families, err := r.Families()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := metrics.Render(&b, families); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ledgerLabel is a ledger's `ledger` label: its index in the series order.
type ledgerLabel int

const (
	labelClaim ledgerLabel = iota
	labelPending
	labelHandoff
	labelCount
)

var ledgerLabels = [labelCount]string{"claim", "pending", "handoff"}

// event is a counted transition: its index in Counts' field order.
type event int

const (
	evClaimWon event = iota
	evClaimLost
	evFinalizeWon
	evFinalizeDuplicate
	evReconciledTimeout
	evRejectedFull
	evReclaimed
	eventCount
)

// eventCounts are one ledger's counters, in Counts' field order.
type eventCounts [eventCount]uint64

func (c *eventCounts) counts() Counts {
	return Counts{
		ClaimsWon: c[evClaimWon], ClaimsLost: c[evClaimLost],
		FinalizationsWon: c[evFinalizeWon], FinalizationsDuplicate: c[evFinalizeDuplicate],
		ReconciledTimeouts: c[evReconciledTimeout], RejectedFull: c[evRejectedFull], Reclaimed: c[evReclaimed],
	}
}

// The coordination families, as the Rust core declares them
// (core/src/coord/counts.rs): name, help, label names, and which events the
// columns of each ledger's series count, with their label values.
var coordFamilies = [...]struct {
	name, help string
	labels     []string
	columns    []string // the label value after "ledger" of each column ("" for none)
	events     []event
}{
	{"wkcore_coord_claims_total", "Coordination ledger claims, by ledger and result (won, lost).",
		[]string{"ledger", "result"}, []string{"won", "lost"}, []event{evClaimWon, evClaimLost}},
	{"wkcore_coord_finalizations_total", "Coordination ledger finalizations, by ledger and result (won, duplicate).",
		[]string{"ledger", "result"}, []string{"won", "duplicate"}, []event{evFinalizeWon, evFinalizeDuplicate}},
	{"wkcore_coord_reconciled_timeouts_total", "PENDING records the reconciler timed out, by ledger.",
		[]string{"ledger"}, []string{""}, []event{evReconciledTimeout}},
	{"wkcore_coord_rejected_total", "Inserts a coordination ledger refused, by ledger and reason (full).",
		[]string{"ledger", "reason"}, []string{"full"}, []event{evRejectedFull}},
	{"wkcore_coord_reclaimed_total",
		"Terminal records reclaimed after their retention (or removed by compare-and-delete), by ledger.",
		[]string{"ledger"}, []string{""}, []event{evReclaimed}},
}

// coordFamily reports whether name is one of the coordination families.
func coordFamily(name string) bool {
	for _, spec := range coordFamilies {
		if spec.name == name {
			return true
		}
	}
	return false
}

// goRegistry is the pure-Go metrics registry: the coordination families
// summed over every ledger counted in it (closed ones keep their counts, as
// the Rust registry's retired sources do). They appear in Families once a
// ledger was created in it, as the Rust registry's do.
type goRegistry struct {
	used   atomic.Bool
	totals [labelCount][eventCount]atomic.Uint64
}

func (r *goRegistry) add(label ledgerLabel, ev event, n uint64) {
	r.totals[label][ev].Add(n)
}

func (r *goRegistry) families() []metrics.Family {
	if !r.used.Load() {
		return nil
	}
	out := make([]metrics.Family, 0, len(coordFamilies))
	for _, spec := range coordFamilies {
		f := metrics.Family{Name: spec.name, Help: spec.help, Type: metrics.Counter,
			Labels: append([]string(nil), spec.labels...)}
		for label := ledgerLabel(0); label < labelCount; label++ {
			for i, ev := range spec.events {
				values := []string{ledgerLabels[label]}
				if spec.columns[i] != "" {
					values = append(values, spec.columns[i])
				}
				f.Series = append(f.Series, metrics.Series{LabelValues: values, Value: r.totals[label][ev].Load()})
			}
		}
		out = append(out, f)
	}
	return out
}

var globalGoRegistry = sync.OnceValue(func() *goRegistry { return new(goRegistry) })
