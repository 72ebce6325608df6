//! Monotonic time, injected.
//!
//! Deadlines and TTLs in wkcore are nanoseconds on a [`Clock`] owned by the object that uses them
//! (`docs/ARCHITECTURE.md`). The real clock reads the TSC through `quanta`, which is several times
//! cheaper than `std::time::Instant::now` (see `bench/benches/clock_now.rs` and
//! `docs/PERFORMANCE.md`); tests use [`ManualClock`] and move time by hand.

use crate::sync::{AtomicU64, Ordering};

/// A source of monotonic nanoseconds. Values only compare within one clock.
pub trait Clock: Send + Sync {
    /// Nanoseconds since this clock's origin; never decreases.
    fn now_nanos(&self) -> u64;
}

/// The real clock: `quanta`'s calibrated TSC (or the OS monotonic clock where no stable TSC exists).
#[derive(Clone, Debug)]
pub struct RealClock {
    clock: quanta::Clock,
    origin: u64,
}

impl RealClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        Self { clock, origin }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RealClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }
}

/// A clock that moves only when told to; for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start` nanoseconds.
    pub fn new(start: u64) -> Self {
        Self {
            nanos: AtomicU64::new(start),
        }
    }

    /// Moves the clock forward by `nanos`.
    pub fn advance(&self, nanos: u64) {
        // Ordering: Relaxed; the clock publishes no other data, readers need only the value.
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Sets the clock; a value below the current one is ignored (the clock stays monotonic).
    pub fn set(&self, nanos: u64) {
        // Ordering: Relaxed, as in `advance`.
        self.nanos.fetch_max(nanos, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> u64 {
        // Ordering: Relaxed, as in `advance`.
        self.nanos.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn real_clock_is_monotonic() {
        let clock = RealClock::new();
        let mut last = clock.now_nanos();
        for _ in 0..10_000 {
            let now = clock.now_nanos();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn manual_clock_moves_only_forward() {
        let clock = ManualClock::new(10);
        clock.advance(5);
        assert_eq!(clock.now_nanos(), 15);
        clock.set(12);
        assert_eq!(clock.now_nanos(), 15);
        clock.set(40);
        assert_eq!(clock.now_nanos(), 40);
    }
}
