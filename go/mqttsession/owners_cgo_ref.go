//go:build cgo && !wkcore_purego

package mqttsession

// The library's own Begin and Done, bypassing the inline path (words.go):
// the reference that the differential test (inline_cgo_test.go) drives on
// the same owners as the inline path, concurrently. (Test files cannot use
// cgo, so these live here; nothing else calls them.)

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// libraryBegin is Begin through wk_owner_begin alone (the slow path as the
// only path).
func (r *Owners) libraryBegin(ctx context.Context, owner Owner) (*Operation, error) {
	c := r.c
	w, err := c.lookup(owner)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, ErrOwnerFenced
	}
	c.reg.sync()
	wkabi.MaybeGC()
	st := ownerBegin(w.h)
	runtime.KeepAlive(w)
	if st != C.WK_STATUS_OK {
		if st == C.WK_STATUS_OWNER_FENCED {
			w.noteFenced()
		}
		return nil, statusErr(st)
	}
	return &Operation{w: w, parent: ctx}, nil
}

// libraryDone is Done with the library's end of the scope
// (wk_owner_op_done on the operation's record) instead of the inline one;
// the once-only flag is the Operation's, as in Done.
func (o *Operation) libraryDone() {
	if o == nil || o.w == nil {
		return
	}
	won, s := o.finish()
	if !won {
		return
	}
	wkabi.MaybeGC()
	libraryOpDone(o.w.h)
	if s&opHasContext != 0 {
		if c := o.w.takeContext(o); c != nil {
			c.release()
		}
	}
	runtime.KeepAlive(o)
}

// ownerWord reads owner's state word (0 if it is not held here).
func (r *Owners) ownerWord(owner Owner) uint64 {
	w := r.c.held(&owner)
	if w == nil {
		return 0
	}
	v := atomic.LoadUint64(w.hw.state)
	runtime.KeepAlive(w)
	return v
}

// inlineCapable reports whether Begin runs inline on this registry.
func (r *Owners) inlineCapable() bool { return r.c.reg.inline }

// registryNow is the registry clock's reading, through the library.
func (r *Owners) registryNow() uint64 {
	var now C.uint64_t
	C.wk_owner_registry_now(r.c.reg.p, &now)
	runtime.KeepAlive(r.c.reg)
	return uint64(now)
}

// crossingFloor is one cgo call into the library that does nothing but
// return a constant: the benchmarks' crossing floor.
func crossingFloor() uint32 { return uint32(C.wk_owner_layout_version()) }
