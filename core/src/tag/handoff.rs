//! Shard hand-offs: the leader → target-node delivery task, idempotent on `(channel_id,
//! channel_type, message_id, target_node_id, tag_key, tag_version)` through a coordination
//! [`Ledger`] keyed by [`HandoffKey`].
//!
//! The leader records each task before it sends it; a retry or a replay of the committed log
//! finds the record and sends nothing again. Once the target answers, ACK and retry belong to
//! the target; the leader keeps only the task's status: `accepted`, `tag_mismatch` and
//! `not_leader` are terminal (retained for late duplicates, then reclaimed), `retryable` removes
//! the record so the next attempt records it afresh. The target records what it receives in a
//! ledger of its own, so a duplicate delivery of one task is recognised there too.

use crate::coord::{
    HandoffKey, HostCode, InsertError, Ledger, NewRecord, Outcome, RecordState, TakeError,
};

/// The status a target reported for a hand-off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandoffStatus {
    /// The target took the task (ACK and retry are its own now).
    Accepted,
    /// The target could not take it now; the leader may hand it over again.
    Retryable,
    /// The target's tag is not this tag key and version.
    TagMismatch,
    /// The target is not where this channel's delivery belongs.
    NotLeader,
}

impl HandoffStatus {
    /// Every status.
    pub const ALL: [HandoffStatus; 4] = [
        HandoffStatus::Accepted,
        HandoffStatus::Retryable,
        HandoffStatus::TagMismatch,
        HandoffStatus::NotLeader,
    ];

    /// The status's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            HandoffStatus::Accepted => "accepted",
            HandoffStatus::Retryable => "retryable",
            HandoffStatus::TagMismatch => "tag_mismatch",
            HandoffStatus::NotLeader => "not_leader",
        }
    }

    /// The ledger outcome of a terminal status (`None` for `Retryable`).
    pub fn outcome(self) -> Option<Outcome> {
        let code = match self {
            HandoffStatus::Accepted => 256,
            HandoffStatus::TagMismatch => 257,
            HandoffStatus::NotLeader => 258,
            HandoffStatus::Retryable => return None,
        };
        HostCode::new(code).map(Outcome::Host)
    }

    /// The terminal status a ledger outcome records.
    pub fn from_outcome(outcome: Outcome) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.outcome() == Some(outcome))
    }
}

/// What [`ShardHandoffs::dispatch`] tells the caller to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dispatch {
    /// The task is recorded now: send it.
    Send,
    /// The task was recorded before and is still unanswered: do not send it again.
    InFlight,
    /// The target already answered with this terminal status: nothing to send.
    Done(HandoffStatus),
}

/// Why a hand-off call did nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandoffError {
    /// The ledger is full (nothing was evicted); retry after a reclaim.
    Full,
    /// No record of this task (never dispatched, or reclaimed).
    NotFound,
    /// `now` is the reserved time `u64::MAX`.
    InvalidTime,
}

/// The idempotent hand-off table (module docs).
pub struct ShardHandoffs {
    ledger: Ledger<HandoffKey>,
}

impl ShardHandoffs {
    /// A table over `ledger` (made with `LedgerKind::Handoff`).
    pub fn new(ledger: Ledger<HandoffKey>) -> Self {
        Self { ledger }
    }

    /// The ledger underneath (reclaim, reconcile and counts are its own).
    pub fn ledger(&self) -> &Ledger<HandoffKey> {
        &self.ledger
    }

    /// Records the task `key` unless it is recorded; says whether to send it. `deadline` is when
    /// the ledger's reconciler may time an unanswered task out.
    pub fn dispatch(
        &self,
        key: &HandoffKey,
        now: u64,
        deadline: u64,
    ) -> Result<Dispatch, HandoffError> {
        let record = NewRecord {
            id: 1,
            runner: 0,
            deadline,
        };
        match self.ledger.insert(key, record, now) {
            Ok(()) => Ok(Dispatch::Send),
            Err(InsertError::Exists(RecordState::Finalized(outcome))) => {
                Ok(match HandoffStatus::from_outcome(outcome) {
                    Some(status) => Dispatch::Done(status),
                    // Timed out by the reconciler: the task was never answered.
                    None => Dispatch::Done(HandoffStatus::Retryable),
                })
            }
            Err(InsertError::Exists(_)) => Ok(Dispatch::InFlight),
            Err(InsertError::Full) => Err(HandoffError::Full),
            Err(InsertError::InvalidTime) => Err(HandoffError::InvalidTime),
        }
    }

    /// Records the target's answer. A terminal status wins once (a duplicate answer is told the
    /// winner); `Retryable` removes the record so the next [`ShardHandoffs::dispatch`] sends.
    pub fn report(
        &self,
        key: &HandoffKey,
        status: HandoffStatus,
        now: u64,
    ) -> Result<HandoffStatus, HandoffError> {
        match status.outcome() {
            Some(outcome) => match self.ledger.finalize(key, outcome, 0, now) {
                Ok(()) => Ok(status),
                Err(crate::coord::FinalizeError::Duplicate(won)) => {
                    Ok(HandoffStatus::from_outcome(won).unwrap_or(HandoffStatus::Retryable))
                }
                Err(crate::coord::FinalizeError::NotFound) => Err(HandoffError::NotFound),
            },
            None => match self.ledger.take(key, 1) {
                Ok(()) => Ok(HandoffStatus::Retryable),
                Err(TakeError::Finalized(won)) => {
                    Ok(HandoffStatus::from_outcome(won).unwrap_or(HandoffStatus::Retryable))
                }
                Err(TakeError::Mismatch) | Err(TakeError::NotFound) => Err(HandoffError::NotFound),
            },
        }
    }

