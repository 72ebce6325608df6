//go:build !go1.24 && cgo && !wkcore_purego

package mqttsession

// Before Go 1.24 cgo has no noescape directive: a Go out-parameter of a C
// call escapes to the heap, so Begin's record is written on the C stack
// (by the wrapper below) and Go builds the same record, documented as
// {owner, WK_OWNER_OP_LIVE}: a refused Begin still allocates nothing. Go
// 1.24 and later use owners_cgo_go124.go.

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"

static wk_status wkgo_begin(const wk_owner *o) {
	wk_owner_op op;
	return wk_owner_begin(o, &op);
}
*/
import "C"

// ownerBegin admits one operation of h through the library (Begin's slow
// path); the Operation keeps the state itself.
func ownerBegin(h *C.wk_owner) C.wk_status {
	return C.wkgo_begin(h)
}
