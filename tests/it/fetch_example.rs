//! The example `fetch` (example-tools/fetch) against a local server, and
//! its config `example-tools/fetch.toml`.

use std::path::Path;

use serde_json::json;
use toolhost::config::Config;
use toolhost::{Limits, ToolManager};
use toolhost_testkit::http_server::{Reply, TestServer};

use crate::common::{allow_only, call, load_guest, with_http};

fn fetch_granted(allow: &[String]) -> ToolManager {
    let module = load_guest("fetch", "fetch", Limits::default()).expect("fetch loads");
    with_http(module, allow_only(allow))
}

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{}</style>\
    <script>alert(1)</script></head><body><h1>Hello &amp; welcome</h1>\
    <p>First <b>para</b>.</p><ul><li>one</li><li>two</li></ul></body></html>";

#[test]
fn fetch_reduces_a_page_to_text_and_reaches_nothing_else() {
    let server = TestServer::start([
        (
            "/page",
            Reply::Text {
                status: 200,
                body: PAGE.into(),
                content_type: "text/html; charset=utf-8".into(),
            },
        ),
        ("/plain", Reply::text(200, "just text")),
        (
            "/moved",
            Reply::redirect(301, "http://127.0.0.1:1/elsewhere"),
        ),
        ("/big", Reply::Bytes { len: 10_000 }),
    ]);
    let m = fetch_granted(&[server.origin()]);
    let text = call(&m, "fetch_url", json!({"url": server.url("/page")}));
    assert!(text.contains("Hello & welcome"), "{text}");
    assert!(text.contains("First para."), "{text}");
    assert!(
        text.contains("one\ntwo") || text.contains("one\n\ntwo"),
        "{text}"
    );
    assert!(!text.contains("alert") && !text.contains('<'), "{text}");
    assert_eq!(
        call(&m, "fetch_url", json!({"url": server.url("/plain")})),
        "just text"
    );
    let moved = call(&m, "fetch_url", json!({"url": server.url("/moved")}));
    assert!(
        moved.contains("redirected to http://127.0.0.1:1/elsewhere"),
        "{moved}"
    );
    let big = call(
        &m,
        "fetch_url",
        json!({"url": server.url("/big"), "max_bytes": 1000}),
    );
    assert!(big.ends_with("[truncated at 1000 bytes]"), "{big}");
    let denied = call(&m, "fetch_url", json!({"url": "http://127.0.0.1:1/x"}));
    assert!(denied.contains("HTTP-request-denied"), "{denied}");
    assert!(denied.contains("grants.http.allow"), "{denied}");
}

#[test]
fn the_example_config_grants_fetch_one_origin() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("example-tools/fetch.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let config: Config = toml::from_str(&text).expect("the example config parses");
    config.validate().expect("the example config is valid");
    let module = &config.modules[0];
    let access = module.grants.http.resolve(Path::new(".")).unwrap();
    assert_eq!(access.allow().len(), 1);
    assert_eq!(access.allow()[0].to_string(), "https://www.rust-lang.org/");
    assert!(access.secret_headers().is_empty());
}
