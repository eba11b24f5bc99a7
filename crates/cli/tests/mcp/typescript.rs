//! The official TypeScript SDK (which speaks 2025-11-25) lists and calls
//! tools over stdio and streamable HTTP.

use std::process::Command;

use serde_json::json;
use xtask::{McpClient, Repo, install_mcp_client};

use crate::fixture::{Fixture, error_calls, write_plan};
use crate::server::HttpServer;

/// Runs the TypeScript client on `plan`, from a folder of its own in `dir`
/// whose `node_modules` is the install's (the install is never written to).
fn run_client(plan: &serde_json::Value, dir: &std::path::Path) {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let install = install_mcp_client(&repo, McpClient::TypeScript)
        .unwrap_or_else(|e| panic!("cannot install the TypeScript MCP client: {e:#}"));
    let client = dir.join("ts-client");
    if !client.is_dir() {
        std::fs::create_dir(&client).expect("the client's folder");
        std::os::unix::fs::symlink(install.join("node_modules"), client.join("node_modules"))
            .expect("node_modules linked");
    }
    let script = client.join("client.mjs");
    std::fs::copy(
        repo.mcp_client_dir(McpClient::TypeScript)
            .join("client.mjs"),
        &script,
    )
    .expect("client.mjs copied");
    let plan_path = write_plan(dir, "plan-ts.json", plan);
    let out = Command::new("node")
        .arg(&script)
        .arg(plan_path)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ok calls"),
        "the TypeScript client failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

#[test]
fn typescript_sdk_over_stdio_and_http() {
    let fixture = Fixture::new();
    let mut calls = fixture.example_calls();
    calls.extend(error_calls());
    let names = fixture.active_names();
    let command = [
        env!("CARGO_BIN_EXE_toolhost").to_string(),
        "--config".to_string(),
        fixture.config_path().display().to_string(),
        "serve".to_string(),
    ];
    let stdio = json!({"transport": "stdio", "command": command, "names": names, "calls": calls});
    run_client(&stdio, fixture.dir.path());

    let server = HttpServer::start(fixture.toolhost(), &[]);
    let http = json!({"transport": "http", "url": server.url, "names": names, "calls": calls});
    run_client(&http, fixture.dir.path());
}
