//! The owner state word: everything begin, done and check decide on, in one `u64`.
//!
//! | bits  | field | meaning |
//! |-------|-------|---------|
//! | 0–10  | `OPS` | admitted operation scopes (≤ 1024) |
//! | 11–12 | `STAGE` | 1 pending, 2 active, 3 closing |
//! | 13    | `UNCERTAIN` | an operation's effect is uncertain; never cleared |
//! | 14    | `TRANSPORT_CLOSED` | a close callback succeeded |
//! | 15    | `COMPLETE` | closing ∧ transport closed ∧ no scopes: retired, or (uncertain) a barrier forever |
//! | 16    | — | free |
//! | 17–48 | `LEASE_SEQ` | bumped by every activation and renewal |
//! | 49    | `STOPPED` | admission stopped while the owner was not yet fenced (the cancellation's first cause) |
//!
//! `COMPLETE` is set by the one CAS that makes the retirement condition true — a done that drops
//! the last scope, or the quiesce that records the transport closed — so retirement happens
//! exactly once, by whichever of the two comes last.

use crate::word::{disjoint, Field};

pub(crate) const OPS: Field = Field::new(0, 11);
pub(crate) const STAGE: Field = Field::new(11, 2);
pub(crate) const UNCERTAIN: Field = Field::flag(13);
pub(crate) const TRANSPORT_CLOSED: Field = Field::flag(14);
pub(crate) const COMPLETE: Field = Field::flag(15);
pub(crate) const LEASE_SEQ: Field = Field::new(17, 32);
pub(crate) const STOPPED: Field = Field::flag(49);
const _: () = assert!(disjoint(&[
    OPS,
    STAGE,
    UNCERTAIN,
    TRANSPORT_CLOSED,
    COMPLETE,
    LEASE_SEQ,
    STOPPED
]));
const _: () = assert!(OPS.max() >= super::options::MAX_OPERATIONS_MAX as u64);

/// An owner's stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Reserved, not yet activated by a committed lease.
    Pending,
    /// Activated; admits operations while its lease lasts.
    Active,
    /// Fenced: admits nothing; waits for its transport to close and its scopes to finish.
    Closing,
}

/// A decoded state word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

impl Word {
    pub(crate) const PENDING: Word = Word(STAGE.put(1));

    #[inline]
    pub(crate) fn ops(self) -> u64 {
        OPS.get(self.0)
    }

    #[inline]
    pub(crate) fn stage(self) -> Stage {
        match STAGE.get(self.0) {
            1 => Stage::Pending,
            2 => Stage::Active,
            _ => Stage::Closing,
        }
    }

    /// `stage() == Stage::Active`, without decoding.
    #[inline]
    pub(crate) fn is_active(self) -> bool {
        STAGE.get(self.0) == 2
    }

    /// `stage() == Stage::Closing`, without decoding.
    #[inline]
    pub(crate) fn is_closing(self) -> bool {
        STAGE.get(self.0) == 3
    }

    #[inline]
    pub(crate) fn with_stage(self, stage: Stage) -> Word {
        let v = match stage {
            Stage::Pending => 1,
            Stage::Active => 2,
            Stage::Closing => 3,
        };
        Word(STAGE.set(self.0, v))
    }

    #[inline]
    pub(crate) fn has(self, flag: Field) -> bool {
        flag.get(self.0) != 0
    }

    #[inline]
    pub(crate) fn with(self, flag: Field) -> Word {
        Word(flag.set(self.0, 1))
    }

    #[inline]
    pub(crate) fn with_ops(self, ops: u64) -> Word {
        Word(OPS.set(self.0, ops))
    }

    pub(crate) fn with_next_lease(self) -> Word {
        Word(LEASE_SEQ.add_wrapping(self.0, 1))
    }

    pub(crate) fn lease_seq(self) -> u64 {
        LEASE_SEQ.get(self.0)
    }

    /// True when this word satisfies the retirement condition but is not yet marked: closing,
    /// transport closed, no scopes, not complete.
    #[inline]
    pub(crate) fn retires(self) -> bool {
        self.is_closing() && self.has(TRANSPORT_CLOSED) && self.ops() == 0 && !self.has(COMPLETE)
    }

    /// `self`, marked complete if it satisfies the retirement condition.
    #[inline]
    pub(crate) fn settle(self) -> Word {
        if self.retires() {
            self.with(COMPLETE)
        } else {
            self
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_settle_marks_retirement() {
        let w = Word::PENDING;
        assert_eq!(w.stage(), Stage::Pending);
        let w = w.with_stage(Stage::Active).with_ops(1024);
        assert_eq!((w.stage(), w.ops()), (Stage::Active, 1024));
        let w = w.with_stage(Stage::Closing).with(TRANSPORT_CLOSED);
        assert!(!w.retires(), "scopes remain");
        let w = w.with_ops(0);
        assert!(w.retires());
        let s = w.settle();
        assert!(s.has(COMPLETE) && !s.retires());
        assert_eq!(s.settle(), s, "settling twice marks once");
        let seq = w.lease_seq();
        assert_eq!(w.with_next_lease().lease_seq(), seq + 1);
        assert_eq!(w.with_next_lease().stage(), Stage::Closing);
    }
}
