package coordpg

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The store's errors: the database could not decide. None of them is a lost
// race (a lost race is a Decision, as in memory). Match with errors.Is.
var (
	// ErrUnavailable: the database could not be reached, or the connection
	// broke and the decision could not be resolved before the resolve
	// timeout (StoreError.Uncertain then says it may have committed, and
	// StoreError.RequestID is what Store.Resolved asks about later).
	ErrUnavailable = errors.New("coordpg: store unavailable")
	// ErrTimeout: the caller's context ended before the statement was
	// decided; nothing was decided for it (an ambiguous commit is resolved
	// first: a statement that did commit returns its decision, not this).
	ErrTimeout = errors.New("coordpg: store timeout")
	// ErrSchemaMismatch: the database's schema is not the one this driver
	// knows (a newer version, or a table or statement missing).
	ErrSchemaMismatch = errors.New("coordpg: schema mismatch")
)

// StoreError is every error the store reports for the database (never for
// an argument: those are go/coord's). It matches its Kind (errors.Is) and
// unwraps to the driver's error.
type StoreError struct {
	// Kind is ErrUnavailable, ErrTimeout or ErrSchemaMismatch.
	Kind error
	// Statement is the statement's name (sql/*.sql).
	Statement string
	// RequestID is the decision's request id (0 for a read).
	RequestID uint64
	// Uncertain: the statement was sent and its commit could not be
	// resolved; it may have won. Ask Store.Resolved(ctx, RequestID) later.
	Uncertain bool
	// Err is the underlying error.
	Err error
}

func (e *StoreError) Error() string {
	s := e.Kind.Error() + ": " + e.Statement
	if e.Uncertain {
		s += " (uncertain: request " + strconv.FormatUint(e.RequestID, 10) + " may have committed)"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is the error's Kind.
func (e *StoreError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }

type requestKey struct{}

// WithRequestID returns a context whose next decision carries id as its
// request id (nonzero; unique per decision across every replica, e.g. the
// host's own request id). Without it each decision draws a random one. A
// request id is what an ambiguous commit is resolved by, and what
// Store.Resolved answers about.
func WithRequestID(ctx context.Context, id uint64) context.Context {
	return context.WithValue(ctx, requestKey{}, id)
}

func requestID(ctx context.Context) int64 {
	if id, ok := ctx.Value(requestKey{}).(uint64); ok && id != 0 {
		return int64(id)
	}
	var b [8]byte
	for {
		_, _ = crand.Read(b[:])
		if v := binary.LittleEndian.Uint64(b[:]); v != 0 {
			return int64(v)
		}
	}
}

// Options tune a Store; the zero value is the default.
type Options struct {
	// ResolveTimeout bounds how long an ambiguous commit is resolved for
	// (default 10 s), from the moment it is found, whatever the caller's
	// context: an unknown commit is not given up because the caller's
	// context ended.
	ResolveTimeout time.Duration
	// Attempts bounds how often a statement that was not sent (or that the
	// database rolled back: a serialization failure, a deadlock) is retried
	// (default 4).
	Attempts int
}

// Store is a PostgreSQL coordination store: the ledgers, anchor tables and
// words of go/coord's contract on one database shared by every replica.
// Safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	app     string
	resolve time.Duration
	tries   int
}

// Open connects to dsn (a libpq URL or key=value string), applies the
// migrations (idempotent; safe when N replicas start at once) and prepares
// every statement on each connection.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg, opts)
}

