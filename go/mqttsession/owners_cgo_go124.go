//go:build go1.24 && cgo && !wkcore_purego

package mqttsession

// The C calls below keep no Go pointer past the call and never call back
// into Go, so (noescape with nocallback) their out-parameters stay on the
// Go stack: Begin writes its operation record into a stack temp, and a
// refused Begin allocates nothing. These directives are honoured from Go
// 1.24 on; Go 1.22 and 1.23 reject them in cmd/cgo, so they live in this
// file, built only for go1.24 and later (cgo applies them package-wide;
// owners_cgo_pre124.go is the older toolchains' Begin).
//
// The two callbacks a C call could run are an owner's close (only a quiesce,
// a sweep, a registry close or an isolation quiesce runs one) and its
// release (run by whichever call drops the owner's LAST reference). Go's
// owner wrapper (cgoOwner) holds a reference of its own, its handle h,
// freed only by its finalizer; every call below is made through a wrapper
// that the caller keeps reachable across the call (runtime.KeepAlive of the
// wrapper, or of the Operation, whose w field references it), so none of
// them can drop the last reference. Per call:
//
//   - wk_owner_begin: lock-free admission on the owner's word; an expired
//     lease fences the owner (a word update and a wake-up, no callback).
//     Writes {owner, LIVE} to op_out and keeps no pointer to it.
//   - wk_owner_op_done: a CAS on op->state and the end of the scope; the
//     last scope of an owner being quiesced retires it, which drops the
//     registry's reference, never the wrapper's (the Operation holds the
//     wrapper): no release. Reads and writes op only during the call.
//   - wk_owner_scope_end (the inline Done's slow path): the end of one scope;
//     the owner's last scope while it is being quiesced retires it, which
//     drops the registry's reference, never the wrapper's: no release.
//   - wk_owner_op_check, wk_owner_op_mark_uncertain: as done (an expired
//     lease, or the mark, fences: no callback); op is read during the call.
//   - wk_owner_fence: fences (no transport call, no wait).
//   - wkgo_owner_stage, wkgo_owner_retired: wk_owner_info_get only.
//   - wkgo_lease: wk_owner_registry_now and wk_owner_activate / _renew (a
//     refused lease may fence: no callback); its until_out is written
//     during the call only (noescape).
//   - wk_owner_registry_advance_clock: moves the manual clock only (the
//     calls that find a deadline passed act on it later).
//   - wk_owner_registry_snapshot, wkgo_held, wk_owner_registry_retirement:
//     read counts (no owner reference taken); the out-parameter is written
//     during the call.
//
// Never nocallback: wkgo_reserve (on a failed info read it frees its new
// handle, which may be the last reference if a concurrent close retired
// the owner already), wk_owner_free and wk_owner_registry_free (may drop
// the last reference), wkgo_quiesce, wkgo_close and wkgo_sweep (run close
// callbacks), wk_owner_registry_stop_admission (it walks a copy of the
// registry's owner list, one reference per owner, and drops those at the
// end: an owner retired meanwhile whose wrapper was finalized too is then
// released on this thread), and the cold calls that need no directive.

/*
#cgo noescape wkgo_begin
#cgo nocallback wkgo_begin
#cgo noescape wkgo_op_done
#cgo nocallback wkgo_op_done
#cgo nocallback wk_owner_scope_end
#cgo noescape wk_owner_op_check
#cgo nocallback wk_owner_op_check
#cgo noescape wk_owner_op_mark_uncertain
#cgo nocallback wk_owner_op_mark_uncertain
#cgo nocallback wk_owner_fence
#cgo nocallback wkgo_owner_stage
#cgo nocallback wkgo_owner_retired
#cgo noescape wkgo_lease
#cgo nocallback wkgo_lease
#cgo nocallback wk_owner_registry_advance_clock
#cgo noescape wk_owner_registry_snapshot
#cgo nocallback wk_owner_registry_snapshot
#cgo nocallback wkgo_held
#cgo noescape wk_owner_registry_retirement
#cgo nocallback wk_owner_registry_retirement
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include <stdint.h>
#include "wkcore.h"

// Begin's call, typed so that cgo inserts no pointer check: the owner
// handle is C memory (passed as an integer) and the operation record Go
// memory that holds no Go pointer, passed as pointer-free words. One tail
// call.
static wk_status wkgo_begin(uintptr_t o, uint64_t *op) {
	return wk_owner_begin((const wk_owner *)o, (wk_owner_op *)op);
}
*/
import "C"

import "unsafe"

// ownerBegin admits one operation of h through the library (Begin's slow
// path): the core writes the operation record ({h, LIVE} on success) into
// a stack temp (noescape: it stays on the stack); the Operation keeps the
// state itself.
func ownerBegin(h *C.wk_owner) C.wk_status {
	var op C.wk_owner_op
	return C.wkgo_begin(C.uintptr_t(uintptr(unsafe.Pointer(h))), opWords(&op))
}
