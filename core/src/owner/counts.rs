//! The admitted-operation gauge, kept in per-thread rows so begin and done never write a line
//! another thread writes.
//!
//! # Orderings
//!
//! A row belongs to one thread ([`thread_row`]), which bumps it with a plain load and store (the
//! shared overflow row uses `fetch_add`). An operation's end is stored `Release` and read
//! `Acquire`; its begin is stored after the begin's CAS on the owner word, so a reader that sums
//! every `ended` first and every `begun` second may still miss a begin whose end it counted:
//! [`OpsGauge::get`] saturates at zero and is exact whenever no scope is in flight — a
//! monitoring gauge, as upstream's count read under its lock would be a moment later.
//!
//! The host rows of the inline protocol (`host.rs`) are summed the same way, their `ended` with
//! the library's `ended` and their `begun` with its `begun`, so a scope begun on one path and
//! ended on the other is counted once each way.

use crossbeam_utils::CachePadded;

use super::host::{GaugeRow, GAUGE_ROWS};
use crate::sync::{thread_row, AtomicU64, Ordering, THREAD_ROWS};

/// Begun and ended scopes, one row per thread, plus the rows hosts that run the inline
/// protocol bump with their own atomics (`host.rs`).
pub(crate) struct OpsGauge {
    rows: Box<[CachePadded<Row>]>,
    host: Box<[CachePadded<GaugeRow>]>,
}

#[derive(Default)]
struct Row {
    begun: AtomicU64,
    ended: AtomicU64,
}

impl OpsGauge {
    pub(crate) fn new() -> Self {
        Self {
            rows: (0..THREAD_ROWS)
                .map(|_| CachePadded::new(Row::default()))
                .collect(),
            host: (0..GAUGE_ROWS)
                .map(|_| CachePadded::new(GaugeRow::default()))
                .collect(),
        }
    }

    /// The host rows (`host.rs`).
    pub(crate) fn host_rows(&self) -> &[CachePadded<GaugeRow>] {
        &self.host
    }

    #[inline]
    fn bump(counter: &AtomicU64, own: bool, order: Ordering) {
        if own {
            // Ordering: only this thread writes its own row (`thread_row`); `order` as below.
            counter.store(counter.load(Ordering::Relaxed).wrapping_add(1), order);
        } else {
            counter.fetch_add(1, order);
        }
    }

    /// Counts one admitted scope.
    #[inline]
    pub(crate) fn begun(&self) {
        let (row, own) = thread_row();
        // Ordering: Relaxed; the gauge is read as described in the module docs.
        Self::bump(&self.rows[row].begun, own, Ordering::Relaxed);
    }

    /// Counts one finished scope.
    #[inline]
    pub(crate) fn ended(&self) {
        let (row, own) = thread_row();
        // Ordering: Release; pairs with the Acquire loads in `get` (module docs).
        Self::bump(&self.rows[row].ended, own, Ordering::Release);
    }

    /// Admitted scopes now (module docs: saturating, exact when none is in flight).
    pub(crate) fn get(&self) -> u64 {
        let mut ended = 0u64;
        for row in self.rows.iter() {
            // Ordering: Acquire; pairs with the Release store in `ended`.
            ended = ended.wrapping_add(row.ended.load(Ordering::Acquire));
        }
        for row in self.host.iter() {
            // Ordering: Acquire; pairs with the host's increments (sequentially consistent in
            // Go), as the library's own rows.
            ended = ended.wrapping_add(row.ended.load(Ordering::Acquire));
        }
        let mut begun = 0u64;
        for row in self.rows.iter() {
            // Ordering: Relaxed (module docs).
            begun = begun.wrapping_add(row.begun.load(Ordering::Relaxed));
        }
        for row in self.host.iter() {
            // Ordering: Relaxed (module docs).
            begun = begun.wrapping_add(row.begun.load(Ordering::Relaxed));
        }
        begun.saturating_sub(ended)
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_gauge_sums_rows_of_many_threads() {
        let gauge = std::sync::Arc::new(OpsGauge::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let g = gauge.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        g.begun();
                    }
                    for _ in 0..400 {
                        g.ended();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(gauge.get(), 8 * 600);
    }
}
