//! The kinds of control actions a slot's queue carries.

/// One of upstream's seven control kinds, numbered from 1 as upstream's `controlKind`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ControlKind {
    /// A Raft proposal; the only kind that counts toward the background limit and emits
    /// admission outcomes.
    Propose = 1,
    /// Start an election.
    Campaign = 2,
    /// A membership change; at most one may be pending.
    ConfigChange = 3,
    /// Hand leadership to another node.
    TransferLeader = 4,
    /// Compact the Raft log.
    CompactLog = 5,
    /// Capture a hash-slot snapshot.
    CaptureHashSlotSnapshot = 6,
    /// Refresh the slot's status.
    FreshStatus = 7,
}

impl ControlKind {
    /// All kinds in numeric order.
    pub const ALL: [ControlKind; 7] = [
        ControlKind::Propose,
        ControlKind::Campaign,
        ControlKind::ConfigChange,
        ControlKind::TransferLeader,
        ControlKind::CompactLog,
        ControlKind::CaptureHashSlotSnapshot,
        ControlKind::FreshStatus,
    ];

    /// The kind numbered `raw`, or `None` for an unknown number.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => ControlKind::Propose,
            2 => ControlKind::Campaign,
            3 => ControlKind::ConfigChange,
            4 => ControlKind::TransferLeader,
            5 => ControlKind::CompactLog,
            6 => ControlKind::CaptureHashSlotSnapshot,
            7 => ControlKind::FreshStatus,
            _ => return None,
        })
    }

    /// Whether admission requires the slot to be leader (Propose and ConfigChange only; the
    /// other kinds are admitted on followers too).
    #[inline]
    pub const fn requires_leader(self) -> bool {
        matches!(self, ControlKind::Propose | ControlKind::ConfigChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_numbers_round_trip_and_unknown_is_none() {
        for kind in ControlKind::ALL {
            assert_eq!(ControlKind::from_raw(kind as u32), Some(kind));
        }
        assert_eq!(ControlKind::from_raw(0), None);
        assert_eq!(ControlKind::from_raw(8), None);
    }
}
