//go:build cgo && !wkcore_purego

package coord

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// Implementation names the build: "rust" here, where the Rust core is linked;
// "go" in the pure-Go build (CGO_ENABLED=0, or the wkcore_purego tag).
const Implementation = "rust"

// The Go constants and layouts are the header's; the array lengths are
// negative (a compile error) otherwise.
var (
	_ [C.WK_COORD_KEY_MAX - KeyMax]struct{}
	_ [KeyMax - C.WK_COORD_KEY_MAX]struct{}
	_ [C.WK_HANDOFF_CHANNEL_ID_MAX - ChannelIDMax]struct{}
	_ [ChannelIDMax - C.WK_HANDOFF_CHANNEL_ID_MAX]struct{}
	_ [C.WK_HANDOFF_TAG_KEY_MAX - TagKeyMax]struct{}
	_ [TagKeyMax - C.WK_HANDOFF_TAG_KEY_MAX]struct{}
	_ [C.WK_LEDGER_CAPACITY_MAX - LedgerCapacityMax]struct{}
	_ [LedgerCapacityMax - C.WK_LEDGER_CAPACITY_MAX]struct{}
	_ [C.WK_ANCHOR_TABLE_CAPACITY_MAX - AnchorTableCapacityMax]struct{}
	_ [AnchorTableCapacityMax - C.WK_ANCHOR_TABLE_CAPACITY_MAX]struct{}
	_ [C.WK_COORD_BATCH_MAX - BatchMax]struct{}
	_ [BatchMax - C.WK_COORD_BATCH_MAX]struct{}
	_ [C.WK_HOST_OUTCOME_MIN - HostOutcomeMin]struct{}
	_ [HostOutcomeMin - C.WK_HOST_OUTCOME_MIN]struct{}

	// Decision, Record and Counts are written by the library in place.
	_ [unsafe.Sizeof(Decision{}) - C.sizeof_wk_coord_decision]struct{}
	_ [C.sizeof_wk_coord_decision - unsafe.Sizeof(Decision{})]struct{}
	_ [unsafe.Offsetof(Decision{}.State) - unsafe.Offsetof(C.wk_coord_decision{}.state)]struct{}
	_ [unsafe.Offsetof(C.wk_coord_decision{}.state) - unsafe.Offsetof(Decision{}.State)]struct{}
	_ [unsafe.Offsetof(Decision{}.Outcome) - unsafe.Offsetof(C.wk_coord_decision{}.outcome)]struct{}
	_ [unsafe.Offsetof(C.wk_coord_decision{}.outcome) - unsafe.Offsetof(Decision{}.Outcome)]struct{}
	_ [unsafe.Sizeof(Record{}) - C.sizeof_wk_ledger_record]struct{}
	_ [C.sizeof_wk_ledger_record - unsafe.Sizeof(Record{})]struct{}
	_ [unsafe.Offsetof(Record{}.ID) - unsafe.Offsetof(C.wk_ledger_record{}.id)]struct{}
	_ [unsafe.Offsetof(C.wk_ledger_record{}.id) - unsafe.Offsetof(Record{}.ID)]struct{}
	_ [unsafe.Offsetof(Record{}.LastDuplicatePayload) - unsafe.Offsetof(C.wk_ledger_record{}.last_duplicate_payload)]struct{}
	_ [unsafe.Offsetof(C.wk_ledger_record{}.last_duplicate_payload) - unsafe.Offsetof(Record{}.LastDuplicatePayload)]struct{}
	_ [unsafe.Sizeof(Counts{}) - C.sizeof_wk_ledger_counts]struct{}
	_ [C.sizeof_wk_ledger_counts - unsafe.Sizeof(Counts{})]struct{}

	// The enum values and status codes.
	_ [uint64(C.WK_COORD_RESULT_WON) - uint64(ResultWon)]struct{}
	_ [uint64(ResultWon) - uint64(C.WK_COORD_RESULT_WON)]struct{}
	_ [uint64(C.WK_COORD_RESULT_LOST) - uint64(ResultLost)]struct{}
	_ [uint64(ResultLost) - uint64(C.WK_COORD_RESULT_LOST)]struct{}
	_ [uint64(C.WK_COORD_RESULT_DUPLICATE) - uint64(ResultDuplicate)]struct{}
	_ [uint64(ResultDuplicate) - uint64(C.WK_COORD_RESULT_DUPLICATE)]struct{}
	_ [uint64(C.WK_COORD_RESULT_NOT_FOUND) - uint64(ResultNotFound)]struct{}
	_ [uint64(ResultNotFound) - uint64(C.WK_COORD_RESULT_NOT_FOUND)]struct{}
	_ [uint64(C.WK_COORD_RESULT_FULL) - uint64(ResultFull)]struct{}
	_ [uint64(ResultFull) - uint64(C.WK_COORD_RESULT_FULL)]struct{}
	_ [uint64(C.WK_COORD_RESULT_MISMATCH) - uint64(ResultMismatch)]struct{}
	_ [uint64(ResultMismatch) - uint64(C.WK_COORD_RESULT_MISMATCH)]struct{}
	_ [uint64(C.WK_RECORD_STATE_NONE) - uint64(StateNone)]struct{}
	_ [uint64(StateNone) - uint64(C.WK_RECORD_STATE_NONE)]struct{}
	_ [uint64(C.WK_RECORD_STATE_PLACED) - uint64(StatePlaced)]struct{}
	_ [uint64(StatePlaced) - uint64(C.WK_RECORD_STATE_PLACED)]struct{}
	_ [uint64(C.WK_RECORD_STATE_CLAIMED) - uint64(StateClaimed)]struct{}
	_ [uint64(StateClaimed) - uint64(C.WK_RECORD_STATE_CLAIMED)]struct{}
	_ [uint64(C.WK_RECORD_STATE_FINALIZED) - uint64(StateFinalized)]struct{}
	_ [uint64(StateFinalized) - uint64(C.WK_RECORD_STATE_FINALIZED)]struct{}
	_ [uint64(C.WK_OUTCOME_SUCCEEDED) - uint64(OutcomeSucceeded)]struct{}
	_ [uint64(OutcomeSucceeded) - uint64(C.WK_OUTCOME_SUCCEEDED)]struct{}
	_ [uint64(C.WK_OUTCOME_FAILED) - uint64(OutcomeFailed)]struct{}
	_ [uint64(OutcomeFailed) - uint64(C.WK_OUTCOME_FAILED)]struct{}
	_ [uint64(C.WK_OUTCOME_TIMED_OUT) - uint64(OutcomeTimedOut)]struct{}
	_ [uint64(OutcomeTimedOut) - uint64(C.WK_OUTCOME_TIMED_OUT)]struct{}
	_ [uint64(C.WK_OUTCOME_ORPHANED) - uint64(OutcomeOrphaned)]struct{}
	_ [uint64(OutcomeOrphaned) - uint64(C.WK_OUTCOME_ORPHANED)]struct{}
	_ [uint64(C.WK_FIRE_KIND_FIRED) - uint64(FireFired)]struct{}
	_ [uint64(FireFired) - uint64(C.WK_FIRE_KIND_FIRED)]struct{}
	_ [uint64(C.WK_FIRE_KIND_NOT_DUE) - uint64(FireNotDue)]struct{}
	_ [uint64(FireNotDue) - uint64(C.WK_FIRE_KIND_NOT_DUE)]struct{}
	_ [uint64(C.WK_FIRE_KIND_LOST) - uint64(FireLost)]struct{}
	_ [uint64(FireLost) - uint64(C.WK_FIRE_KIND_LOST)]struct{}
	_ [uint64(C.WK_FIRE_KIND_ANCHORED_FIRST_SEEN) - uint64(FireAnchoredFirstSeen)]struct{}
	_ [uint64(FireAnchoredFirstSeen) - uint64(C.WK_FIRE_KIND_ANCHORED_FIRST_SEEN)]struct{}
	_ [uint64(C.WK_LEDGER_KIND_CLAIM) - uint64(KindClaim)]struct{}
	_ [uint64(KindClaim) - uint64(C.WK_LEDGER_KIND_CLAIM)]struct{}
	_ [uint64(C.WK_LEDGER_KIND_PENDING) - uint64(KindPending)]struct{}
	_ [uint64(KindPending) - uint64(C.WK_LEDGER_KIND_PENDING)]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_KEY) - uint64(codeInvalidKey)]struct{}
	_ [uint64(codeInvalidKey) - uint64(C.WK_STATUS_COORD_INVALID_KEY)]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_OUTCOME) - uint64(codeInvalidOutcome)]struct{}
	_ [uint64(codeInvalidOutcome) - uint64(C.WK_STATUS_COORD_INVALID_OUTCOME)]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_CAPACITY) - uint64(codeInvalidCapacity)]struct{}
	_ [uint64(codeInvalidCapacity) - uint64(C.WK_STATUS_COORD_INVALID_CAPACITY)]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_TIME) - uint64(codeInvalidTime)]struct{}
	_ [uint64(codeInvalidTime) - uint64(C.WK_STATUS_COORD_INVALID_TIME)]struct{}
	_ [uint64(C.WK_COORD_TIME_UNSET) - TimeUnset]struct{}
	_ [TimeUnset - uint64(C.WK_COORD_TIME_UNSET)]struct{}
	_ [uint64(C.WK_COORD_DEADLINE_NEVER) - DeadlineNever]struct{}
	_ [DeadlineNever - uint64(C.WK_COORD_DEADLINE_NEVER)]struct{}
	_ [unsafe.Offsetof(Counts{}.Reclaimed) - unsafe.Offsetof(C.wk_ledger_counts{}.reclaimed)]struct{}
	_ [unsafe.Offsetof(C.wk_ledger_counts{}.reclaimed) - unsafe.Offsetof(Counts{}.Reclaimed)]struct{}
)

