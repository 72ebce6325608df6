//go:build cgo && !wkcore_purego

// The cgo build: Owners over the Rust core's owner C ABI (wk_owner_*). The
// registry, its owners, their admission words, leases, deadlines, close
// attempts and counts live in the core; Go keeps a map from connection id to
// its owner handle (owners_cgo_table.go), each owner's close callback and
// the operations' lazy contexts. Begin and Done run inline on the owner's
// words in the library's memory (words.go: one lock-free look-up, one exact
// compare, the library's transition as Go's own atomics) and cross into the
// library only on the slow path: a refusal, or the end that retires an
// owner.

package mqttsession

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include <stdint.h>
#include "wkcore.h"

// The exported Go callbacks (owners_cgo_export.go). user_data and call_data
// are cgo.Handles, passed as integers.
extern wk_status wkgoOwnerClose(uintptr_t user_data, uintptr_t call_data, uint64_t timeout_ns);
extern void wkgoOwnerRelease(uintptr_t user_data);

static wk_status wkgo_close_cb(void *user_data, void *call_data, uint64_t timeout_ns) {
	return wkgoOwnerClose((uintptr_t)user_data, (uintptr_t)call_data, timeout_ns);
}

static void wkgo_release_cb(void *user_data) { wkgoOwnerRelease((uintptr_t)user_data); }

// The options and the claim are built here, on the C stack: a Go struct
// holding pointers to Go strings could not be passed to C.
static wk_status wkgo_registry_new(uint64_t node_id, const uint8_t *boot_id, size_t boot_id_len,
                                   uint32_t capacity, uint32_t max_operations, uint64_t pending_ns,
                                   uint64_t lease_ns, uint64_t retry_ns, int manual, uint64_t start_ns,
                                   wk_owner_registry **out) {
	wk_owner_options o = {0};
	o.struct_size = sizeof o;
	o.node_id = node_id;
	o.boot_id = boot_id;
	o.boot_id_len = boot_id_len;
	o.capacity = capacity;
	o.max_operations = max_operations;
	o.pending_timeout_ns = pending_ns;
	o.max_lease_ns = lease_ns;
	o.close_retry_ns = retry_ns;
	if (manual) return wk_owner_registry_new_with_manual_clock(&o, start_ns, out);
	// A clock Go reads too (the TSC, or CLOCK_MONOTONIC): Begin runs inline.
	return wk_owner_registry_new_hosted(&o, out);
}

static wk_status wkgo_reserve(const wk_owner_registry *r, const uint8_t *ns, size_t ns_len,
                              const uint8_t *client, size_t client_len, const uint8_t *uid,
                              size_t uid_len, uint64_t session_gen, uint64_t owner_gen,
                              uintptr_t user_data, wk_owner **out, uint64_t *id_out,
                              wk_owner_words *words_out) {
	wk_owner_claim c = {ns, ns_len, client, client_len, uid, uid_len, session_gen, owner_gen};
	wk_owner *h = NULL;
	wk_status st = wk_owner_reserve(r, &c, wkgo_close_cb, (void *)user_data, wkgo_release_cb, &h);
	if (st != WK_STATUS_OK) return st;
	wk_owner_info info;
	st = wk_owner_info_get(h, &info);
	if (st == WK_STATUS_OK) st = wk_owner_words_get(h, words_out);
	if (st != WK_STATUS_OK) {
		wk_owner_free(h);
		return st;
	}
	*out = h;
	*id_out = info.connection_id;
	return WK_STATUS_OK;
}

// The library's done, typed so that cgo inserts no pointer check: the
// operation record is Go memory that holds no Go pointer (its owner is a C
// pointer, its state a number), passed as a pointer to pointer-free words.
// One tail call. Done runs inline (words.go) and calls wk_owner_scope_end on
// its slow path; this is the reference path of the differential test.
// (Begin's is in owners_cgo_go124.go / owners_cgo_pre124.go.)
static wk_status wkgo_op_done(uint64_t *op) { return wk_owner_op_done((wk_owner_op *)op); }

// The owner's stage (0 if unreadable); retired: complete and not uncertain.
static uint32_t wkgo_owner_stage(const wk_owner *o) {
	wk_owner_info info;
	return wk_owner_info_get(o, &info) == WK_STATUS_OK ? info.stage : 0;
}

static int wkgo_owner_retired(const wk_owner *o) {
	wk_owner_info info;
	return wk_owner_info_get(o, &info) == WK_STATUS_OK && info.complete && !info.uncertain;
}

// A lease's end: absolute (registry-clock ns) or relative to the registry's
// clock now (a negative delta is clamped at 0, which no lease passes).
static wk_status wkgo_lease(const wk_owner_registry *r, const wk_owner *o, uint64_t revision,
                            int renew, int relative, int64_t value, uint64_t *until_out) {
	uint64_t until = (uint64_t)value;
	if (relative) {
		uint64_t now = 0;
		wk_status st = wk_owner_registry_now(r, &now);
		if (st != WK_STATUS_OK) return st;
		if (value >= 0) {
			until = now + (uint64_t)value < now ? UINT64_MAX - 1 : now + (uint64_t)value;
		} else {
			uint64_t back = (uint64_t)(-(value + 1)) + 1;
			until = back > now ? 0 : now - back;
		}
	}
	*until_out = until;
	return renew ? wk_owner_renew(o, revision, until) : wk_owner_activate(o, revision, until);
}

static uint64_t wkgo_held(const wk_owner_registry *r) {
	wk_owner_snapshot s;
	return wk_owner_registry_snapshot(r, &s) == WK_STATUS_OK ? s.held : 0;
}

static wk_status wkgo_quiesce(const wk_owner *o, uint64_t timeout_ns, const wk_cancel_token *c,
                              uintptr_t call_data) {
	return wk_owner_quiesce(o, timeout_ns, c, (void *)call_data);
}

static wk_status wkgo_close(const wk_owner_registry *r, uint64_t timeout_ns,
                            const wk_cancel_token *c, uintptr_t call_data) {
	return wk_owner_registry_close(r, timeout_ns, c, (void *)call_data);
}

