//! [`MutexSlot`]: upstream's admission algorithm under one mutex.
//!
//! It is the oracle of the model tests and the `mutex` baseline of the benchmarks, so it follows
//! upstream's `enqueueControl` / `takeControlBatch` / `releaseControlBatch` shape: a `Vec` of
//! controls appended under the lock, a take that swaps the whole vector with a spare one, the
//! callback run outside the lock, and the spare handed back afterwards.
//!
//! One deliberate difference, shared with
//! [`SlotAdmission`](wkcore::admission::SlotAdmission): a drain of fewer than all queued items is
//! allowed, and the background count drops by the background proposals taken. When a drain takes
//! everything (upstream's only case) that equals upstream's reset to zero.

use std::sync::Mutex;

use wkcore::admission::{
    AdmissionCounts, AdmissionError, AdmissionResult, BatchAdmission, Control, ControlKind,
    LimitsError, ProposalClass, Rejected, SlotLimits, SlotSnapshot,
};

struct Inner<T> {
    controls: Vec<Control<T>>,
    spare: Vec<Control<T>>,
    queued_background: u64,
    leader: bool,
    closed: bool,
    fatal: Option<u32>,
    config_change_pending: bool,
    counts: AdmissionCounts,
}

/// Upstream's admission under one `std::sync::Mutex`; see the module docs.
pub struct MutexSlot<T> {
    inner: Mutex<Inner<T>>,
    limit: u64,
    limit_background: u64,
}

