//! MQTT owner execution scopes and quiescence: upstream's `mqttsession.Owners`, lock-free where
//! it is hot.
//!
//! Every MQTT connection gets an *owner*: a registry-issued identity (node, boot, connection id,
//! generations). Work for a connection runs inside admitted operation scopes — `begin` … `done`
//! — bounded per owner and fenced by a committed lease. `quiesce` proves the owner isolated: it
//! succeeds only after the transport is closed *and* every admitted scope has finished. A
//! deadline index and sweeps close owners whose reservation, lease or close retry ran out.
//!
//! | file | concept |
//! |---|---|
//! | [`identity`] | `OwnerKey`, `Owner`, `Claim` and upstream's validation |
//! | [`options`] | `OwnerOptions`: upstream's bounds, the production preset |
//! | [`registry`] | `OwnerRegistry`, `OwnerHandle`: every operation, hot and cold |
//! | [`operation`] | `Operation`: one admitted scope; done, check, mark-uncertain, cancellation |
//! | [`host`] | the inline protocol: the words and transitions a host may run with its own atomics |
//! | `state` | the owner state word |
//! | `deadlines` | the indexed deadline heap (cold, behind the registry lock) |
//! | `counts` | the per-thread operation gauge |
//! | `uid` | the owner's UID, inline in its entry when short |
//! | [`metrics`] | `wukongim_mqtt_owner_work{state}`, `wukongim_mqtt_owner_sweep_total{event}` |
//! | [`retirement`] | `RetiredBoot`, `Isolation` |
//! | [`sweeper`] | `Sweeper`: a thread that sweeps on an interval (Rust and C++ users) |
//! | [`wait`] | `Budget`, `CancelToken`: deadlines and cancellation of blocking calls |
//!
//! # The invariants a lock-free port keeps
//!
//! 1. Begin is the linearization point against fence, expiry and stop: it is one CAS on the
//!    owner's state word, which every fence also CASes, so once a fence is in the word no
//!    begin succeeds, and every scope admitted before it is counted in the word quiesce reads.
//! 2. `operations ≤ max_operations` per owner, strictly, with no waiting (the bound is checked
//!    in the CAS that admits).
//! 3. Retirement happens exactly once, when closing ∧ transport closed ∧ no scopes ∧ not
//!    uncertain: the CAS that makes the condition true also sets `COMPLETE`, and only its
//!    caller retires — a done dropping the last scope, or the quiesce recording the close.
//! 4. Uncertain is never cleared; an uncertain owner stays held and answers `Unknown`.
//! 5. Connection ids are minted monotonically under the registry lock and never reused; an
//!    absent issued id is retired.
//! 6. The deadline index holds one entry per held owner, ordered `(deadline, id)`; a sweep
//!    reschedules the head before closing it.
//! 7. Capacity counts pending, active, closing and uncertain owners.
//!
//! Time is the registry's injected clock ([`crate::clock::Clock`], nanoseconds); a lease's end
//! is a reading of it. Waits (quiesce, close, sweep) take a [`Budget`].

pub mod error;
pub mod host;
pub mod identity;
pub mod metrics;
pub mod operation;
pub mod options;
pub mod registry;
pub mod retirement;
pub mod snapshot;
#[cfg(not(wkcore_loom))]
pub mod sweeper;
pub mod wait;

mod counts;
mod deadlines;
mod state;
mod uid;

pub use error::{CloseError, OwnerError, SweeperError};
pub use identity::{
    valid_identity, valid_identity_bytes, Claim, IdentityError, Owner, OwnerKey, BOOT_ID_MAX,
    IDENTITY_MAX,
};
pub use metrics::{declare_owner_families, owner_families, SweepEvent, WorkState};
pub use operation::{Cancellation, Operation};
pub use options::OwnerOptions;
pub use registry::{
    CloseTransport, OwnerHandle, OwnerRegistry, SweepError, SweepTurn, CLOSE_PAGE, SWEEP_LIMIT_MAX,
};
pub use retirement::{Isolation, RetiredBoot};
pub use snapshot::OwnerSnapshot;
pub use state::Stage;
#[cfg(not(wkcore_loom))]
pub use sweeper::{SweepObservation, SweepObserver, Sweeper, SweeperOptions};
pub use wait::{Budget, CancelToken};
