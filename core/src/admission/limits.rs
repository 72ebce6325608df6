//! Per-slot queue limits, normalized and validated as upstream.

use std::fmt;

/// A slot's queue limits. Zero means "default", as upstream's option normalization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotLimits {
    /// The total limit: every control kind counts (upstream `MaxQueuedControls`).
    pub max_queued_controls: u32,
    /// The background sub-limit: background proposals only (upstream
    /// `MaxQueuedBackgroundControls`).
    pub max_queued_background_controls: u32,
}

impl SlotLimits {
    /// The ceiling of either limit, `2^25`: upstream's largest accepted `MaxQueuedControls`.
    /// The state word counts modulo `2^27` (more than twice this), and the ring grows to the
    /// limit's next power of two only as positions are used.
    pub const MAX: u32 = 1 << 25;
    /// Upstream `defaultMaxQueuedControls`.
    pub const DEFAULT_MAX_QUEUED_CONTROLS: u32 = 8192;

    /// Limits as given; zeros are normalized by [`SlotLimits::normalized`].
    pub const fn new(max_queued_controls: u32, max_queued_background_controls: u32) -> Self {
        Self {
            max_queued_controls,
            max_queued_background_controls,
        }
    }

    /// Upstream normalization: a total of 0 becomes 8192; a background limit of 0 becomes half
    /// the total, at least 1.
    pub const fn normalized(self) -> Self {
        let total = if self.max_queued_controls == 0 {
            Self::DEFAULT_MAX_QUEUED_CONTROLS
        } else {
            self.max_queued_controls
        };
        let background = if self.max_queued_background_controls == 0 {
            let half = total / 2;
            if half == 0 {
                1
            } else {
                half
            }
        } else {
            self.max_queued_background_controls
        };
        Self::new(total, background)
    }

    /// Normalizes, then rejects a limit above [`SlotLimits::MAX`].
    ///
    /// Unlike upstream's signed options, a negative limit cannot be expressed; hosts with signed
    /// values (Go) reject negatives before calling.
    pub const fn validate(self) -> Result<Self, LimitsError> {
        let n = self.normalized();
        if n.max_queued_controls > Self::MAX {
            return Err(LimitsError::TooLarge {
                limit: n.max_queued_controls,
                max: Self::MAX,
            });
        }
        if n.max_queued_background_controls > Self::MAX {
            return Err(LimitsError::TooLarge {
                limit: n.max_queued_background_controls,
                max: Self::MAX,
            });
        }
        Ok(n)
    }
}

impl Default for SlotLimits {
    /// Upstream defaults: 8192 total, 4096 background.
    fn default() -> Self {
        Self::new(0, 0).normalized()
    }
}

/// Invalid limits.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitsError {
    /// A limit is above the ceiling.
    TooLarge {
        /// The offending limit.
        limit: u32,
        /// The ceiling, [`SlotLimits::MAX`].
        max: u32,
    },
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitsError::TooLarge { limit, max } => {
                write!(
                    f,
                    "wkcore: invalid options: queue limit {limit} is above {max}"
                )
            }
        }
    }
}

impl std::error::Error for LimitsError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream `TestNormalizeRaftOptionsDefaultsBackpressureLimits` (the two admission limits).
    #[test]
    fn normalize_raft_options_defaults_backpressure_limits() {
        let n = SlotLimits::new(0, 0).normalized();
        assert_eq!(n, SlotLimits::new(8192, 4096));
        assert_eq!(SlotLimits::default(), n);
    }

    #[test]
    fn background_default_is_half_at_least_one() {
        assert_eq!(SlotLimits::new(1, 0).normalized(), SlotLimits::new(1, 1));
        assert_eq!(SlotLimits::new(3, 0).normalized(), SlotLimits::new(3, 1));
        assert_eq!(SlotLimits::new(10, 0).normalized(), SlotLimits::new(10, 5));
        assert_eq!(
            SlotLimits::new(10, 20).normalized(),
            SlotLimits::new(10, 20)
        );
    }

    #[test]
    fn limits_above_the_ceiling_are_rejected() {
        assert!(SlotLimits::new(SlotLimits::MAX, 0).validate().is_ok());
        assert_eq!(
            SlotLimits::new(SlotLimits::MAX + 1, 0).validate(),
            Err(LimitsError::TooLarge {
                limit: SlotLimits::MAX + 1,
                max: SlotLimits::MAX
            })
        );
        assert!(SlotLimits::new(4, u32::MAX).validate().is_err());
    }
}
