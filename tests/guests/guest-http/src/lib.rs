//! Test guest for outbound HTTP through wasi:http 0.2 (the `wasi` crate):
//!
//! - `http_request` sends one request and reports the status, the headers
//!   sent and received, and the body;
//! - `http_many` sends one GET per URL, one after another or all at once;
//! - `http_env` lists the environment variables the guest sees.
//!
//! A failure is `http error: <name>`, `<name>` being the WIT name of the
//! wasi:http `error-code` case, followed by ` (<payload>)` when it has one.

use std::collections::BTreeMap;
use std::fmt::{self, Debug};

use serde::Deserialize;
use toolhost_guest::JsonSchema;
use toolhost_guest::serde_json::{Map, Value, json};
use wasi::http::outgoing_handler;
use wasi::http::types::{
    self, ErrorCode, Fields, FutureIncomingResponse, IncomingResponse, Method, OutgoingBody,
    OutgoingRequest, Scheme,
};
use wasi::io::streams::{InputStream, StreamError};

/// The most bytes one `blocking-write-and-flush` takes.
const WRITE_CHUNK: usize = 4096;

/// The most bytes asked of one `blocking-read`.
const READ_CHUNK: u64 = 64 * 1024;

/// Sends one HTTP request and returns {"status", "headers", "body",
/// "sent_headers"}.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpRequest {
    /// The URL, e.g. "http://127.0.0.1:8080/path?q=1".
    url: String,
    /// The method (default "GET").
    #[serde(default)]
    method: Option<String>,
    /// Request headers, name to value.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// The request body.
    #[serde(default)]
    body: Option<String>,
    /// Sends this many 'x' bytes as the body instead of `body`.
    #[serde(default)]
    body_bytes: Option<u64>,
    /// Whether to read the response body (default true).
    #[serde(default = "yes")]
    read_body: bool,
}

fn yes() -> bool {
    true
}

fn http_request(args: HttpRequest) -> Result<Value, Failure> {
    let target = Target::parse(&args.url)?;
    let body = match (args.body_bytes, args.body) {
        (Some(n), _) => Some(Body::Repeat(n)),
        (None, Some(text)) => Some(Body::Bytes(text.into_bytes())),
        (None, None) => None,
    };
    let method = args.method.as_deref().map_or(Method::Get, method);
    let request = build(&target, &method, &args.headers)?;
    // Read back before `handle`; the headers (a child of the request) are
    // dropped first.
    let sent_headers = pairs(request.headers().entries());
    let outgoing = match body {
        Some(_) => Some(
            request
                .body()
                .map_err(|()| refused("outgoing-request.body"))?,
        ),
        None => None,
    };
    let future = outgoing_handler::handle(request, None).map_err(Failure::Code)?;
    if let (Some(outgoing), Some(body)) = (outgoing, body) {
        send_body(outgoing, &body)?;
    }
    let response = wait(&future)?;
    let status = response.status();
    let headers = pairs(response.headers().entries());
    let body = if args.read_body {
        read_all(&response)?
    } else {
        Vec::new()
    };
    Ok(json!({
        "status": status,
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
        "sent_headers": sent_headers,
    }))
}

/// Sends one GET per URL and returns, for each, {"status", "bytes"} (the
/// body's length) or {"error": the error-code name}.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpMany {
    /// The URLs to get.
    urls: Vec<String>,
    /// Sends every request before waiting for any response (default false:
    /// one after another).
    #[serde(default)]
    concurrent: bool,
    /// Answers with an error (the same JSON as its text) if any request
    /// failed (default false).
    #[serde(default)]
    fail_on_error: bool,
}

