//! The admission system's C ABI: `wk_slot`, `wk_admission_registry`, their enums and structs,
//! and the admission statuses (100–199).

#[cfg(test)]
mod abi_tests;
pub mod hosted;
pub mod registry;
pub mod slot;
pub mod status;
pub mod types;
