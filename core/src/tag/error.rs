//! Why a delivery-tag call refused its input.

/// Why a delivery-tag call refused its input; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagError {
    /// A channel key, source key or tag key that is not UTF-8 (from the wire or the ABI).
    InvalidUtf8,
    /// A UID list whose bytes pass `u32::MAX` in all.
    TooLarge,
    /// A UID whose slot has no known node in the slot table (the build is retryable).
    UnassignedSlot {
        /// The slot.
        slot_id: u32,
    },
    /// A UID list and its slot list of different lengths.
    LengthMismatch,
    /// A configuration value out of range.
    InvalidConfig,
}

impl TagError {
    /// A fixed description.
    pub const fn text(self) -> &'static str {
        match self {
            TagError::InvalidUtf8 => "deliverytag: key is not UTF-8",
            TagError::TooLarge => "deliverytag: uid list too large",
            TagError::UnassignedSlot { .. } => "deliverytag: uid slot has no assigned node",
            TagError::LengthMismatch => "deliverytag: uid and slot lists differ in length",
            TagError::InvalidConfig => "deliverytag: invalid configuration",
        }
    }
}

impl std::fmt::Display for TagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for TagError {}
