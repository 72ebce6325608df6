//! [`DeadlineIndex`]: one entry per retained owner, ordered by `(deadline, connection id)`.
//!
//! Two parts, each in order. New entries go to the back of a queue when they come in order (a
//! reservation's deadline is its clock reading plus the pending timeout, so reservations come in
//! order unless the clock steps back); every other entry, and every entry that moves (an
//! activation, a renewal, a fence), lives in a B-tree. An owner's usual life is then one queue
//! push, one tree insert on activation, and one tree removal on retirement; the queue's moved
//! records are dropped from its front as they reach it. A slot table says where each live entry
//! is, so a stale queue record is known without a search.
//!
//! A B-tree rather than a heap: the sweep takes the earliest entries and the owners it visits
//! are usually retired right away, so a heap's removal sank its last item (a late deadline)
//! through every cold level of a large index, while the tree's removals and inserts stay in the
//! few leaves at its front and at the back of the reschedule range. This is the registry's cold
//! path (reserve, activation, renewal, fence, sweep, retirement) and lives behind the registry's
//! lock; begin, done and check never touch it.

use std::collections::{BTreeMap, VecDeque};

/// Where an owner's entry lives in the index: a slot of its table, handed out by
/// [`DeadlineIndex::insert`] and reused after [`DeadlineIndex::remove`]. Every call names the
/// owner's connection id beside its slot, and a slot whose entry belongs to another id (the
/// slot was reused after this owner retired) is treated as absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(u32);

/// A live entry: its owner, its deadline, and whether it is the queue's (else the tree's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    id: u64,
    deadline: u64,
    queued: bool,
}

/// The deadline index (module docs).
#[derive(Debug, Default)]
pub(crate) struct DeadlineIndex {
    /// Entries that came in order, `(deadline, id, slot)`, front first; a record whose slot no
    /// longer holds it as queued is stale.
    queue: VecDeque<(u64, u64, u32)>,
    /// Live records in `queue`.
    queued: usize,
    /// Slot by `deadline << 64 | id`: one 128-bit compare per step of a search.
    tree: BTreeMap<u128, u32>,
    /// The live entry of each slot; `None` for a free slot.
    slots: Vec<Option<Held>>,
    free: Vec<u32>,
}

