//! The one way toolhost builds its Rust guest components: the target, the
//! profile, the target directory and the host-only settings a nested cargo
//! must not inherit.
//!
//! Included with `#[path]` by the root package's `build.rs` (the bundled
//! example tools), by xtask (the Rust example tools) and by
//! `crates/testkit` (the test guests). It is a file, not a crate: as a
//! build-dependency a path crate would keep `toolhost` from being
//! published.

// Each includer uses a part of this file.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target the guest components are built for.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// The cargo profile the guest components are built with (the workspace's
/// `[profile.guest]`).
pub const GUEST_PROFILE: &str = "guest";

/// The variables of the outer (host) build that a nested guest build must
/// not inherit: compiler flags, wrappers, a target and a target directory
/// meant for the host, and cargo's note that the outer package is the
/// primary one.
pub const HOST_ONLY_VARS: [&str; 8] = [
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_PRIMARY_PACKAGE",
];

/// The workspace's target directory: `CARGO_TARGET_DIR` when it is set
/// (relative to `root` when it is relative), else `<root>/target`.
pub fn workspace_target_dir(root: &Path, cargo_target_dir: Option<&OsStr>) -> PathBuf {
    match cargo_target_dir.map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// Where the guest components are built: `guests/` in the workspace's
/// target directory (see [`workspace_target_dir`]), a target directory of
/// their own, so a nested build never waits on the outer build's lock.
pub fn guest_target_dir(root: &Path, cargo_target_dir: Option<&OsStr>) -> PathBuf {
    workspace_target_dir(root, cargo_target_dir).join("guests")
}

/// `cargo build` of `packages` for the guest target and profile, run in
/// `root`, into `target_dir`, with none of [`HOST_ONLY_VARS`] inherited.
pub fn guest_build<'a>(
    cargo: &OsStr,
    root: &Path,
    target_dir: &Path,
    packages: impl IntoIterator<Item = &'a str>,
) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args([
            "build",
            "--profile",
            GUEST_PROFILE,
            "--target",
            GUEST_TARGET,
        ])
        .arg("--target-dir")
        .arg(target_dir);
    for package in packages {
        command.args(["-p", package]);
    }
    for var in HOST_ONLY_VARS {
        command.env_remove(var);
    }
    command
}

/// The folder [`guest_build`] writes the components in, in `target_dir`.
pub fn guest_out_dir(target_dir: &Path) -> PathBuf {
    target_dir.join(GUEST_TARGET).join(GUEST_PROFILE)
}

/// The component [`guest_build`] writes for `package` in `target_dir`
/// (cargo spells a package's `-` as `_` in its artifact's name).
pub fn guest_wasm(target_dir: &Path, package: &str) -> PathBuf {
    guest_out_dir(target_dir).join(format!("{}.wasm", package.replace('-', "_")))
}
