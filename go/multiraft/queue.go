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

// handOut hands the pending items to f, oldest first, until handed reaches
// max, and returns the new handed count. Each item leaves pending (and its
// place is cleared) before f sees it, so a panicking f loses nothing and
// duplicates nothing: the next drain starts with what is left.
func handOut[T any](pending *[]Control[T], handed, max int, f func(Control[T])) int {
	for len(*pending) > 0 && handed < max {
		c := (*pending)[0]
		(*pending)[0] = Control[T]{}
		*pending = (*pending)[1:]
		handed++
		f(c)
	}
	return handed
}
