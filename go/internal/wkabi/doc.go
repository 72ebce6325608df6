// Package wkabi is the one place that links the Rust core: the #cgo link lines
// (per platform, relative to this directory), the ABI generation guard, the
// library's status texts and relations, and the generic metrics export. System
// packages (multiraft, …) call the C ABI themselves and import this package
// for the link; in the pure-Go build (CGO_ENABLED=0 or -tags wkcore_purego)
// it is empty.
//
// The archive is not part of the module: build it with scripts/go-lib in a
// wkcore checkout, which writes libwkcore_<goos>_<goarch>.a here. A cgo
// build without it stops at compile time with a message that says so.
package wkabi
