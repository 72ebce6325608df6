//go:build cgo && !wkcore_purego

package wkabi

/*
#include "wkcore.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// ABIVersion is the wkcore ABI generation these packages were written for.
const ABIVersion = 3

// abiGuard references wk_abi_v3, a no-op symbol whose name carries the ABI
// generation: an archive of another generation lacks it, so the program fails
// to link instead of misbehaving at run time.
var abiGuard = func() struct{} {
	C.wk_abi_v3()
	return struct{}{}
}()

// The header must describe the generation this package was written for; the
// array lengths are negative (a compile error) otherwise.
var (
	_ [C.WK_ABI_VERSION - ABIVersion]struct{}
	_ [ABIVersion - C.WK_ABI_VERSION]struct{}
)

func init() {
	_ = abiGuard
	if got := uint32(C.wk_abi_version()); got != ABIVersion {
		panic(fmt.Sprintf("wkcore: libwkcore.a reports ABI version %d, but these Go packages need %d; "+
			"rebuild it with scripts/go-lib", got, ABIVersion))
	}
}

// StatusText returns the library's text of a status (wk_status_str).
func StatusText(code uint32) string { return C.GoString(C.wk_status_str(C.wk_status(code))) }

// StatusIs reports whether status is identity or wraps it (wk_status_is).
func StatusIs(status, identity uint32) bool {
	return bool(C.wk_status_is(C.wk_status(status), C.wk_status(identity)))
}

// Ptr is a C handle passed between packages: cgo types are per package, so a
// handle crosses as an unsafe.Pointer and each package casts it to its own
// C type.
type Ptr = unsafe.Pointer

// Version returns wk_abi_version(): the cheapest call of the C ABI, which the
// benchmarks use as the floor of a cgo crossing.
func Version() uint32 { return uint32(C.wk_abi_version()) }
