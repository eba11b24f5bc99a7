//! The WASI context of one call: what its [`Access`] allows, and nothing else.

use std::sync::Arc;

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::capture::Capture;
use super::fault::Fault;
use super::network::{self, ConnectChecks};
use super::scratch::Scratch;
use crate::policy::{Access, DirMode, SCRATCH_GUEST_PATH};

// Caps on what a guest can make the host allocate through WASI, set
// explicitly rather than left at wasmtime's defaults. Bytes copied from guest
// to host in one host call (wasmtime: 128 MiB) are capped by the store's
// host-call fuel (see `store.rs`).

/// Bytes one `get-random-bytes` call may ask for (wasmtime: 64 MiB).
const MAX_RANDOM_BYTES: u64 = 1024 * 1024;

/// Where a call's stdout and stderr go.
#[derive(Clone, Copy)]
pub(super) struct Outputs<'a> {
    pub stdout: &'a Capture,
    pub stderr: &'a Capture,
}

/// The WASI context of a call with `access`, writing to `outputs`: no
/// stdin, and only the granted directories, variables and sockets, and
/// `scratch` (when granted) as a read-write directory at
/// [`SCRATCH_GUEST_PATH`].
pub(super) fn wasi_context(
    access: &Arc<Access>,
    checks: ConnectChecks,
    outputs: Outputs<'_>,
    scratch: Option<&Scratch>,
) -> Result<WasiCtx, Fault> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(outputs.stdout.clone())
        .stderr(outputs.stderr.clone())
        .max_random_size(MAX_RANDOM_BYTES)
        // Filesystem work runs on the thread running the call, not in a pool
        // shared with other calls: a slow filesystem delays only its calls.
        .allow_blocking_current_thread(true);
    network::configure(access, checks, &mut builder);
    for (key, value) in &access.env {
        builder.env(key, value);
    }
    for dir in &access.dirs {
        let perms = match dir.mode {
            DirMode::Ro => FsPerms::ReadOnly,
            DirMode::Rw => FsPerms::ReadWrite,
        };
        builder
            .preopened_dir(&dir.host, &dir.guest, perms)
            .map_err(|e| {
                Fault::Host(format!(
                    "cannot open the granted directory {}: {}",
                    dir.host.display(),
                    crate::engine::describe_error(&e)
                ))
            })?;
    }
    if let Some(scratch) = scratch {
        builder
            .preopened_dir(scratch.path(), SCRATCH_GUEST_PATH, FsPerms::ReadWrite)
            .map_err(|e| {
                Fault::Host(format!(
                    "cannot open the scratch directory {}: {}",
                    scratch.path().display(),
                    crate::engine::describe_error(&e)
                ))
            })?;
    }
    Ok(builder.build())
}
