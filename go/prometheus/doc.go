// Package wkprometheus exports the metric families of a wkcore metrics.Source
// (such as multiraft.MetricsRegistry) to a Prometheus registry.
//
//	reg, _ := multiraft.GlobalMetrics()
//	_, err := wkprometheus.Register(prometheus.DefaultRegisterer, reg,
//		wkprometheus.WithConstLabels(prometheus.Labels{"node": "1"}))
//
// # A module of its own
//
// This package is a separate Go module (github.com/wukongim/wkcore/go/prometheus)
// so that importing github.com/wukongim/wkcore/go/multiraft pulls no
// Prometheus code, and no Prometheus version, into a host's module graph. Only
// a host that imports this package gets client_golang, and then at the version
// this module requires unless the host requires a newer one (Go's minimal
// version selection takes the highest version required anywhere).
//
// This module requires github.com/prometheus/client_golang v1.16.0: upstream
// WuKongIM pins v1.16.0, so requiring it adds nothing to that host's build
// list and upgrades neither client_golang nor its dependencies
// (client_model, common, procfs, protobuf) there. Requiring a later version
// would force that upgrade on every host that imports this package. The
// package uses only long-stable API (NewDesc, NewConstMetric,
// NewInvalidMetric, unchecked collectors).
//
// # Families known only at scrape
//
// The package names no family: every scrape takes one Source.Families() and
// reports every family and series it returns as const metrics (a counter as
// CounterValue, a gauge as GaugeValue, any other type as UntypedValue), so a
// family the core adds later is exported with no change here. Because the
// families are known only at scrape (a registry reports a family once a queue
// has counted in it, and a newer core may add families), the Collector is an
// unchecked collector: Describe sends no descriptor. Registration therefore
// always succeeds, and the registry's consistency checks (a name collected
// twice with different help or type, a series collected twice) run at
// Gather, where they fail that scrape with an error. Registering the same
// Collector twice in one registry is such a conflict.
//
// Values are the Source's non-negative integers converted to float64, exact
// up to 2^53. A family with no series is not reported (Prometheus writes no
// HELP or TYPE line for it). A Source error fails the scrape through
// prometheus.NewInvalidMetric: the registry's Gather returns the error (and
// the other collectors' metrics), and promhttp answers with an error or
// leaves the family out, as its HandlerOpts.ErrorHandling says.
//
// # A host that already has the family
//
// Upstream WuKongIM registers wukongim_slot_proposal_admission_total{class,
// result} itself, with its own help text, fed by its
// ProposalAdmissionObserver. Registering this Collector beside it makes every
// scrape fail, once both have series, with "collected metric ... has help ...
// but should have ...".
// Such a host has two choices:
//
//   - Recommended: keep its own family and pass its observer to the queues
//     (multiraft.Options{Observer: ...}); the host then needs neither this
//     package nor Prometheus from wkcore at all.
//   - Export wkcore's families under other names: WithNamespace("wkcore")
//     gives wkcore_wukongim_slot_proposal_admission_total, WithRename any
//     mapping; WithFamilies leaves families out.
package wkprometheus