impl DeadlineIndex {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.queued + self.tree.len()
    }

    /// The earliest `(deadline, id, slot)`.
    pub(crate) fn peek(&self) -> Option<(u64, u64, Slot)> {
        let queued = self.queue.front().map(|&(d, id, s)| (d, id, Slot(s)));
        let tree = self
            .tree
            .first_key_value()
            .map(|(&k, &s)| ((k >> 64) as u64, k as u64, Slot(s)));
        match (queued, tree) {
            (Some(q), Some(t)) => Some(if (q.0, q.1) <= (t.0, t.1) { q } else { t }),
            (q, t) => q.or(t),
        }
    }

    /// Adds `id`'s entry (an id not in the index) and returns its slot.
    pub(crate) fn insert(&mut self, id: u64, deadline: u64) -> Slot {
        let in_order = self
            .queue
            .back()
            .is_none_or(|&(d, last, _)| (d, last) < (deadline, id));
        let held = Some(Held {
            id,
            deadline,
            queued: in_order,
        });
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = held;
                s
            }
            None => {
                self.slots.push(held);
                (self.slots.len() - 1) as u32
            }
        };
        if in_order {
            self.queue.push_back((deadline, id, slot));
            self.queued += 1;
        } else {
            self.tree.insert(order_key(deadline, id), slot);
        }
        Slot(slot)
    }

    /// `id`'s live entry in `slot`, if it is there.
    fn find(&self, slot: Slot, id: u64) -> Option<Held> {
        let held = (*self.slots.get(slot.0 as usize)?)?;
        (held.id == id).then_some(held)
    }

    /// Takes `held`'s entry (live, in `slot`) out of the queue or the tree.
    fn unlink(&mut self, slot: Slot, held: Held) {
        if held.queued {
            // The queue's record is left behind, stale: dropped when it reaches the front, or
            // by a compaction once stale records outnumber live ones twice over (so the queue
            // holds at most three records per live one, each dropped once: O(1) per unlink).
            self.queued -= 1;
        } else {
            self.tree.remove(&order_key(held.deadline, held.id));
        }
        self.slots[slot.0 as usize] = None;
        if self.queue.len() > 2 * self.queued + STALE_SLACK {
            let slots = &self.slots;
            self.queue.retain(|&record| is_live(slots, record));
        }
        self.drop_stale_front();
    }

    /// Pops the queue's stale records off its front, so `peek` sees a live one.
    fn drop_stale_front(&mut self) {
        while let Some(&record) = self.queue.front() {
            if is_live(&self.slots, record) {
                break;
            }
            self.queue.pop_front();
        }
    }

    /// Moves `id`'s entry to `deadline` (into the tree); false if it has none.
    pub(crate) fn schedule(&mut self, slot: Slot, id: u64, deadline: u64) -> bool {
        let Some(held) = self.find(slot, id) else {
            return false;
        };
        if held.deadline == deadline {
            return true;
        }
        self.unlink(slot, held);
        self.slots[slot.0 as usize] = Some(Held {
            id,
            deadline,
            queued: false,
        });
        self.tree.insert(order_key(deadline, id), slot.0);
        true
    }

    /// `id`'s deadline, if it has an entry.
    pub(crate) fn deadline(&self, slot: Slot, id: u64) -> Option<u64> {
        self.find(slot, id).map(|h| h.deadline)
    }

    /// Removes `id`'s entry and frees its slot; false if it had none.
    pub(crate) fn remove(&mut self, slot: Slot, id: u64) -> bool {
        let Some(held) = self.find(slot, id) else {
            return false;
        };
        self.unlink(slot, held);
        self.free.push(slot.0);
        true
    }
}

/// Stale queue records tolerated beyond twice the live ones before a compaction.
const STALE_SLACK: usize = 64;

/// True if the queue's `(deadline, id, slot)` record is its slot's live entry.
fn is_live(slots: &[Option<Held>], (deadline, id, slot): (u64, u64, u32)) -> bool {
    slots[slot as usize]
        == Some(Held {
            id,
            deadline,
            queued: true,
        })
}

