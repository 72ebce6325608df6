//! Per-thread CPU time, to tell a contended trial from one in which a thread was descheduled.
//!
//! On a 2-vCPU machine a descheduled thread silently turns a contention benchmark into a serial
//! one; comparing a thread's CPU time with its wall time over the trial shows it.

use std::time::Duration;

/// CPU time consumed so far by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), or `None` where
/// the platform has no such clock.
#[cfg(unix)]
pub fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call, and
    // `CLOCK_THREAD_CPUTIME_ID` reads only the calling thread's own accounting.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

/// CPU time consumed so far by the calling thread: not available on this platform.
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}
