//go:build !debug

package wkcore

// debugBuild is true under -tags debug.
const debugBuild = false

// maybeGC does nothing without -tags debug (see debug.go).
func maybeGC() {}
