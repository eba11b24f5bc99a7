//! Outbound HTTP (`wasi:http`): exactly the granted origins, prefixes and
//! methods; no internal addresses by name; host-side secret headers; every
//! HTTP limit; against local HTTP and HTTPS servers on 127.0.0.1.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost::http::{AllowEntry, HttpGrant, SecretHeaderGrant};
use toolhost::{Limits, ToolManager, WasmModule};
use toolhost_testkit::http_server::{Reply, TestCa, TestServer};

use crate::common::{allow_only, call, load_guest, with_http};

/// The HTTP guest as module `g`, loaded once with `limits` (per distinct
/// limits, by the cache).
fn guest_module(limits: Limits) -> WasmModule {
    static DEFAULT: OnceLock<WasmModule> = OnceLock::new();
    if limits == Limits::default() {
        return DEFAULT
            .get_or_init(|| load_guest("guest-http", "g", Limits::default()).expect("loads"))
            .clone();
    }
    load_guest("guest-http", "g", limits).expect("the HTTP guest loads")
}

/// A manager with the HTTP guest granted `grant`, under `limits`.
pub(crate) fn granted_with(grant: HttpGrant, limits: Limits) -> ToolManager {
    with_http(guest_module(limits), grant)
}

pub(crate) fn granted(allow: &[String]) -> ToolManager {
    granted_with(allow_only(allow), Limits::default())
}

pub(crate) fn request(manager: &ToolManager, args: Value) -> String {
    call(manager, "g_http_request", args)
}

pub(crate) fn get(manager: &ToolManager, url: &str) -> String {
    request(manager, json!({ "url": url }))
}

/// The guest's answer as JSON (panics with the text if it is an error).
pub(crate) fn answer(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not a JSON answer: {text}"))
}

pub(crate) fn denied(text: &str) {
    assert!(
        text.starts_with("Error: tool 'g_http_request' failed: http error: HTTP-request-denied"),
        "{text}"
    );
    assert!(
        text.contains("toolhost refused HTTP: an HTTP request was denied"),
        "{text}"
    );
}

#[test]
fn every_request_is_denied_without_a_grant() {
    let server = TestServer::start([("/", Reply::text(200, "hello"))]);
    let mut manager = ToolManager::new();
    manager.register(guest_module(Limits::default())).unwrap();
    let out = get(&manager, &server.url("/"));
    denied(&out);
    assert!(out.contains("this module has no HTTP grant"), "{out}");
    assert_eq!(server.connections(), 0);
}

#[test]
fn an_allowed_origin_is_reached() {
    let server = TestServer::start([("/hello", Reply::text(200, "hello there"))]);
    let m = granted(&[server.origin()]);
    let out = answer(&request(
        &m,
        json!({"url": server.url("/hello?x=1"), "method": "POST", "body": "ping"}),
    ));
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], "hello there");
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/hello?x=1");
    assert_eq!(seen[0].body, b"ping");
    assert_eq!(
        seen[0].header("host"),
        Some(format!("127.0.0.1:{}", server.port()).as_str())
    );
}

#[test]
fn other_origins_ports_methods_and_paths_are_denied_before_connecting() {
    let allowed = TestServer::start([("/", Reply::text(200, "ok"))]);
    let other = TestServer::start([("/", Reply::text(200, "other"))]);
    let grant = HttpGrant {
        allow: vec![AllowEntry::Url(format!("{}/api/", allowed.origin()))],
        methods: Some(vec!["GET".into()]),
        ..HttpGrant::default()
    };
    let m = granted_with(grant, Limits::default());
    assert_eq!(answer(&get(&m, &allowed.url("/api/items")))["body"], "ok");
    let cases = [
        // another origin (another port of the same host)
        json!({"url": other.url("/api/items")}),
        // the same port by name: another origin
        json!({"url": allowed.origin_host("localhost") + "/api/items"}),
        // https instead of http
        json!({"url": allowed.url("/api/items").replace("http://", "https://")}),
        // outside the prefix, and around it
        json!({"url": allowed.url("/apix")}),
        json!({"url": allowed.url("/api")}),
        json!({"url": allowed.url("/api/../admin")}),
        json!({"url": allowed.url("/api/%2e%2e/admin")}),
        // a method not listed
        json!({"url": allowed.url("/api/items"), "method": "DELETE"}),
    ];
    for case in cases {
        denied(&request(&m, case));
    }
    // This guest writes a body after handing the request over: its write
    // fails first, as the host refused the request.
    let out = request(
        &m,
        json!({"url": allowed.url("/api/items"), "method": "POST", "body": "x"}),
    );
    assert!(
        out.contains("toolhost refused HTTP: an HTTP request was denied: POST"),
        "{out}"
    );
    assert_eq!(other.connections(), 0);
    assert_eq!(allowed.requests().len(), 1, "{:?}", allowed.requests());
}

