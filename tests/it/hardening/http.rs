//! HTTP attacks of a hostile guest against the allow-list, the secret
//! headers and the request framing (all on 127.0.0.1: a refusal of any
//! other address is tested where it is decided, in `src/policy/http/`).

use serde_json::json;
use toolhost::Limits;
use toolhost_testkit::http_server::{Reply, TestServer};

use crate::common::allow_only;
use crate::http::{answer, denied, get, granted, granted_with, request};

#[test]
fn other_spellings_of_a_granted_address_are_other_origins() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let port = server.port();
    let m = granted(&[server.origin()]);
    for url in [
        format!("http://2130706433:{port}/"),
        format!("http://0x7f.0.0.1:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://127.000.000.001:{port}/"),
    ] {
        let out = get(&m, &url);
        assert!(
            out.starts_with("Error: tool 'g_http_request' failed: http error: "),
            "{url}: {out}"
        );
    }
    assert_eq!(server.connections(), 0);
}

#[test]
fn user_info_cannot_dress_up_another_host() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let m = granted(&[server.origin()]);
    let out = get(
        &m,
        &format!(
            "http://127.0.0.1:{}@127.0.0.2:{}/",
            server.port(),
            server.port()
        ),
    );
    assert!(
        out.starts_with("Error: tool 'g_http_request' failed: "),
        "{out}"
    );
    assert_eq!(server.connections(), 0);
}

#[test]
fn framing_headers_cannot_be_forged() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let m = granted(&[server.origin()]);
    for (name, value) in [
        ("host", "evil.example"),
        ("transfer-encoding", "chunked"),
        ("connection", "upgrade"),
        ("upgrade", "websocket"),
        ("x-crlf", "a\r\nx-injected: 1"),
    ] {
        let out = request(
            &m,
            json!({"url": server.url("/"), "method": "POST", "headers": {name: value}, "body": "x"}),
        );
        assert!(
            out.starts_with("Error: tool 'g_http_request' failed: http error: "),
            "{name}: {out}"
        );
    }
    for seen in server.requests() {
        assert!(seen.header("x-injected").is_none());
        assert_ne!(seen.header("host"), Some("evil.example"));
    }
}

#[test]
fn a_lying_content_length_smuggles_nothing_past_it() {
    // The guest declares 2 bytes and writes 8. Whether the first two reach
    // the server before the write fails depends on timing; what must never
    // happen is that the bytes past the declared length reach it, as the
    // body or as a request of their own.
    let server = TestServer::start([("/", Reply::Echo)]);
    let m = granted(&[server.origin()]);
    let out = request(
        &m,
        json!({"url": server.url("/"), "method": "POST", "headers": {"content-length": "2"}, "body": "smuggled"}),
    );
    assert!(out.starts_with("Error: "), "{out}");
    server.wait_until("the host closes its connections", |s| {
        s.closed() == s.connections()
    });
    for stream in server.received() {
        let stream = String::from_utf8_lossy(&stream);
        assert!(!stream.contains("ugg"), "{stream}");
    }
    let seen = server.requests();
    assert!(seen.len() <= 1, "{} requests", seen.len());
    for request in seen {
        assert_eq!(request.path, "/");
        assert!(b"sm".starts_with(&request.body), "{:?}", request.body);
    }
}

#[test]
fn a_flood_of_requests_is_cut_at_the_limit() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let m = granted_with(
        allow_only(&[server.origin()]),
        Limits {
            max_http_requests: 10,
            ..Limits::default()
        },
    );
    let urls: Vec<String> = (0..200).map(|_| server.url("/")).collect();
    let out = answer(&crate::common::call(
        &m,
        "g_http_many",
        json!({"urls": urls, "concurrent": true}),
    ));
    let ok = out
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == 200)
        .count();
    assert!(ok <= 10, "{ok}");
    assert!(server.requests().len() <= 10);
}

#[test]
fn a_denied_request_leaves_the_module_serving() {
    let server = TestServer::start([("/", Reply::text(200, "fine"))]);
    let m = granted(&[server.origin()]);
    denied(&get(&m, "http://127.0.0.1:1/"));
    assert_eq!(answer(&get(&m, &server.url("/")))["body"], "fine");
}
