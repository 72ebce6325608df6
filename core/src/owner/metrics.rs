//! The owner system's metric families and the registry's part in them:
//! `wukongim_mqtt_owner_work{state}` (a gauge per state, the snapshot's counts) and
//! `wukongim_mqtt_owner_sweep_total{event}` (sweep turns, owners visited, failed turns).
//!
//! # Orderings
//!
//! The stage counts are written only under the registry's lock (Relaxed: the lock orders them
//! for the snapshot, which reads them under it); a scrape reads each one Relaxed without the
//! lock, so it sees each value as it was at some moment, not all at one moment — as a scrape of
//! independent gauges does. The sweep counters are Relaxed statistics.

use std::sync::Arc;

use super::counts::OpsGauge;
use crate::metrics::{Family, MetricSource, MetricType, Registry};
use crate::sync::{AtomicBool, AtomicU64, Ordering};

/// `wukongim_mqtt_owner_work`.
pub const MQTT_OWNER_WORK: &str = "wukongim_mqtt_owner_work";
/// `wukongim_mqtt_owner_sweep_total`.
pub const MQTT_OWNER_SWEEP_TOTAL: &str = "wukongim_mqtt_owner_sweep_total";

/// A gauge of [`MQTT_OWNER_WORK`], in series order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkState {
    /// Owners held (pending, active, closing and uncertain).
    Held,
    /// Reserved, not yet activated.
    Pending,
    /// Activated.
    Active,
    /// Fenced and not yet retired (uncertain owners stay here).
    Closing,
    /// Admitted operation scopes.
    Operations,
    /// Entries in the deadline index.
    Deadlines,
    /// Owners marked uncertain.
    Uncertain,
}

impl WorkState {
    /// Every state, in series order.
    pub const ALL: [WorkState; 7] = [
        WorkState::Held,
        WorkState::Pending,
        WorkState::Active,
        WorkState::Closing,
        WorkState::Operations,
        WorkState::Deadlines,
        WorkState::Uncertain,
    ];

    /// The `state` label value.
    pub const fn label(self) -> &'static str {
        match self {
            WorkState::Held => "held",
            WorkState::Pending => "pending",
            WorkState::Active => "active",
            WorkState::Closing => "closing",
            WorkState::Operations => "operations",
            WorkState::Deadlines => "deadlines",
            WorkState::Uncertain => "uncertain",
        }
    }
}

/// An event of [`MQTT_OWNER_SWEEP_TOTAL`], in series order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SweepEvent {
    /// Sweep turns run.
    Turns,
    /// Due owners visited (fenced, rescheduled and quiesced).
    Visited,
    /// Turns that ended with an error.
    Failures,
}

impl SweepEvent {
    /// Every event, in series order.
    pub const ALL: [SweepEvent; 3] = [SweepEvent::Turns, SweepEvent::Visited, SweepEvent::Failures];

    /// The `event` label value.
    pub const fn label(self) -> &'static str {
        match self {
            SweepEvent::Turns => "turns",
            SweepEvent::Visited => "visited",
            SweepEvent::Failures => "failures",
        }
    }
}

/// `wukongim_mqtt_owner_work{state}`.
pub static OWNER_WORK: Family = Family {
    name: MQTT_OWNER_WORK,
    help: "MQTT owner registry work, by state.",
    metric_type: MetricType::Gauge,
    labels: &["state"],
    series: &[
        &["held"],
        &["pending"],
        &["active"],
        &["closing"],
        &["operations"],
        &["deadlines"],
        &["uncertain"],
    ],
};

/// `wukongim_mqtt_owner_sweep_total{event}`.
pub static OWNER_SWEEP: Family = Family {
    name: MQTT_OWNER_SWEEP_TOTAL,
    help: "MQTT owner sweeps: turns run, owners visited, failed turns.",
    metric_type: MetricType::Counter,
    labels: &["event"],
    series: &[&["turns"], &["visited"], &["failures"]],
};

/// Both owner families.
pub fn owner_families() -> impl Iterator<Item = &'static Family> {
    [&OWNER_WORK, &OWNER_SWEEP].into_iter()
}

/// Declares both owner families in `registry`, so they render at zero before any registry
/// exists.
pub fn declare_owner_families(registry: &Registry) {
    owner_families().for_each(|f| registry.declare(f));
}

/// One registry's counts: the stage gauges (written under the registry's lock), the operation
/// gauge and the sweep counters.
pub(crate) struct Stats {
    /// Held, pending, active, closing, deadlines, uncertain (the `WorkState`s but operations).
    stages: [AtomicU64; 6],
    pub(crate) ops: OpsGauge,
    sweep: [AtomicU64; 3],
    retired: AtomicBool,
}