// A sweep's outcome folded into the return value: the status it stopped on
// (or the call's refusal) and the owners it visited.
static wk_status wkgo_sweep(const wk_owner_registry *r, uint32_t limit, uint64_t timeout_ns,
                            const wk_cancel_token *c, uintptr_t call_data, uint32_t *visited) {
	wk_owner_sweep_result res = {0};
	wk_status st = wk_owner_registry_sweep(r, limit, timeout_ns, c, (void *)call_data, &res);
	if (st != WK_STATUS_OK) return st;
	*visited = res.visited;
	return res.error;
}

static wk_cancel_token *wkgo_token_new(void) {
	wk_cancel_token *t = NULL;
	return wk_cancel_token_new(&t) == WK_STATUS_OK ? t : NULL;
}

static wk_cancel_token *wkgo_token_clone(const wk_cancel_token *t) {
	wk_cancel_token *c = NULL;
	return wk_cancel_token_clone(t, &c) == WK_STATUS_OK ? c : NULL;
}
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// Implementation names the build: "rust" here, where the Rust core is linked;
// "go" in the pure-Go build (CGO_ENABLED=0, or the wkcore_purego tag).
const Implementation = "rust"

// The Go constants are the header's; the array lengths are negative (a
// compile error) otherwise.
var (
	_ [C.WK_OWNER_IDENTITY_MAX - IdentityMax]struct{}
	_ [IdentityMax - C.WK_OWNER_IDENTITY_MAX]struct{}
	_ [C.WK_OWNER_BOOT_ID_MAX - BootIDMax]struct{}
	_ [BootIDMax - C.WK_OWNER_BOOT_ID_MAX]struct{}
	_ [C.WK_OWNER_SWEEP_LIMIT_MAX - SweepLimitMax]struct{}
	_ [SweepLimitMax - C.WK_OWNER_SWEEP_LIMIT_MAX]struct{}
	_ [C.WK_STATUS_OWNER_INVALID - codeOwnerInvalid]struct{}
	_ [codeOwnerInvalid - C.WK_STATUS_OWNER_INVALID]struct{}
	_ [C.WK_STATUS_OWNER_FENCED - codeOwnerFenced]struct{}
	_ [codeOwnerFenced - C.WK_STATUS_OWNER_FENCED]struct{}
	_ [C.WK_STATUS_OWNER_UNKNOWN - codeOwnerUnknown]struct{}
	_ [codeOwnerUnknown - C.WK_STATUS_OWNER_UNKNOWN]struct{}
	_ [C.WK_STATUS_OWNER_LIMIT - codeOwnerLimit]struct{}
	_ [codeOwnerLimit - C.WK_STATUS_OWNER_LIMIT]struct{}
	_ [C.WK_STATUS_OWNER_STOPPED - codeOwnerStopped]struct{}
	_ [codeOwnerStopped - C.WK_STATUS_OWNER_STOPPED]struct{}
	_ [C.WK_STATUS_OWNER_CLOSE - codeOwnerClose]struct{}
	_ [codeOwnerClose - C.WK_STATUS_OWNER_CLOSE]struct{}
	_ [C.WK_STATUS_OWNER_CANCELED - codeOwnerCanceled]struct{}
	_ [codeOwnerCanceled - C.WK_STATUS_OWNER_CANCELED]struct{}
	_ [C.WK_STATUS_OWNER_DEADLINE_EXCEEDED - codeOwnerDeadlineExceeded]struct{}
	_ [codeOwnerDeadlineExceeded - C.WK_STATUS_OWNER_DEADLINE_EXCEEDED]struct{}
	_ [C.WK_STATUS_OWNER_INVALID_IDENTITY - codeInvalidIdentity]struct{}
	_ [codeInvalidIdentity - C.WK_STATUS_OWNER_INVALID_IDENTITY]struct{}
	_ [C.WK_STATUS_OWNER_SWEEPER_INVALID - codeOwnerSweeperInvalid]struct{}
	_ [codeOwnerSweeperInvalid - C.WK_STATUS_OWNER_SWEEPER_INVALID]struct{}
	_ [C.WK_STATUS_OWNER_SWEEPER_STOPPING - codeOwnerSweeperStopping]struct{}
	_ [codeOwnerSweeperStopping - C.WK_STATUS_OWNER_SWEEPER_STOPPING]struct{}
	_ [C.WK_STATUS_OWNER_INVALID_FRAME - codeInvalidFrame]struct{}
	_ [codeInvalidFrame - C.WK_STATUS_OWNER_INVALID_FRAME]struct{}
	_ [C.sizeof_wk_owner_op - 16]struct{}
	_ [16 - C.sizeof_wk_owner_op]struct{}
	// The inline protocol's layout (words.go) is the header's.
	_ [C.WK_OWNER_WORDS_LAYOUT_VERSION - wordLayoutVersion]struct{}
	_ [wordLayoutVersion - C.WK_OWNER_WORDS_LAYOUT_VERSION]struct{}
	_ [C.WK_OWNER_WORD_OPS_MASK - wordOpsMask]struct{}
	_ [wordOpsMask - C.WK_OWNER_WORD_OPS_MASK]struct{}
	_ [C.WK_OWNER_WORD_STAGE_MASK - wordStageMask]struct{}
	_ [wordStageMask - C.WK_OWNER_WORD_STAGE_MASK]struct{}
	_ [C.WK_OWNER_WORD_STAGE_ACTIVE - wordStageActive]struct{}
	_ [wordStageActive - C.WK_OWNER_WORD_STAGE_ACTIVE]struct{}
	_ [C.WK_OWNER_WORD_STAGE_CLOSING - wordStageClosing]struct{}
	_ [wordStageClosing - C.WK_OWNER_WORD_STAGE_CLOSING]struct{}
	_ [C.WK_OWNER_WORD_TRANSPORT_CLOSED - wordTransportClosed]struct{}
	_ [wordTransportClosed - C.WK_OWNER_WORD_TRANSPORT_CLOSED]struct{}
	_ [C.WK_OWNER_WORD_COMPLETE - wordComplete]struct{}
	_ [wordComplete - C.WK_OWNER_WORD_COMPLETE]struct{}
	_ [C.WK_OWNER_WORD_RETIRE_MASK - wordRetireMask]struct{}
	_ [wordRetireMask - C.WK_OWNER_WORD_RETIRE_MASK]struct{}
	_ [C.WK_OWNER_WORD_RETIRE_VALUE - wordRetireValue]struct{}
	_ [wordRetireValue - C.WK_OWNER_WORD_RETIRE_VALUE]struct{}
	_ [C.WK_OWNER_GAUGE_ROWS - gaugeRows]struct{}
	_ [gaugeRows - C.WK_OWNER_GAUGE_ROWS]struct{}
	_ [C.WK_OWNER_CLOCK_PRIVATE - clockPrivate]struct{}
	_ [clockPrivate - C.WK_OWNER_CLOCK_PRIVATE]struct{}
	_ [C.WK_OWNER_CLOCK_MONOTONIC - clockMonotonic]struct{}
	_ [clockMonotonic - C.WK_OWNER_CLOCK_MONOTONIC]struct{}
	_ [C.WK_OWNER_CLOCK_WORD - clockWord]struct{}
	_ [clockWord - C.WK_OWNER_CLOCK_WORD]struct{}
	_ [C.WK_OWNER_CLOCK_TSC - clockTSC]struct{}
	_ [clockTSC - C.WK_OWNER_CLOCK_TSC]struct{}
)

