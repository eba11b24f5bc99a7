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
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        toolhost_testkit::guest("guest-hostile"),
        dir.path().join("hostile.wasm"),
    )
    .expect("copy");
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[[modules]]\nname = \"k\"\npath = \"hostile.wasm\"\nsessions = true\n",
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