/// The order of `(deadline, id)` as one integer.
fn order_key(deadline: u64, id: u64) -> u128 {
    (u128::from(deadline) << 64) | u128::from(id)
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, HashMap};

    #[test]
    fn equal_deadlines_go_to_the_lower_id_and_renewals_move_in_place() {
        let mut d = DeadlineIndex::default();
        let s2 = d.insert(2, 10);
        let s1 = d.insert(1, 10);
        let s3 = d.insert(3, 5);
        assert_eq!(d.peek(), Some((5, 3, s3)));
        for i in 0..99 {
            assert!(d.schedule(s3, 3, 100 + i));
        }
        assert_eq!(d.len(), 3);
        assert_eq!(d.peek(), Some((10, 1, s1)));
        assert!(d.remove(s1, 1));
        assert!(!d.remove(s1, 1));
        assert_eq!(d.peek(), Some((10, 2, s2)));
        assert_eq!(d.deadline(s3, 3), Some(198));
    }

    #[test]
    fn a_reused_slot_is_not_the_old_owners() {
        let mut d = DeadlineIndex::default();
        let a = d.insert(1, 10);
        assert!(d.remove(a, 1));
        let b = d.insert(2, 20);
        assert_eq!(a, b, "the slot is reused");
        assert_eq!(d.deadline(a, 1), None);
        assert!(!d.schedule(a, 1, 5));
        assert!(!d.remove(a, 1));
        assert_eq!(d.deadline(b, 2), Some(20));
    }

    #[test]
    fn moved_records_behind_a_pending_one_are_compacted() {
        let mut d = DeadlineIndex::default();
        let slots: Vec<Slot> = (1..=1000).map(|id| d.insert(id, id)).collect();
        for (i, &slot) in slots.iter().enumerate().skip(1) {
            let id = i as u64 + 1;
            assert!(d.schedule(slot, id, 5000 + id));
            assert!(d.queue.len() <= 2 * d.queued + STALE_SLACK);
        }
        assert_eq!(
            (d.len(), d.queued, d.peek()),
            (1000, 1, Some((1, 1, slots[0])))
        );
        assert!(d.remove(slots[0], 1));
        assert!(
            d.queue.is_empty(),
            "the stale records went with the last live one"
        );
        assert_eq!((d.len(), d.peek()), (999, Some((5002, 2, slots[1]))));
    }

    proptest! {
        #[test]
        fn matches_an_ordered_set(ops in proptest::collection::vec((0u64..16, 0u64..50, any::<bool>()), 0..200)) {
            let mut d = DeadlineIndex::default();
            let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut at: HashMap<u64, (u64, Slot)> = HashMap::new();
            for (id, deadline, remove) in ops {
                if remove {
                    match at.remove(&id) {
                        Some((dl, slot)) => {
                            model.remove(&(dl, id));
                            prop_assert!(d.remove(slot, id));
                        }
                        None => prop_assert!(!d.remove(Slot(0), id)),
                    }
                } else if let Some((old, slot)) = at.get(&id).copied() {
                    model.remove(&(old, id));
                    model.insert((deadline, id));
                    at.insert(id, (deadline, slot));
                    prop_assert!(d.schedule(slot, id, deadline));
                } else {
                    let slot = d.insert(id, deadline);
                    model.insert((deadline, id));
                    at.insert(id, (deadline, slot));
                }
                prop_assert_eq!(d.len(), model.len());
                prop_assert_eq!(d.peek().map(|(dl, id, _)| (dl, id)), model.first().copied());
            }
        }
        /// Reservations as the registry makes them (fresh ids, deadlines from a clock that
        /// mostly advances, so most go to the queue), then activations, fences and
        /// retirements in any order.
        #[test]
        fn matches_an_ordered_set_in_reservation_order(
            ops in proptest::collection::vec((0u8..4, 0u64..3, 0u64..100, any::<prop::sample::Index>()), 0..300),
        ) {
            let mut d = DeadlineIndex::default();
            let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut live: Vec<(u64, u64, Slot)> = Vec::new();
            let (mut clock, mut next_id) = (0u64, 1u64);
            for (op, step, deadline, pick) in ops {
                match op {
                    0 | 1 => {
                        // A step of 0 with a lower deadline than the last goes to the tree.
                        clock += step;
                        let dl = if step == 0 { clock + 10 - deadline % 3 } else { clock + 10 };
                        let slot = d.insert(next_id, dl);
                        model.insert((dl, next_id));
                        live.push((next_id, dl, slot));
                        next_id += 1;
                    }
                    2 if !live.is_empty() => {
                        let i = pick.index(live.len());
                        let (id, old, slot) = live[i];
                        prop_assert!(d.schedule(slot, id, deadline));
                        model.remove(&(old, id));
                        model.insert((deadline, id));
                        live[i].1 = deadline;
                    }
                    3 if !live.is_empty() => {
                        let (id, old, slot) = live.swap_remove(pick.index(live.len()));
                        prop_assert!(d.remove(slot, id));
                        prop_assert!(!d.remove(slot, id));
                        model.remove(&(old, id));
                    }
                    _ => {}
                }
                prop_assert_eq!(d.len(), model.len());
                prop_assert_eq!(d.peek().map(|(dl, id, _)| (dl, id)), model.first().copied());
                for &(id, dl, slot) in &live {
                    prop_assert_eq!(d.deadline(slot, id), Some(dl));
                }
            }
        }
    }
}