// statusErr maps a status of a coordination call to its error: nil for OK,
// the hot refusals without a look-up.
func statusErr(st C.wk_status) error {
	switch st {
	case C.WK_STATUS_OK:
		return nil
	case C.WK_STATUS_COORD_INVALID_KEY:
		return errInvalidKey
	case C.WK_STATUS_COORD_INVALID_OUTCOME:
		return errInvalidOutcome
	case C.WK_STATUS_COORD_INVALID_CAPACITY:
		return errInvalidCapacity
	case C.WK_STATUS_COORD_INVALID_TIME:
		return errInvalidTime
	case C.WK_STATUS_INVALID_ARGUMENT:
		return ErrInvalidArgument
	case C.WK_STATUS_NOT_FOUND:
		return ErrNotFound
	case C.WK_STATUS_ALREADY_EXISTS:
		return ErrAlreadyExists
	case C.WK_STATUS_FULL:
		return ErrFull
	}
	return status.Lookup(status.Code(st))
}

// emptyKey is what an empty key points at: the library refuses the length
// (ErrInvalidKey), where a NULL would be a null argument.
var emptyKey [1]byte

// keyPtr points at key's bytes (Go memory without pointers, so it may be
// passed to C).
func keyPtr(key []byte) *C.uint8_t {
	if len(key) == 0 {
		return (*C.uint8_t)(unsafe.Pointer(&emptyKey[0]))
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(key)))
}

