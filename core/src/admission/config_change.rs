//! Config change tickets: the admission of a config change hands out a ticket, and only that
//! ticket clears the slot's config-change-pending bit, once.
//!
//! Upstream keeps "a config change is pending" as the union of its queued, submitted and pending
//! config futures, all under the slot's lock; wkcore keeps one bit in the state word (so the
//! admission check is part of the admission CAS) and lets the host clear it when the change's
//! future resolves. A plain "clear the bit" call would let a late or repeated resolve clear the
//! bit of a *newer* config change. So the clear is guarded by a serial on the slot's cold line:
//!
//! - The serial is even when no config change is pending (it starts at 0). An admission whose
//!   state-word CAS set the pending bit then increments it (`fetch_add(1)`), making it odd: the
//!   new odd value is the change's ticket (1, 3, 5, …; never 0).
//! - A resolve of ticket `t` moves the serial from `t` to `t + 1` with a CAS, and only if that
//!   succeeds clears the pending bit with an RMW on the state word. A second resolve of `t`, or a
//!   resolve of an older ticket, finds another value and is refused
//!   ([`ConfigChangeError::Stale`]); so is any even value (never a ticket).
//! - Between an admission's CAS and its increment the bit is set and the serial still even: a
//!   resolve then can only name an older ticket, and is refused.
//!
//! # Orderings
//!
//! - The admitter's increment is `Release`; the resolver's successful CAS is `Acquire` and reads
//!   it (the serial is only ever written by RMWs, so any later value continues its release
//!   sequence). So the admitter's state-word CAS that set the bit happens before the resolver's
//!   clear, and the clear follows the set in the state word's modification order: it clears this
//!   change's bit, never one that a later set would overwrite back.
//! - The resolver's clear is an `AcqRel` RMW on the state word, and every admission loads the
//!   state word with `Acquire`. The next config change is admitted only from a word that shows
//!   the bit clear, so its admitter synchronizes with the clear, the resolver's CAS happens
//!   before the admitter's increment, and the increment reads `t + 1`: tickets only grow, and the
//!   serial is odd exactly while an issued ticket is unresolved.
//!
//! loom checks both (`loom-tests/tests/admission.rs`, `config_change_*`).

use std::num::NonZeroU64;

use super::error::ConfigChangeError;
use crate::sync::{AtomicU64, Ordering};

/// The ticket of an admitted config change: resolve it once with
/// [`SlotAdmission::resolve_config_change`](super::SlotAdmission::resolve_config_change) when the
/// change's future resolves (applied, failed or abandoned). Never 0; odd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigChangeTicket(NonZeroU64);

impl ConfigChangeTicket {
    /// The ticket's number (what the C ABI hands out).
    #[inline]
    pub const fn get(self) -> u64 {
        self.0.get()
    }

    /// A ticket from its number, as a host passes it back; `None` for 0. A number no slot
    /// issued is refused as stale when resolved.
    pub const fn from_raw(raw: u64) -> Option<Self> {
        match NonZeroU64::new(raw) {
            Some(n) => Some(Self(n)),
            None => None,
        }
    }
}

/// A slot's config change serial (module docs).
pub(crate) struct ConfigSerial(AtomicU64);

impl ConfigSerial {
    pub(crate) fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// The serial itself, for a host that issues tickets inline (`host.rs`).
    pub(crate) fn word(&self) -> &AtomicU64 {
        &self.0
    }

    /// The ticket of the config change whose admission CAS (sequenced before this call) set the
    /// pending bit.
    #[inline]
    pub(crate) fn issue(&self) -> ConfigChangeTicket {
        // Ordering: Release; pairs with the Acquire CAS in `redeem` (module docs).
        let previous = self.0.fetch_add(1, Ordering::Release);
        debug_assert!(
            previous % 2 == 0,
            "a config change was issued while one is pending"
        );
        ConfigChangeTicket(NonZeroU64::MIN.saturating_add(previous))
    }

    /// Consumes `ticket` if it is the pending config change's; the caller then clears the bit.
    pub(crate) fn redeem(&self, ticket: ConfigChangeTicket) -> Result<(), ConfigChangeError> {
        let t = ticket.get();
        if t % 2 == 0 {
            // Never issued: an even serial means "nothing pending", and moving it would forge
            // a ticket.
            return Err(ConfigChangeError::Stale);
        }
        // Ordering: Acquire on success; pairs with the Release `fetch_add` in `issue` (module
        // docs). Relaxed on failure: a refusal reads and publishes nothing.
        self.0
            .compare_exchange(t, t.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
            .map(|_| ())
            .map_err(|_| ConfigChangeError::Stale)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_odd_and_resolve_once() {
        let serial = ConfigSerial::new();
        let first = serial.issue();
        assert_eq!(first.get(), 1);
        assert_eq!(serial.redeem(first), Ok(()));
        assert_eq!(serial.redeem(first), Err(ConfigChangeError::Stale));
        let second = serial.issue();
        assert_eq!(second.get(), 3);
        assert_eq!(serial.redeem(first), Err(ConfigChangeError::Stale));
        for forged in [2, 4, u64::MAX] {
            let forged = ConfigChangeTicket::from_raw(forged).unwrap();
            assert_eq!(serial.redeem(forged), Err(ConfigChangeError::Stale));
        }
        assert_eq!(serial.redeem(second), Ok(()));
        assert_eq!(ConfigChangeTicket::from_raw(0), None);
    }
}
