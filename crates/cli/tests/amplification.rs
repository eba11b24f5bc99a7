//! Inputs that could make `toolhost dispatch` use far more memory or output
//! than their own size: each run's peak resident memory and its output are
//! bounded by a small multiple of the input.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use toolhost_testkit::components::{core_module_with_tools, ok_result, tool_component};

/// What one run of `toolhost` gave: stdout, stderr, and its peak resident
/// memory.
struct Run {
    stdout: Vec<u8>,
    stderr: String,
    peak_bytes: u64,
}

/// Runs `toolhost` in `dir` with `args` and `stdin`, sampling its peak
/// resident memory every millisecond while it runs. (The kernel's own
/// figure for a child, from `wait4`, also counts the parent's memory when
/// the child was started with `vfork`, as Rust's `Command` does.)
fn toolhost(dir: &Path, args: &[&str], stdin: Vec<u8>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolhost starts");
    let pid = child.id();
    let mut input = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut out = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        out.read_to_end(&mut bytes).expect("stdout is read");
        bytes
    });
    let mut err = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        err.read_to_string(&mut text).expect("stderr is read");
        text
    });
    let mut peak = 0;
    while child.try_wait().expect("toolhost is waited for").is_none() {
        peak = peak.max(toolhost_testkit::peak_resident_bytes(pid).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    writer.join().unwrap();
    Run {
        stdout: reader.join().unwrap(),
        stderr: errors.join().unwrap(),
        peak_bytes: peak,
    }
}

const MIB: u64 = 1024 * 1024;

#[test]
fn dispatch_inputs_cannot_amplify() {
    let dir = tempfile::tempdir().unwrap();
    // A module of 1,024 tools with 64-character exposed names.
    let names: Vec<String> = (0..1024)
        .map(|i| format!("tool_{i:04}_{}", "x".repeat(52)))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let core = core_module_with_tools(&names, &ok_result("(i32.const 1024)", "(i32.const 2)"), "");
    std::fs::write(dir.path().join("m.wasm"), tool_component(&core, "utf8", 1)).unwrap();
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[cache]\nenabled = false\n\n[[modules]]\npath = \"m.wasm\"\n",
    )
    .unwrap();
    let baseline = toolhost(dir.path(), &["dispatch"], b"[]".to_vec());
    assert!(baseline.stderr.is_empty(), "{}", baseline.stderr);

    // 10,000 calls of unknown names (about 430 KB): each answer lists at
    // most 20 names, whatever the registry holds.
    let calls: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"id":"{i}","function":{{"name":"nope_{i}","arguments":"{{}}"}}}}"#))
        .collect();
    let input = format!("[{}]", calls.join(","));
    let unknown = toolhost(dir.path(), &["dispatch"], input.into_bytes());
    let replies: serde_json::Value = serde_json::from_slice(&unknown.stdout).expect("JSON out");
    let first = replies[0]["content"].as_str().unwrap();
    assert!(
        first.starts_with("Error: unknown tool 'nope_0'. Available: m_tool_"),
        "{first}"
    );
    assert!(first.ends_with(" ... and 1004 more."), "{first}");
    assert!(first.len() < 2_000, "{} bytes", first.len());
    assert!(
        unknown.stdout.len() < 32 * MIB as usize,
        "{} bytes out",
        unknown.stdout.len()
    );
    assert!(
        unknown.peak_bytes < baseline.peak_bytes + 200 * MIB,
        "peak {} MiB, {} MiB without calls",
        unknown.peak_bytes / MIB,
        baseline.peak_bytes / MIB
    );

    // Arguments of 8 million `[]` (16 MB) given as an object: refused by
    // their size before any tree is built of them.
    let arguments = format!("{{\"a\":[{}]}}", vec!["[]"; 8_000_000].join(","));
    let call = format!(
        r#"{{"id":"big","function":{{"name":"m_tool_0000_{}","arguments":{arguments}}}}}"#,
        "x".repeat(52)
    );
    let size = call.len() as u64;
    let big = toolhost(dir.path(), &["dispatch"], call.into_bytes());
    let reply: serde_json::Value = serde_json::from_slice(&big.stdout).expect("JSON out");
    let content = reply["content"].as_str().unwrap();
    assert!(
        content.ends_with(&format!(
            "was given {} bytes of arguments, more than its limit of 1048576 bytes.",
            arguments.len()
        )),
        "{content}"
    );
    assert!(
        big.peak_bytes < baseline.peak_bytes + 4 * size,
        "peak {} MiB for {} MiB of input ({} MiB without calls)",
        big.peak_bytes / MIB,
        size / MIB,
        baseline.peak_bytes / MIB
    );
}
