package coordpg

import (
	"context"
	"encoding/binary"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/wukongim/wkcore/go/coord"
)

const unset = coord.TimeUnset

// Ledger is a go/coord LedgerStore on the database: the records of one
// named ledger, shared by every replica that opens the same name. Counts
// are this handle's decisions (every replica counts its own).
type Ledger struct {
	s         *Store
	name      string
	kind      coord.Kind
	retention uint64
	handoff   bool
	counts    counts
}

type counts struct {
	claimsWon, claimsLost, finWon, finDup, timeouts, reclaimed atomic.Uint64
}

func (c *counts) get() coord.Counts {
	return coord.Counts{ClaimsWon: c.claimsWon.Load(), ClaimsLost: c.claimsLost.Load(),
		FinalizationsWon: c.finWon.Load(), FinalizationsDuplicate: c.finDup.Load(),
		ReconciledTimeouts: c.timeouts.Load(), Reclaimed: c.reclaimed.Load()}
}

var _ coord.LedgerStore = (*Ledger)(nil)

// Ledger returns the ledger called name (1 to coord.KeyMax bytes; one
// namespace per database) with cfg: Kind and Retention as in memory, and
// Capacity checked as in memory (so a configuration moves unchanged) but not
// a bound: the table holds what is placed, and retention with Reclaim bounds
// it. Every replica must open a ledger with the same Retention.
func (s *Store) Ledger(name string, cfg coord.LedgerConfig) (*Ledger, error) {
	if cfg.Kind != coord.KindClaim && cfg.Kind != coord.KindPending {
		return nil, coord.ErrInvalidCapacity
	}
	if cfg.Capacity < 1 || cfg.Capacity > coord.LedgerCapacityMax {
		return nil, coord.ErrInvalidCapacity
	}
	if len(name) < 1 || len(name) > coord.KeyMax {
		return nil, coord.ErrInvalidKey
	}
	return &Ledger{s: s, name: "ledger:" + name, kind: cfg.Kind, retention: cfg.Retention}, nil
}

func validKey(k []byte) bool { return len(k) >= 1 && len(k) <= coord.KeyMax }

func checkTime(t uint64) error {
	if t == unset {
		return coord.ErrInvalidTime
	}
	return nil
}

func checkOutcome(o coord.Outcome) error {
	if !o.Valid() {
		return coord.ErrInvalidOutcome
	}
	return nil
}

func checkBatch(keys [][]byte) error {
	if len(keys) == 0 || len(keys) > coord.BatchMax {
		return coord.ErrInvalidArgument
	}
	for _, k := range keys {
		if !validKey(k) {
			return coord.ErrInvalidKey
		}
	}
	return nil
}

// found is the decision of a caller that found a record in state st.
func found(r coord.Result, st int16, outcome int32) coord.Decision {
	d := coord.Decision{Result: r, State: coord.State(st)}
	if st == 3 {
		d.Outcome = coord.Outcome(outcome)
	}
	return d
}

// exists is an insert's decision on a record it found: lost while PENDING,
// a duplicate once terminal.
func exists(st int16, outcome int32) coord.Decision {
	if st == 3 {
		return found(coord.ResultDuplicate, st, outcome)
	}
	return found(coord.ResultLost, st, outcome)
}

// row is a record as ledger_get reads it.
type row struct {
	state                           int16
	outcome                         int32
	id, runner                      int64
	deadline                        *int64
	refreshed                       int64
	finalized                       *int64
	payload, duplicates, dupPayload int64
	ok                              bool
}

func (l *Ledger) readRow(ctx context.Context, key []byte) (row, error) {
	var r row
	err := l.s.read(ctx, "ledger_get", func(rows pgx.Rows) error {
		r = row{}
		for rows.Next() {
			r.ok = true
			if err := rows.Scan(&r.state, &r.outcome, &r.id, &r.runner, &r.deadline, &r.refreshed,
				&r.finalized, &r.payload, &r.duplicates, &r.dupPayload); err != nil {
				return err
			}
		}
		return nil
	}, l.name, key)
	return r, err
}

