//! [`DeadlineIndex`]: one entry per retained owner, ordered by `(deadline, connection id)`.
//!
//! An indexed 4-ary min-heap: a position table lets a renewal move its owner's entry in place
//! (O(log n), never a second entry) and retirement remove it. It is the registry's cold path
//! (reserve, activation, renewal, fence, sweep, retirement) and lives behind the registry's
//! lock; begin, done and check never touch it.

/// Where an owner's entry lives in the index: a slot of its position table, handed out by
/// [`DeadlineIndex::insert`] and reused after [`DeadlineIndex::remove`]. Every call names the
/// owner's connection id beside its slot, and a slot whose entry belongs to another id (the
/// slot was reused after this owner retired) is treated as absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(u32);

const FREE: u32 = u32::MAX;

/// Children per node: a 4-ary heap is half as deep as a binary one, so a renewal that moves an
/// owner's deadline to the back (the common move: a lease extended) touches half as many cache
/// lines of a large index, for three comparisons per level instead of one.
const ARITY: usize = 4;

/// The deadline heap: `(deadline, id, slot)` items, and the heap position of every slot.
#[derive(Debug, Default)]
pub(crate) struct DeadlineIndex {
    heap: Vec<(u64, u64, Slot)>,
    /// Heap position by slot; `FREE` for a free slot.
    position: Vec<u32>,
    free: Vec<u32>,
}

impl DeadlineIndex {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The earliest `(deadline, id, slot)`.
    pub(crate) fn peek(&self) -> Option<(u64, u64, Slot)> {
        self.heap.first().copied()
    }

    /// Adds `id`'s entry (an id not in the index) and returns its slot.
    pub(crate) fn insert(&mut self, id: u64, deadline: u64) -> Slot {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.position.push(FREE);
                (self.position.len() - 1) as u32
            }
        };
        self.heap.push((deadline, id, Slot(slot)));
        let i = self.heap.len() - 1;
        self.position[slot as usize] = i as u32;
        self.up(i);
        Slot(slot)
    }

    /// The heap position of `id`'s entry in `slot`, if it is there.
    fn find(&self, slot: Slot, id: u64) -> Option<usize> {
        let i = *self.position.get(slot.0 as usize)?;
        (i != FREE && self.heap[i as usize].1 == id).then_some(i as usize)
    }

    /// Moves `id`'s entry to `deadline`, in place; false if it has none.
    pub(crate) fn schedule(&mut self, slot: Slot, id: u64, deadline: u64) -> bool {
        let Some(i) = self.find(slot, id) else {
            return false;
        };
        let old = self.heap[i].0;
        self.heap[i].0 = deadline;
        if deadline < old {
            self.up(i);
        } else {
            self.down(i);
        }
        true
    }

    /// `id`'s deadline, if it has an entry.
    pub(crate) fn deadline(&self, slot: Slot, id: u64) -> Option<u64> {
        self.find(slot, id).map(|i| self.heap[i].0)
    }

    /// Removes `id`'s entry and frees its slot; false if it had none.
    pub(crate) fn remove(&mut self, slot: Slot, id: u64) -> bool {
        let Some(i) = self.find(slot, id) else {
            return false;
        };
        self.position[slot.0 as usize] = FREE;
        self.free.push(slot.0);
        let last = self.heap.len() - 1;
        if i != last {
            self.heap.swap(i, last);
            self.position[self.heap[i].2 .0 as usize] = i as u32;
        }
        self.heap.pop();
        if i < self.heap.len() {
            self.up(i);
            self.down(i);
        }
        true
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.position[self.heap[a].2 .0 as usize] = a as u32;
        self.position[self.heap[b].2 .0 as usize] = b as u32;
    }

    fn key(&self, i: usize) -> (u64, u64) {
        (self.heap[i].0, self.heap[i].1)
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.key(i) >= self.key(parent) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            let mut least = i;
            for c in first..(first + ARITY).min(n) {
                if self.key(c) < self.key(least) {
                    least = c;
                }
            }
            if least == i {
                break;
            }
            self.swap(i, least);
            i = least;
        }
    }
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
    }
}
