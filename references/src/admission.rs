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
//!
//! What wkcore adds to upstream's interface is written here plainly too: positions are the count
//! of items admitted before (modulo `2^27`); a config change's ticket is the next odd value of a
//! serial that its resolve makes even again (`SlotAdmission`'s `config_change.rs`); queued
//! proposals are counted as they are appended and taken.

use std::sync::Mutex;

use wkcore::admission::{
    Admission, AdmissionCounts, AdmissionError, AdmissionResult, BatchAdmission, ConfigChangeError,
    ConfigChangeTicket, Control, ControlKind, Drained, LimitsError, ProposalClass, Rejected,
    SlotLimits, SlotSnapshot, POSITION_MODULUS,
};

struct Inner<T> {
    controls: Vec<Control<T>>,
    spare: Vec<Control<T>>,
    queued_background: u64,
    queued_proposals: u64,
    /// Items admitted so far: the next item's position (before the modulus).
    admitted: u64,
    /// Items taken so far: the next taken item's position (before the modulus).
    taken: u64,
    /// Even: no config change pending; odd: the pending change's ticket.
    config_serial: u64,
    leader: bool,
    closed: bool,
    fatal: Option<u32>,
    config_change_pending: bool,
    counts: AdmissionCounts,
}

impl<T> Inner<T> {
    /// Appends admitted items of `kind` (positions are handed out in order) and returns the
    /// first's position.
    fn append(&mut self, kind: ControlKind, items: impl Iterator<Item = Control<T>>) -> u64 {
        let first = self.admitted % POSITION_MODULUS;
        let before = self.controls.len();
        self.controls.extend(items);
        let added = (self.controls.len() - before) as u64;
        if kind == ControlKind::Propose {
            self.queued_proposals += added;
        }
        self.admitted += added;
        first
    }

    /// The ticket of a config change this call admitted (`decide` set the pending flag).
    fn issue_ticket(&mut self) -> ConfigChangeTicket {
        self.config_serial += 1;
        ConfigChangeTicket::from_raw(self.config_serial).expect("odd, never 0")
    }
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
                queued_proposals: 0,
                admitted: 0,
                taken: 0,
                config_serial: 0,
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
    ) -> Result<Admission, Rejected<T>> {
        let mut inner = self.lock();
        match self.decide(&mut inner, kind, class, 0) {
            Ok(()) => {
                let position = inner.admitted % POSITION_MODULUS;
                inner.controls.push(Control { kind, class, item });
                inner.admitted += 1;
                inner.queued_proposals += u64::from(kind == ControlKind::Propose);
                let config_change =
                    (kind == ControlKind::ConfigChange).then(|| inner.issue_ticket());
                Ok(Admission {
                    position,
                    config_change,
                })
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
        let first = inner.append(
            kind,
            items
                .drain(..admitted)
                .map(|item| Control { kind, class, item }),
        );
        Self::batch(&mut inner, kind, admitted, refused, first)
    }

    fn batch(
        inner: &mut Inner<T>,
        kind: ControlKind,
        admitted: usize,
        refused: Option<AdmissionError>,
        first: u64,
    ) -> BatchAdmission {
        BatchAdmission {
            admitted,
            refused,
            first_position: if admitted > 0 { first } else { 0 },
            config_change: (kind == ControlKind::ConfigChange && admitted > 0)
                .then(|| inner.issue_ticket()),
        }
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
        let first = inner.append(
            kind,
            items[..admitted]
                .iter()
                .map(|&item| Control { kind, class, item }),
        );
        Self::batch(&mut inner, kind, admitted, refused, first)
    }

    /// Admits the longest prefix of `n` copies of `item` under one lock.
    pub fn admit_batch_repeat(
        &self,
        kind: ControlKind,
        class: ProposalClass,
        n: usize,
        item: T,
    ) -> BatchAdmission
    where
        T: Copy,
    {
        let mut inner = self.lock();
        let (admitted, refused) = self.decide_run(&mut inner, kind, class, n);
        let first = inner.append(kind, (0..admitted).map(|_| Control { kind, class, item }));
        Self::batch(&mut inner, kind, admitted, refused, first)
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
    pub fn drain_with(&self, max: usize, mut f: impl FnMut(Control<T>)) -> Drained {
        if max == 0 {
            return Drained {
                count: 0,
                first_position: self.lock().taken % POSITION_MODULUS,
            };
        }
        let (first_position, mut batch) = {
            let mut inner = self.lock();
            let first_position = inner.taken % POSITION_MODULUS;
            let mut batch = std::mem::take(&mut inner.spare);
            if max >= inner.controls.len() {
                std::mem::swap(&mut batch, &mut inner.controls);
                inner.queued_background = 0;
                inner.queued_proposals = 0;
            } else {
                batch.extend(inner.controls.drain(..max));
                let (mut proposals, mut background) = (0, 0);
                for c in &batch {
                    if c.kind == ControlKind::Propose {
                        proposals += 1;
                        background += u64::from(c.class == ProposalClass::Background);
                    }
                }
                inner.queued_background -= background;
                inner.queued_proposals -= proposals;
            }
            inner.taken += batch.len() as u64;
            (first_position, batch)
        };
        let count = batch.len();
        for control in batch.drain(..) {
            f(control);
        }
        let mut inner = self.lock();
        if inner.spare.capacity() < batch.capacity() {
            inner.spare = batch;
        }
        Drained {
            count,
            first_position,
        }
    }

    /// Takes up to `max` items in FIFO order into `out`.
    pub fn drain(&self, max: usize, out: &mut Vec<Control<T>>) -> Drained {
        self.drain_with(max, |c| out.push(c))
    }

    /// Takes up to `max` items in FIFO order and drops them.
    pub fn take(&self, max: usize) -> Drained {
        self.drain_with(max, drop)
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

    /// The config change admitted with `ticket` resolved; any other ticket is stale.
    pub fn resolve_config_change(
        &self,
        ticket: ConfigChangeTicket,
    ) -> Result<(), ConfigChangeError> {
        let mut inner = self.lock();
        if ticket.get() % 2 == 0 || ticket.get() != inner.config_serial {
            return Err(ConfigChangeError::Stale);
        }
        inner.config_serial += 1;
        inner.config_change_pending = false;
        Ok(())
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
            queued_proposals: inner.queued_proposals as u32,
        }
    }

    /// Outcome counts, `[class][result]`.
    pub fn counters(&self) -> AdmissionCounts {
        self.lock().counts
    }
}
