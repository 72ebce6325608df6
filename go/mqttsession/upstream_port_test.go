package mqttsession

// A faithful port of upstream's registry (internal/runtime/mqttsession:
// owner.go, owner_deadlines.go): one mutex, a child context per owner and
// per Begin (context.WithCancelCause plus context.AfterFunc on the caller's
// context), the indexed heap. Used only as the benchmark baseline
// ("upstream"); MarkUncertain, Check and Fence are not ported.

import (
	"container/heap"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

type upEntry struct {
	owner           Owner
	uid             string
	stage           ownerStage
	revision        uint64
	leaseUntil      time.Time
	deadline        time.Time
	heapIndex       int
	ctx             context.Context
	cancel          context.CancelCauseFunc
	closeTransport  CloseTransport
	transportClosed bool
	operations      int
	attempt         *closeAttempt
	complete        chan struct{}
}

type upOwners struct {
	mu        sync.Mutex
	opts      OwnerOptions
	entries   map[uint64]*upEntry
	deadlines upDeadlines
	counts    OwnerSnapshot
	issued    uint64
	stopped   bool
	ctx       context.Context
	cancel    context.CancelCauseFunc
}

func newUpOwners(opts OwnerOptions) (*upOwners, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &upOwners{opts: opts, entries: make(map[uint64]*upEntry), ctx: ctx, cancel: cancel}, nil
}

func (m *upOwners) Reserve(claim Claim, closeTransport CloseTransport) (Owner, error) {
	if m == nil || !claim.valid() || closeTransport == nil {
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
	ctx, cancel := context.WithCancelCause(m.ctx)
	e := &upEntry{owner: o, uid: claim.UID, stage: stagePending, heapIndex: -1, ctx: ctx, cancel: cancel,
		closeTransport: closeTransport, complete: make(chan struct{})}
	m.entries[o.ConnectionID] = e
	m.counts.Pending++
	m.scheduleLocked(e, m.opts.Now().Add(m.opts.PendingTimeout))
	return o, nil
}

func (m *upOwners) Activate(owner Owner, revision uint64, until time.Time) error {
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
	if revision == 0 || until == until.Round(0) || !until.After(now) || until.Sub(now) > m.opts.MaxLease {
		return ErrOwnerInvalid
	}
	if e.stage != stagePending {
		return ErrOwnerFenced
	}
	m.counts.Pending--
	m.counts.Active++
	e.stage, e.revision, e.leaseUntil = stageActive, revision, until
	m.scheduleLocked(e, until)
	return nil
}

type upOperation struct {
	owners     *upOwners
	entry      *upEntry
	ctx        context.Context
	cancel     context.CancelCauseFunc
	stopParent func() bool
	done       atomic.Bool
}

func (o *upOperation) Context() context.Context { return o.ctx }

func (m *upOwners) Begin(ctx context.Context, owner Owner) (*upOperation, error) {
	if m == nil || ctx == nil {
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
	opCtx, cancel := context.WithCancelCause(e.ctx)
	op := &upOperation{owners: m, entry: e, ctx: opCtx, cancel: cancel}
	m.mu.Unlock()
	if ctx.Done() != nil {
		op.stopParent = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	}
	return op, nil
}

func (o *upOperation) Done() {
	if o == nil || o.owners == nil || !o.done.CompareAndSwap(false, true) {
		return
	}
	if o.stopParent != nil {
		o.stopParent()
	}
	o.cancel(context.Canceled)
	m := o.owners
	m.mu.Lock()
	defer m.mu.Unlock()
	o.entry.operations--
	m.counts.Operations--
	m.retireLocked(o.entry)
}

func (m *upOwners) Quiesce(ctx context.Context, owner Owner) error {
	if m == nil || ctx == nil {
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
		done := e.complete
		m.retireLocked(e)
		m.mu.Unlock()
		return awaitChan(ctx, done)
	}
	if attempt := e.attempt; attempt != nil {
		m.mu.Unlock()
		if err := awaitChan(ctx, attempt.done); err != nil {
			return err
		}
		if attempt.err != nil {
			return attempt.err
		}
		return awaitChan(ctx, e.complete)
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
		m.retireLocked(e)
	} else {
		m.scheduleLocked(e, m.opts.Now().Add(m.opts.CloseRetry))
	}
	close(attempt.done)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return awaitChan(ctx, e.complete)
}

func (m *upOwners) entryLocked(owner Owner) (*upEntry, error) {
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

func (m *upOwners) fenceLocked(e *upEntry) {
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
	e.cancel(ErrOwnerFenced)
	m.scheduleLocked(e, m.opts.Now().Add(m.opts.CloseRetry))
}

func (m *upOwners) retireLocked(e *upEntry) {
	if e.stage != stageClosing || !e.transportClosed || e.operations != 0 || m.entries[e.owner.ConnectionID] != e {
		return
	}
	delete(m.entries, e.owner.ConnectionID)
	m.counts.Closing--
	if e.heapIndex >= 0 {
		heap.Remove(&m.deadlines, e.heapIndex)
	}
	close(e.complete)
}

func (m *upOwners) Close(ctx context.Context) error {
	if m == nil || ctx == nil {
		return ErrOwnerInvalid
	}
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.cancel(ErrOwnerStopped)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.mu.Lock()
		page := make([]Owner, 0, min(closePage, len(m.entries)))
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
			if err := m.Quiesce(ctx, owner); err != nil {
				return err
			}
		}
	}
}

func (m *upOwners) Snapshot() OwnerSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.counts
	out.Held, out.Deadlines, out.Stopped = len(m.entries), len(m.deadlines), m.stopped
	return out
}

type upDeadlines []*upEntry

func (h upDeadlines) Len() int { return len(h) }
func (h upDeadlines) Less(i, j int) bool {
	if h[i].deadline.Equal(h[j].deadline) {
		return h[i].owner.ConnectionID < h[j].owner.ConnectionID
	}
	return h[i].deadline.Before(h[j].deadline)
}
func (h upDeadlines) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *upDeadlines) Push(v any) { e := v.(*upEntry); e.heapIndex = len(*h); *h = append(*h, e) }
func (h *upDeadlines) Pop() any {
	a := *h
	e := a[len(a)-1]
	a[len(a)-1] = nil
	*h = a[:len(a)-1]
	e.heapIndex = -1
	return e
}

func (m *upOwners) scheduleLocked(e *upEntry, at time.Time) {
	e.deadline = at
	if e.heapIndex < 0 {
		heap.Push(&m.deadlines, e)
	} else {
		heap.Fix(&m.deadlines, e.heapIndex)
	}
}
