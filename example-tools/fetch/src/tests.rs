//! Everything but the request itself, which needs a wasi:http host (the
//! integration tests run the component).

use super::*;

use toolhost_guest::serde_json::{self, Value, json};
use wasi::http::types::{DnsErrorPayload, ErrorCode};

fn url(text: &str) -> Url {
    Url::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn bad_url(text: &str) -> String {
    match Url::parse(text) {
        Ok(u) => panic!("{text:?} parsed as {u:?}"),
        Err(e) => e,
    }
}

#[test]
fn parses_urls() {
    let u = url("https://www.rust-lang.org/");
    assert_eq!(
        u,
        Url {
            https: true,
            authority: "www.rust-lang.org".into(),
            path_with_query: "/".into(),
        }
    );
    assert_eq!(u.to_string(), "https://www.rust-lang.org/");

    let u = url(" HTTP://Example.COM:8080/a/b?q=1&r=2#frag ");
    assert!(!u.https);
    assert_eq!(u.authority, "example.com:8080");
    assert_eq!(u.path_with_query, "/a/b?q=1&r=2");
    assert_eq!(url("https://example.com").path_with_query, "/");
    assert_eq!(url("https://example.com?x").path_with_query, "/?x");
    assert_eq!(url("http://[::1]:8000/x").authority, "[::1]:8000");
    assert_eq!(url("http://[::1]").authority, "[::1]");
    assert_eq!(
        url("https://example.com/a b/ü?q=\"x\"").path_with_query,
        "/a%20b/%C3%BC?q=%22x%22"
    );
    assert_eq!(url("https://example.com/%20").path_with_query, "/%20");
}

#[test]
fn refuses_bad_urls() {
    assert_eq!(
        bad_url("ftp://example.com/"),
        "only http and https URLs can be fetched, not ftp:"
    );
    assert!(bad_url("example.com/x").contains("not an absolute URL"));
    assert!(bad_url("https:///path").contains("no host"));
    assert!(bad_url("https://user:pw@example.com/").contains("user name or password"));
    assert!(bad_url("https://bücher.de/").contains("punycode"));
    assert!(bad_url("https://exa mple.com/").contains("host contains ' '"));
    assert!(bad_url("https://example.com:http/").contains("not a port number"));
    assert!(bad_url("https://example.com:0/").contains("not a port number"));
    assert!(bad_url("https://example.com/a\tb").contains("control characters"));
    let long = format!("https://example.com/{}", "a".repeat(url::MAX_URL_LENGTH));
    assert!(bad_url(&long).contains("too long"));
}

#[test]
fn resolves_redirect_locations() {
    let base = url("https://example.com/docs/page.html?x=1");
    assert_eq!(base.join("https://other.org/"), "https://other.org/");
    assert_eq!(
        base.join("//cdn.example.com/a"),
        "https://cdn.example.com/a"
    );
    assert_eq!(base.join("/login"), "https://example.com/login");
    assert_eq!(
        base.join("other.html"),
        "https://example.com/docs/other.html"
    );
    assert_eq!(base.join("?y=2"), "https://example.com/docs/page.html?y=2");
    assert_eq!(url("http://example.com").join("a"), "http://example.com/a");
}

#[test]
fn statuses() {
    let base = url("https://www.rust-lang.org/");
    assert!(check_status(&base, 200, None).is_ok());
    assert!(check_status(&base, 204, Some("/x")).is_ok());
    let message = |status, location| {
        check_status(&base, status, location)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        message(301, Some("/learn")),
        "the server redirected to https://www.rust-lang.org/learn; fetch that URL if it is allowed"
    );
    assert_eq!(
        message(304, None),
        "the server answered 304 Not Modified without a Location to follow"
    );
    assert_eq!(
        message(404, None),
        "the server answered 404 Not Found: there is no such page; check the URL"
    );
    assert!(message(503, None).starts_with("the server answered 503 Service Unavailable"));
    assert_eq!(message(418, None), "the server answered 418");
    assert_eq!(message(101, None), "the server answered 101");
}

#[test]
fn encodings() {
    assert!(check_encoding(None).is_ok());
    assert!(check_encoding(Some("identity")).is_ok());
    assert_eq!(
        check_encoding(Some("gzip")).unwrap_err().to_string(),
        "the server sent the body compressed (gzip), which fetch_url cannot decode"
    );
}

fn rendered(content_type: Option<&str>, body: &[u8]) -> String {
    render(content_type, body, None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn renders_html_text_and_json() {
    let page = b"<html><head><title>T</title></head><body><h1>Rust</h1><p>A language &amp; more.</p></body></html>";
    assert_eq!(
        rendered(Some("text/html; charset=utf-8"), page),
        "Rust\nA language & more."
    );
    assert_eq!(
        rendered(Some("TEXT/HTML"), page),
        "Rust\nA language & more."
    );
    // Undeclared, but plainly HTML.
    assert_eq!(rendered(None, b"  <!DOCTYPE html><p>x</p>"), "x");
    let json = br#"{"a": [1, 2], "b": "<p>"}"#;
    assert_eq!(
        rendered(Some("application/json"), json),
        r#"{"a": [1, 2], "b": "<p>"}"#
    );
    assert_eq!(
        rendered(Some("application/ld+json"), json),
        r#"{"a": [1, 2], "b": "<p>"}"#
    );
    assert_eq!(rendered(Some("text/plain"), b"  a <b>  \n"), "  a <b>  \n");
    assert_eq!(rendered(None, b"plain"), "plain");
    // Text of an unexpected type is still text.
    assert_eq!(rendered(Some("application/octet-stream"), b"abc"), "abc");
    assert_eq!(
        rendered(Some("text/plain"), b""),
        "[the response body is empty]"
    );
    assert_eq!(
        rendered(Some("text/html"), b"<script>x()</script>"),
        "[the page has no readable text]"
    );
    assert_eq!(rendered(Some("text/plain"), b"caf\xe9"), "caf\u{FFFD}");
}

#[test]
fn refuses_binary_bodies() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    assert_eq!(
        render(Some("image/png"), png, None)
            .unwrap_err()
            .to_string(),
        "the response is image/png, not text; fetch_url returns only text, HTML and JSON"
    );
    assert_eq!(
        render(None, png, None).unwrap_err().to_string(),
        "the response is not text (and declares no type); fetch_url returns only text, HTML and JSON"
    );
    assert!(
        render(
            Some("application/pdf"),
            b"%PDF-1.7\n\xe2\xe3\xcf\xd3\0",
            None
        )
        .is_err()
    );
}

#[test]
fn marks_truncated_bodies() {
    assert_eq!(
        render(Some("text/plain"), b"0123456789", Some(10)).unwrap(),
        "0123456789\n[truncated at 10 bytes]"
    );
    // "é" is two bytes; the cut kept only the first.
    assert_eq!(
        render(Some("text/plain"), b"caf\xc3", Some(4)).unwrap(),
        "caf\n[truncated at 4 bytes]"
    );
    assert_eq!(
        render(Some("text/html"), b"<p>one</p><p>tw", Some(15)).unwrap(),
        "one\ntw\n[truncated at 15 bytes]"
    );
    assert_eq!(
        render(Some("text/html"), b"<p>one</p><a href=\"x", Some(20)).unwrap(),
        "one\n[truncated at 20 bytes]"
    );
}

#[test]
fn partial_characters() {
    assert_eq!(without_partial_char(b"ab"), b"ab");
    assert_eq!(without_partial_char("é".as_bytes()), "é".as_bytes());
    assert_eq!(without_partial_char(b"a\xc3"), b"a");
    assert_eq!(without_partial_char(b"a\xe2\x9c"), b"a");
    assert_eq!(without_partial_char("a✓".as_bytes()), "a✓".as_bytes());
    assert_eq!(without_partial_char(b"a\xf0\x9f\x98"), b"a");
    assert_eq!(without_partial_char(b""), b"");
}

fn http_error(code: ErrorCode) -> String {
    FetchError::Http {
        code,
        url: "https://example.com/".into(),
    }
    .to_string()
}

#[test]
fn wasi_http_errors_say_what_to_do() {
    assert_eq!(
        http_error(ErrorCode::HttpRequestDenied),
        "the request was denied: https://example.com/ is not in this module's HTTP allow-list \
         (grants.http.allow) [HTTP-request-denied]"
    );
    assert_eq!(
        http_error(ErrorCode::DnsError(DnsErrorPayload {
            rcode: Some("NXDOMAIN".into()),
            info_code: None,
        })),
        "the host name of https://example.com/ could not be looked up (NXDOMAIN); check the URL \
         [DNS-error]"
    );
    assert!(http_error(ErrorCode::ConnectionRefused).ends_with(" [connection-refused]"));
    assert!(http_error(ErrorCode::TlsCertificateError).ends_with(" [TLS-certificate-error]"));
    assert!(
        http_error(ErrorCode::HttpResponseBodySize(Some(10)))
            .contains("larger than the host accepts (10 bytes); try a smaller max_bytes")
    );
    assert!(
        http_error(ErrorCode::InternalError(Some("boom".into())))
            .contains("failed to make the request (boom)")
    );
    assert_eq!(
        wit_name(&ErrorCode::DestinationIpProhibited),
        "destination-IP-prohibited"
    );
    assert_eq!(
        wit_name(&ErrorCode::HttpRequestUriInvalid),
        "HTTP-request-URI-invalid"
    );
    assert_eq!(
        wit_name(&ErrorCode::HttpResponseTimeout),
        "HTTP-response-timeout"
    );
    assert_eq!(
        FetchError::Body {
            detail: "reset".into()
        }
        .to_string(),
        "reading the response body failed (reset); try again"
    );
}

#[test]
fn arguments_are_checked_before_any_request() {
    let call = |arguments: Value| toolbox().call("url", &arguments.to_string());
    assert_eq!(
        call(json!({"url": "https://example.com/", "max_bytes": 0})),
        Err("max_bytes must be from 1 to 1048576, got 0".into())
    );
    assert_eq!(
        call(json!({"url": "https://example.com/", "max_bytes": 1_048_577})),
        Err("max_bytes must be from 1 to 1048576, got 1048577".into())
    );
    assert_eq!(
        call(json!({"url": "file:///etc/passwd"})),
        Err("only http and https URLs can be fetched, not file:".into())
    );
    let e = call(json!({"url": "https://example.com/", "follow": true})).unwrap_err();
    assert!(e.contains("unknown field `follow`"), "{e}");
}

#[test]
fn tool_info() {
    let info: Value = serde_json::from_str(&toolbox().tool_info()).unwrap();
    let function = &info[0]["function"];
    assert_eq!(function["name"], "url");
    assert_eq!(function["title"], "Fetch a URL");
    assert_eq!(function["annotations"]["openWorldHint"], true);
    assert_eq!(function["annotations"]["readOnlyHint"], true);
    let description = function["description"].as_str().unwrap();
    assert!(description.starts_with("Gets a URL (http or https)"));
    assert!(description.contains("[truncated at N bytes]"));
    let parameters = &function["parameters"];
    assert_eq!(parameters["required"], json!(["url"]));
    assert_eq!(parameters["additionalProperties"], false);
    let max_bytes = &parameters["properties"]["max_bytes"];
    assert_eq!(max_bytes["minimum"], 1);
    assert_eq!(max_bytes["maximum"], 1_048_576);
}
