//! Proposal admission QoS.
//!
//! Every proposal, config change and other control action of a Raft slot goes through one
//! bounded FIFO control queue. Admission decides, in upstream's fixed order, whether an action is
//! queued or refused: closed, fatal, not leader, config change pending, busy (the total limit),
//! throttled (the background limit, which leaves foreground a reserve).
//!
//! - [`SlotAdmission`]: one slot's lock-free controller and queue (the algorithm and its
//!   orderings are in `slot.rs`, the ring in `ring.rs`, the packed words in `state.rs`, the
//!   config change tickets in `config_change.rs`). Every admission reports its ring *position*
//!   ([`Admission`], [`BatchAdmission`], [`Drained`]), so a host may keep its own values in an
//!   array indexed by position; a config change's admission hands out a
//!   [`ConfigChangeTicket`] that the host resolves once.
//! - [`AdmissionRegistry`]: slot id → handle, for hosts that address slots by id.
//! - [`AdmissionObserver`] and [`AdmissionCounts`]: outcomes (`ok`, `busy`, `throttled`,
//!   `not_leader`) per class, proposals only, counted after the decision; summed over slots in
//!   [`crate::metrics`].
//! - [`SlotStrategy`] and its implementations: the decision strategy a slot's type names;
//!   [`Production`] unless a test asks for a degraded one (the `test-strategies` feature).
//!
//! Accounting counts items queued and not yet taken. When the consumer takes everything (as
//! upstream's worker does) that equals upstream's counters, including the background counter's
//! reset at the take; it stays exact for partial drains.

mod class;
mod config_change;
mod counters;
mod error;
mod host;
mod kind;
mod limits;
mod metrics;
mod observer;
mod registry;
mod result;
mod ring;
mod slot;
mod state;

pub use class::ProposalClass;
pub use config_change::ConfigChangeTicket;
pub use counters::AdmissionCounts;
pub use error::{texts, AdmissionError, ConfigChangeError, Rejected};
pub use host::{layout as host_layout, HostWords};
pub use kind::ControlKind;
pub use limits::{LimitsError, SlotLimits};
pub use metrics::{admission_totals, SLOT_PROPOSAL_ADMISSION, SLOT_PROPOSAL_ADMISSION_TOTAL};
pub use observer::AdmissionObserver;
pub use registry::{AdmissionRegistry, SlotHandle};
pub use result::AdmissionResult;
pub use slot::{
    Admission, BatchAdmission, Control, Drained, SlotAdmission, SlotAdmissionBuilder, SlotSnapshot,
    POSITION_MODULUS,
};
#[cfg(feature = "test-strategies")]
#[doc(hidden)]
pub use slot::{FailFirstCas, RefreshEveryAdmission, StaleStateWord};
#[doc(hidden)]
pub use slot::{Production, SlotStrategy};
