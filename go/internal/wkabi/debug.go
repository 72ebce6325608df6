//go:build cgo && !wkcore_purego && debug

package wkabi

import "runtime"

// DebugBuild is true under -tags debug.
const DebugBuild = true

// MaybeGC forces a collection before every C call under -tags debug, so that
// a wrapper missing its runtime.KeepAlive is finalized (and freed) while C
// still uses its handle, which the tests then notice.
func MaybeGC() { runtime.GC() }
