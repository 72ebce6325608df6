//! Mutex references of `wkcore::coord`: each primitive's contract written plainly over a
//! `Mutex<state>`, with the same outcome types.

use std::sync::Mutex;

use wkcore::coord::{Fire, TriggerError};

/// The reference of `wkcore::coord::Anchor`: `None` is unset.
#[derive(Debug, Default)]
pub struct MutexAnchor {
    value: Mutex<Option<u64>>,
}

impl MutexAnchor {
    /// An anchor holding `value` (`None`: unset).
    pub fn new(value: Option<u64>) -> Self {
        Self {
            value: Mutex::new(value),
        }
    }

    /// The anchor.
    pub fn get(&self) -> Option<u64> {
        *self.value.lock().unwrap()
    }

    /// `expected` → `next` if the anchor holds `expected`; `u64::MAX` is refused.
    pub fn advance(&self, expected: u64, next: u64) -> bool {
        let mut v = self.value.lock().unwrap();
        if expected == u64::MAX || next == u64::MAX || *v != Some(expected) {
            return false;
        }
        *v = Some(next);
        true
    }

    /// unset → `now`.
    pub fn anchor_unset(&self, now: u64) -> bool {
        let mut v = self.value.lock().unwrap();
        if now == u64::MAX || v.is_some() {
            return false;
        }
        *v = Some(now);
        true
    }

    /// Anchors, reports not due, or fires.
    pub fn try_fire(&self, now: u64, period: u64) -> Fire {
        let mut v = self.value.lock().unwrap();
        if now == u64::MAX {
            return Fire::Lost;
        }
        match *v {
            None => {
                *v = Some(now);
                Fire::AnchoredFirstSeen
            }
            Some(a) if now < a.saturating_add(period) => Fire::NotDue {
                due_at: a.saturating_add(period),
            },
            Some(a) => {
                *v = Some(now);
                Fire::Fired { previous: a }
            }
        }
    }
}

/// The reference of `wkcore::coord::ExclusiveTrigger`: (last run, active).
#[derive(Debug, Default)]
pub struct MutexExclusiveTrigger {
    state: Mutex<(u64, bool)>,
}

impl MutexExclusiveTrigger {
    /// An inactive key whose last run was `last_run` (clamped to `2^63 - 1`).
    pub fn new(last_run: u64) -> Self {
        Self {
            state: Mutex::new((last_run.min(u64::MAX >> 1), false)),
        }
    }

    /// Starts the next run, or says which run holds the key.
    pub fn trigger(&self) -> Result<u64, TriggerError> {
        let mut s = self.state.lock().unwrap();
        if s.1 {
            return Err(TriggerError::Busy { run: s.0 });
        }
        if s.0 == u64::MAX >> 1 {
            return Err(TriggerError::Exhausted);
        }
        *s = (s.0 + 1, true);
        Ok(s.0)
    }

    /// Ends `run` if it is the active one.
    pub fn finish(&self, run: u64) -> bool {
        let mut s = self.state.lock().unwrap();
        if s.1 && s.0 == run {
            s.1 = false;
            return true;
        }
        false
    }

    /// The active run.
    pub fn active(&self) -> Option<u64> {
        let s = self.state.lock().unwrap();
        s.1.then_some(s.0)
    }

    /// The last run started.
    pub fn last_run(&self) -> u64 {
        self.state.lock().unwrap().0
    }
}

/// The reference of `wkcore::coord::Flip`.
#[derive(Debug, Default)]
pub struct MutexFlip {
    state: Mutex<u64>,
}

impl MutexFlip {
    /// A flip in `state`.
    pub fn new(state: u64) -> Self {
        Self {
            state: Mutex::new(state),
        }
    }

    /// `from` → `to` if the state is `from` and they differ.
    pub fn flip(&self, from: u64, to: u64) -> bool {
        let mut s = self.state.lock().unwrap();
        if from == to || *s != from {
            return false;
        }
        *s = to;
        true
    }

    /// The state.
    pub fn get(&self) -> u64 {
        *self.state.lock().unwrap()
    }
}
