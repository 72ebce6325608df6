//! Owner identities: the key a client connects under, the registry-issued [`Owner`], and the
//! [`Claim`] a host reserves with. Validation is upstream's, byte for byte.

use std::fmt;
use std::sync::Arc;

/// The most bytes a namespace, client id or UID may have.
pub const IDENTITY_MAX: usize = 1024;
/// The most bytes a boot id may have.
pub const BOOT_ID_MAX: usize = 128;

/// Upstream's `ValidIdentity(s, limit)`: 1..=`limit` **bytes** of UTF-8 (guaranteed by `&str`),
/// no NUL, and not only whitespace (Go's `strings.TrimSpace`, which trims Unicode white space).
pub fn valid_identity(s: &str, limit: usize) -> bool {
    !s.is_empty() && s.len() <= limit && !s.contains('\0') && !s.trim().is_empty()
}

/// As [`valid_identity`], for bytes that still have to be UTF-8 (a wire frame, a C buffer).
pub fn valid_identity_bytes(bytes: &[u8], limit: usize) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|s| valid_identity(s, limit))
}

/// Why an identity was refused (upstream's `ErrInvalidIdentity`, `mqttsession: invalid
/// identity`, names only the fact; the variants say which part for diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentityError {
    /// The namespace fails `ValidIdentity(…, 1024)`.
    Namespace,
    /// The client id fails `ValidIdentity(…, 1024)`.
    ClientId,
    /// The UID fails `ValidIdentity(…, 1024)`.
    Uid,
    /// The boot id fails `ValidIdentity(…, 128)`.
    BootId,
    /// A session or owner generation, the node id or the connection id is zero.
    ZeroId,
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(super::error::texts::text(
            super::error::texts::INVALID_IDENTITY,
        ))
    }
}

impl std::error::Error for IdentityError {}

/// `Key{Namespace, ClientID}`: what a client connects as.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnerKey {
    /// The tenant namespace (1..=1024 bytes).
    pub namespace: String,
    /// The MQTT client id (1..=1024 bytes).
    pub client_id: String,
}

impl OwnerKey {
    /// A key from its two parts (not validated; see [`OwnerKey::validate`]).
    pub fn new(namespace: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            client_id: client_id.into(),
        }
    }

    /// Upstream's `Key.Validate`.
    pub fn validate(&self) -> Result<(), IdentityError> {
        if !valid_identity(&self.namespace, IDENTITY_MAX) {
            return Err(IdentityError::Namespace);
        }
        if !valid_identity(&self.client_id, IDENTITY_MAX) {
            return Err(IdentityError::ClientId);
        }
        Ok(())
    }
}

/// A registry-issued owner identity. Immutable once issued, shared as `Arc<Owner>`, and compared
/// by full value: an owner that differs in any field is another owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The key the client connected under.
    pub key: OwnerKey,
    /// The session generation the claim carried (non-zero).
    pub session_generation: u64,
    /// The owner generation the claim carried (non-zero).
    pub owner_generation: u64,
    /// The issuing node (non-zero).
    pub node_id: u64,
    /// The issuing process's boot (1..=128 bytes).
    pub boot_id: Arc<str>,
    /// The registry-issued connection id (non-zero, never reused within a boot).
    pub connection_id: u64,
}

impl Owner {
    /// Upstream's `Owner.Validate`: the key, every id non-zero, the boot id.
    pub fn validate(&self) -> Result<(), IdentityError> {
        self.key.validate()?;
        if self.session_generation == 0
            || self.owner_generation == 0
            || self.node_id == 0
            || self.connection_id == 0
        {
            return Err(IdentityError::ZeroId);
        }
        if !valid_identity(&self.boot_id, BOOT_ID_MAX) {
            return Err(IdentityError::BootId);
        }
        Ok(())
    }
}

/// What a host reserves an owner with: the key, the authenticated UID and the two generations.
/// The node id, boot id and connection id come from the registry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    /// The key the client connects under.
    pub key: OwnerKey,
    /// The authenticated user (1..=1024 bytes); [`super::Operation::uid`] returns it.
    pub uid: String,
    /// The session generation (non-zero).
    pub session_generation: u64,
    /// The owner generation (non-zero).
    pub owner_generation: u64,
}

impl Claim {
    /// Reserve's input checks: the key, the UID, both generations non-zero.
    pub fn validate(&self) -> Result<(), IdentityError> {
        self.key.validate()?;
        if !valid_identity(&self.uid, IDENTITY_MAX) {
            return Err(IdentityError::Uid);
        }
        if self.session_generation == 0 || self.owner_generation == 0 {
            return Err(IdentityError::ZeroId);
        }
        Ok(())
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner {
            key: OwnerKey::new("n", "c"),
            session_generation: 1,
            owner_generation: 2,
            node_id: 3,
            boot_id: "b".into(),
            connection_id: 4,
        }
    }

    #[test]
    fn valid_identity_is_upstreams() {
        assert!(valid_identity("a", 1));
        assert!(!valid_identity("", 10));
        assert!(!valid_identity("ab", 1));
        assert!(valid_identity(&"x".repeat(1024), 1024));
        assert!(!valid_identity(&"x".repeat(1025), 1024));
        // Bytes, not characters: "é" is two bytes.
        assert!(!valid_identity("é", 1));
        assert!(!valid_identity("a\0b", 10));
        assert!(!valid_identity(" \t\n", 10));
        assert!(
            !valid_identity("\u{3000}", 10),
            "TrimSpace trims Unicode spaces"
        );
        assert!(valid_identity(" a ", 10));
        assert!(!valid_identity_bytes(b"\xff", 10));
        assert!(valid_identity_bytes(b"ok", 10));
    }

    #[test]
    fn owner_validation_checks_every_field() {
        assert_eq!(owner().validate(), Ok(()));
        let mut o = owner();
        o.key.namespace.clear();
        assert_eq!(o.validate(), Err(IdentityError::Namespace));
        let mut o = owner();
        o.key.client_id = "\0".into();
        assert_eq!(o.validate(), Err(IdentityError::ClientId));
        for zero in 0..4 {
            let mut o = owner();
            match zero {
                0 => o.session_generation = 0,
                1 => o.owner_generation = 0,
                2 => o.node_id = 0,
                _ => o.connection_id = 0,
            }
            assert_eq!(o.validate(), Err(IdentityError::ZeroId));
        }
        let mut o = owner();
        o.boot_id = "x".repeat(129).into();
        assert_eq!(o.validate(), Err(IdentityError::BootId));
    }

    #[test]
    fn claims_need_a_uid_and_generations() {
        let claim = Claim {
            key: OwnerKey::new("n", "c"),
            uid: "alice".into(),
            session_generation: 1,
            owner_generation: 1,
        };
        assert_eq!(claim.validate(), Ok(()));
        let mut c = claim.clone();
        c.uid = " ".into();
        assert_eq!(c.validate(), Err(IdentityError::Uid));
        let mut c = claim;
        c.owner_generation = 0;
        assert_eq!(c.validate(), Err(IdentityError::ZeroId));
    }
}
