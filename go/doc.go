// Package wkcore is the Go binding of wkcore, the lock-free core that
// WuKongIM embeds for its hottest coordination paths. It wraps the C ABI
// declared in include/wkcore.h (generation 2; contract: docs/ADMISSION-API.md)
// through cgo.
//
// # Building
//
// The package links the Rust static library statically. Build it first, from
// the repository root:
//
//	cargo build --release -p wkcore-ffi
//
// which produces target/release/libwkcore.a; the #cgo lines in link.go find
// it and include/wkcore.h relative to this directory. A library built for
// another ABI generation fails at link time (the symbol wk_abi_v2 is missing),
// a header of another generation fails to compile, and a library that reports
// another wk_abi_version() makes the package panic at init.
//
// # Handles
//
// Every wrapper (Slot, AdmissionRegistry, MetricsRegistry) owns one reference
// to a Rust object. Close releases it and may be called more than once; after
// Close every method returns ErrHandleClosed. A finalizer calls Close for a
// forgotten handle, but it is only a safety net: release handles explicitly.
// Close must not run concurrently with another method on the same wrapper;
// give each owner its own handle with Clone instead. All other methods are
// safe for concurrent use.
//
// # Errors
//
// Every status of the C ABI maps to one error, built once at package init, so
// the admission path never allocates. Texts and relations come from the
// library, which writes them once: an error's text is wk_status_str of its
// status (upstream multiraft's texts for refusals), and errors.Is follows
// wk_status_is. A busy proposal matches both ErrProposalBackpressure and
// ErrSlotBusy ("multiraft: proposal backpressure: multiraft: slot busy"); a
// busy action of another kind is exactly ErrSlotBusy; a throttled background
// proposal matches ErrBackgroundProposalThrottled and ErrProposalBackpressure.
// A failed slot returns a FatalError carrying its code, which matches
// ErrSlotFailed. A status this package does not know (a newer library) gives an
// error that says so. Match errors with errors.Is or errors.As, never by text.
//
// # Metrics
//
// Slots count their admission decisions in a MetricsRegistry: NewSlot in the
// process-wide one (GlobalMetrics), NewSlotIn in one of your own
// (NewMetricsRegistry), which sees only its own slots. The families are the
// library's; this package reads them through one generic export and names
// none: MetricsRegistry.Snapshot returns every family and series,
// MetricsRegistry.Render (RenderMetrics for the process-wide registry) the
// library's Prometheus text, and a Collector (NewCollector,
// MetricsRegistry.Collector) reports every family to client_golang, so a
// family added to the library is exported with no change here.
package wkcore
