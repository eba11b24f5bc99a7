//! Agents built with the frameworks people use, reaching `toolhost serve`
//! through each framework's own MCP client, over stdio and streamable
//! HTTP: the OpenAI Agents SDK (`MCPServerStdio`, `MCPServerStreamableHttp`,
//! its strict-mode schema conversion on), LangChain (`langchain-mcp-adapters`
//! tools in a `create_agent` LangGraph agent) and pydantic-ai (`MCPToolset`).
//! The config serves the examples in every language and a component
//! written for no host in particular beside the bundled tools, so each
//! framework validates many names and schemas. The model is scripted (`crates/testkit/python/scripted_model.py`, an
//! OpenAI-compatible chat completions server on 127.0.0.1): three turns,
//! one tool call, then two in parallel (one of them failing), then the
//! answer. What the model was sent is asserted: the tools offered (the
//! deactivated ones not among them, every schema accepted by the
//! framework), each result and the failure's text under its call's id,
//! and the final answer the agent returned. The frameworks are pinned in
//! `frameworks/requirements.txt` and installed by `cargo xtask mcp-clients
//! frameworks`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use xtask::{McpClient, Repo, install_mcp_client, venv_bin};

use toolhost_testkit::guest;

use crate::fixture::{example_modules, write_plan};
use crate::server::HttpServer;

/// The config served: the bundled modules, the examples in Python,
/// JavaScript and C, and a component written for no host in particular
/// (its schemas made from WIT types: records, variants, options, lists),
/// so that each framework checks many names and schemas; the `text`
/// module's tools deactivated by a rule.
fn config(dir: &Path) -> String {
    std::fs::copy(guest("guest-plain"), dir.join("plain.wasm")).expect("copy");
    format!(
        r#"[limits]
# Generous: the CPython component compiles slowly on a busy machine.
compile_timeout_ms = 600000

[controller]
rules = [{{ mode = "deactivate", pattern = "text_*" }}]

{examples}
[[modules]]
name = "plain"
path = "plain.wasm"
grants = {{ config = {{ region = "eu" }} }}
"#,
        examples = example_modules(),
    )
}

/// The active tools, as `toolhost list --json` gives them: what the model
/// must be offered, in order.
fn offered(dir: &Path) -> Vec<String> {
    let out = toolhost(dir)
        .args(["list", "--json"])
        .output()
        .expect("runs");
    let rows: Value = serde_json::from_slice(&out.stdout).expect("list --json");
    let names: Vec<String> = rows
        .as_array()
        .expect("array")
        .iter()
        .filter(|r| r["active"] == true)
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect();
    for name in [
        "calc_evaluate",
        "json_query",
        "stats_mean",
        "url_parse",
        "hash_sha256",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(names.iter().any(|n| n.starts_with("plain_")), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("text_")), "{names:?}");
    names
}

/// What the scripted model answers last.
const FINAL: &str = "2 * (3 + 4) is 14, 1/0 has no value, and the name is toolhost.";

/// The task the agent is given.
const TASK: &str =
    "What is 2 * (3 + 4), what is 1/0, and which name does {\"name\": \"toolhost\"} hold?";

/// The scripted model's turns.
fn turns() -> Value {
    json!([
        {"tool_calls": [{"name": "calc_evaluate", "arguments": {"expression": "2 * (3 + 4)"}}]},
        {"tool_calls": [
            {"name": "calc_evaluate", "arguments": {"expression": "1/0"}},
            {"name": "json_query", "arguments": {"document": "{\"name\": \"toolhost\"}", "path": "/name"}},
        ]},
        {"content": FINAL},
    ])
}

/// A folder with the config.
fn config_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = config(dir.path());
    std::fs::write(dir.path().join("toolhost.toml"), text).expect("config written");
    dir
}

/// `toolhost --config <dir>/toolhost.toml` as a command.
fn toolhost(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .arg("--config")
        .arg(dir.join("toolhost.toml"))
        .current_dir(dir);
    command
}

