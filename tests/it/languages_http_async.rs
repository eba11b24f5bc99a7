//! Outbound HTTP and the component-model async ABI from the other
//! toolchains: `fetch()` in a ComponentizeJS tool built with its default
//! options, a componentize-py tool using wasi:http, and tools built with
//! jco's QuickJS backend (default options: the async ABI) under the same
//! limits as any module; and components of both with plain typed exports,
//! written without toolhost's SDK.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost::{Limits, Tool, ToolManager, WasmModule};
use toolhost_testkit::http_server::{Reply, TestServer};
use xtask::{
    Repo, build_js_component, build_js_world_component, build_python_component, build_qjs_component,
};

use crate::common::{allow_only, caching_runtime, call, with_http};

fn repo() -> Repo {
    Repo::at(env!("CARGO_MANIFEST_DIR"))
}

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("guest-languages")
}

/// Builds a component once per test run with `build`; its path.
fn once(
    slot: &'static OnceLock<Result<PathBuf, String>>,
    build: fn() -> anyhow::Result<PathBuf>,
) -> PathBuf {
    slot.get_or_init(|| build().map_err(|e| format!("{e:#}")))
        .clone()
        .unwrap_or_else(|e| panic!("building a test component failed: {e}"))
}

fn js_fetch() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let source = repo.root().join("tests/guests-js/fetch/tool.js");
        build_js_component(&repo, &source, &out_dir().join("js-fetch.wasm"), &[])
    })
}

fn py_http() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let dir = repo.root().join("tests/guests-py/http");
        let wit = [repo.wit_dir(), dir.join("wit")];
        let wit: Vec<&Path> = wit.iter().map(PathBuf::as_path).collect();
        build_python_component(
            &repo,
            &dir,
            &wit,
            "toolhost:tool-http/tool-http@0.1.0",
            &out_dir().join("py-http.wasm"),
        )
    })
}

fn py_plain() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let dir = repo.root().join("tests/guests-py/plain");
        let wit = dir.join("wit");
        build_python_component(
            &repo,
            &dir,
            &[wit.as_path()],
            "test:py-plain/py-plain@0.1.0",
            &out_dir().join("py-plain.wasm"),
        )
    })
}

fn js_plain() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let dir = repo.root().join("tests/guests-js/plain");
        build_js_world_component(
            &repo,
            &dir.join("tool.js"),
            &dir.join("wit"),
            "js-plain",
            &out_dir().join("js-plain.wasm"),
        )
    })
}

fn qjs_hostile() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let source = repo.root().join("tests/guests-js/qjs-hostile/tool.js");
        build_qjs_component(&repo, &source, &out_dir().join("qjs-hostile.wasm"))
    })
}

fn qjs_url() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    once(&BUILT, || {
        let repo = repo();
        let source = repo.root().join("example-tools/url/tool.js");
        build_qjs_component(&repo, &source, &out_dir().join("url-qjs.wasm"))
    })
}

/// A manager with the component at `path` as module `name`, granted HTTP
/// to `allow`, under `limits`.
fn manager(path: &Path, name: &str, allow: &[String], limits: Limits) -> ToolManager {
    let module = WasmModule::from_file(caching_runtime(), path, Some(name), limits)
        .unwrap_or_else(|e| panic!("{} loads: {e}", path.display()));
    with_http(module, allow_only(allow))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

#[test]
fn javascript_fetch_reaches_only_the_granted_origin() {
    let server = TestServer::start([("/", Reply::text(200, "from the server"))]);
    let other = TestServer::start([("/", Reply::text(200, "elsewhere"))]);
    let m = manager(&js_fetch(), "js", &[server.origin()], Limits::default());
    let out = json_of(&call(
        &m,
        "js_js_fetch",
        json!({"url": server.url("/a"), "method": "POST", "body": "hi"}),
    ));
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], "from the server");
    assert_eq!(server.requests()[0].body, b"hi");

    let denied = call(&m, "js_js_fetch", json!({"url": other.url("/")}));
    assert!(
        denied.starts_with("Error: tool 'js_js_fetch' failed: fetch failed"),
        "{denied}"
    );
    assert!(
        denied.contains("toolhost refused HTTP: an HTTP request was denied"),
        "{denied}"
    );
    assert_eq!(other.connections(), 0);
}

