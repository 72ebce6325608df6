// Package coord is wkcore's coordination primitives for Go hosts: the
// conditional updates that make duplicate work harmless, where exactly one
// caller learns that it won.
//
//   - Ledger: a bounded table of byte-keyed records that are PENDING until
//     exactly one terminal write wins. One structure carries two-phase claims
//     (Place a placeholder per target, then Claim swaps it for the real
//     request id; one claim wins), pending-only finalization (Finalize,
//     FinalizeBatch: the first terminal write wins, later ones learn what
//     won), the reconciler (Reconcile times out records past their deadline
//     through the same transition), retention and reclaim (terminal records
//     stay for the retention so late duplicates are recognised, then Reclaim
//     frees them), runner marks (FinalizeOwn for a restarting runner,
//     SweepOrphans for runners gone quiet, Touch as the heartbeat) and
//     compare-and-delete (Take: of two rotations with one token exactly one
//     succeeds). Kind (KindClaim, KindPending) only names its metric series.
//   - HandoffLedger: shard hand-off idempotency keyed by the 6-tuple
//     HandoffKey: the first Claim wins, a retry or a log replay is told it is
//     in flight (ResultLost) or completed (ResultDuplicate) while the record
//     is retained.
//   - AnchorTable: scheduled-trigger anchors by id. TryFire is the whole
//     decision (fired, not due, lost, or anchored first-seen: an unset
//     anchor is anchored without firing, so a new trigger first fires one
//     period after it is first seen), so two replicas that share a table
//     fire each period once.
//   - Shared-subscription topics: BuildShareTopic and SplitShareTopic build
//     and split $share/{group}/{filter}; ACLFilter is the filter an ACL must
//     match (never the whole string: a rule uplink/# does not cover
//     $share/g/uplink/#, and the refusal is silent). Pure functions, the same
//     Go code in both builds.
//
// # Decisions and errors
//
// A decided outcome is a Decision (won, lost, duplicate, not found, full,
// mismatch, with the record's state and the outcome that won), never an
// error: a duplicate receipt is not a failure of the call. An error means the
// call was refused for its arguments and changed nothing: ErrInvalidKey
// (empty or longer than KeyMax; a hand-off's ChannelID empty or above
// ChannelIDMax, its TagKey above TagKeyMax), ErrInvalidOutcome (0, 5–255,
// above 65535), ErrInvalidCapacity (0, above the maximum, an unknown Kind),
// ErrInvalidTime (TimeUnset as a time), each also matching
// ErrInvalidArgument; ErrInvalidArgument itself for a batch of 0 or more than
// BatchMax keys, an out slice or payloads of the wrong length, a negative
// limit; ErrHandleClosed after Close. The AnchorTable reports an unknown id,
// a known one on Insert and a full table as ErrNotFound, ErrAlreadyExists and
// ErrFull. When several arguments are bad, the error is the one the C ABI
// checks first, in both builds.
//
// Times are the host's (any unit, the same for every call on one handle);
// nothing here reads a clock. TimeUnset (math.MaxUint64) is reserved;
// DeadlineNever (the same value) as a deadline means "never time out".
//
// # Batches
//
// Place, FinalizeBatch and ClaimBatch take up to BatchMax keys and write one
// Decision per key into out, which must be exactly as long as the batch (the
// caller owns it, so a batch call allocates nothing). In the cgo build the
// keys cross to C as one concatenated byte buffer and an array of lengths
// (hand-off keys as an array of the fixed-size C struct), built in a buffer
// the handle reuses: a [][]byte is never passed to C, since its elements are
// Go pointers.
//
// # Two builds, one behaviour
//
// With cgo, the types are the Rust core's (wk_ledger, wk_handoff_ledger,
// wk_anchor_table): every decision is one CAS on the record's state word,
// lock-free. With CGO_ENABLED=0, or the build tag wkcore_purego, they are a
// mutex and a map in Go with the same contract, bounded capacity, slot order
// and scan pages included, so the shared scenario file
// (testdata/coord/scenarios.json) replays identically on both.
// Implementation says which one a binary has.
//
// # Handles
//
// Every method is safe for concurrent use, Close included: a call that starts
// after Close returns ErrHandleClosed, and Close waits for the calls in
// flight before it frees the C memory (a finalizer remains only as a safety
// net for a handle dropped without Close). A nil or zero-value handle returns
// ErrHandleClosed from every method.
//
// # Metrics
//
// Ledgers count their decisions in a MetricsRegistry (the process-wide one
// unless the config says otherwise) under the families
// wkcore_coord_claims_total{ledger,result},
// wkcore_coord_finalizations_total{ledger,result},
// wkcore_coord_reconciled_timeouts_total{ledger},
// wkcore_coord_rejected_total{ledger,reason} and
// wkcore_coord_reclaimed_total{ledger}; a closed ledger's counts stay. The
// registry is a metrics.Source (see go/prometheus for a collector).
package coord
