package wkcore

// The only #cgo build lines of the package. Paths are relative to this
// directory, so the module builds from any working directory once
// `cargo build --release -p wkcore-ffi` has produced target/release/libwkcore.a.
// The archive is named by its path, not as -lwkcore: cargo also builds the
// cdylib libwkcore.so beside it, which the linker would prefer, leaving a
// binary that needs the .so at run time. The native libraries are those
// `rustc --print native-static-libs` lists for a Rust staticlib on Linux with
// the GNU toolchain.

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#cgo LDFLAGS: ${SRCDIR}/../target/release/libwkcore.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#include "wkcore.h"
*/
import "C"

import "fmt"

// ABIVersion is the wkcore ABI generation this package was written for.
const ABIVersion = 2

// abiGuard references wk_abi_v2, a no-op symbol whose name carries the ABI
// generation: a libwkcore.a of another generation lacks it, so the program
// fails to link instead of misbehaving at run time.
var abiGuard = func() struct{} {
	C.wk_abi_v2()
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
		panic(fmt.Sprintf("wkcore: libwkcore.a reports ABI version %d, but this Go package needs %d; "+
			"rebuild it with `cargo build --release -p wkcore-ffi`", got, ABIVersion))
	}
}
