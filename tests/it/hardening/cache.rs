//! The compile cache cannot be fed by another user (point 5).

use std::path::Path;

use toolhost::{Compiled, Limits, Runtime, WasmModule, bundled_module};

fn calc(runtime: &Runtime) -> WasmModule {
    let bytes = bundled_module("calc").unwrap();
    WasmModule::from_bytes(runtime, "calc", bytes, Limits::default()).expect("calc loads")
}

/// A seal that matches `artifact`.
fn forged_seal(artifact: &[u8]) -> Vec<u8> {
    let mut seal = b"toolhost-cwasm2\n".to_vec();
    seal.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
    seal.extend_from_slice(blake3::hash(artifact).as_bytes());
    seal
}

/// Writes entry `name` into `dir`: `artifact` and a seal that matches it.
fn forge_entry(dir: &Path, name: &std::ffi::OsStr, artifact: &[u8]) {
    std::fs::write(dir.join(name), artifact).unwrap();
    let mut seal = name.to_owned();
    seal.push(".sum");
    std::fs::write(dir.join(seal), forged_seal(artifact)).unwrap();
}

/// The artifact file of the only entry in `dir`.
fn the_entry(dir: &Path) -> std::path::PathBuf {
    let files = toolhost_testkit::files_in(dir);
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        files[1].to_string_lossy().ends_with(".cwasm.sum"),
        "{files:?}"
    );
    files[0].clone()
}

#[test]
fn a_swapped_cache_directory_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache");
    let runtime = Runtime::with_cache_dir(&path).unwrap();
    assert_eq!(calc(&runtime).compiled(), Compiled::Fresh);
    let entry_name = the_entry(&path).file_name().unwrap().to_owned();
    // Someone swaps the directory for one of theirs holding a forged entry of
    // the same name.
    std::fs::rename(&path, dir.path().join("moved")).unwrap();
    std::fs::create_dir(&path).unwrap();
    forge_entry(&path, &entry_name, b"not machine code");
    // The runtime keeps using the directory it opened: the real entry.
    assert_eq!(calc(&runtime).compiled(), Compiled::Cached);
    assert_eq!(
        std::fs::read(path.join(&entry_name)).unwrap(),
        b"not machine code",
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
    let entry = the_entry(&path);
    // The artifact replaced by a link to a file elsewhere, its seal by one
    // that matches that file.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::write(&elsewhere, b"not machine code").unwrap();
    let mut seal = entry.clone().into_os_string();
    seal.push(".sum");
    std::fs::write(&seal, forged_seal(b"not machine code")).unwrap();
    std::fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
    let again = Runtime::with_cache_dir(&path).unwrap();
    assert_eq!(calc(&again).compiled(), Compiled::Fresh);
}
