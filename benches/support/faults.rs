//! Page faults the calling thread has taken, for the benches that count
//! them around a call.

/// Page faults (minor plus major) this thread has taken so far, from
/// `getrusage(RUSAGE_THREAD)` (0 where that fails).
///
/// A system call of well under a microsecond. Reading
/// `/proc/thread-self/stat` instead costs ~10 µs, which showed up as part of
/// every call timed around it; callers still read this outside the timed
/// span.
pub fn thread_faults() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`, which is all
    // `getrusage` writes to; on failure it is left zeroed.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let count = |n: libc::c_long| u64::try_from(n).unwrap_or(0);
    count(usage.ru_minflt) + count(usage.ru_majflt)
}
