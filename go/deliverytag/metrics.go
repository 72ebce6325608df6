package deliverytag

import (
	"strings"

	"github.com/wukongim/wkcore/go/metrics"
)

// Metrics is the package's metrics.Source: the delivery-tag families of the
// process, summed over every Cache and Leader: look-ups by reason and
// stores by result (counters, of every cache and leader ever made), bodies
// and UIDs held (gauges, of the live ones) and what cleanups reclaimed
// (counters). They appear once a cache or leader was made. In the cgo build
// they are the Rust core's families, read through the generic metrics
// export (the process-wide registry, where every cache and leader counts);
// in the pure-Go build the Go counts, with the same names, help, labels and
// series order.
var Metrics metrics.Source = tagMetrics{}

type tagMetrics struct{}

// The delivery-tag families, as the Rust core declares them
// (core/src/tag/metrics.rs).
const (
	familyLookups   = "wukongim_delivery_tag_lookups_total"
	familyStores    = "wukongim_delivery_tag_stores_total"
	familyCached    = "wukongim_delivery_tag_cached"
	familyReclaimed = "wukongim_delivery_tag_reclaimed_total"
)

// RenderMetrics returns the Prometheus text exposition (format 0.0.4) of the
// delivery-tag families.
func RenderMetrics() (string, error) {
	families, err := Metrics.Families()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := metrics.Render(&b, families); err != nil {
		return "", err
	}
	return b.String(), nil
}
