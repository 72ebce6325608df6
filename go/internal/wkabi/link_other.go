//go:build cgo && !wkcore_purego && !(linux && (amd64 || arm64))

package wkabi

/*
#error "wkcore: the Rust core is built for linux/amd64 and linux/arm64 only; build with CGO_ENABLED=0 or -tags wkcore_purego for the pure-Go implementation"
*/
import "C"
