//! The inline protocol: begin and done as a host runs them on the owner's own words, with its
//! own atomics, crossing into the library only on the slow path (a futex's shape: the
//! uncontended case is a user-space atomic, the call only when needed).
//!
//! Every constant here is part of the published layout (the C ABI's `WK_OWNER_WORD_*`
//! constants are pinned to these); [`LAYOUT_VERSION`] names the layout, and a host built for
//! another one must refuse to start.
//!
//! # The words
//!
//! - The owner's **state word** ([`OwnerHandle::state_word`]): the bits of the table in
//!   `state.rs`; of them a host reads the scope count ([`OPS_MASK`]), the stage ([`STAGE_MASK`],
//!   [`STAGE_ACTIVE`]) and the retirement bits ([`RETIRE_MASK`], [`RETIRE_VALUE`]), and writes
//!   only the scope count, by CAS.
//! - The owner's **lease word** ([`OwnerHandle::lease_word`]): the lease's end on the registry's
//!   clock; read only.
//! - The registry's **stopped word** ([`OwnerRegistry::stopped_word`]): non-zero once admission
//!   stopped; read only.
//! - The registry's **host gauge rows** ([`OwnerRegistry::host_gauge_rows`]): [`GAUGE_ROWS`]
//!   rows of two counters (`begun`, `ended`), each row on its own cache line; the host adds one
//!   to a row's `begun` after each inline admission and to its `ended` after each inline end,
//!   in any row it likes (a row per connection id keeps distinct owners off each other's
//!   lines). The operation gauge of the snapshot and the metrics sums them with the library's
//!   own rows, so it stays right whichever path admitted or ended a scope.
//! - The registry's clock: the host needs its reading to check the lease; only a registry
//!   whose clock the host can read (the C ABI's hosted registries publish a time-stamp counter
//!   scale, the OS monotonic clock, or a manual clock's word) admits inline.
//!
//! Every word lives in the owner's (or the registry's) shared allocation: stable, 8-byte
//! aligned, never moved while a handle to the owner lives.
//!
//! # Begin (inline)
//!
//! 1. Load the stopped word; non-zero: slow path.
//! 2. Load the state word `w`.
//! 3. `w & STAGE_MASK != STAGE_ACTIVE`: slow path.
//! 4. Load the lease word; the clock's reading `now ≥ lease`: slow path (the library fences
//!    an expired owner there).
//! 5. `w & OPS_MASK ≥ max_operations`: slow path (the library answers `Limit`).
//! 6. CAS `w → w + 1` (one more scope); on failure reload `w` and go to 3.
//! 7. Count it in a host gauge row's `begun`.
//!
//! This is [`OwnerHandle::begin_detached`]'s transition, step for step; the slow path *is* that
//! call, which re-decides from scratch and gives the refusal.
//!
//! # Done (inline)
//!
//! The host's own once-only done flag comes first (a done is idempotent). Then:
//!
//! 1. Load the state word `w`; `w & OPS_MASK == 0` cannot happen for an admitted scope (slow
//!    path, which refuses it).
//! 2. `n = w − 1`; if `n & RETIRE_MASK == RETIRE_VALUE` this end would retire the owner (the
//!    last scope of a closing owner whose transport is closed): slow path
//!    ([`OwnerHandle::try_end_detached`], which sets `COMPLETE` in its CAS, retires the owner
//!    and wakes the quiescers).
//! 3. CAS `w → n`; on failure reload `w` and go to 2.
//! 4. Count it in a host gauge row's `ended`.
//!
//! An inline end therefore never makes the retirement condition true: the one CAS that does
//! is the library's, so no wake-up is lost — a quiesce waits on `COMPLETE`, which only the
//! library sets, and the library's end is the one that sets it.
//!
//! # Orderings
//!
//! The host's operations must be at least as strong as the library's: the stopped, state and
//! lease loads `Acquire`, the CASes `AcqRel` (Go's `sync/atomic` is sequentially consistent,
//! which is stronger). The lease word is stored `Release` before the activation's CAS bumps the
//! lease sequence in the state word, so a host that loaded the state word first sees a lease at
//! least as new as the word it CASes from. The gauge rows are statistics (the library reads
//! `ended` before `begun` and saturates at zero).

