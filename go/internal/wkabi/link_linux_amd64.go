//go:build cgo && !wkcore_purego

package wkabi

// The link lines of linux/amd64. The archive is named by its path (not
// -lwkcore, which a linker would resolve to a shared library if one were
// beside it). The native libraries are those `rustc --print native-static-libs`
// lists for a Rust staticlib on Linux with the GNU toolchain, with libgcc_eh
// (the static unwinder) in place of libgcc_s, so the binary needs no
// libgcc_s.so at run time and links with -static too.

/*
#cgo CFLAGS: -I${SRCDIR}
#cgo LDFLAGS: ${SRCDIR}/libwkcore_linux_amd64.a -lgcc_eh -lutil -lrt -lpthread -lm -ldl -lc
#if !__has_include("libwkcore_linux_amd64.a")
#error "wkcore: go/internal/wkabi/libwkcore_linux_amd64.a is missing: run scripts/go-lib in the wkcore checkout (it needs cargo), or build with CGO_ENABLED=0 or -tags wkcore_purego for the pure-Go implementation"
#endif
#include "wkcore.h"
*/
import "C"
