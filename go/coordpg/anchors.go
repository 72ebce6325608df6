package coordpg

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/wukongim/wkcore/go/coord"
)

// Anchors is a go/coord AnchorStore on the database: the anchors of one
// named table, shared by every replica. The table is not bounded
// (ErrFull never comes from the database).
type Anchors struct {
	s    *Store
	name string
}

var _ coord.AnchorStore = (*Anchors)(nil)

// Anchors returns the anchor table called name. capacity is checked as in
// memory (coord.ErrInvalidCapacity), not a bound.
func (s *Store) Anchors(name string, capacity int) (*Anchors, error) {
	if capacity < 1 || capacity > coord.AnchorTableCapacityMax {
		return nil, coord.ErrInvalidCapacity
	}
	if len(name) < 1 || len(name) > coord.KeyMax {
		return nil, coord.ErrInvalidKey
	}
	return &Anchors{s: s, name: "anchors:" + name}, nil
}

func scanBools(out ...*bool) func(pgx.Rows) error {
	return func(r pgx.Rows) error {
		for r.Next() {
			dst := make([]any, len(out))
			for i := range out {
				dst[i] = out[i]
			}
			if err := r.Scan(dst...); err != nil {
				return err
			}
		}
		return nil
	}
}

// Insert adds id with value (coord.TimeUnset: unset); coord.ErrAlreadyExists
// when the table holds it.
func (a *Anchors) Insert(ctx context.Context, id, value uint64) error {
	var won bool
	_, logged, err := a.s.decide(ctx, "anchor_insert", newOp(ctx), scanBools(&won), a.name, enc(id), encTime(value))
	if err != nil {
		return err
	}
	if !logged && !won {
		return coord.ErrAlreadyExists
	}
	return nil
}

// Remove deletes id; coord.ErrNotFound when absent.
func (a *Anchors) Remove(ctx context.Context, id uint64) error {
	var won bool
	_, logged, err := a.s.decide(ctx, "anchor_remove", newOp(ctx), scanBools(&won), a.name, enc(id))
	if err != nil {
		return err
	}
	if !logged && !won {
		return coord.ErrNotFound
	}
	return nil
}

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return unset
}

// TryFire is the whole decision in one statement: fired (from Value), not
// due before Value, lost, or anchored first-seen (an unset anchor is anchored
// at now without firing).
func (a *Anchors) TryFire(ctx context.Context, id, now, period uint64) (coord.Fire, error) {
	if err := checkTime(now); err != nil {
		return coord.Fire{}, err
	}
	p := max(period, 1)
	var present, won bool
	var cur, prev *int64
	v, logged, err := a.s.decide(ctx, "anchor_try_fire", newOp(ctx), func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&present, &cur, &won, &prev); err != nil {
				return err
			}
		}
		return nil
	}, a.name, enc(id), enc(now), cutoff(now, p))
	if err != nil {
		return coord.Fire{}, err
	}
	if logged {
		if len(v) == 0 {
			return coord.Fire{Kind: coord.FireAnchoredFirstSeen}, nil
		}
		return coord.Fire{Kind: coord.FireFired, Value: dec(v[0])}, nil
	}
	switch {
	case won && prev == nil:
		return coord.Fire{Kind: coord.FireAnchoredFirstSeen}, nil
	case won:
		return coord.Fire{Kind: coord.FireFired, Value: dec(*prev)}, nil
	case !present:
		return coord.Fire{}, coord.ErrNotFound
	case cur != nil:
		if due := satAdd(dec(*cur), p); now < due {
			return coord.Fire{Kind: coord.FireNotDue, Value: due}, nil
		}
	}
	return coord.Fire{Kind: coord.FireLost}, nil
}

// Advance moves the anchor from expected to next; an unset anchor matches
// no value, and next == expected changes nothing.
func (a *Anchors) Advance(ctx context.Context, id, expected, next uint64) (bool, error) {
	if err := checkTime(next); err != nil {
		return false, err
	}
	var want *int64
	if expected != unset && next != expected {
		w := enc(expected)
		want = &w
	}
	var present, won bool
	_, logged, err := a.s.decide(ctx, "anchor_advance", newOp(ctx), scanBools(&present, &won), a.name, enc(id), want, enc(next))
	if err != nil {
		return false, err
	}
	if logged {
		return true, nil
	}
	if !present {
		return false, coord.ErrNotFound
	}
	return won, nil
}

// AnchorUnset is the explicit unset -> now transition (no firing).
func (a *Anchors) AnchorUnset(ctx context.Context, id, now uint64) (bool, error) {
	if err := checkTime(now); err != nil {
		return false, err
	}
	var present, won bool
	_, logged, err := a.s.decide(ctx, "anchor_unset", newOp(ctx), scanBools(&present, &won), a.name, enc(id), enc(now))
	if err != nil {
		return false, err
	}
	if logged {
		return true, nil
	}
	if !present {
		return false, coord.ErrNotFound
	}
	return won, nil
}

// Get returns the anchor's value (coord.TimeUnset while unset).
func (a *Anchors) Get(ctx context.Context, id uint64) (uint64, error) {
	var v *int64
	ok := false
	err := a.s.read(ctx, "anchor_get", func(r pgx.Rows) error {
		ok = false
		for r.Next() {
			ok = true
			if err := r.Scan(&v); err != nil {
				return err
			}
		}
		return nil
	}, a.name, enc(id))
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, coord.ErrNotFound
	}
	return decTime(v), nil
}

// Len returns how many anchors the table holds.
func (a *Anchors) Len(ctx context.Context) (int, error) {
	var n int64
	err := a.s.read(ctx, "anchor_len", func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&n); err != nil {
				return err
			}
		}
		return nil
	}, a.name)
	return int(n), err
}
