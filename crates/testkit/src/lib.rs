//! Test support shared by toolhost's test suites (the library's and the
//! command's): the workspace's paths, the test guest components under
//! `tests/guests/` (built on first use), an HTTP(S) test server
//! ([`http_server`]), a real OCI registry ([`registry`]) and a registry
//! token service ([`token_server`]).

pub mod components;
pub mod http_server;
pub mod registry;
pub mod token_server;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[path = "../../../build/guest_cargo.rs"]
mod guest_cargo;

/// The test guests under `tests/guests/`, built together on first use.
const TEST_GUESTS: &[&str] = &[
    "guest-hostile",
    "guest-echo",
    "guest-verbatim",
    "guest-http",
    "guest-p3",
    // The example tool of outbound HTTP, built like the test guests.
    "fetch",
    "guest-info-trap",
    "guest-info-spin",
    "guest-info-bad-json",
    "guest-info-bad-name",
    "guest-info-duplicate",
    "guest-info-many",
    "guest-schema-bomb",
    "guest-schema-heavy",
    "guest-unknown-import",
    "guest-extra-export",
    "guest-wrong-world",
    "guest-wrong-signature",
    "guest-primed",
    "guest-plain",
    // README.md's tool in five minutes, as written there.
    "guest-greet",
    // The tools the MCP conformance suite calls (crates/cli/tests/mcp/conformance.rs).
    "guest-conformance",
];

/// The workspace root (the repository's top folder).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("TESTKIT_WORKSPACE_ROOT"))
}

/// Where guest components are built: `<target>/guests`, the target
/// directory `build.rs` uses for the bundled example tools.
fn guest_target_dir() -> &'static Path {
    Path::new(env!("TESTKIT_GUEST_TARGET_DIR"))
}

/// The path of test guest `package` (e.g. `guest-hostile`), building the
/// test guests on first use.
pub fn guest(package: &str) -> PathBuf {
    static BUILT: Mutex<bool> = Mutex::new(false);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !*built {
        build_test_guests();
        *built = true;
    }
    guest_cargo::guest_wasm(guest_target_dir(), package)
}

fn build_test_guests() {
    let cargo = std::env::var_os("CARGO")
        .or_else(|| option_env!("CARGO").map(Into::into))
        .unwrap_or_else(|| "cargo".into());
    let status = guest_cargo::guest_build(
        &cargo,
        workspace_root(),
        guest_target_dir(),
        TEST_GUESTS.iter().copied(),
    )
    .status()
    .expect("cargo runs");
    assert!(
        status.success(),
        "building the test guests failed: {status}"
    );
}

/// The files in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    files
}

/// The compiled artifacts in cache directory `dir` (each `NAME.cwasm` has
/// its seal, `NAME.cwasm.sum`, beside it), sorted.
pub fn cache_entries(dir: &Path) -> Vec<PathBuf> {
    files_in(dir)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "cwasm"))
        .collect()
}

/// A new directory `name` in `parent` that every user may write (mode 0777).
#[cfg(unix)]
pub fn world_writable_dir(parent: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = parent.join(name);
    std::fs::create_dir(&dir).expect("the directory is new");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))
        .expect("its mode can be set");
    dir
}

/// The peak resident memory of process `pid` so far (`VmHWM`, Linux), if it
/// still runs.
pub fn peak_resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .ok()?;
    Some(kib * 1024)
}