#[test]
fn python_http_reaches_only_the_granted_origin() {
    let server = TestServer::start([("/", Reply::text(200, "py ok"))]);
    let other = TestServer::start([("/", Reply::text(200, "elsewhere"))]);
    let m = manager(&py_http(), "py", &[server.origin()], Limits::default());
    let out = json_of(&call(
        &m,
        "py_py_http_get",
        json!({"url": server.url("/x")}),
    ));
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], "py ok");
    let denied = call(&m, "py_py_http_get", json!({"url": other.url("/")}));
    assert!(denied.contains("HttpRequestDenied"), "{denied}");
    assert_eq!(other.connections(), 0);
}

fn qjs(limits: Limits) -> ToolManager {
    manager(&qjs_hostile(), "q", &[], limits)
}

#[test]
fn async_abi_components_run_under_the_same_limits() {
    // Time far beyond what the default fuel takes even on a slow, loaded
    // machine, so that the spin ends by fuel and never by time.
    let limits = Limits {
        timeout_ms: 20_000,
        memory_mib: 32,
        ..Limits::default()
    };
    let m = qjs(limits);
    assert_eq!(call(&m, "q_qjs_echo", json!({"text": "héllo"})), "héllo");
    assert_eq!(
        call(&m, "q_qjs_throw", json!({})),
        "Error: tool 'q_qjs_throw' failed: Error: thrown on purpose"
    );
    let spin = call(&m, "q_qjs_spin", json!({}));
    assert_eq!(
        spin,
        "Error: tool 'q_qjs_spin' ran out of fuel (limit 1000000000)."
    );
    let plenty = qjs(Limits {
        fuel: 1 << 44,
        timeout_ms: 10_000,
        ..limits
    });
    let alloc = call(&plenty, "q_qjs_alloc", json!({}));
    assert!(
        alloc.starts_with("Error: tool 'q_qjs_alloc'") && alloc.contains("memory"),
        "{alloc}"
    );
    // A fault leaves nothing behind: the next call is served as ever.
    assert_eq!(call(&m, "q_qjs_echo", json!({"text": "again"})), "again");

    // Time, not fuel, when fuel is plentiful.
    let m = qjs(Limits {
        fuel: 1 << 48,
        timeout_ms: 300,
        ..limits
    });
    assert_eq!(
        call(&m, "q_qjs_spin", json!({})),
        "Error: tool 'q_qjs_spin' exceeded its time limit of 300 ms."
    );
}

#[test]
fn the_url_example_loads_and_answers_when_built_with_quickjs() {
    let m = manager(&qjs_url(), "url", &[], Limits::default());
    let names: Vec<String> = m.names();
    assert!(names.contains(&"url_parse".to_string()), "{names:?}");
    let encoded = call(&m, "url_encode", json!({"text": "a b&c/é"}));
    assert_eq!(encoded, "a%20b%26c%2F%C3%A9");
    // QuickJS has no WHATWG `URL`: the example says so as its own error.
    let parsed = call(&m, "url_parse", json!({"url": "https://example.com/"}));
    assert!(
        parsed.starts_with("Error: tool 'url_parse' failed: "),
        "{parsed}"
    );
}

/// The Rust guest built against WASIp3 (`tests/guests/guest-p3`: async
/// exports, `wasi:clocks` and `wasi:http` 0.3) as module `p`.
fn p3(allow: &[String], limits: Limits) -> ToolManager {
    manager(&crate::common::guest("guest-p3"), "p", allow, limits)
}

#[test]
fn a_wasip3_component_runs_under_the_same_limits() {
    // Fuel far below what a second of spinning burns even on a slow,
    // loaded machine, so that the spin ends by fuel and never by time.
    let limits = Limits {
        timeout_ms: 1_000,
        fuel: 200_000_000,
        memory_mib: 16,
        ..Limits::default()
    };
    let m = p3(&[], limits);
    assert_eq!(call(&m, "p_p3_echo", json!({"text": "p3"})), "p3");
    assert_eq!(call(&m, "p_p3_sleep", json!({"ms": 20})), "slept");
    assert_eq!(
        call(&m, "p_p3_sleep", json!({"ms": 60_000})),
        "Error: tool 'p_p3_sleep' exceeded its time limit of 1000 ms."
    );
    assert_eq!(
        call(&m, "p_p3_spin", json!({})),
        "Error: tool 'p_p3_spin' ran out of fuel (limit 200000000)."
    );
    assert_eq!(
        call(&m, "p_p3_alloc", json!({})),
        "Error: tool 'p_p3_alloc' exceeded its memory limit of 16 MiB."
    );
    assert_eq!(call(&m, "p_p3_echo", json!({"text": "still"})), "still");

    // Captured output is bounded as for any module.
    let m = p3(
        &[],
        Limits {
            max_captured_bytes: 1_000,
            ..limits
        },
    );
    let (out, logs) = crate::common::logs_of(|| call(&m, "p_p3_print", json!({"lines": 100})));
    assert_eq!(out, "printed");
    let kept: Vec<&str> = logs.lines().filter(|l| l.contains("line 0")).collect();
    assert_eq!(kept.len(), 11, "{logs}");
    assert!(kept[0].contains("dropped_bytes=8300"), "{logs}");
}