// OpenConfig is Open with a pool configuration of the host's. It sets the
// pool's application_name (to find the session of an ambiguous statement)
// and plan_cache_mode (force_custom_plan: each run of a statement is planned
// with its own values, docs/COORD.md "Plans"), and adds the statements'
// preparation to AfterConnect.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, opts Options) (*Store, error) {
	var b [6]byte
	_, _ = crand.Read(b[:])
	s := &Store{app: "wkcoord-" + hex.EncodeToString(b[:]), resolve: opts.ResolveTimeout, tries: opts.Attempts}
	if s.resolve <= 0 {
		s.resolve = 10 * time.Second
	}
	if s.tries <= 0 {
		s.tries = 4
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = s.app
	// Every run of a statement is planned with its own values and the
	// tables as they are: a generic plan cached while the table was empty
	// (a replica that starts first) would read a large ledger through a
	// partial index or a scan (docs/COORD.md, "Plans"). The host's other
	// runtime parameters (its options included) stay as it set them.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	prev := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if prev != nil {
			if err := prev(ctx, c); err != nil {
				return err
			}
		}
		for _, n := range statementNames() {
			if _, err := c.Prepare(ctx, n, statements[n]); err != nil {
				return fmt.Errorf("coordpg: prepare %s: %w", n, err)
			}
		}
		return nil
	}
	if err := migrate(ctx, cfg.ConnConfig); err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, storeErr("connect", 0, false, err)
	}
	s.pool = pool
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// migrate brings the schema to schemaVersion in one transaction on its own
// connection: the version row's table is created if absent and locked, the
// version read, the missing migrations applied, the version written. N
// replicas starting at once serialize on the migration lock the first
// statement takes (sql/schema_version.sql); a deadlock or serialization
// failure, or a catalog conflict from a migrator that took no lock, is
// retried.
func migrate(ctx context.Context, cc *pgx.ConnConfig) error {
	c, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return storeErr("migrate", 0, false, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	for attempt := 0; ; attempt++ {
		err = migrateOnce(ctx, c)
		var pe *pgconn.PgError
		if err != nil && attempt < 8 && errors.As(err, &pe) &&
			(pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710" || pe.Code == "40P01" ||
				pe.Code == "40001") {
			continue
		}
		if err != nil {
			if errors.Is(err, ErrSchemaMismatch) {
				return err
			}
			return storeErr("migrate", 0, false, err)
		}
		return nil
	}
}

func migrateOnce(ctx context.Context, c *pgx.Conn) error {
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, readSQL("sql/schema_version.sql")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE wkcoord_schema IN EXCLUSIVE MODE"); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, "SELECT version FROM wkcoord_schema WHERE id = 1").Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			v = 0
		} else if err != nil {
			return err
		}
		if v > schemaVersion {
			return &StoreError{Kind: ErrSchemaMismatch, Statement: "migrate",
				Err: fmt.Errorf("the database's schema is version %d, this driver knows %d", v, schemaVersion)}
		}
		for ; v < schemaVersion; v++ {
			if _, err := tx.Exec(ctx, readSQL(migrations[v])); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "INSERT INTO wkcoord_schema (id, version) VALUES (1, $1) "+
			"ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version", schemaVersion)
		return err
	})
}

func storeErr(stmt string, op int64, uncertain bool, err error) error {
	kind := ErrUnavailable
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		kind = ErrTimeout
	case errors.As(err, &pe) && pe.Code == "57014":
		kind = ErrTimeout
	case errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "42703" || pe.Code == "42883" ||
		pe.Code == "26000" || pe.Code == "42P02"):
		kind = ErrSchemaMismatch
	}
	if uncertain {
		kind = ErrUnavailable
	}
	return &StoreError{Kind: kind, Statement: stmt, RequestID: uint64(op), Uncertain: uncertain, Err: err}
}

// definite reports whether err says the statement did not commit: the
// server answered it with an error (the transaction rolled back), or it was
// never sent.
func definite(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "ERROR"
	}
	return pgconn.SafeToRetry(err)
}

// committed reports whether err is the request table's refusal of a
// request id it holds: the decision with that id committed earlier.
func committed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "wkcoord_request_pkey"
}

