// Package multiraft is wkcore's drop-in for the control admission of upstream
// WuKongIM's pkg/slot/multiraft: enqueueControl's checks in upstream's order,
// the bounded FIFO of control actions, the background quota, upstream's error
// sentinels and texts, its ProposalAdmissionObserver and its metric family.
// A WuKongIM call site swaps by import path; docs/GO.md shows the edit.
//
// # Two builds, one behaviour
//
// In both builds admission runs inline, lock-free, with no C call: one CAS
// on the slot's state word decides and accounts, and the value goes to a ring
// of cells owned by the queue (engine.go). With cgo (the default where cgo is
// on) the words are the Rust core's (a hosted slot: the library's snapshot,
// counters and metrics read them); with CGO_ENABLED=0, or the build tag
// wkcore_purego, they are Go memory. The code that runs on them is the same.
// Both builds have the same API and pass the same tests and scenario files;
// Implementation says which one a binary has. The cgo build needs the Rust
// archive: run scripts/go-lib in the wkcore checkout (a build without it
// fails with a message saying so).
//
// # A queue of Go values
//
// ControlQueue[T] carries the host's values (upstream's controlAction, with
// its future) itself: Admit queues a value, Drain hands values to a callback
// in FIFO order, DrainInto copies them into a slice, CloseAndDrain hands over
// everything still queued so the host can cancel it, as upstream's close
// cancels queued requests. The values sit in a ring indexed by each item's
// position whose capacity grows with the depth the queue reaches, not with
// how many items passed (State().MemoryBytes).
//
// Admission refusals, in upstream's order: ErrSlotClosed (after CloseSlot),
// the error given to Fail, ErrNotLeader (a proposal or config change on a
// follower), ErrConfigChangePending, busy (ErrSlotBusy; for a proposal an
// error matching both ErrProposalBackpressure and ErrSlotBusy), throttled (a
// background proposal over its quota: matches ErrBackgroundProposalThrottled
// and ErrProposalBackpressure). An unknown kind gives ErrInvalidArgument.
//
// # Config changes
//
// Admitting a config change (AdmitConfigChange, or Admit with
// ControlConfigChange) sets the slot's pending flag and returns a ConfigChange;
// the drained Control carries the same one. Only its Resolve clears the flag,
// once: a second or stale Resolve returns ErrConfigChangeResolved. Nothing
// else clears it, so a config change cannot be lost or doubled by a missed or
// early call on another path.
//
// # Handles
//
// Every method is safe for concurrent use, Close included: a call that starts
// after Close returns ErrHandleClosed. Close hands over what admissions won
// before it and drops the value storage; the slot's few hundred bytes of
// words go with the queue, to the garbage collector. Consumers (Drain,
// DrainInto) are serialized; the one worker per slot that upstream runs never
// waits. A nil queue returns ErrHandleClosed from every method.
//
// # Callbacks
//
// Drain's callback and the observer run on the calling goroutine, outside the
// admission path: a Drain callback may admit into the same queue, but it runs
// while its Drain holds the queue's consumer side, so it must not call Drain,
// DrainInto, Close or CloseAndDrain on the same queue (they would wait for the
// Drain that is calling it: a deadlock). A callback that panics propagates its panic to the caller of Drain;
// the queue stays consistent: the value it panicked on counts as handed over,
// the values taken after it are handed to the next Drain first. An observer
// that panics propagates from Admit after the decision took effect.
//
// # Metrics
//
// Queues count their proposal decisions in a MetricsRegistry (the
// process-wide one unless Options.Metrics says otherwise) under upstream's
// family wukongim_slot_proposal_admission_total{class,result}. The registry is
// a metrics.Source; the Prometheus collector lives in the separate module
// github.com/wukongim/wkcore/go/prometheus, so importing this package pulls
// in no Prometheus dependency. A host that already exports a family of that
// name passes its own ProposalAdmissionObserver instead (Options.Observer,
// upstream's method shape; AdmissionObserverOf adapts one whose slot id and
// class are the host's own types), with Options.DiscardMetrics so the
// process-wide registry is not counted as well. Each package's registry
// reports only its own families (the core's process-wide registry holds
// every system's), so one collector per package never reports a family
// twice.
package multiraft
