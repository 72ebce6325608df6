//! Shared harness of the wkcore benchmarks.
//!
//! The `wkcore-bench` binary (`src/main.rs`) and the criterion benches (`benches/*.rs`) both time
//! the same code, written once here:
//!
//! - [`Variant`]: what is measured: wkcore's [`SlotAdmission`](wkcore::admission::SlotAdmission)
//!   (one `admit` per item, or `admit_batch_copied` of 64), the upstream algorithm under one
//!   `Mutex` ([`MutexSlot`](wkcore_references::admission::MutexSlot), the baseline), and a raw
//!   `crossbeam_queue::ArrayQueue` with no admission at all (the floor);
//! - [`Shape`]: how it is driven: `1t` (one thread admits a run, then drains it) or `Np1c`
//!   (N producer threads, one consumer draining in a loop);
//! - [`run_trial`]: one timed trial of a fixed item count, with per-thread CPU time so that a
//!   trial in which a thread was descheduled can be told apart ([`TrialResult::min_on_cpu`]);
//! - [`run_plan`] / [`summarize`]: trials round-robin over variants within a time budget, the
//!   median ns/item over the trials in which every thread stayed on-CPU;
//! - [`report`]: the table, the JSON object and the targets;
//! - [`coord`]: `--coord`, the coordination hot paths (ledger claims and finalizations by key,
//!   anchor advances) beside a mutex-and-HashMap equivalent and one CAS;
//! - [`owner`]: `--owner`, the owner registry (begin+done, reserve+activate, sweeps at scale,
//!   memory per owner) beside upstream's algorithm under one mutex and two atomics;
//! - [`tag`]: `--tag`, the delivery tags (hits by handle and by key, readers beside a writer,
//!   the index's map, a 100k-UID tag's build, store and cleanup, memory per UID) beside
//!   upstream's manager under one mutex and a pointer-load floor;
//! - [`summary`]: the run with no table flag: one representative row per system (admission,
//!   owner, delivery tags, coordination), each beside its reference and its floor;
//! - [`plot`]: `--plot FILE`, the summary as an SVG bar chart;
//! - [`budget`]: how a row fits its trial size to its share of `--seconds`.
//!
//! Every item is a `Propose`/`Foreground` `u64` admitted into a slot with limits 8192 (bg 4096)
//! that has been made leader. Timings are reported, never asserted.

pub mod budget;
pub mod cli;
pub mod coord;
pub mod cputime;
pub mod machine;
pub mod owner;
pub mod plot;
pub mod report;
pub mod stats;
pub mod summary;
pub mod tag;
pub mod target;
pub mod timed;
pub mod trial;
pub mod variant;

pub use stats::{run_plan, summarize, CellStats, Plan};
pub use trial::{run_trial, Role, ThreadTiming, TrialResult};
pub use variant::{Shape, Variant};

/// Items per admission batch (`wkcore_batch64`, `mutex_batch64`) and per single-admit run in `1t`.
pub const BATCH: usize = 64;

/// Total control limit of every benchmarked slot (and the `ArrayQueue` floor's capacity).
pub const MAX_QUEUED: u32 = 8192;

/// Background control limit of every benchmarked slot.
pub const MAX_QUEUED_BACKGROUND: u32 = 4096;

/// A trial is kept only when every thread was on-CPU at least this share of its wall time.
pub const ON_CPU_THRESHOLD: f64 = 0.95;
