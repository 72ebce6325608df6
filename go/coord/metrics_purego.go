//go:build !cgo || wkcore_purego

package coord

import (
	"sync/atomic"

	"github.com/wukongim/wkcore/go/metrics"
)

// MetricsRegistry is a set of metric families where ledgers count their
// decisions: the process-wide one (GlobalMetrics) or one of your own
// (NewMetricsRegistry). It is a metrics.Source. In this build the families
// are kept in Go, with the names, help, labels and series order of the Rust
// core's wkcore_coord_* families.
type MetricsRegistry struct {
	g      *goRegistry
	isDone atomic.Bool
}

// NewMetricsRegistry creates an empty registry.
func NewMetricsRegistry() (*MetricsRegistry, error) {
	return &MetricsRegistry{g: new(goRegistry)}, nil
}

// GlobalMetrics returns a handle to the process-wide registry.
func GlobalMetrics() (*MetricsRegistry, error) {
	return &MetricsRegistry{g: globalGoRegistry()}, nil
}

func (r *MetricsRegistry) closed() bool { return r == nil || r.g == nil || r.isDone.Load() }

// registry returns the registry a ledger counts in (nil: the process-wide
// one), or ErrHandleClosed.
func (r *MetricsRegistry) registry() (*goRegistry, error) {
	if r == nil {
		return globalGoRegistry(), nil
	}
	if r.closed() {
		return nil, ErrHandleClosed
	}
	return r.g, nil
}

// Families returns one moment's values of every family of the registry.
func (r *MetricsRegistry) Families() ([]metrics.Family, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	return r.g.families(), nil
}

// Close releases the handle; ledgers created in the registry keep counting.
// A second Close returns ErrHandleClosed.
func (r *MetricsRegistry) Close() error {
	if r == nil || r.g == nil || !r.isDone.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}
