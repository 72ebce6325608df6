//! [`WindowedCounter`]: increment-and-expire in one word (a login lock-out counts failures).

use crate::sync::{AtomicU64, Ordering};
use crate::word::{disjoint, Field};

/// The largest time a [`WindowedCounter`] accepts (`2^44 - 1`: in milliseconds, beyond the
/// year 2500).
pub const WINDOW_TIME_MAX: u64 = (1 << 44) - 1;
/// The largest count; increments beyond it saturate.
pub const WINDOW_COUNT_MAX: u32 = (1 << 20) - 1;

const END: Field = Field::new(20, 44);
const COUNT: Field = Field::new(0, 20);
const _: () = assert!(disjoint(&[END, COUNT]));
const _: () = assert!(END.max() == WINDOW_TIME_MAX && COUNT.max() == WINDOW_COUNT_MAX as u64);

/// Why an increment was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// `now + window` is beyond [`WINDOW_TIME_MAX`], or the window is 0.
    TimeOutOfRange,
}

/// A count that expires a window after its first increment, in one word: `window end (44) |
/// count (20)`.
///
/// [`WindowedCounter::increment`] starts a new window (count 1, ending `now + window`) when the
/// current one has ended, and otherwise adds one; it returns the new count, so "the fifth failure
/// locks the account" is decided by the increment's own result, never by a separate read. Expiry
/// is judged against the time argument only: [`WindowedCounter::count`] after the window is 0.
///
/// # Orderings
///
/// The increment's CAS is `AcqRel` and loads are `Acquire`, as every word of this module (module
/// docs): a host acting on "the fifth failure" sees what the earlier incrementers did first.
#[derive(Debug, Default)]
pub struct WindowedCounter {
    word: AtomicU64,
}

impl WindowedCounter {
    /// A counter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one at `now` in a window of `window` (same unit) and returns the new count.
    pub fn increment(&self, now: u64, window: u64) -> Result<u32, WindowError> {
        if window == 0
            || now
                .checked_add(window)
                .is_none_or(|end| end > WINDOW_TIME_MAX)
        {
            return Err(WindowError::TimeOutOfRange);
        }
        // Ordering: Acquire; see the type's docs.
        let mut word = self.word.load(Ordering::Acquire);
        loop {
            let (next, count) = step(word, now, window);
            // Ordering: AcqRel on success, Acquire on failure (the type's docs).
            match self
                .word
                .compare_exchange_weak(word, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(count),
                Err(actual) => word = actual,
            }
        }
    }

    /// The count at `now`: 0 once the window has ended.
    pub fn count(&self, now: u64) -> u32 {
        // Ordering: Acquire; see the type's docs.
        let word = self.word.load(Ordering::Acquire);
        if now >= END.get(word) {
            0
        } else {
            COUNT.get(word) as u32
        }
    }

    /// When the current window ends (`None` when it has ended by `now`).
    pub fn window_end(&self, now: u64) -> Option<u64> {
        // Ordering: Acquire; see the type's docs.
        let end = END.get(self.word.load(Ordering::Acquire));
        (now < end).then_some(end)
    }
}

/// The pure transition: the next word and the count it holds.
fn step(word: u64, now: u64, window: u64) -> (u64, u32) {
    let (end, count) = (END.get(word), COUNT.get(word) as u32);
    if now >= end {
        (END.put(now + window) | COUNT.put(1), 1)
    } else {
        let count = (count + 1).min(WINDOW_COUNT_MAX);
        (END.put(end) | COUNT.put(count as u64), count)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000;

    #[test]
    fn five_failures_inside_the_window_lock_and_the_count_reads_zero_after() {
        let c = WindowedCounter::new();
        let t0 = 1_764_000_000_000;
        let counts: Vec<u32> = (0..5)
            .map(|i| c.increment(t0 + i * MINUTE, 15 * MINUTE).unwrap())
            .collect();
        assert_eq!(counts, [1, 2, 3, 4, 5]);
        assert!(counts[4] >= 5, "the fifth failure locks");
        assert_eq!(c.count(t0 + 15 * MINUTE - 1), 5);
        assert_eq!(c.window_end(t0), Some(t0 + 15 * MINUTE));
        assert_eq!(c.count(t0 + 15 * MINUTE), 0);
        assert_eq!(c.window_end(t0 + 15 * MINUTE), None);
        assert_eq!(c.increment(t0 + 16 * MINUTE, 15 * MINUTE), Ok(1));
    }

    #[test]
    fn bounds() {
        let c = WindowedCounter::new();
        assert_eq!(c.increment(1, 0), Err(WindowError::TimeOutOfRange));
        assert_eq!(
            c.increment(WINDOW_TIME_MAX, 1),
            Err(WindowError::TimeOutOfRange)
        );
        assert_eq!(c.increment(u64::MAX, 1), Err(WindowError::TimeOutOfRange));
        assert_eq!(c.count(0), 0);
        assert_eq!(c.increment(WINDOW_TIME_MAX - 1, 1), Ok(1));
    }

    #[test]
    fn concurrent_increments_return_unique_counts() {
        let c = WindowedCounter::new();
        let mut all: Vec<u32> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..1000)
                            .map(|_| c.increment(10, 100).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        all.sort_unstable();
        assert_eq!(all, (1..=4000).collect::<Vec<u32>>());
    }
}
