package multiraft

import (
	"strings"

	"github.com/wukongim/wkcore/go/metrics"
)

// drainChunk is how many items a Drain takes from the queue at a time before
// it hands them to the callback.
const drainChunk = 256

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
