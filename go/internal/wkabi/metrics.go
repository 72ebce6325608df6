//go:build cgo && !wkcore_purego

package wkabi

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
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/metrics"
)

// Registry owns one reference to a wk_metrics_registry. Close releases it;
// it is safe against concurrent calls (a call that loses to Close gets
// status.ErrHandleClosed), and the C reference is released by Close, with a
// finalizer only as a safety net for a forgotten handle.
type Registry struct {
	p    *C.wk_metrics_registry
	uses Uses
}

// NewRegistry creates an empty registry.
func NewRegistry() (*Registry, error) {
	var p *C.wk_metrics_registry
	if st := C.wk_metrics_registry_new(&p); st != C.WK_STATUS_OK {
		return nil, status.Lookup(status.Code(st))
	}
	return newRegistry(p), nil
}

// GlobalRegistry returns the package's handle to the process-wide registry
// (never closed).
var GlobalRegistry = sync.OnceValues(func() (*Registry, error) {
	var p *C.wk_metrics_registry
	if st := C.wk_metrics_registry_global(&p); st != C.WK_STATUS_OK {
		return nil, status.Lookup(status.Code(st))
	}
	return newRegistry(p), nil
})

func newRegistry(p *C.wk_metrics_registry) *Registry {
	r := &Registry{p: p}
	runtime.SetFinalizer(r, func(r *Registry) { C.wk_metrics_registry_free(r.p) })
	return r
}

// With runs f with the C handle (as a Ptr) while the registry cannot be
// closed; it returns status.ErrHandleClosed after Close.
func (r *Registry) With(f func(Ptr) error) error {
	if r == nil || !r.uses.Acquire() {
		return status.ErrHandleClosed
	}
	defer r.uses.Release()
	MaybeGC()
	err := f(Ptr(r.p))
	runtime.KeepAlive(r)
	return err
}

// Close releases the handle; a second Close returns status.ErrHandleClosed.
func (r *Registry) Close() error {
	if r == nil || !r.uses.Close() {
		return status.ErrHandleClosed
	}
	runtime.SetFinalizer(r, nil)
	C.wk_metrics_registry_free(r.p)
	r.p = nil
	return nil
}

func goString(s *C.wk_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN((*C.char)(unsafe.Pointer(s.ptr)), C.int(s.len))
}

func goStrings(strs *C.wk_str, n C.size_t) []string {
	out := make([]string, n)
	for i := range out {
		var s C.wk_str
		C.wkgo_str_at(strs, C.size_t(i), &s)
		out[i] = goString(&s)
	}
	return out
}

// Families reads one moment's values of every family of the registry, in the
// library's order, through the generic snapshot export: it names no family.
func (r *Registry) Families() ([]metrics.Family, error) {
	var families []metrics.Family
	err := r.With(func(p Ptr) error {
		var snap *C.wk_metrics_snapshot
		if st := C.wk_metrics_registry_snapshot((*C.wk_metrics_registry)(p), &snap); st != C.WK_STATUS_OK {
			return status.Lookup(status.Code(st))
		}
		defer C.wk_metrics_snapshot_free(snap)
		families = make([]metrics.Family, C.wk_metrics_snapshot_family_count_get(snap))
		for i := range families {
			var f C.wk_metric_family
			if st := C.wkgo_family_get(snap, C.size_t(i), &f); st != C.WK_STATUS_OK {
				return status.Lookup(status.Code(st))
			}
			fam := metrics.Family{
				Name:   goString(&f.name),
				Help:   goString(&f.help),
				Type:   metrics.Type(f.metric_type),
				Labels: goStrings(f.labels, f.label_count),
				Series: make([]metrics.Series, f.series_count),
			}
			for j := range fam.Series {
				var s C.wk_metric_series
				if st := C.wkgo_series_get(snap, C.size_t(i), C.size_t(j), &s); st != C.WK_STATUS_OK {
					return status.Lookup(status.Code(st))
				}
				fam.Series[j] = metrics.Series{
					LabelValues: goStrings(s.label_values, s.label_count),
					Value:       uint64(s.value),
				}
			}
			families[i] = fam
		}
		return nil
	})
	return families, err
}

// Uses counts the calls in flight on a handle so that Close waits for them
// and a call that starts after Close is refused. Acquire and Release are one
// atomic add each; Close sets the closed bit and waits for the count to drain.
// The zero value is an open handle with no call in flight.
type Uses struct {
	n atomic.Int64
}

const usesClosed = int64(1) << 62

// Acquire registers a call; it returns false (and registers nothing) once
// Close has started.
func (u *Uses) Acquire() bool {
	if u.n.Add(1)&usesClosed != 0 {
		u.n.Add(-1)
		return false
	}
	return true
}

// Release ends a call registered by Acquire.
func (u *Uses) Release() { u.n.Add(-1) }

// Close marks the handle closed and waits until no call is in flight; it
// returns false if another Close came first. The wait yields: calls in flight
// are short (one C call and a few stores).
func (u *Uses) Close() bool {
	for {
		n := u.n.Load()
		if n&usesClosed != 0 {
			return false
		}
		if u.n.CompareAndSwap(n, n|usesClosed) {
			break
		}
	}
	for u.n.Load() != usesClosed {
		runtime.Gosched()
	}
	return true
}

// Closed reports whether Close has started.
func (u *Uses) Closed() bool { return u.n.Load()&usesClosed != 0 }
