//! Tells the crate where the workspace is and where the guest components
//! are built (the target directory the bundled example tools are built in),
//! so that the test guests are built beside them.

use std::env;
use std::path::PathBuf;

#[path = "../../build/guest_cargo.rs"]
mod guest_cargo;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .and_then(|p| p.parent())
        .expect("crates/testkit is two levels below the workspace root")
        .to_path_buf();
    let guests = guest_cargo::guest_target_dir(&root, env::var_os("CARGO_TARGET_DIR").as_deref());
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    println!("cargo:rustc-env=TESTKIT_WORKSPACE_ROOT={}", root.display());
    println!(
        "cargo:rustc-env=TESTKIT_GUEST_TARGET_DIR={}",
        guests.display()
    );
}
