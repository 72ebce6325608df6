//! The owner's inline protocol (`wkcore::owner::host`): the words a host may run begin and done
//! on with its own atomics, their bits, the registry clock a host can read, and the two calls of
//! the slow path.
//!
//! A host gets the registry's words once (`wk_owner_registry_words_get`: the layout version,
//! the clock and how to read it, the stopped word, the gauge rows, `max_operations`; only a
//! registry made by `wk_owner_registry_new_hosted` or on a manual clock has a clock the host
//! can read) and each owner's once
//! (`wk_owner_words_get`: its state and lease words), then runs:
//!
//! - **begin**: stopped word 0; state word active (`& WK_OWNER_WORD_STAGE_MASK ==
//!   WK_OWNER_WORD_STAGE_ACTIVE`); the clock's reading below the lease word; `&
//!   WK_OWNER_WORD_OPS_MASK` below `max_operations`; CAS the state word up by one (retry from
//!   the stage check on failure); add 1 to a gauge row's `begun`. Any refusal: call
//!   `wk_owner_begin`, which decides again and answers the status (and fences an expired owner).
//! - **done**: the host's once-only done flag; then `n = w - 1` of the state word `w`; if `n &
//!   WK_OWNER_WORD_RETIRE_MASK == WK_OWNER_WORD_RETIRE_VALUE` (the last scope of a closing owner
//!   whose transport is closed) call `wk_owner_scope_end`, which retires the owner and wakes its
//!   quiescers; else CAS `w → n` (retry on failure) and add 1 to a gauge row's `ended`.
//!
//! Every other call (check, mark uncertain, fence, quiesce, sweep, the snapshot) is unchanged
//! and works over the same words. Loads must be at least `Acquire` and CASes `AcqRel` (C11
//! `memory_order_acq_rel`; Go's `sync/atomic` is sequentially consistent).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use wkcore::clock::Clock;
use wkcore::owner::host as layout;

use super::handle::wk_owner;
use super::registry::wk_owner_registry;
use crate::handle::{check_out, try_ref, write_out};
use crate::panic::ffi_panic_boundary;
use crate::status::{wk_status, WK_STATUS_INVALID_ARGUMENT, WK_STATUS_OK};

/// The version of the owner words' layout and of the inline transitions
/// (`wk_owner_registry_words.layout_version`, `wk_owner_layout_version()`): a host written for
/// another one must refuse to start.
pub const WK_OWNER_WORDS_LAYOUT_VERSION: u32 = 1;
/// The scope count's bits of the state word (the lowest: adding 1 admits one scope).
pub const WK_OWNER_WORD_OPS_MASK: u64 = 0x7ff;
/// The stage's bits of the state word.
pub const WK_OWNER_WORD_STAGE_MASK: u64 = 0x1800;
/// `state & WK_OWNER_WORD_STAGE_MASK` of an active owner, the only stage that admits.
pub const WK_OWNER_WORD_STAGE_ACTIVE: u64 = 0x1000;
/// `state & WK_OWNER_WORD_STAGE_MASK` of a closing (fenced) owner.
pub const WK_OWNER_WORD_STAGE_CLOSING: u64 = 0x1800;
/// The state word's transport-closed bit.
pub const WK_OWNER_WORD_TRANSPORT_CLOSED: u64 = 0x4000;
/// The state word's complete bit (retired, or an uncertain owner's final barrier).
pub const WK_OWNER_WORD_COMPLETE: u64 = 0x8000;
/// A done's new word `n` with `n & WK_OWNER_WORD_RETIRE_MASK == WK_OWNER_WORD_RETIRE_VALUE`
/// would retire the owner: only `wk_owner_scope_end` may make that transition.
pub const WK_OWNER_WORD_RETIRE_MASK: u64 = 0xdfff;
/// See `WK_OWNER_WORD_RETIRE_MASK`: closing, transport closed, not complete, no scope left.
pub const WK_OWNER_WORD_RETIRE_VALUE: u64 = 0x5800;
/// The number of gauge rows (`wk_owner_registry_words.gauge_rows`).
pub const WK_OWNER_GAUGE_ROWS: u32 = 64;

