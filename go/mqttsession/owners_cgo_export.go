//go:build cgo && !wkcore_purego

// The Go functions the core calls back (a file of their own: a file with
// //export may declare, not define, C functions in its preamble).

package mqttsession

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include <stdint.h>
#include "wkcore.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime/cgo"
)

// wkgoOwnerClose is every owner's wk_owner_close_fn. userData is the owner's
// cgo.Handle (its *ownerShared), callData the blocking call's (its ctx). It
// runs on the goroutine that made the blocking call (a C→Go call inside that
// Go→C call), raises the owner's fence signal and runs the host's close with
// the caller's context. A panic is recovered into WK_STATUS_OWNER_CLOSE;
// the two context errors become the two wait codes, any other error
// WK_STATUS_OWNER_CLOSE.
//
//export wkgoOwnerClose
func wkgoOwnerClose(userData, callData C.uintptr_t, timeoutNs C.uint64_t) (st C.wk_status) {
	_ = timeoutNs // the caller's context carries the same deadline
	sh := cgo.Handle(userData).Value().(*ownerShared)
	a := &closeAttempt{done: make(chan struct{})}
	sh.raise()
	sh.mu.Lock()
	sh.attempt = a
	sh.mu.Unlock()
	defer func() {
		if recover() != nil {
			st = C.WK_STATUS_OWNER_CLOSE
		}
		a.err = statusErr(st)
		sh.mu.Lock()
		if sh.attempt == a {
			sh.attempt = nil
		}
		sh.mu.Unlock()
		close(a.done)
	}()
	ctx := context.Background()
	if callData != 0 {
		ctx = cgo.Handle(callData).Value().(context.Context)
	}
	err := sh.close(ctx)
	switch {
	case err == nil:
		return C.WK_STATUS_OK
	case errors.Is(err, context.Canceled):
		return C.WK_STATUS_OWNER_CANCELED
	case errors.Is(err, context.DeadlineExceeded):
		return C.WK_STATUS_OWNER_DEADLINE_EXCEEDED
	default:
		return C.WK_STATUS_OWNER_CLOSE
	}
}

// wkgoOwnerRelease is every owner's wk_owner_release_fn: the core dropped the
// owner's last reference, so its close will never run again.
//
//export wkgoOwnerRelease
func wkgoOwnerRelease(userData C.uintptr_t) {
	cgo.Handle(userData).Delete()
}
