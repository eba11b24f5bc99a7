//! The process's limit on open files: raised to its hard maximum when the
//! first runtime starts, since every call's files count against it.

use std::sync::OnceLock;

/// The process's limit on open files (raised to its hard maximum the first
/// time it is asked for, as every runtime does at start), if it is known.
pub fn open_file_limit() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(raise)
}

#[cfg(unix)]
fn raise() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            tracing::warn!("cannot raise the limit on open files to its maximum: {e}");
        }
    }
    getrlimit(Resource::Nofile).current
}

#[cfg(not(unix))]
fn raise() -> Option<u64> {
    None
}