// retriable reports whether a definite failure may simply be run again.
func retriable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// read runs a read (or an idempotent statement); scan consumes the rows and
// may be called again on a retry.
func (s *Store) read(ctx context.Context, name string, scan func(pgx.Rows) error, args ...any) error {
	var err error
	for attempt := 0; attempt < s.tries; attempt++ {
		err = s.once(ctx, name, args, scan, nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		if !retriable(err) && definite(err) {
			break
		}
	}
	if err != nil {
		return storeErr(name, 0, false, err)
	}
	return nil
}

// once runs the statement on one connection; pid (when not nil) receives
// the backend's process id before the statement is sent.
func (s *Store) once(ctx context.Context, name string, args []any, scan func(pgx.Rows) error, pid *uint32) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if pid != nil {
		*pid = conn.Conn().PgConn().PID()
	}
	rows, err := conn.Query(ctx, name, args...)
	if err != nil {
		return err
	}
	err = scan(rows)
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	return err
}

// decide runs the decision statement name, whose last argument is its
// request id op. It returns (nil, false, nil) when scan consumed the
// statement's answer, or (v, true, nil) when the statement's commit was
// unknown and the request table says it won with v. The commit of a
// statement that was sent and got no answer is never guessed: the session
// that sent it is ended (if it still runs) and waited for, then the
// request table read; a statement that did not commit is run again with the
// same request id.
func (s *Store) decide(ctx context.Context, name string, op int64, scan func(pgx.Rows) error, args ...any) ([]int64, bool, error) {
	args = append(args, op)
	var rctx context.Context
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	run := ctx
	for attempt := 0; ; attempt++ {
		var pid uint32
		err := s.once(run, name, args, scan, &pid)
		if err == nil {
			return nil, false, nil
		}
		if committed(err) {
			// A run of a request id that already won (a host retrying after
			// an uncertain error): the request table says what it decided.
			c, cf := context.WithTimeout(context.WithoutCancel(ctx), s.resolve)
			v, won, rerr := s.resolveOp(c, 0, op)
			cf()
			if rerr == nil && won {
				return v, true, nil
			}
			return nil, false, storeErr(name, op, false, errors.Join(err, rerr))
		}
		if definite(err) {
			if retriable(err) && attempt < s.tries && run.Err() == nil {
				continue
			}
			return nil, false, storeErr(name, op, false, err)
		}
		// Sent, no answer: resolve it, past the caller's context if need be.
		if rctx == nil {
			c, cf := context.WithTimeout(context.WithoutCancel(ctx), s.resolve)
			rctx, stop = c, cf
		}
		v, won, rerr := s.resolveOp(rctx, pid, op)
		if rerr != nil {
			return nil, false, storeErr(name, op, true, errors.Join(err, rerr))
		}
		if won {
			return v, true, nil
		}
		// It did not commit: nothing was decided. Run it again while the
		// caller still wants it (the resolve timeout bounds the retries).
		if ctx.Err() != nil {
			return nil, false, storeErr(name, op, false, ctx.Err())
		}
		if attempt >= s.tries {
			return nil, false, storeErr(name, op, false, err)
		}
		run = rctx
	}
}

