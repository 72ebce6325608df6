//! What TTL reclamation needs: the roster a cleanup pages through, and the cleanup ticks that
//! let hits mark a body without reading a clock.
//!
//! # Locks
//!
//! Both are behind a mutex on purpose: the roster changes once per new channel (or key) and once
//! per reclaimed one, and is read by the cleanup, a host timer; the tick log is touched only by
//! the cleanup. Neither is on a look-up or a store of an existing channel.

use std::collections::VecDeque;

use crate::sync::{AtomicU64, Mutex, Ordering};

/// The entries a cleanup visits, in slots reused after removal, visited from a cursor that
/// survives between pages.
pub(crate) struct Roster<T> {
    inner: Mutex<RosterSlots<T>>,
}

struct RosterSlots<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    cursor: usize,
    len: usize,
}

impl<T: Clone> Roster<T> {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(RosterSlots {
                slots: Vec::new(),
                free: Vec::new(),
                cursor: 0,
                len: 0,
            }),
        }
    }

    /// Adds `entry`; its slot, for [`Roster::remove`].
    pub(crate) fn add(&self, entry: T) -> usize {
        let mut r = self.inner.lock();
        r.len += 1;
        match r.free.pop() {
            Some(slot) => {
                r.slots[slot] = Some(entry);
                slot
            }
            None => {
                r.slots.push(Some(entry));
                r.slots.len() - 1
            }
        }
    }

    /// Up to `limit` entries from the cursor on, and whether the page reached the end of the
    /// slots (a pass is complete).
    pub(crate) fn page(&self, limit: usize) -> (Vec<(usize, T)>, bool) {
        let mut r = self.inner.lock();
        let mut out = Vec::with_capacity(limit.min(r.len));
        let total = r.slots.len();
        let mut wrapped = false;
        let mut examined = 0;
        while out.len() < limit && examined < total {
            if r.cursor >= total {
                r.cursor = 0;
            }
            let slot = r.cursor;
            if let Some(entry) = &r.slots[slot] {
                out.push((slot, entry.clone()));
            }
            r.cursor += 1;
            examined += 1;
            if r.cursor >= total {
                wrapped = true;
            }
        }
        if total == 0 {
            wrapped = true;
        }
        (out, wrapped)
    }

    /// Frees `slot`.
    pub(crate) fn remove(&self, slot: usize) {
        let mut r = self.inner.lock();
        if let Some(s) = r.slots.get_mut(slot) {
            if s.take().is_some() {
                r.len -= 1;
                r.free.push(slot);
            }
        }
    }

    /// How many entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().len
    }
}

/// How many ended ticks keep their start time; older ones are bounded by the oldest kept.
const TICKS_KEPT: usize = 64;

/// A tick lasts at least `ttl / TICKS_PER_TTL` (rounded up), so the kept ends span more than
/// `(TICKS_KEPT - 1) / TICKS_PER_TTL` TTLs: an end that falls out of the log is older than a TTL.
const TICKS_PER_TTL: u64 = 32;

/// Cleanup ticks. A hit marks its body with the current tick (one `Relaxed` load, and a
/// compare-and-swap only when the mark is older: the mark never moves back, so a reader that
/// loaded an older tick and marks late cannot undo a newer hit's mark); a cleanup ends the
/// current tick at its `now` once the tick has lasted `ttl / 32` (rounded up). A body last hit in tick `t` was hit no later than the end of
/// `t`, so that end is an upper bound of its last access, and a body hit in the current tick is
/// never reclaimed: reclamation is never earlier than upstream's exact clock, and later by at
/// most the length of the tick of the last hit (the first cleanup interval that ends at least
/// `ttl / 32` after the tick's start: one interval when cleanups come less often) and one
/// cleanup interval.
///
/// An older tick than the log keeps is bounded by the oldest kept end, which is itself more than
/// a TTL old (ticks last `ttl / 32`, 64 ends are kept) and stays so: the log moves on only by
/// whole ticks. Ending a tick at every cleanup instead would let that bound trail `now` by 64
/// cleanup intervals forever, so that a body hit once was never reclaimed when 64 intervals are
/// shorter than the TTL.
///
/// # Orderings
///
/// The tick number is `Relaxed` both ways: a hit that reads the previous tick marks the body
/// with it, which only makes its bound older by one tick (and, the mark being a maximum, never
/// older than any other hit's); the race with the cleanup is the one `DeliveryTag`'s docs order
/// (the hit comes first).
pub(crate) struct Ticks {
    current: AtomicU64,
    /// (tick, start) of the latest ticks, oldest first; only the cleanup touches it.
    starts: Mutex<VecDeque<(u64, i64)>>,
}

