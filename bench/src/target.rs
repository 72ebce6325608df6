//! The three operations the harness needs, implemented once per queue under test.

use crossbeam_queue::ArrayQueue;
use wkcore::admission::{ControlKind, ProposalClass, SlotAdmission, SlotLimits};
use wkcore_references::admission::MutexSlot;

use crate::{MAX_QUEUED, MAX_QUEUED_BACKGROUND};

/// A queue under test: admit one, admit a slice, drain everything queued.
///
/// Admission calls return whether (or how many) items were admitted; backpressure (busy or
/// throttled, or a full `ArrayQueue`) is an ordinary "no". Any other refusal (closed, not leader,
/// ...) means the benchmark is broken, and panics.
pub trait Target: Send + Sync {
    /// A fresh, empty queue, ready to admit (a slot is made leader).
    fn fresh() -> Self
    where
        Self: Sized;

    /// Admits one item; `false` on backpressure.
    fn admit_one(&self, item: u64) -> bool;

    /// Admits a prefix of `items`; returns its length (0 on backpressure).
    fn admit_slice(&self, items: &[u64]) -> usize;

    /// Drains what is queued, adding each item to `sum` (wrapping); returns how many.
    fn drain_all(&self, sum: &mut u64) -> usize;
}

/// The limits of every benchmarked slot: 8192 total, 4096 background.
pub fn bench_limits() -> SlotLimits {
    SlotLimits::new(MAX_QUEUED, MAX_QUEUED_BACKGROUND)
}

/// `SlotAdmission` and `MutexSlot` share their method names, so one body serves both.
macro_rules! impl_target_for_slot {
    ($ty:ty, $label:literal) => {
        impl Target for $ty {
            fn fresh() -> Self {
                let slot = <$ty>::new(bench_limits()).expect("bench limits are valid");
                slot.set_leader();
                slot
            }

            #[inline]
            fn admit_one(&self, item: u64) -> bool {
                match self.admit(ControlKind::Propose, ProposalClass::Foreground, item) {
                    Ok(_) => true,
                    Err(rejected) if rejected.error.is_backpressure() => false,
                    Err(rejected) => panic!(concat!($label, " admit refused: {}"), rejected.error),
                }
            }

            #[inline]
            fn admit_slice(&self, items: &[u64]) -> usize {
                let batch =
                    self.admit_batch_copied(ControlKind::Propose, ProposalClass::Foreground, items);
                match batch.refused {
                    Some(error) if !error.is_backpressure() => {
                        panic!(concat!($label, " admit_batch refused: {}"), error)
                    }
                    _ => batch.admitted,
                }
            }

            #[inline]
            fn drain_all(&self, sum: &mut u64) -> usize {
                self.drain_with(usize::MAX, |control| {
                    *sum = sum.wrapping_add(control.item);
                })
                .count
            }
        }
    };
}

impl_target_for_slot!(SlotAdmission<u64>, "wkcore");
impl_target_for_slot!(MutexSlot<u64>, "mutex");

/// The floor: a bounded MPMC ring with no admission logic at all.
impl Target for ArrayQueue<u64> {
    fn fresh() -> Self {
        ArrayQueue::new(MAX_QUEUED as usize)
    }

    #[inline]
    fn admit_one(&self, item: u64) -> bool {
        self.push(item).is_ok()
    }

    #[inline]
    fn admit_slice(&self, items: &[u64]) -> usize {
        items
            .iter()
            .take_while(|&&item| self.push(item).is_ok())
            .count()
    }

    #[inline]
    fn drain_all(&self, sum: &mut u64) -> usize {
        // Bounded by the capacity, like one batch take of a slot.
        let mut n = 0;
        while n < self.capacity() {
            match self.pop() {
                Some(item) => {
                    *sum = sum.wrapping_add(item);
                    n += 1;
                }
                None => break,
            }
        }
        n
    }
}