/// `wk_owner_registry_words.clock_kind`: a clock the host cannot read (the TSC clock of
/// `wk_owner_registry_new`); the host calls `wk_owner_begin` for every begin.
pub const WK_OWNER_CLOCK_PRIVATE: u32 = 0;
/// `wk_owner_registry_words.clock_kind`: the OS's `CLOCK_MONOTONIC`, in nanoseconds
/// (`wk_owner_registry_new_hosted` without an invariant TSC; what Go's runtime clock reads).
pub const WK_OWNER_CLOCK_MONOTONIC: u32 = 1;
/// `wk_owner_registry_words.clock_kind`: a manual clock whose reading is the word
/// `wk_owner_registry_words.clock` (`wk_owner_registry_new_with_manual_clock`).
pub const WK_OWNER_CLOCK_WORD: u32 = 2;
/// `wk_owner_registry_words.clock_kind`: the x86-64 time-stamp counter (invariant TSC): the
/// reading is `((tsc - tsc_origin) * tsc_mul) >> 32` in 128-bit arithmetic when the counter
/// `tsc` (the `RDTSC` instruction) is above `tsc_origin`, else 0 (`wk_owner_registry_new_hosted`).
pub const WK_OWNER_CLOCK_TSC: u32 = 3;

const _: () = {
    assert!(WK_OWNER_WORDS_LAYOUT_VERSION == layout::LAYOUT_VERSION);
    assert!(WK_OWNER_WORD_OPS_MASK == layout::OPS_MASK);
    assert!(WK_OWNER_WORD_STAGE_MASK == layout::STAGE_MASK);
    assert!(WK_OWNER_WORD_STAGE_ACTIVE == layout::STAGE_ACTIVE);
    assert!(WK_OWNER_WORD_STAGE_CLOSING == layout::STAGE_CLOSING);
    assert!(WK_OWNER_WORD_TRANSPORT_CLOSED == layout::TRANSPORT_CLOSED_BIT);
    assert!(WK_OWNER_WORD_COMPLETE == layout::COMPLETE_BIT);
    assert!(WK_OWNER_WORD_RETIRE_MASK == layout::RETIRE_MASK);
    assert!(WK_OWNER_WORD_RETIRE_VALUE == layout::RETIRE_VALUE);
    assert!(WK_OWNER_GAUGE_ROWS as usize == layout::GAUGE_ROWS);
};
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<wk_owner_words>() == 16);
    assert!(std::mem::size_of::<wk_owner_registry_words>() == 56);
};

/// An owner's words (`wk_owner_words_get`). Both pointers are 8-byte aligned, point into the
/// owner's allocation and stay valid, at the same address, while any handle to the owner lives;
/// the host accesses them only atomically.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct wk_owner_words {
    /// The state word: the host CASes only its scope count (`WK_OWNER_WORD_OPS_MASK`).
    pub state: *mut u64,
    /// The lease's end on the registry clock; read only.
    pub lease_until: *const u64,
}

/// A registry's words (`wk_owner_registry_words_get`). The pointers are 8-byte aligned and stay
/// valid, at the same address, while the registry handle or any handle to one of its owners
/// lives.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct wk_owner_registry_words {
    /// `WK_OWNER_WORDS_LAYOUT_VERSION` of the library that made the registry.
    pub layout_version: u32,
    /// `WK_OWNER_CLOCK_PRIVATE`, `_MONOTONIC`, `_WORD` or `_TSC`: how the host reads the
    /// registry clock.
    pub clock_kind: u32,
    /// Non-zero once admission stopped; read only.
    pub stopped: *const u64,
    /// `WK_OWNER_CLOCK_WORD`: the clock's reading (read only); NULL otherwise.
    pub clock: *const u64,
    /// `WK_OWNER_GAUGE_ROWS` rows of two counters (`begun`, then `ended`), `gauge_row_stride`
    /// bytes apart: the host adds to them with atomic adds.
    pub gauge: *mut u64,
    /// Bytes from one gauge row to the next (a cache line or two).
    pub gauge_row_stride: u32,
    /// The registry's `max_operations`.
    pub max_operations: u32,
    /// `WK_OWNER_CLOCK_TSC`: the counter's reading at the clock's origin; 0 otherwise.
    pub tsc_origin: u64,
    /// `WK_OWNER_CLOCK_TSC`: nanoseconds per counter tick, times 2³²; 0 otherwise.
    pub tsc_mul: u64,
}

/// The registry clock and how a host reads it.
pub(crate) enum HostClock {
    /// `wk_owner_registry_new`'s clock (quanta's calibrated TSC).
    Private,
    /// `CLOCK_MONOTONIC`.
    Monotonic,
    /// A manual clock.
    Word(Arc<WordClock>),
    /// The time-stamp counter, scaled as published.
    Tsc(TscClock),
}

impl HostClock {
    /// The clock of `wk_owner_registry_new_hosted`: the TSC where it is invariant, else the OS's
    /// monotonic clock, else the private one.
    pub(crate) fn hosted() -> Self {
        if let Some(tsc) = TscClock::new() {
            HostClock::Tsc(tsc)
        } else if MonotonicClock::AVAILABLE {
            HostClock::Monotonic
        } else {
            HostClock::Private
        }
    }