fn http_many(args: HttpMany) -> Result<Value, Failure> {
    let targets = args
        .urls
        .iter()
        .map(|url| Target::parse(url))
        .collect::<Result<Vec<_>, _>>()?;
    let send = |target: &Target| {
        let request = build(target, &Method::Get, &BTreeMap::new())?;
        outgoing_handler::handle(request, None).map_err(Failure::Code)
    };
    let receive = |future: Result<FutureIncomingResponse, Failure>| {
        let outcome = future.and_then(|future| {
            let response = wait(&future)?;
            let bytes = read_all(&response)?.len();
            Ok(json!({"status": response.status(), "bytes": bytes}))
        });
        outcome.unwrap_or_else(|failure| json!({"error": failure.name()}))
    };
    let results = if args.concurrent {
        let futures: Vec<_> = targets.iter().map(send).collect();
        futures.into_iter().map(receive).collect()
    } else {
        targets.iter().map(|target| receive(send(target))).collect()
    };
    let results = Value::Array(results);
    if args.fail_on_error && results.to_string().contains("\"error\"") {
        return Err(Failure::Internal(results.to_string()));
    }
    Ok(results)
}

/// Returns the environment variables this module sees, as a JSON object.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpEnv {}

fn http_env(_: HttpEnv) -> Result<Value, Failure> {
    let vars: Map<String, Value> = std::env::vars()
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    Ok(Value::Object(vars))
}

toolhost_guest::export_tools!(http_request, http_many, http_env);

// ---------------------------------------------------------------- requests

/// A URL split into what an `outgoing-request` takes.
struct Target {
    scheme: Scheme,
    authority: String,
    path_with_query: String,
}

impl Target {
    /// Splits `scheme://authority/path?query` (any fragment dropped); other
    /// schemes than http and https are passed on for the host to judge.
    fn parse(url: &str) -> Result<Target, Failure> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| Failure::BadUrl(url.to_owned()))?;
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let path_with_query = match path {
            "" => "/".to_owned(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_owned(),
        };
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            _ => Scheme::Other(scheme.to_owned()),
        };
        Ok(Target {
            scheme,
            authority: authority.to_owned(),
            path_with_query,
        })
    }
}

/// The method named `name` (standard names are upper case).
fn method(name: &str) -> Method {
    match name {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "CONNECT" => Method::Connect,
        "OPTIONS" => Method::Options,
        "TRACE" => Method::Trace,
        "PATCH" => Method::Patch,
        other => Method::Other(other.to_owned()),
    }
}

/// An `outgoing-request` for `target` with `headers`.
fn build(
    target: &Target,
    method: &Method,
    headers: &BTreeMap<String, String>,
) -> Result<OutgoingRequest, Failure> {
    let fields = Fields::new();
    for (name, value) in headers {
        fields
            .set(name, &[value.clone().into_bytes()])
            .map_err(|_| Failure::Header(name.clone()))?;
    }
    let request = OutgoingRequest::new(fields);
    request
        .set_method(method)
        .map_err(|()| refused("set-method"))?;
    request
        .set_scheme(Some(&target.scheme))
        .map_err(|()| refused("set-scheme"))?;
    request
        .set_authority(Some(&target.authority))
        .map_err(|()| refused("set-authority"))?;
    request
        .set_path_with_query(Some(&target.path_with_query))
        .map_err(|()| refused("set-path-with-query"))?;
    Ok(request)
}

/// A request body.
enum Body {
    Bytes(Vec<u8>),
    /// This many 'x' bytes.
    Repeat(u64),
}

/// Writes `body` into `outgoing` and finishes it.
fn send_body(outgoing: OutgoingBody, body: &Body) -> Result<(), Failure> {
    let stream = outgoing
        .write()
        .map_err(|()| refused("outgoing-body.write"))?;
    let write = |chunk: &[u8]| {
        stream
            .blocking_write_and_flush(chunk)
            .map_err(Failure::from)
    };
    match body {
        Body::Bytes(bytes) => bytes.chunks(WRITE_CHUNK).try_for_each(write)?,
        Body::Repeat(count) => {
            let chunk = [b'x'; WRITE_CHUNK];
            let mut left = *count;
            while left > 0 {
                let n = left.min(WRITE_CHUNK as u64) as usize;
                write(&chunk[..n])?;
                left -= n as u64;
            }
        }
    }
    drop(stream);
    OutgoingBody::finish(outgoing, None).map_err(Failure::Code)
}

