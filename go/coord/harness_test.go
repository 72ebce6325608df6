package coord

// The harness the package's tests share: one interface per type over the
// build's implementation (the Rust core with cgo, Go without) and the mutex
// implementation (compiled in both builds), so each behaviour test runs
// against both side by side.

import (
	"errors"
	"testing"
)

// ledgerAPI is the method set of Ledger.
type ledgerAPI interface {
	Insert(key []byte, id, runner, deadline, now uint64) (Decision, error)
	Place(keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error)
	Claim(key []byte, placeholder, requestID, runner, now uint64) (Decision, error)
	Finalize(key []byte, outcome Outcome, payload, now uint64) (Decision, error)
	FinalizeBatch(keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error)
	Take(key []byte, expectedID uint64) (Decision, error)
	Touch(key []byte, runner, now uint64) (Decision, error)
	Reconcile(now uint64, limit int) (Page, error)
	Reclaim(now uint64, limit int) (Page, error)
	FinalizeOwn(runner uint64, outcome Outcome, now uint64, limit int) (Page, error)
	SweepOrphans(now, quiet uint64, limit int) (Page, error)
	Get(key []byte) (Record, bool, error)
	Len() (int, error)
	Counts() (Counts, error)
	Close() error
}

// handoffAPI is the method set of HandoffLedger.
type handoffAPI interface {
	Claim(key HandoffKey, deadline, now uint64) (Decision, error)
	ClaimBatch(keys []HandoffKey, deadline, now uint64, out []Decision) (int, error)
	Complete(key HandoffKey, outcome Outcome, now uint64) (Decision, error)
	Reconcile(now uint64, limit int) (Page, error)
	Reclaim(now uint64, limit int) (Page, error)
	Get(key HandoffKey) (Record, bool, error)
	Len() (int, error)
	Counts() (Counts, error)
	Close() error
}

// anchorsAPI is the method set of AnchorTable.
type anchorsAPI interface {
	Insert(id, value uint64) error
	Remove(id uint64) error
	TryFire(id, now, period uint64) (Fire, error)
	Advance(id, expected, next uint64) (bool, error)
	AnchorUnset(id, now uint64) (bool, error)
	Get(id uint64) (uint64, error)
	Len() (int, error)
	Close() error
}

var (
	_ ledgerAPI  = (*Ledger)(nil)
	_ ledgerAPI  = (*mutexLedger)(nil)
	_ handoffAPI = (*HandoffLedger)(nil)
	_ handoffAPI = (*mutexHandoffLedger)(nil)
	_ anchorsAPI = (*AnchorTable)(nil)
	_ anchorsAPI = (*mutexAnchorTable)(nil)
)

// implMutex names the mutex implementation; the exported types go by
// Implementation ("rust" or "go").
const implMutex = "mutex"

// impls are the implementations every behaviour test runs against.
var impls = []string{Implementation, implMutex}

// forEachImpl runs body as one subtest per implementation.
func forEachImpl(t *testing.T, body func(t *testing.T, impl string)) {
	t.Helper()
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) { body(t, impl) })
	}
}