#[test]
fn redirects_are_not_followed() {
    let elsewhere = TestServer::start([("/", Reply::text(200, "secret place"))]);
    let server = TestServer::start([("/moved", Reply::redirect(302, elsewhere.url("/landing")))]);
    let m = granted(&[server.origin()]);
    let out = answer(&get(&m, &server.url("/moved")));
    assert_eq!(out["status"], 302);
    let location = out["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h[0] == "location")
        .expect("a location header")[1]
        .clone();
    assert_eq!(location, elsewhere.url("/landing"));
    // The guest follows it itself: that hop is checked like any request.
    denied(&get(&m, location.as_str().unwrap()));
    assert_eq!(elsewhere.connections(), 0);
}

#[test]
fn a_host_name_resolving_to_loopback_needs_allow_private() {
    let server = TestServer::start([("/", Reply::text(200, "local"))]);
    let by_name = server.origin_host("localhost");
    let m = granted(std::slice::from_ref(&by_name));
    let out = get(&m, &format!("{by_name}/"));
    assert!(
        out.starts_with(
            "Error: tool 'g_http_request' failed: http error: destination-IP-prohibited"
        ),
        "{out}"
    );
    assert!(out.contains("localhost resolves to"), "{out}");
    assert!(out.contains("allow_private = true"), "{out}");
    assert_eq!(server.connections(), 0);

    for grant in [
        HttpGrant {
            allow: vec![AllowEntry::Table {
                url: by_name.clone(),
                allow_private: true,
            }],
            ..HttpGrant::default()
        },
        HttpGrant {
            allow: vec![AllowEntry::Url(by_name.clone())],
            allow_private: true,
            ..HttpGrant::default()
        },
    ] {
        let m = granted_with(grant, Limits::default());
        assert_eq!(answer(&get(&m, &format!("{by_name}/")))["body"], "local");
    }
}

#[test]
fn https_is_checked_against_the_ca_file() {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    ca.write_pem(&ca_file);
    let server = TestServer::start_tls([("/", Reply::text(200, "over tls"))], &ca);
    let origin = server.origin_ip();
    assert!(origin.starts_with("https://"));

    // The bundled roots do not know the test CA.
    let m = granted(std::slice::from_ref(&origin));
    let out = get(&m, &format!("{origin}/"));
    assert!(
        out.starts_with("Error: tool 'g_http_request' failed: http error: TLS-certificate-error"),
        "{out}"
    );

    let with_ca = HttpGrant {
        ca_file: Some(ca_file.clone()),
        ..allow_only(std::slice::from_ref(&origin))
    };
    let m = granted_with(with_ca, Limits::default());
    let out = answer(&get(&m, &format!("{origin}/")));
    assert_eq!(out["body"], "over tls");
    // The plain-HTTP form of an https grant is not allowed.
    denied(&get(
        &m,
        &format!("{origin}/").replace("https://", "http://"),
    ));
}

#[test]
fn a_bad_ca_file_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, "not a certificate").unwrap();
    let grant = |path| HttpGrant {
        ca_file: Some(path),
        ..allow_only(&["https://127.0.0.1:1".to_string()])
    };
    let err = grant(ca_file).resolve(Path::new(".")).unwrap_err();
    assert!(err.starts_with("grants.http.ca_file: "), "{err}");
    assert!(err.contains("no PEM certificate"), "{err}");
    let err = grant(dir.path().join("missing.pem"))
        .resolve(Path::new("."))
        .unwrap_err();
    assert!(err.contains("cannot open"), "{err}");
}

const SECRET_VAR: &str = "TOOLHOST_TEST_HTTP_TOKEN";
const SECRET: &str = "s3cr3t-7f1d2c9a";

fn secret_grant(origin: &str) -> HttpGrant {
    // SAFETY: only these tests set this variable, always to the same value.
    unsafe { std::env::set_var(SECRET_VAR, SECRET) };
    HttpGrant {
        secret_headers: vec![SecretHeaderGrant {
            origin: origin.to_string(),
            name: "Authorization".into(),
            env: SECRET_VAR.into(),
            prefix: "Bearer ".into(),
        }],
        ..allow_only(&[origin.to_string()])
    }
}

