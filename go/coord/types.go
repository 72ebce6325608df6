package coord

import (
	"math"
	"strconv"
)

// Limits and reserved values of the coordination ABI (the C header's
// WK_COORD_*, WK_HANDOFF_*, WK_LEDGER_* and WK_ANCHOR_TABLE_* constants; the
// cgo build checks them against the header at compile time).
const (
	// KeyMax is the longest key of a Ledger, in bytes (keys are 1 to KeyMax).
	KeyMax = 64
	// ChannelIDMax is the longest HandoffKey.ChannelID, in bytes (1 to this).
	ChannelIDMax = 128
	// TagKeyMax is the longest HandoffKey.TagKey, in bytes (0 to this).
	TagKeyMax = 64
	// LedgerCapacityMax is the largest capacity of a Ledger or HandoffLedger.
	LedgerCapacityMax = 1 << 22
	// AnchorTableCapacityMax is the largest capacity of an AnchorTable.
	AnchorTableCapacityMax = 1 << 22
	// BatchMax is the most keys one batch call (Place, FinalizeBatch,
	// ClaimBatch) takes.
	BatchMax = 4096
	// TimeUnset is the reserved time value: "unset" (an anchor never fired,
	// a record not finalized). Every call refuses it as a time
	// (ErrInvalidTime); AnchorTable.Insert takes it as "insert unset".
	TimeUnset uint64 = math.MaxUint64
	// DeadlineNever is a deadline that never comes: the reconciler never
	// times the record out.
	DeadlineNever uint64 = math.MaxUint64
)

// Kind is the kind of a byte-keyed Ledger: the `ledger` label of its
// wkcore_coord_* metric series. Both kinds are the same structure.
type Kind uint32

// The ledger kinds (the C ABI's WK_LEDGER_KIND_*).
const (
	// KindClaim is a ledger of two-phase claims (ledger="claim").
	KindClaim Kind = 0
	// KindPending is a ledger of pending records: receipts, timeouts, runner
	// marks, token pairs (ledger="pending").
	KindPending Kind = 1
)

