//! Metric families, the registry that sums their sources, and Prometheus text exposition.
//!
//! A *family* is owned by the system that counts it: the system declares a static [`Family`]
//! (name, help, type, label names and the closed set of series it always reports) and registers
//! a [`MetricSource`] per counting object (a slot, an owner registry …) with a [`Registry`]. The
//! registry knows families, not systems: it sums every live source of a family per series on
//! demand, keeps the final values of retired sources of counter families (so every counter
//! series is monotonic), and renders any family in text format 0.0.4. The hot path never touches
//! shared metric state: a source's values are atomics owned by the object that decided.
//!
//! Adding a family is a static declaration and a `register` call in the system's own module;
//! nothing here changes. The process-wide registry ([`global`]) declares every system's families
//! when it is first used (the systems' own declarations, listed once in `metrics/systems.rs`), so
//! a fresh process renders each family at zero before it creates any object; a [`Registry::new`]
//! of the host's starts empty and declares a system's families when its first object registers.
//!
//! # Locking
//!
//! The registry's one mutex is taken when a source registers and on each snapshot or render:
//! both cold paths (slot creation, scrapes). A source's `collect` runs under it and must not call
//! back into the registry.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use crate::sync::Mutex;

mod systems;

/// The Prometheus type of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetricType {
    /// A monotonic total; values of retired sources are kept.
    Counter,
    /// A current value; retired sources stop contributing.
    Gauge,
}

impl MetricType {
    /// The name in a `# TYPE` line.
    pub const fn label(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
        }
    }
}

/// A metric family: everything but the values. Declared `static` by the system that owns it.
///
/// `series` is the closed set of label-value tuples the family always reports (zeros
/// included), in exposition order; each tuple has one value per label name.
#[derive(Debug, PartialEq, Eq)]
pub struct Family {
    /// The metric name, e.g. `wukongim_slot_proposal_admission_total`.
    pub name: &'static str,
    /// The `# HELP` text.
    pub help: &'static str,
    /// Counter or gauge.
    pub metric_type: MetricType,
    /// The label names, in order.
    pub labels: &'static [&'static str],
    /// The label values of every series, in order.
    pub series: &'static [&'static [&'static str]],
}

impl Family {
    /// The index of the series with these label values.
    pub fn series_index(&self, label_values: &[&str]) -> Option<usize> {
        self.series.iter().position(|s| *s == label_values)
    }

    /// Panics unless every series has one value per label (checked when a family registers).
    fn check(&self) {
        for series in self.series {
            assert_eq!(
                series.len(),
                self.labels.len(),
                "metric family {}: a series has the wrong number of label values",
                self.name
            );
        }
    }
}

/// Something that counts for one family: a slot's counters, a registry's gauges …
pub trait MetricSource: Send + Sync {
    /// Adds this source's current value of each series of its family to `values` (one entry
    /// per series, in the family's order).
    fn collect(&self, values: &mut [u64]);

    /// True once the source will not count any more. Values collected after this returned true
    /// are final: the registry folds them into the family's retired totals (counters) or drops
    /// them (gauges), and forgets the source.
    fn is_retired(&self) -> bool;
}

/// The values of one family at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilySnapshot {
    /// The family.
    pub family: &'static Family,
    /// One value per series, in the family's order.
    pub values: Vec<u64>,
}

impl FamilySnapshot {
    /// The value of the series with these label values.
    pub fn value(&self, label_values: &[&str]) -> Option<u64> {
        self.family
            .series_index(label_values)
            .map(|i| self.values[i])
    }
}

/// The values of every family of a registry, in registration order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// One entry per family.
    pub families: Vec<FamilySnapshot>,
}

impl MetricsSnapshot {
    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&FamilySnapshot> {
        self.families.iter().find(|f| f.family.name == name)
    }

    /// Writes every family in Prometheus text exposition format 0.0.4.
    pub fn render(&self, out: &mut String) {
        for f in &self.families {
            render_family(f, out);
        }
    }
}

