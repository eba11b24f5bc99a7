//! The `toolhost` command: output and exit codes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use toolhost_testkit::guest;

/// Runs `toolhost` in `dir` with `args` and optional stdin.
fn toolhost(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolhost starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("stdin written");
    drop(input);
    child.wait_with_output().expect("toolhost finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary directory with `toolhost.toml` holding `config`.
fn with_config(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    dir
}

const CALC_ONLY: &str = "[[modules]]\nbundled = \"calc\"\n";

#[test]
fn default_config_lists_the_bundled_tools() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolhost(dir.path(), &["list"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for name in [
        "calc_evaluate",
        "text_word_count",
        "text_replace",
        "text_case",
        "json_query",
        "json_format",
    ] {
        assert!(text.contains(name), "{name} missing in {text}");
    }
    let out = toolhost(dir.path(), &["schemas"], None);
    let schemas: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schemas.as_array().unwrap().len(), 6);
    assert_eq!(schemas[0]["function"]["name"], "calc_evaluate");
}

#[test]
fn call_exit_codes() {
    let dir = with_config(CALC_ONLY);
    let out = toolhost(
        dir.path(),
        &["call", "calc_evaluate", r#"{"expression": "2 * (3 + 4)"}"#],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "14\n");
    let out = toolhost(
        dir.path(),
        &["call", "calc_evaluate", r#"{"expression": "1/0"}"#],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("Error: tool 'calc_evaluate' failed: "),
        "{}",
        stdout(&out)
    );
    let out = toolhost(dir.path(), &["call", "nope"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "Error: unknown tool 'nope'. Available: calc_evaluate.\n"
    );
    let out = toolhost(dir.path(), &["call", "calc_evaluate", "{not json"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("Error: invalid JSON in arguments: "));
    // Usage errors exit 2.
    let out = toolhost(dir.path(), &["frobnicate"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = toolhost(dir.path(), &["call"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_errors_name_the_file_and_key() {
    let dir = with_config("[limits]\nfuell = 1\n");
    let out = toolhost(dir.path(), &["list"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("invalid config toolhost.toml"), "{err}");
    assert!(err.contains("unknown field `fuell`"), "{err}");
    let out = toolhost(dir.path(), &["--config", "nowhere.toml", "list"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read config nowhere.toml"),
        "{}",
        stderr(&out)
    );
}

/// A module that does not load is reported and left out; the other
/// commands go on with the rest, and `check` fails (exit 2).
#[test]
fn unloadable_modules_are_reported_and_left_out() {
    let dir =
        with_config("[[modules]]\npath = \"missing.wasm\"\n\n[[modules]]\nbundled = \"calc\"\n");
    let out = toolhost(dir.path(), &["list"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot load module 'missing': cannot read"),
        "{err}"
    );
    assert!(err.contains("going on without it"), "{err}");
    assert!(stdout(&out).contains("calc_evaluate"), "{}", stdout(&out));
    let out = toolhost(
        dir.path(),
        &["call", "calc_evaluate", r#"{"expression": "1+2"}"#],
        None,
    );
    assert_eq!(stdout(&out), "3\n");
    let out = toolhost(dir.path(), &["check"], None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("failed  toolhost.toml: cannot load module 'missing'"),
        "{}",
        stdout(&out)
    );
    let good = with_config("[[modules]]\nbundled = \"calc\"\n");
    let out = toolhost(good.path(), &["check"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn config_modules_limits_and_controller() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    std::fs::copy(
        guest("guest-hostile"),
        dir.path().join("tools/hostile.wasm"),
    )
    .unwrap();
    let config = "[limits]\nfuel = 50000000\n\n[controller]\ndefault_mode = \"activate\"\nrules = [{ mode = \"deactivate\", pattern = \"h_env\" }]\n\n[[modules]]\nname = \"h\"\npath = \"tools/hostile.wasm\"\nlimits = { memory_mib = 16 }\n\n[[modules]]\nbundled = \"calc\"\n";
    std::fs::write(dir.path().join("conf.toml"), config).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let conf = dir.path().join("conf.toml");
    let conf = conf.to_str().unwrap();
    let out = toolhost(elsewhere.path(), &["-c", conf, "call", "h_spin"], None);
    assert_eq!(
        stdout(&out),
        "Error: tool 'h_spin' ran out of fuel (limit 50000000).\n"
    );
    let out = toolhost(elsewhere.path(), &["-c", conf, "call", "h_membomb"], None);
    assert_eq!(
        stdout(&out),
        "Error: tool 'h_membomb' exceeded its memory limit of 16 MiB.\n"
    );
    let out = toolhost(elsewhere.path(), &["-c", conf, "call", "h_env"], None);
    assert_eq!(stdout(&out), "Error: tool 'h_env' is deactivated.\n");
    assert_eq!(out.status.code(), Some(1));
    let out = toolhost(elsewhere.path(), &["-c", conf, "list", "--json"], None);
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let env = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "h_env")
        .unwrap();
    assert_eq!(env["active"], false);
    let calc = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "calc_evaluate")
        .unwrap();
    assert_eq!(calc["active"], true);
}

/// The exit code follows the dispatch's typed result: a tool that answers
/// a text starting with "Error: " succeeded (exit 0); a call that failed,
/// such as one to an unknown tool, exits 1.
#[test]
fn dispatch_exits_by_the_result_not_the_text() {
    let dir = with_config("[[modules]]\nbundled = \"text\"\n");
    let call = json!({"id": "c1", "type": "function", "function": {"name": "text_case", "arguments": "{\"text\":\"error: fine\",\"to\":\"title\"}"}});
    let out = toolhost(dir.path(), &["dispatch"], Some(&call.to_string()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"], "Error: Fine");

    let both = json!([call, {"id": "c2", "type": "function", "function": {"name": "text_cases", "arguments": "{}"}}]);
    let out = toolhost(dir.path(), &["dispatch"], Some(&both.to_string()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let messages: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(messages[0]["content"], "Error: Fine");
    let unknown = messages[1]["content"].as_str().unwrap();
    assert!(
        unknown.starts_with("Error: unknown tool 'text_cases'"),
        "{unknown}"
    );

    let only_unknown =
        json!({"id": "c3", "type": "function", "function": {"name": "nope", "arguments": "{}"}});
    let out = toolhost(dir.path(), &["dispatch"], Some(&only_unknown.to_string()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn dispatch_reads_calls_from_stdin() {
    let dir = with_config(CALC_ONLY);
    let call = json!({"id": "call_9", "type": "function", "function": {"name": "calc_evaluate", "arguments": "{\"expression\": \"3^2\"}"}});
    let out = toolhost(dir.path(), &["dispatch"], Some(&call.to_string()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message,
        json!({"role": "tool", "tool_call_id": "call_9", "content": "9"})
    );
    let assistant = json!({"role": "assistant", "tool_calls": [call, {"id": "x", "function": {"name": "nope"}}]});
    let out = toolhost(dir.path(), &["dispatch"], Some(&assistant.to_string()));
    assert_eq!(out.status.code(), Some(1));
    let messages: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(messages[0]["content"], "9");
    assert_eq!(messages[1]["tool_call_id"], "x");
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: unknown tool 'nope'")
    );
    let out = toolhost(dir.path(), &["dispatch"], Some("not json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("stdin is not JSON"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn inspect_shows_tools_imports_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = guest("guest-hostile");
    let out = toolhost(dir.path(), &["inspect", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("module:       guest-hostile"), "{text}");
    assert!(text.contains("compile time: "), "{text}");
    assert!(text.contains("wasi:cli/stderr@0.2"), "{text}");
    assert!(
        text.contains("guest-hostile_spin (local name 'spin')"),
        "{text}"
    );
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, b"hello").unwrap();
    let out = toolhost(dir.path(), &["inspect", junk.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot load module 'junk': it is not a WebAssembly component"),
        "{}",
        stderr(&out)
    );
}

/// A config granting the hostile guest a directory, environment and network.
fn granting_config() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::copy(guest("guest-hostile"), dir.path().join("h.wasm")).unwrap();
    let config = r#"
[[modules]]
name = "h"
path = "h.wasm"
limits = { memory_mib = 16 }
[modules.grants]
dirs = [{ host = "data", guest = "/data", mode = "rw" }]
env = { UNITS = "metric-secret-value" }
network = { allow = ["127.0.0.1:8080"] }

[[modules]]
bundled = "calc"
"#;
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    dir
}

#[test]
fn list_verbose_shows_grants_and_limits_but_no_env_values() {
    let dir = granting_config();
    let out = toolhost(dir.path(), &["list", "--verbose"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let data = dir.path().join("data").canonicalize().unwrap();
    for line in [
        "module h (h.wasm)".to_string(),
        format!("    directory /data -> {} (read-write)", data.display()),
        "    env UNITS (value set in the config)".into(),
        "    network: outbound TCP to 127.0.0.1:8080".into(),
        "    memory_mib = 16 *".into(),
        "module calc (bundled calc)".into(),
        "    nothing (no files, environment, network or stdin)".into(),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line:?} missing in\n{text}"
        );
    }
    assert!(!text.contains("metric-secret-value"), "{text}");
    let out = toolhost(dir.path(), &["list", "--json", "--verbose"], None);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &json["modules"][0];
    assert_eq!(h["name"], "h");
    assert_eq!(h["grants"]["env"], json!(["UNITS"]));
    assert_eq!(h["grants"]["network"]["allow"], json!(["127.0.0.1:8080"]));
    assert_eq!(h["limits"]["memory_mib"], 16);
    assert!(json["tools"].as_array().unwrap().len() > 10);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("metric-secret-value"));
}

#[test]
fn inspect_with_config_shows_what_is_granted() {
    let dir = granting_config();
    let out = toolhost(
        dir.path(),
        &["inspect", "h.wasm", "--config", "toolhost.toml"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("module:       h\n"), "{text}");
    assert!(text.contains("\ngranted:\n  directory /data -> "), "{text}");
    assert!(
        text.contains("  network: outbound TCP to 127.0.0.1:8080\n"),
        "{text}"
    );
    assert!(text.contains("  memory_mib = 16 *\n"), "{text}");
    assert!(!text.contains("metric-secret-value"), "{text}");
    // By module name too; and without a config nothing is granted.
    let by_name = toolhost(dir.path(), &["inspect", "h", "-c", "toolhost.toml"], None);
    assert!(stdout(&by_name).contains("  env UNITS (value set in the config)\n"));
    let bare = toolhost(dir.path(), &["inspect", "h.wasm"], None);
    assert!(
        stdout(&bare)
            .contains("\ngranted:\n  nothing: give --config FILE to see what a config grants it\n"),
        "{}",
        stdout(&bare)
    );
    let other = toolhost(
        dir.path(),
        &["inspect", "calc", "-c", "toolhost.toml"],
        None,
    );
    assert!(
        stdout(&other)
            .contains("\ngranted:\n  nothing (no files, environment, network or stdin)\n"),
        "{}",
        stdout(&other)
    );
}

#[test]
fn guest_output_never_reaches_toolhost_stdout() {
    let dir = granting_config();
    let out = toolhost(
        dir.path(),
        &["call", "h_print", r#"{"text": "GUEST-OUTPUT"}"#],
        None,
    );
    assert_eq!(stdout(&out), "printed\n");
    // It is logged (to stderr) at info level, with the module and tool.
    let logged = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["call", "h_print", r#"{"text": "GUEST-OUTPUT"}"#])
        .current_dir(dir.path())
        .env("TOOLHOST_LOG", "info")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&logged.stdout), "printed\n");
    let err = String::from_utf8_lossy(&logged.stderr);
    assert!(
        err.contains("module=\"h\" tool=\"h_print\" stream=\"stdout\"")
            && err.contains("GUEST-OUTPUT"),
        "{err}"
    );
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["schemas"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once, as `toolhost schemas | head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_component_written_for_another_host_is_inspected_listed_and_called() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(guest("guest-plain"), dir.path().join("plain.wasm")).unwrap();
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[[modules]]\npath = \"plain.wasm\"\n[modules.grants]\nconfig = { region = \"eu-secret-region\" }\n",
    )
    .unwrap();
    let out = toolhost(
        dir.path(),
        &["inspect", "plain", "-c", "toolhost.toml"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "tools from:   each exported function (written for another host, typed from its WIT)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  plain_text_reverse (local name 'text_reverse')\n"),
        "{text}"
    );
    assert!(
        text.contains(r#"    parameters: {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#),
        "{text}"
    );
    assert!(
        text.contains("    outputSchema: {\"type\":\"object\""),
        "{text}"
    );
    assert!(text.contains("left out (not tools):\n  test:plain/counter@0.1.0#[constructor]tally: it is a resource's constructor or method\n"), "{text}");
    assert!(
        text.contains("  config region (wasi:config value set in the config)\n"),
        "{text}"
    );
    assert!(!text.contains("eu-secret-region"), "{text}");
    // Loading warns about what it leaves out, naming the function.
    assert!(
        stderr(&out).contains("test:plain/counter@0.1.0#read"),
        "{}",
        stderr(&out)
    );

    let list = toolhost(dir.path(), &["list", "--json", "--verbose"], None);
    let listed: Value = serde_json::from_str(&stdout(&list)).unwrap();
    let module = &listed["modules"][0];
    assert_eq!(module["grants"]["config"], json!(["region"]));
    assert_eq!(
        module["left_out"][2]["function"],
        "test:plain/counter@0.1.0#read"
    );
    assert!(!stdout(&list).contains("eu-secret-region"));

    let called = toolhost(
        dir.path(),
        &["call", "plain_config-get", r#"{"key": "region"}"#],
        None,
    );
    assert_eq!(stdout(&called), "\"eu-secret-region\"\n");
}
