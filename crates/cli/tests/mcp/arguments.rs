//! Arguments reach a tool byte for byte on every way in: `toolhost call`,
//! `toolhost dispatch`, MCP over stdio and over HTTP (the Python package
//! reads the same table in its own suite). The table,
//! `tests/data/verbatim_arguments.json`, holds what a parsed JSON value
//! would change or refuse: integers past 64 bits, `1.10`, `1e2`, `-0`,
//! repeated keys, `1e400`, lone surrogate escapes, whitespace and key order.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::raw::{StdioServer, http_exchange, post_bytes};
use crate::server::HttpServer;

/// The rows of the shared table: (name, arguments text).
fn table() -> Vec<(String, String)> {
    let path = toolhost_testkit::workspace_root().join("tests/data/verbatim_arguments.json");
    let text = std::fs::read_to_string(&path).expect("the table is readable");
    let table: Value = serde_json::from_str(&text).expect("the table is JSON");
    table["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            let field = |key: &str| row[key].as_str().expect("a string").to_string();
            (field("name"), field("text"))
        })
        .collect()
}

/// A folder whose config serves guest-verbatim as module `v`.
fn verbatim_config() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        toolhost_testkit::guest("guest-verbatim"),
        dir.path().join("verbatim.wasm"),
    )
    .expect("copied");
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[[modules]]\nname = \"v\"\npath = \"verbatim.wasm\"\n",
    )
    .expect("config written");
    dir
}

fn toolhost(dir: &tempfile::TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command.current_dir(dir.path());
    command
}

#[test]
fn arguments_reach_the_tool_byte_for_byte_on_every_way_in() {
    let dir = verbatim_config();
    let rows = table();
    assert!(rows.len() >= 10, "{rows:?}");

    // The command line: `call` with the text as an argument.
    for (name, text) in &rows {
        let out = toolhost(&dir)
            .args(["call", "v_verbatim", text])
            .output()
            .expect("toolhost call runs");
        let answer = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            answer.strip_suffix('\n'),
            Some(text.as_str()),
            "call: {name}"
        );
    }

    // `dispatch`: an OpenAI tool call whose arguments are the text as a JSON
    // string, and one whose arguments are the text itself.
    for (name, text) in &rows {
        for arguments in [Value::String(text.clone()).to_string(), text.clone()] {
            let call = format!(
                r#"{{"id":"c1","type":"function","function":{{"name":"v_verbatim","arguments":{arguments}}}}}"#
            );
            let mut child = toolhost(&dir)
                .arg("dispatch")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("toolhost dispatch runs");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(call.as_bytes())
                .expect("written");
            let out = child.wait_with_output().expect("dispatch ends");
            let messages: Value = serde_json::from_slice(&out.stdout).expect("JSON out");
            let message = if messages.is_array() {
                &messages[0]
            } else {
                &messages
            };
            assert_eq!(
                message["content"],
                json!(text),
                "dispatch: {name} as {arguments}"
            );
        }
    }

    // MCP over stdio: each request a line as written here.
    let mut server = StdioServer::start(toolhost(&dir));
    for (id, (name, text)) in (1000u64..).zip(&rows) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"v_verbatim","arguments":{text}}}}}"#
        );
        server.send_line(line.as_bytes());
        let answer = server.answer(id);
        assert_eq!(
            answer["result"]["isError"],
            json!(false),
            "stdio: {name}: {answer}"
        );
        assert_eq!(
            answer["result"]["content"][0]["text"],
            json!(text),
            "stdio: {name}"
        );
    }

    // MCP over HTTP: each request a body as written here.
    let http = HttpServer::start(toolhost(&dir), &[]);
    let authority = http
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    for (name, text) in &rows {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"v_verbatim","arguments":{text},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let request = post_bytes(
            &authority,
            &body,
            "Mcp-Method: tools/call\r\nMcp-Name: v_verbatim\r\n",
        );
        let response = http_exchange(&authority, &request).expect("an HTTP response");
        assert_eq!(response.status, 200, "http: {name}: {response:?}");
        assert_eq!(
            response.call_result(),
            (false, text.clone()),
            "http: {name}"
        );
    }
}