// The library linked must run the inline protocol of the header this
// package was built with: a library of another layout fails here, at start,
// before any registry exists (its words would be misread).
func init() {
	if v := uint32(C.wk_owner_layout_version()); v != wordLayoutVersion {
		panic(fmt.Sprintf("wkcore: the linked library's owner word layout is version %d, this package's is %d: "+
			"rebuild the library with scripts/go-lib from the same checkout", v, wordLayoutVersion))
	}
}

// statusErr maps a status to the package's sentinel (the two wait codes to
// the context errors themselves).
func statusErr(st C.wk_status) error {
	switch st {
	case C.WK_STATUS_OK:
		return nil
	case C.WK_STATUS_OWNER_INVALID:
		return ErrOwnerInvalid
	case C.WK_STATUS_OWNER_FENCED:
		return ErrOwnerFenced
	case C.WK_STATUS_OWNER_UNKNOWN:
		return ErrOwnerUnknown
	case C.WK_STATUS_OWNER_LIMIT:
		return ErrOwnerLimit
	case C.WK_STATUS_OWNER_STOPPED:
		return ErrOwnerStopped
	case C.WK_STATUS_OWNER_CLOSE:
		return ErrOwnerClose
	case C.WK_STATUS_OWNER_CANCELED:
		return context.Canceled
	case C.WK_STATUS_OWNER_DEADLINE_EXCEEDED:
		return context.DeadlineExceeded
	case C.WK_STATUS_OWNER_INVALID_IDENTITY:
		return ErrInvalidIdentity
	}
	return status.Lookup(status.Code(st))
}

// waitErr maps the status of a call that waited with ctx: a wait that ended
// early is ctx.Err() itself once ctx is done, else (the close callback's own
// context error) the context error the code stands for.
func waitErr(ctx context.Context, st C.wk_status) error {
	switch st {
	case C.WK_STATUS_OWNER_CANCELED, C.WK_STATUS_OWNER_DEADLINE_EXCEEDED:
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return statusErr(st)
}

// cstr points at s's bytes (Go memory without pointers, readable by C during
// the call). Callers pass only validated, non-empty strings.
func cstr(s string) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(unsafe.StringData(s))) }

// cgoRegistry owns the C registry handle and its clock. It points at nothing
// that points back at it, so its finalizer (the safety net that frees the
// handle) runs once neither Owners nor any owner wrapper is reachable.
type cgoRegistry struct {
	p *C.wk_owner_registry
	// manual: the registry runs on a manual clock that follows opts.Now
	// (tests): base is Now's reading at creation, start the C clock's, and
	// synced how far (ns after base) the C clock was advanced.
	manual bool
	now    func() time.Time
	base   time.Time
	start  uint64
	synced atomic.Int64
	syncMu sync.Mutex
	// The registry's words (the inline protocol, words.go): its stopped word,
	// its clock as Go reads it (the TSC scaled as published, the monotonic
	// clock, or a manual clock's word), the gauge rows and max_operations.
	// inline is false when the clock is not one Go can read (every Begin
	// then crosses).
	stopped *uint64
	clock   hostClock
	gauge   unsafe.Pointer
	stride  uintptr
	maxOps  uint64
	inline  bool
}

// words records the registry's words (module: the inline protocol); false
// if the library's layout is not this package's.
func (g *cgoRegistry) words() bool {
	var rw C.wk_owner_registry_words
	if C.wk_owner_registry_words_get(g.p, &rw) != C.WK_STATUS_OK || rw.layout_version != wordLayoutVersion {
		return false
	}
	runtime.KeepAlive(g)
	g.stopped = (*uint64)(unsafe.Pointer(rw.stopped))
	g.clock = hostClock{word: (*uint64)(unsafe.Pointer(rw.clock)), origin: uint64(rw.tsc_origin),
		mul: uint64(rw.tsc_mul), kind: uint8(rw.clock_kind)}
	g.gauge = unsafe.Pointer(rw.gauge)
	g.stride = uintptr(rw.gauge_row_stride)
	g.maxOps = uint64(rw.max_operations)
	switch rw.clock_kind {
	case C.WK_OWNER_CLOCK_MONOTONIC:
		g.inline = true
	case C.WK_OWNER_CLOCK_WORD:
		g.inline = g.clock.word != nil
	case C.WK_OWNER_CLOCK_TSC:
		g.inline = runtime.GOARCH == "amd64" && g.clock.mul != 0
	}
	return true
}

// hostWords returns the words of the owner with connection id (its state
// and lease words from ow): its gauge row is the id's, so owners in use on
// different threads mostly count on different cache lines.
func (g *cgoRegistry) hostWords(id uint64, ow *C.wk_owner_words) hostWords {
	row := unsafe.Add(g.gauge, uintptr(id%gaugeRows)*g.stride)
	return hostWords{stopped: g.stopped, state: (*uint64)(unsafe.Pointer(ow.state)),
		lease: (*uint64)(unsafe.Pointer(ow.lease_until)), begun: (*uint64)(row),
		ended: (*uint64)(unsafe.Add(row, 8)), maxOps: g.maxOps}
}

