//! Mutex references of wkcore's lock-free structures.
//!
//! Each reference is the upstream algorithm written plainly under one mutex, built only on
//! wkcore's public API. They are the oracles of the model tests (random operation sequences must
//! give the same results on the lock-free structure and on its reference) and the mutex baselines
//! of the benchmarks. Each subsystem adds its references in a module of its own.
//!
//! - [`admission::MutexSlot`]: proposal admission (`wkcore::admission::SlotAdmission`).
//! - [`coord`]: `MutexAnchor`, `MutexExclusiveTrigger`, `MutexFlip` (`wkcore::coord`).
//! - [`owner::MutexOwners`]: the MQTT owner registry (`wkcore::owner::OwnerRegistry`).
//! - [`tag::MutexTagManager`]: upstream's delivery-tag manager (`wkcore::tag::TagLeader` and
//!   `wkcore::tag::PartitionCache`).

pub mod admission;
pub mod coord;
pub mod owner;
pub mod tag;
