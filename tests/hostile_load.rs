//! Every attack of the hostile suite at once, from several threads, mixed
//! with benign calls: every benign result is right, the process lives, and
//! its memory comes back near where it started.
//!
//! A test binary of its own, so that no other test's memory shows in the
//! process's resident size.

#[allow(dead_code)]
#[path = "it/common.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost::{DirGrant, DirMode, Grants, Limits, ToolManager, WasmModule};

use common::{bundled_manager, call, guest, load_guest, runtime};

const THREADS: usize = 4;
const ROUNDS: usize = 3;

/// The resident set size of this process, in bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4096
}

/// An attack: the tool, its arguments and the start of the answer it must end
/// in (an error, or for an output flood the tool's own answer; one of several
/// where two limits race).
struct Attack {
    tool: &'static str,
    arguments: Value,
    errors: &'static [&'static str],
}

fn attacks() -> Vec<Attack> {
    let attack = |tool, arguments, errors| Attack {
        tool,
        arguments,
        errors,
    };
    vec![
        // Fuel or time, whichever ends it first: on two busy cores (four
        // threads, and components compiling meanwhile) 200,000,000 fuel
        // units can take longer than the 1,000 ms limit.
        attack(
            "h_spin",
            json!({}),
            &[
                "Error: tool 'h_spin' ran out of fuel",
                "Error: tool 'h_spin' exceeded its time limit of 1000 ms.",
            ],
        ),
        Attack {
            tool: "h_spin_wasi",
            arguments: json!({}),
            errors: &[
                "Error: tool 'h_spin_wasi' ran out of fuel",
                "Error: tool 'h_spin_wasi' exceeded its time limit of 1000 ms.",
            ],
        },
        attack(
            "h_membomb",
            json!({}),
            &["Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."],
        ),
        attack(
            "h_recurse",
            json!({}),
            &["Error: tool 'h_recurse' trapped: call stack exhausted"],
        ),
        attack(
            "h_big_output",
            json!({"bytes": 300_000_000}),
            &["Error: tool 'h_big_output' exceeded its memory limit"],
        ),
        attack(
            "h_big_output",
            json!({"bytes": 5_000_000}),
            &["Error: tool 'h_big_output' returned 5000000 bytes, more than its output limit"],
        ),
        attack(
            "h_panic",
            json!({"text": "boom"}),
            &["Error: tool 'h_panic' panicked: boom"],
        ),
        attack(
            "h_read_file",
            json!({"text": "/etc/passwd"}),
            &["Error: tool 'h_read_file' failed: "],
        ),
        attack(
            "h_read_file",
            json!({"text": "/data/../secret.txt"}),
            &["Error: tool 'h_read_file' failed: "],
        ),
        attack(
            "h_write_file",
            json!({"path": "/data/new.txt", "text": "x"}),
            &["Error: tool 'h_write_file' failed: "],
        ),
        attack(
            "h_connect",
            json!({"address": "127.0.0.1:9", "message": "x"}),
            &["Error: tool 'h_connect' failed: connect: Permission denied"],
        ),
        attack(
            "h_stderr_flood",
            json!({"bytes": 2_000_000}),
            &["wrote 2000128 bytes to stderr"],
        ),
        attack(
            "h_symlink",
            json!({"target": "/etc/passwd", "link": "evil"}),
            &["Error: tool 'h_symlink' failed: not-permitted"],
        ),
        attack(
            "h_sleep",
            json!({"ms": 3_600_000}),
            &["Error: tool 'h_sleep' exceeded its time limit of 1000 ms."],
        ),
    ]
}

/// Bad components loaded while the calls run; each must be a load error.
const BAD_GUESTS: [&str; 6] = [
    "guest-info-trap",
    "guest-info-spin",
    "guest-info-bad-json",
    "guest-info-bad-name",
    "guest-info-many",
    "guest-unknown-import",
];

fn manager(root: &Path) -> ToolManager {
    let grants = Grants {
        dirs: vec![DirGrant {
            host: "data".into(),
            guest: "/data".into(),
            mode: DirMode::Ro,
        }],
        ..Grants::default()
    };
    let limits = Limits {
        timeout_ms: 1_000,
        ..common::tight_limits()
    };
    let module = load_guest("guest-hostile", "h", limits)
        .expect("hostile guest loads")
        .with_access(grants.resolve(root).expect("grants resolve"));
    let mut manager = bundled_manager();
    manager.register(module).unwrap();
    manager
}