impl Ticks {
    pub(crate) fn new() -> Self {
        Self {
            current: AtomicU64::new(1),
            starts: Mutex::new(VecDeque::new()),
        }
    }

    /// The current tick (never 0, which marks "never hit").
    #[inline]
    pub(crate) fn current(&self) -> u64 {
        // Ordering: Relaxed (type docs).
        self.current.load(Ordering::Relaxed)
    }

    /// The tick word, as the host's atomic type (`tag::hot`).
    pub(crate) fn host(&self) -> &crate::sync::HostU64 {
        crate::sync::host_u64(&self.current)
    }

    /// Ends the current tick at `now`, starting the next, unless it started less than
    /// `ttl / 32` (rounded up) before `now`; callers are serialized (the cleanup's lock).
    pub(crate) fn advance(&self, now: i64, ttl: u64) {
        let mut starts = self.starts.lock();
        if let Some(&(_, start)) = starts.back() {
            if i128::from(now) - i128::from(start) < i128::from(ttl.div_ceil(TICKS_PER_TTL)) {
                return;
            }
        }
        let next = self.current() + 1;
        starts.push_back((next, now));
        if starts.len() > TICKS_KEPT {
            starts.pop_front();
        }
        // Ordering: Relaxed (type docs).
        self.current.store(next, Ordering::Relaxed);
    }

    /// An upper bound of when a body last hit in `tick` was last hit; `None` for the current
    /// tick (no bound yet) and `Some(i64::MIN)` for "never hit" (tick 0).
    pub(crate) fn hit_bound(&self, tick: u64) -> Option<i64> {
        if tick == 0 {
            return Some(i64::MIN);
        }
        if tick >= self.current() {
            return None;
        }
        let starts = self.starts.lock();
        // The end of `tick` is the start of `tick + 1`.
        match starts.iter().find(|(t, _)| *t == tick + 1) {
            Some((_, start)) => Some(*start),
            // Older than every kept start: the oldest kept one bounds it from above.
            None => Some(starts.front().map_or(i64::MAX, |(_, s)| *s)),
        }
    }
}

/// True when a body idle since `last` is older than `ttl` at `now` (strictly, as upstream).
pub(crate) fn expired(now: i64, last: i64, ttl: u64) -> bool {
    i128::from(now) - i128::from(last) > i128::from(ttl)
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn roster_pages_wrap_and_reuse_slots() {
        let r = Roster::new();
        let a = r.add(1);
        let _b = r.add(2);
        let _c = r.add(3);
        let (page, wrapped) = r.page(2);
        assert_eq!(page, vec![(0, 1), (1, 2)]);
        assert!(!wrapped);
        let (page, wrapped) = r.page(2);
        assert_eq!(page.len(), 2, "wraps to the start: {page:?}");
        assert!(wrapped);
        r.remove(a);
        assert_eq!(r.len(), 2);
        assert_eq!(r.add(4), a);
    }

    #[test]
    fn tick_bounds() {
        let t = Ticks::new();
        assert_eq!(t.hit_bound(0), Some(i64::MIN));
        assert_eq!(t.hit_bound(1), None);
        t.advance(100, 64);
        assert_eq!(t.hit_bound(1), Some(100));
        assert_eq!(t.hit_bound(2), None);
        // Less than ttl / 32 later: the tick goes on.
        t.advance(101, 64);
        assert_eq!(t.hit_bound(2), None);
        for i in 0..100 {
            t.advance(200 + 2 * i, 64);
        }
        // Tick 1's end fell out of the log: the oldest kept start bounds it, and is more than a
        // TTL old.
        let b = t.hit_bound(1).unwrap();
        assert!(b >= 100);
        assert!(expired(398, b, 64));
        assert!(expired(10, 0, 9));
        assert!(!expired(10, 0, 10));
    }
}
