//go:build cgo && !wkcore_purego && !debug

package wkabi

// DebugBuild is true under -tags debug.
const DebugBuild = false

// MaybeGC does nothing without -tags debug (see debug.go).
func MaybeGC() {}
