//! A call's files are bounded: open at once (point 3), bytes written
//! (point 12), and directory listings read as asked for (point 8).

use std::path::Path;

use serde_json::json;
use toolhost::{DirGrant, DirMode, Grants, Limits, ToolManager, WasmModule};

use crate::common::{call, load_guest};

/// The hostile guest as module `name`, with `data/` of `root` granted
/// read-write at `/data`, under `limits`.
fn granted(root: &Path, name: &str, limits: Limits) -> ToolManager {
    let grants = Grants {
        dirs: vec![DirGrant {
            host: "data".into(),
            guest: "/data".into(),
            mode: DirMode::Rw,
        }],
        ..Grants::default()
    };
    let module: WasmModule = load_guest("guest-hostile", name, limits)
        .unwrap()
        .with_access(grants.resolve(root).unwrap());
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    manager
}

fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("data")).unwrap();
    std::fs::write(root.path().join("data/f.txt"), "hello").unwrap();
    root
}

#[test]
fn open_files_are_capped_per_call() {
    let root = tree();
    let limits = Limits {
        max_open_files: 20,
        ..Limits::default()
    };
    let m = granted(root.path(), "h", limits);
    // The granted directory holds one of the 20.
    let answer = call(
        &m,
        "h_open_files",
        json!({"path": "/data/f.txt", "count": 1000}),
    );
    assert!(answer.starts_with("opened 19; then: "), "{answer}");
    // Each call has its own 20, given back when it ends.
    let again = call(
        &m,
        "h_open_files",
        json!({"path": "/data/f.txt", "count": 19}),
    );
    assert_eq!(again, "opened 19");
    // Listings count too, and are given back when dropped.
    let listed = call(&m, "h_list_dir", json!({"text": "/data"}));
    assert_eq!(listed, "1 entries");
}

#[test]
fn writes_are_capped_per_call() {
    let root = tree();
    let limits = Limits {
        max_write_bytes: 1 << 20,
        ..Limits::default()
    };
    let m = granted(root.path(), "h", limits);
    // Writes stop exactly at the limit; wasi-libc reports a failed stream
    // write as EIO.
    let answer = call(
        &m,
        "h_write_bytes",
        json!({"path": "/data/big", "count": 5 << 20}),
    );
    assert_eq!(answer, "wrote 1048576; then: I/O error (os error 29)");
    assert_eq!(
        std::fs::metadata(root.path().join("data/big"))
            .unwrap()
            .len(),
        1 << 20
    );
    // Growing a file counts as writing it.
    let grown = call(
        &m,
        "h_grow_file",
        json!({"path": "/data/sparse", "count": 3u64 << 30}),
    );
    assert_eq!(
        grown,
        "Error: tool 'h_grow_file' failed: set_len: No space left on device (os error 51)"
    );
    assert_eq!(
        std::fs::metadata(root.path().join("data/sparse"))
            .unwrap()
            .len(),
        0
    );
    // Each call has its own budget.
    let small = call(
        &m,
        "h_write_bytes",
        json!({"path": "/data/small", "count": 1000}),
    );
    assert_eq!(small, "wrote 1000");
}

#[test]
fn directories_are_listed_whole() {
    let root = tree();
    for i in 0..3_000 {
        std::fs::write(root.path().join(format!("data/file-{i:05}")), "").unwrap();
    }
    std::fs::create_dir(root.path().join("data/sub")).unwrap();
    let m = granted(root.path(), "h", Limits::default());
    assert_eq!(
        call(&m, "h_list_dir", json!({"text": "/data"})),
        "3002 entries"
    );
    assert_eq!(
        call(&m, "h_list_dir", json!({"text": "/data/sub"})),
        "0 entries"
    );
    assert!(call(&m, "h_list_dir", json!({"text": "/data/f.txt"})).contains("directory"));
}
