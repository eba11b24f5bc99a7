//! CPU time the whole bench process has used, to say how many cores a
//! timed span kept busy.

use std::time::Duration;

/// User plus system time of every thread of this process so far, from
/// `getrusage(RUSAGE_SELF)` (zero where that fails).
pub fn process_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`, which is all
    // `getrusage` writes to; on failure it is left zeroed.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        let seconds = u64::try_from(t.tv_sec).unwrap_or(0);
        let micros = u64::try_from(t.tv_usec).unwrap_or(0);
        Duration::from_secs(seconds) + Duration::from_micros(micros)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}
