//! `toolhost serve` with a module from an OCI registry: a reload that finds
//! the tag moved to a digest its `[[trust]]` rule cannot verify keeps the
//! module loaded before serving, and logs why.

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use toolhost_testkit::guest;
use toolhost_testkit::registry::{TestRegistry, key_pair_pem};

use crate::raw::StdioServer;

const RELOAD_TIMEOUT: Duration = Duration::from_secs(120);

fn push(dir: &std::path::Path, file: &std::path::Path, reference: &str, key: Option<&str>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(["push", file.to_str().unwrap(), reference])
        .current_dir(dir)
        .env("DOCKER_CONFIG", dir.join("docker"));
    if let Some(key) = key {
        command.args(["--sign-key", key]);
    }
    let out = command.output().expect("toolhost push runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_reload_that_cannot_verify_the_new_digest_keeps_the_old_module() {
    let registry = TestRegistry::start();
    let dir = tempfile::tempdir().unwrap();
    let (private, public) = key_pair_pem();
    std::fs::write(dir.path().join("k.pem"), private).unwrap();
    std::fs::write(dir.path().join("k.pub"), public).unwrap();
    let reference = format!("{}/acme/tool:1.0", registry.host());
    let config = format!(
        "[[registries]]\nhost = \"{host}\"\nplain_http = true\n\n[[trust]]\nprefix = \"{host}/acme/\"\nkey = \"k.pub\"\n\n[[modules]]\nname = \"tool\"\noci = \"{reference}\"\n",
        host = registry.host()
    );
    std::fs::write(dir.path().join("toolhost.toml"), &config).unwrap();
    push(dir.path(), &guest("guest-echo"), &reference, Some("k.pem"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .current_dir(dir.path())
        .env("DOCKER_CONFIG", dir.path().join("docker"));
    let mut server = StdioServer::start(command);
    assert_eq!(
        server.call("tool_echo", json!({"text": "v1"})),
        (false, "v1".into())
    );

    // The tag moves to an unsigned component; a reload refuses it and the
    // signed one goes on serving.
    push(dir.path(), &guest("guest-verbatim"), &reference, None);
    let pid = rustix::process::Pid::from_raw(server.pid() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).expect("SIGHUP sent");
    let line = server.wait_log("the module loaded before keeps serving", RELOAD_TIMEOUT);
    assert!(
        line.contains("no signature was found") && line.contains(&reference),
        "{line}"
    );
    assert_eq!(
        server.call("tool_echo", json!({"text": "still v1"})),
        (false, "still v1".into())
    );

    // Signed again: the next reload takes it.
    push(
        dir.path(),
        &guest("guest-verbatim"),
        &reference,
        Some("k.pem"),
    );
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).expect("SIGHUP sent");
    server.wait_log("1 compiled", RELOAD_TIMEOUT);
    let names = server.list_names(usize::MAX);
    assert!(!names.iter().any(|n| n == "tool_echo"), "{names:?}");
}