// manualStart is where a manual clock starts (any reading would do).
const manualStart = uint64(1) << 32

// sync advances a manual clock to Now's reading (Now only moves forward):
// one branch on the real clock (inlined).
func (g *cgoRegistry) sync() {
	if g.manual {
		g.syncManual()
	}
}

// syncManual moves the C clock to Now's reading. synced is published only
// after the C clock moved, under syncMu, so a caller that finds synced at or
// past its reading knows the C clock is there too (a begin that starts after
// the clock passed a lease sees it expired, on either path).
func (g *cgoRegistry) syncManual() {
	d := int64(g.now().Sub(g.base))
	if d <= g.synced.Load() {
		return
	}
	g.syncMu.Lock()
	if last := g.synced.Load(); d > last {
		C.wk_owner_registry_advance_clock(g.p, C.uint64_t(d-last))
		runtime.KeepAlive(g)
		g.synced.Store(d)
	}
	g.syncMu.Unlock()
}

// ownerShared is what an owner's close callback reaches through its
// cgo.Handle (user_data): the host's close and the owner's fence signal. It
// points at no wrapper, so the handle (deleted by the release callback, once
// the core drops the owner's last reference) keeps no wrapper alive.
type ownerShared struct {
	close   CloseTransport
	stopCtx context.Context
	mu      sync.Mutex
	fenced  bool
	// The fence signal, made by the first Context() of one of the owner's
	// operations: cancelled (cause ErrOwnerFenced) when the owner is fenced,
	// and by the registry's stop context (cause ErrOwnerStopped).
	ctx    context.Context
	cancel context.CancelCauseFunc
	// attempt is the close callback running now (set and cleared by it).
	attempt *closeAttempt
}

// joinAttempt waits, in Go, for the close attempt in flight if there is one
// (joined, true): a goroutine blocked in a C wait keeps its P until sysmon
// takes it back (up to 10ms in an idle process), so joiners park here
// instead, as the mutex implementation's do. Its failure is theirs (as the
// core answers a joiner); after a success the core has the transport closed
// and the caller quiesces on (joined false, err nil).
func (s *ownerShared) joinAttempt(ctx context.Context) (bool, error) {
	s.mu.Lock()
	a := s.attempt
	s.mu.Unlock()
	if a == nil {
		return false, nil
	}
	if err := awaitChan(ctx, a.done); err != nil {
		return true, err
	}
	switch a.err {
	case nil:
		return false, nil
	case context.Canceled, context.DeadlineExceeded:
		if err := ctx.Err(); err != nil {
			return true, err
		}
	}
	return true, a.err
}

// raise records that the owner is fenced and cancels its fence signal.
func (s *ownerShared) raise() {
	s.mu.Lock()
	if !s.fenced {
		s.fenced = true
		if s.cancel != nil {
			s.cancel(ErrOwnerFenced)
		}
	}
	s.mu.Unlock()
}

// cgoOwner is one owner: its C handle (one reference, freed by the
// finalizer once neither the map nor any Operation holds the wrapper), its
// full identity for the exact compare, its UID and its shared part.
type cgoOwner struct {
	h     *C.wk_owner
	reg   *cgoRegistry
	owner Owner
	uid   string
	sh    *ownerShared
	// hw: the owner's words for the inline Begin and Done (words.go), the
	// library's memory, alive as long as h.
	hw hostWords
	// ctxs: the contexts of its live operations that made one (Context()).
	ctxMu sync.Mutex
	ctxs  map[*Operation]*opContext
	// lease is the last lease the library accepted for the owner, so that
	// an exact retry with the real clock passes the very registry time it
	// was converted to (a second conversion would land a few ns later and
	// be refused as a different lease).
	lease atomic.Pointer[leaseMemo]
}

// leaseMemo is one accepted lease: the caller's revision and until, and the
// registry time until was converted to.
type leaseMemo struct {
	revision uint64
	until    time.Time
	regUntil uint64
}

// tryBegin is Begin's inline path: one scope admitted with Go's own atomics
// on the owner's words, or false (nothing changed) for the slow path.
func (w *cgoOwner) tryBegin() bool {
	g := w.reg
	if !g.inline {
		return false
	}
	g.sync()
	ok := inlineBegin(&w.hw, &g.clock)
	runtime.KeepAlive(w)
	return ok
}

func (w *cgoOwner) stage() uint32 {
	s := uint32(C.wkgo_owner_stage(w.h))
	runtime.KeepAlive(w)
	return s
}

func (w *cgoOwner) retired() bool {
	r := C.wkgo_owner_retired(w.h) != 0
	runtime.KeepAlive(w)
	return r
}

// noteFenced raises the fence signal if the core fenced the owner (a call
// answered ErrOwnerFenced: an expired lease is fenced by the call that finds
// it).
func (w *cgoOwner) noteFenced() {
	if w.stage() == C.WK_OWNER_STAGE_CLOSING {
		w.sh.raise()
	}
}

// fenceContext returns the owner's fence signal, creating it on first use.
func (w *cgoOwner) fenceContext() context.Context {
	s := w.sh
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		if !s.fenced && w.stage() == C.WK_OWNER_STAGE_CLOSING {
			s.fenced = true
		}
		if s.fenced {
			// Fenced already: the fence is the cause, even after a stop.
			s.ctx, s.cancel = context.WithCancelCause(context.Background())
			s.cancel(ErrOwnerFenced)
		} else {
			s.ctx, s.cancel = context.WithCancelCause(s.stopCtx)
		}
	}
	return s.ctx
}

type cgoOwners struct {
	reg        *cgoRegistry
	opts       OwnerOptions
	shards     [ownerShards]ownerShard
	size       atomic.Int64
	issued     atomic.Uint64
	stopped    atomic.Bool
	stopCtx    context.Context
	stopCancel context.CancelCauseFunc
	// The sweep counts (turns, visited, failures), mirrored from the sweep
	// results: the core counts the same into wukongim_mqtt_owner_sweep_total
	// of the process-wide metrics registry, which sums every registry.
	sweeps [3]atomic.Uint64
}

