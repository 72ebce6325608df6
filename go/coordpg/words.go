package coordpg

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/wukongim/wkcore/go/coord"
)

// The words on the database: one row per (store, key) of wkcoord_word; a
// key without a row is the word's initial state.

// Flips is a go/coord FlipStore on the database.
type Flips struct {
	s       *Store
	name    string
	initial uint64
}

// Counters is a go/coord CounterStore on the database.
type Counters struct {
	s    *Store
	name string
}

// Triggers is a go/coord TriggerStore on the database.
type Triggers struct {
	s    *Store
	name string
}

// Windows is a go/coord WindowStore on the database.
type Windows struct {
	s    *Store
	name string
}

var (
	_ coord.FlipStore    = (*Flips)(nil)
	_ coord.CounterStore = (*Counters)(nil)
	_ coord.TriggerStore = (*Triggers)(nil)
	_ coord.WindowStore  = (*Windows)(nil)
)

func storeName(kind, name string) (string, error) {
	if len(name) < 1 || len(name) > coord.KeyMax {
		return "", coord.ErrInvalidKey
	}
	return kind + ":" + name, nil
}

// Flips returns the flip store called name; its keys start in initial.
func (s *Store) Flips(name string, initial uint64) (*Flips, error) {
	n, err := storeName("flip", name)
	return &Flips{s: s, name: n, initial: initial}, err
}

// Counters returns the counter store called name.
func (s *Store) Counters(name string) (*Counters, error) {
	n, err := storeName("counter", name)
	return &Counters{s: s, name: n}, err
}

// Triggers returns the exclusive-trigger store called name.
func (s *Store) Triggers(name string) (*Triggers, error) {
	n, err := storeName("trigger", name)
	return &Triggers{s: s, name: n}, err
}

// Windows returns the windowed-counter store called name.
func (s *Store) Windows(name string) (*Windows, error) {
	n, err := storeName("window", name)
	return &Windows{s: s, name: n}, err
}

// getWord reads a word: ok false when the key has no row.
func (s *Store) getWord(ctx context.Context, scope string, key []byte) (a, b int64, ok bool, err error) {
	err = s.read(ctx, "word_get", func(r pgx.Rows) error {
		ok = false
		for r.Next() {
			ok = true
			if err := r.Scan(&a, &b); err != nil {
				return err
			}
		}
		return nil
	}, scope, key)
	return
}

// Flip moves key from from to to; true only for the one caller that did.
func (f *Flips) Flip(ctx context.Context, key []byte, from, to uint64) (bool, error) {
	if !validKey(key) {
		return false, coord.ErrInvalidKey
	}
	if from == to {
		return false, nil
	}
	var won bool
	_, logged, err := f.s.decide(ctx, "flip", newOp(ctx), scanBools(&won), f.name, key, enc(from), enc(to), enc(f.initial))
	if err != nil {
		return false, err
	}
	return logged || won, nil
}

// Get returns key's state.
func (f *Flips) Get(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	a, _, ok, err := f.s.getWord(ctx, f.name, key)
	if err != nil {
		return 0, err
	}
	if !ok {
		return f.initial, nil
	}
	return dec(a), nil
}

// Increment adds one to key's counter and returns the new value, unique to
// this call.
func (c *Counters) Increment(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	var a int64
	v, logged, err := c.s.decide(ctx, "counter_increment", newOp(ctx), func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&a); err != nil {
				return err
			}
		}
		return nil
	}, c.name, key)
	if err != nil {
		return 0, err
	}
	if logged {
		a = v[0]
	}
	return dec(a), nil
}

// Get returns key's value.
func (c *Counters) Get(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	a, _, ok, err := c.s.getWord(ctx, c.name, key)
	if err != nil || !ok {
		return 0, err
	}
	return dec(a), nil
}

// Trigger starts key's next run: inactive with run N -> run N + 1 active.
// While a run is active it is refused with a coord.BusyError naming it;
// after coord.RunMax, coord.ErrExhausted.
func (t *Triggers) Trigger(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	var run, cur, active *int64
	v, logged, err := t.s.decide(ctx, "trigger_start", newOp(ctx), func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&run, &cur, &active); err != nil {
				return err
			}
		}
		return nil
	}, t.name, key, enc(coord.RunMax))
	if err != nil {
		return 0, err
	}
	if logged {
		return dec(v[0]), nil
	}
	if run != nil {
		return dec(*run), nil
	}
	refused := func(a, b int64) error {
		if b == 1 {
			return coord.BusyError{Run: dec(a)}
		}
		if dec(a) >= coord.RunMax {
			return coord.ErrExhausted
		}
		return nil
	}
	if cur != nil {
		if err := refused(*cur, *active); err != nil {
			return 0, err
		}
	}
	// A concurrent trigger won after this statement's snapshot: read it.
	a, b, ok, err := t.s.getWord(ctx, t.name, key)
	if err != nil {
		return 0, err
	}
	if ok {
		if err := refused(a, b); err != nil {
			return 0, err
		}
		// It has finished already: the run after it is another decision.
		return 0, coord.BusyError{Run: dec(a)}
	}
	return 0, coord.BusyError{Run: 1}
}

// Finish ends run; true only for the run that holds the key.
func (t *Triggers) Finish(ctx context.Context, key []byte, run uint64) (bool, error) {
	if !validKey(key) {
		return false, coord.ErrInvalidKey
	}
	if run == 0 || run > coord.RunMax {
		return false, nil
	}
	var won bool
	_, logged, err := t.s.decide(ctx, "trigger_finish", newOp(ctx), scanBools(&won), t.name, key, enc(run))
	if err != nil {
		return false, err
	}
	return logged || won, nil
}

// Active returns key's active run, 0 when none.
func (t *Triggers) Active(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	a, b, ok, err := t.s.getWord(ctx, t.name, key)
	if err != nil || !ok || b == 0 {
		return 0, err
	}
	return dec(a), nil
}

// LastRun returns key's last run number.
func (t *Triggers) LastRun(ctx context.Context, key []byte) (uint64, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	a, _, ok, err := t.s.getWord(ctx, t.name, key)
	if err != nil || !ok {
		return 0, err
	}
	return dec(a), nil
}

func checkWindow(now, window uint64) error {
	if window == 0 || now > coord.WindowTimeMax || window > coord.WindowTimeMax-now {
		return coord.ErrInvalidTime
	}
	return nil
}

// Increment counts one on key's window and returns the new count: a new
// window (count 1, ending now+window) when now is at or past the end.
func (w *Windows) Increment(ctx context.Context, key []byte, now, window uint64) (uint32, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	if err := checkWindow(now, window); err != nil {
		return 0, err
	}
	var b int64
	v, logged, err := w.s.decide(ctx, "window_increment", newOp(ctx), func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&b); err != nil {
				return err
			}
		}
		return nil
	}, w.name, key, enc(now), enc(now+window))
	if err != nil {
		return 0, err
	}
	if logged {
		b = v[0]
	}
	return uint32(b), nil
}

// Count returns key's count at now (0 once the window has ended).
func (w *Windows) Count(ctx context.Context, key []byte, now uint64) (uint32, error) {
	if !validKey(key) {
		return 0, coord.ErrInvalidKey
	}
	a, b, ok, err := w.s.getWord(ctx, w.name, key)
	if err != nil || !ok || enc(now) >= a {
		return 0, err
	}
	return uint32(b), nil
}
