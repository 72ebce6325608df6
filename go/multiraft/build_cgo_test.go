//go:build cgo && !wkcore_purego

package multiraft

import "github.com/wukongim/wkcore/go/internal/wkabi"

// debugBuild is true under -tags debug, where every C call runs a GC: the
// allocation tests skip and the stress tests shrink.
const debugBuild = wkabi.DebugBuild

// The scenario replay's position modulus is the words' (the core's
// WK_SLOT_POSITION_MODULUS); the array lengths are negative otherwise.
var (
	_ [countMask + 1 - scenarioPositionModulus]struct{}
	_ [scenarioPositionModulus - countMask - 1]struct{}
)
