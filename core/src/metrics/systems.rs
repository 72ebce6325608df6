//! The composition point of the families: every system's own declaration, listed once, so that
//! the process-wide registry renders every family at zero before any object exists.
//!
//! Each system names its families in its own module (`declare_*_families`, or its one static
//! [`super::Family`]); this list only calls them. [`super::Registry`] itself knows no system. A new
//! system adds one line here, as it adds one `StatusRange` line to the ABI's status table.

use super::Registry;

/// One system's families: its name (for diagnostics) and the function, in the system's own
/// module, that declares them.
pub(super) struct SystemFamilies {
    /// The system, as its module is named.
    pub(super) system: &'static str,
    /// Declares every family of the system in a registry.
    pub(super) declare: fn(&Registry),
}

/// Every system's families, in render order.
pub(super) static SYSTEMS: &[SystemFamilies] = &[
    SystemFamilies {
        system: "admission",
        declare: |r| r.declare(&crate::admission::SLOT_PROPOSAL_ADMISSION),
    },
    SystemFamilies {
        system: "owner",
        declare: crate::owner::declare_owner_families,
    },
    SystemFamilies {
        system: "tag",
        declare: crate::tag::declare_tag_families,
    },
    SystemFamilies {
        system: "coord",
        declare: crate::coord::declare_coord_families,
    },
];
