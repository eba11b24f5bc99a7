//! `toolhost serve` on stdio, in raw JSON-RPC: pages of `tools/list`,
//! malformed, oversized and unknown requests, the bound on calls in flight,
//! cancellation, reloads (a broken config, an edit, a changed module,
//! SIGHUP), and the drain on SIGTERM.

use std::time::Duration;

use serde_json::json;

use crate::fixture::Fixture;
use crate::raw::{StdioServer, cpu_in_the_next_second};

const RELOAD_TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn pages_bad_requests_busy_answers_and_cancellation() {
    let fixture = Fixture::new();
    fixture.write_config(
        &fixture.config(
            "\n[serve]\npage_size = 4\nmax_calls_in_flight = 1\nmax_request_bytes = 65536\n",
        ),
    );
    let mut server = StdioServer::start(fixture.toolhost());

    // Pages of at most 4 tools, every active tool once, in the config's order.
    let names = server.list_names(4);
    assert!(names.len() > 8, "{names:?}");
    assert_eq!(names, fixture.active_names());
    assert_eq!(server.list_names(4), names, "the order is stable");
    let bad = server.request("tools/list", json!({"cursor": "not-a-cursor"}));
    let message = bad["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not-a-cursor"), "{bad}");

    // Input that is not JSON is ignored; a line over max_request_bytes is
    // dropped unread; an unknown method is a JSON-RPC error. The server
    // goes on serving.
    server.send_line(b"{this is not json");
    let oversized = 999;
    let padding = "x".repeat(100_000);
    server.send(
        &json!({"jsonrpc": "2.0", "id": oversized, "method": "tools/call",
        "params": {"name": "h_add", "arguments": {"a": 1, "b": 2, "pad": padding}}}),
    );
    let unknown = server.request("tools/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(
        server.call("h_add", json!({"a": 1, "b": 2})),
        (false, "3".into())
    );
    assert!(
        !server.has_answer(oversized),
        "the oversized request was run"
    );

    // One call in flight at most: a second one is answered "busy" at once.
    let spin = server.start_request("tools/call", json!({"name": "s_spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(500));
    let (is_error, text) = server.call("h_add", json!({"a": 1, "b": 2}));
    assert!(is_error, "{text}");
    assert!(
        text.starts_with("Error: toolhost is busy") && text.contains("max_calls_in_flight"),
        "{text}"
    );

    // Cancelling the spin stops it: the server's CPU is idle again, and
    // the place is free.
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": spin, "reason": "the test is done with it"}}),
    );
    let used = cpu_in_the_next_second(server.pid());
    assert!(
        used < 0.4,
        "the server used {used:.2} s of CPU in the second after the cancel"
    );
    assert_eq!(
        server.call("h_add", json!({"a": 1, "b": 2})),
        (false, "3".into())
    );
}

#[test]
fn reloads_keep_serving_and_compile_only_what_changed() {
    let fixture = Fixture::new();
    let mut server = StdioServer::start(fixture.toolhost());
    let before = server.list_names(usize::MAX);
    assert!(before.iter().any(|n| n == "h_add"), "{before:?}");

    // A config that does not parse: the old set goes on serving, and the
    // log says why.
    fixture.write_config("[[modules]\nthis is not TOML");
    let line = server.wait_log("the config did not load", RELOAD_TIMEOUT);
    assert!(line.contains("still served"), "{line}");
    assert_eq!(server.list_names(usize::MAX), before);
    assert_eq!(
        server.call("h_add", json!({"a": 1, "b": 2})),
        (false, "3".into())
    );

    // An edit: the new set is served, the client is told, and no module is
    // compiled again (10 load; `broken` does not).
    let edited = fixture
        .config("")
        .replace(r#"pattern = "h_env""#, r#"pattern = "h_*""#);
    fixture.write_config(&edited);
    server.wait_log(
        "10 modules (10 unchanged and reused, 0 compiled)",
        RELOAD_TIMEOUT,
    );
    server.wait_notification("notifications/tools/list_changed", RELOAD_TIMEOUT);
    let after = server.list_names(usize::MAX);
    let expected: Vec<String> = before
        .iter()
        .filter(|n| !n.starts_with("h_"))
        .cloned()
        .collect();
    assert_eq!(after, expected);
    let (is_error, text) = server.call("h_add", json!({"a": 1, "b": 2}));
    assert!(is_error && text.contains("deactivated"), "{text}");

    // A module file changes (the broken one becomes a working component):
    // only it is compiled, and its tools appear.
    let hostile = fixture.dir.path().join("hostile.wasm");
    std::fs::copy(hostile, fixture.dir.path().join("broken.wasm")).expect("copied");
    server.wait_log(
        "11 modules (10 unchanged and reused, 1 compiled)",
        RELOAD_TIMEOUT,
    );
    assert_eq!(
        server.call("broken_add", json!({"a": 2, "b": 2})),
        (false, "4".into())
    );

    // SIGHUP reloads too; nothing changed, so nothing is compiled.
    let pid = rustix::process::Pid::from_raw(server.pid() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).expect("SIGHUP sent");
    server.wait_log(
        "11 modules (11 unchanged and reused, 0 compiled)",
        RELOAD_TIMEOUT,
    );
}

/// A config of the hostile module alone: `serve` (the top of the file),
/// then `keys` in its `[[modules]]` entry.
fn hostile_only(serve: &str, keys: &str) -> String {
    format!("{serve}\n[[modules]]\nname = \"h\"\npath = \"hostile.wasm\"\n{keys}\n")
}

#[test]
fn a_reload_applies_every_module_key_as_a_fresh_start_would() {
    let fixture = Fixture::new();
    let reloaded = |server: &StdioServer, text: &str, reused: usize| {
        fixture.write_config(text);
        let compiled = 1 - reused;
        server.wait_log(
            &format!("1 modules ({reused} unchanged and reused, {compiled} compiled)"),
            RELOAD_TIMEOUT,
        );
    };
    fixture.write_config(&hostile_only("", "warm = true"));
    let mut server = StdioServer::start(fixture.toolhost());
    let counts = |server: &mut StdioServer, tool: &str, n: usize| -> Vec<String> {
        (0..n)
            .map(|_| {
                let (is_error, text) = server.call(tool, json!({}));
                assert!(!is_error, "{text}");
                text
            })
            .collect()
    };
    // Warm: one instance carries its count from call to call.
    assert_eq!(counts(&mut server, "h_counter", 3), ["1 1", "2 2", "3 3"]);

    // `warm` removed: a fresh instance for every call, at once (the module
    // itself is reused, not compiled again).
    reloaded(&server, &hostile_only("", ""), 1);
    assert_eq!(counts(&mut server, "h_counter", 3), ["1 1", "1 1", "1 1"]);

    // Warm again, with `max_calls = 2`: a fresh instance every two calls.
    reloaded(&server, &hostile_only("", "warm = true\nmax_calls = 2"), 1);
    assert_eq!(
        counts(&mut server, "h_counter", 5),
        ["1 1", "2 2", "1 1", "2 2", "1 1"]
    );

    // `max_calls` changed: the warm instance starts anew under it.
    reloaded(&server, &hostile_only("", "warm = true\nmax_calls = 3"), 1);
    assert_eq!(
        counts(&mut server, "h_counter", 4),
        ["1 1", "2 2", "3 3", "1 1"]
    );

    // Grants changed on a warm module: a new warm instance, which sees them.
    let granted = "warm = true\nmax_calls = 3\n[modules.grants]\nenv = { COLOR = \"blue\" }";
    reloaded(&server, &hostile_only("", granted), 1);
    assert_eq!(counts(&mut server, "h_counter", 1), ["1 1"]);
    let (_, env) = server.call("h_env", json!({}));
    assert!(env.contains("COLOR=blue"), "{env}");

    // Limits changed: compiled anew, and the new memory limit holds.
    let limited = "[modules.limits]\nmemory_mib = 16";
    reloaded(&server, &hostile_only("", limited), 0);
    let (is_error, text) = server.call("h_hoard", json!({"bytes": 32 << 20}));
    assert!(is_error && text.contains("memory"), "{text}");

    // The name changed: the tools are served under the new one.
    reloaded(
        &server,
        &hostile_only("", "name = \"h2\"").replace("name = \"h\"\n", ""),
        0,
    );
    assert_eq!(counts(&mut server, "h2_counter", 1), ["1 1"]);
    let (is_error, text) = server.call("h_counter", json!({}));
    assert!(is_error && text.contains("h_counter"), "{text}");
}

#[test]
fn a_reload_names_each_setting_that_needs_a_restart() {
    let fixture = Fixture::new();
    fixture.write_config(&hostile_only("[serve]\nmax_calls_in_flight = 8\n", ""));
    let server = StdioServer::start(fixture.toolhost());
    fixture.write_config(&hostile_only(
        "[serve]\nmax_calls_in_flight = 3\nallowed_origins = [\"https://a.example\"]\n\
         [pool]\nready_per_module = 0\n",
        "",
    ));
    let origins = server.wait_log("[serve] allowed_origins is", RELOAD_TIMEOUT);
    assert!(
        origins.contains("[\"https://a.example\"] in the config but [] in the running server")
            && origins.contains("restarts"),
        "{origins}"
    );
    let calls = server.wait_log("[serve] max_calls_in_flight is", RELOAD_TIMEOUT);
    assert!(
        calls.contains("is 3 in the config but 8 in the running server"),
        "{calls}"
    );
    server.wait_log("[pool] ready_per_module is 0 in the config", RELOAD_TIMEOUT);
}

#[test]
fn sigterm_lets_calls_in_flight_finish() {
    let fixture = Fixture::new();
    let mut server = StdioServer::start(fixture.toolhost());
    let sleeping = server.start_request(
        "tools/call",
        json!({"name": "s_sleep", "arguments": {"ms": 1500}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let status = server
        .terminate(Duration::from_secs(30))
        .expect("the server exits");
    assert!(status.success(), "{status}");
    let answer = server.answer(sleeping);
    assert_eq!(
        answer["result"]["content"][0]["text"], "woke up",
        "{answer}"
    );
}

#[test]
fn a_client_that_never_reads_its_answers_is_not_read_further() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let fixture = Fixture::new();
    let mut child = fixture
        .toolhost()
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("toolhost serve starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let line = |value: serde_json::Value| format!("{value}\n").into_bytes();
    stdin
        .write_all(&line(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "silent", "version": "1"}}}),
        ))
        .expect("sent");
    let mut answer = String::new();
    stdout
        .read_line(&mut answer)
        .expect("the initialize answer");
    assert!(answer.contains("\"result\""), "{answer}");
    stdin
        .write_all(&line(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ))
        .expect("sent");
    let before = crate::raw::rss_kib(child.id());

    // 100,000 calls, and not one answer read.
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let written = Arc::clone(&written);
        std::thread::spawn(move || {
            for id in 1..=100_000u64 {
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "h_add", "arguments": {"a": id, "b": 1}}});
                if stdin.write_all(format!("{call}\n").as_bytes()).is_err() {
                    return;
                }
                written.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Until the server stops taking them (the pipe fills), and a while more.
    let mut last = 0;
    loop {
        std::thread::sleep(Duration::from_millis(2000));
        let now = written.load(Ordering::Relaxed);
        if now == last || now == 100_000 {
            break;
        }
        last = now;
    }
    let after = crate::raw::rss_kib(child.id());
    let taken = written.load(Ordering::Relaxed);
    eprintln!(
        "{taken} requests written before the server stopped reading; resident memory {before} -> {after} KiB"
    );
    assert!(taken < 100_000, "the server read all 100,000 requests");
    assert!(
        after < before + 64 * 1024,
        "resident memory grew from {before} to {after} KiB"
    );
    // Reading again lets the server go on: answers come, in full.
    for _ in 0..1000 {
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("an answer");
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON-RPC");
        assert!(
            answer["result"]["content"][0]["text"].is_string(),
            "{answer}"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(writer);
}

#[test]
fn output_schemas_are_bounded_at_load_and_checked_within_the_time_limit() {
    let fixture = Fixture::new();
    for (guest, file) in [
        ("guest-schema-bomb", "bomb.wasm"),
        ("guest-schema-heavy", "heavy.wasm"),
    ] {
        std::fs::copy(
            toolhost_testkit::guest(guest),
            fixture.dir.path().join(file),
        )
        .expect("copy");
    }
    fixture.write_config(&fixture.config(
        "\n[[modules]]\nname = \"bomb\"\npath = \"bomb.wasm\"\n\
         \n[[modules]]\nname = \"heavy\"\npath = \"heavy.wasm\"\nlimits = { timeout_ms = 100 }\n",
    ));
    let mut server = StdioServer::start(fixture.toolhost());
    // 40,000 subschemas: refused at load, by name; the rest is served.
    let names = server.list_names(1000);
    assert!(!names.iter().any(|n| n.starts_with("bomb_")), "{names:?}");
    assert!(names.iter().any(|n| n == "heavy_check"), "{names:?}");
    let refused: Vec<String> = server
        .log
        .try_iter()
        .filter(|line| line.contains("'bomb'"))
        .collect();
    assert!(
        refused
            .iter()
            .any(|l| l.contains("tool 'check': its outputSchema is")
                && l.contains("more than the 65536 bytes toolhost accepts")),
        "{refused:?}"
    );
    // Within the bounds, but slow to check against 60,000 items: the check
    // runs within the tool's time limit, and past it the answer is an error
    // that names the limit. Other requests are answered meanwhile.
    let checks: Vec<u64> = (0..4)
        .map(|_| {
            server.start_request(
                "tools/call",
                json!({"name": "heavy_check", "arguments": {}}),
            )
        })
        .collect();
    assert_eq!(
        server.call("h_add", json!({"a": 1, "b": 2})),
        (false, "3".into())
    );
    for id in checks {
        let answer = server.answer(id);
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert_eq!(
            text,
            "Error: tool 'heavy_check' answered, but checking its answer against its \
             outputSchema did not finish within its time limit of 100 ms (limits.timeout_ms).",
        );
    }
    // A small answer is checked in time and given as structured content.
    let small = server.request(
        "tools/call",
        json!({"name": "heavy_small", "arguments": {}}),
    );
    assert_eq!(
        small["result"]["structuredContent"],
        json!({"items": [1]}),
        "{small}"
    );
    assert_eq!(small["result"]["isError"], false, "{small}");
}
