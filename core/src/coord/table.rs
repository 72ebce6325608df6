//! [`AnchorTable`]: many triggers' anchors, keyed by id, for hosts with many triggers.

use super::anchor::{Anchor, Fire};
use crate::sync::{Arc, AtomicU64, ConcurrentMap, InsertError as MapInsertError, Ordering};

/// The largest capacity an [`AnchorTable`] may be built with.
pub const ANCHOR_TABLE_CAPACITY_MAX: usize = 1 << 22;

/// Why an anchor-table call did nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorTableError {
    /// No anchor with that id.
    NotFound,
    /// An anchor with that id exists.
    Exists,
    /// The table holds `capacity` anchors.
    Full,
    /// A capacity of 0 or above [`ANCHOR_TABLE_CAPACITY_MAX`].
    InvalidCapacity,
    /// The reserved value `u64::MAX` as an anchor value.
    InvalidValue,
}

/// Anchors by trigger id: a look-up under the map's shard read lock, then the anchor's own CAS
/// (the map's write lock only on insert and remove, the cold steps).
///
/// # Orderings
///
/// The anchors' own, see [`Anchor`]. The size count is `Relaxed` apart from its bound: an insert
/// reserves a place with a CAS below the capacity (inside the entry lock, once the id is known to
/// be absent) before it inserts, and a remove gives its place back after it removed, so the table
/// never holds more than `capacity` anchors; the count orders nothing else.
#[derive(Debug)]
pub struct AnchorTable {
    map: ConcurrentMap<u64, Arc<Anchor>>,
    len: AtomicU64,
    capacity: usize,
}

impl std::fmt::Debug for ConcurrentMap<u64, Arc<Anchor>> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConcurrentMap")
            .field("len", &self.len())
            .finish()
    }
}

impl AnchorTable {
    /// An empty table of at most `capacity` anchors.
    pub fn new(capacity: usize) -> Result<Self, AnchorTableError> {
        if capacity == 0 || capacity > ANCHOR_TABLE_CAPACITY_MAX {
            return Err(AnchorTableError::InvalidCapacity);
        }
        Ok(Self {
            map: ConcurrentMap::new(),
            len: AtomicU64::new(0),
            capacity,
        })
    }

    /// Adds trigger `id` with an unset anchor (`None`) or anchored at `value`.
    pub fn insert(&self, id: u64, value: Option<u64>) -> Result<(), AnchorTableError> {
        let anchor = match value {
            None => Anchor::unset(),
            Some(v) => Anchor::at(v).ok_or(AnchorTableError::InvalidValue)?,
        };
        // The place is reserved inside the entry lock, after the map said the id is absent, so
        // an insert of an existing id never takes a place (and never makes a concurrent insert
        // of a new id see the table full).
        let result = self.map.insert_with(id, || {
            // Ordering: Relaxed; see the type's docs (a bound, not an edge).
            let mut len = self.len.load(Ordering::Relaxed);
            loop {
                if len as usize >= self.capacity {
                    return Err(AnchorTableError::Full);
                }
                match self.len.compare_exchange_weak(
                    len,
                    len + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Ok(Arc::new(anchor)),
                    Err(actual) => len = actual,
                }
            }
        });
        match result {
            Ok(()) => Ok(()),
            Err(MapInsertError::Exists(_)) => Err(AnchorTableError::Exists),
            Err(MapInsertError::Refused(e)) => Err(e),
        }
    }

    /// Removes trigger `id`.
    pub fn remove(&self, id: u64) -> Result<(), AnchorTableError> {
        self.map.remove(&id).ok_or(AnchorTableError::NotFound)?;
        // Ordering: Relaxed; see the type's docs.
        self.len.fetch_sub(1, Ordering::Relaxed);
        Ok(())
    }

    /// Anchors held (a moment's view; an insert in flight counts), never above the capacity.
    pub fn len(&self) -> usize {
        // Ordering: Relaxed; see the type's docs.
        self.len.load(Ordering::Relaxed) as usize
    }

    /// True when no anchor is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn with<R>(&self, id: u64, f: impl FnOnce(&Anchor) -> R) -> Result<R, AnchorTableError> {
        self.map
            .with(&id, |anchor| f(anchor))
            .ok_or(AnchorTableError::NotFound)
    }

    /// [`Anchor::try_fire`] on trigger `id`.
    pub fn try_fire(&self, id: u64, now: u64, period: u64) -> Result<Fire, AnchorTableError> {
        self.with(id, |a| a.try_fire(now, period))
    }

    /// [`Anchor::advance`] on trigger `id`.
    pub fn advance(&self, id: u64, expected: u64, next: u64) -> Result<bool, AnchorTableError> {
        self.with(id, |a| a.advance(expected, next))
    }

    /// [`Anchor::anchor_unset`] on trigger `id`.
    pub fn anchor_unset(&self, id: u64, now: u64) -> Result<bool, AnchorTableError> {
        self.with(id, |a| a.anchor_unset(now))
    }

    /// [`Anchor::get`] of trigger `id`: `Ok(None)` while unset.
    pub fn get(&self, id: u64) -> Result<Option<u64>, AnchorTableError> {
        self.with(id, |a| a.get())
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    /// Found by the C++ suite: an insert of an existing id reserved a place before it looked
    /// the id up, so a concurrent insert of a new id into a table with room was refused as full.
    #[test]
    fn inserting_an_existing_id_never_takes_a_place() {
        let t = AnchorTable::new(2).unwrap();
        t.insert(1, None).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..100_000 {
                    assert_eq!(t.insert(1, None), Err(AnchorTableError::Exists));
                }
            });
            s.spawn(|| {
                for _ in 0..100_000 {
                    assert_eq!(t.insert(2, None), Ok(()));
                    t.remove(2).unwrap();
                }
            });
        });
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn table_fires_by_id_and_is_bounded() {
        let t = AnchorTable::new(2).unwrap();
        assert_eq!(
            AnchorTable::new(0).unwrap_err(),
            AnchorTableError::InvalidCapacity
        );
        t.insert(1, None).unwrap();
        t.insert(2, Some(100)).unwrap();
        assert_eq!(t.insert(3, None), Err(AnchorTableError::Full));
        // An existing id is told so, full table or not (found by the C++ suite: the place used
        // to be reserved before the look-up).
        assert_eq!(t.insert(1, None), Err(AnchorTableError::Exists));
        assert_eq!(t.try_fire(1, 50, 10), Ok(Fire::AnchoredFirstSeen));
        assert_eq!(t.try_fire(1, 55, 10), Ok(Fire::NotDue { due_at: 60 }));
        assert_eq!(t.try_fire(1, 60, 10), Ok(Fire::Fired { previous: 50 }));
        assert_eq!(t.advance(2, 100, 110), Ok(true));
        assert_eq!(t.advance(2, 100, 120), Ok(false));
        assert_eq!(t.get(2), Ok(Some(110)));
        assert_eq!(t.try_fire(9, 1, 1), Err(AnchorTableError::NotFound));
        t.remove(2).unwrap();
        assert_eq!(t.remove(2), Err(AnchorTableError::NotFound));
        assert_eq!(t.insert(1, None), Err(AnchorTableError::Exists));
        t.insert(3, None).unwrap();
        assert_eq!(
            t.insert(4, Some(u64::MAX)),
            Err(AnchorTableError::InvalidValue)
        );
        assert_eq!(t.len(), 2);
    }
}
