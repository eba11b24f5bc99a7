//! One call's files cannot starve another's (hardening point 3): with the
//! process limited to 1,024 open files, calls holding as many files as
//! they can leave room for the others.

use std::os::unix::process::CommandExt;
use std::process::Command;

use serde_json::{Value, json};
use toolhost_testkit::guest;

/// Runs `toolhost dispatch` in `dir` with at most `files` open files.
fn dispatch_with_files(dir: &std::path::Path, files: u64, input: &str) -> (Value, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command.arg("dispatch").current_dir(dir);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        command.pre_exec(move || {
            let limit = rustix::process::Rlimit {
                current: Some(files),
                maximum: Some(files),
            };
            rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("toolhost starts");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn calls_holding_many_files_leave_room_for_others() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/f.txt"), "hello").unwrap();
    let hostile = guest("guest-hostile");
    let config = format!(
        "[cache]\nenabled = false\n\n\
         [[modules]]\nname = \"h\"\npath = {path:?}\n[modules.grants]\ndirs = [{{ host = \"data\", guest = \"/data\", mode = \"rw\" }}]\n\n\
         [[modules]]\nname = \"r\"\npath = {path:?}\n[modules.grants]\ndirs = [{{ host = \"data\", guest = \"/data\" }}]\n",
        path = hostile.display().to_string()
    );
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    let mut calls: Vec<Value> = (0..3)
        .map(|i| {
            let arguments = json!({"path": "/data/f.txt", "count": 100_000, "hold_ms": 1_500});
            json!({"id": format!("hog{i}"), "function": {"name": "h_open_files", "arguments": arguments.to_string()}})
        })
        .collect();
    calls.extend((0..20).map(|i| {
        json!({"id": format!("read{i}"), "function": {"name": "r_read_file", "arguments": "{\"text\": \"/data/f.txt\"}"}})
    }));
    let (replies, stderr) = dispatch_with_files(dir.path(), 1024, &Value::Array(calls).to_string());
    let replies = replies
        .as_array()
        .unwrap_or_else(|| panic!("no replies; stderr: {stderr}"));
    for reply in &replies[..3] {
        let content = reply["content"].as_str().unwrap();
        assert!(content.starts_with("opened 255; then: "), "{content}");
    }
    for reply in &replies[3..] {
        assert_eq!(reply["content"], "hello", "{reply}");
    }
    assert!(
        stderr.contains("may need 2048 open files, more than this process may open (1024)"),
        "{stderr}"
    );
}