    /// The target side: true the first time `key` arrives, false for every duplicate.
    pub fn receive(&self, key: &HandoffKey, now: u64, deadline: u64) -> Result<bool, HandoffError> {
        Ok(self.dispatch(key, now, deadline)? == Dispatch::Send)
    }

    /// The task's status: `None` while unanswered or unknown.
    pub fn status(&self, key: &HandoffKey) -> Option<HandoffStatus> {
        match self.ledger.get(key)?.state {
            RecordState::Finalized(outcome) => HandoffStatus::from_outcome(outcome),
            _ => None,
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::coord::{LedgerConfig, LedgerKind};

    fn table() -> ShardHandoffs {
        ShardHandoffs::new(
            Ledger::new(LedgerConfig {
                capacity: 64,
                retention: 1_000,
                kind: LedgerKind::Handoff,
            })
            .unwrap(),
        )
    }

    fn key(message_id: u64, tag_version: u64) -> HandoffKey {
        HandoffKey::new(b"group:g1", 2, message_id, 3, b"leader-a-1", tag_version).unwrap()
    }

    #[test]
    fn a_retry_or_a_replay_hands_nothing_over_twice() {
        let t = table();
        let k = key(7, 1);
        assert_eq!(t.dispatch(&k, 10, u64::MAX), Ok(Dispatch::Send));
        assert_eq!(t.dispatch(&k, 11, u64::MAX), Ok(Dispatch::InFlight));
        assert_eq!(t.status(&k), None);
        assert_eq!(
            t.report(&k, HandoffStatus::Accepted, 12),
            Ok(HandoffStatus::Accepted)
        );
        // A log replay after the answer: nothing to send.
        assert_eq!(
            t.dispatch(&k, 13, u64::MAX),
            Ok(Dispatch::Done(HandoffStatus::Accepted))
        );
        // A late duplicate answer is told what won.
        assert_eq!(
            t.report(&k, HandoffStatus::NotLeader, 14),
            Ok(HandoffStatus::Accepted)
        );
        assert_eq!(t.status(&k), Some(HandoffStatus::Accepted));
        // Another tag version is another task.
        assert_eq!(t.dispatch(&key(7, 2), 15, u64::MAX), Ok(Dispatch::Send));
    }

    #[test]
    fn retryable_lets_the_next_attempt_send() {
        let t = table();
        let k = key(8, 1);
        assert_eq!(t.dispatch(&k, 10, u64::MAX), Ok(Dispatch::Send));
        assert_eq!(
            t.report(&k, HandoffStatus::Retryable, 11),
            Ok(HandoffStatus::Retryable)
        );
        assert_eq!(t.dispatch(&k, 12, u64::MAX), Ok(Dispatch::Send));
        assert_eq!(
            t.report(&k, HandoffStatus::TagMismatch, 13),
            Ok(HandoffStatus::TagMismatch)
        );
        // Terminal now: a retryable answer no longer reopens it.
        assert_eq!(
            t.report(&k, HandoffStatus::Retryable, 14),
            Ok(HandoffStatus::TagMismatch)
        );
        assert_eq!(
            t.dispatch(&k, 15, u64::MAX),
            Ok(Dispatch::Done(HandoffStatus::TagMismatch))
        );
        assert_eq!(
            t.report(&key(9, 1), HandoffStatus::Accepted, 16),
            Err(HandoffError::NotFound)
        );
        assert_eq!(
            t.dispatch(&key(9, 1), u64::MAX, u64::MAX),
            Err(HandoffError::InvalidTime)
        );
    }

    #[test]
    fn the_target_receives_a_task_once() {
        let t = table();
        let k = key(10, 4);
        assert_eq!(t.receive(&k, 1, u64::MAX), Ok(true));
        assert_eq!(t.receive(&k, 2, u64::MAX), Ok(false));
    }

    #[test]
    fn of_concurrent_dispatchers_exactly_one_sends() {
        let t = std::sync::Arc::new(table());
        for m in 0..32 {
            let sends = crate::sync::AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        if t.dispatch(&key(100 + m, 1), 1, u64::MAX) == Ok(Dispatch::Send) {
                            // Ordering: Relaxed; read after the scope joins.
                            sends.fetch_add(1, crate::sync::Ordering::Relaxed);
                        }
                    });
                }
            });
            assert_eq!(sends.load(crate::sync::Ordering::Relaxed), 1);
        }
    }

    #[test]
    fn statuses_round_trip_through_outcomes() {
        for s in HandoffStatus::ALL {
            match s.outcome() {
                Some(o) => assert_eq!(HandoffStatus::from_outcome(o), Some(s)),
                None => assert_eq!(s, HandoffStatus::Retryable),
            }
        }
    }
}
