package coord

// The coordination contract named once, so that a host can move from one
// process to N replicas by changing one constructor (docs/COORD.md, "Across
// replicas"). Two backends satisfy it: the in-memory types of this package
// (through the Memory* adapters below: lock-free, one process) and the
// PostgreSQL module github.com/wukongim/wkcore/go/coordpg (every decision
// one conditional statement on the database the replicas share).
//
// The interfaces keep the in-memory method shapes, with a context first.
// The words (flip, counter, exclusive trigger, windowed counter) are keyed:
// a store holds one word per key (1 to KeyMax bytes), and a key never used
// is the word's initial state (the flip's initial state, a counter at 0, a
// trigger inactive at run 0, a windowed counter with no window), so no call
// has to create a word before it decides on it.
//
// Errors: bad arguments get the errors of the in-memory types in both
// backends (ErrInvalidKey, ErrInvalidOutcome, ErrInvalidTime,
// ErrInvalidArgument, ErrNotFound, ...); a store that cannot decide reports
// an error of its own (coordpg: unavailable, timeout, schema mismatch),
// never a lost race.

import (
	"context"
	"sync"
)

// LedgerStore is the contract of a Ledger: two-phase claims, pending-only
// finalization, the reconciler, retention and reclaim, runner marks and
// compare-and-delete. Counts are this handle's decisions.
type LedgerStore interface {
	Insert(ctx context.Context, key []byte, id, runner, deadline, now uint64) (Decision, error)
	Place(ctx context.Context, keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error)
	Claim(ctx context.Context, key []byte, placeholder, requestID, runner, now uint64) (Decision, error)
	Finalize(ctx context.Context, key []byte, outcome Outcome, payload, now uint64) (Decision, error)
	FinalizeBatch(ctx context.Context, keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error)
	Take(ctx context.Context, key []byte, expectedID uint64) (Decision, error)
	Touch(ctx context.Context, key []byte, runner, now uint64) (Decision, error)
	Reconcile(ctx context.Context, now uint64, limit int) (Page, error)
	Reclaim(ctx context.Context, now uint64, limit int) (Page, error)
	FinalizeOwn(ctx context.Context, runner uint64, outcome Outcome, now uint64, limit int) (Page, error)
	SweepOrphans(ctx context.Context, now, quiet uint64, limit int) (Page, error)
	Get(ctx context.Context, key []byte) (Record, bool, error)
	Len(ctx context.Context) (int, error)
	Counts() (Counts, error)
}

// HandoffStore is the contract of a HandoffLedger: the first claim of a
// 6-tuple wins.
type HandoffStore interface {
	Claim(ctx context.Context, key HandoffKey, deadline, now uint64) (Decision, error)
	ClaimBatch(ctx context.Context, keys []HandoffKey, deadline, now uint64, out []Decision) (int, error)
	Complete(ctx context.Context, key HandoffKey, outcome Outcome, now uint64) (Decision, error)
	Reconcile(ctx context.Context, now uint64, limit int) (Page, error)
	Reclaim(ctx context.Context, now uint64, limit int) (Page, error)
	Get(ctx context.Context, key HandoffKey) (Record, bool, error)
	Len(ctx context.Context) (int, error)
	Counts() (Counts, error)
}

// AnchorStore is the contract of an AnchorTable: scheduled-trigger anchors
// by id, with the unset-anchor first-seen transition.
type AnchorStore interface {
	Insert(ctx context.Context, id, value uint64) error
	Remove(ctx context.Context, id uint64) error
	TryFire(ctx context.Context, id, now, period uint64) (Fire, error)
	Advance(ctx context.Context, id, expected, next uint64) (bool, error)
	AnchorUnset(ctx context.Context, id, now uint64) (bool, error)
	Get(ctx context.Context, id uint64) (uint64, error)
	Len(ctx context.Context) (int, error)
}

// FlipStore holds one Flip per key; a key never flipped is in the store's
// initial state.
type FlipStore interface {
	Flip(ctx context.Context, key []byte, from, to uint64) (bool, error)
	Get(ctx context.Context, key []byte) (uint64, error)
}

// CounterStore holds one Counter per key, starting at 0.
type CounterStore interface {
	Increment(ctx context.Context, key []byte) (uint64, error)
	Get(ctx context.Context, key []byte) (uint64, error)
}

// TriggerStore holds one ExclusiveTrigger per key, inactive at run 0.
// Trigger's refusal is a BusyError (ErrBusy) naming the active run.
type TriggerStore interface {
	Trigger(ctx context.Context, key []byte) (uint64, error)
	Finish(ctx context.Context, key []byte, run uint64) (bool, error)
	Active(ctx context.Context, key []byte) (uint64, error)
	LastRun(ctx context.Context, key []byte) (uint64, error)
}

// WindowStore holds one WindowedCounter per key.
type WindowStore interface {
	Increment(ctx context.Context, key []byte, now, window uint64) (uint32, error)
	Count(ctx context.Context, key []byte, now uint64) (uint32, error)
}

// MemoryLedger adapts l to LedgerStore (the context is not consulted: an
// in-memory decision never waits).
func MemoryLedger(l *Ledger) LedgerStore { return memLedger{l} }

