//! The coordination system's C ABI: the byte-keyed ledger (`wk_ledger`: the claim ledger and
//! the pending ledger), the shard hand-off ledger (`wk_handoff_ledger`), the anchor table
//! (`wk_anchor_table`), the words (`wk_flip`, `wk_counter`, `wk_exclusive_trigger`,
//! `wk_windowed_counter`), the shared-subscription topic helpers (`wk_share_topic_build`,
//! `wk_share_topic_split`), their result enums and structs, and the coordination statuses
//! (400–499).
//!
//! Decided outcomes (won, lost, duplicate, not found, full, …) are *results*, written to a
//! `wk_coord_decision` beside `WK_STATUS_OK`: a duplicate receipt is not an error of the call.
//! A status other than OK means the call was refused for its arguments and changed nothing.

#[cfg(test)]
mod abi_tests;
pub mod anchor;
pub mod handoff;
pub mod ledger;
#[cfg(test)]
mod ledger_state_tests;
pub mod share;
#[cfg(test)]
mod share_abi_tests;
pub mod status;
pub mod types;
pub mod words;
