//! The MQTT owner registry's C ABI (`wkcore::owner`): the registry (`wk_owner_registry`), owner
//! handles (`wk_owner`), operation scopes kept in host memory (`wk_owner_op`), cancellation
//! tokens (`wk_cancel_token`), the owner RPC frame codec, and the owner statuses (200–299).
//!
//! | file | what |
//! |---|---|
//! | `status` | `WK_STATUS_OWNER_*`, the range, the `OwnerError` mapping |
//! | `types` | constants, the structs, string and identity conversion |
//! | `cancel` | `wk_cancel_token` and the `Budget` of a blocking call |
//! | `registry` | `wk_owner_registry`: new, reserve, by-identity calls, sweep, close, retirement |
//! | `handle` | `wk_owner`, the close callback, `wk_owner_op` |
//! | `host` | the inline protocol: `wk_owner_words`, `wk_owner_registry_words`, the `WK_OWNER_WORD_*` layout, `wk_owner_scope_end` |
//! | `frame` | `wk_owner_frame_*`, `wk_owner_rpc_*` |
//!
//! # Time and waits
//!
//! Leases and deadlines are nanoseconds on the registry's own clock (`wk_owner_registry_now`).
//! Blocking calls (quiesce, close, sweep) take `timeout_ns` (`WK_OWNER_WAIT_FOREVER`: no
//! deadline; this one is measured on the process's monotonic clock, not the registry's) and an
//! optional `wk_cancel_token`. A wait that runs out returns `WK_STATUS_OWNER_DEADLINE_EXCEEDED`
//! (which *is* `WK_STATUS_TIMEOUT`) or `WK_STATUS_OWNER_CANCELED` and leaves a close attempt in
//! flight as it is.
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with any other. `wk_owner_begin` and
//! `wk_owner_op_done` are lock-free and allocate nothing. A close callback runs synchronously
//! on the thread that called quiesce, sweep or close, outside every lock.

#[cfg(test)]
mod abi_tests;
pub mod cancel;
pub mod frame;
pub mod handle;
pub mod host;
pub mod registry;
pub mod status;
pub mod types;
