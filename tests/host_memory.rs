//! What a call can make the host hold stays small, measured on this
//! process's peak resident memory. A test binary of its own with one test,
//! so that nothing else runs meanwhile.

#[allow(dead_code)]
#[path = "it/common.rs"]
mod common;

use serde_json::json;
use toolhost::{DirGrant, DirMode, Grants, Limits, ToolManager};

use common::{call, load_guest};

/// A field of /proc/self/status, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    kib * 1024
}

/// Resets the peak resident memory (VmHWM) to the current one.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs resets the peak");
}

#[test]
fn listing_a_large_directory_takes_no_host_memory() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let long = "n".repeat(200);
    for i in 0..60_000 {
        std::fs::write(data.join(format!("{long}-{i:05}")), "").unwrap();
    }
    std::fs::create_dir(data.join("small")).unwrap();
    std::fs::write(data.join("small/one"), "").unwrap();
    let grants = Grants {
        dirs: vec![DirGrant {
            host: "data".into(),
            guest: "/data".into(),
            mode: DirMode::Ro,
        }],
        ..Grants::default()
    };
    let module = load_guest("guest-hostile", "h", Limits::default())
        .unwrap()
        .with_access(grants.resolve(root.path()).unwrap());
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    // Warm up: a first call, and a listing of a small directory.
    assert_eq!(
        call(&manager, "h_list_dir", json!({"text": "/data/small"})),
        "1 entries"
    );
    reset_peak();
    let before = status_bytes("VmRSS:");
    let listed = call(&manager, "h_list_dir", json!({"text": "/data"}));
    let peak = status_bytes("VmHWM:");
    assert_eq!(listed, "60001 entries");
    // 60,000 names of 206 bytes are 12 MB; reading them one at a time takes
    // a directory buffer's worth.
    let grown = peak.saturating_sub(before);
    assert!(
        grown < 6 << 20,
        "the listing took {} KiB of host memory",
        grown >> 10
    );
}
