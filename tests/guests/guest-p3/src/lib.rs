//! Test guest built against WASIp3: both exports of toolhost:tool are lifted
//! with the component-model async ABI (`async func` in wit/world.wit), and
//! the tools import WASIp3 interfaces at the versions wasmtime 48 provides
//! (wasi:clocks@0.3.0, wasi:http@0.3.0):
//!
//! - `p3_echo` returns `text`;
//! - `p3_sleep` awaits `wasi:clocks/monotonic-clock.wait-for` (an async
//!   import: the task blocks and the host wakes it);
//! - `p3_spin` loops without end;
//! - `p3_alloc` allocates 1 MiB blocks until an allocation fails (and
//!   aborts);
//! - `p3_fetch` sends a GET through `wasi:http/client.send` and reads the
//!   response body from its `stream<u8>`.

use serde_json::{Map, Value, json};

use wasi::clocks::monotonic_clock;
use wasi::http::client;
use wasi::http::types::{ErrorCode, Fields, Method, Request, Response, Scheme};

wit_bindgen::generate!({
    path: "wit",
    world: "guest-p3",
    generate_all,
});

struct GuestP3;

export!(GuestP3);

impl Guest for GuestP3 {
    async fn tool_info() -> String {
        tool_info().to_string()
    }

    async fn call(name: String, arguments: String) -> Result<String, String> {
        let args: Map<String, Value> =
            serde_json::from_str(&arguments).map_err(|e| format!("bad arguments: {e}"))?;
        match name.as_str() {
            "p3_echo" => Ok(string_arg(&args, "text")?.to_string()),
            "p3_sleep" => {
                let ms = args
                    .get("ms")
                    .and_then(Value::as_u64)
                    .ok_or("`ms` must be a non-negative integer")?;
                monotonic_clock::wait_for(ms.saturating_mul(1_000_000)).await;
                Ok("slept".to_string())
            }
            "p3_spin" => spin(),
            "p3_alloc" => alloc(),
            "p3_fetch" => fetch(string_arg(&args, "url")?).await,
            "p3_print" => {
                let lines = args
                    .get("lines")
                    .and_then(Value::as_u64)
                    .ok_or("`lines` must be a non-negative integer")?;
                for i in 0..lines {
                    println!("line {i:06} {}", "x".repeat(80));
                }
                Ok("printed".to_string())
            }
            other => Err(format!("unknown tool: {other}")),
        }
    }
}

/// The JSON array of OpenAI function-calling schemas.
fn tool_info() -> Value {
    let tool = |name: &str, description: &str, properties: Value| {
        let required: Vec<&String> = properties
            .as_object()
            .map_or(Vec::new(), |p| p.keys().collect());
        json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                },
            },
        })
    };
    json!([
        tool(
            "p3_echo",
            "Returns `text`.",
            json!({"text": {"type": "string", "description": "The text to return."}}),
        ),
        tool(
            "p3_sleep",
            "Waits `ms` milliseconds on the WASIp3 monotonic clock, then returns \"slept\".",
            json!({"ms": {"type": "integer", "minimum": 0, "description": "Milliseconds to wait."}}),
        ),
        tool("p3_spin", "Loops without end.", json!({})),
        tool(
            "p3_alloc",
            "Allocates 1 MiB blocks until an allocation fails.",
            json!({}),
        ),
        tool(
            "p3_print",
            "Prints `lines` lines of 93 bytes (with the newline) to stdout, then returns \"printed\".",
            json!({"lines": {"type": "integer", "minimum": 0, "description": "How many lines."}}),
        ),
        tool(
            "p3_fetch",
            "GETs `url` through wasi:http 0.3 and returns {\"status\", \"body\"}.",
            json!({"url": {"type": "string", "description": "An http:// or https:// URL."}}),
        ),
    ])
}

fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{key}` must be a string"))
}

#[allow(clippy::empty_loop)]
fn spin() -> Result<String, String> {
    loop {}
}

/// Holds 1 MiB blocks until one cannot be had: the failed allocation aborts
/// (a trap), which the host reports as its memory limit.
fn alloc() -> Result<String, String> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1024 * 1024]);
        std::hint::black_box(&hoard);
    }
}

/// GETs `url` with `wasi:http/client.send` and returns {"status", "body"}.
async fn fetch(url: &str) -> Result<String, String> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        return Err("`url` must start with http:// or https://".to_string());
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };

    // No body, no trailers: the writer's drop sends the default `ok(none)`.
    let (trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
    drop(trailers_tx);
    let (request, _sent) = Request::new(Fields::new(), None, trailers_rx, None);
    request
        .set_method(&Method::Get)
        .map_err(|()| "set-method refused")?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| "set-scheme refused")?;
    request
        .set_authority(Some(authority))
        .map_err(|()| format!("set-authority refused: {authority}"))?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|()| format!("set-path-with-query refused: {path}"))?;

    let response = client::send(request).await.map_err(http_error)?;
    let status = response.get_status_code();
    let (done_tx, done_rx) = wit_future::new(|| Ok(()));
    drop(done_tx);
    let (body, trailers) = Response::consume_body(response, done_rx);
    let bytes = body.collect().await;
    trailers.await.map_err(http_error)?;
    Ok(json!({
        "status": status,
        "body": String::from_utf8_lossy(&bytes),
    })
    .to_string())
}

fn http_error(code: ErrorCode) -> String {
    format!("http error: {code:?}")
}
