//go:build cgo && !wkcore_purego

package coord

import (
	"sync/atomic"

	"github.com/wukongim/wkcore/go/internal/wkabi"
	"github.com/wukongim/wkcore/go/metrics"
)

// MetricsRegistry is a set of metric families where ledgers count their
// decisions: the process-wide one (GlobalMetrics) or one of your own
// (NewMetricsRegistry). It is a metrics.Source. In this build it is the Rust
// core's registry, read through its generic export: the wkcore_coord_*
// families come from the core, named by nothing in Go.
type MetricsRegistry struct {
	r    *wkabi.Registry
	own  bool // false for the process-wide registry, which is never released
	done atomic.Bool
}

// NewMetricsRegistry creates an empty registry.
func NewMetricsRegistry() (*MetricsRegistry, error) {
	r, err := wkabi.NewRegistry()
	if err != nil {
		return nil, err
	}
	return &MetricsRegistry{r: r, own: true}, nil
}

// GlobalMetrics returns a handle to the process-wide registry. Its Close
// releases nothing (the process-wide registry lives as long as the process).
func GlobalMetrics() (*MetricsRegistry, error) {
	r, err := wkabi.GlobalRegistry()
	if err != nil {
		return nil, err
	}
	return &MetricsRegistry{r: r}, nil
}

// registry returns the registry a ledger counts in (nil: the process-wide
// one), or ErrHandleClosed.
func (r *MetricsRegistry) registry() (*wkabi.Registry, error) {
	if r == nil {
		return wkabi.GlobalRegistry()
	}
	if r.closed() {
		return nil, ErrHandleClosed
	}
	return r.r, nil
}

func (r *MetricsRegistry) closed() bool { return r == nil || r.r == nil || r.done.Load() }

// Families returns one moment's values of the coordination families of the
// registry. The core's registry also holds the families of the other
// systems counted in it (the process-wide one holds every system's); they
// are left to their own packages' sources, so one collector per package
// never reports a family twice.
func (r *MetricsRegistry) Families() ([]metrics.Family, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	fams, err := r.r.Families()
	if err != nil {
		return nil, err
	}
	return metrics.Keep(fams, coordFamily), nil
}

// Close releases the handle; ledgers created in the registry keep counting.
// A second Close returns ErrHandleClosed.
func (r *MetricsRegistry) Close() error {
	if r == nil || r.r == nil || !r.done.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	if !r.own {
		return nil
	}
	return r.r.Close()
}
