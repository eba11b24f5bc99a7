//! The official Python SDK over stdio and streamable HTTP, at 2025-11-25
//! (initialize and session) and 2026-07-28 (stateless): list, every example
//! tool, every kind of error as `isError`, 50 concurrent calls, a cancelled
//! spin, `list_changed` after a config edit, a broken module beside working
//! ones, 403 for a foreign Origin and 401 without the token; a tool's
//! stderr as log entries (and none below the level asked for), and
//! progress for a long call.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use xtask::{McpClient, Repo, install_mcp_client, venv_bin};

use crate::fixture::{Fixture, concurrent_calls, described_tools, error_calls, write_plan};
use crate::server::HttpServer;

/// The modes the client connects in: `legacy` negotiates 2025-11-25.
const MODES: [&str; 2] = ["legacy", "2026-07-28"];

/// Runs the Python client on `plan`; panics with its output if a check
/// failed.
fn run_client(plan: &Value, dir: &std::path::Path) {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let venv = install_mcp_client(&repo, McpClient::Python)
        .unwrap_or_else(|e| panic!("cannot install the Python MCP client: {e:#}"));
    let script: PathBuf = repo.mcp_client_dir(McpClient::Python).join("client.py");
    let plan_path = write_plan(dir, "plan.json", plan);
    let out = Command::new(venv_bin(&venv, "python"))
        .arg(script)
        .arg(plan_path)
        .output()
        .expect("the Python client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "the Python client failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// The checks both transports make.
fn checks(fixture: &Fixture, server_pid: Option<u32>) -> Vec<Value> {
    let names = fixture.active_names();
    assert!(names.iter().any(|n| n == "calc_evaluate"), "{names:?}");
    let after_edit: Vec<&String> = names.iter().filter(|n| !n.starts_with("h_")).collect();
    let edited = fixture
        .config("")
        .replace(r#"pattern = "h_env""#, r#"pattern = "h_*""#);
    let mut cancel = json!({
        "kind": "cancel",
        "tool": "s_spin",
        "after_ms": 500,
        "then": {"tool": "h_add", "arguments": {"a": 1, "b": 2}, "text": "3"},
    });
    if let Some(pid) = server_pid {
        cancel["pid"] = json!(pid);
    }
    vec![
        json!({"kind": "list", "names": names, "tools": described_tools(), "absent": ["h_env", "broken"]}),
        json!({"kind": "calls", "calls": fixture.example_calls()}),
        json!({"kind": "calls", "calls": error_calls()}),
        json!({"kind": "concurrent", "calls": concurrent_calls()}),
        cancel,
        json!({
            "kind": "list_changed",
            "config": fixture.config_path(),
            "text": edited,
            "names": after_edit,
        }),
    ]
}

#[test]
fn python_sdk_over_stdio_at_both_versions() {
    for mode in MODES {
        let fixture = Fixture::new();
        let command = [
            env!("CARGO_BIN_EXE_toolhost").to_string(),
            "--config".to_string(),
            fixture.config_path().display().to_string(),
            "serve".to_string(),
        ];
        let plan = json!({
            "transport": "stdio",
            "mode": mode,
            "command": command,
            "checks": checks(&fixture, None),
        });
        run_client(&plan, fixture.dir.path());
    }
}

#[test]
fn python_sdk_over_http_at_both_versions() {
    for mode in MODES {
        let fixture = Fixture::new();
        let token = "test-token-5d1c";
        let token_file = fixture.dir.path().join("token");
        std::fs::write(&token_file, format!("{token}\n")).expect("token written");
        let server = HttpServer::start(
            fixture.toolhost(),
            &["--token-file", token_file.to_str().expect("utf-8 path")],
        );
        let mut all = vec![
            json!({"kind": "refused", "status": 403, "headers": {
                "Authorization": format!("Bearer {token}"),
                "Origin": "http://attacker.example",
            }}),
            json!({"kind": "refused", "status": 401, "headers": {}}),
            json!({"kind": "refused", "status": 401, "headers": {"Authorization": "Bearer wrong"}}),
        ];
        all.extend(checks(&fixture, Some(server.pid())));
        let plan = json!({
            "transport": "http",
            "mode": mode,
            "url": server.url,
            "token": token,
            "checks": all,
        });
        run_client(&plan, fixture.dir.path());
        let log: Vec<String> = server.log.try_iter().collect();
        assert!(
            log.iter()
                .any(|l| l.contains("cannot load module 'broken'")),
            "{log:#?}"
        );
        assert!(
            !log.iter().any(|l| l.contains(token)),
            "the token was logged: {log:#?}"
        );
    }
}

/// Two `serve --http` replicas of one config; the client, stateless at
/// 2026-07-28, sends its requests to each in turn (as a round-robin load
/// balancer would) and gets every answer right. Both replicas ran calls.
#[test]
fn stateless_client_alternates_between_two_replicas() {
    let fixture = Fixture::new();
    let replicas = [
        HttpServer::start(fixture.toolhost(), &[]),
        HttpServer::start(fixture.toolhost(), &[]),
    ];
    let plan = json!({
        "transport": "http",
        "mode": "2026-07-28",
        "urls": [&replicas[0].url, &replicas[1].url],
        "checks": [
            {"kind": "list", "names": fixture.active_names(), "tools": described_tools()},
            {"kind": "calls", "calls": fixture.example_calls()},
            {"kind": "calls", "calls": error_calls()},
            {"kind": "concurrent", "calls": concurrent_calls()},
            {"kind": "alternated", "min_requests": 30},
        ],
    });
    run_client(&plan, fixture.dir.path());
    for replica in &replicas {
        let calls = replica.metric_sum("toolhost_tool_calls_total");
        assert!(calls >= 30.0, "{} ran {calls} calls", replica.url);
    }
}

/// A config with the tools of the conformance guest (`test_tool_with_logging`
/// writes three lines to stderr, `test_tool_with_progress` runs 2.5 s).
fn logging_config(dir: &std::path::Path) -> PathBuf {
    let guest = toolhost_testkit::guest("guest-conformance");
    let path = dir.join("toolhost.toml");
    let text = format!(
        "[[modules]]\nname = \"test\"\npath = {:?}\n",
        guest.display().to_string()
    );
    std::fs::write(&path, text).expect("config written");
    path
}

/// The checks of logs and progress.
fn log_checks() -> Vec<Value> {
    let lines: Vec<String> = (1..=3)
        .map(|n| format!("tool_with_logging: step {n} of 3"))
        .collect();
    vec![
        json!({"kind": "logs", "tool": "test_tool_with_logging", "lines": lines,
               "text": "logged 3 lines", "quiet_level": "warning"}),
        json!({"kind": "progress", "tool": "test_tool_with_progress",
               "text": "done after 2500 ms", "min_notifications": 3}),
    ]
}

/// What a tool writes to stderr reaches the client as log entries while
/// the call runs (and not when the client asked for less than `info`);
/// a call with a progress token gets growing progress until it ends.
/// Over stdio and HTTP, at 2025-11-25 (`logging/setLevel`) and 2026-07-28
/// (the request's `_meta` level).
#[test]
fn python_sdk_gets_a_tools_stderr_as_logs_and_progress() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = logging_config(dir.path());
    let mut toolhost = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    toolhost.arg("--config").arg(&config);
    let server = HttpServer::start(toolhost, &[]);
    for mode in MODES {
        let command = [
            env!("CARGO_BIN_EXE_toolhost").to_string(),
            "--config".to_string(),
            config.display().to_string(),
            "serve".to_string(),
        ];
        let stdio = json!({"transport": "stdio", "mode": mode, "command": command,
                           "log_level": "info", "checks": log_checks()});
        run_client(&stdio, dir.path());
        let http = json!({"transport": "http", "mode": mode, "url": server.url,
                          "log_level": "info", "checks": log_checks()});
        run_client(&http, dir.path());
    }
}