// newTestRegistry returns a registry of the test's own, so that the tests'
// counts stay out of the process-wide one.
func newTestRegistry(tb testing.TB) *MetricsRegistry {
	tb.Helper()
	r, err := NewMetricsRegistry()
	if err != nil {
		tb.Fatalf("NewMetricsRegistry: %v", err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// makeLedger makes a ledger of impl, or says why not; nothing is cleaned up.
func makeLedger(tb testing.TB, impl string, cfg LedgerConfig) (ledgerAPI, error) {
	tb.Helper()
	switch impl {
	case implMutex:
		m, err := newMutexLedger(cfg, new(goRegistry))
		if err != nil {
			return nil, err
		}
		return m, nil
	case Implementation:
		if cfg.Metrics == nil {
			cfg.Metrics = newTestRegistry(tb)
		}
		l, err := NewLedger(cfg)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	tb.Fatalf("unknown implementation %q", impl)
	return nil, nil
}

func makeHandoff(tb testing.TB, impl string, cfg HandoffConfig) (handoffAPI, error) {
	tb.Helper()
	switch impl {
	case implMutex:
		m, err := newMutexHandoffLedger(cfg, new(goRegistry))
		if err != nil {
			return nil, err
		}
		return m, nil
	case Implementation:
		if cfg.Metrics == nil {
			cfg.Metrics = newTestRegistry(tb)
		}
		l, err := NewHandoffLedger(cfg)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	tb.Fatalf("unknown implementation %q", impl)
	return nil, nil
}

func makeAnchors(tb testing.TB, impl string, capacity int) (anchorsAPI, error) {
	tb.Helper()
	switch impl {
	case implMutex:
		m, err := newMutexAnchorTable(capacity)
		if err != nil {
			return nil, err
		}
		return m, nil
	case Implementation:
		t, err := NewAnchorTable(capacity)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	tb.Fatalf("unknown implementation %q", impl)
	return nil, nil
}

type closer interface{ Close() error }

func closeAtCleanup(tb testing.TB, impl string, c closer) {
	tb.Cleanup(func() {
		if err := c.Close(); err != nil && !errors.Is(err, ErrHandleClosed) {
			tb.Errorf("%s: Close at cleanup: %v", impl, err)
		}
	})
}

// newLedger makes a ledger of impl (closed at cleanup).
func newLedger(tb testing.TB, impl string, cfg LedgerConfig) ledgerAPI {
	tb.Helper()
	l, err := makeLedger(tb, impl, cfg)
	if err != nil {
		tb.Fatalf("%s: new ledger %+v: %v", impl, cfg, err)
	}
	closeAtCleanup(tb, impl, l)
	return l
}

func newHandoff(tb testing.TB, impl string, cfg HandoffConfig) handoffAPI {
	tb.Helper()
	l, err := makeHandoff(tb, impl, cfg)
	if err != nil {
		tb.Fatalf("%s: new hand-off ledger %+v: %v", impl, cfg, err)
	}
	closeAtCleanup(tb, impl, l)
	return l
}

func newAnchors(tb testing.TB, impl string, capacity int) anchorsAPI {
	tb.Helper()
	t, err := makeAnchors(tb, impl, capacity)
	if err != nil {
		tb.Fatalf("%s: new anchor table of %d: %v", impl, capacity, err)
	}
	closeAtCleanup(tb, impl, t)
	return t
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// expectD returns a check of a call's (Decision, error): want, and no
// error. Use it as expectD(t, "what", want)(l.Finalize(...)).
func expectD(tb testing.TB, what string, want Decision) func(Decision, error) {
	return func(d Decision, err error) {
		tb.Helper()
		if err != nil || d != want {
			tb.Errorf("%s: %v, %v; want %v", what, d, err, want)
		}
	}
}

func mustCounts(tb testing.TB, c interface{ Counts() (Counts, error) }) Counts {
	tb.Helper()
	n, err := c.Counts()
	if err != nil {
		tb.Fatalf("Counts: %v", err)
	}
	return n
}

func mustLen(tb testing.TB, c interface{ Len() (int, error) }) int {
	tb.Helper()
	n, err := c.Len()
	if err != nil {
		tb.Fatalf("Len: %v", err)
	}
	return n
}

// The decisions of the README's table.
var (
	wonPlaced  = Decision{Result: ResultWon, State: StatePlaced}
	wonClaimed = Decision{Result: ResultWon, State: StateClaimed}
	wonNone    = Decision{Result: ResultWon}
	lostPlaced = Decision{Result: ResultLost, State: StatePlaced}
	notFound   = Decision{Result: ResultNotFound}
	full       = Decision{Result: ResultFull}
	mismatch   = Decision{Result: ResultMismatch}
)

func wonFinal(o Outcome) Decision {
	return Decision{Result: ResultWon, State: StateFinalized, Outcome: o}
}
func duplicate(o Outcome) Decision {
	return Decision{Result: ResultDuplicate, State: StateFinalized, Outcome: o}
}

func hk(channel string, message uint64) HandoffKey {
	return HandoffKey{ChannelID: channel, ChannelType: 2, MessageID: message, TargetNodeID: 3, TagKey: "tag-1", TagVersion: 8}
}