#[test]
fn secret_headers_reach_the_server_and_never_the_guest() {
    let server = TestServer::start([("/", Reply::Headers)]);
    let other = TestServer::start([("/", Reply::Headers)]);
    let mut grant = secret_grant(&server.origin());
    grant.allow.push(AllowEntry::Url(other.origin()));
    let m = granted_with(grant, Limits::default());

    let out = request(
        &m,
        json!({"url": server.url("/"), "headers": {"authorization": "guest-value", "x-guest": "1"}}),
    );
    let seen = server.requests();
    assert_eq!(
        seen[0].header_all("authorization"),
        [format!("Bearer {SECRET}")]
    );
    assert_eq!(seen[0].header("x-guest"), Some("1"));
    // What the guest can read back of its own request holds its own value.
    let sent = &answer(&out)["sent_headers"];
    assert!(sent.to_string().contains("guest-value"), "{sent}");
    assert!(!sent.to_string().contains(SECRET), "{sent}");

    // Only the granted origin gets it.
    answer(&get(&m, &other.url("/")));
    assert_eq!(other.requests()[0].header("authorization"), None);

    // Not in the guest's environment either.
    let env = call(&m, "g_http_env", json!({}));
    assert!(!env.contains(SECRET), "{env}");
    assert!(!env.contains(SECRET_VAR), "{env}");
    // Nor in what the module shows of itself.
    let module = format!("{:?}", m);
    assert!(!module.contains(SECRET), "{module}");
}

#[test]
fn an_unset_secret_variable_is_a_config_error() {
    let grant = HttpGrant {
        secret_headers: vec![SecretHeaderGrant {
            origin: "https://api.example.com".into(),
            name: "X-Api-Key".into(),
            env: "TOOLHOST_TEST_SURELY_UNSET_TOKEN".into(),
            prefix: String::new(),
        }],
        ..allow_only(&["https://api.example.com/v1/".into()])
    };
    let err = grant.resolve(Path::new(".")).unwrap_err();
    assert_eq!(
        err,
        "grants.http.secret_headers[0]: env 'TOOLHOST_TEST_SURELY_UNSET_TOKEN' is not set \
         (or not UTF-8) in toolhost's environment"
    );
}

fn limited(limits: Limits, server: &TestServer) -> ToolManager {
    granted_with(allow_only(&[server.origin()]), limits)
}

fn assert_limit(out: &str, code: &str, key: &str) {
    assert!(
        out.starts_with(&format!(
            "Error: tool 'g_http_request' failed: http error: {code}"
        )),
        "{out}"
    );
    assert!(out.contains(key), "{out}");
}

#[test]
fn body_limits_fire_with_their_names() {
    let server = TestServer::start([("/big", Reply::Bytes { len: 5000 }), ("/", Reply::Echo)]);
    let m = limited(
        Limits {
            max_http_request_body_bytes: 1000,
            max_http_response_body_bytes: 4000,
            ..Limits::default()
        },
        &server,
    );
    let post = |bytes: u64| json!({"url": server.url("/"), "method": "POST", "body_bytes": bytes});
    let out = answer(&request(&m, post(1000)));
    assert_eq!(out["body"].as_str().unwrap().len(), 1000);
    let out = request(&m, post(1001));
    assert_limit(
        &out,
        "HTTP-request-body-size",
        "max_http_request_body_bytes (1000)",
    );
    let out = get(&m, &server.url("/big"));
    assert!(out.contains("max_http_response_body_bytes (4000)"), "{out}");
    let chunked = TestServer::start([("/", Reply::Chunked { len: 100_000 })]);
    let m = limited(
        Limits {
            max_http_response_body_bytes: 4000,
            ..Limits::default()
        },
        &chunked,
    );
    let out = get(&m, &chunked.url("/"));
    assert!(out.contains("max_http_response_body_bytes (4000)"), "{out}");
}

#[test]
fn header_limits_fire_with_their_names() {
    let server = TestServer::start([
        (
            "/many",
            Reply::ManyHeaders {
                count: 50,
                size: 10,
            },
        ),
        (
            "/long",
            Reply::ManyHeaders {
                count: 4,
                size: 4000,
            },
        ),
        ("/", Reply::text(200, "ok")),
    ]);
    let m = limited(
        Limits {
            max_http_fields: 20,
            max_http_fields_size: 8000,
            ..Limits::default()
        },
        &server,
    );
    let many: serde_json::Map<String, Value> =
        (0..25).map(|i| (format!("x-h{i}"), json!("v"))).collect();
    let out = request(&m, json!({"url": server.url("/"), "headers": many}));
    assert_limit(
        &out,
        "HTTP-request-header-section-size",
        "max_http_fields (20)",
    );
    let out = request(
        &m,
        json!({"url": server.url("/"), "headers": {"x-long": "y".repeat(9000)}}),
    );
    assert!(out.contains("max_http_fields_size (8000)"), "{out}");
    let out = get(&m, &server.url("/many"));
    assert_limit(
        &out,
        "HTTP-response-header-section-size",
        "max_http_fields (20)",
    );
    let out = get(&m, &server.url("/long"));
    assert_limit(
        &out,
        "HTTP-response-header-section-size",
        "max_http_fields_size (8000)",
    );
    assert_eq!(answer(&get(&m, &server.url("/")))["body"], "ok");
}

