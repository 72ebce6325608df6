package mqttsession

// The mutex implementation: upstream's algorithm (one registry mutex, a map
// of entries, the indexed deadline heap, close attempts coalesced on a
// channel), compiled in both builds. In the pure-Go build it is Owners; in
// the cgo build it is the benchmark baseline beside the Rust core.
//
// One change from upstream: an admitted operation pays for no context. The
// operation keeps the caller's context, and Context() derives the
// operation's own only when it is called, from the caller's context and the
// owner's fence signal (a context created lazily per owner, a child of the
// registry's stop context), cancelled by Done.

import (
	"container/heap"
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

type ownerStage uint8

const (
	stagePending ownerStage = 1 + iota
	stageActive
	stageClosing
)

type closeAttempt struct {
	done chan struct{}
	err  error
}

type mutexEntry struct {
	m     *mutexOwners
	owner Owner
	uid   string
	stage ownerStage
	// revision is the committed lease receipt installed last.
	revision uint64
	// leaseUntil fences new work even when the sweep is delayed.
	leaseUntil time.Time
	// deadline schedules pending expiry, lease expiry or a closing retry.
	deadline        time.Time
	heapIndex       int
	closeTransport  CloseTransport
	transportClosed bool
	uncertain       bool
	operations      int
	attempt         *closeAttempt
	// complete is closed at retirement, or, for an uncertain owner, when it
	// reached its final barrier (closing, transport closed, no operation);
	// settled says it was.
	complete chan struct{}
	settled  bool
	// The owner's fence signal, created by the first Context() of one of its
	// operations: cancelled (cause ErrOwnerFenced) when the owner is fenced,
	// and by the registry's stop context (cause ErrOwnerStopped).
	fenceCtx    context.Context
	fenceCancel context.CancelCauseFunc
}

type mutexOwners struct {
	mu        sync.Mutex
	opts      OwnerOptions
	entries   map[uint64]*mutexEntry
	deadlines mutexDeadlines
	counts    OwnerSnapshot
	// issued advances only with registration under mu and never wraps.
	issued     uint64
	stopped    bool
	stopCtx    context.Context
	stopCancel context.CancelCauseFunc
	// The sweep counts: turns, owners visited, failed turns (the Rust core's
	// wukongim_mqtt_owner_sweep_total{event}).
	sweeps [3]atomic.Uint64
}

func newMutexOwners(opts OwnerOptions) (*mutexOwners, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &mutexOwners{opts: opts, entries: make(map[uint64]*mutexEntry), stopCtx: ctx, stopCancel: cancel}, nil
}

func (m *mutexOwners) reserve(claim Claim, closeTransport CloseTransport) (Owner, error) {
	if !claim.valid() || closeTransport == nil {
		return Owner{}, ErrOwnerInvalid
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return Owner{}, ErrOwnerStopped
	}
	if len(m.entries) >= m.opts.Capacity || m.issued == math.MaxUint64 {
		return Owner{}, ErrOwnerLimit
	}
	m.issued++
	o := Owner{Key: claim.Key, SessionGeneration: claim.SessionGeneration, OwnerGeneration: claim.OwnerGeneration,
		NodeID: m.opts.NodeID, BootID: m.opts.BootID, ConnectionID: m.issued}
	e := &mutexEntry{m: m, owner: o, uid: claim.UID, stage: stagePending, heapIndex: -1,
		closeTransport: closeTransport, complete: make(chan struct{})}
	m.entries[o.ConnectionID] = e
	m.counts.Pending++
	m.scheduleLocked(e, m.opts.Now().Add(m.opts.PendingTimeout))
	return o, nil
}

func (m *mutexOwners) installLease(owner Owner, revision uint64, until time.Time, renew bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return ErrOwnerStopped
	}
	e, err := m.entryLocked(owner)
	if err != nil {
		return err
	}
	if e == nil {
		return ErrOwnerFenced
	}
	now := m.opts.Now()
	if e.stage == stageClosing || !now.Before(e.deadline) {
		m.fenceLocked(e)
		return ErrOwnerFenced
	}
	if revision == 0 || !monotonic(until) || !until.After(now) || until.Sub(now) > m.opts.MaxLease {
		return ErrOwnerInvalid
	}
	if e.stage == stageActive && e.revision == revision && e.leaseUntil.Equal(until) {
		return nil
	}
	if renew {
		if e.stage != stageActive || revision <= e.revision {
			return ErrOwnerFenced
		}
	} else if e.stage != stagePending {
		return ErrOwnerFenced
	}
	if e.stage == stagePending {
		m.counts.Pending--
		m.counts.Active++
	}
	e.stage, e.revision, e.leaseUntil = stageActive, revision, until
	m.scheduleLocked(e, until)
	return nil
}

