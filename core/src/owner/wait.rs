//! How long a blocking owner call may wait: a [`Budget`] (an optional deadline and an optional
//! [`CancelToken`]), Go's context in Rust form.
//!
//! Waits are cold (quiesce, close, sweep, a sweeper's stop): they block on a condition variable
//! and are woken by the state change they wait for, by the deadline, or by the token.

use std::time::{Duration, Instant};

use super::error::OwnerError;
use std::sync::Arc as StdArc;

use crate::sync::{AtomicBool, Condvar, Mutex, Ordering};

/// Something a blocked thread can be woken on: a lock over some state `T` and its condition
/// variable, with a count of the threads waiting, so that waking nobody costs no system call
/// (a condition variable's notify is a futex wake even when no thread waits).
#[derive(Debug, Default)]
pub(crate) struct Event<T> {
    state: Mutex<Guarded<T>>,
    cv: Condvar,
}

/// An event's state and its waiter count, both under the event's lock.
#[derive(Debug, Default)]
pub(crate) struct Guarded<T> {
    value: T,
    waiters: usize,
}

impl<T> std::ops::Deref for Guarded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> std::ops::DerefMut for Guarded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> Event<T> {
    /// Locks the state.
    pub(crate) fn lock(&self) -> crate::sync::MutexGuard<'_, Guarded<T>> {
        self.state.lock()
    }

    /// Wakes every waiter. Taking the lock first means a waiter that checked its condition
    /// under the lock is either already waiting (and is woken) or will see the change.
    pub(crate) fn notify(&self) {
        self.publish(|_| ());
    }

    /// Changes the state under the lock, then wakes every waiter (if any waits).
    pub(crate) fn publish<R>(&self, change: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self.state.lock();
        let r = change(&mut guard.value);
        let waiting = guard.waiters != 0;
        drop(guard);
        if waiting {
            self.cv.notify_all();
        }
        r
    }
}

/// What a blocking call waits on: a cheap, shareable way to an [`Event`] (a shared event of its
/// own, or the object that holds one inline), which a cancellation token can keep while the
/// wait runs.
pub(crate) trait Waitable: Clone + Send + Sync + 'static {
    /// The event's state.
    type State;
    /// The event.
    fn event(&self) -> &Event<Self::State>;
}

impl<T: Send + 'static> Waitable for StdArc<Event<T>> {
    type State = T;
    fn event(&self) -> &Event<T> {
        self
    }
}

/// A waitable of any kind, as a cancellation token holds it.
trait Notify: Send + Sync {
    fn notify(&self);
}

impl<W: Waitable> Notify for W {
    fn notify(&self) {
        self.event().notify();
    }
}

/// A cancellation signal a host raises from any thread; every wait that carries it ends with
/// [`OwnerError::Canceled`]. Cloning shares the signal.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: StdArc<TokenInner>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[derive(Default)]
struct TokenInner {
    cancelled: AtomicBool,
    /// The events of the waits in progress that carry this token.
    watchers: Mutex<Vec<StdArc<dyn Notify>>>,
}

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every wait that carries this token, now and later. Idempotent.
    pub fn cancel(&self) {
        // Ordering: Release; pairs with the Acquire load in `is_cancelled`, so a waiter that sees
        // the flag sees what the canceller did before.
        self.inner.cancelled.store(true, Ordering::Release);
        let watchers = std::mem::take(&mut *self.inner.watchers.lock());
        for event in watchers {
            event.notify();
        }
    }

    /// True once [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        // Ordering: Acquire; pairs with the Release store in `cancel`.
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// How many waits in progress carry this token.
    #[cfg(test)]
    pub(crate) fn watching(&self) -> usize {
        self.inner.watchers.lock().len()
    }

    fn watch(&self, event: StdArc<dyn Notify>) {
        self.inner.watchers.lock().push(event);
    }

    fn unwatch(&self, event: &StdArc<dyn Notify>) {
        self.inner
            .watchers
            .lock()
            .retain(|e| !StdArc::ptr_eq(e, event));
    }
}

