//! Slot id → slot handle, for hosts that address slots by id.
//!
//! The hot path uses the handle (an `Arc` of the slot) itself; the registry is for registration
//! and look-ups by id, never the per-item path.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::slot::SlotAdmission;
use crate::sync::ConcurrentMap;

/// A shared handle to a slot that a registry can store: an `Arc` of the slot, or an embedder's
/// own wrapper around one (the C ABI stores its handle objects, so a look-up hands out the
/// same allocation the host's handles point at).
pub trait SlotHandle: Clone {
    /// The id the slot is registered under.
    fn slot_id(&self) -> u64;
}

impl<T> SlotHandle for Arc<SlotAdmission<T>> {
    fn slot_id(&self) -> u64 {
        SlotAdmission::slot_id(self)
    }
}

/// A concurrent map from slot id to slot handle (dashmap with ahash).
///
/// `T` is the slots' item type; `H` the handle stored, `Arc<SlotAdmission<T>>` unless an
/// embedder stores its own.
pub struct AdmissionRegistry<T, H = Arc<SlotAdmission<T>>> {
    slots: ConcurrentMap<u64, H>,
    items: PhantomData<fn(T) -> T>,
}

impl<T, H: SlotHandle> AdmissionRegistry<T, H> {
    /// An empty registry.
    pub fn new() -> Self {
        Self {
            slots: ConcurrentMap::new(),
            items: PhantomData,
        }
    }

    /// Registers `slot` under its [`slot_id`](SlotHandle::slot_id); gives it back if that id is
    /// taken.
    pub fn insert(&self, slot: H) -> Result<(), H> {
        self.slots.insert_if_absent(slot.slot_id(), slot)
    }

    /// The slot registered under `slot_id`.
    pub fn get(&self, slot_id: u64) -> Option<H> {
        self.slots.get_cloned(&slot_id)
    }

    /// Unregisters and returns the slot under `slot_id`.
    pub fn remove(&self, slot_id: u64) -> Option<H> {
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

impl<T, H: SlotHandle> Default for AdmissionRegistry<T, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, H: SlotHandle> fmt::Debug for AdmissionRegistry<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionRegistry")
            .field("len", &self.len())
            .finish()
    }
}