// noDecision is what an empty out slice points at: the library refuses its
// length (ErrInvalidArgument) without writing.
var noDecision Decision

func decisionPtr(d *Decision) *C.wk_coord_decision { return (*C.wk_coord_decision)(unsafe.Pointer(d)) }

func decisionsPtr(out []Decision) *C.wk_coord_decision {
	if len(out) == 0 {
		return decisionPtr(&noDecision)
	}
	return decisionPtr(unsafe.SliceData(out))
}

func pageOf(p *C.wk_coord_page) Page {
	return Page{Scanned: int(p.scanned), Changed: int(p.changed), Wrapped: p.wrapped != 0}
}

// keyBatch is a batch's keys as the C ABI takes them: the bytes of every key
// concatenated and their lengths, both Go memory without pointers. A
// [][]byte cannot be passed to C (its elements are Go pointers).
type keyBatch struct {
	bytes []byte
	lens  []uint32
}

func (b *keyBatch) fill(keys [][]byte) {
	b.bytes, b.lens = b.bytes[:0], b.lens[:0]
	for _, k := range keys {
		b.bytes = append(b.bytes, k...)
		b.lens = append(b.lens, uint32(len(k)))
	}
}

// handoffBatch is a batch of hand-off keys as the C ABI takes them: an array
// of the fixed-size, pointer-free wk_handoff_key.
type handoffBatch struct {
	keys []C.wk_handoff_key
}