// MemoryHandoffs adapts l to HandoffStore.
func MemoryHandoffs(l *HandoffLedger) HandoffStore { return memHandoff{l} }

// MemoryAnchors adapts t to AnchorStore.
func MemoryAnchors(t *AnchorTable) AnchorStore { return memAnchors{t} }

type memLedger struct{ l *Ledger }

func (m memLedger) Insert(_ context.Context, key []byte, id, runner, deadline, now uint64) (Decision, error) {
	return m.l.Insert(key, id, runner, deadline, now)
}
func (m memLedger) Place(_ context.Context, keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error) {
	return m.l.Place(keys, placeholder, deadline, now, out)
}
func (m memLedger) Claim(_ context.Context, key []byte, placeholder, requestID, runner, now uint64) (Decision, error) {
	return m.l.Claim(key, placeholder, requestID, runner, now)
}
func (m memLedger) Finalize(_ context.Context, key []byte, outcome Outcome, payload, now uint64) (Decision, error) {
	return m.l.Finalize(key, outcome, payload, now)
}
func (m memLedger) FinalizeBatch(_ context.Context, keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error) {
	return m.l.FinalizeBatch(keys, payloads, outcome, now, out)
}
func (m memLedger) Take(_ context.Context, key []byte, expectedID uint64) (Decision, error) {
	return m.l.Take(key, expectedID)
}
func (m memLedger) Touch(_ context.Context, key []byte, runner, now uint64) (Decision, error) {
	return m.l.Touch(key, runner, now)
}
func (m memLedger) Reconcile(_ context.Context, now uint64, limit int) (Page, error) {
	return m.l.Reconcile(now, limit)
}
func (m memLedger) Reclaim(_ context.Context, now uint64, limit int) (Page, error) {
	return m.l.Reclaim(now, limit)
}
func (m memLedger) FinalizeOwn(_ context.Context, runner uint64, outcome Outcome, now uint64, limit int) (Page, error) {
	return m.l.FinalizeOwn(runner, outcome, now, limit)
}
func (m memLedger) SweepOrphans(_ context.Context, now, quiet uint64, limit int) (Page, error) {
	return m.l.SweepOrphans(now, quiet, limit)
}
func (m memLedger) Get(_ context.Context, key []byte) (Record, bool, error) { return m.l.Get(key) }
func (m memLedger) Len(context.Context) (int, error)                        { return m.l.Len() }
func (m memLedger) Counts() (Counts, error)                                 { return m.l.Counts() }

type memHandoff struct{ l *HandoffLedger }

func (m memHandoff) Claim(_ context.Context, key HandoffKey, deadline, now uint64) (Decision, error) {
	return m.l.Claim(key, deadline, now)
}
func (m memHandoff) ClaimBatch(_ context.Context, keys []HandoffKey, deadline, now uint64, out []Decision) (int, error) {
	return m.l.ClaimBatch(keys, deadline, now, out)
}
func (m memHandoff) Complete(_ context.Context, key HandoffKey, outcome Outcome, now uint64) (Decision, error) {
	return m.l.Complete(key, outcome, now)
}
func (m memHandoff) Reconcile(_ context.Context, now uint64, limit int) (Page, error) {
	return m.l.Reconcile(now, limit)
}
func (m memHandoff) Reclaim(_ context.Context, now uint64, limit int) (Page, error) {
	return m.l.Reclaim(now, limit)
}
func (m memHandoff) Get(_ context.Context, key HandoffKey) (Record, bool, error) { return m.l.Get(key) }
func (m memHandoff) Len(context.Context) (int, error)                            { return m.l.Len() }
func (m memHandoff) Counts() (Counts, error)                                     { return m.l.Counts() }

type memAnchors struct{ t *AnchorTable }

func (m memAnchors) Insert(_ context.Context, id, value uint64) error { return m.t.Insert(id, value) }
func (m memAnchors) Remove(_ context.Context, id uint64) error        { return m.t.Remove(id) }
func (m memAnchors) TryFire(_ context.Context, id, now, period uint64) (Fire, error) {
	return m.t.TryFire(id, now, period)
}
func (m memAnchors) Advance(_ context.Context, id, expected, next uint64) (bool, error) {
	return m.t.Advance(id, expected, next)
}
func (m memAnchors) AnchorUnset(_ context.Context, id, now uint64) (bool, error) {
	return m.t.AnchorUnset(id, now)
}
func (m memAnchors) Get(_ context.Context, id uint64) (uint64, error) { return m.t.Get(id) }
func (m memAnchors) Len(context.Context) (int, error)                 { return m.t.Len() }

// keyed holds one in-memory word per key, created on first use.
type keyed[W any] struct {
	mu    sync.Mutex
	words map[string]W
	newW  func() (W, error)
	close func(W) error
}