// begin admits one operation of owner and returns its entry (the caller
// keeps it with ctx in its operation record): the admission ordering point
// shared with Quiesce and lease expiry.
func (m *mutexOwners) begin(ctx context.Context, owner Owner) (*mutexEntry, error) {
	if ctx == nil {
		return nil, ErrOwnerInvalid
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return nil, ErrOwnerStopped
	}
	e, err := m.entryLocked(owner)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if e == nil || e.stage != stageActive {
		m.mu.Unlock()
		return nil, ErrOwnerFenced
	}
	if !m.opts.Now().Before(e.leaseUntil) {
		m.fenceLocked(e)
		m.mu.Unlock()
		return nil, ErrOwnerFenced
	}
	if e.operations >= m.opts.MaxOperations {
		m.mu.Unlock()
		return nil, ErrOwnerLimit
	}
	e.operations++
	m.counts.Operations++
	m.mu.Unlock()
	return e, nil
}

func (m *mutexOwners) fence(owner Owner) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.entryLocked(owner)
	if err != nil || e == nil {
		return err
	}
	m.fenceLocked(e)
	return nil
}

// quiesce proves exact-owner isolation only after transport closure and
// operation drain. Failed or timed-out attempts stay fenced and retain
// their capacity.
func (m *mutexOwners) quiesce(ctx context.Context, owner Owner) error {
	if ctx == nil {
		return ErrOwnerInvalid
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	e, err := m.entryLocked(owner)
	if err != nil || e == nil {
		m.mu.Unlock()
		return err
	}
	m.fenceLocked(e)
	if e.transportClosed {
		m.settleLocked(e)
		m.mu.Unlock()
		return awaitOwner(ctx, e)
	}
	if attempt := e.attempt; attempt != nil {
		m.mu.Unlock()
		if err := awaitChan(ctx, attempt.done); err != nil {
			return err
		}
		if attempt.err != nil {
			return attempt.err
		}
		return awaitOwner(ctx, e)
	}
	attempt := &closeAttempt{done: make(chan struct{})}
	e.attempt = attempt
	m.mu.Unlock()
	err = callClose(ctx, e.closeTransport)
	m.mu.Lock()
	e.attempt = nil
	attempt.err = err
	if err == nil {
		e.transportClosed = true
		m.settleLocked(e)
	} else {
		m.scheduleLocked(e, m.opts.Now().Add(m.opts.CloseRetry))
	}
	close(attempt.done)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return awaitOwner(ctx, e)
}

func (m *mutexOwners) stopAdmission() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.stopCancel(ErrOwnerStopped)
}

// close rejects new owners and operations and cancels every scope before
// bounded transport cleanup. It can be retried after a timeout; retained
// work is never erased to manufacture a successful shutdown.
func (m *mutexOwners) close(ctx context.Context) error {
	if ctx == nil {
		return ErrOwnerInvalid
	}
	m.stopAdmission()
	page := make([]Owner, 0, closePage)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page = page[:0]
		m.mu.Lock()
		for _, e := range m.entries {
			page = append(page, e.owner)
			if len(page) == closePage {
				break
			}
		}
		m.mu.Unlock()
		if len(page) == 0 {
			return nil
		}
		for _, owner := range page {
			if err := m.quiesce(ctx, owner); err != nil {
				return err
			}
		}
	}
}

