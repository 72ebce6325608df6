//! [`OwnerOptions`]: upstream's bounds, no hidden defaults, and the production preset.

use std::sync::Arc;
use std::time::Duration;

use super::error::OwnerError;
use super::identity::{valid_identity, BOOT_ID_MAX};
use crate::clock::{Clock, RealClock};

/// The most owners a registry may hold.
pub const CAPACITY_MAX: u32 = 1_000_000;
/// The most operations one owner may have admitted at once.
pub const MAX_OPERATIONS_MAX: u32 = 1024;
/// The longest pending timeout, lease and close retry: one minute.
pub const DURATION_MAX: Duration = Duration::from_secs(60);

/// A registry's configuration. Every field is required (upstream's `OwnerOptions` has no
/// defaults but the clock); [`OwnerOptions::production`] is upstream's production wiring.
#[derive(Clone)]
pub struct OwnerOptions {
    /// This node (non-zero); every issued owner carries it.
    pub node_id: u64,
    /// This process's boot (1..=128 bytes); every issued owner carries it.
    pub boot_id: Arc<str>,
    /// The most owners held at once, pending, active, closing and uncertain alike (1..=1 000 000).
    pub capacity: u32,
    /// The most admitted operations per owner (1..=1024); a begin beyond it is refused, never
    /// queued.
    pub max_operations: u32,
    /// How long a reservation may stay pending before it is fenced (0 < t ≤ 1 min).
    pub pending_timeout: Duration,
    /// The longest lease an activation or renewal may install (0 < t ≤ 1 min).
    pub max_lease: Duration,
    /// How long after a fence or a failed close an owner is due again (0 < t ≤ 1 min).
    pub close_retry: Duration,
    /// The monotonic clock every deadline and lease is read on.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for OwnerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerOptions")
            .field("node_id", &self.node_id)
            .field("boot_id", &self.boot_id)
            .field("capacity", &self.capacity)
            .field("max_operations", &self.max_operations)
            .field("pending_timeout", &self.pending_timeout)
            .field("max_lease", &self.max_lease)
            .field("close_retry", &self.close_retry)
            .finish_non_exhaustive()
    }
}

impl OwnerOptions {
    /// Upstream's production wiring: MaxOperations 8, PendingTimeout 5 s, MaxLease 1 min,
    /// CloseRetry 250 ms, the real clock; `capacity` is the node's MQTT connection limit.
    pub fn production(node_id: u64, boot_id: impl Into<Arc<str>>, capacity: u32) -> Self {
        Self {
            node_id,
            boot_id: boot_id.into(),
            capacity,
            max_operations: 8,
            pending_timeout: Duration::from_secs(5),
            max_lease: Duration::from_secs(60),
            close_retry: Duration::from_millis(250),
            clock: Arc::new(RealClock::new()),
        }
    }

    /// Upstream's `NewOwners` checks, in its order: node id, boot id, capacity, max operations,
    /// the three durations.
    pub fn validate(&self) -> Result<(), OwnerError> {
        let in_range = |d: Duration| !d.is_zero() && d <= DURATION_MAX;
        let ok = self.node_id != 0
            && valid_identity(&self.boot_id, BOOT_ID_MAX)
            && (1..=CAPACITY_MAX).contains(&self.capacity)
            && (1..=MAX_OPERATIONS_MAX).contains(&self.max_operations)
            && in_range(self.pending_timeout)
            && in_range(self.max_lease)
            && in_range(self.close_retry);
        if ok {
            Ok(())
        } else {
            Err(OwnerError::Invalid)
        }
    }
}

/// `d` in nanoseconds (every validated duration fits: at most one minute).
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn production_preset_is_upstreams_wiring_and_valid() {
        let o = OwnerOptions::production(3, "boot", 10);
        assert_eq!(o.max_operations, 8);
        assert_eq!(o.pending_timeout, Duration::from_secs(5));
        assert_eq!(o.max_lease, Duration::from_secs(60));
        assert_eq!(o.close_retry, Duration::from_millis(250));
        assert_eq!(o.validate(), Ok(()));
    }

    #[test]
    fn every_bound_is_checked() {
        let base = OwnerOptions::production(3, "boot", 10);
        let bad: [fn(&mut OwnerOptions); 11] = [
            |o| o.node_id = 0,
            |o| o.boot_id = "".into(),
            |o| o.boot_id = " ".into(),
            |o| o.boot_id = "x".repeat(129).into(),
            |o| o.capacity = 0,
            |o| o.capacity = CAPACITY_MAX + 1,
            |o| o.max_operations = 0,
            |o| o.max_operations = 1025,
            |o| o.pending_timeout = Duration::ZERO,
            |o| o.max_lease = Duration::from_secs(61),
            |o| o.close_retry = Duration::ZERO,
        ];
        for (i, change) in bad.iter().enumerate() {
            let mut o = base.clone();
            change(&mut o);
            assert_eq!(o.validate(), Err(OwnerError::Invalid), "case {i}");
        }
        let mut edge = base;
        edge.capacity = CAPACITY_MAX;
        edge.max_operations = MAX_OPERATIONS_MAX;
        edge.pending_timeout = DURATION_MAX;
        edge.boot_id = "x".repeat(128).into();
        assert_eq!(edge.validate(), Ok(()));
    }
}