func (k *keyed[W]) get(key []byte) (W, error) {
	var zero W
	if !validKey(key) {
		return zero, errInvalidKey
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.words == nil {
		return zero, ErrHandleClosed
	}
	if w, ok := k.words[string(key)]; ok {
		return w, nil
	}
	w, err := k.newW()
	if err != nil {
		return zero, err
	}
	k.words[string(key)] = w
	return w, nil
}

// Close releases every word; later calls return ErrHandleClosed.
func (k *keyed[W]) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.words == nil {
		return ErrHandleClosed
	}
	for _, w := range k.words {
		_ = k.close(w)
	}
	k.words = nil
	return nil
}

// MemoryFlips is a FlipStore of in-memory Flips, each created in state
// initial on its key's first use. Close releases them.
type MemoryFlips struct{ k keyed[*Flip] }

// NewMemoryFlips creates a MemoryFlips whose keys start in state initial.
func NewMemoryFlips(initial uint64) *MemoryFlips {
	m := &MemoryFlips{}
	m.k.words = map[string]*Flip{}
	m.k.newW = func() (*Flip, error) { return NewFlip(initial) }
	m.k.close = (*Flip).Close
	return m
}

// Flip flips key's word (Flip.Flip).
func (m *MemoryFlips) Flip(_ context.Context, key []byte, from, to uint64) (bool, error) {
	f, err := m.k.get(key)
	if err != nil {
		return false, err
	}
	return f.Flip(from, to)
}

// Get returns key's state.
func (m *MemoryFlips) Get(_ context.Context, key []byte) (uint64, error) {
	f, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return f.Get()
}

// Close releases every flip.
func (m *MemoryFlips) Close() error { return m.k.Close() }

// MemoryCounters is a CounterStore of in-memory Counters starting at 0.
type MemoryCounters struct{ k keyed[*Counter] }

// NewMemoryCounters creates a MemoryCounters.
func NewMemoryCounters() *MemoryCounters {
	m := &MemoryCounters{}
	m.k.words = map[string]*Counter{}
	m.k.newW = func() (*Counter, error) { return NewCounter(0) }
	m.k.close = (*Counter).Close
	return m
}

// Increment increments key's counter (Counter.Increment).
func (m *MemoryCounters) Increment(_ context.Context, key []byte) (uint64, error) {
	c, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return c.Increment()
}

// Get returns key's value.
func (m *MemoryCounters) Get(_ context.Context, key []byte) (uint64, error) {
	c, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return c.Get()
}

// Close releases every counter.
func (m *MemoryCounters) Close() error { return m.k.Close() }

// MemoryTriggers is a TriggerStore of in-memory ExclusiveTriggers, inactive
// at run 0.
type MemoryTriggers struct{ k keyed[*ExclusiveTrigger] }

// NewMemoryTriggers creates a MemoryTriggers.
func NewMemoryTriggers() *MemoryTriggers {
	m := &MemoryTriggers{}
	m.k.words = map[string]*ExclusiveTrigger{}
	m.k.newW = func() (*ExclusiveTrigger, error) { return NewExclusiveTrigger(0) }
	m.k.close = (*ExclusiveTrigger).Close
	return m
}

// Trigger starts key's next run (ExclusiveTrigger.Trigger).
func (m *MemoryTriggers) Trigger(_ context.Context, key []byte) (uint64, error) {
	t, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return t.Trigger()
}

// Finish ends run on key (ExclusiveTrigger.Finish).
func (m *MemoryTriggers) Finish(_ context.Context, key []byte, run uint64) (bool, error) {
	t, err := m.k.get(key)
	if err != nil {
		return false, err
	}
	return t.Finish(run)
}

// Active returns key's active run, 0 when none.
func (m *MemoryTriggers) Active(_ context.Context, key []byte) (uint64, error) {
	t, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return t.Active()
}

// LastRun returns key's last run number.
func (m *MemoryTriggers) LastRun(_ context.Context, key []byte) (uint64, error) {
	t, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return t.LastRun()
}

// Close releases every trigger.
func (m *MemoryTriggers) Close() error { return m.k.Close() }

// MemoryWindows is a WindowStore of in-memory WindowedCounters.
type MemoryWindows struct{ k keyed[*WindowedCounter] }

// NewMemoryWindows creates a MemoryWindows.
func NewMemoryWindows() *MemoryWindows {
	m := &MemoryWindows{}
	m.k.words = map[string]*WindowedCounter{}
	m.k.newW = NewWindowedCounter
	m.k.close = (*WindowedCounter).Close
	return m
}

// Increment counts one on key's window (WindowedCounter.Increment).
func (m *MemoryWindows) Increment(_ context.Context, key []byte, now, window uint64) (uint32, error) {
	c, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return c.Increment(now, window)
}

// Count returns key's count at now.
func (m *MemoryWindows) Count(_ context.Context, key []byte, now uint64) (uint32, error) {
	c, err := m.k.get(key)
	if err != nil {
		return 0, err
	}
	return c.Count(now)
}

// Close releases every windowed counter.
func (m *MemoryWindows) Close() error { return m.k.Close() }

// The in-memory types satisfy the contract (compile-time checks).
var (
	_ FlipStore    = (*MemoryFlips)(nil)
	_ CounterStore = (*MemoryCounters)(nil)
	_ TriggerStore = (*MemoryTriggers)(nil)
	_ WindowStore  = (*MemoryWindows)(nil)
)
