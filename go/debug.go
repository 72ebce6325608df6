//go:build debug

package wkcore

import "runtime"

// debugBuild is true under -tags debug.
const debugBuild = true

// maybeGC forces a collection before every C call under -tags debug, so that
// a wrapper missing its runtime.KeepAlive is finalized (and freed) while C
// still uses its handle, which the tests then notice.
func maybeGC() { runtime.GC() }