use super::registry::{OwnerHandle, OwnerRegistry};
use super::state::{COMPLETE, OPS, STAGE, TRANSPORT_CLOSED};
use crate::sync::{host_u64, HostU64 as AtomicU64};

/// The version of the published layout: the bit positions below, the words a host may touch
/// and the transitions it may run. Bumped whenever any of them changes.
pub const LAYOUT_VERSION: u32 = 1;

/// The scope count's bits in the state word (bits 0–10, the lowest: adding 1 admits a scope).
pub const OPS_MASK: u64 = OPS.mask();
/// The stage's bits in the state word.
pub const STAGE_MASK: u64 = STAGE.mask();
/// `w & STAGE_MASK` of an active owner (the only stage that admits).
pub const STAGE_ACTIVE: u64 = STAGE.put(2);
/// `w & STAGE_MASK` of a closing (fenced) owner.
pub const STAGE_CLOSING: u64 = STAGE.put(3);
/// The transport-closed bit.
pub const TRANSPORT_CLOSED_BIT: u64 = TRANSPORT_CLOSED.mask();
/// The complete bit (retired, or an uncertain owner's final barrier).
pub const COMPLETE_BIT: u64 = COMPLETE.mask();
/// The bits a done's new word is tested with: `n & RETIRE_MASK == RETIRE_VALUE` means the
/// end would retire the owner, which only the library may do.
pub const RETIRE_MASK: u64 = STAGE_MASK | TRANSPORT_CLOSED_BIT | COMPLETE_BIT | OPS_MASK;
/// See [`RETIRE_MASK`]: closing, transport closed, not complete, no scope left.
pub const RETIRE_VALUE: u64 = STAGE_CLOSING | TRANSPORT_CLOSED_BIT;
/// The number of host gauge rows.
pub const GAUGE_ROWS: usize = 64;

const _: () = assert!(OPS.put(1) == 1, "adding 1 must admit one scope");

/// One row of host counters, on a cache line of its own.
#[repr(C)]
pub struct GaugeRow {
    /// Scopes admitted inline by the host.
    pub begun: AtomicU64,
    /// Scopes ended inline by the host.
    pub ended: AtomicU64,
}

impl Default for GaugeRow {
    fn default() -> Self {
        Self {
            begun: AtomicU64::new(0),
            ended: AtomicU64::new(0),
        }
    }
}

impl OwnerHandle {
    /// The owner's state word, for a host that runs the inline protocol (module docs). It lives
    /// as long as any handle to the owner.
    #[inline]
    pub fn state_word(&self) -> &AtomicU64 {
        host_u64(&self.entry.hot.state)
    }

    /// The owner's lease word: the lease's end on the registry clock (read only).
    #[inline]
    pub fn lease_word(&self) -> &AtomicU64 {
        host_u64(&self.entry.hot.lease_until)
    }

    /// The registry's stopped word (non-zero once admission stopped; read only).
    #[inline]
    pub fn stopped_word(&self) -> &AtomicU64 {
        host_u64(&self.entry.core.stopped)
    }

    /// The most scopes the owner admits at once (the registry's `max_operations`).
    #[inline]
    pub fn max_operations(&self) -> u64 {
        self.entry.core.max_ops
    }

    /// The inline done's slow path: ends one scope, as [`OwnerHandle::end_detached`]
    /// (retiring the owner if this is its last scope while its quiescence is pending). `false`,
    /// changing nothing, if the owner has no admitted scope (the host ended more than it began).
    pub fn try_end_detached(&self) -> bool {
        self.entry.try_end_scope().is_some()
    }
}

impl OwnerRegistry {
    /// The registry's stopped word (non-zero once admission stopped; read only).
    #[inline]
    pub fn stopped_word(&self) -> &AtomicU64 {
        host_u64(&self.core.stopped)
    }

    /// The most scopes one owner admits at once (`max_operations`).
    #[inline]
    pub fn max_operations(&self) -> u32 {
        self.core.max_ops as u32
    }

