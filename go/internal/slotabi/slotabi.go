//go:build cgo && !wkcore_purego

// Package slotabi calls the admission C ABI directly — a slot that runs on
// the library's own ring, and the library's calls on a hosted slot's words —
// for the differential tests of go/multiraft, which drive the Go inline path
// and the library's path side by side and compare every outcome. Nothing
// else uses it.
package slotabi

/*
#cgo CFLAGS: -I${SRCDIR}/../wkabi
#include "wkcore.h"
*/
import "C"

import (
	"runtime"
	"unsafe"

	_ "github.com/wukongim/wkcore/go/internal/wkabi" // the link
)

// Slot is a library slot handle (a native one, or a hosted one's).
type Slot struct {
	p     *C.wk_slot
	owned bool
}

// New creates a native slot (its own ring) in a registry of its own.
func New(limit, limitBg uint32) *Slot {
	l := C.wk_slot_limits{max_queued_controls: C.uint32_t(limit), max_queued_background_controls: C.uint32_t(limitBg)}
	var reg *C.wk_metrics_registry
	if st := C.wk_metrics_registry_new(&reg); st != C.WK_STATUS_OK {
		panic(st)
	}
	defer C.wk_metrics_registry_free(reg)
	var p *C.wk_slot
	if st := C.wk_slot_new(reg, 1, &l, &p); st != C.WK_STATUS_OK {
		panic(st)
	}
	s := &Slot{p: p, owned: true}
	runtime.SetFinalizer(s, func(s *Slot) { C.wk_slot_free(s.p) })
	return s
}

// Of is the library handle behind a hosted slot's pointer; the caller keeps
// the hosted queue alive while it uses it.
func Of(p unsafe.Pointer) *Slot { return &Slot{p: (*C.wk_slot)(p)} }

// Admit is wk_slot_admit: the status, and for OK the position and ticket.
func (s *Slot) Admit(kind, class uint32) (status uint32, position, ticket uint64) {
	var a C.wk_admission
	st := C.wk_slot_admit(s.p, C.wk_control_kind(kind), C.wk_proposal_class(class), 0, &a)
	runtime.KeepAlive(s)
	return uint32(st), uint64(a.position), uint64(a.config_change)
}

// AdmitBatch is wk_slot_admit_batch without tokens.
func (s *Slot) AdmitBatch(kind, class uint32, n int) (status, refused uint32, admitted int, ticket uint64) {
	var r C.wk_batch_result
	st := C.wk_slot_admit_batch(s.p, C.wk_control_kind(kind), C.wk_proposal_class(class), nil, C.size_t(n), &r)
	runtime.KeepAlive(s)
	return uint32(st), uint32(r.refused), int(r.admitted), uint64(r.config_change)
}

// Item is one drained action.
type Item struct{ Kind, Class uint8 }

// Drain is wk_slot_drain into a buffer of max.
func (s *Slot) Drain(max int) (uint32, []Item) {
	items := make([]C.wk_item, max)
	var r C.wk_drain_result
	st := C.wk_slot_drain(s.p, &items[0], C.size_t(max), &r)
	runtime.KeepAlive(s)
	out := make([]Item, int(r.count))
	for i := range out {
		out[i] = Item{Kind: uint8(items[i].kind), Class: uint8(items[i].proposal_class)}
	}
	return uint32(st), out
}

// SetLeader, Demote, Close, Fail and Resolve are the flag calls.
func (s *Slot) SetLeader() uint32 {
	defer runtime.KeepAlive(s)
	return uint32(C.wk_slot_set_leader(s.p))
}

// Demote is wk_slot_demote.
func (s *Slot) Demote() uint32 { defer runtime.KeepAlive(s); return uint32(C.wk_slot_demote(s.p)) }

// CloseSlot is wk_slot_close.
func (s *Slot) CloseSlot() uint32 { defer runtime.KeepAlive(s); return uint32(C.wk_slot_close(s.p)) }

// Fail is wk_slot_fail.
func (s *Slot) Fail(code uint32) uint32 {
	defer runtime.KeepAlive(s)
	return uint32(C.wk_slot_fail(s.p, C.uint32_t(code)))
}

// Resolve is wk_slot_config_change_resolve.
func (s *Slot) Resolve(ticket uint64) uint32 {
	defer runtime.KeepAlive(s)
	return uint32(C.wk_slot_config_change_resolve(s.p, C.uint64_t(ticket)))
}

// State is wk_slot_state_get.
type State struct {
	Queued, QueuedBackground, QueuedProposals  uint32
	Leader, Closed, Fatal, ConfigChangePending bool
}

// State returns the library's snapshot.
func (s *Slot) State() State {
	var c C.wk_slot_state
	if st := C.wk_slot_state_get(s.p, &c, C.sizeof_wk_slot_state); st != C.WK_STATUS_OK {
		panic(st)
	}
	runtime.KeepAlive(s)
	return State{Queued: uint32(c.queued), QueuedBackground: uint32(c.queued_background),
		QueuedProposals: uint32(c.queued_proposals), Leader: c.leader != 0, Closed: c.closed != 0,
		Fatal: c.fatal != 0, ConfigChangePending: c.config_change_pending != 0}
}

// Counters returns the library's counts, [class][result].
func (s *Slot) Counters() [2][4]uint64 {
	var c C.wk_admission_counters
	if st := C.wk_slot_counters_get(s.p, &c, C.sizeof_wk_admission_counters); st != C.WK_STATUS_OK {
		panic(st)
	}
	runtime.KeepAlive(s)
	return [2][4]uint64{
		{uint64(c.foreground_ok), uint64(c.foreground_busy), uint64(c.foreground_throttled), uint64(c.foreground_not_leader)},
		{uint64(c.background_ok), uint64(c.background_busy), uint64(c.background_throttled), uint64(c.background_not_leader)},
	}
}
