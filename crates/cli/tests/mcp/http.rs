//! `toolhost serve --http` spoken to in raw HTTP/1.1: health and metrics,
//! the bounds on bodies, headers and requests in flight, malformed and
//! unknown requests, a client that disconnects mid-call, draining on
//! SIGTERM, and the refusal to listen off loopback without a token.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use crate::fixture::Fixture;
use crate::raw::{
    cpu_in_the_next_second, http_call, http_exchange, http_get, mcp_request, post_bytes,
};
use crate::server::{HttpServer, metric_sum};

#[test]
fn bounds_bad_requests_health_and_metrics() {
    let fixture = Fixture::new();
    fixture.write_config(&fixture.config(
        "\n[serve]\nmax_request_bytes = 65536\nmax_requests_in_flight = 3\nheader_timeout_ms = 500\n",
    ));
    let server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();

    let health = http_get(&at, "/healthz");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    assert_eq!(
        http_call(&at, "h_add", json!({"a": 1, "b": 2})).call_result(),
        (false, "3".into())
    );

    // A Host that is not ours (DNS rebinding): 403.
    let request = mcp_request(&at, "tools/list", json!({}), "")
        .iter()
        .map(|&b| b as char)
        .collect::<String>()
        .replacen(&format!("Host: {at}"), "Host: rebound.example", 1);
    let rebound = http_exchange(&at, request.as_bytes()).expect("a response");
    assert_eq!(rebound.status, 403, "{rebound:?}");

    // A client that starts a request and sends no more is cut off after
    // header_timeout_ms.
    let mut idle = TcpStream::connect(&at).expect("connects");
    idle.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout set");
    idle.write_all(b"POST /mcp HTTP/1.1\r\nHost: ")
        .expect("sent");
    let mut rest = Vec::new();
    let closed = idle.read_to_end(&mut rest);
    assert!(
        closed.is_ok(),
        "the idle connection was not closed: {closed:?}"
    );

    // A body over max_request_bytes: 413, unread.
    let padding = "x".repeat(100_000);
    let big = http_call(&at, "h_add", json!({"a": 1, "b": 2, "pad": padding}));
    assert_eq!(big.status, 413, "{big:?}");

    // A head over 64 KiB: refused (431), or the connection is closed.
    let pad_header = format!("X-Pad: {}\r\n", "y".repeat(100_000));
    let request = mcp_request(&at, "tools/list", json!({}), &pad_header);
    if let Some(response) = http_exchange(&at, &request) {
        assert_eq!(response.status, 431, "{}", response.head);
    }

    // Not JSON-RPC: 400 and a parse error. An unknown method: JSON-RPC
    // "method not found".
    let garbage = http_exchange(&at, &post_bytes(&at, "{not json", "")).expect("a response");
    assert_eq!(garbage.status, 400, "{garbage:?}");
    assert_eq!(
        garbage.messages()[0]["error"]["code"],
        -32700,
        "{garbage:?}"
    );
    let shapeless = http_exchange(&at, &post_bytes(&at, r#"{"jsonrpc": "2.0"}"#, ""));
    assert_eq!(shapeless.expect("a response").status, 400);
    let unknown = http_exchange(&at, &mcp_request(&at, "tools/frobnicate", json!({}), ""))
        .expect("a response");
    assert_eq!(
        unknown.messages()[0]["error"]["code"],
        -32601,
        "{unknown:?}"
    );

    // Three requests in flight at most: a fourth gets 503 until one ends.
    let sleepers: Vec<_> = (0..3)
        .map(|_| {
            let at = at.clone();
            std::thread::spawn(move || http_call(&at, "s_sleep", json!({"ms": 3000})))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    let refused = http_call(&at, "h_add", json!({"a": 1, "b": 2}));
    assert_eq!(refused.status, 503, "{refused:?}");
    for sleeper in sleepers {
        let answer = sleeper.join().expect("the request thread");
        assert_eq!(answer.call_result(), (false, "woke up".into()));
    }
    assert_eq!(
        http_call(&at, "h_add", json!({"a": 1, "b": 2})).call_result(),
        (false, "3".into())
    );

    // A client that disconnects mid-call: the call stops, the CPU is idle.
    let mut stream = TcpStream::connect(&at).expect("connects");
    let spin = mcp_request(
        &at,
        "tools/call",
        json!({"name": "s_spin", "arguments": {}}),
        "",
    );
    stream.write_all(&spin).expect("sent");
    std::thread::sleep(Duration::from_millis(500));
    drop(stream);
    let used = cpu_in_the_next_second(server.pid());
    assert!(
        used < 0.4,
        "the server used {used:.2} s of CPU in the second after the disconnect"
    );

    let metrics = server.metrics();
    let sample = |line: &str| metric_sum(&metrics, line);
    assert_eq!(
        sample(r#"toolhost_tool_calls_total{tool="h_add",outcome="ok"}"#),
        2.0,
        "{metrics}"
    );
    assert_eq!(
        sample(r#"toolhost_tool_calls_total{tool="s_spin",outcome="cancelled"}"#),
        1.0,
        "{metrics}"
    );
    assert_eq!(sample("toolhost_tool_calls_in_flight"), 0.0, "{metrics}");
    assert_eq!(sample("toolhost_modules_loaded"), 9.0, "{metrics}");
    assert_eq!(
        sample("toolhost_tool_call_duration_seconds_count"),
        6.0,
        "{metrics}"
    );
    assert!(metrics.contains("toolhost_reloads_total"), "{metrics}");
}

#[test]
fn sigterm_drains_calls_in_flight_up_to_the_deadline() {
    let fixture = Fixture::new();
    fixture.write_config(&fixture.config("\n[serve]\ndrain_timeout_ms = 5000\n"));

    // A call that ends within the deadline is answered, then the server exits.
    let mut server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    let call = std::thread::spawn(move || http_call(&at, "s_sleep", json!({"ms": 1500})));
    std::thread::sleep(Duration::from_millis(500));
    let status = server
        .terminate(Duration::from_secs(30))
        .expect("the server exits");
    assert!(status.success(), "{status}");
    let answer = call.join().expect("the request thread");
    assert_eq!(answer.call_result(), (false, "woke up".into()));

    // A call that would outlast the deadline: the server exits anyway.
    let mut server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    std::thread::spawn(move || http_call(&at, "s_sleep", json!({"ms": 100_000})));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        server.terminate(Duration::from_secs(60)).is_some(),
        "the server did not exit after its drain deadline"
    );
}

#[test]
fn refuses_to_listen_off_loopback_without_a_token() {
    let fixture = Fixture::new();
    let out = fixture
        .toolhost()
        .args(["serve", "--http", "0.0.0.0:0"])
        .env_remove("TOOLHOST_TOKEN")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("needs a bearer token") && stderr.contains("--token-file"),
        "{stderr}"
    );
    assert!(!stderr.contains("serving MCP at"), "{stderr}");
}
