// Package mqttsession is wkcore's MQTT owner execution registry for Go
// hosts, shaped like upstream's internal/runtime/mqttsession (Owners,
// Operation, OwnerSweeper, Isolation, RetiredBoot and its sentinels), so a
// WuKongIM call site swaps by import path.
//
// Every MQTT connection gets an owner: a registry-issued identity (node,
// boot, connection id, generations). Work for a connection runs inside
// admitted operations, Begin … Done, at most MaxOperations per owner with no
// queueing, and only while the owner's committed lease lasts. Quiesce proves
// the owner isolated: it fences it, closes its transport (one attempt shared
// by concurrent callers, on the goroutine of the caller that runs it) and
// succeeds only once the transport closed and every admitted operation is
// Done. A failed close keeps the owner fenced and holding capacity; an
// owner whose effect was marked uncertain answers ErrOwnerUnknown for good.
// Sweep (or an OwnerSweeper) closes owners whose reservation, lease or close
// retry ran out, earliest first, bounded per call.
//
// # Contexts
//
// Begin pays for no context. An Operation keeps its caller's context, and
// Context() makes the operation's own on first use: the caller's values and
// deadline, cancelled when the caller's context ends, when the owner is
// fenced (Fence, MarkUncertain, Quiesce, a sweep, an expired lease found by
// Begin or Check; cause ErrOwnerFenced), when admission stops (cause
// ErrOwnerStopped) and by Done (context.Canceled). Cancellation never ends
// an operation: only Done does. Calls that wait (Quiesce, Sweep, Close)
// return ctx.Err() itself — context.Canceled or context.DeadlineExceeded —
// and the close callback's context errors pass through as these two; any
// other callback error or a panic is ErrOwnerClose, its text dropped.
//
// # Builds
//
// The cgo build (Implementation "rust", owners_cgo.go) runs the Rust core's
// owner registry over its C ABI: begin and done are one C call each on the
// owner's own state word; Go keeps a sharded map from connection id to the
// owner's handle (the identity checks run in Go, in upstream's order), each
// owner's close callback (a cgo.Handle, called back on the goroutine of the
// blocking call with that call's context) and the lazy operation contexts.
// Waits carry the caller's deadline and a cancel token cancelled with its
// context. A registry made with OwnerOptions.Now runs on a manual clock that
// follows Now. With CGO_ENABLED=0 or -tags wkcore_purego, Owners is the
// mutex implementation (mutex_owners.go): upstream's algorithm under one
// mutex, the indexed deadline heap (container/heap, one entry per owner),
// Implementation "go"; it is compiled in the cgo build too (the benchmarks'
// "purego" column). Metrics exports the owner families in both builds;
// WuKongIM declares families of the same two names itself (HostFamilies):
// a host keeps one source per name.
//
// # Swapping the import
//
// The identity contract (Key, Owner, ValidIdentity, ErrInvalidIdentity,
// upstream's internal/contracts/mqttsession) is the subpackage
// go/mqttsession/contract, whose names are this package's own (aliases and
// the same error value). Isolation.Retired is upstream's RetiredOwners
// interface; RetiredBoot's fields are unexported (only Retirement mints
// one). OwnerSweeperOptions.Registry takes WuKongIM's *goroutine.Registry
// as it is. The white-box names upstream's sweeper tests use (opts, sweep)
// are offered as Options and Turn for a shim (docs/GO.md).
package mqttsession
