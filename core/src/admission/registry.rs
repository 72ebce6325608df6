//! Slot id → slot handle, for hosts that address slots by id.
//!
//! The hot path uses the handle (`Arc<SlotAdmission<T>>`) itself; the registry is for
//! registration and look-ups by id (DESIGN.md, decision 1).

use std::fmt;
use std::sync::Arc;

use super::slot::SlotAdmission;
use crate::sync::ConcurrentMap;

/// A concurrent map from slot id to slot handle (dashmap with ahash).
pub struct AdmissionRegistry<T> {
    slots: ConcurrentMap<u64, Arc<SlotAdmission<T>>>,
}

impl<T> AdmissionRegistry<T> {
    /// An empty registry.
    pub fn new() -> Self {
        Self {
            slots: ConcurrentMap::new(),
        }
    }

    /// Registers `slot` under its [`slot_id`](SlotAdmission::slot_id); gives it back if that id
    /// is taken.
    pub fn insert(&self, slot: Arc<SlotAdmission<T>>) -> Result<(), Arc<SlotAdmission<T>>> {
        self.slots.insert_if_absent(slot.slot_id(), slot)
    }

    /// The slot registered under `slot_id`.
    pub fn get(&self, slot_id: u64) -> Option<Arc<SlotAdmission<T>>> {
        self.slots.get_cloned(&slot_id)
    }

    /// Unregisters and returns the slot under `slot_id`.
    pub fn remove(&self, slot_id: u64) -> Option<Arc<SlotAdmission<T>>> {
        self.slots.remove(&slot_id)
    }

    /// The number of registered slots (a moment's view).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no slot is registered (a moment's view).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Default for AdmissionRegistry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for AdmissionRegistry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionRegistry")
            .field("len", &self.len())
            .finish()
    }
}
