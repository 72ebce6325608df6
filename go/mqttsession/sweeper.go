package mqttsession

import (
	"context"
	"reflect"
	"sync"
	"time"
)

// OwnerSweeperTask is the task id an OwnerSweeperOptions.Registry starts the
// sweeper's loop under (WuKongIM's goroutine.TaskMQTTOwnerSweeper).
const OwnerSweeperTask = "mqtt/owner_sweeper"

// The sweeper's defaults and bounds.
const (
	sweeperInterval       = 250 * time.Millisecond
	sweeperTurnTimeout    = 250 * time.Millisecond
	sweeperIntervalMin    = time.Millisecond
	sweeperIntervalMax    = time.Minute
	sweeperTurnTimeoutMin = time.Millisecond
	sweeperTurnTimeoutMax = 5 * time.Second
)

// OwnerSweeperOptions bounds cleanup independently of connection
// registration. Zero fields take the defaults.
type OwnerSweeperOptions struct {
	Owners *Owners
	// Registry is the host's goroutine supervisor the loop runs under, or
	// nil for a goroutine of the sweeper's own. It is any value with a
	// method Go(task T, fn func()) whose T is a string type: WuKongIM's
	// *goroutine.Registry fits as it is (a nil one too: its Go falls back to
	// the process-wide registry, as upstream's SafeGo does). Start calls
	// Go(T(OwnerSweeperTask), loop). A value without such a method is
	// ErrOwnerSweeperInvalid.
	Registry any
	// Limit defaults to 256 due owners per turn and cannot exceed 256.
	Limit int
	// Interval defaults to 250ms; it is bounded between 1ms and one minute.
	Interval time.Duration
	// TurnTimeout defaults to 250ms, bounded between 1ms and five seconds.
	// A slow callback still owns the turn until it returns; it is never
	// detached.
	TurnTimeout time.Duration
	// Observe receives aggregate snapshots synchronously after each turn.
	Observe func(OwnerSweepObservation)
}

// OwnerSweepObservation counts attempts, not unique retirements or proof
// receipts.
type OwnerSweepObservation struct {
	Visited, Failures int
	Owners            OwnerSnapshot
}

// OwnerSweeper drives the registry's deadline heap in one joined loop. It
// does not transition durable Sessions, renew leases or discard unresolved
// effects.
type OwnerSweeper struct {
	opts  OwnerSweeperOptions
	spawn func(func())
	// mu guards the current run: its context, its cancel and the channel
	// closed when its loop has returned.
	mu     sync.Mutex
	run    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewOwnerSweeper fills in the defaults, checks the bounds
// (ErrOwnerSweeperInvalid) and returns a stopped sweeper.
func NewOwnerSweeper(o OwnerSweeperOptions) (*OwnerSweeper, error) {
	o.Limit = orDefault(o.Limit, SweepLimitMax)
	o.Interval = orDefault(o.Interval, sweeperInterval)
	o.TurnTimeout = orDefault(o.TurnTimeout, sweeperTurnTimeout)
	valid := o.Owners != nil && o.Limit >= 1 && o.Limit <= SweepLimitMax &&
		o.Interval >= sweeperIntervalMin && o.Interval <= sweeperIntervalMax &&
		o.TurnTimeout >= sweeperTurnTimeoutMin && o.TurnTimeout <= sweeperTurnTimeoutMax
	spawn, ok := spawnerOf(o.Registry)
	if !valid || !ok {
		return nil, ErrOwnerSweeperInvalid
	}
	return &OwnerSweeper{opts: o, spawn: spawn}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// stringTaskRegistry is a supervisor whose task ids are plain strings.
type stringTaskRegistry interface{ Go(task string, fn func()) }

// spawnerOf returns how Start launches the loop for registry (see
// OwnerSweeperOptions.Registry); false when registry has no fitting Go.
func spawnerOf(registry any) (func(func()), bool) {
	switch r := registry.(type) {
	case nil:
		return func(fn func()) { go fn() }, true
	case stringTaskRegistry:
		return func(fn func()) { r.Go(OwnerSweeperTask, fn) }, true
	}
	m := reflect.ValueOf(registry).MethodByName("Go")
	if !m.IsValid() {
		return nil, false
	}
	t := m.Type()
	fnType := reflect.TypeOf(func() {})
	if t.NumIn() != 2 || t.NumOut() != 0 || t.IsVariadic() || t.In(0).Kind() != reflect.String || t.In(1) != fnType {
		return nil, false
	}
	task := reflect.ValueOf(OwnerSweeperTask).Convert(t.In(0))
	return func(fn func()) { m.Call([]reflect.Value{task, reflect.ValueOf(fn)}) }, true
}

// Options returns the sweeper's options, defaults filled in: the very
// values the loop reads at each turn, for a host's white-box shim (see
// docs/GO.md, "Swapping the import"). Change them only while the sweeper is
// stopped (after a Stop that returned nil, before the next Start); a nil
// sweeper returns nil.
func (w *OwnerSweeper) Options() *OwnerSweeperOptions {
	if w == nil {
		return nil
	}
	return &w.opts
}

// Start starts the loop. ctx is used only for admission; repeated calls
// while running share the run (nil); a Start while a stopped run has not
// joined is ErrOwnerSweeperStopping.
func (w *OwnerSweeper) Start(ctx context.Context) error {
	if w == nil || ctx == nil {
		return ErrOwnerSweeperInvalid
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		if w.run.Err() == nil {
			return nil // running: the same run
		}
		return ErrOwnerSweeperStopping
	}
	run, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.run, w.cancel, w.done = run, cancel, done
	w.spawn(func() {
		defer close(done)
		w.loop(run)
	})
	return nil
}

// Stop cancels the run and joins it; when ctx ends first it returns
// ctx.Err() and keeps the run (a later Stop joins it). It closes no
// admission and erases no owner.
func (w *OwnerSweeper) Stop(ctx context.Context) error {
	if w == nil || ctx == nil {
		return ErrOwnerSweeperInvalid
	}
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	if w.done == done {
		w.run, w.cancel, w.done = nil, nil, nil
	}
	w.mu.Unlock()
	return nil
}

func (w *OwnerSweeper) loop(run context.Context) {
	tick := time.NewTicker(w.opts.Interval)
	defer tick.Stop()
	for run.Err() == nil {
		obs := w.Turn(run)
		if observe := w.opts.Observe; observe != nil {
			observe(obs)
		}
		select {
		case <-tick.C:
		case <-run.Done():
			return
		}
	}
}

// Turn runs one turn as the loop does, without Observe: Sweep(Limit) under
// a context that ends with parent or after TurnTimeout, then the snapshot.
// Failures is 1 when the sweep failed or the turn's context ended. It is
// safe beside a running loop (each Sweep is). A nil sweeper or parent is
// one failure that sweeps nothing.
func (w *OwnerSweeper) Turn(parent context.Context) OwnerSweepObservation {
	if w == nil || parent == nil {
		return OwnerSweepObservation{Failures: 1, Owners: OwnerSnapshot{Stopped: true}}
	}
	ctx, cancel := context.WithTimeout(parent, w.opts.TurnTimeout)
	defer cancel()
	var obs OwnerSweepObservation
	var err error
	obs.Visited, err = w.opts.Owners.Sweep(ctx, w.opts.Limit)
	if err != nil || ctx.Err() != nil {
		obs.Failures = 1
	}
	obs.Owners = w.opts.Owners.Snapshot()
	return obs
}
