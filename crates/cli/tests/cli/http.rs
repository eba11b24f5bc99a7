//! The HTTP grant through the command: a call that reaches a granted origin
//! with a host-side secret header, which no output or log line shows (even
//! at trace level); `list --verbose` and `inspect` show the grant without it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use toolhost_testkit::guest;
use toolhost_testkit::http_server::{Reply, TestServer};

const SECRET: &str = "cli-s3cret-93b1e0";

/// Runs `toolhost` in `dir` with `args`, the secret in its environment and
/// logs at `log`.
fn toolhost(dir: &Path, args: &[&str], log: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(dir)
        .env("TOOLHOST_CLI_TEST_TOKEN", SECRET)
        .env("TOOLHOST_LOG", log)
        .output()
        .expect("toolhost runs")
}

fn config(server: &TestServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(guest("guest-http"), dir.path().join("g.wasm")).unwrap();
    let config = format!(
        r#"[[modules]]
path = "g.wasm"

[modules.grants.http]
allow = ["{origin}/api/"]
methods = ["GET"]

[[modules.grants.http.secret_headers]]
origin = "{origin}"
name = "X-Api-Key"
env = "TOOLHOST_CLI_TEST_TOKEN"
prefix = "Key "
"#,
        origin = server.origin()
    );
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    dir
}

#[test]
fn a_call_sends_the_secret_and_no_output_or_log_shows_it() {
    let server = TestServer::start([("/api/", Reply::Headers)]);
    let dir = config(&server);
    let url = server.url("/api/who");
    let args = format!(r#"{{"url": "{url}", "headers": {{"x-api-key": "guest"}}}}"#);
    // Compiled first, at the default level: cranelift's own trace output is
    // not what this test is about.
    let compiled = toolhost(dir.path(), &["compile"], "warn");
    assert_eq!(compiled.status.code(), Some(0), "{compiled:?}");
    let out = toolhost(dir.path(), &["call", "g_http_request", &args], "trace");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        server.requests()[0].header_all("x-api-key"),
        [format!("Key {SECRET}")]
    );
    let mut answer: Value = serde_json::from_str(&stdout).unwrap();
    assert!(answer["sent_headers"].to_string().contains("guest"));
    // The server echoed the headers it got into the body: that is the
    // server's doing. Everything else the guest or the logs show is clean.
    answer["body"] = Value::Null;
    assert!(!answer.to_string().contains(SECRET), "{answer}");
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "logs at trace: {stderr}"
    );
    assert!(!stderr.contains(SECRET), "a log line shows the secret");
}

#[test]
fn list_verbose_and_inspect_show_the_grant_without_the_value() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let dir = config(&server);
    let origin = server.origin();
    let list = toolhost(dir.path(), &["list", "--verbose"], "warn");
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.status.code(), Some(0), "{text}");
    for line in [
        format!("    http: requests to {origin}/api/"),
        "    http: methods GET".to_string(),
        "    http: TLS roots bundled (Mozilla's)".to_string(),
        format!(
            "    http: header x-api-key set by the host on requests to {origin} \
             (value from env TOOLHOST_CLI_TEST_TOKEN, never shown)"
        ),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line:?} missing in\n{text}"
        );
    }
    assert!(!text.contains(SECRET), "{text}");

    let json = toolhost(dir.path(), &["list", "--json", "--verbose"], "warn");
    let json_text = String::from_utf8_lossy(&json.stdout);
    assert!(!json_text.contains(SECRET), "{json_text}");
    let value: Value = serde_json::from_str(&json_text).unwrap();
    let http = &value["modules"][0]["grants"]["http"];
    assert_eq!(http["allow"][0]["origin"], origin);
    assert_eq!(http["allow"][0]["path_prefix"], "/api/");
    assert_eq!(http["secret_headers"][0]["name"], "x-api-key");
    assert_eq!(http["secret_headers"][0]["env"], "TOOLHOST_CLI_TEST_TOKEN");

    let inspect = toolhost(
        dir.path(),
        &["inspect", "g", "--config", "toolhost.toml"],
        "warn",
    );
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        text.contains(&format!("  http: requests to {origin}/api/\n")),
        "{text}"
    );
    assert!(text.contains("wasi:http/outgoing-handler"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
}

#[test]
fn an_unset_secret_variable_stops_the_load_with_its_name() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let dir = config(&server);
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["check"])
        .current_dir(dir.path())
        .env_remove("TOOLHOST_CLI_TEST_TOKEN")
        .output()
        .unwrap();
    let stderr = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("grants.http.secret_headers[0]: env 'TOOLHOST_CLI_TEST_TOKEN' is not set"),
        "{stderr}"
    );
}
