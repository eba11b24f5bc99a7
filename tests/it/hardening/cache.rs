//! The compile cache cannot be fed by another user (point 5).

use sha2::{Digest, Sha256};
use toolhost::{Compiled, Limits, Runtime, WasmModule, bundled_module};

fn calc(runtime: &Runtime) -> WasmModule {
    let bytes = bundled_module("calc").unwrap();
    WasmModule::from_bytes(runtime, "calc", bytes, Limits::default()).expect("calc loads")
}

/// An entry with a valid header and digest around `artifact`.
fn forged_entry(artifact: &[u8]) -> Vec<u8> {
    let mut entry = b"toolhost-cwasm1\n".to_vec();
    entry.extend_from_slice(&Sha256::digest(artifact));
    entry.extend_from_slice(artifact);
    entry
}

#[test]
fn a_swapped_cache_directory_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache");
    let runtime = Runtime::with_cache_dir(&path).unwrap();
    assert_eq!(calc(&runtime).compiled(), Compiled::Fresh);
    let entry_name = toolhost_testkit::files_in(&path)[0]
        .file_name()
        .unwrap()
        .to_owned();
    // Someone swaps the directory for one of theirs holding a forged entry of
    // the same name.
    std::fs::rename(&path, dir.path().join("moved")).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join(&entry_name), forged_entry(b"not machine code")).unwrap();
    // The runtime keeps using the directory it opened: the real entry.
    assert_eq!(calc(&runtime).compiled(), Compiled::Cached);
    assert_eq!(
        std::fs::read(path.join(&entry_name)).unwrap(),
        forged_entry(b"not machine code"),
        "the forged entry was neither read nor replaced"
    );
}

#[cfg(unix)]
#[test]
fn a_cache_others_could_swap_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let open = toolhost_testkit::world_writable_dir(dir.path(), "open");
    let err = Runtime::with_cache_dir(open.join("cache"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("others can write without the sticky bit (mode 777)"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_linked_entry_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache");
    let runtime = Runtime::with_cache_dir(&path).unwrap();
    assert_eq!(calc(&runtime).compiled(), Compiled::Fresh);
    let entry = toolhost_testkit::files_in(&path).remove(0);
    // The entry replaced by a link to a file elsewhere (with a valid digest).
    let elsewhere = dir.path().join("elsewhere");
    std::fs::write(&elsewhere, forged_entry(b"not machine code")).unwrap();
    std::fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
    let again = Runtime::with_cache_dir(&path).unwrap();
    assert_eq!(calc(&again).compiled(), Compiled::Fresh);
}