/// Writes one family in Prometheus text exposition format 0.0.4.
pub fn render_family(snapshot: &FamilySnapshot, out: &mut String) {
    let family = snapshot.family;
    let name = family.name;
    // Writing to a String cannot fail.
    let _ = writeln!(out, "# HELP {name} {}", escape_help(family.help));
    let _ = writeln!(out, "# TYPE {name} {}", family.metric_type.label());
    for (series, value) in family.series.iter().zip(&snapshot.values) {
        out.push_str(name);
        if !family.labels.is_empty() {
            out.push('{');
            for (i, (label, label_value)) in family.labels.iter().zip(series.iter()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{label}=\"{}\"", escape_label_value(label_value));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {value}");
    }
}

fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label_value(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct FamilyState {
    family: &'static Family,
    live: Vec<Arc<dyn MetricSource>>,
    retired: Vec<u64>,
    live_after_fold: usize,
}

impl FamilyState {
    fn new(family: &'static Family) -> Self {
        family.check();
        Self {
            family,
            live: Vec::new(),
            retired: vec![0; family.series.len()],
            live_after_fold: 0,
        }
    }

    /// Sums live sources, folding retired ones into `retired` (counters) or dropping them.
    fn fold_and_sum(&mut self) -> Vec<u64> {
        let mut total = vec![0; self.family.series.len()];
        let mut last = vec![0; self.family.series.len()];
        let counter = self.family.metric_type == MetricType::Counter;
        let retired = &mut self.retired;
        self.live.retain(|source| {
            // `is_retired` first: if set, the values collected after it are final.
            let gone = source.is_retired();
            last.iter_mut().for_each(|v| *v = 0);
            source.collect(&mut last);
            let into = if !gone {
                &mut total
            } else if counter {
                &mut *retired
            } else {
                return false;
            };
            for (sum, v) in into.iter_mut().zip(&last) {
                *sum += v;
            }
            !gone
        });
        self.live_after_fold = self.live.len();
        for (sum, v) in total.iter_mut().zip(&self.retired) {
            *sum += v;
        }
        total
    }
}

/// A set of metric families and their sources; [`global`] is the process-wide one.
pub struct Registry {
    families: Mutex<Vec<FamilyState>>,
}

impl Registry {
    /// An empty registry (tests and embedders that want isolation make their own).
    pub fn new() -> Self {
        Self {
            families: Mutex::new(Vec::new()),
        }
    }

    /// Makes `family` part of every snapshot from now on, at zero until a source counts.
    /// Declaring a family twice is a no-op.
    pub fn declare(&self, family: &'static Family) {
        let mut families = self.families.lock();
        Self::state_of(&mut families, family);
    }

    /// Adds `source` to `family` (declaring it if need be).
    ///
    /// # Panics
    ///
    /// If another family with the same name but a different declaration is registered, or
    /// `family` is malformed (a series with the wrong number of label values): both are
    /// programming errors of the declaring system.
    pub fn register(&self, family: &'static Family, source: Arc<dyn MetricSource>) {
        let mut families = self.families.lock();
        let state = Self::state_of(&mut families, family);
        state.live.push(source);
        // Keep a process that creates and drops sources without scraping from growing the list.
        if state.live.len() >= 2 * state.live_after_fold + 64 {
            state.fold_and_sum();
        }
    }

    fn state_of<'a>(
        families: &'a mut Vec<FamilyState>,
        family: &'static Family,
    ) -> &'a mut FamilyState {
        let index = match families.iter().position(|f| f.family.name == family.name) {
            Some(i) => {
                assert!(
                    families[i].family == family,
                    "metric family {} is declared twice, differently",
                    family.name
                );
                i
            }
            None => {
                families.push(FamilyState::new(family));
                families.len() - 1
            }
        };
        &mut families[index]
    }

    /// Every family's values, in the order the families were first declared.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let mut families = self.families.lock();
        MetricsSnapshot {
            families: families
                .iter_mut()
                .map(|state| FamilySnapshot {
                    family: state.family,
                    values: state.fold_and_sum(),
                })
                .collect(),
        }
    }

    /// The values of the family named `name`, if declared.
    pub fn family(&self, name: &str) -> Option<FamilySnapshot> {
        let mut families = self.families.lock();
        let state = families.iter_mut().find(|f| f.family.name == name)?;
        Some(FamilySnapshot {
            family: state.family,
            values: state.fold_and_sum(),
        })
    }

    /// Appends every family in Prometheus text exposition format 0.0.4.
    pub fn render(&self, out: &mut String) {
        self.snapshot().render(out);
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let families = self.families.lock();
        f.debug_list()
            .entries(families.iter().map(|s| s.family.name))
            .finish()
    }
}

/// The process-wide registry: sources count here unless built with another. Every system's
/// families are declared in it on first use, so they render (at zero) before any object exists.
pub fn global() -> &'static Registry {
    static GLOBAL: OnceLock<Registry> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let registry = Registry::new();
        registry.declare_systems();
        registry
    })
}

impl Registry {
    /// Declares every system's families (each system's own declaration; see [`global`]).
    /// Idempotent: declaring a family twice is a no-op.
    pub fn declare_systems(&self) {
        for system in systems::SYSTEMS {
            (system.declare)(self);
        }
    }

    /// The names of the systems [`Registry::declare_systems`] declares, in render order.
    pub fn systems() -> impl Iterator<Item = &'static str> {
        systems::SYSTEMS.iter().map(|s| s.system)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::sync::{AtomicU64, Ordering};

    static WIDGETS: Family = Family {
        name: "test_widgets_total",
        help: "Widgets \\ made\nby kind.",
        metric_type: MetricType::Counter,
        labels: &["kind", "result"],
        series: &[&["a", "ok"], &["b", "o\"k"]],
    };
    static DEPTH: Family = Family {
        name: "test_depth",
        help: "Depth.",
        metric_type: MetricType::Gauge,
        labels: &[],
        series: &[&[]],
    };

