//! The PostgreSQL backend: the contract on the database that every replica of a service shares,
//! so that of N replicas exactly one wins each decision.
//!
//! Every decision is one statement (a conditional `UPDATE … RETURNING`, an `INSERT … ON CONFLICT
//! … RETURNING` or a `DELETE … RETURNING`) whose rows say who won; no `SELECT … FOR UPDATE`, no
//! advisory lock, no transaction held across host work. The schema and the statements are the
//! SQL files of the Go driver (`go/coordpg/sql/`), included at build time, so both drivers run
//! the same text and share the same rows: a Rust replica and a Go replica on one database decide
//! together. [`Store::open`] applies the versioned migration (idempotent, safe when N replicas
//! start at once); each connection of the pool prepares a statement at its first use.
//!
//! Time is an argument, as in memory; [`Store::now`] offers the database clock for replicas
//! whose clocks differ.
//!
//! A decision carries a request id ([`with_request_id`], or a random one), written by the winning
//! statement into `wkcoord_request` in the same statement. A statement whose answer was lost
//! (the connection broke after it was sent, or the call's time ran out while it ran) is resolved
//! by that id: the session that ran it is ended and waited for, the id read back, and a
//! statement that did not commit is run again with the same id. An ambiguous commit is never
//! guessed, and never reported as a lost race: when it cannot be resolved in time the error is
//! [`StoreErrorKind::Unavailable`](crate::contract::StoreErrorKind) with `uncertain` set.

mod ledger;
mod sql;
mod store;
mod words;

pub use ledger::{handoff_key_bytes, PgHandoffs, PgLedger};
pub use store::{with_request_id, Options, PlanCache, StatementPlans, Store, StoreStats};
pub use words::{PgAnchors, PgCounters, PgFlips, PgTriggers, PgWindows};
