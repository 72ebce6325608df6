//go:build cgo && !wkcore_purego

package deliverytag

import (
	"github.com/wukongim/wkcore/go/internal/wkabi"
	"github.com/wukongim/wkcore/go/metrics"
)

// Families returns the delivery-tag families of the process-wide Rust
// registry.
func (tagMetrics) Families() ([]metrics.Family, error) {
	r, err := wkabi.GlobalRegistry()
	if err != nil {
		return nil, err
	}
	all, err := r.Families()
	if err != nil {
		return nil, err
	}
	out := make([]metrics.Family, 0, 4)
	for _, f := range all {
		switch f.Name {
		case familyLookups, familyStores, familyCached, familyReclaimed:
			out = append(out, f)
		}
	}
	return out, nil
}
