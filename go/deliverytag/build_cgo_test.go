//go:build cgo && !wkcore_purego

package deliverytag

import "github.com/wukongim/wkcore/go/internal/wkabi"

// debugBuild is true under -tags debug, where every C call runs a GC: the
// allocation tests skip and the stress tests shrink.
const debugBuild = wkabi.DebugBuild
