// Package wkcore is the Go binding of wkcore, the lock-free core that
// WuKongIM embeds for its hottest coordination paths. It wraps the C ABI
// declared in include/wkcore.h (contract: docs/ADMISSION-API.md) through cgo.
//
// # Building
//
// The package links the Rust static library statically. Build it first, from
// the repository root:
//
//	cargo build --release -p wkcore-ffi
//
// which produces target/release/libwkcore.a and include/wkcore.h; the #cgo
// lines in link.go find both relative to this directory. A library built for
// another ABI generation fails at link time (the symbol wk_abi_v1 is missing);
// one that reports another wk_abi_version() makes the package panic at init.
//
// # Handles
//
// Every wrapper (Slot, AdmissionRegistry) owns one reference to a Rust object.
// Close releases it and may be called more than once; after Close every method
// returns ErrHandleClosed. A finalizer calls Close for a forgotten handle, but
// it is only a safety net: release handles explicitly. Close must not run
// concurrently with another method on the same wrapper; give each owner its
// own handle with Clone instead. All other methods are safe for concurrent use.
//
// # Errors
//
// Statuses map to sentinel errors that carry the upstream multiraft texts and
// relations: a busy proposal matches both ErrProposalBackpressure and
// ErrSlotBusy, a throttled one both ErrBackgroundProposalThrottled and
// ErrProposalBackpressure. Match them with errors.Is, never by text.
package wkcore