#[test]
fn wasip3_http_is_decided_like_wasip2_http() {
    let server = TestServer::start([("/", Reply::text(200, "p3 body"))]);
    let other = TestServer::start([("/", Reply::text(200, "elsewhere"))]);
    let m = p3(&[server.origin()], Limits::default());
    let out = json_of(&call(&m, "p_p3_fetch", json!({"url": server.url("/p")})));
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], "p3 body");
    assert_eq!(server.requests()[0].path, "/p");
    let denied = call(&m, "p_p3_fetch", json!({"url": other.url("/")}));
    assert!(denied.contains("HttpRequestDenied"), "{denied}");
    assert!(
        denied.contains("toolhost refused HTTP: an HTTP request was denied"),
        "{denied}"
    );
    assert_eq!(other.connections(), 0);
}

/// The component at `path` loaded as module `name` with default limits.
fn plain_module(path: &Path, name: &str) -> WasmModule {
    WasmModule::from_file(caching_runtime(), path, Some(name), Limits::default())
        .unwrap_or_else(|e| panic!("{} loads: {e}", path.display()))
}

#[test]
fn a_python_component_with_plain_exports_serves_each_function() {
    let module = plain_module(&py_plain(), "py");
    let mut names: Vec<String> = module.infos().into_iter().map(|i| i.name).collect();
    names.sort();
    assert_eq!(names, ["py_greet", "py_mean", "py_strings_upper"]);
    // componentize-py's own initialization hook is not the author's tool.
    let left: Vec<&str> = module
        .left_out()
        .iter()
        .map(|l| l.function.as_str())
        .collect();
    assert_eq!(left, ["exports#init"]);
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    assert_eq!(
        call(&manager, "py_mean", json!({"values": [1, 2, 3.5]})),
        r#"{"count":3,"mean":2.1666666666666665}"#
    );
    assert_eq!(
        call(&manager, "py_mean", json!({"values": []})),
        "Error: tool 'py_mean' failed: no values given"
    );
    assert_eq!(
        call(&manager, "py_greet", json!({"name": "ada"})),
        "hello ada"
    );
    assert_eq!(
        call(&manager, "py_greet", json!({"name": "ada", "times": 2})),
        "hello ada hello ada"
    );
    assert_eq!(
        call(&manager, "py_greet", json!({"name": "ada", "times": 256})),
        "Error: tool 'py_greet' was given invalid arguments: field 'times': expected an integer from 0 to 255 (u8), got integer 256"
    );
    assert_eq!(
        call(&manager, "py_strings_upper", json!({"s": "abc"})),
        "ABC"
    );
}

#[test]
fn a_javascript_component_with_plain_exports_serves_each_function() {
    let module = plain_module(&js_plain(), "js");
    let mut names: Vec<String> = module.infos().into_iter().map(|i| i.name).collect();
    names.sort();
    assert_eq!(names, ["js_convert", "js_hosts_host-of", "js_total"]);
    assert!(module.left_out().is_empty());
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    let reading = json_of(&call(
        &manager,
        "js_convert",
        json!({"r": {"value": 100, "unit": "celsius"}, "to": "fahrenheit"}),
    ));
    assert_eq!(reading, json!({"value": 212.0, "unit": "fahrenheit"}));
    // s64 values past 2^53 reach JavaScript as BigInts, whole.
    assert_eq!(
        call(
            &manager,
            "js_total",
            json!({"values": [9007199254740993i64, 1]})
        ),
        "9007199254740994"
    );
    assert_eq!(
        call(
            &manager,
            "js_hosts_host-of",
            json!({"url": "https://a.example:8080/x"})
        ),
        "a.example:8080"
    );
    assert_eq!(
        call(&manager, "js_hosts_host-of", json!({"url": "nope"})),
        "Error: tool 'js_hosts_host-of' failed: not a URL: nope"
    );
}