// sweep fences and closes at most limit due owners. Renewal, selection and
// fencing share the lock, so an old deadline cannot close a renewed owner;
// each visited owner is rescheduled before its close, so a failed close
// yields to the other due owners.
func (m *mutexOwners) sweep(ctx context.Context, limit int) (int, error) {
	if ctx == nil || limit < 1 || limit > SweepLimitMax {
		return 0, ErrOwnerInvalid
	}
	m.sweeps[0].Add(1)
	n, err := m.sweepTurn(ctx, limit)
	if err != nil {
		m.sweeps[2].Add(1)
	}
	return n, err
}

func (m *mutexOwners) sweepTurn(ctx context.Context, limit int) (int, error) {
	visited := 0
	for visited < limit {
		if err := ctx.Err(); err != nil {
			return visited, err
		}
		m.mu.Lock()
		now := m.opts.Now()
		if len(m.deadlines) == 0 || m.deadlines[0].deadline.After(now) {
			m.mu.Unlock()
			break
		}
		e := m.deadlines[0]
		m.fenceLocked(e)
		m.scheduleLocked(e, now.Add(m.opts.CloseRetry))
		owner := e.owner
		m.mu.Unlock()
		visited++
		m.sweeps[1].Add(1)
		if err := m.quiesce(ctx, owner); err != nil {
			return visited, err
		}
	}
	return visited, nil
}

func (m *mutexOwners) snapshot() OwnerSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.counts
	out.Held, out.Deadlines, out.Stopped = len(m.entries), len(m.deadlines), m.stopped
	return out
}

func (m *mutexOwners) retirement() (RetiredBoot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stopped || len(m.entries) != 0 {
		return RetiredBoot{}, ErrOwnerUnknown
	}
	return RetiredBoot{nodeID: m.opts.NodeID, bootID: m.opts.BootID, lastConnectionID: m.issued}, nil
}

// entryLocked returns the held entry owner names, nil if it was issued here
// and retired since. Absence is safe only because publication and
// retirement share the lock, ids are never caller-provided, and the process
// identity matches.
func (m *mutexOwners) entryLocked(owner Owner) (*mutexEntry, error) {
	if owner.Validate() != nil {
		return nil, ErrOwnerInvalid
	}
	if owner.NodeID != m.opts.NodeID || owner.BootID != m.opts.BootID || owner.ConnectionID > m.issued {
		return nil, ErrOwnerUnknown
	}
	e := m.entries[owner.ConnectionID]
	if e != nil && e.owner != owner {
		return nil, ErrOwnerUnknown
	}
	return e, nil
}

func (m *mutexOwners) fenceLocked(e *mutexEntry) {
	if e.stage == stageClosing {
		return
	}
	if e.stage == stagePending {
		m.counts.Pending--
	} else {
		m.counts.Active--
	}
	m.counts.Closing++
	e.stage = stageClosing
	if e.fenceCancel != nil {
		e.fenceCancel(ErrOwnerFenced)
	}
	m.scheduleLocked(e, m.opts.Now().Add(m.opts.CloseRetry))
}

// settleLocked retires e once it is closing, its transport closed and its
// operations done; an uncertain owner instead reaches its final barrier and
// stays held.
func (m *mutexOwners) settleLocked(e *mutexEntry) {
	if e.settled || e.stage != stageClosing || !e.transportClosed || e.operations != 0 {
		return
	}
	if !e.uncertain {
		if m.entries[e.owner.ConnectionID] != e {
			return
		}
		delete(m.entries, e.owner.ConnectionID)
		m.counts.Closing--
		if e.heapIndex >= 0 {
			heap.Remove(&m.deadlines, e.heapIndex)
		}
	}
	e.settled = true
	close(e.complete)
}

// fenceContext returns e's fence signal, creating it on first use.
func (m *mutexOwners) fenceContext(e *mutexEntry) context.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.fenceCtx == nil {
		if e.stage == stageClosing {
			// Fenced already: the fence is the cause, even after a stop.
			e.fenceCtx, e.fenceCancel = context.WithCancelCause(context.Background())
			e.fenceCancel(ErrOwnerFenced)
		} else {
			e.fenceCtx, e.fenceCancel = context.WithCancelCause(m.stopCtx)
		}
	}
	return e.fenceCtx
}