// Insert inserts a PENDING record; the first insert of a key wins.
func (l *Ledger) Insert(ctx context.Context, key []byte, id, runner, deadline, now uint64) (coord.Decision, error) {
	if !validKey(key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	d, err := l.insert(ctx, key, id, runner, deadline, now)
	if err == nil && l.handoff {
		l.countClaim(d)
	}
	return d, err
}

func (l *Ledger) countClaim(d coord.Decision) {
	if d.Result == coord.ResultWon {
		l.counts.claimsWon.Add(1)
	} else {
		l.counts.claimsLost.Add(1)
	}
}

func (l *Ledger) insert(ctx context.Context, key []byte, id, runner, deadline, now uint64) (coord.Decision, error) {
	op := requestID(ctx)
	for attempt := 0; ; attempt++ {
		var won bool
		var st *int16
		var oc *int32
		_, logged, err := l.s.decide(ctx, "ledger_insert", op, func(r pgx.Rows) error {
			for r.Next() {
				if err := r.Scan(&won, &st, &oc); err != nil {
					return err
				}
			}
			return nil
		}, l.name, key, enc(id), enc(runner), encTime(deadline), enc(now))
		if err != nil {
			return coord.Decision{}, err
		}
		if logged || won {
			return coord.Decision{Result: coord.ResultWon, State: coord.StatePlaced}, nil
		}
		if st != nil {
			return exists(*st, *oc), nil
		}
		// A concurrent insert won after this statement's snapshot: read it.
		r, err := l.readRow(ctx, key)
		if err != nil {
			return coord.Decision{}, err
		}
		if r.ok {
			return exists(r.state, r.outcome), nil
		}
		if attempt >= 2 {
			return coord.Decision{Result: coord.ResultLost, State: coord.StatePlaced}, nil
		}
	}
}

// Place writes a PENDING record with the placeholder for every key absent,
// in one statement (repeated keys of one batch: one more statement per
// repetition, so the repeat finds the first). The table is not bounded:
// ResultFull never comes from the database.
func (l *Ledger) Place(ctx context.Context, keys [][]byte, placeholder, deadline, now uint64, out []coord.Decision) (int, error) {
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, coord.ErrInvalidArgument
	}
	return l.place(ctx, keys, 0, placeholder, deadline, now, out)
}

// passes splits the indexes of keys into passes of distinct keys: the first
// occurrence of each key in the first pass, the second in the second, ...
func passes(keys [][]byte) [][]int {
	seen := map[string]int{}
	var out [][]int
	for i, k := range keys {
		n := seen[string(k)]
		seen[string(k)] = n + 1
		if n == len(out) {
			out = append(out, nil)
		}
		out[n] = append(out[n], i)
	}
	return out
}

func (l *Ledger) place(ctx context.Context, keys [][]byte, runner, id, deadline, now uint64, out []coord.Decision) (int, error) {
	placed := 0
	base := newOp(ctx)
	for n, pass := range passes(keys) {
		batch := make([][]byte, len(pass))
		for j, i := range pass {
			batch[j] = keys[i]
		}
		op := base + int64(n) // each pass its own request id
		res := make([]coord.Decision, len(pass))
		v, logged, err := l.s.decide(ctx, "ledger_place", op, func(r pgx.Rows) error {
			for r.Next() {
				var i int64
				var won bool
				var st *int16
				var oc *int32
				if err := r.Scan(&i, &won, &st, &oc); err != nil {
					return err
				}
				switch {
				case won:
					res[i-1] = coord.Decision{Result: coord.ResultWon, State: coord.StatePlaced}
				case st != nil:
					res[i-1] = exists(*st, *oc)
				default:
					res[i-1] = coord.Decision{} // a concurrent insert: read below
				}
			}
			return nil
		}, l.name, batch, enc(id), enc(runner), encTime(deadline), enc(now))
		if err != nil {
			return placed, err
		}
		if logged {
			for j := range res {
				res[j] = coord.Decision{}
			}
			for _, i := range v {
				res[i-1] = coord.Decision{Result: coord.ResultWon, State: coord.StatePlaced}
			}
		}
		if err := l.fillUnknown(ctx, batch, res, exists); err != nil {
			return placed, err
		}
		for j, i := range pass {
			out[i] = res[j]
			if res[j].Result == coord.ResultWon {
				placed++
			}
		}
	}
	return placed, nil
}