    /// The clock as the core reads it.
    pub(crate) fn clock(&self) -> Arc<dyn Clock> {
        match self {
            HostClock::Word(m) => m.clone(),
            HostClock::Monotonic => Arc::new(MonotonicClock),
            HostClock::Tsc(t) => Arc::new(*t),
            HostClock::Private => Arc::new(wkcore::clock::RealClock::new()),
        }
    }
}

/// The time-stamp counter as a clock: `((tsc - origin) * mul) >> 32` nanoseconds, the formula
/// `WK_OWNER_CLOCK_TSC` publishes, so a host that reads the counter computes the very same
/// reading. `mul` is measured once per process against `CLOCK_MONOTONIC` (5 ms).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TscClock {
    pub(crate) origin: u64,
    pub(crate) mul: u64,
}

impl TscClock {
    /// A clock whose origin is now; `None` without an invariant TSC.
    pub(crate) fn new() -> Option<Self> {
        let mul = tsc_mul()?;
        Some(Self {
            origin: rdtsc(),
            mul,
        })
    }
}

impl Clock for TscClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        let t = rdtsc();
        if t <= self.origin {
            return 0;
        }
        ((u128::from(t - self.origin) * u128::from(self.mul)) >> 32) as u64
    }
}

/// The counter (`RDTSC`); 0 where there is none (no `TscClock` is made there).
#[inline]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 CPU and has no preconditions.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Nanoseconds per tick times 2³², measured once per process; `None` without an invariant TSC.
fn tsc_mul() -> Option<u64> {
    static MUL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *MUL.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") || !MonotonicClock::AVAILABLE || !invariant_tsc() {
            return None;
        }
        let mono = MonotonicClock;
        let (t0, c0) = (mono.now_nanos(), rdtsc());
        while mono.now_nanos() < t0 + 5_000_000 {
            std::hint::spin_loop();
        }
        let (t1, c1) = (mono.now_nanos(), rdtsc());
        let ticks = c1.checked_sub(c0).filter(|&d| d > 0)?;
        u64::try_from((u128::from(t1 - t0) << 32) / u128::from(ticks)).ok()
    })
}

/// CPUID.80000007H:EDX\[8\]: the TSC runs at a constant rate in every state.
fn invariant_tsc() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86-64 CPU; leaves above the maximum are not read.
        #[allow(unused_unsafe)]
        let max = unsafe { __cpuid(0x8000_0000) }.eax;
        // SAFETY: as above; the leaf is at most the maximum.
        #[allow(unused_unsafe)]
        let edx = unsafe { __cpuid(0x8000_0007) }.edx;
        max >= 0x8000_0007 && edx & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A manual clock whose reading is one word (hosts read it).
#[derive(Debug)]
pub(crate) struct WordClock(AtomicU64);

impl WordClock {
    pub(crate) fn new(start: u64) -> Self {
        Self(AtomicU64::new(start))
    }

    /// Moves the clock forward by `ns`.
    pub(crate) fn advance(&self, ns: u64) {
        // Ordering: Relaxed; the clock publishes no other data (as `wkcore::clock::ManualClock`).
        self.0.fetch_add(ns, Ordering::Relaxed);
    }
}

impl Clock for WordClock {
    fn now_nanos(&self) -> u64 {
        // Ordering: Relaxed, as in `advance`.
        self.0.load(Ordering::Relaxed)
    }
}

/// The OS's `CLOCK_MONOTONIC`, in nanoseconds (Linux: the same reading Go's runtime takes).
#[derive(Debug, Default)]
pub(crate) struct MonotonicClock;