    /// The host gauge rows ([`GAUGE_ROWS`] of them, contiguous, one cache line each).
    pub fn host_gauge_rows(&self) -> &[crossbeam_utils::CachePadded<GaugeRow>] {
        self.core.stats.ops.host_rows()
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;
    use std::sync::Arc;

    use crate::clock::ManualClock;
    use crate::owner::{Claim, OwnerKey, OwnerOptions};

    fn registry() -> (OwnerRegistry, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(1_000));
        let options = OwnerOptions {
            node_id: 1,
            boot_id: "boot".into(),
            capacity: 4,
            max_operations: 2,
            pending_timeout: std::time::Duration::from_secs(5),
            max_lease: std::time::Duration::from_secs(60),
            close_retry: std::time::Duration::from_secs(1),
            clock: clock.clone(),
        };
        let metrics = crate::metrics::Registry::new();
        (
            OwnerRegistry::with_metrics(options, &metrics).unwrap(),
            clock,
        )
    }

    fn claim() -> Claim {
        Claim {
            key: OwnerKey::new("ns", "c"),
            uid: "u".into(),
            session_generation: 1,
            owner_generation: 1,
        }
    }

    /// The host's begin, as the module docs write it (the clock is the manual one).
    fn host_begin(r: &OwnerRegistry, h: &OwnerHandle, now: u64) -> bool {
        if h.stopped_word().load(Ordering::Acquire) != 0 {
            return false;
        }
        let s = h.state_word();
        let mut w = s.load(Ordering::Acquire);
        loop {
            if w & STAGE_MASK != STAGE_ACTIVE
                || now >= h.lease_word().load(Ordering::Acquire)
                || w & OPS_MASK >= h.max_operations()
            {
                return false;
            }
            match s.compare_exchange(w, w + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(actual) => w = actual,
            }
        }
        r.host_gauge_rows()[0].begun.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// The host's done; `false` when it must take the slow path.
    fn host_end(r: &OwnerRegistry, h: &OwnerHandle) -> bool {
        let s = h.state_word();
        let mut w = s.load(Ordering::Acquire);
        loop {
            if w & OPS_MASK == 0 || (w - 1) & RETIRE_MASK == RETIRE_VALUE {
                return false;
            }
            match s.compare_exchange(w, w - 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(actual) => w = actual,
            }
        }
        r.host_gauge_rows()[0].ended.fetch_add(1, Ordering::Relaxed);
        true
    }

    #[test]
    fn the_inline_protocol_is_the_library_transition() {
        let (r, clock) = registry();
        let h = r.reserve(&claim(), |_: &_| Ok(())).unwrap();
        assert!(
            !host_begin(&r, &h, crate::clock::Clock::now_nanos(&*clock)),
            "pending"
        );
        h.activate(1, 2_000).unwrap();
        assert!(host_begin(&r, &h, 1_000));
        h.begin_detached().unwrap();
        assert_eq!(
            r.snapshot().operations,
            2,
            "host and library rows both count"
        );
        assert!(!host_begin(&r, &h, 1_000), "at the bound");
        assert_eq!(h.begin_detached(), Err(crate::owner::OwnerError::Limit));
        assert!(!host_begin(&r, &h, 2_000), "expired");
        assert!(host_end(&r, &h));
        h.end_detached();
        assert_eq!(r.snapshot().operations, 0);
        // A closing owner with its transport closed: the last end is the library's.
        assert!(host_begin(&r, &h, 1_000));
        std::thread::scope(|s| {
            let q = s.spawn(|| h.quiesce(&crate::owner::Budget::unbounded()));
            while h.state_word().load(Ordering::Acquire) & TRANSPORT_CLOSED_BIT == 0 {
                std::thread::yield_now();
            }
            assert!(!host_end(&r, &h), "the retiring end takes the slow path");
            assert!(h.try_end_detached());
            assert_eq!(q.join().unwrap(), Ok(()));
        });
        assert!(h.is_complete());
        assert!(!h.try_end_detached(), "no scope left");
        assert_eq!(r.snapshot().held, 0);
        assert_eq!(r.snapshot().operations, 0);
        r.stop_admission();
        assert_ne!(r.stopped_word().load(Ordering::Acquire), 0);
    }
}
