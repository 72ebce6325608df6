//! [`Operation`]: one admitted scope of an owner.

use super::error::OwnerError;
use super::registry::OwnerHandle;
use super::wait::Budget;
use crate::sync::{AtomicU64, Ordering};

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
    /// 0 while live; once done, 1 + the cancellation's first cause (`Cancellation` as `u64`).
    done: AtomicU64,
}

/// Why an operation's cancellation was raised: the first cause wins, as Go's
/// `context.Cause` keeps the first (a stop then a fence stays `Stopped`; a fence then done stays
/// `Fenced`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cancellation {
    /// The operation is done (upstream: `context.Canceled`).
    Done,
    /// Its owner was fenced (upstream's cause `ErrOwnerFenced`).
    Fenced,
    /// Admission stopped (upstream's cause `ErrOwnerStopped`).
    Stopped,
}

impl Cancellation {
    const fn encode(cause: Option<Cancellation>) -> u64 {
        match cause {
            None | Some(Cancellation::Done) => 1,
            Some(Cancellation::Fenced) => 2,
            Some(Cancellation::Stopped) => 3,
        }
    }

    const fn decode(state: u64) -> Cancellation {
        match state {
            2 => Cancellation::Fenced,
            3 => Cancellation::Stopped,
            _ => Cancellation::Done,
        }
    }
}

impl<'a> Operation<'a> {
    pub(crate) fn borrowed(owner: &'a OwnerHandle) -> Self {
        Self {
            owner: Holder::Borrowed(owner),
            done: AtomicU64::new(0),
        }
    }

    pub(crate) fn owned(owner: OwnerHandle) -> Result<Operation<'static>, OwnerError> {
        owner.begin_detached()?;
        Ok(Operation {
            owner: Holder::Owned(owner),
            done: AtomicU64::new(0),
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

    fn done_state(&self) -> u64 {
        // Ordering: Acquire; pairs with the AcqRel CAS in `done`.
        self.done.load(Ordering::Acquire)
    }

    fn is_done(&self) -> bool {
        self.done_state() != 0
    }

    /// Ends the scope. Idempotent: only the first call releases the place, and if it was the
    /// owner's last scope while its quiescence was pending it retires the owner.
    #[inline]
    pub fn done(&self) {
        // A done operation (a second call, the drop after a call) costs one load, no RMW.
        if self.is_done() {
            return;
        }
        // Ordering: AcqRel; the one winning CAS releases the scope (its effects are published
        // by the owner word's CAS in `end_scope`).
        if self
            .done
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let entry = &self.owner().entry;
        let before = entry.end_scope();
        if let Some(cause) = entry.cause_in(before) {
            // Ordering: Release; pairs with the Acquire load in `done_state`. Only this call
            // writes after the CAS; a reader in between sees `Done`, then the first cause.
            self.done
                .store(Cancellation::encode(Some(cause)), Ordering::Release);
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

    /// Why the operation's cancellation is raised, if it is: the first cause (polling costs a
    /// few loads).
    pub fn cancellation(&self) -> Option<Cancellation> {
        match self.done_state() {
            0 => self.owner().entry.cause(),
            state => Some(Cancellation::decode(state)),
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
