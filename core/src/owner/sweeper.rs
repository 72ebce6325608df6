//! [`Sweeper`]: a thread of its own that sweeps a registry on an interval — a convenience for
//! Rust and C++ users. The C ABI offers no sweeper: there, sweeping is a call the host makes on
//! its own schedule, so no wkcore thread ever calls into a host.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::error::{OwnerError, SweeperError};
use super::registry::{OwnerRegistry, SWEEP_LIMIT_MAX};
use super::snapshot::OwnerSnapshot;
use super::wait::{Budget, CancelToken, Event};
use crate::sync::Mutex;

/// The default and largest owners visited per turn.
pub const SWEEPER_LIMIT_DEFAULT: usize = 256;
/// The default interval between turns.
pub const SWEEPER_INTERVAL_DEFAULT: Duration = Duration::from_millis(250);
/// The default budget of one turn.
pub const SWEEPER_TURN_TIMEOUT_DEFAULT: Duration = Duration::from_millis(250);

/// What one turn did, handed to the observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepObservation {
    /// Owners visited.
    pub visited: usize,
    /// 1 if the sweep failed or its turn budget ran out, else 0.
    pub failures: u64,
    /// The registry's counts after the turn.
    pub snapshot: OwnerSnapshot,
}

/// The observer of a sweeper's turns.
pub type SweepObserver = Arc<dyn Fn(&SweepObservation) + Send + Sync>;

/// A sweeper's configuration; zero fields take upstream's defaults (256, 250 ms, 250 ms).
#[derive(Clone, Default)]
pub struct SweeperOptions {
    /// Owners visited per turn (1..=256).
    pub limit: usize,
    /// Time between turns (1 ms..=1 min).
    pub interval: Duration,
    /// Budget of one turn (1 ms..=5 s).
    pub turn_timeout: Duration,
    /// Called on the sweeper's thread after every turn.
    pub observe: Option<SweepObserver>,
}

impl SweeperOptions {
    /// The options with defaults filled in, or `Invalid` if a bound is broken.
    pub fn resolved(&self) -> Result<SweeperOptions, SweeperError> {
        let mut o = self.clone();
        if o.limit == 0 {
            o.limit = SWEEPER_LIMIT_DEFAULT;
        }
        if o.interval.is_zero() {
            o.interval = SWEEPER_INTERVAL_DEFAULT;
        }
        if o.turn_timeout.is_zero() {
            o.turn_timeout = SWEEPER_TURN_TIMEOUT_DEFAULT;
        }
        let ms = Duration::from_millis(1);
        let ok = (1..=SWEEP_LIMIT_MAX).contains(&o.limit)
            && (ms..=Duration::from_secs(60)).contains(&o.interval)
            && (ms..=Duration::from_secs(5)).contains(&o.turn_timeout);
        if ok {
            Ok(o)
        } else {
            Err(SweeperError::Invalid)
        }
    }
}

struct Run {
    token: CancelToken,
    thread: JoinHandle<()>,
    stopping: bool,
}

/// Sweeps one registry from a thread of its own: each turn is `sweep(limit)` under a
/// `turn_timeout` budget, then the observer, then a wait of `interval`.
pub struct Sweeper {
    registry: Arc<OwnerRegistry>,
    options: SweeperOptions,
    run: Mutex<Option<Run>>,
    finished: Arc<Event<bool>>,
}

impl Sweeper {
    /// A stopped sweeper; `Invalid` if the options break a bound.
    pub fn new(
        registry: Arc<OwnerRegistry>,
        options: SweeperOptions,
    ) -> Result<Self, SweeperError> {
        Ok(Self {
            registry,
            options: options.resolved()?,
            run: Mutex::new(None),
            finished: Arc::new(Event::default()),
        })
    }

    /// The resolved options.
    pub fn options(&self) -> &SweeperOptions {
        &self.options
    }

    /// Starts the thread. `budget` bounds only this call's admission (a spent one gives its
    /// error); it does not own the run. A second start while running is `Ok` (the same run);
    /// a start while a stopped run has not joined is `Stopping`.
    pub fn start(&self, budget: &Budget) -> Result<(), SweeperError> {
        budget.check().map_err(sweeper_error)?;
        let mut run = self.run.lock();
        if let Some(r) = run.as_ref() {
            if !r.stopping {
                return Ok(());
            }
            if !**self.finished.lock() {
                return Err(SweeperError::Stopping);
            }
            if let Some(r) = run.take() {
                let _ = r.thread.join();
            }
        }
        **self.finished.lock() = false;
        let token = CancelToken::new();
        let registry = self.registry.clone();
        let options = self.options.clone();
        let finished = self.finished.clone();
        let t = token.clone();
        let thread = std::thread::Builder::new()
            .name("wkcore-owner-sweeper".into())
            .spawn(move || {
                turns(&registry, &options, &t);
                finished.publish(|done| *done = true);
            })
            .map_err(|_| SweeperError::Invalid)?;
        *run = Some(Run {
            token,
            thread,
            stopping: false,
        });
        Ok(())
    }

    /// Cancels the run and joins it within `budget`; on a spent budget returns its error and
    /// keeps the run (a later stop joins it). `Ok` if not running.
    pub fn stop(&self, budget: &Budget) -> Result<(), SweeperError> {
        let mut run = self.run.lock();
        let Some(r) = run.as_mut() else {
            return Ok(());
        };
        r.stopping = true;
        r.token.cancel();
        drop(run);
        budget
            .wait_on(&self.finished, |done| *done)
            .map_err(sweeper_error)?;
        let mut run = self.run.lock();
        if let Some(r) = run.take() {
            let _ = r.thread.join();
        }
        Ok(())
    }

    /// True while a run (stopping or not) has not been joined.
    pub fn is_running(&self) -> bool {
        self.run.lock().is_some()
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        let _ = self.stop(&Budget::unbounded());
    }
}

fn sweeper_error(e: OwnerError) -> SweeperError {
    match e {
        OwnerError::Canceled => SweeperError::Canceled,
        _ => SweeperError::DeadlineExceeded,
    }
}

fn turns(registry: &OwnerRegistry, options: &SweeperOptions, token: &CancelToken) {
    let idle: Arc<Event<()>> = Arc::new(Event::default());
    while !token.is_cancelled() {
        let budget = Budget::timeout(options.turn_timeout).with_cancel(token.clone());
        let result = registry.sweep(options.limit, &budget);
        let visited = match result {
            Ok(v) => v,
            Err(e) => e.visited,
        };
        let failures = u64::from(result.is_err() || budget.check().is_err());
        if let Some(observe) = &options.observe {
            observe(&SweepObservation {
                visited,
                failures,
                snapshot: registry.snapshot(),
            });
        }
        let _ = Budget::timeout(options.interval)
            .with_cancel(token.clone())
            .wait_on(&idle, |_| false);
    }
}