/// Runs `agent.py` with `plan` (the framework's run: its transport and
/// where the server is); what the scripted model was sent, and the answer.
fn run_agent(framework: &str, transport: Value, dir: &Path) -> Value {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let venv = install_mcp_client(&repo, McpClient::Frameworks)
        .unwrap_or_else(|e| panic!("cannot install the agent frameworks: {e:#}"));
    let script: PathBuf = repo.mcp_client_dir(McpClient::Frameworks).join("agent.py");
    let out = dir.join(format!("record-{framework}.json"));
    let mut plan = json!({
        "framework": framework,
        "turns": turns(),
        "task": TASK,
        "out": out,
    });
    for (key, value) in transport.as_object().expect("an object") {
        plan[key] = value.clone();
    }
    let plan_path = write_plan(dir, &format!("plan-{framework}.json"), &plan);
    let run = Command::new(venv_bin(&venv, "python"))
        .arg(script)
        .arg(plan_path)
        // Anything a framework sends beyond loopback (telemetry, a price
        // list, a tokenizer) goes to a closed loopback port instead.
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
        .env("LANGSMITH_TRACING", "false")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("the agent runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let record: Option<Value> = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    assert!(
        run.status.success(),
        "the {framework} agent failed ({}):\n{stdout}\n{stderr}\nthe model was sent: {record:#?}",
        run.status
    );
    record.expect("the agent wrote what the model was sent")
}

/// The text of a chat message's content: a string, or the text parts of a
/// list.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

/// The content of the tool message answering call `id` in `request`.
fn tool_answer(request: &Value, id: &str) -> String {
    let messages = request["messages"].as_array().expect("messages");
    let message = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id} in {messages:#?}"));
    text_of(&message["content"])
}

/// What every framework's run must show; `strict` when the framework was
/// asked for strict-mode schemas.
fn check_record(framework: &str, record: &Value, offered: &[String], strict: bool) {
    let requests = record["requests"].as_array().expect("requests");
    assert_eq!(
        requests.len(),
        3,
        "{framework}: one request per turn: {requests:#?}"
    );
    for (i, request) in requests.iter().enumerate() {
        let tools = request["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{framework}: request {i} offered no tools: {request:#?}"));
        let names: Vec<&str> = tools
            .iter()
            .map(|t| t["function"]["name"].as_str().expect("a name"))
            .collect();
        assert_eq!(
            names, offered,
            "{framework}: request {i}: the deactivated text_* tools are not offered"
        );
        for tool in tools {
            let function = &tool["function"];
            assert_eq!(
                function["parameters"]["type"], "object",
                "{framework}: {function:#?}"
            );
            assert!(
                function["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{framework}: the tool's description reaches the model: {function:#?}"
            );
        }
        if strict {
            let calc = &tools[0]["function"];
            assert_eq!(calc["strict"], true, "{framework}: strict mode: {calc:#?}");
            assert_eq!(
                calc["parameters"]["additionalProperties"], false,
                "{calc:#?}"
            );
        }
    }
    let user = &requests[0]["messages"];
    assert!(
        user.as_array()
            .expect("messages")
            .iter()
            .any(|m| m["role"] == "user" && text_of(&m["content"]) == TASK),
        "{framework}: the task reaches the model: {user:#?}"
    );
    assert_eq!(tool_answer(&requests[1], "call_0_0"), "14", "{framework}");
    let failed = tool_answer(&requests[2], "call_1_0");
    assert!(
        failed.contains("Error: tool 'calc_evaluate' failed: division by zero at position 2"),
        "{framework}: the failure's text reaches the model: {failed}"
    );
    assert_eq!(
        tool_answer(&requests[2], "call_1_1"),
        "\"toolhost\"",
        "{framework}: the parallel call's answer"
    );
    assert_eq!(
        record["final"], FINAL,
        "{framework}: the final answer arrives"
    );
}

/// Runs the agent of `framework` over stdio, then over HTTP, and checks both.
fn stdio_and_http(framework: &str, strict: bool) {
    let dir = config_dir();
    let offered = offered(dir.path());
    let command = [
        env!("CARGO_BIN_EXE_toolhost").to_string(),
        "--config".to_string(),
        dir.path().join("toolhost.toml").display().to_string(),
        "serve".to_string(),
    ];
    let record = run_agent(
        framework,
        json!({"transport": "stdio", "command": command}),
        dir.path(),
    );
    check_record(framework, &record, &offered, strict);

    let token = "framework-token-7e2a";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("token written");
    let server = HttpServer::start(
        toolhost(dir.path()),
        &["--token-file", token_file.to_str().expect("utf-8 path")],
    );
    let record = run_agent(
        framework,
        json!({"transport": "http", "url": server.url, "token": token}),
        dir.path(),
    );
    check_record(framework, &record, &offered, strict);
}

#[test]
fn openai_agents_sdk_runs_an_agent_on_served_tools() {
    stdio_and_http("openai-agents", true);
}

#[test]
fn langchain_runs_an_agent_on_served_tools() {
    stdio_and_http("langchain", false);
}

#[test]
fn pydantic_ai_runs_an_agent_on_served_tools() {
    stdio_and_http("pydantic-ai", true);
}
