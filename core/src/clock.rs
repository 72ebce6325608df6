//! Monotonic time, injected.
//!
//! Deadlines and TTLs in wkcore are nanoseconds on a [`Clock`] owned by the object that uses them
//! (`docs/ARCHITECTURE.md`). The real clock reads the TSC through `quanta`, which is several times
//! cheaper than `std::time::Instant::now` (see `bench/benches/clock_now.rs` and
//! `docs/PERFORMANCE.md`); tests use [`ManualClock`] and move time by hand.

use crate::sync::{AtomicU64, Ordering};

/// A source of monotonic nanoseconds. Values only compare within one clock.
///
/// A clock may also have a cheaper *raw* scale (the real clock's is the time-stamp counter's
/// ticks, before scaling): a hot path that only asks "is it before this deadline yet?" converts
/// the deadline once with [`Clock::raw_deadline`] and then compares [`Clock::raw_now`] readings
/// against it. The default raw scale is the nanoseconds themselves.
pub trait Clock: Send + Sync {
    /// Nanoseconds since this clock's origin; never decreases.
    fn now_nanos(&self) -> u64;

    /// A reading on the clock's raw scale, taken now. Only [`Clock::raw_deadline`] values of
    /// the same clock compare with it.
    #[inline]
    fn raw_now(&self) -> u64 {
        self.now_nanos()
    }

    /// The raw form of the deadline `nanos`: a raw reading below it was taken while
    /// [`Clock::now_nanos`] read below `nanos`. It may be lower than the exact first raw
    /// reading at `nanos` (never higher), so a reading at or above it proves nothing: the
    /// caller then asks [`Clock::now_nanos`].
    #[inline]
    fn raw_deadline(&self, nanos: u64) -> u64 {
        nanos
    }

    /// True when [`Clock::raw_now`] is exactly the x86-64 time-stamp counter ([`read_tsc`]), so a
    /// hot path may read the counter inline instead of calling through a trait object.
    fn raw_is_tsc(&self) -> bool {
        false
    }
}

/// The x86-64 time-stamp counter (`RDTSC`); 0 on other targets (where no clock says
/// [`Clock::raw_is_tsc`]).
#[inline]
pub fn read_tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 CPU and has no preconditions.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// The real clock: `quanta`'s calibrated TSC (or the OS monotonic clock where no stable TSC exists).
#[derive(Clone, Debug)]
pub struct RealClock {
    clock: quanta::Clock,
    origin: u64,
    /// quanta's raw reading is the time-stamp counter ([`Clock::raw_is_tsc`]).
    tsc: bool,
}

impl RealClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        let tsc = Self::reads_tsc(&clock);
        Self { clock, origin, tsc }
    }

    /// Whether quanta reads the counter itself (it does where the TSC is invariant; elsewhere
    /// its raw reading is the OS clock's nanoseconds): three readings, each between two reads
    /// of the counter. The OS clock's nanoseconds since boot and the counter's ticks differ by
    /// far more than the few ticks between two reads, so the OS clock fails every bracket.
    fn reads_tsc(clock: &quanta::Clock) -> bool {
        cfg!(target_arch = "x86_64")
            && (0..3).all(|_| {
                let before = read_tsc();
                let raw = clock.raw();
                let after = read_tsc();
                before <= raw && raw <= after
            })
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl RealClock {
    /// Nanoseconds at the raw reading `raw`: quanta's scaling, monotonic in `raw`.
    #[inline]
    fn nanos_at(&self, raw: u64) -> u64 {
        self.clock.delta_as_nanos(self.origin, raw)
    }
}

impl Clock for RealClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.nanos_at(self.clock.raw())
    }

    /// The counter's reading, unscaled.
    #[inline]
    fn raw_now(&self) -> u64 {
        self.clock.raw()
    }

    /// The first raw reading `r` with `nanos_at(r) ≥ nanos` (exact: the scaling is monotonic),
    /// found from a linear estimate and corrected by galloping and bisection, a handful of
    /// scalings; `u64::MAX` when no reading gets there.
    fn raw_deadline(&self, nanos: u64) -> u64 {
        if nanos == 0 {
            return 0;
        }
        // The estimate: ticks per nanosecond from the scaling of 2^40 ticks.
        const SPAN: u64 = 1 << 40;
        let per_span = self.nanos_at(self.origin.saturating_add(SPAN)).max(1);
        let ticks = (u128::from(nanos) * u128::from(SPAN)).div_ceil(u128::from(per_span));
        let guess = u64::try_from(u128::from(self.origin) + ticks).unwrap_or(u64::MAX);
        // Bracket the answer: `lo` reads below `nanos`, `hi` at or above it.
        let (mut lo, mut hi);
        if self.nanos_at(guess) >= nanos {
            hi = guess;
            let mut step = 1u64;
            loop {
                let below = hi.saturating_sub(step);
                if below <= self.origin || self.nanos_at(below) < nanos {
                    lo = below.max(self.origin);
                    break;
                }
                hi = below;
                step = step.saturating_mul(2);
            }
        } else {
            lo = guess;
            let mut step = 1u64;
            loop {
                let above = lo.saturating_add(step);
                if self.nanos_at(above) >= nanos {
                    hi = above;
                    break;
                }
                if above == u64::MAX {
                    return u64::MAX;
                }
                lo = above;
                step = step.saturating_mul(2);
            }
        }
        // `nanos_at(lo) < nanos ≤ nanos_at(hi)` (at `lo == origin` the reading is 0 < nanos).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.nanos_at(mid) >= nanos {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    fn raw_is_tsc(&self) -> bool {
        self.tsc
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
    fn the_real_clocks_raw_deadline_is_the_first_reading_at_the_deadline() {
        let clock = RealClock::new();
        let now = clock.now_nanos();
        for nanos in [
            1,
            2,
            999,
            now,
            now + 1,
            now + 1_000_000_007,
            60_000_000_000,
            u64::MAX,
        ] {
            let r = clock.raw_deadline(nanos);
            if r == u64::MAX {
                assert!(clock.nanos_at(u64::MAX - 1) < nanos);
                continue;
            }
            assert!(clock.nanos_at(r) >= nanos, "at the deadline ({nanos})");
            assert!(
                r == 0 || clock.nanos_at(r - 1) < nanos,
                "one tick earlier is before it ({nanos})"
            );
        }
        assert_eq!(clock.raw_deadline(0), 0);
        let later = clock.raw_deadline(now + 60_000_000_000);
        assert!(clock.raw_now() < later, "a minute ahead is not reached yet");
    }

    #[test]
    fn a_tsc_clocks_raw_reading_is_the_counter() {
        let clock = RealClock::new();
        if clock.raw_is_tsc() {
            let before = read_tsc();
            let raw = clock.raw_now();
            assert!(before <= raw && raw <= read_tsc());
        }
    }

    #[test]
    fn the_default_raw_scale_is_nanoseconds() {
        let clock = ManualClock::new(7);
        assert_eq!(clock.raw_now(), 7);
        assert_eq!(clock.raw_deadline(9), 9);
        assert!(!clock.raw_is_tsc());
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
