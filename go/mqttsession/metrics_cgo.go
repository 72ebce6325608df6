//go:build cgo && !wkcore_purego

package mqttsession

import (
	"github.com/wukongim/wkcore/go/internal/wkabi"
	"github.com/wukongim/wkcore/go/metrics"
)

// Families returns the owner families of the process-wide Rust registry.
func (ownerMetrics) Families() ([]metrics.Family, error) {
	r, err := wkabi.GlobalRegistry()
	if err != nil {
		return nil, err
	}
	all, err := r.Families()
	if err != nil {
		return nil, err
	}
	out := make([]metrics.Family, 0, 2)
	for _, f := range all {
		if f.Name == familyWork || f.Name == familySweep {
			out = append(out, f)
		}
	}
	return out, nil
}
