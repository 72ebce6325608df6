//! The retirement proof of a boot, and the isolation answer a node gives for any owner.

use std::sync::Arc;

use super::error::OwnerError;
use super::identity::Owner;
use super::registry::OwnerRegistry;
use super::wait::Budget;

/// Proof that a boot of a node holds no owner any more: minted by
/// [`OwnerRegistry::retirement`] once admission stopped and nothing is held, and persisted by
/// the host so a later boot can answer for this one's owners.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RetiredBoot {
    /// The node.
    pub node_id: u64,
    /// The retired boot.
    pub boot_id: Arc<str>,
    /// The last connection id that boot issued.
    pub last_connection_id: u64,
}

impl RetiredBoot {
    /// True if this proof covers `owner`: the same node and boot, and an id it issued.
    pub fn covers(&self, owner: &Owner) -> bool {
        owner.node_id == self.node_id
            && *owner.boot_id == *self.boot_id
            && owner.connection_id <= self.last_connection_id
    }
}

/// Upstream's `Isolation{Owners, Retired}`: who answers whether an owner is isolated.
#[derive(Clone, Copy, Debug)]
pub struct Isolation<'a> {
    /// This boot's registry, if the node runs one.
    pub registry: Option<&'a OwnerRegistry>,
    /// The persisted proofs of this node's earlier boots.
    pub retired: &'a [RetiredBoot],
}

impl Isolation<'_> {
    /// `Invalid` for a malformed owner; `Unknown` for another node (or, without a registry, any
    /// owner not covered by a proof); this boot's owners are quiesced by the registry; another
    /// boot's are proven absent by its proof when one covers them (an id it issued), else
    /// `Unknown` (a future id, or no proof).
    pub fn quiesce(&self, owner: &Owner, budget: &Budget) -> Result<(), OwnerError> {
        owner.validate().map_err(|_| OwnerError::Invalid)?;
        match self.registry {
            Some(r) if owner.node_id != r.node_id() => Err(OwnerError::Unknown),
            Some(r) if *owner.boot_id == *r.boot_id() => r.quiesce(owner, budget),
            _ => {
                if self.retired.iter().any(|p| p.covers(owner)) {
                    Ok(())
                } else {
                    Err(OwnerError::Unknown)
                }
            }
        }
    }
}
