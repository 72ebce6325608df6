//! [`ExclusiveTrigger`]: "is a run active? if not, start run N + 1" as one transition.

use std::fmt;

use crate::sync::{AtomicU64, Ordering};

const ACTIVE: u64 = 1;
/// The largest run number the word holds (63 bits).
const MAX_RUN: u64 = u64::MAX >> 1;

/// One key's run state, `{run number, active}` in one word: a trigger moves it from inactive
/// with number N to active with number N + 1 in one conditional transition, so the check ("no
/// run is active") and the act ("take the next number and record it") cannot be split. Of any
/// number of concurrent triggers exactly one starts a run; every other is refused with the run
/// that holds the key. [`ExclusiveTrigger::finish`] makes the key inactive again, only for the
/// run that holds it.
///
/// # Orderings
///
/// See the module docs: a winning transition is `AcqRel`, loads are `Acquire`; so the trigger
/// that starts run N + 1 sees what run N's finisher wrote before finishing.
#[derive(Debug)]
pub struct ExclusiveTrigger {
    word: AtomicU64,
}

/// Why [`ExclusiveTrigger::trigger`] did not start a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerError {
    /// Run `run` holds the key.
    Busy {
        /// The active run.
        run: u64,
    },
    /// The run numbers are used up (`2^63 - 1` runs).
    Exhausted,
}

impl fmt::Display for TriggerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TriggerError::Busy { run } => write!(f, "run {run} is active"),
            TriggerError::Exhausted => f.write_str("run numbers exhausted"),
        }
    }
}

impl std::error::Error for TriggerError {}

impl Default for ExclusiveTrigger {
    fn default() -> Self {
        Self::new(0)
    }
}

impl ExclusiveTrigger {
    /// An inactive key whose last run was `last_run` (0: none yet); the next trigger starts
    /// `last_run + 1`. Numbers above `2^63 - 1` are clamped to it.
    pub fn new(last_run: u64) -> Self {
        Self {
            word: AtomicU64::new(last_run.min(MAX_RUN) << 1),
        }
    }

    /// Starts the next run and returns its number, or says which run holds the key.
    ///
    /// Lock-free: a lost CAS means the word changed; the call is refused if a run is now active
    /// and retries only if another caller both started and finished a run meanwhile.
    pub fn trigger(&self) -> Result<u64, TriggerError> {
        // Ordering: Acquire; pairs with the AcqRel transitions (module docs).
        let mut current = self.word.load(Ordering::Acquire);
        loop {
            let next = next_run(current)?;
            // Ordering: AcqRel on success, Acquire on failure (module docs).
            match self.word.compare_exchange(
                current,
                next << 1 | ACTIVE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(next),
                Err(actual) => current = actual,
            }
        }
    }

    /// Ends run `run`: true if it was the active run (now inactive); false otherwise (another
    /// run holds the key, or none does), and nothing changes.
    pub fn finish(&self, run: u64) -> bool {
        if run == 0 || run > MAX_RUN {
            return false;
        }
        // Ordering: AcqRel on success, Acquire on failure (module docs).
        self.word
            .compare_exchange(
                run << 1 | ACTIVE,
                run << 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// The active run, if any.
    pub fn active(&self) -> Option<u64> {
        // Ordering: Acquire; as in `trigger`.
        let w = self.word.load(Ordering::Acquire);
        (w & ACTIVE != 0).then_some(w >> 1)
    }

    /// The number of the last run started (0 if none).
    pub fn last_run(&self) -> u64 {
        // Ordering: Acquire; as in `trigger`.
        self.word.load(Ordering::Acquire) >> 1
    }
}

/// The pure part of a trigger: the run to start from `word`, or why not.
fn next_run(word: u64) -> Result<u64, TriggerError> {
    let run = word >> 1;
    if word & ACTIVE != 0 {
        return Err(TriggerError::Busy { run });
    }
    if run == MAX_RUN {
        return Err(TriggerError::Exhausted);
    }
    Ok(run + 1)
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn concurrent_triggers_record_one_run_and_refuse_the_rest_with_its_number() {
        let t = ExclusiveTrigger::default();
        let results = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| results.lock().unwrap().push(t.trigger()));
            }
        });
        let results = results.into_inner().unwrap();
        assert_eq!(results.iter().filter(|r| **r == Ok(1)).count(), 1);
        assert!(results
            .iter()
            .all(|r| *r == Ok(1) || *r == Err(TriggerError::Busy { run: 1 })));
        assert_eq!(t.active(), Some(1));
        assert!(t.finish(1));
        assert_eq!(t.active(), None);
        assert_eq!(
            t.trigger(),
            Ok(2),
            "after it finishes, the next trigger gets number + 1"
        );
    }

    #[test]
    fn finish_only_ends_the_run_that_holds_the_key() {
        let t = ExclusiveTrigger::new(41);
        assert!(!t.finish(42), "nothing active");
        assert_eq!(t.trigger(), Ok(42));
        assert!(!t.finish(41));
        assert!(!t.finish(0));
        assert!(!t.finish(u64::MAX));
        assert_eq!(t.active(), Some(42));
        assert!(t.finish(42));
        assert!(!t.finish(42), "a second finish is a no-op");
        assert_eq!(t.last_run(), 42);
    }

    #[test]
    fn run_numbers_run_out_without_wrapping() {
        let t = ExclusiveTrigger::new(u64::MAX);
        assert_eq!(t.last_run(), MAX_RUN);
        assert_eq!(t.trigger(), Err(TriggerError::Exhausted));
        assert_eq!(t.active(), None);
    }
}
