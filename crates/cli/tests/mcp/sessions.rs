//! MCP sessions are toolhost sessions: in a module with `sessions = true`,
//! the calls of one 2025-11-25 HTTP session, or of one stdio connection,
//! share that module's instance; other sessions never see it, a request
//! without a session (a 2026-07-28 client) is a fresh call, and a deleted
//! session's state is gone.

use std::process::Command;

use serde_json::{Value, json};

use crate::raw::{StdioServer, delete_session, http_call, open_session, session_post};
use crate::server::HttpServer;

/// A folder whose `toolhost.toml` serves the hostile test module as `k`
/// with sessions on (its `k_counter` counts its instance's calls).
fn config() -> tempfile::TempDir {
    config_with("")
}

/// [`config`], with `settings` (TOML sections) before the module.
fn config_with(settings: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        toolhost_testkit::guest("guest-hostile"),
        dir.path().join("hostile.wasm"),
    )
    .expect("copy");
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!(
            "{settings}\n[[modules]]\nname = \"k\"\npath = \"hostile.wasm\"\nsessions = true\n"
        ),
    )
    .expect("config");
    dir
}

fn toolhost(dir: &tempfile::TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command.current_dir(dir.path());
    command
}

fn counter_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "k_counter", "arguments": {}}})
}

#[test]
fn an_http_session_keeps_its_state_and_a_stateless_request_does_not() {
    let dir = config();
    let server = HttpServer::start(toolhost(&dir), &[]);
    let at = server.authority();
    let count = |session: &str| session_post(&at, Some(session), &counter_request(7)).call_result();
    let a = open_session(&at);
    let b = open_session(&at);
    assert_eq!(count(&a), (false, "1 1".into()));
    assert_eq!(count(&a), (false, "2 2".into()));
    assert_eq!(count(&b), (false, "1 1".into()), "b has its own instance");
    assert_eq!(count(&a), (false, "3 3".into()));
    // 2026-07-28: no session, so every call is fresh.
    for _ in 0..2 {
        assert_eq!(
            http_call(&at, "k_counter", json!({})).call_result(),
            (false, "1 1".into())
        );
    }
    let deleted = delete_session(&at, &a);
    assert!(matches!(deleted, 200 | 204), "{deleted}");
    let c = open_session(&at);
    assert_eq!(count(&c), (false, "1 1".into()));
    assert_eq!(count(&b), (false, "2 2".into()), "b lives on");
}

#[test]
fn a_stdio_connection_is_one_session() {
    let dir = config();
    let mut first = StdioServer::start(toolhost(&dir));
    assert_eq!(first.call("k_counter", json!({})), (false, "1 1".into()));
    assert_eq!(first.call("k_counter", json!({})), (false, "2 2".into()));
    let mut second = StdioServer::start(toolhost(&dir));
    assert_eq!(second.call("k_counter", json!({})), (false, "1 1".into()));
    assert_eq!(first.call("k_counter", json!({})), (false, "3 3".into()));
}

/// An HTTP session whose state was dropped to make room for newer ones is
/// told so at its next call, however many sessions came after it (ten
/// times `[sessions] max`), and then starts afresh; a new session's first
/// call runs.
#[test]
fn an_http_session_whose_state_was_reset_is_told_however_many_came_after() {
    let dir = config_with("[sessions]\nmax = 4\n");
    let server = HttpServer::start(toolhost(&dir), &[]);
    let at = server.authority();
    let count = |session: &str| session_post(&at, Some(session), &counter_request(7)).call_result();
    let waiting = open_session(&at);
    assert_eq!(count(&waiting), (false, "1 1".into()));
    for _ in 0..40 {
        let newer = open_session(&at);
        assert_eq!(count(&newer), (false, "1 1".into()));
    }
    let (is_error, told) = count(&waiting);
    assert!(is_error, "{told}");
    assert!(
        told.starts_with(
            "Error: tool 'k_counter' was not run: this session's state was reset to make room"
        ) && told.contains("at most 4 session instances"),
        "{told}"
    );
    assert_eq!(
        count(&waiting),
        (false, "1 1".into()),
        "then it starts afresh"
    );
    let new = open_session(&at);
    assert_eq!(count(&new), (false, "1 1".into()));
}

/// A stdio connection whose state was dropped (idle past `[sessions]
/// idle_ms`) is told so at its next call, and then starts afresh.
#[test]
fn a_stdio_session_whose_state_was_reset_is_told() {
    let dir = config_with("[sessions]\nidle_ms = 100\n");
    let mut server = StdioServer::start(toolhost(&dir));
    assert_eq!(server.call("k_counter", json!({})), (false, "1 1".into()));
    // Idle sessions are looked for at most once a second.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let (is_error, told) = server.call("k_counter", json!({}));
    assert!(
        is_error && told.contains("was reset after 100 ms without a call ([sessions] idle_ms)"),
        "{told}"
    );
    assert_eq!(server.call("k_counter", json!({})), (false, "1 1".into()));
}
