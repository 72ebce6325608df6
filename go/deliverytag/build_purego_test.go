//go:build !cgo || wkcore_purego

package deliverytag

// debugBuild is false: -tags debug changes nothing in the pure-Go build.
const debugBuild = false
