//go:build !cgo || wkcore_purego

package mqttsession

import (
	"runtime"
	"sync"

	"github.com/wukongim/wkcore/go/metrics"
)

// goMetrics tracks the live registries made by NewOwners; a registry that
// was collected leaves its sweep counts behind (as the Rust core's retired
// sources do) and its gauges stop counting.
var goMetrics struct {
	mu      sync.Mutex
	used    bool
	live    map[*mutexOwners]struct{}
	retired [3]uint64
}

// trackOwners counts m in Metrics while r is reachable.
func trackOwners(r *Owners) {
	m := r.m
	goMetrics.mu.Lock()
	if goMetrics.live == nil {
		goMetrics.live = make(map[*mutexOwners]struct{})
	}
	goMetrics.used = true
	goMetrics.live[m] = struct{}{}
	goMetrics.mu.Unlock()
	runtime.SetFinalizer(r, func(*Owners) {
		goMetrics.mu.Lock()
		delete(goMetrics.live, m)
		c := m.sweepCounts()
		for i := range c {
			goMetrics.retired[i] += c[i]
		}
		goMetrics.mu.Unlock()
	})
}

// Families returns the owner families of the Go registries.
func (ownerMetrics) Families() ([]metrics.Family, error) {
	goMetrics.mu.Lock()
	defer goMetrics.mu.Unlock()
	if !goMetrics.used {
		return nil, nil
	}
	var work [7]uint64
	sweep := goMetrics.retired
	for m := range goMetrics.live {
		s := m.snapshot()
		for i, v := range []int{s.Held, s.Pending, s.Active, s.Closing, s.Operations, s.Deadlines, s.Uncertain} {
			work[i] += uint64(v)
		}
		c := m.sweepCounts()
		for i := range c {
			sweep[i] += c[i]
		}
	}
	w := metrics.Family{Name: familyWork, Help: "MQTT owner registry work, by state.", Type: metrics.Gauge,
		Labels: []string{"state"}}
	for i, s := range workStates {
		w.Series = append(w.Series, metrics.Series{LabelValues: []string{s}, Value: work[i]})
	}
	sw := metrics.Family{Name: familySweep, Help: "MQTT owner sweeps: turns run, owners visited, failed turns.",
		Type: metrics.Counter, Labels: []string{"event"}}
	for i, e := range sweepEvents {
		sw.Series = append(sw.Series, metrics.Series{LabelValues: []string{e}, Value: sweep[i]})
	}
	return []metrics.Family{w, sw}, nil
}
