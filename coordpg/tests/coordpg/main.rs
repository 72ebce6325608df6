//! The tests of the contract's two backends, in one binary so that they share one PostgreSQL
//! cluster (see `common`).

mod ambiguous;
mod common;
mod concurrent;
mod differential;
mod errors;
mod plans;
mod scenarios;