// resolveOp ends the session pid (if it still runs), waits until it is
// gone, and reads the request table for op. It retries while the database
// is unreachable, until ctx ends.
func (s *Store) resolveOp(ctx context.Context, pid uint32, op int64) ([]int64, bool, error) {
	backoff := 5 * time.Millisecond
	for {
		v, won, err := s.resolveOnce(ctx, pid, op)
		if err == nil {
			return v, won, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, err
		case <-t.C:
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func (s *Store) resolveOnce(ctx context.Context, pid uint32, op int64) ([]int64, bool, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer conn.Release()
	if pid != 0 && pid != conn.Conn().PgConn().PID() {
		if _, err := conn.Exec(ctx, "session_end", int32(pid), s.app); err != nil {
			return nil, false, err
		}
		for i := 0; ; i++ {
			var alive bool
			if err := conn.QueryRow(ctx, "session_alive", int32(pid), s.app).Scan(&alive); err != nil {
				return nil, false, err
			}
			if !alive {
				break
			}
			if i > 1000 {
				return nil, false, errors.New("coordpg: the ambiguous statement's session does not end")
			}
			t := time.NewTimer(2 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, false, ctx.Err()
			case <-t.C:
			}
		}
	}
	var v []int64
	err = conn.QueryRow(ctx, "request_get", op).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Resolved reports whether the decision with request id id won (it is in
// the request table; false once pruned).
func (s *Store) Resolved(ctx context.Context, id uint64) (bool, error) {
	found := false
	err := s.read(ctx, "request_get", func(r pgx.Rows) error {
		found = false
		for r.Next() {
			found = true
		}
		return nil
	}, int64(id))
	return found, err
}

// PruneRequests forgets the request ids of decisions older than age (by the
// database clock) and returns how many it forgot. Host-driven, like
// Reclaim: choose an age far longer than any retry (an hour, say).
func (s *Store) PruneRequests(ctx context.Context, age time.Duration) (int, error) {
	n := int64(0)
	err := s.read(ctx, "request_prune", func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&n); err != nil {
				return err
			}
		}
		return nil
	}, age.Seconds())
	return int(n), err
}

// Now returns the database's clock in milliseconds since 1970: the one
// clock every replica reads, for hosts whose replicas' clocks differ (pass
// it as now). It costs a round trip; a host whose clocks agree passes its
// own time.
func (s *Store) Now(ctx context.Context) (uint64, error) {
	var ms int64
	err := s.read(ctx, "db_now", func(r pgx.Rows) error {
		for r.Next() {
			if err := r.Scan(&ms); err != nil {
				return err
			}
		}
		return nil
	})
	return uint64(ms), err
}

// PlanCache is what the plan cache of one pooled connection holds for the
// store's statements: a diagnostic, to check on a host's own server that the
// decisions are planned with their own parameter values (docs/COORD.md,
// "Plans").
type PlanCache struct {
	// Mode is the connection's plan_cache_mode.
	Mode string
	// Statements are the store's statements prepared on the connection,
	// sorted by name.
	Statements []StatementPlans
}

// StatementPlans counts the plans one prepared statement ran with on one
// connection (PostgreSQL's pg_prepared_statements).
type StatementPlans struct {
	// Name is the statement's name (sql/*.sql).
	Name string
	// Params is how many parameters it takes.
	Params int
	// GenericPlans is how often it ran with the connection's cached generic
	// plan (one plan for every parameter value); CustomPlans how often with
	// a plan made for that run's values.
	GenericPlans, CustomPlans int64
}

// PlanCache reads the plan cache of one connection of the pool (with a pool
// of one connection: the connection every decision runs on). It needs
// PostgreSQL 14 or later.
func (s *Store) PlanCache(ctx context.Context) (PlanCache, error) {
	var pc PlanCache
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return pc, storeErr("plan_cache", 0, false, err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&pc.Mode); err != nil {
		return pc, storeErr("plan_cache", 0, false, err)
	}
	rows, err := conn.Query(ctx, "SELECT name, cardinality(parameter_types), generic_plans, custom_plans "+
		"FROM pg_prepared_statements ORDER BY name")
	if err != nil {
		return pc, storeErr("plan_cache", 0, false, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p StatementPlans
		var n int32
		if err := rows.Scan(&p.Name, &n, &p.GenericPlans, &p.CustomPlans); err != nil {
			return pc, storeErr("plan_cache", 0, false, err)
		}
		if _, ours := statements[p.Name]; ours {
			p.Params = int(n)
			pc.Statements = append(pc.Statements, p)
		}
	}
	if err := rows.Err(); err != nil {
		return pc, storeErr("plan_cache", 0, false, err)
	}
	return pc, nil
}

// enc is the order-preserving encoding of a u64 as a bigint.
func enc(u uint64) int64 { return int64(u ^ 1<<63) }

// dec inverts enc.
func dec(i int64) uint64 { return uint64(i) ^ 1<<63 }

// encTime encodes t, TimeUnset (never, unset) as NULL.
func encTime(t uint64) *int64 {
	if t == unset {
		return nil
	}
	v := enc(t)
	return &v
}

func decTime(p *int64) uint64 {
	if p == nil {
		return unset
	}
	return dec(*p)
}

// cutoff is now - d, NULL when now < d (nothing is old enough).
func cutoff(now, d uint64) *int64 {
	if now < d {
		return nil
	}
	v := enc(now - d)
	return &v
}