// Owners tracks bounded owner execution. In this build it is the Rust core's
// owner registry (lock-free begin and done on the owner's own state word;
// one short registry lock for the cold calls; no callback or wait under
// it). The host owns bounded Sweep calls (or an OwnerSweeper); the registry
// creates no thread or goroutine per session.
type Owners struct {
	c *cgoOwners
}

// NewOwners creates a registry: ErrOwnerInvalid if an option breaks a bound
// or Now returns a time without a monotonic reading.
func NewOwners(opts OwnerOptions) (*Owners, error) {
	manual := opts.Now != nil
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	g := &cgoRegistry{manual: manual, now: opts.Now, start: manualStart}
	if manual {
		g.base = opts.Now()
	}
	m := 0
	if manual {
		m = 1
	}
	st := C.wkgo_registry_new(C.uint64_t(opts.NodeID), cstr(opts.BootID), C.size_t(len(opts.BootID)),
		C.uint32_t(opts.Capacity), C.uint32_t(opts.MaxOperations), C.uint64_t(opts.PendingTimeout),
		C.uint64_t(opts.MaxLease), C.uint64_t(opts.CloseRetry), C.int(m), C.uint64_t(g.start), &g.p)
	if st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	runtime.SetFinalizer(g, func(g *cgoRegistry) { C.wk_owner_registry_free(g.p) })
	if !g.words() {
		panic("wkcore: the owner registry's words are not of this package's layout: rebuild the library with scripts/go-lib")
	}
	c := &cgoOwners{reg: g, opts: opts}
	for i := range c.shards {
		c.shards[i].tab.Store(newOwnerTable(ownerTableMin))
	}
	c.stopCtx, c.stopCancel = context.WithCancelCause(context.Background())
	return &Owners{c: c}, nil
}

func (r *Owners) ok() bool { return r != nil && r.c != nil }

func (r *Owners) identity() (uint64, string) { return r.c.opts.NodeID, r.c.opts.BootID }

func (c *cgoOwners) shard(id uint64) *ownerShard { return &c.shards[id&(ownerShards-1)] }

// held returns the held wrapper of owner when owner is exactly its identity
// (then owner is valid, of this node and boot, and issued): Begin's fast
// path, a lock-free read (the connection id matched, then the rest).
func (c *cgoOwners) held(owner *Owner) *cgoOwner {
	if w := c.shard(owner.ConnectionID).get(owner.ConnectionID); w != nil && sameOwner(&w.owner, owner) {
		return w
	}
	return nil
}

// sameOwner is a == b for two owners of the same connection id: the
// numbers first, then the strings (equal pointers compare at once).
func sameOwner(a, b *Owner) bool {
	return a.SessionGeneration == b.SessionGeneration && a.OwnerGeneration == b.OwnerGeneration &&
		a.NodeID == b.NodeID && a.Key.ClientID == b.Key.ClientID && a.Key.Namespace == b.Key.Namespace &&
		a.BootID == b.BootID
}

// lookup is upstream's entryLocked: the wrapper owner names, nil if it was
// issued here and retired since; ErrOwnerInvalid for a malformed identity,
// ErrOwnerUnknown for another node or boot, an id never issued, or an
// identity that differs from the held owner's.
func (c *cgoOwners) lookup(owner Owner) (*cgoOwner, error) {
	if w := c.held(&owner); w != nil {
		return w, nil
	}
	if owner.Validate() != nil {
		return nil, ErrOwnerInvalid
	}
	if owner.NodeID != c.opts.NodeID || owner.BootID != c.opts.BootID || owner.ConnectionID > c.issued.Load() {
		return nil, ErrOwnerUnknown
	}
	w := c.shard(owner.ConnectionID).get(owner.ConnectionID)
	if w != nil && w.owner != owner {
		return nil, ErrOwnerUnknown
	}
	return w, nil
}

// forget drops w from the map (it retired).
func (c *cgoOwners) forget(w *cgoOwner) {
	sh := c.shard(w.owner.ConnectionID)
	sh.mu.Lock()
	if sh.remove(w) {
		c.size.Add(-1)
	}
	sh.mu.Unlock()
}

// maybePrune drops retired wrappers once the map holds more than twice the
// core's held owners (plus slack): the core retires owners on its own (a
// sweep, a Done, a close), so the map learns it lazily, in amortized O(1).
func (c *cgoOwners) maybePrune() {
	n := c.size.Load()
	if n < 64 {
		return
	}
	held := int64(C.wkgo_held(c.reg.p))
	runtime.KeepAlive(c.reg)
	if n > 2*held+64 {
		c.prune()
	}
}

func (c *cgoOwners) prune() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.each(func(w *cgoOwner) {
			if w.retired() && sh.remove(w) {
				c.size.Add(-1)
			}
		})
		sh.mu.Unlock()
	}
}

// wait runs a blocking call with ctx: its deadline as the timeout, a cancel
// token cancelled with ctx (only when ctx can be cancelled), and ctx itself
// as the call_data of the close callbacks the call runs.
func (c *cgoOwners) wait(ctx context.Context,
	call func(timeout C.uint64_t, token *C.wk_cancel_token, callData C.uintptr_t) C.wk_status) C.wk_status {
	timeout := C.uint64_t(C.WK_OWNER_WAIT_FOREVER)
	if d, ok := ctx.Deadline(); ok {
		t := time.Until(d)
		if t < 0 {
			t = 0
		}
		timeout = C.uint64_t(t)
	}
	var token *C.wk_cancel_token
	if ctx.Done() != nil {
		token = C.wkgo_token_new()
		if token == nil {
			return C.WK_STATUS_OWNER_INVALID
		}
		defer C.wk_cancel_token_free(token)
		// The AfterFunc owns a reference of its own (it may run after this
		// call returned): it frees it after cancelling, or stop does.
		mine := C.wkgo_token_clone(token)
		if mine == nil {
			return C.WK_STATUS_OWNER_INVALID
		}
		stop := context.AfterFunc(ctx, func() {
			C.wk_cancel_token_cancel(mine)
			C.wk_cancel_token_free(mine)
		})
		defer func() {
			if stop() {
				C.wk_cancel_token_free(mine)
			}
		}()
		if ctx.Err() != nil {
			C.wk_cancel_token_cancel(token)
		}
	}
	h := cgo.NewHandle(ctx)
	defer h.Delete()
	c.reg.sync()
	wkabi.MaybeGC()
	st := call(timeout, token, C.uintptr_t(h))
	runtime.KeepAlive(c.reg)
	return st
}

