//! [`Anchor`]: scheduled-trigger de-duplication by advancing the last-fired value.

use crate::sync::{AtomicU64, Ordering};

/// The word's value while no run has been recorded.
const UNSET: u64 = u64::MAX;

/// The last-fired value of a trigger (a timestamp, a sweep turn, a cron minute), in one word.
///
/// A runner that wants to fire reads the anchor `a`, decides the trigger is due, and advances it
/// from `a` to `now`; only the runner whose advance succeeds fires. Firing rights are anchor
/// ownership. A new anchor is *unset*: [`Anchor::anchor_unset`] is the separate first-seen
/// transition that records `now` **without firing**, so a new trigger first fires one period
/// after it is first seen (no back-fill), and an unset anchor never matches an advance (it cannot
/// be fired by accident, and it is never silently stuck either: [`Anchor::try_fire`] anchors it).
///
/// Values are `u64`s chosen by the host (nanoseconds, turn numbers); `u64::MAX` is reserved for
/// the unset state and refused as a value.
///
/// # Orderings
///
/// See the module docs: a winning transition is `AcqRel`, loads are `Acquire`.
#[derive(Debug)]
pub struct Anchor {
    word: AtomicU64,
}

/// The outcome of [`Anchor::try_fire`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fire {
    /// This call advanced the anchor from `previous` to `now`: fire.
    Fired {
        /// The anchor this call advanced from.
        previous: u64,
    },
    /// The trigger is not due before `due_at` (`anchor + period`, saturating).
    NotDue {
        /// When it is due.
        due_at: u64,
    },
    /// Another caller changed the anchor first (it fired, or it anchored first-seen): skip.
    Lost,
    /// The anchor was unset and this call anchored it at `now` without firing (first seen).
    AnchoredFirstSeen,
}

impl Default for Anchor {
    fn default() -> Self {
        Self::unset()
    }
}

impl Anchor {
    /// An unset anchor.
    pub fn unset() -> Self {
        Self {
            word: AtomicU64::new(UNSET),
        }
    }

    /// An anchor set at `value` (for a trigger restored from storage). `None` if `value` is the
    /// reserved `u64::MAX`.
    pub fn at(value: u64) -> Option<Self> {
        (value != UNSET).then(|| Self {
            word: AtomicU64::new(value),
        })
    }

    /// The anchor, or `None` while unset.
    pub fn get(&self) -> Option<u64> {
        // Ordering: Acquire; pairs with the AcqRel transitions (module docs).
        let v = self.word.load(Ordering::Acquire);
        (v != UNSET).then_some(v)
    }

    /// Advances the anchor from `expected` to `next`: true for exactly one of any number of
    /// callers racing with the same `expected`. False if the anchor is not `expected` (another
    /// caller advanced it, or it is unset), if `next == expected` (nothing would change, so
    /// nobody advanced it: a CAS from a value to itself would let every caller "win"), or if
    /// either value is the reserved `u64::MAX`.
    pub fn advance(&self, expected: u64, next: u64) -> bool {
        if expected == UNSET || next == UNSET || next == expected {
            return false;
        }
        self.transition(expected, next)
    }

    /// The first-seen transition: unset → `now`, without firing. True for exactly one caller;
    /// false if the anchor was already set (or `now` is the reserved `u64::MAX`).
    pub fn anchor_unset(&self, now: u64) -> bool {
        if now == UNSET {
            return false;
        }
        self.transition(UNSET, now)
    }

    /// Fires the trigger if it is due at `now` with `period` between runs: anchors an unset
    /// trigger without firing, reports when a set one is due, or advances it. A firing always
    /// moves the anchor, so a trigger is due at `anchor + max(period, 1)`: with period 0 it fires
    /// at most once per distinct `now`. Of many callers
    /// racing on one due trigger exactly one gets [`Fire::Fired`] (or, on an unset trigger,
    /// [`Fire::AnchoredFirstSeen`]); the others get [`Fire::Lost`]. `now == u64::MAX` is refused
    /// as [`Fire::Lost`] (it cannot be stored).
    pub fn try_fire(&self, now: u64, period: u64) -> Fire {
        if now == UNSET {
            return Fire::Lost;
        }
        // Ordering: Acquire; pairs with the AcqRel transitions (module docs).
        let current = self.word.load(Ordering::Acquire);
        match decide(current, now, period) {
            Decision::AnchorFirstSeen => {
                if self.transition(UNSET, now) {
                    Fire::AnchoredFirstSeen
                } else {
                    Fire::Lost
                }
            }
            Decision::NotDue(due_at) => Fire::NotDue { due_at },
            Decision::Advance(previous) => {
                if self.transition(previous, now) {
                    Fire::Fired { previous }
                } else {
                    Fire::Lost
                }
            }
        }
    }