// scratch hands out a reusable batch buffer: the handle's own when it is
// free (no allocation on a handle used by one goroutine at a time), else one
// from a pool.
type scratch[T any] struct {
	slot atomic.Pointer[T]
	pool sync.Pool
}

func (s *scratch[T]) get() *T {
	if b := s.slot.Swap(nil); b != nil {
		return b
	}
	if b, ok := s.pool.Get().(*T); ok {
		return b
	}
	return new(T)
}

func (s *scratch[T]) put(b *T) {
	if !s.slot.CompareAndSwap(nil, b) {
		s.pool.Put(b)
	}
}

// Ledger is a bounded ledger of byte-keyed records (see doc.go). In this
// build it is the Rust core's wk_ledger: every decision is one CAS on the
// record's state word.
type Ledger struct {
	uses  wkabi.Uses
	p     *C.wk_ledger // set at construction, never written again
	batch scratch[keyBatch]
}

// NewLedger creates an empty ledger of cfg.Kind holding at most
// cfg.Capacity records. A capacity out of range or an unknown kind gives
// ErrInvalidCapacity; a closed cfg.Metrics gives ErrHandleClosed.
func NewLedger(cfg LedgerConfig) (*Ledger, error) {
	reg, err := cfg.Metrics.registry()
	if err != nil {
		return nil, err
	}
	if cfg.Capacity < 0 {
		return nil, errInvalidCapacity
	}
	var p *C.wk_ledger
	err = reg.With(func(m wkabi.Ptr) error {
		return statusErr(C.wk_ledger_new((*C.wk_metrics_registry)(m), C.uint32_t(cfg.Kind),
			C.uint64_t(cfg.Capacity), C.uint64_t(cfg.Retention), &p))
	})
	if err != nil {
		return nil, err
	}
	l := &Ledger{p: p}
	runtime.SetFinalizer(l, func(l *Ledger) { C.wk_ledger_free(l.p) })
	return l, nil
}

// acquire registers a call; false when the ledger is nil, zero or closed.
func (l *Ledger) acquire() bool {
	if l == nil || l.p == nil || !l.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (l *Ledger) release() {
	runtime.KeepAlive(l)
	l.uses.Release()
}

// Insert inserts a PENDING record under key (doc.go).
func (l *Ledger) Insert(key []byte, id, runner, deadline, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	var d Decision
	st := C.wk_ledger_insert(l.p, keyPtr(key), C.size_t(len(key)), C.uint64_t(id), C.uint64_t(runner),
		C.uint64_t(deadline), C.uint64_t(now), decisionPtr(&d))
	l.release()
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// Place places one PENDING record holding placeholder per key (doc.go).
func (l *Ledger) Place(keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error) {
	if !l.acquire() {
		return 0, ErrHandleClosed
	}
	defer l.release()
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	b := l.batch.get()
	b.fill(keys)
	var placed C.size_t
	st := C.wk_ledger_place(l.p, (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b.bytes))), C.size_t(len(b.bytes)),
		(*C.uint32_t)(unsafe.Pointer(unsafe.SliceData(b.lens))), C.size_t(len(keys)), C.uint64_t(placeholder),
		C.uint64_t(deadline), C.uint64_t(now), decisionsPtr(out), C.size_t(len(out)), &placed)
	l.batch.put(b)
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return int(placed), nil
}