// Reserve publishes a pending owner for claim, minting the next connection
// id; closeTransport is its transport's close (non-nil). ErrOwnerInvalid,
// ErrOwnerStopped, or ErrOwnerLimit (capacity reached). The owner is due
// PendingTimeout from now unless activated.
func (r *Owners) Reserve(claim Claim, closeTransport CloseTransport) (Owner, error) {
	if !r.ok() {
		return Owner{}, ErrOwnerInvalid
	}
	c := r.c
	if !claim.valid() || closeTransport == nil {
		return Owner{}, ErrOwnerInvalid
	}
	if c.stopped.Load() {
		return Owner{}, ErrOwnerStopped
	}
	sh := &ownerShared{close: closeTransport, stopCtx: c.stopCtx}
	hd := cgo.NewHandle(sh)
	var p *C.wk_owner
	var id C.uint64_t
	var ow C.wk_owner_words
	c.reg.sync()
	wkabi.MaybeGC()
	st := C.wkgo_reserve(c.reg.p, cstr(claim.Key.Namespace), C.size_t(len(claim.Key.Namespace)),
		cstr(claim.Key.ClientID), C.size_t(len(claim.Key.ClientID)), cstr(claim.UID), C.size_t(len(claim.UID)),
		C.uint64_t(claim.SessionGeneration), C.uint64_t(claim.OwnerGeneration), C.uintptr_t(hd), &p, &id, &ow)
	runtime.KeepAlive(c.reg)
	if st != C.WK_STATUS_OK {
		// Neither callback will ever run: the handle is still ours.
		hd.Delete()
		return Owner{}, statusErr(st)
	}
	o := Owner{Key: claim.Key, SessionGeneration: claim.SessionGeneration, OwnerGeneration: claim.OwnerGeneration,
		NodeID: c.opts.NodeID, BootID: c.opts.BootID, ConnectionID: uint64(id)}
	w := &cgoOwner{h: p, reg: c.reg, owner: o, uid: claim.UID, sh: sh, hw: c.reg.hostWords(o.ConnectionID, &ow)}
	runtime.SetFinalizer(w, func(w *cgoOwner) { C.wk_owner_free(w.h) })
	s := c.shard(o.ConnectionID)
	s.mu.Lock()
	s.put(w)
	s.mu.Unlock()
	c.size.Add(1)
	for {
		last := c.issued.Load()
		if last >= o.ConnectionID || c.issued.CompareAndSwap(last, o.ConnectionID) {
			break
		}
	}
	c.maybePrune()
	return o, nil
}

// lease installs a lease on the C clock: until on Now's clock (a monotonic
// reading; else a lease no call accepts).
func (c *cgoOwners) lease(owner Owner, revision uint64, until time.Time, renew bool) error {
	if c.stopped.Load() {
		return ErrOwnerStopped
	}
	w, err := c.lookup(owner)
	if err != nil {
		return err
	}
	if w == nil {
		return ErrOwnerFenced
	}
	g := c.reg
	relative, value := C.int(0), int64(0)
	switch {
	case !monotonic(until):
	case g.manual:
		d := until.Sub(g.base)
		if d > 0 || uint64(-d) < g.start {
			value = int64(g.start) + int64(d)
		}
	default:
		// Ordering: the load pairs with the store below after an accepted
		// lease; a stale memo only makes the retry a fresh conversion, which
		// the core refuses as a different lease, as it would anyway.
		if m := w.lease.Load(); m != nil && m.revision == revision && m.until.Equal(until) &&
			m.regUntil <= math.MaxInt64 {
			value = int64(m.regUntil) // an exact retry: the same registry time
		} else {
			relative, value = 1, int64(time.Until(until))
		}
	}
	rn := C.int(0)
	if renew {
		rn = 1
	}
	g.sync()
	wkabi.MaybeGC()
	var regUntil C.uint64_t
	st := C.wkgo_lease(g.p, w.h, C.uint64_t(revision), rn, relative, C.int64_t(value), &regUntil)
	runtime.KeepAlive(w)
	runtime.KeepAlive(g)
	if st == C.WK_STATUS_OWNER_FENCED {
		w.noteFenced()
	}
	if st == C.WK_STATUS_OK && !g.manual && monotonic(until) {
		if m := w.lease.Load(); m == nil || m.revision != revision || !m.until.Equal(until) ||
			m.regUntil != uint64(regUntil) {
			w.lease.Store(&leaseMemo{revision: revision, until: until, regUntil: uint64(regUntil)})
		}
	}
	return statusErr(st)
}

// Activate opens execution only after the caller proves this exact committed
// owner (its lease receipt revision) and derives a conservative deadline
// until (a time of Now's clock, with a monotonic reading). An exact retry of
// the installed lease is nil.
func (r *Owners) Activate(owner Owner, revision uint64, until time.Time) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.c.lease(owner, revision, until, false)
}

// Renew accepts a newer committed receipt only while the existing lease is
// live. Neither a delayed renewal nor an exact retry can resurrect a fenced
// owner.
func (r *Owners) Renew(owner Owner, revision uint64, until time.Time) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	return r.c.lease(owner, revision, until, true)
}

