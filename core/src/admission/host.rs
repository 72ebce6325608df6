//! The slot's words as a host runs them inline: the futex-shaped protocol.
//!
//! A host whose calls cost a crossing (Go through cgo) would pay more for the crossing than for
//! the admission itself. So a *hosted* slot lets the host run the admission and the take on the
//! slot's own words, with its own atomic instructions, while the library keeps what the words
//! mean: [`SlotAdmission::snapshot`], [`SlotAdmission::counters`], the metrics registry and the
//! flag calls (`set_leader`, `demote`, `close`, `fail`, `resolve_config_change`) read and write
//! the very same words. A hosted slot's ring is never used: the host keeps its values itself, in
//! storage indexed by each item's position (the old `admitted` counter its CAS replaced).
//!
//! [`HostWords`] names every word and [`layout`] every bit. The transitions a host runs are the
//! slot's own (`slot.rs`), in the same orders:
//!
//! - **admit** `n` items of one kind and class: load `state`, then `released_view` (and
//!   `released_background_view` for a background proposal); run upstream's checks on the word
//!   (closed, fatal, not leader for proposals and config changes, config change pending for a
//!   config change, the total limit, the background limit); when the view says full, refresh it
//!   (load `released`, raise `released_view` to it with a max RMW; likewise for background);
//!   CAS `state` forward (`admitted += n`, `admitted_background += n` for background proposals,
//!   the pending bit for a config change). A non-proposal adds `n` to `admitted_other` before its
//!   CAS and takes back what it did not get after it, then adds what it got to
//!   `committed_other`; a config change issues its ticket from `config_serial` (`fetch_add(1)`,
//!   the odd result + 1 … see `config_change.rs`). A refused proposal adds 1 to its
//!   `outcomes[class][result]` cell. Admissions themselves count nothing: the state word does.
//! - **take**: one consumer at a time (the host's own gate) reads its items in position order,
//!   then stores `released_other`, `released_background` and `released` (cumulative, never
//!   wrapped), in that order.
//! - **flags**: leader, closed and pending-config-change bits are RMWs on `state`; `fail` records
//!   `fatal_code` (first wins, `layout::FATAL_PRESENT | code`) before it sets the fatal bit.
//!
//! The high bits of `state` ([`layout::HOST_SHIFT`] and up) are the host's: the library never
//! sets or reads them (its flag RMWs leave them as they are), so a host keeps there what its
//! decision must be atomic with — the Go host keeps its value storage's capacity and its
//! handle-closed bit there.
//!
//! # Orderings
//!
//! Those of `slot.rs`, which a host must keep: the admission CAS is `Release` on success and
//! every load of `state` `Acquire`; the view's loads are `Acquire` and its refresh `AcqRel`; the
//! consumer's stores of the released counters are `Release`; the config serial as in
//! `config_change.rs`. Sequentially consistent operations (Go's `sync/atomic`) are at least
//! these.

use super::slot::SlotAdmission;
use super::state::COUNT_BITS;
use crate::sync::HostU64 as AtomicU64;

/// The bits of a slot's words, as a host runs them (module docs).
pub mod layout {
    use super::super::state::{StateWord, COUNT_BITS, COUNT_MODULUS};

    /// The layout's version: a host built for another one must refuse the slot.
    pub const VERSION: u32 = 1;
    /// Width of the admitted counters (positions count modulo `2^COUNT_BITS`).
    pub const COUNT_BITS_: u32 = COUNT_BITS;
    /// `2^COUNT_BITS - 1`: the mask of one counter.
    pub const COUNT_MASK: u64 = COUNT_MODULUS - 1;
    /// Shift of the background proposals' admitted counter in `state`.
    pub const BACKGROUND_SHIFT: u32 = COUNT_BITS;
    /// The leader bit of `state`.
    pub const LEADER: u64 = StateWord::LEADER_BIT;
    /// The closed bit of `state`.
    pub const CLOSED: u64 = StateWord::CLOSED_BIT;
    /// The fatal bit of `state`.
    pub const FATAL: u64 = StateWord::FATAL_BIT;
    /// The config-change-pending bit of `state`.
    pub const CONFIG_CHANGE_PENDING: u64 = StateWord::CONFIG_CHANGE_PENDING_BIT;
    /// The first of the host's bits of `state` (58 to 63).
    pub const HOST_SHIFT: u32 = 2 * COUNT_BITS + 4;
    /// Set in `fatal_code` with the code by the first `fail`.
    pub const FATAL_PRESENT: u64 = super::super::slot::FATAL_PRESENT;

    const _: () = assert!(CONFIG_CHANGE_PENDING << 1 == 1 << HOST_SHIFT);
    const _: () = assert!(LEADER == 1 << 54 && HOST_SHIFT == 58);
}

/// References to a hosted slot's words (module docs). They live as long as the slot's shared
/// core, which the slot (and a metrics registry that counts it) holds.
#[derive(Clone, Copy)]
pub struct HostWords<'a> {
    /// The producers' state word: admitted counters and flags.
    pub state: &'a AtomicU64,
    /// The producers' view of `released`.
    pub released_view: &'a AtomicU64,
    /// The producers' view of `released_background`.
    pub released_background_view: &'a AtomicU64,
    /// Items taken, cumulative.
    pub released: &'a AtomicU64,
    /// Background proposals taken, cumulative.
    pub released_background: &'a AtomicU64,
    /// Items of other kinds than proposals taken, cumulative.
    pub released_other: &'a AtomicU64,
    /// Non-proposal items admitted or being admitted (raised before the CAS).
    pub admitted_other: &'a AtomicU64,
    /// Non-proposal items admitted (raised after the CAS).
    pub committed_other: &'a AtomicU64,
    /// The config change serial (odd while a ticket is unresolved).
    pub config_serial: &'a AtomicU64,
    /// The fatal record: `layout::FATAL_PRESENT | code` once failed.
    pub fatal_code: &'a AtomicU64,
    /// Refused proposals by `[class][result]` (foreground 0, background 1; ok 0, busy 1,
    /// throttled 2, not leader 3; the `ok` cells are the library's).
    pub outcomes: &'a [[AtomicU64; 4]; 2],
}

const _: () = assert!(COUNT_BITS == layout::COUNT_BITS_);

impl<T, S: super::slot::SlotStrategy> SlotAdmission<T, S> {
    /// The slot's words for a host that runs them inline (module docs), or `None` when the slot
    /// was not built hosted ([`super::SlotAdmissionBuilder::hosted`]): a slot that admits through
    /// its own ring must not also be driven by a host.
    pub fn host_words(&self) -> Option<HostWords<'_>> {
        self.is_hosted().then(|| self.core_words())
    }
}