impl<T> MutexSlot<T> {
    /// A follower slot with `limits`, nothing queued.
    pub fn new(limits: SlotLimits) -> Result<Self, LimitsError> {
        let limits = limits.validate()?;
        Ok(Self {
            inner: Mutex::new(Inner {
                controls: Vec::new(),
                spare: Vec::new(),
                queued_background: 0,
                leader: false,
                closed: false,
                fatal: None,
                config_change_pending: false,
                counts: AdmissionCounts::default(),
            }),
            limit: u64::from(limits.max_queued_controls),
            limit_background: u64::from(limits.max_queued_background_controls),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `enqueueControl`'s checks, in order, for one item; counts proposals.
    /// `pending` items of this call are decided but not yet appended.
    fn decide(
        &self,
        inner: &mut Inner<T>,
        kind: ControlKind,
        class: ProposalClass,
        pending: usize,
    ) -> Result<(), AdmissionError> {
        if inner.closed {
            return Err(AdmissionError::Closed);
        }
        if let Some(code) = inner.fatal {
            return Err(AdmissionError::Fatal(code));
        }
        let proposal = kind == ControlKind::Propose;
        let outcome = if kind.requires_leader() && !inner.leader {
            Err(AdmissionError::NotLeader)
        } else if kind == ControlKind::ConfigChange && inner.config_change_pending {
            return Err(AdmissionError::ConfigChangePending);
        } else if (inner.controls.len() + pending) as u64 >= self.limit {
            Err(AdmissionError::Busy)
        } else if proposal
            && class == ProposalClass::Background
            && inner.queued_background >= self.limit_background
        {
            Err(AdmissionError::Throttled)
        } else {
            Ok(())
        };
        if proposal {
            let result = match outcome {
                Ok(()) => AdmissionResult::Ok,
                Err(e) => e.result().unwrap_or(AdmissionResult::Busy),
            };
            inner.counts.add(class, result, 1);
        }
        if outcome.is_ok() {
            if proposal && class == ProposalClass::Background {
                inner.queued_background += 1;
            }
            if kind == ControlKind::ConfigChange {
                inner.config_change_pending = true;
            }
        }
        outcome
    }

    /// Admits one control action (upstream `enqueueControl`).
    pub fn admit(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        item: T,
    ) -> Result<(), Rejected<T>> {
        let mut inner = self.lock();
        match self.decide(&mut inner, kind, class, 0) {
            Ok(()) => {
                inner.controls.push(Control { kind, class, item });
                Ok(())
            }
            Err(error) => Err(Rejected { error, item }),
        }
    }

    /// Admits the longest prefix of `items` under one lock; the admitted prefix leaves `items`.
    pub fn admit_batch(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        items: &mut Vec<T>,
    ) -> BatchAdmission {
        let mut inner = self.lock();
        let (admitted, refused) = self.decide_run(&mut inner, kind, class, items.len());
        inner.controls.extend(
            items
                .drain(..admitted)
                .map(|item| Control { kind, class, item }),
        );
        BatchAdmission { admitted, refused }
    }

    /// Admits the longest prefix of `items` under one lock, copying it.
    pub fn admit_batch_copied(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        items: &[T],
    ) -> BatchAdmission
    where
        T: Copy,
    {
        let mut inner = self.lock();
        let (admitted, refused) = self.decide_run(&mut inner, kind, class, items.len());
        inner.controls.extend(
            items[..admitted]
                .iter()
                .map(|&item| Control { kind, class, item }),
        );
        BatchAdmission { admitted, refused }
    }

    fn decide_run(
        &self,
        inner: &mut Inner<T>,
        kind: ControlKind,
        class: ProposalClass,
        n: usize,
    ) -> (usize, Option<AdmissionError>) {
        for i in 0..n {
            if let Err(error) = self.decide(inner, kind, class, i) {
                // The rest would meet the same state, so they get the same outcome.
                if let Some(result) = error.result().filter(|_| kind == ControlKind::Propose) {
                    inner.counts.add(class, result, (n - i - 1) as u64);
                }
                return (i, Some(error));
            }
        }
        (n, None)
    }

    /// Takes up to `max` items in FIFO order (upstream `takeControlBatch`, the callback outside
    /// the lock, then `releaseControlBatch`).
    pub fn drain_with(&self, max: usize, mut f: impl FnMut(Control<T>)) -> usize {
        if max == 0 {
            return 0;
        }
        let mut batch = {
            let mut inner = self.lock();
            let mut batch = std::mem::take(&mut inner.spare);
            if max >= inner.controls.len() {
                std::mem::swap(&mut batch, &mut inner.controls);
                inner.queued_background = 0;
            } else {
                batch.extend(inner.controls.drain(..max));
                let taken_bg = batch
                    .iter()
                    .filter(|c| {
                        c.kind == ControlKind::Propose && c.class == ProposalClass::Background
                    })
                    .count() as u64;
                inner.queued_background -= taken_bg;
            }
            batch
        };
        let n = batch.len();
        for control in batch.drain(..) {
            f(control);
        }
        let mut inner = self.lock();
        if inner.spare.capacity() < batch.capacity() {
            inner.spare = batch;
        }
        n
    }

    /// Takes up to `max` items in FIFO order into `out`.
    pub fn drain(&self, max: usize, out: &mut Vec<Control<T>>) -> usize {
        self.drain_with(max, |c| out.push(c))
    }

    /// Becomes leader.
    pub fn set_leader(&self) {
        self.lock().leader = true;
    }

    /// Becomes follower.
    pub fn demote(&self) {
        self.lock().leader = false;
    }

    /// Closes the slot.
    pub fn close(&self) {
        self.lock().closed = true;
    }

    /// Records a fatal code; the first wins.
    pub fn fail(&self, code: u32) -> bool {
        let mut inner = self.lock();
        if inner.fatal.is_some() {
            return false;
        }
        inner.fatal = Some(code);
        true
    }

    /// The pending config change resolved.
    pub fn config_change_resolved(&self) {
        self.lock().config_change_pending = false;
    }

    /// The slot's flags and queue depth.
    pub fn snapshot(&self) -> SlotSnapshot {
        let inner = self.lock();
        SlotSnapshot {
            leader: inner.leader,
            closed: inner.closed,
            fatal: inner.fatal,
            config_change_pending: inner.config_change_pending,
            queued: inner.controls.len() as u32,
            queued_background: inner.queued_background as u32,
        }
    }

    /// Outcome counts, `[class][result]`.
    pub fn counters(&self) -> AdmissionCounts {
        self.lock().counts
    }
}
