// Package coordpg is go/coord's coordination contract on PostgreSQL: the
// ledgers (two-phase claims, pending-only finalization, reconcile,
// retention and reclaim, runner marks, compare-and-delete), hand-offs,
// anchors (with the unset-anchor first-seen transition and TryFire), flips,
// counters, exclusive triggers and windowed counters, on the database that
// every replica of a service shares, so that of N replicas exactly one wins
// each decision.
//
// Every decision is one statement (a conditional UPDATE … RETURNING, an
// INSERT … ON CONFLICT … RETURNING or a DELETE … RETURNING) whose rows say
// who won; no SELECT … FOR UPDATE, no advisory lock, no transaction held
// across host work. The schema and the statements are the files in sql/,
// embedded here; Open applies the versioned migration (idempotent, safe
// when N replicas start at once) and prepares every statement on each
// connection of its pgxpool pool.
//
// The types satisfy go/coord's interfaces (coord.LedgerStore,
// coord.HandoffStore, coord.AnchorStore, coord.FlipStore,
// coord.CounterStore, coord.TriggerStore, coord.WindowStore), so a host
// written against them moves from the in-memory backend to this one by
// changing its constructor. Time is an argument, as in memory; Store.Now
// offers the database clock for replicas whose clocks differ.
//
// A decision carries a request id (WithRequestID, or a random one), written
// by the winning statement into wkcoord_request. A statement whose answer
// was lost (the connection broke after it was sent) is resolved by that id:
// the session that sent it is ended and waited for, the id read back, and a
// statement that did not commit is run again with the same id. An ambiguous
// commit is never guessed, and never reported as a lost race.
//
// Errors: bad arguments get go/coord's errors, exactly as in memory; the
// database's are *StoreError, matching ErrUnavailable, ErrTimeout or
// ErrSchemaMismatch. docs/COORD.md ("Across replicas") has the details.
package coordpg