// Begin admits one operation of owner: the admission ordering point shared
// with Quiesce and lease expiry. ErrOwnerInvalid (nil ctx, malformed owner),
// ctx.Err(), ErrOwnerStopped, ErrOwnerUnknown, ErrOwnerFenced (not active,
// fenced, retired, or the lease expired, which fences it here) or
// ErrOwnerLimit (MaxOperations admitted; nothing queues).
func (r *Owners) Begin(ctx context.Context, owner Owner) (*Operation, error) {
	if !r.ok() || ctx == nil {
		return nil, ErrOwnerInvalid
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := r.c
	w := c.held(&owner)
	if w == nil {
		// Upstream's order: stopped, then the identity.
		if c.stopped.Load() {
			return nil, ErrOwnerStopped
		}
		var err error
		if w, err = c.lookup(owner); err != nil {
			return nil, err
		}
		if w == nil {
			return nil, ErrOwnerFenced
		}
	}
	if w.tryBegin() {
		return &Operation{w: w, parent: ctx}, nil
	}
	// The slow path: the library decides again (and answers the refusal).
	c.reg.sync()
	wkabi.MaybeGC()
	st := ownerBegin(w.h)
	runtime.KeepAlive(w)
	if st != C.WK_STATUS_OK {
		if st == C.WK_STATUS_OWNER_FENCED {
			w.noteFenced()
		}
		return nil, statusErr(st)
	}
	return &Operation{w: w, parent: ctx}, nil
}

// Fence stops owner's admission without a transport call or a wait: its
// operations' contexts are cancelled and it is due for closing after
// CloseRetry. A retired owner: nil.
func (r *Owners) Fence(owner Owner) error {
	if !r.ok() {
		return ErrOwnerInvalid
	}
	w, err := r.c.lookup(owner)
	if err != nil || w == nil {
		return err
	}
	r.c.reg.sync()
	wkabi.MaybeGC()
	st := C.wk_owner_fence(w.h)
	runtime.KeepAlive(w)
	w.sh.raise()
	return statusErr(st)
}

// Quiesce proves owner isolated: it fences it, closes its transport (one
// attempt shared by every concurrent caller, run on the goroutine of the
// caller that started it) and waits until every admitted operation is Done.
// nil also for an owner issued here and retired since. A failed close keeps
// the owner fenced and holding capacity (ErrOwnerClose, or the callback's
// context error); an uncertain owner answers ErrOwnerUnknown; a ctx that
// ends returns ctx.Err() and leaves the attempt and the owner as they are.
func (r *Owners) Quiesce(ctx context.Context, owner Owner) error {
	if !r.ok() || ctx == nil {
		return ErrOwnerInvalid
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := r.c
	w, err := c.lookup(owner)
	if err != nil || w == nil {
		return err
	}
	if joined, err := w.sh.joinAttempt(ctx); joined {
		return err
	}
	st := c.wait(ctx, func(timeout C.uint64_t, token *C.wk_cancel_token, callData C.uintptr_t) C.wk_status {
		return C.wkgo_quiesce(w.h, timeout, token, callData)
	})
	runtime.KeepAlive(w)
	// The core fenced it (a quiesce fences first).
	w.sh.raise()
	if st == C.WK_STATUS_OK {
		c.forget(w)
	}
	return waitErr(ctx, st)
}

func (c *cgoOwners) stopAdmission() {
	c.stopped.Store(true)
	C.wk_owner_registry_stop_admission(c.reg.p)
	runtime.KeepAlive(c.reg)
	c.stopCancel(ErrOwnerStopped)
}

// StopAdmission makes Reserve, Activate, Renew and Begin return
// ErrOwnerStopped from now on and cancels every operation's context.
// Idempotent.
func (r *Owners) StopAdmission() {
	if r.ok() {
		r.c.stopAdmission()
	}
}

// Close stops admission, then quiesces every held owner until none is left;
// it returns the first error (an uncertain owner makes it ErrOwnerUnknown
// for good). It can be retried.
func (r *Owners) Close(ctx context.Context) error {
	if !r.ok() || ctx == nil {
		return ErrOwnerInvalid
	}
	c := r.c
	c.stopAdmission()
	if err := ctx.Err(); err != nil {
		return err
	}
	st := c.wait(ctx, func(timeout C.uint64_t, token *C.wk_cancel_token, callData C.uintptr_t) C.wk_status {
		return C.wkgo_close(c.reg.p, timeout, token, callData)
	})
	c.prune()
	return waitErr(ctx, st)
}

// Sweep fences and quiesces due owners, earliest deadline first, visiting
// at most limit (1..256); it stops at the first error and returns how many
// it visited.
func (r *Owners) Sweep(ctx context.Context, limit int) (int, error) {
	if !r.ok() || ctx == nil || limit < 1 || limit > SweepLimitMax {
		return 0, ErrOwnerInvalid
	}
	c := r.c
	var visited C.uint32_t
	st := c.wait(ctx, func(timeout C.uint64_t, token *C.wk_cancel_token, callData C.uintptr_t) C.wk_status {
		return C.wkgo_sweep(c.reg.p, C.uint32_t(limit), timeout, token, callData, &visited)
	})
	c.sweeps[0].Add(1)
	c.sweeps[1].Add(uint64(visited))
	if st != C.WK_STATUS_OK {
		c.sweeps[2].Add(1)
	}
	c.maybePrune()
	return int(visited), waitErr(ctx, st)
}

// Snapshot returns the counts in constant time; a nil registry reports
// {Stopped: true}.
func (r *Owners) Snapshot() OwnerSnapshot {
	if !r.ok() {
		return OwnerSnapshot{Stopped: true}
	}
	var s C.wk_owner_snapshot
	st := C.wk_owner_registry_snapshot(r.c.reg.p, &s)
	runtime.KeepAlive(r.c.reg)
	if st != C.WK_STATUS_OK {
		return OwnerSnapshot{Stopped: true}
	}
	return OwnerSnapshot{Held: clampInt(s.held), Pending: clampInt(s.pending), Active: clampInt(s.active),
		Closing: clampInt(s.closing), Operations: clampInt(s.operations), Deadlines: clampInt(s.deadlines),
		Uncertain: clampInt(s.uncertain), Stopped: bool(s.stopped)}
}

func clampInt(v C.uint64_t) int {
	if uint64(v) > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// Retirement mints the proof that this boot holds nothing more: it needs
// admission stopped and no owner held, else ErrOwnerUnknown.
func (r *Owners) Retirement() (RetiredBoot, error) {
	if !r.ok() {
		return RetiredBoot{}, ErrOwnerInvalid
	}
	var p C.wk_retired_boot
	st := C.wk_owner_registry_retirement(r.c.reg.p, &p)
	runtime.KeepAlive(r.c.reg)
	if st != C.WK_STATUS_OK {
		return RetiredBoot{}, statusErr(st)
	}
	return RetiredBoot{nodeID: uint64(p.node_id), bootID: r.c.opts.BootID,
		lastConnectionID: uint64(p.last_connection_id)}, nil
}

// sweepCounts returns the sweep counts (turns, visited, failures), for the
// scenario replay.
func (r *Owners) sweepCounts() [3]uint64 {
	c := r.c
	return [3]uint64{c.sweeps[0].Load(), c.sweeps[1].Load(), c.sweeps[2].Load()}
}

// Operation covers every effect of one admitted command or delivery. Done
// must run after all effects finish; cancellation alone never releases it.
//
// It is 32 bytes (one size class below the 48 it would take with its
// context pointer inline): the once-only state word, the owner wrapper and
// Begin's context. A context made by Context() is kept in the owner's side
// table until Done (opHasContext says to look there).
type Operation struct {
	state  uint64 // 0 (live) or opDone, | opHasContext; atomic
	w      *cgoOwner
	parent context.Context
}

// The operation's state word: 0 while live (the zero value: Begin writes
// nothing), opDone once done, and opHasContext once Context() made one.
// The record Check and MarkUncertain pass the library carries the ABI's
// WK_OWNER_OP_LIVE / _DONE instead.
const (
	opDone       = 2
	opHasContext = 4
)

// opWords is the record as the pointer-free words wkgo_begin and
// wkgo_op_done take.
func opWords(c *C.wk_owner_op) *C.uint64_t { return (*C.uint64_t)(unsafe.Pointer(c)) }

func (o *Operation) isDone() bool {
	return atomic.LoadUint64(&o.state)&opDone != 0
}

// record is the ABI's operation record of o now, for a call that reads it
// (check, mark uncertain): on the caller's stack, as noescape lets it be.
func (o *Operation) record() C.wk_owner_op {
	st := C.uint64_t(C.WK_OWNER_OP_LIVE)
	if o.isDone() {
		st = C.WK_OWNER_OP_DONE
	}
	return C.wk_owner_op{owner: o.w.h, state: st}
}

// finish moves the state word to done; true for the one call that did
// (its context, if one was made, is then released).
func (o *Operation) finish() (bool, uint64) {
	for {
		s := atomic.LoadUint64(&o.state)
		if s&opDone != 0 {
			return false, s
		}
		if atomic.CompareAndSwapUint64(&o.state, s, s|opDone) {
			return true, s
		}
	}
}

// Done ends the operation. Idempotent; safe concurrently with the
// transport's close or expiry.
func (o *Operation) Done() {
	if o == nil || o.w == nil {
		return
	}
	// The once-only flag first; then the scope ends inline, unless that
	// end retires the owner (the library's transition: wk_owner_scope_end
	// sets complete and wakes the quiescers).
	won, s := o.finish()
	if !won {
		return
	}
	w := o.w
	if !inlineEnd(&w.hw) {
		wkabi.MaybeGC()
		C.wk_owner_scope_end(w.h)
	}
	if s&opHasContext != 0 {
		if c := w.takeContext(o); c != nil {
			c.release()
		}
	}
	runtime.KeepAlive(o)
}

// libraryOpDone is the library's own done of a record (wk_owner_op_done:
// it moves the record's state and ends the scope); the differential test's
// reference path (owners_cgo_ref.go).
func libraryOpDone(h *C.wk_owner) C.wk_status {
	rec := C.wk_owner_op{owner: h, state: C.WK_OWNER_OP_LIVE}
	return C.wkgo_op_done(opWords(&rec))
}

// takeContext removes and returns o's context from the owner's table.
func (w *cgoOwner) takeContext(o *Operation) *opContext {
	w.ctxMu.Lock()
	c := w.ctxs[o]
	delete(w.ctxs, o)
	w.ctxMu.Unlock()
	return c
}

// Check returns nil while the owner is active, its lease holds and the
// operation is not done; ErrOwnerFenced once done or when the lease expired
// (which fences the owner here); the caller context's error, or
// context.Canceled once the owner is fenced or admission stopped.
func (o *Operation) Check() error {
	if o == nil || o.w == nil {
		return ErrOwnerInvalid
	}
	if o.isDone() {
		return ErrOwnerFenced
	}
	if err := o.parent.Err(); err != nil {
		return err
	}
	o.w.reg.sync()
	wkabi.MaybeGC()
	rec := o.record()
	st := C.wk_owner_op_check(&rec)
	runtime.KeepAlive(o)
	if st == C.WK_STATUS_OWNER_FENCED && !o.isDone() {
		o.w.noteFenced()
	}
	return statusErr(st)
}

// MarkUncertain records, for good, that the owner's effect is uncertain and
// fences it: its quiescence can never be proved (ErrOwnerUnknown) and it
// keeps its capacity. Idempotent; ErrOwnerFenced once the operation is done
// or the owner retired.
func (o *Operation) MarkUncertain() error {
	if o == nil || o.w == nil {
		return ErrOwnerInvalid
	}
	o.w.reg.sync()
	wkabi.MaybeGC()
	rec := o.record()
	st := C.wk_owner_op_mark_uncertain(&rec)
	runtime.KeepAlive(o)
	if st == C.WK_STATUS_OK {
		o.w.sh.raise()
	}
	return statusErr(st)
}

// UID returns the UID reserved with the owner (also after Done); "" for a
// nil operation.
func (o *Operation) UID() string {
	if o == nil || o.w == nil {
		return ""
	}
	return o.w.uid
}

// Context returns the operation's context, made on the first call: derived
// from Begin's ctx, cancelled when the owner is fenced (cause
// ErrOwnerFenced), when admission stops (cause ErrOwnerStopped) and by Done
// (context.Canceled). Cancelling it never ends the operation.
func (o *Operation) Context() context.Context {
	if o == nil || o.w == nil {
		return invalidContext
	}
	w := o.w
	w.ctxMu.Lock()
	defer w.ctxMu.Unlock()
	if c := w.ctxs[o]; c != nil {
		return c.ctx
	}
	c := newOpContext(o.parent, w.fenceContext())
	for {
		s := atomic.LoadUint64(&o.state)
		if s&opDone != 0 {
			// Done already: the context is born cancelled (and kept nowhere).
			c.release()
			return c.ctx
		}
		if atomic.CompareAndSwapUint64(&o.state, s, s|opHasContext) {
			break
		}
	}
	if w.ctxs == nil {
		w.ctxs = make(map[*Operation]*opContext)
	}
	w.ctxs[o] = c
	return c.ctx
}