// ---------------------------------------------------------------- responses

/// Blocks until the response (or its error) arrives.
fn wait(future: &FutureIncomingResponse) -> Result<IncomingResponse, Failure> {
    future.subscribe().block();
    match future.get() {
        Some(Ok(Ok(response))) => Ok(response),
        Some(Ok(Err(code))) => Err(Failure::Code(code)),
        Some(Err(())) => Err(Failure::Internal("response already taken".to_owned())),
        None => Err(Failure::Internal("response not ready".to_owned())),
    }
}

/// The whole body of `response`, read until its stream closes.
fn read_all(response: &IncomingResponse) -> Result<Vec<u8>, Failure> {
    let body = response
        .consume()
        .map_err(|()| refused("incoming-response.consume"))?;
    let stream: InputStream = body
        .stream()
        .map_err(|()| refused("incoming-body.stream"))?;
    let mut bytes = Vec::new();
    let outcome = loop {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break Ok(bytes),
            Err(error) => break Err(Failure::from(error)),
        }
    };
    // The stream is a child of the body: it goes first.
    drop(stream);
    drop(body);
    outcome
}

/// Header entries as `[name, value]` pairs, values decoded lossily.
fn pairs(entries: Vec<(String, Vec<u8>)>) -> Vec<[String; 2]> {
    entries
        .into_iter()
        .map(|(name, value)| [name, String::from_utf8_lossy(&value).into_owned()])
        .collect()
}

// ---------------------------------------------------------------- errors

/// Why a request failed.
enum Failure {
    /// The host's wasi:http error.
    Code(ErrorCode),
    /// A body stream failed without an error code (its debug text).
    Stream(String),
    /// The host refused to set this header.
    Header(String),
    /// The host refused a step, or broke the protocol.
    Internal(String),
    /// A URL without `://`.
    BadUrl(String),
}

impl Failure {
    /// Its name in `http_many`'s `{"error": ...}`.
    fn name(&self) -> &'static str {
        match self {
            Failure::Code(code) => describe(code).0,
            Failure::Stream(_) => "body stream failed",
            Failure::Header(_) => "header refused",
            Failure::Internal(_) => "internal-error",
            Failure::BadUrl(_) => "bad url",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Code(code) => match describe(code) {
                (name, Some(detail)) => write!(f, "http error: {name} ({detail})"),
                (name, None) => write!(f, "http error: {name}"),
            },
            Failure::Stream(debug) => write!(f, "http error: body stream failed ({debug})"),
            Failure::Header(name) => write!(f, "http error: header {name} refused"),
            Failure::Internal(what) => write!(f, "http error: internal-error ({what})"),
            Failure::BadUrl(url) => write!(f, "bad url: {url}"),
        }
    }
}

/// A failed write or read of a body stream, through its error code if the
/// host gives one.
impl From<StreamError> for Failure {
    fn from(error: StreamError) -> Failure {
        match error {
            StreamError::Closed => Failure::Stream("closed".to_owned()),
            StreamError::LastOperationFailed(error) => match types::http_error_code(&error) {
                Some(code) => Failure::Code(code),
                None => Failure::Stream(error.to_debug_string()),
            },
        }
    }
}

/// A request step the host refused (a `result<_, ()>` error).
fn refused(step: &str) -> Failure {
    Failure::Internal(format!("{step} refused"))
}

