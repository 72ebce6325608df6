//go:build !cgo || wkcore_purego

package mqttsession

import "testing"

// benchFloorExtra: nothing crosses in the pure-Go build.
func benchFloorExtra(*testing.B) {}
