//go:build !cgo || wkcore_purego

package metrics_test

const libraryLinked = false