/// The WIT name of `code`'s case and its payload in Debug form, if any.
fn describe(code: &ErrorCode) -> (&'static str, Option<String>) {
    fn debug(payload: &impl Debug) -> Option<String> {
        Some(format!("{payload:?}"))
    }
    fn some(payload: &Option<impl Debug>) -> Option<String> {
        payload.as_ref().and_then(debug)
    }
    match code {
        ErrorCode::DnsTimeout => ("DNS-timeout", None),
        ErrorCode::DnsError(p) => ("DNS-error", debug(p)),
        ErrorCode::DestinationNotFound => ("destination-not-found", None),
        ErrorCode::DestinationUnavailable => ("destination-unavailable", None),
        ErrorCode::DestinationIpProhibited => ("destination-IP-prohibited", None),
        ErrorCode::DestinationIpUnroutable => ("destination-IP-unroutable", None),
        ErrorCode::ConnectionRefused => ("connection-refused", None),
        ErrorCode::ConnectionTerminated => ("connection-terminated", None),
        ErrorCode::ConnectionTimeout => ("connection-timeout", None),
        ErrorCode::ConnectionReadTimeout => ("connection-read-timeout", None),
        ErrorCode::ConnectionWriteTimeout => ("connection-write-timeout", None),
        ErrorCode::ConnectionLimitReached => ("connection-limit-reached", None),
        ErrorCode::TlsProtocolError => ("TLS-protocol-error", None),
        ErrorCode::TlsCertificateError => ("TLS-certificate-error", None),
        ErrorCode::TlsAlertReceived(p) => ("TLS-alert-received", debug(p)),
        ErrorCode::HttpRequestDenied => ("HTTP-request-denied", None),
        ErrorCode::HttpRequestLengthRequired => ("HTTP-request-length-required", None),
        ErrorCode::HttpRequestBodySize(n) => ("HTTP-request-body-size", some(n)),
        ErrorCode::HttpRequestMethodInvalid => ("HTTP-request-method-invalid", None),
        ErrorCode::HttpRequestUriInvalid => ("HTTP-request-URI-invalid", None),
        ErrorCode::HttpRequestUriTooLong => ("HTTP-request-URI-too-long", None),
        ErrorCode::HttpRequestHeaderSectionSize(n) => ("HTTP-request-header-section-size", some(n)),
        ErrorCode::HttpRequestHeaderSize(p) => ("HTTP-request-header-size", some(p)),
        ErrorCode::HttpRequestTrailerSectionSize(n) => {
            ("HTTP-request-trailer-section-size", some(n))
        }
        ErrorCode::HttpRequestTrailerSize(p) => ("HTTP-request-trailer-size", debug(p)),
        ErrorCode::HttpResponseIncomplete => ("HTTP-response-incomplete", None),
        ErrorCode::HttpResponseHeaderSectionSize(n) => {
            ("HTTP-response-header-section-size", some(n))
        }
        ErrorCode::HttpResponseHeaderSize(p) => ("HTTP-response-header-size", debug(p)),
        ErrorCode::HttpResponseBodySize(n) => ("HTTP-response-body-size", some(n)),
        ErrorCode::HttpResponseTrailerSectionSize(n) => {
            ("HTTP-response-trailer-section-size", some(n))
        }
        ErrorCode::HttpResponseTrailerSize(p) => ("HTTP-response-trailer-size", debug(p)),
        ErrorCode::HttpResponseTransferCoding(s) => ("HTTP-response-transfer-coding", some(s)),
        ErrorCode::HttpResponseContentCoding(s) => ("HTTP-response-content-coding", some(s)),
        ErrorCode::HttpResponseTimeout => ("HTTP-response-timeout", None),
        ErrorCode::HttpUpgradeFailed => ("HTTP-upgrade-failed", None),
        ErrorCode::HttpProtocolError => ("HTTP-protocol-error", None),
        ErrorCode::LoopDetected => ("loop-detected", None),
        ErrorCode::ConfigurationError => ("configuration-error", None),
        ErrorCode::InternalError(s) => ("internal-error", some(s)),
    }
}
