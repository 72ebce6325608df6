//! [`Operation`]: one admitted scope of an owner.

use super::error::OwnerError;
use super::registry::OwnerHandle;
use super::wait::Budget;
use std::cell::Cell;

enum Holder<'a> {
    Borrowed(&'a OwnerHandle),
    Owned(OwnerHandle),
}

/// An admitted operation scope. It holds one of its owner's `max_operations` places until
/// [`Operation::done`] (or drop) releases it; cancellation — a fence, a stop — never does.
///
/// Begun through an [`OwnerHandle`] it borrows the handle (no reference count is touched);
/// begun by identity through the registry it owns a handle clone.
///
/// An operation belongs to one thread at a time: it is `Send` (hand it over by moving it) but
/// not `Sync`, so its done flag is a plain cell and ending the scope costs the owner word's one
/// CAS, not a second one on the flag. Other threads observe the owner through a cloned
/// [`OwnerHandle`]. (Hosts that share one operation between threads — the C ABI — keep their own
/// atomic done flag and use [`OwnerHandle::begin_detached`].)
pub struct Operation<'a> {
    owner: Holder<'a>,
    /// 0 while live; once done, 1 + the cancellation's first cause (`Cancellation::encode`).
    done: Cell<u64>,
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
            done: Cell::new(0),
        }
    }

    pub(crate) fn owned(owner: OwnerHandle) -> Result<Operation<'static>, OwnerError> {
        owner.begin_detached()?;
        Ok(Operation {
            owner: Holder::Owned(owner),
            done: Cell::new(0),
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
        self.done.get()
    }

    fn is_done(&self) -> bool {
        self.done_state() != 0
    }

    /// Ends the scope. Idempotent: only the first call releases the place, and if it was the
    /// owner's last scope while its quiescence was pending it retires the owner.
    #[inline]
    pub fn done(&self) {
        if self.is_done() {
            return;
        }
        self.done.set(1);
        let entry = &self.owner().entry;
        let before = entry.end_scope();
        if let Some(cause) = entry.cause_in(before) {
            self.done.set(Cancellation::encode(Some(cause)));
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
    /// error. Waiting releases nothing. A done operation returns at once; otherwise this waits
    /// for the owner's fence or the registry's stop ([`OwnerHandle::wait_cancelled`]).
    pub fn wait_cancelled(&self, budget: &Budget) -> Result<Cancellation, OwnerError> {
        match self.done_state() {
            0 => self.owner().wait_cancelled(budget),
            state => Ok(Cancellation::decode(state)),
        }
    }
}

impl Drop for Operation<'_> {
    /// Releases the scope if [`Operation::done`] was not called.
    #[inline]
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

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn an_operation_moves_between_threads() {
        fn send<T: Send>() {}
        send::<Operation<'static>>();
    }
}