// fillUnknown reads the records of the keys whose decision is still the
// zero Decision with a Result of won but no State (not decided by the
// statement) and decides them with f; a key without a record is not found.
func (l *Ledger) fillUnknown(ctx context.Context, keys [][]byte, res []coord.Decision, f func(int16, int32) coord.Decision) error {
	var ask [][]byte
	for j := range res {
		if res[j] == (coord.Decision{}) {
			ask = append(ask, keys[j])
		}
	}
	if len(ask) == 0 {
		return nil
	}
	type so struct {
		st int16
		oc int32
	}
	got := map[string]so{}
	err := l.s.read(ctx, "ledger_states", func(r pgx.Rows) error {
		for r.Next() {
			var k []byte
			var x so
			if err := r.Scan(&k, &x.st, &x.oc); err != nil {
				return err
			}
			got[string(k)] = x
		}
		return nil
	}, l.name, ask)
	if err != nil {
		return err
	}
	for j := range res {
		if res[j] == (coord.Decision{}) {
			if x, ok := got[string(keys[j])]; ok {
				res[j] = f(x.st, x.oc)
			} else {
				res[j] = coord.Decision{Result: coord.ResultNotFound}
			}
		}
	}
	return nil
}

// Claim swaps the placeholder for requestID while the record is PENDING,
// unclaimed and holds the placeholder: one claim wins.
func (l *Ledger) Claim(ctx context.Context, key []byte, placeholder, requestID, runner, now uint64) (coord.Decision, error) {
	if !validKey(key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	d, err := l.claim(ctx, key, placeholder, requestID, runner, now)
	if err == nil {
		l.countClaim(d)
	}
	return d, err
}

func claimLoser(st int16, id int64, oc int32, placeholder uint64) (coord.Decision, bool) {
	switch {
	case st == 2:
		return coord.Decision{Result: coord.ResultLost, State: coord.StateClaimed}, true
	case st == 3:
		return found(coord.ResultDuplicate, st, oc), true
	case dec(id) != placeholder:
		return coord.Decision{Result: coord.ResultMismatch, State: coord.StatePlaced}, true
	}
	return coord.Decision{}, false
}

func (l *Ledger) claim(ctx context.Context, key []byte, placeholder, requestID, runner, now uint64) (coord.Decision, error) {
	op := newOp(ctx)
	var won bool
	var st *int16
	var id *int64
	var oc *int32
	_, logged, err := l.s.decide(ctx, "ledger_claim", op, func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&won, &st, &id, &oc); err != nil {
				return err
			}
		}
		return nil
	}, l.name, key, enc(placeholder), enc(requestID), enc(runner), enc(now))
	if err != nil {
		return coord.Decision{}, err
	}
	if logged || won {
		return coord.Decision{Result: coord.ResultWon, State: coord.StateClaimed}, nil
	}
	if st == nil {
		return coord.Decision{Result: coord.ResultNotFound}, nil
	}
	if d, ok := claimLoser(*st, *id, *oc, placeholder); ok {
		return d, nil
	}
	// The snapshot showed the claim open: a concurrent transition won.
	r, err := l.readRow(ctx, key)
	if err != nil {
		return coord.Decision{}, err
	}
	if !r.ok {
		return coord.Decision{Result: coord.ResultNotFound}, nil
	}
	if d, ok := claimLoser(r.state, r.id, r.outcome, placeholder); ok {
		return d, nil
	}
	return coord.Decision{Result: coord.ResultLost, State: coord.StateClaimed}, nil
}

// newOp is the request id of the next decision.
func newOp(ctx context.Context) int64 { return requestID(ctx) }