// String returns "claim", "pending", or "kind(N)".
func (k Kind) String() string {
	switch k {
	case KindClaim:
		return "claim"
	case KindPending:
		return "pending"
	}
	return "kind(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// Result is what a coordination call decided (wk_coord_result). A decided
// outcome is a Result in a Decision, never an error.
type Result uint32

// The results.
const (
	// ResultWon: this call won the transition (inserted, claimed, finalized,
	// removed, refreshed).
	ResultWon Result = 0
	// ResultLost: a claim lost (another claim won first; for an insert or a
	// hand-off, a PENDING record already has the key).
	ResultLost Result = 1
	// ResultDuplicate: the record is already terminal; the Decision's
	// Outcome is what won.
	ResultDuplicate Result = 2
	// ResultNotFound: no record has the key (never inserted, or reclaimed).
	ResultNotFound Result = 3
	// ResultFull: the ledger is full; nothing inserted, nothing evicted.
	ResultFull Result = 4
	// ResultMismatch: the record holds another placeholder or id (claim,
	// take) or another runner (touch).
	ResultMismatch Result = 5
)

var resultNames = [...]string{"won", "lost", "duplicate", "not_found", "full", "mismatch"}

// String returns the result's snake_case name (the scenario files'), or
// "result(N)".
func (r Result) String() string {
	if int(r) < len(resultNames) {
		return resultNames[r]
	}
	return "result(" + strconv.FormatUint(uint64(r), 10) + ")"
}

// State is a record's state (wk_record_state).
type State uint32

// The states.
const (
	// StateNone: no record (not found, full), or a call that reports none.
	StateNone State = 0
	// StatePlaced: PENDING, holding the id it was placed (or inserted) with.
	StatePlaced State = 1
	// StateClaimed: PENDING, claimed by a request id.
	StateClaimed State = 2
	// StateFinalized: terminal; the Outcome says which.
	StateFinalized State = 3
)

var stateNames = [...]string{"none", "placed", "claimed", "finalized"}

// String returns the state's snake_case name, or "state(N)".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Pending reports whether s is a PENDING state (placed or claimed).
func (s State) Pending() bool { return s == StatePlaced || s == StateClaimed }

// Outcome is the terminal state a PENDING record moves to, exactly once:
// one of the four below or a host code HostOutcomeMin..HostOutcomeMax. 0 and
// 5..255 are not outcomes (ErrInvalidOutcome); 0 is also the Outcome of a
// Decision or Record that is not finalized.
type Outcome uint32

// The outcomes (WK_OUTCOME_*).
const (
	// OutcomeSucceeded: the work succeeded (a receipt, an ack).
	OutcomeSucceeded Outcome = 1
	// OutcomeFailed: the work failed.
	OutcomeFailed Outcome = 2
	// OutcomeTimedOut: the reconciler found the record past its deadline.
	OutcomeTimedOut Outcome = 3
	// OutcomeOrphaned: the orphan sweep found its runner quiet.
	OutcomeOrphaned Outcome = 4
	// HostOutcomeMin is the first host-defined outcome code.
	HostOutcomeMin Outcome = 256
	// HostOutcomeMax is the last host-defined outcome code.
	HostOutcomeMax Outcome = 65535
)

// Valid reports whether o is an outcome a call accepts.
func (o Outcome) Valid() bool {
	return (o >= OutcomeSucceeded && o <= OutcomeOrphaned) || (o >= HostOutcomeMin && o <= HostOutcomeMax)
}

// String returns "succeeded", "failed", "timed_out", "orphaned", "host(N)"
// for a host code, or "outcome(N)" for a value that is not an outcome.
func (o Outcome) String() string {
	switch {
	case o == OutcomeSucceeded:
		return "succeeded"
	case o == OutcomeFailed:
		return "failed"
	case o == OutcomeTimedOut:
		return "timed_out"
	case o == OutcomeOrphaned:
		return "orphaned"
	case o.Valid():
		return "host(" + strconv.FormatUint(uint64(o), 10) + ")"
	}
	return "outcome(" + strconv.FormatUint(uint64(o), 10) + ")"
}

// Decision is what one call decided: the result, and the record's state as
// the call left it (after a win) or found it (a loser). Outcome is the
// outcome that won when State is StateFinalized, else 0.
//
// Its layout is wk_coord_decision's (the cgo build lets the library write
// batch decisions straight into the caller's []Decision).
type Decision struct {
	Result  Result
	State   State
	Outcome Outcome
	_       uint32
}

// Won reports whether the call won its transition.
func (d Decision) Won() bool { return d.Result == ResultWon }

// String returns "result/state" or "result/state/outcome".
func (d Decision) String() string {
	s := d.Result.String() + "/" + d.State.String()
	if d.State == StateFinalized {
		s += "/" + d.Outcome.String()
	}
	return s
}

// Page is what one scan page did (Reconcile, Reclaim, FinalizeOwn,
// SweepOrphans): the slots it examined, the records it changed (timed out,
// reclaimed, finalized), and whether it ended a pass over the whole ledger.
type Page struct {
	Scanned int
	Changed int
	Wrapped bool
}

// Record is a moment's view of one record (wk_ledger_record, same layout).
type Record struct {
	// State is the record's state; Outcome the outcome that won when
	// finalized, else 0.
	State   State
	Outcome Outcome
	// ID is the placeholder (or inserted id), or the claim's request id.
	ID uint64
	// Runner is the runner that started the work (0: none).
	Runner uint64
	// Deadline is when the reconciler may time it out (DeadlineNever: never).
	Deadline uint64
	// RefreshedAt is when its runner last refreshed it (insert, claim, Touch).
	RefreshedAt uint64
	// FinalizedAt is when it was finalized; TimeUnset while PENDING.
	FinalizedAt uint64
	// Payload is the winning finalization's payload.
	Payload uint64
	// Duplicates counts the finalizations told they were duplicates.
	Duplicates uint64
	// LastDuplicatePayload is the payload of the latest duplicate (0: none).
	LastDuplicatePayload uint64
}

// Counts are a ledger's event counters (wk_ledger_counts, same layout): the
// sums its wkcore_coord_* series count.
type Counts struct {
	// ClaimsWon counts claims won (hand-offs: first claims).
	ClaimsWon uint64
	// ClaimsLost counts claims that did not win (hand-offs: retries).
	ClaimsLost uint64
	// FinalizationsWon counts finalizations won (receipts, FinalizeOwn,
	// SweepOrphans, a Take that removed its record).
	FinalizationsWon uint64
	// FinalizationsDuplicate counts finalizations that found the record
	// terminal.
	FinalizationsDuplicate uint64
	// ReconciledTimeouts counts PENDING records the reconciler timed out.
	ReconciledTimeouts uint64
	// RejectedFull counts inserts refused as full (Place: one per key).
	RejectedFull uint64
	// Reclaimed counts records reclaimed (or removed by Take).
	Reclaimed uint64
}

// FireKind is what AnchorTable.TryFire decided (wk_fire_kind).
type FireKind uint32

// The fire kinds.
const (
	// FireFired: this call advanced the anchor from Fire.Value to now: fire.
	FireFired FireKind = 0
	// FireNotDue: not due before Fire.Value.
	FireNotDue FireKind = 1
	// FireLost: another caller changed the anchor first: skip.
	FireLost FireKind = 2
	// FireAnchoredFirstSeen: the anchor was unset; this call anchored it at
	// now without firing (the first firing comes one period later).
	FireAnchoredFirstSeen FireKind = 3
)

var fireNames = [...]string{"fired", "not_due", "lost", "anchored_first_seen"}

// String returns the kind's snake_case name, or "fire_kind(N)".
func (k FireKind) String() string {
	if int(k) < len(fireNames) {
		return fireNames[k]
	}
	return "fire_kind(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// Fire is the outcome of AnchorTable.TryFire. Value is the anchor it
// advanced from (FireFired), when it is due (FireNotDue), else 0.
type Fire struct {
	Kind  FireKind
	Value uint64
}

// HandoffKey identifies one delivery shard hand-off: the 6-tuple
// (ChannelID, ChannelType, MessageID, TargetNodeID, TagKey, TagVersion).
// Every field tells hand-offs apart. ChannelID is 1 to ChannelIDMax bytes,
// TagKey 0 to TagKeyMax (empty: a hand-off without a tag).
type HandoffKey struct {
	ChannelID    string
	ChannelType  uint8
	MessageID    uint64
	TargetNodeID uint64
	TagKey       string
	TagVersion   uint64
}

// LedgerConfig configures a Ledger.
type LedgerConfig struct {
	// Kind is KindClaim or KindPending (another value: ErrInvalidCapacity,
	// as the C ABI).
	Kind Kind
	// Capacity is how many records (PENDING and retained) it holds at most,
	// 1..LedgerCapacityMax; the slots are allocated up front.
	Capacity int
	// Retention is how long a terminal record is kept after its
	// finalization, in the host's time unit.
	Retention uint64
	// Metrics is the registry it counts in; nil: the process-wide one.
	Metrics *MetricsRegistry
}

// HandoffConfig configures a HandoffLedger.
type HandoffConfig struct {
	// Capacity is how many hand-offs it holds at most, 1..LedgerCapacityMax.
	Capacity int
	// Retention is how long a completed hand-off is kept, in the host's
	// time unit.
	Retention uint64
	// Metrics is the registry it counts in (ledger="handoff"); nil: the
	// process-wide one.
	Metrics *MetricsRegistry
}

// validCapacity reports whether capacity is in 1..max.
func validCapacity(capacity, max int) bool { return capacity >= 1 && capacity <= max }

// validKey reports whether key is a valid Ledger key (1..KeyMax bytes).
func validKey(key []byte) bool { return len(key) >= 1 && len(key) <= KeyMax }

// validHandoffKey reports whether k's strings are within their bounds.
func validHandoffKey(k *HandoffKey) bool {
	return len(k.ChannelID) >= 1 && len(k.ChannelID) <= ChannelIDMax && len(k.TagKey) <= TagKeyMax
}
