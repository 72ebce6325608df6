//! Fitting a row's trial size to its share of the time budget.
//!
//! A row runs at least a minimum number of rounds (one trial of each of its variants) whatever
//! its share of `--seconds`; when a round at the default size would not fit that many times,
//! the row measures one round at a small probe size (a warm-up, discarded), assumes the cost
//! grows a little faster than the size ([`GROWTH`]: bigger structures miss the caches more),
//! and runs at the largest size whose minimum rounds fit. [`another_round`] then stops a row
//! before a round that would overrun its share.

use std::time::{Duration, Instant};

/// The exponent of the assumed cost model, cost ∝ size^GROWTH: measured on the owner sweep at
/// 10^5 held against a probe at 1/16 of that, whose round cost 1.5x the linear guess.
pub const GROWTH: f64 = 1.15;

/// The trial size for a row that must run `min_rounds` rounds within `share`.
///
/// `probe(size)` runs one round at `size` (its result is a warm-up and is thrown away). The
/// answer lies in `smallest..=default`: a row never grows past its default size, nor shrinks
/// below the size at which it still measures what it says.
pub fn fit_size(
    default: u64,
    smallest: u64,
    share: Duration,
    min_rounds: u32,
    mut probe: impl FnMut(u64),
) -> u64 {
    let smallest = smallest.clamp(1, default.max(1));
    let probe_size = (default / 16).max(smallest);
    let start = Instant::now();
    probe(probe_size);
    let round = start.elapsed().as_secs_f64().max(1e-9);
    // What is left of the share after the probe, kept with a tenth in hand for overheads.
    let left = (share.as_secs_f64() - round).max(0.0) * 0.9;
    let scale = (left / (f64::from(min_rounds.max(1)) * round)).powf(1.0 / GROWTH);
    let fits = probe_size as f64 * scale;
    (fits.min(u64::MAX as f64).floor() as u64).clamp(smallest, default.max(smallest))
}

/// The share of `budget` left for each of `rows_left` rows once `spent` is gone (never below a
/// millisecond, so that a row overrun by its minimum trials does not starve the ones after it
/// to zero).
pub fn share(budget: Duration, spent: Duration, rows_left: usize) -> Duration {
    let left = budget.saturating_sub(spent);
    (left / rows_left.max(1) as u32).max(Duration::from_millis(1))
}

/// Whether a row that has run `rounds` rounds (the last one taking `last`) and `elapsed` of its
/// `share` runs another: always below `min_rounds`, never at `max_rounds`, and otherwise only
/// when a round like the last still fits.
pub fn another_round(
    rounds: usize,
    min_rounds: usize,
    max_rounds: usize,
    elapsed: Duration,
    last: Duration,
    share: Duration,
) -> bool {
    rounds < min_rounds || (rounds < max_rounds && elapsed + last <= share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generous_share_keeps_the_default_and_a_tiny_one_the_smallest() {
        let busy = |size: u64| std::thread::sleep(Duration::from_micros(size / 10));
        assert_eq!(fit_size(1000, 10, Duration::from_secs(5), 3, busy), 1000);
        assert_eq!(
            fit_size(1_000_000, 10, Duration::from_nanos(1), 3, busy),
            10
        );
        let mid = fit_size(1_000_000, 10, Duration::from_millis(300), 3, busy);
        assert!((10..1_000_000).contains(&mid), "{mid}");
    }

    #[test]
    fn a_round_that_would_overrun_is_not_started() {
        let ms = Duration::from_millis;
        assert!(another_round(1, 3, 200, ms(900), ms(500), ms(1000)));
        assert!(another_round(3, 3, 200, ms(400), ms(500), ms(1000)));
        assert!(!another_round(3, 3, 200, ms(600), ms(500), ms(1000)));
        assert!(!another_round(200, 3, 200, ms(0), ms(1), ms(1000)));
    }

    #[test]
    fn shares_split_what_is_left() {
        let b = Duration::from_secs(10);
        assert_eq!(share(b, Duration::from_secs(4), 3), Duration::from_secs(2));
        assert_eq!(
            share(b, Duration::from_secs(11), 2),
            Duration::from_millis(1)
        );
    }
}
