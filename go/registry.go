package wkcore

/*
#include "wkcore.h"
*/
import "C"

import "runtime"

// AdmissionRegistry maps slot ids to slots (wk_admission_registry), for
// look-ups by identity; the per-item path should hold a Slot instead. All
// methods but Close are safe for concurrent use.
type AdmissionRegistry struct {
	p *C.wk_admission_registry
}

// NewAdmissionRegistry creates an empty registry.
func NewAdmissionRegistry() (*AdmissionRegistry, error) {
	var p *C.wk_admission_registry
	if st := C.wk_admission_registry_new(&p); st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newAdmissionRegistry(p), nil
}

func newAdmissionRegistry(p *C.wk_admission_registry) *AdmissionRegistry {
	r := &AdmissionRegistry{p: p}
	runtime.SetFinalizer(r, (*AdmissionRegistry).Close)
	return r
}

// ptr returns the C handle; see Slot.ptr.
func (r *AdmissionRegistry) ptr() *C.wk_admission_registry {
	if r.p == nil {
		panic("wkcore: AdmissionRegistry used after Close")
	}
	maybeGC()
	return r.p
}

func (r *AdmissionRegistry) closed() bool { return r == nil || r.p == nil }

// Clone returns a second handle to the same registry, with its own Close.
func (r *AdmissionRegistry) Clone() (*AdmissionRegistry, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	var p *C.wk_admission_registry
	st := C.wk_admission_registry_clone(r.ptr(), &p)
	runtime.KeepAlive(r)
	if st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newAdmissionRegistry(p), nil
}

// Close releases this handle; it is idempotent. Slots the registry holds are
// released when the last registry handle is closed.
func (r *AdmissionRegistry) Close() {
	if r.closed() {
		return
	}
	runtime.SetFinalizer(r, nil)
	C.wk_admission_registry_free(r.p)
	r.p = nil
}

// Insert registers slot under its id; the registry keeps its own reference,
// so the caller may Close its handle. An id already present gives
// ErrAlreadyExists.
func (r *AdmissionRegistry) Insert(slot *Slot) error {
	if r.closed() || slot.closed() {
		return ErrHandleClosed
	}
	st := C.wk_admission_registry_insert(r.ptr(), slot.ptr())
	runtime.KeepAlive(r)
	runtime.KeepAlive(slot)
	return statusError(st)
}

// Get returns a new handle to the slot registered under id, which the caller
// must Close, or ErrSlotNotFound.
func (r *AdmissionRegistry) Get(id uint64) (*Slot, error) {
	if r.closed() {
		return nil, ErrHandleClosed
	}
	var p *C.wk_slot
	st := C.wk_admission_registry_get(r.ptr(), C.uint64_t(id), &p)
	runtime.KeepAlive(r)
	if st != C.WK_STATUS_OK {
		return nil, statusError(st)
	}
	return newSlot(p, id), nil
}

// Remove unregisters the slot under id, or returns ErrSlotNotFound. Handles to
// the slot stay valid.
func (r *AdmissionRegistry) Remove(id uint64) error {
	if r.closed() {
		return ErrHandleClosed
	}
	st := C.wk_admission_registry_remove(r.ptr(), C.uint64_t(id))
	runtime.KeepAlive(r)
	return statusError(st)
}
