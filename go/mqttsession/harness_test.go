package mqttsession

// The harness the package's tests share: one interface over the build's
// Owners (the Rust core with cgo, Go without) and, in the cgo build, the
// mutex implementation beside it, so each behaviour test runs against both.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// opAPI is the method set of *Operation.
type opAPI interface {
	Done()
	Check() error
	MarkUncertain() error
	UID() string
	Context() context.Context
}

// ownersAPI is the method set of *Owners (Begin returning an opAPI).
type ownersAPI interface {
	Reserve(Claim, CloseTransport) (Owner, error)
	Activate(Owner, uint64, time.Time) error
	Renew(Owner, uint64, time.Time) error
	Begin(context.Context, Owner) (opAPI, error)
	Fence(Owner) error
	Quiesce(context.Context, Owner) error
	StopAdmission()
	Close(context.Context) error
	Sweep(context.Context, int) (int, error)
	Snapshot() OwnerSnapshot
	Retirement() (RetiredBoot, error)
}

// implMutex names the mutex implementation when it is not the build's.
const implMutex = "mutex"

// impls are the implementations every behaviour test runs against.
var impls = func() []string {
	if Implementation == "go" {
		return []string{Implementation}
	}
	return []string{Implementation, implMutex}
}()

func forEachImpl(t *testing.T, body func(t *testing.T, impl string)) {
	t.Helper()
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) { body(t, impl) })
	}
}

// publicOwners is *Owners as an ownersAPI.
type publicOwners struct{ *Owners }

func (r publicOwners) Begin(ctx context.Context, o Owner) (opAPI, error) {
	op, err := r.Owners.Begin(ctx, o)
	if err != nil {
		return nil, err
	}
	return op, nil
}

// mutexAPI is the mutex implementation as an ownersAPI.
type mutexAPI struct{ m *mutexOwners }

type mutexOpAPI struct{ mutexOp }

func (o *mutexOpAPI) Done()                    { o.finish() }
func (o *mutexOpAPI) Check() error             { return o.check() }
func (o *mutexOpAPI) MarkUncertain() error     { return o.markUncertain() }
func (o *mutexOpAPI) UID() string              { return o.entry.uid }
func (o *mutexOpAPI) Context() context.Context { return o.context() }

func (r mutexAPI) Reserve(c Claim, f CloseTransport) (Owner, error) { return r.m.reserve(c, f) }
func (r mutexAPI) Activate(o Owner, rev uint64, until time.Time) error {
	return r.m.installLease(o, rev, until, false)
}
func (r mutexAPI) Renew(o Owner, rev uint64, until time.Time) error {
	return r.m.installLease(o, rev, until, true)
}
func (r mutexAPI) Begin(ctx context.Context, o Owner) (opAPI, error) {
	e, err := r.m.begin(ctx, o)
	if err != nil {
		return nil, err
	}
	op := &mutexOpAPI{}
	op.entry, op.parent = e, ctx
	return op, nil
}
func (r mutexAPI) Fence(o Owner) error                           { return r.m.fence(o) }
func (r mutexAPI) Quiesce(ctx context.Context, o Owner) error    { return r.m.quiesce(ctx, o) }
func (r mutexAPI) StopAdmission()                                { r.m.stopAdmission() }
func (r mutexAPI) Close(ctx context.Context) error               { return r.m.close(ctx) }
func (r mutexAPI) Sweep(ctx context.Context, n int) (int, error) { return r.m.sweep(ctx, n) }
func (r mutexAPI) Snapshot() OwnerSnapshot                       { return r.m.snapshot() }
func (r mutexAPI) Retirement() (RetiredBoot, error)              { return r.m.retirement() }

// fakeClock is the tests' clock: a monotonic reading moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixtureOptions are upstream's fixture: NodeID 3, BootID "boot",
// PendingTimeout 1s, MaxLease 10s, CloseRetry 1s.
func fixtureOptions(clock *fakeClock, capacity, operations int) OwnerOptions {
	return OwnerOptions{NodeID: 3, BootID: "boot", Capacity: capacity, MaxOperations: operations,
		PendingTimeout: time.Second, MaxLease: 10 * time.Second, CloseRetry: time.Second, Now: clock.Now}
}

// newImpl makes a registry of impl.
func newImpl(tb testing.TB, impl string, opts OwnerOptions) ownersAPI {
	tb.Helper()
	switch impl {
	case implMutex:
		m, err := newMutexOwners(opts)
		if err != nil {
			tb.Fatalf("newMutexOwners: %v", err)
		}
		return mutexAPI{m}
	case Implementation:
		r, err := NewOwners(opts)
		if err != nil {
			tb.Fatalf("NewOwners: %v", err)
		}
		return publicOwners{r}
	}
	tb.Fatalf("unknown implementation %q", impl)
	return nil
}

// ownerFixture is upstream's: a registry of impl on a fake clock.
func ownerFixture(tb testing.TB, impl string, capacity, operations int) (ownersAPI, *fakeClock) {
	tb.Helper()
	clock := newFakeClock()
	return newImpl(tb, impl, fixtureOptions(clock, capacity, operations)), clock
}

// publicFixture is ownerFixture for the build's *Owners (the sweeper's).
func publicFixture(tb testing.TB, capacity, operations int) (*Owners, *fakeClock) {
	tb.Helper()
	clock := newFakeClock()
	r, err := NewOwners(fixtureOptions(clock, capacity, operations))
	if err != nil {
		tb.Fatalf("NewOwners: %v", err)
	}
	return r, clock
}

func ownerClaim(client string) Claim {
	return Claim{Key: Key{Namespace: "main", ClientID: client}, UID: "alice", SessionGeneration: 1, OwnerGeneration: 1}
}

func okClose(context.Context) error { return nil }

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("unexpected error: %v", err)
	}
}

func mustFail(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		tb.Fatal("expected an error")
	}
}

// is requires err to be target itself (errors.Is and ==).
func is(tb testing.TB, err, target error) {
	tb.Helper()
	if err != target || !errors.Is(err, target) {
		tb.Fatalf("error %v (%T), want %v", err, err, target)
	}
}

func eq[T comparable](tb testing.TB, got, want T, what ...any) {
	tb.Helper()
	if got != want {
		tb.Fatalf("%v: got %v, want %v", what, got, want)
	}
}

func mustReserve(tb testing.TB, r ownersAPI, c Claim, f CloseTransport) Owner {
	tb.Helper()
	o, err := r.Reserve(c, f)
	must(tb, err)
	return o
}

func mustBegin(tb testing.TB, r ownersAPI, ctx context.Context, o Owner) opAPI {
	tb.Helper()
	op, err := r.Begin(ctx, o)
	must(tb, err)
	return op
}
