package wkcore

/*
#include "wkcore.h"

// The snapshot calls point at Rust-owned strings and arrays; an empty one is a
// dangling, aligned, non-NULL pointer (such as 0x1 or 0x8). Go must never hold
// such a value in a pointer-typed variable (the runtime rejects pointers below
// 4096 when it moves a stack), so these wrappers replace the pointer of every
// empty string or array with NULL before Go sees it.

static wk_status wkgo_family_get(const wk_metrics_snapshot *snapshot, size_t i,
                                 wk_metric_family *out) {
	wk_status st = wk_metrics_snapshot_family_get(snapshot, i, out, sizeof *out);
	if (st == WK_STATUS_OK) {
		if (out->name.len == 0) out->name.ptr = NULL;
		if (out->help.len == 0) out->help.ptr = NULL;
		if (out->label_count == 0) out->labels = NULL;
	}
	return st;
}

static wk_status wkgo_series_get(const wk_metrics_snapshot *snapshot, size_t i, size_t j,
                                 wk_metric_series *out) {
	wk_status st = wk_metrics_snapshot_series_get(snapshot, i, j, out, sizeof *out);
	if (st == WK_STATUS_OK && out->label_count == 0) out->label_values = NULL;
	return st;
}

// Copies strs[i] to *out, with NULL for an empty string.
static void wkgo_str_at(const wk_str *strs, size_t i, wk_str *out) {
	*out = strs[i];
	if (out->len == 0) out->ptr = NULL;
}
*/
import "C"

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricsRegistry is a handle to a set of metric families (wk_metrics_registry):
// the process-wide one (GlobalMetrics), where NewSlot counts, or one of your
// own (NewMetricsRegistry), for isolation; NewSlotIn counts there. The
// families are the library's: each system registers its own, and this
// package reads them all through one generic export (Snapshot, Collector,
// Render), so a family added to the library appears here with no change.
// All methods but Close are safe for concurrent use.
type MetricsRegistry struct {
	p *C.wk_metrics_registry
	// renderHint is the last rendered length, so that most Render calls need
	// one library call.
	renderHint atomic.Uint64
}

// NewMetricsRegistry creates an empty registry. Slots created in it
// (NewSlotIn) keep counting after Close; the registry lives while they do.
func NewMetricsRegistry() (*MetricsRegistry, error) {
	var p *C.wk_metrics_registry
	if st := C.wk_metrics_registry_new(&p); st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newMetricsRegistry(p), nil
}

// GlobalMetrics returns a new handle to the process-wide registry, where
// slots made with NewSlot count. Close releases the handle only.
func GlobalMetrics() (*MetricsRegistry, error) {
	var p *C.wk_metrics_registry
	if st := C.wk_metrics_registry_global(&p); st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newMetricsRegistry(p), nil
}

// globalMetrics is the package's own handle to the process-wide registry,
// for NewCollector and RenderMetrics; it is never closed.
var globalMetrics = sync.OnceValues(GlobalMetrics)

func newMetricsRegistry(p *C.wk_metrics_registry) *MetricsRegistry {
	r := &MetricsRegistry{p: p}
	runtime.SetFinalizer(r, (*MetricsRegistry).Close)
	return r
}

// ptr returns the C handle; see Slot.ptr.
func (r *MetricsRegistry) ptr() *C.wk_metrics_registry {
	if r.p == nil {
		panic("wkcore: MetricsRegistry used after Close")
	}
	maybeGC()
	return r.p
}

func (r *MetricsRegistry) closed() bool { return r == nil || r.p == nil }

// Clone returns a second handle to the same registry, with its own Close.
func (r *MetricsRegistry) Clone() (*MetricsRegistry, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	var p *C.wk_metrics_registry
	st := C.wk_metrics_registry_clone(r.ptr(), &p)
	runtime.KeepAlive(r)
	if st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newMetricsRegistry(p), nil
}

// Close releases this handle; it is idempotent.
func (r *MetricsRegistry) Close() {
	if r.closed() {
		return
	}
	runtime.SetFinalizer(r, nil)
	C.wk_metrics_registry_free(r.p)
	r.p = nil
}

// MetricType is the Prometheus type of a family, as the library reports it.
type MetricType uint32

// The metric types; values are the C ABI's enum wk_metric_type.
const (
	MetricTypeCounter MetricType = C.WK_METRIC_TYPE_COUNTER
	MetricTypeGauge   MetricType = C.WK_METRIC_TYPE_GAUGE
)