/// A blocking call's allowance: until when it may wait (none: for as long as it takes) and the
/// token that cancels it.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    deadline: Option<Instant>,
    cancel: Option<CancelToken>,
    host_context: usize,
}

impl Budget {
    /// Waits as long as it takes.
    pub fn unbounded() -> Self {
        Self::default()
    }

    /// Waits at most `timeout` from now.
    pub fn timeout(timeout: Duration) -> Self {
        Self::default().with_timeout(timeout)
    }

    /// This budget, ending `timeout` from now at the latest.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        let at = Instant::now().checked_add(timeout);
        self.deadline = match (self.deadline, at) {
            (Some(d), Some(a)) => Some(d.min(a)),
            (d, a) => d.or(a),
        };
        self
    }

    /// This budget, also ended by `token`.
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// This budget, carrying `context` — an opaque word of the host's (a C ABI caller's
    /// `call_data`, a Go context's handle) — to the close callbacks it runs. wkcore never reads it.
    pub fn with_host_context(mut self, context: usize) -> Self {
        self.host_context = context;
        self
    }

    /// The host's opaque word ([`Budget::with_host_context`]; 0 when none was given).
    pub fn host_context(&self) -> usize {
        self.host_context
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The cancellation token, if any.
    pub fn cancel_token(&self) -> Option<&CancelToken> {
        self.cancel.as_ref()
    }

    /// `Err` once the budget is spent: cancelled (checked first, as Go reports a cancelled
    /// context's error whatever its deadline) or past its deadline.
    pub fn check(&self) -> Result<(), OwnerError> {
        if self.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Err(OwnerError::Canceled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(OwnerError::DeadlineExceeded);
        }
        Ok(())
    }

    /// Blocks on `waitable`'s event until `done()` holds (checked under the event's lock), the
    /// budget is spent, or forever. Whoever makes `done()` true must call [`Event::notify`]
    /// afterwards. A budget with a token lends the token a clone of `waitable` for the wait
    /// (one small allocation, on this cold path only), so the event outlives every notify the
    /// token may still send it.
    pub(crate) fn wait_on<W: Waitable>(
        &self,
        waitable: &W,
        mut done: impl FnMut(&mut W::State) -> bool,
    ) -> Result<(), OwnerError> {
        let watched: Option<StdArc<dyn Notify>> = self.cancel.as_ref().map(|token| {
            let n: StdArc<dyn Notify> = StdArc::new(waitable.clone());
            token.watch(n.clone());
            n
        });
        let event = waitable.event();
        let result = (|| {
            let mut guard = event.lock();
            loop {
                if done(&mut guard.value) {
                    return Ok(());
                }
                self.check()?;
                guard.waiters += 1;
                guard = match self.deadline {
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now());
                        event.cv.wait_timeout(guard, left)
                    }
                    None => event.cv.wait(guard),
                };
                guard.waiters -= 1;
            }
        })();
        if let (Some(token), Some(n)) = (&self.cancel, &watched) {
            token.unwatch(n);
        }
        result
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_budget_ends_by_deadline_or_token() {
        assert_eq!(Budget::unbounded().check(), Ok(()));
        assert_eq!(
            Budget::timeout(Duration::ZERO).check(),
            Err(OwnerError::DeadlineExceeded)
        );
        let token = CancelToken::new();
        let b = Budget::timeout(Duration::ZERO).with_cancel(token.clone());
        token.cancel();
        assert_eq!(b.check(), Err(OwnerError::Canceled));
    }

    #[test]
    fn a_wait_is_woken_by_its_token() {
        let event = StdArc::new(Event::<()>::default());
        let token = CancelToken::new();
        let budget = Budget::unbounded().with_cancel(token.clone());
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            token.cancel();
        });
        assert_eq!(budget.wait_on(&event, |_| false), Err(OwnerError::Canceled));
        t.join().unwrap();
        let timed = Budget::timeout(Duration::from_millis(5));
        assert_eq!(
            timed.wait_on(&event, |_| false),
            Err(OwnerError::DeadlineExceeded)
        );
        assert_eq!(Budget::unbounded().wait_on(&event, |_| true), Ok(()));
    }
}
