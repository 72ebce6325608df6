//! [`DeadlineIndex`]: one entry per retained owner, ordered by `(deadline, connection id)`.
//!
//! An indexed binary min-heap: a position map lets a renewal move its owner's entry in place
//! (O(log n), never a second entry) and retirement remove it. It is the registry's cold path
//! (reserve, activation, renewal, fence, sweep, retirement) and lives behind the registry's
//! lock; begin, done and check never touch it.

use std::collections::HashMap;

/// The deadline heap.
#[derive(Debug, Default)]
pub(crate) struct DeadlineIndex {
    heap: Vec<(u64, u64)>,
    position: HashMap<u64, usize, ahash::RandomState>,
}

impl DeadlineIndex {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The earliest `(deadline, id)`.
    pub(crate) fn peek(&self) -> Option<(u64, u64)> {
        self.heap.first().copied()
    }

    /// Sets `id`'s deadline: moves its entry if it has one, else adds it.
    pub(crate) fn schedule(&mut self, id: u64, deadline: u64) {
        match self.position.get(&id).copied() {
            Some(i) => {
                let old = self.heap[i].0;
                self.heap[i].0 = deadline;
                if deadline < old {
                    self.up(i);
                } else {
                    self.down(i);
                }
            }
            None => {
                self.heap.push((deadline, id));
                let i = self.heap.len() - 1;
                self.position.insert(id, i);
                self.up(i);
            }
        }
    }

    /// `id`'s deadline, if it has an entry.
    pub(crate) fn deadline(&self, id: u64) -> Option<u64> {
        self.position.get(&id).map(|&i| self.heap[i].0)
    }

    /// Removes `id`'s entry; false if it had none.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        let Some(i) = self.position.remove(&id) else {
            return false;
        };
        let last = self.heap.len() - 1;
        if i != last {
            self.heap.swap(i, last);
            self.position.insert(self.heap[i].1, i);
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
        self.position.insert(self.heap[a].1, a);
        self.position.insert(self.heap[b].1, b);
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i] >= self.heap[parent] {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && self.heap[l] < self.heap[least] {
                least = l;
            }
            if r < n && self.heap[r] < self.heap[least] {
                least = r;
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
    use std::collections::BTreeSet;

    #[test]
    fn equal_deadlines_go_to_the_lower_id_and_renewals_move_in_place() {
        let mut d = DeadlineIndex::default();
        d.schedule(2, 10);
        d.schedule(1, 10);
        d.schedule(3, 5);
        assert_eq!(d.peek(), Some((5, 3)));
        for i in 0..99 {
            d.schedule(3, 100 + i);
        }
        assert_eq!(d.len(), 3);
        assert_eq!(d.peek(), Some((10, 1)));
        assert!(d.remove(1));
        assert!(!d.remove(1));
        assert_eq!(d.peek(), Some((10, 2)));
        assert_eq!(d.deadline(3), Some(198));
    }

    proptest! {
        #[test]
        fn matches_an_ordered_set(ops in proptest::collection::vec((0u64..16, 0u64..50, any::<bool>()), 0..200)) {
            let mut d = DeadlineIndex::default();
            let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut at: HashMap<u64, u64> = HashMap::new();
            for (id, deadline, remove) in ops {
                if remove {
                    let had = at.remove(&id).map(|dl| model.remove(&(dl, id))).is_some();
                    prop_assert_eq!(d.remove(id), had);
                } else {
                    if let Some(old) = at.insert(id, deadline) {
                        model.remove(&(old, id));
                    }
                    model.insert((deadline, id));
                    d.schedule(id, deadline);
                }
                prop_assert_eq!(d.len(), model.len());
                prop_assert_eq!(d.peek(), model.first().copied());
            }
        }
    }
}
