//! The coordination contract of wkcore, named once, with two backends: [`memory`] (the lock-free
//! core types, one process) and [`pg`] (PostgreSQL, every decision one conditional statement on
//! the database that N replicas share). A host written against the traits of [`contract`] moves
//! from one process to N replicas by changing its constructor, and gets the same decisions.
//!
//! # The driver
//!
//! The PostgreSQL backend uses `tokio-postgres` with a `deadpool-postgres` pool. The decisions
//! are single statements whose latency is one round trip, so what matters is a pipelined,
//! asynchronous client with prepared statements, typed parameters (`bytea[]` and `bigint[]`
//! arrays for the batches) and access to the server's error fields (SQLSTATE, severity,
//! constraint name), which the read-back of an ambiguous commit and the typed errors rely on:
//! `tokio-postgres` is the maintained asynchronous client of the Rust ecosystem that has all of
//! them, without a query builder or a compile-time schema check that would need a database at
//! build time (as `sqlx`'s macros do) and without the blocking threads of the synchronous
//! `postgres` crate. `deadpool-postgres` adds only a small pool over it with a per-connection
//! statement cache and access to each pooled object's identity, which the driver uses to know
//! which backend session ran an ambiguous statement. Both build on `tokio` with few features.
//!
//! Neither the core crate nor the C ABI depends on this crate: the database is the host's
//! choice, never a cost of the core.

pub mod contract;
pub mod memory;
pub mod pg;