/// The index of a cold gauge in `Stats::stages`.
#[derive(Clone, Copy)]
pub(crate) enum Cold {
    Held = 0,
    Pending = 1,
    Active = 2,
    Closing = 3,
    Deadlines = 4,
    Uncertain = 5,
}

impl Stats {
    pub(crate) fn new() -> Self {
        Self {
            stages: Default::default(),
            ops: OpsGauge::new(),
            sweep: Default::default(),
            retired: AtomicBool::new(false),
        }
    }

    /// A cold gauge (module docs).
    pub(crate) fn get(&self, which: Cold) -> u64 {
        // Ordering: Relaxed (module docs).
        self.stages[which as usize].load(Ordering::Relaxed)
    }

    /// Adds `delta` (two's complement for a decrement) to a cold gauge; callers hold the
    /// registry's lock.
    pub(crate) fn add(&self, which: Cold, delta: i64) {
        let g = &self.stages[which as usize];
        // Ordering: Relaxed; written only under the registry's lock (module docs).
        g.store(
            g.load(Ordering::Relaxed).wrapping_add(delta as u64),
            Ordering::Relaxed,
        );
    }

    /// Sets a cold gauge; callers hold the registry's lock.
    pub(crate) fn set(&self, which: Cold, value: u64) {
        // Ordering: Relaxed, as in `add`.
        self.stages[which as usize].store(value, Ordering::Relaxed);
    }

    /// Counts `n` sweep events.
    pub(crate) fn sweep(&self, event: SweepEvent, n: u64) {
        // Ordering: Relaxed; a statistic.
        self.sweep[event as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The sweep counts.
    pub(crate) fn sweep_count(&self, event: SweepEvent) -> u64 {
        // Ordering: Relaxed; a statistic.
        self.sweep[event as usize].load(Ordering::Relaxed)
    }

    /// Marks the registry dropped: its gauges stop contributing, its sweep counts are kept.
    pub(crate) fn retire(&self) {
        // Ordering: Release; pairs with the Acquire load in `is_retired`, so a metrics registry
        // that sees the flag also sees the final counts.
        self.retired.store(true, Ordering::Release);
    }

    fn is_retired(&self) -> bool {
        // Ordering: Acquire; pairs with `retire`.
        self.retired.load(Ordering::Acquire)
    }

    fn work(&self, state: WorkState) -> u64 {
        match state {
            WorkState::Held => self.get(Cold::Held),
            WorkState::Pending => self.get(Cold::Pending),
            WorkState::Active => self.get(Cold::Active),
            WorkState::Closing => self.get(Cold::Closing),
            WorkState::Operations => self.ops.get(),
            WorkState::Deadlines => self.get(Cold::Deadlines),
            WorkState::Uncertain => self.get(Cold::Uncertain),
        }
    }
}

struct WorkSource(Arc<Stats>);
struct SweepSource(Arc<Stats>);

impl MetricSource for WorkSource {
    fn collect(&self, values: &mut [u64]) {
        for (value, state) in values.iter_mut().zip(WorkState::ALL) {
            *value += self.0.work(state);
        }
    }

    fn is_retired(&self) -> bool {
        self.0.is_retired()
    }
}

impl MetricSource for SweepSource {
    fn collect(&self, values: &mut [u64]) {
        for (value, event) in values.iter_mut().zip(SweepEvent::ALL) {
            *value += self.0.sweep_count(event);
        }
    }

    fn is_retired(&self) -> bool {
        self.0.is_retired()
    }
}

/// Registers a registry's stats as a source of both families.
pub(crate) fn register(registry: &Registry, stats: &Arc<Stats>) {
    registry.register(&OWNER_WORK, Arc::new(WorkSource(stats.clone())));
    registry.register(&OWNER_SWEEP, Arc::new(SweepSource(stats.clone())));
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn series_follow_the_enums() {
        for (i, s) in WorkState::ALL.iter().enumerate() {
            assert_eq!(OWNER_WORK.series[i], &[s.label()]);
        }
        for (i, e) in SweepEvent::ALL.iter().enumerate() {
            assert_eq!(OWNER_SWEEP.series[i], &[e.label()]);
        }
    }

    #[test]
    fn declared_families_render_every_series_at_zero() {
        let registry = Registry::new();
        declare_owner_families(&registry);
        let mut out = String::new();
        registry.render(&mut out);
        for s in WorkState::ALL {
            assert!(out.contains(&format!(
                "wukongim_mqtt_owner_work{{state=\"{}\"}} 0",
                s.label()
            )));
        }
        for e in SweepEvent::ALL {
            assert!(out.contains(&format!(
                "wukongim_mqtt_owner_sweep_total{{event=\"{}\"}} 0",
                e.label()
            )));
        }
    }
}
