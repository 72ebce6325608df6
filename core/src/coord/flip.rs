//! [`Flip`] (fire-once state transitions) and [`Counter`] (increments that return the value).

use crate::sync::{AtomicU64, Ordering};

/// A state word whose transitions tell the caller whether *it* made them: of any number of
/// callers flipping ONLINE → OFFLINE at once, exactly one learns it flipped and emits the alert;
/// the recovery flip OFFLINE → ONLINE likewise. States are host-chosen `u64`s.
///
/// # Orderings
///
/// See the module docs: a winning flip is `AcqRel`, loads are `Acquire`.
#[derive(Debug)]
pub struct Flip {
    state: AtomicU64,
}

impl Flip {
    /// A flip in `state`.
    pub fn new(state: u64) -> Self {
        Self {
            state: AtomicU64::new(state),
        }
    }

    /// The current state.
    pub fn get(&self) -> u64 {
        // Ordering: Acquire; pairs with the AcqRel flips (module docs).
        self.state.load(Ordering::Acquire)
    }

    /// Moves the state from `from` to `to`; true only for the one caller that did. False when
    /// the state is not `from` (someone else flipped it, or it never was `from`) and when
    /// `from == to` (nothing would change, so nobody flipped).
    pub fn flip(&self, from: u64, to: u64) -> bool {
        if from == to {
            return false;
        }
        // Ordering: AcqRel on success, Acquire on failure (module docs).
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// A counter whose increment returns the new value: N threads × M increments give exactly N·M,
/// and every returned value is unique (never a read-modify-write of a loaded value).
///
/// # Orderings
///
/// `AcqRel`: an increment synchronizes with the increment it follows, so a caller that acts on
/// "I made it N" sees what the caller that made it N - 1 wrote before its increment.
#[derive(Debug, Default)]
pub struct Counter {
    value: AtomicU64,
}

impl Counter {
    /// A counter at `value`.
    pub fn new(value: u64) -> Self {
        Self {
            value: AtomicU64::new(value),
        }
    }

    /// Adds 1 and returns the new value (wrapping at `u64::MAX`).
    pub fn increment(&self) -> u64 {
        // Ordering: AcqRel; pairs with the previous increment (type docs).
        self.value.fetch_add(1, Ordering::AcqRel).wrapping_add(1)
    }

    /// The current value.
    pub fn get(&self) -> u64 {
        // Ordering: Acquire; pairs with the AcqRel increments.
        self.value.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;

    const ONLINE: u64 = 1;
    const OFFLINE: u64 = 2;

    #[test]
    fn concurrent_flips_report_exactly_one_flipper_each_way() {
        let f = Flip::new(ONLINE);
        for (from, to) in [(ONLINE, OFFLINE), (OFFLINE, ONLINE)] {
            let flipped = Mutex::new(0);
            std::thread::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|| {
                        if f.flip(from, to) {
                            *flipped.lock().unwrap() += 1;
                        }
                    });
                }
            });
            assert_eq!(*flipped.lock().unwrap(), 1);
            assert_eq!(f.get(), to);
        }
        assert!(!f.flip(ONLINE, ONLINE), "a no-op transition flips nothing");
    }

    #[test]
    fn increments_are_exact_and_every_returned_value_is_unique() {
        const THREADS: usize = 4;
        const EACH: usize = 10_000;
        let c = Counter::default();
        let seen: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|_| s.spawn(|| (0..EACH).map(|_| c.increment()).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(c.get(), (THREADS * EACH) as u64);
        let unique: HashSet<u64> = seen.into_iter().flatten().collect();
        assert_eq!(unique.len(), THREADS * EACH);
        assert_eq!(unique.iter().min(), Some(&1));
    }

    #[test]
    fn increment_wraps_at_the_top() {
        let c = Counter::new(u64::MAX);
        assert_eq!(c.increment(), 0);
    }
}
