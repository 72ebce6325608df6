//! [`Operation`]: one admitted scope of an owner.

use super::error::OwnerError;
use super::registry::OwnerHandle;
use super::wait::Budget;
use crate::sync::{AtomicBool, Ordering};

enum Holder<'a> {
    Borrowed(&'a OwnerHandle),
    Owned(OwnerHandle),
}

/// An admitted operation scope. It holds one of its owner's `max_operations` places until
/// [`Operation::done`] (or drop) releases it; cancellation — a fence, a stop — never does.
///
/// Begun through an [`OwnerHandle`] it borrows the handle (no reference count is touched);
/// begun by identity through the registry it owns a handle clone.
pub struct Operation<'a> {
    owner: Holder<'a>,
    done: AtomicBool,
}

/// Why an operation's cancellation was raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cancellation {
    /// The operation is done.
    Done,
    /// Its owner was fenced (upstream's cause `ErrOwnerFenced`).
    Fenced,
    /// Admission stopped (upstream's cause `ErrOwnerStopped`).
    Stopped,
}

impl<'a> Operation<'a> {
    pub(crate) fn borrowed(owner: &'a OwnerHandle) -> Self {
        Self {
            owner: Holder::Borrowed(owner),
            done: AtomicBool::new(false),
        }
    }

    pub(crate) fn owned(owner: OwnerHandle) -> Result<Operation<'static>, OwnerError> {
        owner.begin_detached()?;
        Ok(Operation {
            owner: Holder::Owned(owner),
            done: AtomicBool::new(false),
        })
    }

    /// The owner this operation runs for.
    pub fn owner(&self) -> &OwnerHandle {
        match &self.owner {
            Holder::Borrowed(h) => h,
            Holder::Owned(h) => h,
        }
    }

    /// The UID reserved with the owner (also after done).
    pub fn uid(&self) -> &str {
        self.owner().uid()
    }

    fn is_done(&self) -> bool {
        // Ordering: Acquire; pairs with the AcqRel swap in `done`.
        self.done.load(Ordering::Acquire)
    }

    /// Ends the scope. Idempotent: only the first call releases the place, and if it was the
    /// owner's last scope while its quiescence was pending it retires the owner.
    pub fn done(&self) {
        // Ordering: AcqRel; the one winning swap releases the scope (its effects are published
        // by the owner word's CAS in `end_detached`).
        if !self.done.swap(true, Ordering::AcqRel) {
            self.owner().end_detached();
        }
    }

    /// `Ok` while the owner is active, its lease holds and this operation is not done; uses no
    /// extra place. `Fenced` if done, stopped or no longer active — and an expired lease fences
    /// the owner here; `Canceled` once the operation's cancellation is raised (upstream returns
    /// the context's error).
    pub fn check(&self) -> Result<(), OwnerError> {
        self.owner().check_detached(self.is_done())
    }

    /// Marks the owner's effect uncertain, for good, and fences it: its quiescence can never be
    /// proven (`Unknown`), and it keeps its place in the registry. Idempotent; `Fenced` once this
    /// operation is done or the owner retired.
    pub fn mark_uncertain(&self) -> Result<(), OwnerError> {
        self.owner().mark_uncertain_detached(self.is_done())
    }

    /// Why the operation's cancellation is raised, if it is (polling costs two loads).
    pub fn cancellation(&self) -> Option<Cancellation> {
        if self.is_done() {
            Some(Cancellation::Done)
        } else if self.owner().stage() == super::state::Stage::Closing {
            Some(Cancellation::Fenced)
        } else if self.owner().entry.core.is_stopped() {
            Some(Cancellation::Stopped)
        } else {
            None
        }
    }

    /// True once the cancellation is raised.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_some()
    }

    /// Waits until the cancellation is raised, within `budget`; returns why, or the budget's
    /// error. Waiting releases nothing.
    pub fn wait_cancelled(&self, budget: &Budget) -> Result<Cancellation, OwnerError> {
        self.owner().wait_cancelled(budget, || self.is_done())?;
        Ok(self.cancellation().unwrap_or(Cancellation::Done))
    }
}

impl Drop for Operation<'_> {
    /// Releases the scope if [`Operation::done`] was not called.
    fn drop(&mut self) {
        self.done();
    }
}

impl std::fmt::Debug for Operation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("connection_id", &self.owner().connection_id())
            .field("done", &self.is_done())
            .finish()
    }
}