// String returns "counter", "gauge", or "metric_type(N)" for a type of a
// newer library.
func (t MetricType) String() string {
	switch t {
	case MetricTypeCounter:
		return "counter"
	case MetricTypeGauge:
		return "gauge"
	}
	return "metric_type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// MetricFamily is one family of a snapshot, with everything as the library
// reports it.
type MetricFamily struct {
	// Name is the metric name.
	Name string
	// Help is the HELP text (unescaped).
	Help string
	// Type is counter or gauge.
	Type MetricType
	// Labels are the label names, in order.
	Labels []string
	// Series are the family's series, zeros included, in the library's order.
	Series []MetricSeries
}

// MetricSeries is one series of a family.
type MetricSeries struct {
	// LabelValues has one value per label name of the family, in its order.
	LabelValues []string
	// Value is the series' value (counters and gauges are non-negative integers).
	Value uint64
}

// goString copies a string of a snapshot (NULL when empty, see the preamble).
func goString(s *C.wk_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN((*C.char)(unsafe.Pointer(s.ptr)), C.int(s.len))
}

// goStrings copies n strings of a snapshot's array strs.
func goStrings(strs *C.wk_str, n C.size_t) []string {
	out := make([]string, n)
	for i := range out {
		var s C.wk_str
		C.wkgo_str_at(strs, C.size_t(i), &s)
		out[i] = goString(&s)
	}
	return out
}

// Snapshot reads one moment's values of every family of the registry, in the
// library's order. A registry in which nothing was created yet has none.
func (r *MetricsRegistry) Snapshot() ([]MetricFamily, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	var snap *C.wk_metrics_snapshot
	st := C.wk_metrics_registry_snapshot(r.ptr(), &snap)
	runtime.KeepAlive(r)
	if st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	// The snapshot is a C handle owned here, not a Go wrapper: nothing can
	// finalize it while it is read.
	defer C.wk_metrics_snapshot_free(snap)
	families := make([]MetricFamily, C.wk_metrics_snapshot_family_count_get(snap))
	for i := range families {
		var f C.wk_metric_family
		if st := C.wkgo_family_get(snap, C.size_t(i), &f); st != C.WK_STATUS_OK {
			return nil, statusError(st)
		}
		fam := MetricFamily{
			Name:   goString(&f.name),
			Help:   goString(&f.help),
			Type:   MetricType(f.metric_type),
			Labels: goStrings(f.labels, f.label_count),
			Series: make([]MetricSeries, f.series_count),
		}
		for j := range fam.Series {
			var s C.wk_metric_series
			if st := C.wkgo_series_get(snap, C.size_t(i), C.size_t(j), &s); st != C.WK_STATUS_OK {
				return nil, statusError(st)
			}
			fam.Series[j] = MetricSeries{
				LabelValues: goStrings(s.label_values, s.label_count),
				Value:       uint64(s.value),
			}
		}
		families[i] = fam
	}
	return families, nil
}

// Render returns the library's own Prometheus text exposition (format 0.0.4)
// of every family of the registry.
func (r *MetricsRegistry) Render() (string, error) {
	if r.closed() {
		return "", ErrHandleClosed
	}
	size := r.renderHint.Load()
	for attempt := 0; attempt < 8; attempt++ {
		var buf []byte
		var p *C.uint8_t
		if size > 0 {
			buf = make([]byte, size)
			p = (*C.uint8_t)(unsafe.Pointer(&buf[0]))
		}
		var n C.size_t
		st := C.wk_metrics_registry_render(r.ptr(), p, C.size_t(len(buf)), &n)
		runtime.KeepAlive(r)
		switch st {
		case C.WK_STATUS_OK:
			r.renderHint.Store(uint64(n))
			return string(buf[:n]), nil
		case C.WK_STATUS_BUFFER_TOO_SMALL:
			// The text may grow between calls (new families); leave room.
			size = uint64(n) + uint64(n)/8 + 64
		default:
			return "", statusError(st)
		}
	}
	return "", ErrBufferTooSmall
}

// Collector returns a prometheus.Collector over this registry (see
// Collector). It holds its own handle (a Clone), so closing r does not stop
// it; if r is already closed, every scrape reports ErrHandleClosed.
func (r *MetricsRegistry) Collector() *Collector {
	reg, err := r.Clone()
	return &Collector{reg: reg, err: err}
}

// RenderMetrics returns the library's Prometheus text exposition of the
// process-wide registry (GlobalMetrics().Render()).
func RenderMetrics() (string, error) {
	reg, err := globalMetrics()
	if err != nil {
		return "", err
	}
	return reg.Render()
}

// Collector is a prometheus.Collector over a MetricsRegistry. Each scrape
// takes one snapshot and reports every family and series in it as constant
// metrics, with the names, help texts, types and labels the library reports:
// it knows no family, so one the library adds is scraped with no change here.
//
// It is an unchecked collector (Describe sends nothing): the families are the
// library's and known only when a snapshot is taken (a registry has none until
// something is created in it), and client_golang supports collectors whose
// metrics are not known at registration by exactly that convention. The
// prometheus.Registry still checks every scrape for consistency (duplicate
// series, the same name with other help or labels). Register one Collector
// per MetricsRegistry.
type Collector struct {
	reg *MetricsRegistry
	err error
}

// NewCollector returns a Collector over the process-wide registry (see
// GlobalMetrics); register it once per prometheus registry.
func NewCollector() *Collector {
	reg, err := globalMetrics()
	return &Collector{reg: reg, err: err}
}

// Describe implements prometheus.Collector; it sends nothing (unchecked).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	err := c.err
	var families []MetricFamily
	if err == nil {
		families, err = c.reg.Snapshot()
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		return
	}
	for _, f := range families {
		collectFamily(ch, f)
	}
}

// collectFamily sends every series of f.
func collectFamily(ch chan<- prometheus.Metric, f MetricFamily) {
	valueType := prometheus.UntypedValue
	switch f.Type {
	case MetricTypeCounter:
		valueType = prometheus.CounterValue
	case MetricTypeGauge:
		valueType = prometheus.GaugeValue
	}
	desc := prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
	for _, s := range f.Series {
		m, err := prometheus.NewConstMetric(desc, valueType, float64(s.Value), s.LabelValues...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
}
