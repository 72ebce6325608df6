//! [`OwnerSnapshot`]: a registry's counts.

/// A registry's counts, upstream's `OwnerSnapshot`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OwnerSnapshot {
    /// Owners held: pending, active, closing and uncertain.
    pub held: u64,
    /// Reserved, not activated.
    pub pending: u64,
    /// Activated.
    pub active: u64,
    /// Fenced, not retired (uncertain owners included).
    pub closing: u64,
    /// Admitted operation scopes.
    pub operations: u64,
    /// Deadline index entries (one per held owner).
    pub deadlines: u64,
    /// Owners marked uncertain.
    pub uncertain: u64,
    /// Admission stopped.
    pub stopped: bool,
}