fn benign(m: &ToolManager, n: usize) {
    assert_eq!(
        call(
            m,
            "calc_evaluate",
            json!({"expression": format!("{n} * 3")})
        ),
        (n * 3).to_string()
    );
    assert_eq!(
        call(m, "h_add", json!({"a": n, "b": 2})),
        (n + 2).to_string()
    );
    assert_eq!(call(m, "h_counter", json!({})), "1 1");
    assert_eq!(
        call(m, "h_read_file", json!({"text": "/data/hello.txt"})),
        "hi"
    );
    assert_eq!(call(m, "h_env", json!({})), "0 vars: ");
}

fn one_round(m: &ToolManager, seed: usize) {
    for (i, attack) in attacks().iter().enumerate() {
        let out = call(m, attack.tool, attack.arguments.clone());
        assert!(
            attack.errors.iter().any(|e| out.starts_with(e)),
            "{}: {out}",
            attack.tool
        );
        benign(m, seed * 100 + i);
    }
}

fn load_bad_components() {
    let limits = Limits {
        tool_info_timeout_ms: 1_000,
        tool_info_fuel: 200_000_000,
        ..Limits::default()
    };
    for package in BAD_GUESTS {
        assert!(load_guest(package, "bad", limits).is_err(), "{package}");
    }
    let core_module = b"\0asm\x01\0\0\0";
    for bytes in [&b""[..], b"not wasm", core_module, b"\0asm\x0d\0\x01\0\x01"] {
        assert!(WasmModule::from_bytes(runtime(), "bad", bytes, limits).is_err());
    }
    let real = std::fs::read(guest("guest-hostile")).unwrap();
    assert!(WasmModule::from_bytes(runtime(), "bad", &real[..real.len() / 2], limits).is_err());
}

/// `rounds` rounds of every attack on each of `THREADS` threads (the first
/// numbered from `first`), while another thread loads bad components.
fn in_parallel(manager: &Arc<ToolManager>, rounds: usize, first: usize) {
    let mut threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let m = Arc::clone(manager);
            std::thread::spawn(move || {
                for round in 0..rounds {
                    one_round(&m, first + t * rounds + round);
                }
            })
        })
        .collect();
    threads.push(std::thread::spawn(move || {
        for _ in 0..rounds {
            load_bad_components();
        }
    }));
    for thread in threads {
        thread.join().expect("no thread panicked");
    }
}

#[test]
fn hostile_and_benign_calls_mixed_across_threads() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("data")).unwrap();
    std::fs::write(root.path().join("data/hello.txt"), "hi").unwrap();
    std::fs::write(root.path().join("secret.txt"), "top secret").unwrap();
    let manager = Arc::new(manager(root.path()));
    // Warm up with the same mix at once (every attack, every bad component),
    // so that the instance pool's slots in use and warm (whose resident
    // memory is bounded by `[pool]`, see PoolConfig) are in the baseline;
    // then measure.
    in_parallel(&manager, 1, 0);
    let baseline = resident_bytes();
    in_parallel(&manager, ROUNDS, 1);
    assert!(!root.path().join("data/new.txt").exists());
    assert!(std::fs::symlink_metadata(root.path().join("data/evil")).is_err());

    let after = resident_bytes();
    let grown = after.saturating_sub(baseline);
    // The attacks alone asked for THREADS * ROUNDS * (32 + 32 + 300) MiB and
    // more; a leak of even one membomb per call would show here. The pool's
    // resident memory is in the bound too: each slot used, at most (calls in
    // flight + warm_slots) = 5 + 16 of them, keeps up to keep_resident_kib
    // (1 MiB by default) of its memory and 1 MiB of its tables.
    eprintln!(
        "resident: baseline {} MiB, after {} MiB",
        baseline >> 20,
        after >> 20
    );
    assert!(
        grown < 64 << 20,
        "resident memory grew by {} MiB (baseline {} MiB)",
        grown >> 20,
        baseline >> 20
    );
    // And the host still serves.
    benign(&manager, 7);
}
