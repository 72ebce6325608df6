//go:build !cgo || wkcore_purego

package deliverytag

import (
	"runtime"
	"sync"

	"github.com/wukongim/wkcore/go/metrics"
)

// goMetrics tracks the live caches and leaders; one that was collected
// leaves its counters behind (as the Rust core's retired sources do) and
// its gauges stop counting.
var goMetrics struct {
	mu      sync.Mutex
	used    bool
	live    map[*tagStats]struct{}
	retired Counts
}

// trackStats counts s in Metrics while owner is reachable.
func trackStats[T any](owner *T, s *tagStats) {
	goMetrics.mu.Lock()
	if goMetrics.live == nil {
		goMetrics.live = make(map[*tagStats]struct{})
	}
	goMetrics.used = true
	goMetrics.live[s] = struct{}{}
	goMetrics.mu.Unlock()
	runtime.SetFinalizer(owner, func(*T) {
		goMetrics.mu.Lock()
		delete(goMetrics.live, s)
		addCounters(&goMetrics.retired, s.counts())
		goMetrics.mu.Unlock()
	})
}

func addCounters(dst *Counts, c Counts) {
	for i := range dst.Lookups {
		dst.Lookups[i] += c.Lookups[i]
	}
	dst.Stored += c.Stored
	dst.Stale += c.Stale
	dst.ReclaimedBodies += c.ReclaimedBodies
	dst.ReclaimedRefs += c.ReclaimedRefs
}

// Families returns the delivery-tag families of the Go caches and leaders.
func (tagMetrics) Families() ([]metrics.Family, error) {
	goMetrics.mu.Lock()
	defer goMetrics.mu.Unlock()
	if !goMetrics.used {
		return nil, nil
	}
	sum := goMetrics.retired
	for s := range goMetrics.live {
		c := s.counts()
		addCounters(&sum, c)
		sum.Tags += c.Tags
		sum.UIDs += c.UIDs
	}
	family := func(name, help string, typ metrics.Type, label string, values []string, counts []uint64) metrics.Family {
		f := metrics.Family{Name: name, Help: help, Type: typ, Labels: []string{label}}
		for i, v := range values {
			f.Series = append(f.Series, metrics.Series{LabelValues: []string{v}, Value: counts[i]})
		}
		return f
	}
	reasons := make([]string, len(lookupReasons))
	for i, r := range lookupReasons {
		reasons[i] = string(r)
	}
	return []metrics.Family{
		family(familyLookups, "Delivery tag look-ups, by result.", metrics.Counter, "result", reasons, sum.Lookups[:]),
		family(familyStores, "Delivery tag stores and builds: stored, or refused as stale.", metrics.Counter, "result",
			[]string{"stored", "stale"}, []uint64{sum.Stored, sum.Stale}),
		family(familyCached, "Delivery tag bodies and subscriber UIDs held.", metrics.Gauge, "kind",
			[]string{"tags", "uids"}, []uint64{sum.Tags, sum.UIDs}),
		family(familyReclaimed, "Delivery tag bodies reclaimed by TTL cleanup, and channel references unlinked.",
			metrics.Counter, "kind", []string{"bodies", "refs"}, []uint64{sum.ReclaimedBodies, sum.ReclaimedRefs}),
	}, nil
}