// Finalize moves a PENDING record to outcome; the first terminal write
// wins, a duplicate is told what won and leaves its payload for audit.
func (l *Ledger) Finalize(ctx context.Context, key []byte, outcome coord.Outcome, payload, now uint64) (coord.Decision, error) {
	if !validKey(key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkOutcome(outcome); err != nil {
		return coord.Decision{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	op := newOp(ctx)
	var won, any bool
	var oc int32
	_, logged, err := l.s.decide(ctx, "ledger_finalize", op, func(r pgx.Rows) error {
		any = false
		for r.Next() {
			any = true
			if err := r.Scan(&won, &oc); err != nil {
				return err
			}
		}
		return nil
	}, l.name, key, int32(outcome), enc(payload), enc(now))
	if err != nil {
		return coord.Decision{}, err
	}
	var d coord.Decision
	switch {
	case logged || won:
		d = coord.Decision{Result: coord.ResultWon, State: coord.StateFinalized, Outcome: outcome}
	case !any:
		return coord.Decision{Result: coord.ResultNotFound}, nil
	default:
		d = found(coord.ResultDuplicate, 3, oc)
	}
	l.countFinal(d)
	return d, nil
}

func (l *Ledger) countFinal(d coord.Decision) {
	switch d.Result {
	case coord.ResultWon:
		l.counts.finWon.Add(1)
	case coord.ResultDuplicate:
		l.counts.finDup.Add(1)
	}
}

// FinalizeBatch finalizes many keys in one statement (a repeated key: one
// more statement per repetition) and returns how many it won.
func (l *Ledger) FinalizeBatch(ctx context.Context, keys [][]byte, payloads []uint64, outcome coord.Outcome, now uint64, out []coord.Decision) (int, error) {
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	if payloads != nil && len(payloads) != len(keys) {
		return 0, coord.ErrInvalidArgument
	}
	if err := checkOutcome(outcome); err != nil {
		return 0, err
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, coord.ErrInvalidArgument
	}
	return l.finalizeBatch(ctx, keys, payloads, outcome, now, out)
}

func (l *Ledger) finalizeBatch(ctx context.Context, keys [][]byte, payloads []uint64, outcome coord.Outcome, now uint64, out []coord.Decision) (int, error) {
	wonN := 0
	base := newOp(ctx)
	for n, pass := range passes(keys) {
		batch := make([][]byte, len(pass))
		pl := make([]int64, len(pass))
		for j, i := range pass {
			batch[j] = keys[i]
			var p uint64
			if payloads != nil {
				p = payloads[i]
			}
			pl[j] = enc(p)
		}
		op := base + int64(n) // each pass its own request id
		res := make([]coord.Decision, len(pass))
		v, logged, err := l.s.decide(ctx, "ledger_finalize_batch", op, func(r pgx.Rows) error {
			for r.Next() {
				var i int64
				var won *bool
				var oc *int32
				if err := r.Scan(&i, &won, &oc); err != nil {
					return err
				}
				switch {
				case won == nil:
					res[i-1] = coord.Decision{Result: coord.ResultNotFound}
				case *won:
					res[i-1] = coord.Decision{Result: coord.ResultWon, State: coord.StateFinalized, Outcome: outcome}
				default:
					res[i-1] = found(coord.ResultDuplicate, 3, *oc)
				}
			}
			return nil
		}, l.name, batch, pl, int32(outcome), enc(now))
		if err != nil {
			return wonN, err
		}
		if logged {
			// The statement committed; its winners are in v, every other key
			// was a duplicate or not found: read which.
			for j := range res {
				res[j] = coord.Decision{}
			}
			for _, i := range v {
				res[i-1] = coord.Decision{Result: coord.ResultWon, State: coord.StateFinalized, Outcome: outcome}
			}
			if err := l.fillUnknown(ctx, batch, res, func(st int16, oc int32) coord.Decision {
				return found(coord.ResultDuplicate, st, oc)
			}); err != nil {
				return wonN, err
			}
		}
		for j, i := range pass {
			out[i] = res[j]
			l.countFinal(res[j])
			if res[j].Result == coord.ResultWon {
				wonN++
			}
		}
	}
	return wonN, nil
}

func takeLoser(st int16, id int64, oc int32, expected uint64) (coord.Decision, bool) {
	switch {
	case st == 3:
		return found(coord.ResultDuplicate, st, oc), true
	case dec(id) != expected:
		return found(coord.ResultMismatch, st, 0), true
	}
	return coord.Decision{}, false
}

// Take removes the record while it is PENDING and holds expectedID
// (compare-and-delete): of two takes with one id, one wins.
func (l *Ledger) Take(ctx context.Context, key []byte, expectedID uint64) (coord.Decision, error) {
	if !validKey(key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	op := newOp(ctx)
	var won bool
	var st *int16
	var id *int64
	var oc *int32
	_, logged, err := l.s.decide(ctx, "ledger_take", op, func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&won, &st, &id, &oc); err != nil {
				return err
			}
		}
		return nil
	}, l.name, key, enc(expectedID))
	if err != nil {
		return coord.Decision{}, err
	}
	if logged || won {
		l.counts.finWon.Add(1)
		l.counts.reclaimed.Add(1)
		return coord.Decision{Result: coord.ResultWon}, nil
	}
	if st == nil {
		return coord.Decision{Result: coord.ResultNotFound}, nil
	}
	if d, ok := takeLoser(*st, *id, *oc, expectedID); ok {
		return d, nil
	}
	r, err := l.readRow(ctx, key)
	if err != nil {
		return coord.Decision{}, err
	}
	if r.ok {
		if d, ok := takeLoser(r.state, r.id, r.outcome, expectedID); ok {
			return d, nil
		}
	}
	return coord.Decision{Result: coord.ResultNotFound}, nil
}

func touchLoser(st int16, runner int64, oc int32, want uint64) (coord.Decision, bool) {
	switch {
	case st == 3:
		return found(coord.ResultDuplicate, st, oc), true
	case dec(runner) != want:
		return found(coord.ResultMismatch, st, 0), true
	}
	return coord.Decision{}, false
}

// Touch is the runner's heartbeat: refreshed = max(refreshed, now) while
// the record is PENDING and the runner's. Idempotent (no request id).
func (l *Ledger) Touch(ctx context.Context, key []byte, runner, now uint64) (coord.Decision, error) {
	if !validKey(key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	var won bool
	var st *int16
	var rn *int64
	var oc *int32
	err := l.s.read(ctx, "ledger_touch", func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&won, &st, &rn, &oc); err != nil {
				return err
			}
		}
		return nil
	}, l.name, key, enc(runner), enc(now))
	if err != nil {
		return coord.Decision{}, err
	}
	if won && st != nil {
		return found(coord.ResultWon, *st, 0), nil
	}
	if st == nil {
		return coord.Decision{Result: coord.ResultNotFound}, nil
	}
	if d, ok := touchLoser(*st, *rn, *oc, runner); ok {
		return d, nil
	}
	r, err := l.readRow(ctx, key)
	if err != nil {
		return coord.Decision{}, err
	}
	if r.ok {
		if d, ok := touchLoser(r.state, r.runner, r.outcome, runner); ok {
			return d, nil
		}
		return found(coord.ResultWon, r.state, 0), nil
	}
	return coord.Decision{Result: coord.ResultNotFound}, nil
}

