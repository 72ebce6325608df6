//! Proposal classes: foreground (user-facing metadata writes) and background (retryable
//! projection and maintenance writes).

use std::fmt;

/// The QoS class of a proposal. Background proposals have their own cap, which leaves
/// foreground a reserve of the queue.
#[repr(u8)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProposalClass {
    /// The default: user-facing writes.
    #[default]
    Foreground = 0,
    /// Retryable projection and maintenance writes.
    Background = 1,
}

impl ProposalClass {
    /// Both classes, in index order.
    pub const ALL: [ProposalClass; 2] = [ProposalClass::Foreground, ProposalClass::Background];

    /// Normalizes a raw class as upstream's cluster layer does: `1` is background, anything
    /// else (including unknown values) is foreground.
    #[inline]
    pub const fn from_raw(raw: u32) -> Self {
        if raw == 1 {
            ProposalClass::Background
        } else {
            ProposalClass::Foreground
        }
    }

    /// Normalizes a class name as upstream multiraft does: exactly `"background"` is background,
    /// anything else (including `""`) is foreground.
    pub fn from_label(label: &str) -> Self {
        if label == "background" {
            ProposalClass::Background
        } else {
            ProposalClass::Foreground
        }
    }

    /// The metric label value: `"foreground"` or `"background"`.
    pub const fn label(self) -> &'static str {
        match self {
            ProposalClass::Foreground => "foreground",
            ProposalClass::Background => "background",
        }
    }

    /// 0 for foreground, 1 for background.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for ProposalClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_classes_normalize_to_foreground() {
        assert_eq!(ProposalClass::from_raw(0), ProposalClass::Foreground);
        assert_eq!(ProposalClass::from_raw(1), ProposalClass::Background);
        for raw in [2, 7, 255, u32::MAX] {
            assert_eq!(ProposalClass::from_raw(raw), ProposalClass::Foreground);
        }
        assert_eq!(
            ProposalClass::from_label("background"),
            ProposalClass::Background
        );
        for label in ["", "foreground", "Background", "bg"] {
            assert_eq!(ProposalClass::from_label(label), ProposalClass::Foreground);
        }
    }
}
