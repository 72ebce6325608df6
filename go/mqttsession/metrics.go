package mqttsession

import (
	"strings"

	"github.com/wukongim/wkcore/go/metrics"
)

// Metrics is the package's metrics.Source: the owner families of the
// process, wukongim_mqtt_owner_work{state} (gauges: the snapshot's counts,
// summed over every live registry) and wukongim_mqtt_owner_sweep_total{event}
// (counters: sweep turns, owners visited, failed turns, of every registry
// ever made). They appear once a registry was made. In the cgo build they
// are the Rust core's families, read through the generic metrics export (the
// process-wide registry, where every owner registry counts); in the pure-Go
// build the Go registries' counts, with the same names, help, labels and
// series order.
var Metrics metrics.Source = ownerMetrics{}

type ownerMetrics struct{}

// The owner families, as the Rust core declares them (core/src/owner/metrics.rs).
const (
	// FamilyOwnerWork is the owner work gauge, by state. WuKongIM declares
	// a family of this name itself (last sampled from the sweeper's
	// observations, with its own help text and node labels).
	FamilyOwnerWork = "wukongim_mqtt_owner_work"
	// FamilyOwnerSweep is the sweep counter, by event; WuKongIM declares
	// one of this name too.
	FamilyOwnerSweep = "wukongim_mqtt_owner_sweep_total"

	familyWork  = FamilyOwnerWork
	familySweep = FamilyOwnerSweep
)

// HostFamilies returns the names of the families a WuKongIM host already
// exports itself: register wkcore's collector over
// metrics.Exclude(Metrics, HostFamilies()...) (or not at all) and keep
// feeding the host's own from OwnerSweeperOptions.Observe, as upstream does.
// Both in one Prometheus registry fail its scrape (one name, two help
// texts, and the same series twice).
func HostFamilies() []string { return []string{FamilyOwnerWork, FamilyOwnerSweep} }

var (
	workStates  = []string{"held", "pending", "active", "closing", "operations", "deadlines", "uncertain"}
	sweepEvents = []string{"turns", "visited", "failures"}
)

// RenderMetrics returns the Prometheus text exposition (format 0.0.4) of the owner
// families.
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