func checkLimit(limit int) error {
	if limit < 0 {
		return coord.ErrInvalidArgument
	}
	return nil
}

// page runs one scan statement; its last two columns are the candidates
// it examined and the records it changed. Scanned is the candidates,
// Wrapped says fewer than limit were due (a pass over the due records
// ended).
func (l *Ledger) page(ctx context.Context, name string, limit int, args ...any) (coord.Page, error) {
	if limit == 0 {
		return coord.Page{}, nil
	}
	op := newOp(ctx)
	var cand, changed int64
	v, logged, err := l.s.decide(ctx, name, op, func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&cand, &changed); err != nil {
				return err
			}
		}
		return nil
	}, append(append([]any{l.name}, args...), int64(limit))...)
	if err != nil {
		return coord.Page{}, err
	}
	if logged {
		changed, cand = v[0], v[0]
	}
	return coord.Page{Scanned: int(cand), Changed: int(changed), Wrapped: cand < int64(limit)}, nil
}

// Reconcile times out up to limit PENDING records past their deadline
// (earliest deadline first).
func (l *Ledger) Reconcile(ctx context.Context, now uint64, limit int) (coord.Page, error) {
	if err := checkLimit(limit); err != nil {
		return coord.Page{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Page{}, err
	}
	p, err := l.pageLimitLast(ctx, "ledger_reconcile", limit, enc(now))
	if err == nil {
		l.counts.timeouts.Add(uint64(p.Changed))
	}
	return p, err
}

// pageLimitLast is page for the statements whose limit follows the
// arguments (all of them: $n limit, then the request id).
func (l *Ledger) pageLimitLast(ctx context.Context, name string, limit int, args ...any) (coord.Page, error) {
	return l.page(ctx, name, limit, args...)
}

// Reclaim frees up to limit terminal records whose retention has passed.
func (l *Ledger) Reclaim(ctx context.Context, now uint64, limit int) (coord.Page, error) {
	if err := checkLimit(limit); err != nil {
		return coord.Page{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Page{}, err
	}
	p, err := l.page(ctx, "ledger_reclaim", limit, cutoff(now, l.retention))
	if err == nil {
		l.counts.reclaimed.Add(uint64(p.Changed))
	}
	return p, err
}

// FinalizeOwn finalizes up to limit PENDING records of runner (a
// restarting runner's own leftovers only); runner 0 finalizes nothing.
func (l *Ledger) FinalizeOwn(ctx context.Context, runner uint64, outcome coord.Outcome, now uint64, limit int) (coord.Page, error) {
	if err := checkLimit(limit); err != nil {
		return coord.Page{}, err
	}
	if err := checkOutcome(outcome); err != nil {
		return coord.Page{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Page{}, err
	}
	if runner == 0 {
		return coord.Page{}, nil
	}
	p, err := l.page(ctx, "ledger_finalize_own", limit, enc(runner), int32(outcome), enc(now))
	if err == nil {
		l.counts.finWon.Add(uint64(p.Changed))
	}
	return p, err
}

// SweepOrphans finalizes as orphaned up to limit PENDING records whose
// runner has been quiet for quiet (from its last heartbeat).
func (l *Ledger) SweepOrphans(ctx context.Context, now, quiet uint64, limit int) (coord.Page, error) {
	if err := checkLimit(limit); err != nil {
		return coord.Page{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Page{}, err
	}
	p, err := l.page(ctx, "ledger_sweep_orphans", limit, cutoff(now, quiet), enc(now))
	if err == nil {
		l.counts.finWon.Add(uint64(p.Changed))
	}
	return p, err
}

// Get returns the record's view (false: no record).
func (l *Ledger) Get(ctx context.Context, key []byte) (coord.Record, bool, error) {
	if !validKey(key) {
		return coord.Record{}, false, coord.ErrInvalidKey
	}
	r, err := l.readRow(ctx, key)
	if err != nil || !r.ok {
		return coord.Record{}, false, err
	}
	rec := coord.Record{State: coord.State(r.state), ID: dec(r.id), Runner: dec(r.runner),
		Deadline: decTime(r.deadline), RefreshedAt: dec(r.refreshed), FinalizedAt: decTime(r.finalized),
		Payload: dec(r.payload), Duplicates: uint64(r.duplicates), LastDuplicatePayload: dec(r.dupPayload)}
	if r.state == 3 {
		rec.Outcome = coord.Outcome(r.outcome)
	}
	return rec, true, nil
}

// Len returns how many records the ledger holds.
func (l *Ledger) Len(ctx context.Context) (int, error) {
	var n int64
	err := l.s.read(ctx, "ledger_len", func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&n); err != nil {
				return err
			}
		}
		return nil
	}, l.name)
	return int(n), err
}

// Counts returns this handle's decisions.
func (l *Ledger) Counts() (coord.Counts, error) { return l.counts.get(), nil }

// Handoffs is a go/coord HandoffStore on the database: the first claim of a
// 6-tuple wins, across every replica.
type Handoffs struct {
	l Ledger
}

var _ coord.HandoffStore = (*Handoffs)(nil)

// Handoffs returns the hand-off ledger called name with cfg (Capacity
// checked as in memory, not a bound; every replica the same Retention).
func (s *Store) Handoffs(name string, cfg coord.HandoffConfig) (*Handoffs, error) {
	if cfg.Capacity < 1 || cfg.Capacity > coord.LedgerCapacityMax {
		return nil, coord.ErrInvalidCapacity
	}
	if len(name) < 1 || len(name) > coord.KeyMax {
		return nil, coord.ErrInvalidKey
	}
	return &Handoffs{l: Ledger{s: s, name: "handoff:" + name, retention: cfg.Retention, handoff: true}}, nil
}

func validHandoff(k *coord.HandoffKey) bool {
	return len(k.ChannelID) >= 1 && len(k.ChannelID) <= coord.ChannelIDMax && len(k.TagKey) <= coord.TagKeyMax
}

// handoffKey is the 6-tuple in full: every field tells hand-offs apart.
func handoffKey(k *coord.HandoffKey) []byte {
	b := make([]byte, 0, 2+len(k.ChannelID)+len(k.TagKey)+25)
	b = append(b, byte(len(k.ChannelID)))
	b = append(b, k.ChannelID...)
	b = append(b, k.ChannelType)
	b = binary.BigEndian.AppendUint64(b, k.MessageID)
	b = binary.BigEndian.AppendUint64(b, k.TargetNodeID)
	b = append(b, byte(len(k.TagKey)))
	b = append(b, k.TagKey...)
	return binary.BigEndian.AppendUint64(b, k.TagVersion)
}

// Claim is the hand-off: the first claim of the tuple wins; a retry is
// lost while it is in flight, a duplicate once completed (while retained).
func (h *Handoffs) Claim(ctx context.Context, key coord.HandoffKey, deadline, now uint64) (coord.Decision, error) {
	if !validHandoff(&key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	d, err := h.l.insert(ctx, handoffKey(&key), 0, 0, deadline, now)
	if err == nil {
		h.l.countClaim(d)
	}
	return d, err
}

// ClaimBatch claims many tuples in one statement.
func (h *Handoffs) ClaimBatch(ctx context.Context, keys []coord.HandoffKey, deadline, now uint64, out []coord.Decision) (int, error) {
	if len(keys) == 0 || len(keys) > coord.BatchMax {
		return 0, coord.ErrInvalidArgument
	}
	for i := range keys {
		if !validHandoff(&keys[i]) {
			return 0, coord.ErrInvalidKey
		}
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, coord.ErrInvalidArgument
	}
	ks := make([][]byte, len(keys))
	for i := range keys {
		ks[i] = handoffKey(&keys[i])
	}
	n, err := h.l.place(ctx, ks, 0, 0, deadline, now, out)
	if err == nil {
		for _, d := range out {
			h.l.countClaim(d)
		}
	}
	return n, err
}

// Complete finalizes the hand-off.
func (h *Handoffs) Complete(ctx context.Context, key coord.HandoffKey, outcome coord.Outcome, now uint64) (coord.Decision, error) {
	if !validHandoff(&key) {
		return coord.Decision{}, coord.ErrInvalidKey
	}
	if err := checkOutcome(outcome); err != nil {
		return coord.Decision{}, err
	}
	if err := checkTime(now); err != nil {
		return coord.Decision{}, err
	}
	return h.l.Finalize(ctx, handoffKey(&key), outcome, 0, now)
}

// Reconcile times out hand-offs past their deadline.
func (h *Handoffs) Reconcile(ctx context.Context, now uint64, limit int) (coord.Page, error) {
	return h.l.Reconcile(ctx, now, limit)
}

// Reclaim frees completed hand-offs past retention.
func (h *Handoffs) Reclaim(ctx context.Context, now uint64, limit int) (coord.Page, error) {
	return h.l.Reclaim(ctx, now, limit)
}

// Get returns the hand-off's record.
func (h *Handoffs) Get(ctx context.Context, key coord.HandoffKey) (coord.Record, bool, error) {
	if !validHandoff(&key) {
		return coord.Record{}, false, coord.ErrInvalidKey
	}
	return h.l.Get(ctx, handoffKey(&key))
}

// Len returns how many hand-offs are held.
func (h *Handoffs) Len(ctx context.Context) (int, error) { return h.l.Len(ctx) }

// Counts returns this handle's decisions.
func (h *Handoffs) Counts() (coord.Counts, error) { return h.l.counts.get(), nil }
