//! Page faults the calling thread has taken, for the benches that count
//! them around a call.

/// Page faults (minor plus major) this thread has taken so far: fields 10
/// and 12 of `/proc/thread-self/stat` (0 where there is no such file).
pub fn thread_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |n: usize| -> u64 { fields.get(n - 3).and_then(|f| f.parse().ok()).unwrap_or(0) };
    field(10) + field(12)
}