// Claim swaps the placeholder of key's placed record for requestID (doc.go).
func (l *Ledger) Claim(key []byte, placeholder, requestID, runner, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	var d Decision
	st := C.wk_ledger_claim(l.p, keyPtr(key), C.size_t(len(key)), C.uint64_t(placeholder), C.uint64_t(requestID),
		C.uint64_t(runner), C.uint64_t(now), decisionPtr(&d))
	l.release()
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// Finalize moves key's PENDING record to outcome (doc.go).
func (l *Ledger) Finalize(key []byte, outcome Outcome, payload, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	var d Decision
	st := C.wk_ledger_finalize(l.p, keyPtr(key), C.size_t(len(key)), C.uint32_t(outcome), C.uint64_t(payload),
		C.uint64_t(now), decisionPtr(&d))
	l.release()
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// FinalizeBatch is Finalize for a batch of keys with one outcome and time.
func (l *Ledger) FinalizeBatch(keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error) {
	if !l.acquire() {
		return 0, ErrHandleClosed
	}
	defer l.release()
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	var pp *C.uint64_t
	if payloads != nil {
		if len(payloads) != len(keys) {
			return 0, ErrInvalidArgument
		}
		pp = (*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(payloads)))
	}
	b := l.batch.get()
	b.fill(keys)
	var won C.size_t
	st := C.wk_ledger_finalize_batch(l.p, (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b.bytes))),
		C.size_t(len(b.bytes)), (*C.uint32_t)(unsafe.Pointer(unsafe.SliceData(b.lens))), pp, C.size_t(len(keys)),
		C.uint32_t(outcome), C.uint64_t(now), decisionsPtr(out), C.size_t(len(out)), &won)
	l.batch.put(b)
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return int(won), nil
}