#[test]
fn request_count_and_concurrency_limits_fire_with_their_names() {
    let server = TestServer::start([
        ("/slow", Reply::delay(300, Reply::text(200, "slow"))),
        ("/", Reply::text(200, "ok")),
    ]);
    let m = limited(
        Limits {
            max_http_requests: 3,
            max_http_concurrent: 2,
            ..Limits::default()
        },
        &server,
    );
    let urls: Vec<String> = (0..4).map(|_| server.url("/")).collect();
    let out = answer(&call(&m, "g_http_many", json!({"urls": urls})));
    let errors: Vec<&Value> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["error"])
        .collect();
    assert_eq!(
        errors[..3],
        [&Value::Null, &Value::Null, &Value::Null],
        "{out}"
    );
    assert_eq!(errors[3], "connection-limit-reached", "{out}");
    // A new call counts anew.
    assert_eq!(answer(&get(&m, &server.url("/")))["status"], 200);

    let slow: Vec<String> = (0..3).map(|_| server.url("/slow")).collect();
    let out = answer(&call(
        &m,
        "g_http_many",
        json!({"urls": slow, "concurrent": true}),
    ));
    let failed = out
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["error"] == "connection-limit-reached")
        .count();
    assert_eq!(failed, 1, "{out}");
    assert!(server.max_in_flight() <= 2);
}

#[test]
fn the_limit_text_reaches_the_call_error() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let m = limited(
        Limits {
            max_http_requests: 1,
            ..Limits::default()
        },
        &server,
    );
    let urls = vec![server.url("/"), server.url("/")];
    let out = call(
        &m,
        "g_http_many",
        json!({"urls": urls, "fail_on_error": true}),
    );
    assert!(
        out.contains(
            "toolhost refused HTTP: the call made more HTTP requests than max_http_requests (1)"
        ),
        "{out}"
    );
}

#[test]
fn timeouts_fire_with_their_names() {
    let server = TestServer::start([("/stall", Reply::Stall)]);
    let m = limited(
        Limits {
            http_first_byte_timeout_ms: 200,
            ..Limits::default()
        },
        &server,
    );
    let out = get(&m, &server.url("/stall"));
    assert_limit(
        &out,
        "connection-read-timeout",
        "http_first_byte_timeout_ms (200 ms)",
    );

    // A TCP server that never speaks TLS: the handshake is part of connecting.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("https://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let m = granted_with(
        allow_only(std::slice::from_ref(&origin)),
        Limits {
            http_connect_timeout_ms: 200,
            ..Limits::default()
        },
    );
    let out = get(&m, &format!("{origin}/"));
    assert_limit(
        &out,
        "connection-timeout",
        "http_connect_timeout_ms (200 ms)",
    );
    drop(silent);
}

#[test]
fn a_trickling_server_ends_at_the_call_deadline() {
    let server = TestServer::start([("/", Reply::Trickle { interval_ms: 20 })]);
    let m = limited(
        Limits {
            timeout_ms: 700,
            ..Limits::default()
        },
        &server,
    );
    let out = get(&m, &server.url("/"));
    assert!(out.starts_with("Error: tool 'g_http_request'"), "{out}");
    // Whichever sees the deadline first, the body or the call, says so.
    assert!(
        out == "Error: tool 'g_http_request' exceeded its time limit of 700 ms."
            || out.ends_with(
                "(toolhost refused HTTP: an HTTP response was cut at the call's deadline \
                 (timeout_ms = 700))"
            ),
        "{out}"
    );
    // The host goes on serving.
    let ok = TestServer::start([("/", Reply::text(200, "after"))]);
    assert_eq!(
        answer(&get(&limited(Limits::default(), &ok), &ok.url("/")))["body"],
        "after"
    );
}

#[test]
fn eight_concurrent_calls_each_make_requests() {
    let server = TestServer::start([("/", Reply::delay(20, Reply::text(200, "ok")))]);
    let m = granted(&[server.origin()]);
    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|i| {
                let (m, url) = (&m, server.url(&format!("/{i}")));
                scope.spawn(move || {
                    let urls = vec![url.clone(), url.clone(), url];
                    call(m, "g_http_many", json!({"urls": urls, "concurrent": true}))
                })
            })
            .collect();
        for handle in calls {
            let out = answer(&handle.join().unwrap());
            for result in out.as_array().unwrap() {
                assert_eq!(result["status"], 200, "{out}");
            }
        }
    });
    assert_eq!(server.requests().len(), 24);
}