    struct Source {
        values: [AtomicU64; 2],
        retired: AtomicU64,
    }

    impl Source {
        fn new(a: u64, b: u64) -> Arc<Self> {
            Arc::new(Self {
                values: [AtomicU64::new(a), AtomicU64::new(b)],
                retired: AtomicU64::new(0),
            })
        }
    }

    impl MetricSource for Source {
        fn collect(&self, values: &mut [u64]) {
            for (v, cell) in values.iter_mut().zip(&self.values) {
                *v += cell.load(Ordering::Relaxed);
            }
        }
        fn is_retired(&self) -> bool {
            self.retired.load(Ordering::Relaxed) != 0
        }
    }

    #[test]
    fn declared_families_render_every_series_at_zero() {
        let registry = Registry::new();
        registry.declare(&WIDGETS);
        registry.declare(&WIDGETS);
        registry.declare(&DEPTH);
        let mut text = String::new();
        registry.render(&mut text);
        assert_eq!(
            text,
            "# HELP test_widgets_total Widgets \\\\ made\\nby kind.\n\
             # TYPE test_widgets_total counter\n\
             test_widgets_total{kind=\"a\",result=\"ok\"} 0\n\
             test_widgets_total{kind=\"b\",result=\"o\\\"k\"} 0\n\
             # HELP test_depth Depth.\n\
             # TYPE test_depth gauge\n\
             test_depth 0\n"
        );
    }

    #[test]
    fn counters_keep_retired_values_and_gauges_drop_them() {
        let registry = Registry::new();
        let (a, b) = (Source::new(1, 2), Source::new(10, 20));
        registry.register(&WIDGETS, a.clone());
        registry.register(&WIDGETS, b.clone());
        let depth = Source::new(5, 0);
        registry.register(&DEPTH, depth.clone());
        let snap = registry.snapshot();
        assert_eq!(snap.family("test_widgets_total").unwrap().values, [11, 22]);
        assert_eq!(snap.family("test_depth").unwrap().value(&[]), Some(5));
        a.values[0].store(3, Ordering::Relaxed);
        a.retired.store(1, Ordering::Relaxed);
        depth.retired.store(1, Ordering::Relaxed);
        let snap = registry.snapshot();
        assert_eq!(snap.family("test_widgets_total").unwrap().values, [13, 22]);
        assert_eq!(snap.family("test_depth").unwrap().values, [0]);
        // Retired sources are forgotten; their last values stay in the totals.
        a.values[0].store(100, Ordering::Relaxed);
        assert_eq!(
            registry
                .family("test_widgets_total")
                .unwrap()
                .value(&["a", "ok"]),
            Some(13)
        );
        assert_eq!(Arc::strong_count(&a), 1);
    }

    #[test]
    #[should_panic(expected = "declared twice")]
    fn conflicting_declarations_are_refused() {
        static OTHER: Family = Family {
            name: "test_widgets_total",
            help: "Something else.",
            metric_type: MetricType::Counter,
            labels: &[],
            series: &[&[]],
        };
        let registry = Registry::new();
        registry.declare(&WIDGETS);
        registry.declare(&OTHER);
    }

    #[test]
    fn many_dropped_sources_do_not_accumulate() {
        let registry = Registry::new();
        for _ in 0..1000 {
            let s = Source::new(1, 0);
            s.retired.store(1, Ordering::Relaxed);
            registry.register(&WIDGETS, s);
        }
        assert!(registry.families.lock()[0].live.len() < 200);
        assert_eq!(
            registry.family("test_widgets_total").unwrap().values,
            [1000, 0]
        );
    }

    /// Every system's families are declared by `declare_systems`, at zero, in system order; a
    /// new registry has none until it is asked; the global one has them all.
    #[test]
    fn declare_systems_declares_every_family_of_every_system() {
        let expected: Vec<&str> = crate::admission::SLOT_PROPOSAL_ADMISSION_TOTAL
            .split(' ')
            .chain(crate::owner::owner_families().map(|f| f.name))
            .chain(crate::tag::tag_families().map(|f| f.name))
            .chain(crate::coord::coord_families().map(|f| f.name))
            .collect();
        let registry = Registry::new();
        assert!(registry.snapshot().families.is_empty());
        registry.declare_systems();
        registry.declare_systems();
        let snapshot = registry.snapshot();
        let names: Vec<&str> = snapshot.families.iter().map(|f| f.family.name).collect();
        assert_eq!(names, expected);
        assert!(snapshot
            .families
            .iter()
            .all(|f| f.values.iter().all(|&v| v == 0)));
        assert_eq!(
            Registry::systems().collect::<Vec<_>>(),
            ["admission", "owner", "tag", "coord"]
        );
        let global: Vec<&str> = global()
            .snapshot()
            .families
            .iter()
            .map(|f| f.family.name)
            .collect();
        for name in expected {
            assert!(
                global.contains(&name),
                "{name} missing from the global registry"
            );
        }
    }
}