// Take removes key's PENDING record if its id is expectedID (doc.go).
func (l *Ledger) Take(key []byte, expectedID uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	var d Decision
	st := C.wk_ledger_take(l.p, keyPtr(key), C.size_t(len(key)), C.uint64_t(expectedID), decisionPtr(&d))
	l.release()
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// Touch is runner's heartbeat on key's PENDING record (doc.go).
func (l *Ledger) Touch(key []byte, runner, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	var d Decision
	st := C.wk_ledger_touch(l.p, keyPtr(key), C.size_t(len(key)), C.uint64_t(runner), C.uint64_t(now),
		decisionPtr(&d))
	l.release()
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// Reconcile times out the due PENDING records of the next limit slots.
func (l *Ledger) Reconcile(now uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	if st := C.wk_ledger_reconcile(l.p, C.uint64_t(now), C.size_t(limit), &p); st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// Reclaim frees the terminal records past their retention of the next
// limit slots.
func (l *Ledger) Reclaim(now uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	if st := C.wk_ledger_reclaim(l.p, C.uint64_t(now), C.size_t(limit), &p); st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// FinalizeOwn finalizes with outcome the PENDING records of the next limit
// slots that name runner.
func (l *Ledger) FinalizeOwn(runner uint64, outcome Outcome, now uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	st := C.wk_ledger_finalize_own(l.p, C.uint64_t(runner), C.uint32_t(outcome), C.uint64_t(now), C.size_t(limit), &p)
	if st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// SweepOrphans finalizes as OutcomeOrphaned the PENDING records of the next
// limit slots whose runner has been quiet for quiet.
func (l *Ledger) SweepOrphans(now, quiet uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	st := C.wk_ledger_sweep_orphans(l.p, C.uint64_t(now), C.uint64_t(quiet), C.size_t(limit), &p)
	if st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// Get returns a moment's view of key's record; false when there is none.
func (l *Ledger) Get(key []byte) (Record, bool, error) {
	if !l.acquire() {
		return Record{}, false, ErrHandleClosed
	}
	var r Record
	st := C.wk_ledger_get(l.p, keyPtr(key), C.size_t(len(key)), (*C.wk_ledger_record)(unsafe.Pointer(&r)),
		C.sizeof_wk_ledger_record)
	l.release()
	switch st {
	case C.WK_STATUS_OK:
		return r, true, nil
	case C.WK_STATUS_NOT_FOUND:
		return Record{}, false, nil
	}
	return Record{}, false, statusErr(st)
}

// Len returns the records held (PENDING and retained).
func (l *Ledger) Len() (int, error) {
	if !l.acquire() {
		return 0, ErrHandleClosed
	}
	n := C.wk_ledger_len(l.p)
	l.release()
	return int(n), nil
}

// Counts returns the ledger's event counters.
func (l *Ledger) Counts() (Counts, error) {
	if !l.acquire() {
		return Counts{}, ErrHandleClosed
	}
	var c Counts
	st := C.wk_ledger_counts_get(l.p, (*C.wk_ledger_counts)(unsafe.Pointer(&c)), C.sizeof_wk_ledger_counts)
	l.release()
	if st != C.WK_STATUS_OK {
		return Counts{}, statusErr(st)
	}
	return c, nil
}

// Close releases the ledger: it waits for the calls in flight, then frees
// the C handle (its metric series keep their counts). Calls that start after
// it, and a second Close, return ErrHandleClosed.
func (l *Ledger) Close() error {
	if l == nil || l.p == nil || !l.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(l, nil)
	C.wk_ledger_free(l.p)
	return nil
}

// HandoffLedger is the shard hand-off ledger, keyed by HandoffKey (doc.go).
// In this build it is the Rust core's wk_handoff_ledger.
type HandoffLedger struct {
	uses  wkabi.Uses
	p     *C.wk_handoff_ledger // set at construction, never written again
	batch scratch[handoffBatch]
}

// NewHandoffLedger creates an empty hand-off ledger of at most cfg.Capacity
// records (ErrInvalidCapacity out of range; ErrHandleClosed for a closed
// cfg.Metrics).
func NewHandoffLedger(cfg HandoffConfig) (*HandoffLedger, error) {
	reg, err := cfg.Metrics.registry()
	if err != nil {
		return nil, err
	}
	if cfg.Capacity < 0 {
		return nil, errInvalidCapacity
	}
	var p *C.wk_handoff_ledger
	err = reg.With(func(m wkabi.Ptr) error {
		return statusErr(C.wk_handoff_ledger_new((*C.wk_metrics_registry)(m), C.uint64_t(cfg.Capacity),
			C.uint64_t(cfg.Retention), &p))
	})
	if err != nil {
		return nil, err
	}
	l := &HandoffLedger{p: p}
	runtime.SetFinalizer(l, func(l *HandoffLedger) { C.wk_handoff_ledger_free(l.p) })
	return l, nil
}

func (l *HandoffLedger) acquire() bool {
	if l == nil || l.p == nil || !l.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (l *HandoffLedger) release() {
	runtime.KeepAlive(l)
	l.uses.Release()
}

// cKey writes k as the C struct; false if a string is too long to fit (the
// library refuses an empty channel id itself).
func cKey(k *HandoffKey, out *C.wk_handoff_key) bool {
	if len(k.ChannelID) > ChannelIDMax || len(k.TagKey) > TagKeyMax {
		return false
	}
	out.message_id = C.uint64_t(k.MessageID)
	out.target_node_id = C.uint64_t(k.TargetNodeID)
	out.tag_version = C.uint64_t(k.TagVersion)
	out.channel_type = C.uint8_t(k.ChannelType)
	out.channel_id_len = C.uint8_t(len(k.ChannelID))
	out.tag_key_len = C.uint8_t(len(k.TagKey))
	out.reserved = [5]C.uint8_t{}
	copy((*[ChannelIDMax]byte)(unsafe.Pointer(&out.channel_id))[:], k.ChannelID)
	copy((*[TagKeyMax]byte)(unsafe.Pointer(&out.tag_key))[:], k.TagKey)
	return true
}

// Claim claims the hand-off key: the first claim wins (doc.go).
func (l *HandoffLedger) Claim(key HandoffKey, deadline, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	defer l.release()
	var k C.wk_handoff_key
	if !cKey(&key, &k) {
		return Decision{}, errInvalidKey
	}
	var d Decision
	if st := C.wk_handoff_ledger_claim(l.p, &k, C.uint64_t(deadline), C.uint64_t(now), decisionPtr(&d)); st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// ClaimBatch is Claim for a batch of keys; it returns how many won.
func (l *HandoffLedger) ClaimBatch(keys []HandoffKey, deadline, now uint64, out []Decision) (int, error) {
	if !l.acquire() {
		return 0, ErrHandleClosed
	}
	defer l.release()
	if len(keys) == 0 || len(keys) > BatchMax {
		return 0, ErrInvalidArgument
	}
	b := l.batch.get()
	defer l.batch.put(b)
	if cap(b.keys) < len(keys) {
		b.keys = make([]C.wk_handoff_key, len(keys))
	}
	ck := b.keys[:len(keys)]
	for i := range keys {
		if !cKey(&keys[i], &ck[i]) {
			return 0, errInvalidKey
		}
	}
	var won C.size_t
	st := C.wk_handoff_ledger_claim_batch(l.p, unsafe.SliceData(ck), C.size_t(len(ck)), C.uint64_t(deadline),
		C.uint64_t(now), decisionsPtr(out), C.size_t(len(out)), &won)
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return int(won), nil
}

// Complete completes the hand-off key with outcome (doc.go).
func (l *HandoffLedger) Complete(key HandoffKey, outcome Outcome, now uint64) (Decision, error) {
	if !l.acquire() {
		return Decision{}, ErrHandleClosed
	}
	defer l.release()
	var k C.wk_handoff_key
	if !cKey(&key, &k) {
		return Decision{}, errInvalidKey
	}
	var d Decision
	st := C.wk_handoff_ledger_complete(l.p, &k, C.uint32_t(outcome), C.uint64_t(now), decisionPtr(&d))
	if st != C.WK_STATUS_OK {
		return Decision{}, statusErr(st)
	}
	return d, nil
}

// Reconcile times out the due hand-offs of the next limit slots.
func (l *HandoffLedger) Reconcile(now uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	if st := C.wk_handoff_ledger_reconcile(l.p, C.uint64_t(now), C.size_t(limit), &p); st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// Reclaim frees the hand-offs past their retention of the next limit slots.
func (l *HandoffLedger) Reclaim(now uint64, limit int) (Page, error) {
	if !l.acquire() {
		return Page{}, ErrHandleClosed
	}
	defer l.release()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	var p C.wk_coord_page
	if st := C.wk_handoff_ledger_reclaim(l.p, C.uint64_t(now), C.size_t(limit), &p); st != C.WK_STATUS_OK {
		return Page{}, statusErr(st)
	}
	return pageOf(&p), nil
}

// Get returns a moment's view of the hand-off key; false when there is none.
func (l *HandoffLedger) Get(key HandoffKey) (Record, bool, error) {
	if !l.acquire() {
		return Record{}, false, ErrHandleClosed
	}
	defer l.release()
	var k C.wk_handoff_key
	if !cKey(&key, &k) {
		return Record{}, false, errInvalidKey
	}
	var r Record
	st := C.wk_handoff_ledger_get(l.p, &k, (*C.wk_ledger_record)(unsafe.Pointer(&r)), C.sizeof_wk_ledger_record)
	switch st {
	case C.WK_STATUS_OK:
		return r, true, nil
	case C.WK_STATUS_NOT_FOUND:
		return Record{}, false, nil
	}
	return Record{}, false, statusErr(st)
}

// Len returns the hand-offs held.
func (l *HandoffLedger) Len() (int, error) {
	if !l.acquire() {
		return 0, ErrHandleClosed
	}
	n := C.wk_handoff_ledger_len(l.p)
	l.release()
	return int(n), nil
}

// Counts returns the ledger's event counters.
func (l *HandoffLedger) Counts() (Counts, error) {
	if !l.acquire() {
		return Counts{}, ErrHandleClosed
	}
	var c Counts
	st := C.wk_handoff_ledger_counts_get(l.p, (*C.wk_ledger_counts)(unsafe.Pointer(&c)), C.sizeof_wk_ledger_counts)
	l.release()
	if st != C.WK_STATUS_OK {
		return Counts{}, statusErr(st)
	}
	return c, nil
}

// Close releases the ledger (as Ledger.Close).
func (l *HandoffLedger) Close() error {
	if l == nil || l.p == nil || !l.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(l, nil)
	C.wk_handoff_ledger_free(l.p)
	return nil
}

// AnchorTable holds scheduled-trigger anchors by id (doc.go). In this build
// it is the Rust core's wk_anchor_table: TryFire is one CAS on the anchor.
type AnchorTable struct {
	uses wkabi.Uses
	p    *C.wk_anchor_table // set at construction, never written again
}

// NewAnchorTable creates an empty table of at most capacity anchors
// (1..AnchorTableCapacityMax, else ErrInvalidCapacity).
func NewAnchorTable(capacity int) (*AnchorTable, error) {
	if capacity < 0 {
		return nil, errInvalidCapacity
	}
	var p *C.wk_anchor_table
	if st := C.wk_anchor_table_new(C.uint64_t(capacity), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	t := &AnchorTable{p: p}
	runtime.SetFinalizer(t, func(t *AnchorTable) { C.wk_anchor_table_free(t.p) })
	return t, nil
}

func (t *AnchorTable) acquire() bool {
	if t == nil || t.p == nil || !t.uses.Acquire() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (t *AnchorTable) release() {
	runtime.KeepAlive(t)
	t.uses.Release()
}

// Insert adds trigger id anchored at value (TimeUnset: unset).
func (t *AnchorTable) Insert(id, value uint64) error {
	if !t.acquire() {
		return ErrHandleClosed
	}
	st := C.wk_anchor_table_insert(t.p, C.uint64_t(id), C.uint64_t(value))
	t.release()
	return statusErr(st)
}

// Remove removes trigger id.
func (t *AnchorTable) Remove(id uint64) error {
	if !t.acquire() {
		return ErrHandleClosed
	}
	st := C.wk_anchor_table_remove(t.p, C.uint64_t(id))
	t.release()
	return statusErr(st)
}

// TryFire decides whether trigger id fires at now with period (doc.go).
func (t *AnchorTable) TryFire(id, now, period uint64) (Fire, error) {
	if !t.acquire() {
		return Fire{}, ErrHandleClosed
	}
	var f C.wk_fire
	st := C.wk_anchor_table_try_fire(t.p, C.uint64_t(id), C.uint64_t(now), C.uint64_t(period), &f)
	t.release()
	if st != C.WK_STATUS_OK {
		return Fire{}, statusErr(st)
	}
	return Fire{Kind: FireKind(f.kind), Value: uint64(f.value)}, nil
}

// Advance advances trigger id from expected to next; true for the one caller
// that did.
func (t *AnchorTable) Advance(id, expected, next uint64) (bool, error) {
	if !t.acquire() {
		return false, ErrHandleClosed
	}
	var won C.bool
	st := C.wk_anchor_table_advance(t.p, C.uint64_t(id), C.uint64_t(expected), C.uint64_t(next), &won)
	t.release()
	if st != C.WK_STATUS_OK {
		return false, statusErr(st)
	}
	return bool(won), nil
}

// AnchorUnset anchors an unset trigger id at now without firing; true for
// the one caller that did.
func (t *AnchorTable) AnchorUnset(id, now uint64) (bool, error) {
	if !t.acquire() {
		return false, ErrHandleClosed
	}
	var won C.bool
	st := C.wk_anchor_table_anchor_unset(t.p, C.uint64_t(id), C.uint64_t(now), &won)
	t.release()
	if st != C.WK_STATUS_OK {
		return false, statusErr(st)
	}
	return bool(won), nil
}

// Get returns trigger id's anchor, TimeUnset while unset.
func (t *AnchorTable) Get(id uint64) (uint64, error) {
	if !t.acquire() {
		return 0, ErrHandleClosed
	}
	var v C.uint64_t
	st := C.wk_anchor_table_get(t.p, C.uint64_t(id), &v)
	t.release()
	if st != C.WK_STATUS_OK {
		return 0, statusErr(st)
	}
	return uint64(v), nil
}

// Len returns the anchors held.
func (t *AnchorTable) Len() (int, error) {
	if !t.acquire() {
		return 0, ErrHandleClosed
	}
	n := C.wk_anchor_table_len(t.p)
	t.release()
	return int(n), nil
}

// Close releases the table (as Ledger.Close).
func (t *AnchorTable) Close() error {
	if t == nil || t.p == nil || !t.uses.Close() {
		return ErrHandleClosed
	}
	runtime.SetFinalizer(t, nil)
	C.wk_anchor_table_free(t.p)
	return nil
}