func callClose(ctx context.Context, fn CloseTransport) (err error) {
	defer func() {
		if recover() != nil {
			err = ErrOwnerClose
		}
	}()
	return closeResult(fn(ctx))
}

// closeResult maps a close callback's error: nil, the two context errors
// exactly, else ErrOwnerClose (the callback's text is dropped).
func closeResult(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	default:
		return ErrOwnerClose
	}
}

func awaitChan(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitOwner waits for e's retirement (or barrier): nil, ErrOwnerUnknown for
// an uncertain owner, or ctx's error.
func awaitOwner(ctx context.Context, e *mutexEntry) error {
	if err := awaitChan(ctx, e.complete); err != nil {
		return err
	}
	// uncertain was written under the lock before complete was closed and
	// never changes after.
	if e.uncertain {
		return ErrOwnerUnknown
	}
	return nil
}

// mutexOp is one admitted operation of the mutex implementation.
type mutexOp struct {
	entry  *mutexEntry
	parent context.Context
	done   atomic.Bool
	ctx    atomic.Pointer[opContext]
}

func (o *mutexOp) finish() {
	if !o.done.CompareAndSwap(false, true) {
		return
	}
	if c := o.ctx.Load(); c != nil {
		c.release()
	}
	e := o.entry
	m := e.m
	m.mu.Lock()
	e.operations--
	m.counts.Operations--
	m.settleLocked(e)
	m.mu.Unlock()
}

func (o *mutexOp) check() error {
	if o.done.Load() {
		return ErrOwnerFenced
	}
	if err := o.parent.Err(); err != nil {
		return err
	}
	e := o.entry
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || e.stage != stageActive {
		return context.Canceled
	}
	if !m.opts.Now().Before(e.leaseUntil) {
		m.fenceLocked(e)
		return ErrOwnerFenced
	}
	return nil
}

func (o *mutexOp) markUncertain() error {
	e := o.entry
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if o.done.Load() || e.settled {
		return ErrOwnerFenced
	}
	if !e.uncertain {
		e.uncertain = true
		m.counts.Uncertain++
	}
	m.fenceLocked(e)
	return nil
}

func (o *mutexOp) context() context.Context {
	if c := o.ctx.Load(); c != nil {
		return c.ctx
	}
	fence := o.entry.m.fenceContext(o.entry)
	return o.makeContext(fence)
}

// makeContext makes the operation's context and keeps the first one made.
func (o *mutexOp) makeContext(fence context.Context) context.Context {
	c := newOpContext(o.parent, fence)
	if !o.ctx.CompareAndSwap(nil, c) {
		c.release()
		return o.ctx.Load().ctx
	}
	if o.done.Load() {
		c.release()
	}
	return c.ctx
}

// mutexDeadlines is the indexed deadline heap: one entry per held owner,
// ordered by (deadline, connection id).
type mutexDeadlines []*mutexEntry

func (h mutexDeadlines) Len() int { return len(h) }
func (h mutexDeadlines) Less(i, j int) bool {
	if h[i].deadline.Equal(h[j].deadline) {
		return h[i].owner.ConnectionID < h[j].owner.ConnectionID
	}
	return h[i].deadline.Before(h[j].deadline)
}
func (h mutexDeadlines) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *mutexDeadlines) Push(v any) {
	e := v.(*mutexEntry)
	e.heapIndex = len(*h)
	*h = append(*h, e)
}
func (h *mutexDeadlines) Pop() any {
	a := *h
	e := a[len(a)-1]
	a[len(a)-1] = nil
	*h = a[:len(a)-1]
	e.heapIndex = -1
	return e
}

func (m *mutexOwners) scheduleLocked(e *mutexEntry, at time.Time) {
	e.deadline = at
	if e.heapIndex < 0 {
		heap.Push(&m.deadlines, e)
	} else {
		heap.Fix(&m.deadlines, e.heapIndex)
	}
}

// sweepCounts returns the sweep counts: turns, visited, failures.
func (m *mutexOwners) sweepCounts() [3]uint64 {
	return [3]uint64{m.sweeps[0].Load(), m.sweeps[1].Load(), m.sweeps[2].Load()}
}