/// The C library's `clock_gettime` (not part of the ABI).
///
/// cbindgen:ignore
#[cfg(target_os = "linux")]
mod os {
    #[repr(C)]
    pub(super) struct Timespec {
        pub(super) tv_sec: i64,
        pub(super) tv_nsec: i64,
    }
    pub(super) const CLOCK_MONOTONIC: i32 = 1;
    extern "C" {
        pub(super) fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
}

impl MonotonicClock {
    /// True where this clock is the OS's monotonic clock (elsewhere a registry falls back to the
    /// private clock).
    pub(crate) const AVAILABLE: bool = cfg!(target_os = "linux");
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        #[cfg(target_os = "linux")]
        {
            let mut ts = os::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec (64-bit `time_t` and `long` on the
            // 64-bit Linux targets the library builds for); CLOCK_MONOTONIC always exists.
            let rc = unsafe { os::clock_gettime(os::CLOCK_MONOTONIC, &mut ts) };
            debug_assert_eq!(rc, 0);
            (ts.tv_sec as u64)
                .wrapping_mul(1_000_000_000)
                .wrapping_add(ts.tv_nsec as u64)
        }
        #[cfg(not(target_os = "linux"))]
        {
            unreachable!("MonotonicClock is used only where AVAILABLE")
        }
    }
}

/// The version of the owner words' layout this library implements
/// (`WK_OWNER_WORDS_LAYOUT_VERSION` of its header). A host compares it with its own at start
/// and refuses to run on another. Any thread may call this.
#[no_mangle]
pub extern "C" fn wk_owner_layout_version() -> u32 {
    ffi_panic_boundary! { WK_OWNER_WORDS_LAYOUT_VERSION }
}

/// Writes the owner's words to `*words_out` (module docs). The owner keeps them, at the same
/// addresses, while any handle to it lives (the host keeps `owner` alive while it uses them).
///
/// # Safety
///
/// `owner` must be NULL or a live handle; `words_out` NULL or writable for one `wk_owner_words`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_words_get(
    owner: *const wk_owner,
    words_out: *mut wk_owner_words,
) -> wk_status {
    ffi_panic_boundary! {
        let h = try_ref!(wk_owner, owner);
        let words_out = check_out!(words_out);
        let words = wk_owner_words {
            state: h.state_word().as_ptr(),
            lease_until: h.lease_word().as_ptr().cast_const(),
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(words_out, words) };
        WK_STATUS_OK
    }
}

/// Writes the registry's words to `*words_out` (module docs): valid while the registry handle
/// or a handle to any of its owners lives.
///
/// # Safety
///
/// `registry` must be NULL or a live handle; `words_out` NULL or writable for one
/// `wk_owner_registry_words`.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_registry_words_get(
    registry: *const wk_owner_registry,
    words_out: *mut wk_owner_registry_words,
) -> wk_status {
    ffi_panic_boundary! {
        let r = try_ref!(wk_owner_registry, registry);
        let words_out = check_out!(words_out);
        let (clock_kind, clock, tsc) = match &r.clock {
            HostClock::Private => (WK_OWNER_CLOCK_PRIVATE, std::ptr::null(), (0, 0)),
            HostClock::Monotonic => (WK_OWNER_CLOCK_MONOTONIC, std::ptr::null(), (0, 0)),
            HostClock::Word(w) => (WK_OWNER_CLOCK_WORD, w.0.as_ptr().cast_const(), (0, 0)),
            HostClock::Tsc(t) => (WK_OWNER_CLOCK_TSC, std::ptr::null(), (t.origin, t.mul)),
        };
        let rows = r.registry.host_gauge_rows();
        let stride = std::mem::size_of_val(&rows[0]) as u32;
        let words = wk_owner_registry_words {
            layout_version: WK_OWNER_WORDS_LAYOUT_VERSION,
            clock_kind,
            stopped: r.registry.stopped_word().as_ptr().cast_const(),
            clock,
            gauge: rows[0].begun.as_ptr(),
            gauge_row_stride: stride,
            max_operations: r.registry.max_operations(),
            tsc_origin: tsc.0,
            tsc_mul: tsc.1,
        };
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(words_out, words) };
        WK_STATUS_OK
    }
}

/// The inline done's slow path: ends one scope the host admitted (inline or through
/// `wk_owner_begin`) and, if it was the owner's last while its quiescence was pending, retires
/// the owner and wakes its quiescers. The host's own once-only done flag must guarantee one end
/// per admitted scope; an owner with no admitted scope gives `WK_STATUS_INVALID_ARGUMENT` and
/// nothing changes. Lock-free unless it retires the owner.
///
/// # Safety
///
/// `owner` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wk_owner_scope_end(owner: *const wk_owner) -> wk_status {
    ffi_panic_boundary! {
        if try_ref!(wk_owner, owner).try_end_detached() {
            WK_STATUS_OK
        } else {
            WK_STATUS_INVALID_ARGUMENT
        }
    }
}

/// The test suite's own readings of the hosted clocks.
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod tests_os {
    /// `CLOCK_MONOTONIC` now, in nanoseconds.
    pub(crate) fn now() -> u64 {
        wkcore::clock::Clock::now_nanos(&super::MonotonicClock)
    }

    /// The TSC clock's reading as a host computes it from the published words.
    pub(crate) fn tsc_now(origin: u64, mul: u64) -> u64 {
        let t = super::rdtsc();
        if t <= origin {
            return 0;
        }
        ((u128::from(t - origin) * u128::from(mul)) >> 32) as u64
    }
}
