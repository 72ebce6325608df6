package wkcore

/*
#include "wkcore.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// AdmissionMetricName is the upstream name of the proposal admission counter.
const AdmissionMetricName = "wukongim_slot_proposal_admission_total"

// admissionMetricHelp is the HELP text of AdmissionMetricName, the same as
// the library's own rendering (checked by TestRenderMetricsMatchesSnapshot).
const admissionMetricHelp = "Slot proposal admission decisions, by proposal class and result."

// MetricsSnapshot is one copy of the library's process-wide counters.
type MetricsSnapshot struct {
	// SlotProposalAdmission sums the admission counters of every slot ever
	// created in the process.
	SlotProposalAdmission AdmissionCounters
}

// ReadMetrics copies the library's process-wide counters (wk_metrics_snapshot_get).
func ReadMetrics() (MetricsSnapshot, error) {
	var s C.wk_metrics_snapshot
	if st := C.wk_metrics_snapshot_get(&s); st != C.WK_STATUS_OK {
		return MetricsSnapshot{}, statusError(st)
	}
	if s.version != C.WK_METRICS_SNAPSHOT_VERSION {
		return MetricsSnapshot{}, fmt.Errorf("wkcore: metrics snapshot version %d, want %d",
			uint32(s.version), uint32(C.WK_METRICS_SNAPSHOT_VERSION))
	}
	return MetricsSnapshot{SlotProposalAdmission: countersFromC(&s.slot_proposal_admission)}, nil
}

// Collector is a prometheus.Collector over the library's counters. Each
// scrape reads one snapshot and reports every series, zeros included.
type Collector struct {
	admission *prometheus.Desc
}

// NewCollector returns a Collector; register it once per registry.
func NewCollector() *Collector {
	return &Collector{
		admission: prometheus.NewDesc(AdmissionMetricName, admissionMetricHelp,
			[]string{"class", "result"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.admission
}

var admissionSeries = [...]struct {
	class  ProposalClass
	result AdmissionResult
}{
	{ProposalClassForeground, AdmissionOK},
	{ProposalClassForeground, AdmissionBusy},
	{ProposalClassForeground, AdmissionThrottled},
	{ProposalClassForeground, AdmissionNotLeader},
	{ProposalClassBackground, AdmissionOK},
	{ProposalClassBackground, AdmissionBusy},
	{ProposalClassBackground, AdmissionThrottled},
	{ProposalClassBackground, AdmissionNotLeader},
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap, err := ReadMetrics()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.admission, err)
		return
	}
	for _, s := range admissionSeries {
		ch <- prometheus.MustNewConstMetric(c.admission, prometheus.CounterValue,
			float64(snap.SlotProposalAdmission.Get(s.class, s.result)), string(s.class), string(s.result))
	}
}

// renderSizeHint remembers the last rendered length, so that most calls to
// RenderMetrics need one library call.
var renderSizeHint atomic.Uint64

// RenderMetrics returns the library's own Prometheus text exposition (format
// 0.0.4) of every wkcore metric.
func RenderMetrics() (string, error) {
	size := renderSizeHint.Load()
	if size == 0 {
		size = 4096
	}
	for attempt := 0; attempt < 8; attempt++ {
		buf := make([]byte, size)
		var n C.size_t
		st := C.wk_metrics_render((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)
		switch st {
		case C.WK_STATUS_OK:
			renderSizeHint.Store(uint64(n))
			return string(buf[:n]), nil
		case C.WK_STATUS_BUFFER_TOO_SMALL:
			// The text may grow between calls (new label values); leave room.
			size = uint64(n) + uint64(n)/8 + 64
		default:
			return "", statusError(st)
		}
	}
	return "", ErrBufferTooSmall
}