    fn transition(&self, from: u64, to: u64) -> bool {
        // Ordering: AcqRel on success (module docs: a winner synchronizes with the previous
        // winner); Acquire on failure, for the same reason as `get`.
        self.word
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// What [`Anchor::try_fire`] does with the anchor it loaded: the pure part of the transition.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    AnchorFirstSeen,
    NotDue(u64),
    Advance(u64),
}

fn decide(current: u64, now: u64, period: u64) -> Decision {
    if current == UNSET {
        return Decision::AnchorFirstSeen;
    }
    // At least one past the anchor: a firing must move it (a CAS from a value to itself would
    // let every racing caller fire).
    let due_at = current.saturating_add(period.max(1));
    if now < due_at {
        Decision::NotDue(due_at)
    } else {
        Decision::Advance(current)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    /// Found by the C++ suite: an advance to the same value, and a period-0 firing at the
    /// anchor's own time, were CASes from a value to itself, which every racing caller won.
    #[test]
    fn a_transition_that_changes_nothing_wins_for_nobody() {
        let a = Anchor::at(100).unwrap();
        assert!(!a.advance(100, 100));
        assert_eq!(a.try_fire(100, 0), Fire::NotDue { due_at: 101 });
        let winners: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| usize::from(a.try_fire(101, 0) == Fire::Fired { previous: 100 }))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(winners, 1);
        assert_eq!(a.try_fire(101, 0), Fire::NotDue { due_at: 102 });
        assert_eq!(a.get(), Some(101));
    }

    #[test]
    fn two_runners_read_the_same_anchor_and_exactly_one_advance_succeeds() {
        let a = Anchor::at(100).unwrap();
        let seen = a.get().unwrap();
        assert!(a.advance(seen, 160));
        assert!(!a.advance(seen, 160), "the second runner must skip");
        assert_eq!(a.get(), Some(160));
    }

    #[test]
    fn an_unset_anchor_anchors_first_and_fires_one_period_later() {
        let a = Anchor::unset();
        assert_eq!(a.get(), None);
        assert_eq!(a.try_fire(1_000, 60), Fire::AnchoredFirstSeen);
        assert_eq!(a.try_fire(1_030, 60), Fire::NotDue { due_at: 1_060 });
        assert_eq!(a.try_fire(1_060, 60), Fire::Fired { previous: 1_000 });
        assert_eq!(a.get(), Some(1_060));
    }

    #[test]
    fn an_unset_anchor_never_matches_an_advance() {
        let a = Anchor::unset();
        assert!(!a.advance(0, 10));
        assert!(!a.advance(u64::MAX, 10));
        assert!(a.anchor_unset(5));
        assert!(!a.anchor_unset(6), "first seen only once");
        assert_eq!(a.get(), Some(5));
    }

    #[test]
    fn the_reserved_value_is_refused_everywhere() {
        assert!(Anchor::at(u64::MAX).is_none());
        let a = Anchor::at(1).unwrap();
        assert!(!a.advance(1, u64::MAX));
        assert_eq!(a.try_fire(u64::MAX, 0), Fire::Lost);
        assert!(!Anchor::unset().anchor_unset(u64::MAX));
        assert_eq!(a.get(), Some(1));
    }

    #[test]
    fn a_period_that_overflows_is_never_due() {
        let a = Anchor::at(10).unwrap();
        assert_eq!(
            a.try_fire(u64::MAX - 1, u64::MAX),
            Fire::NotDue { due_at: u64::MAX }
        );
    }

    #[test]
    fn concurrent_runners_fire_each_period_once() {
        let a = std::sync::Arc::new(Anchor::unset());
        let fired = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (a, fired) = (a.clone(), fired.clone());
                s.spawn(move || {
                    for now in (0..10_000u64).step_by(10) {
                        match a.try_fire(now, 100) {
                            Fire::Fired { previous } => fired.lock().unwrap().push((previous, now)),
                            Fire::AnchoredFirstSeen => fired.lock().unwrap().push((u64::MAX, now)),
                            Fire::NotDue { .. } | Fire::Lost => {}
                        }
                    }
                });
            }
        });
        let mut fired = fired.lock().unwrap().clone();
        fired.sort_by_key(|&(_, now)| now);
        assert_eq!(
            fired[0].0,
            u64::MAX,
            "the first event is the first-seen anchor"
        );
        for w in fired.windows(2) {
            assert_eq!(w[1].0, w[0].1, "each firing advances from the previous one");
            assert!(w[1].1 >= w[0].1 + 100, "at most one firing per period");
        }
    }
}
