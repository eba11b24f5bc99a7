//! Tells the crate where the workspace's target directory is, so that the
//! test guests are built beside the bundled example tools.

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .and_then(|p| p.parent())
        .expect("crates/testkit is two levels below the workspace root")
        .to_path_buf();
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root.join(p) })
        .unwrap_or_else(|| root.join("target"));
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    println!("cargo:rustc-env=TESTKIT_WORKSPACE_ROOT={}", root.display());
    println!("cargo:rustc-env=TESTKIT_TARGET_DIR={}", target.display());
}
