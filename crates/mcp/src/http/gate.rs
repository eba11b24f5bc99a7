//! [`Gate`]: the checks every HTTP request passes before it is served.
//!
//! Every path: exactly one `Host`, and one the server answers to; an
//! `Origin`, if there is one, that is allowed. `/mcp` and `/metrics` also:
//! the bearer token (when one is set), then a place among the requests in
//! flight (held until the response has been sent or dropped), then the
//! whole body, within `max_request_bytes` and `body_timeout_ms`.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::MAX_HEAD_BYTES;
use super::authority::{Hosts, Origins};
use crate::arguments::take_arguments;

/// What the checks need.
pub(crate) struct Gate {
    pub token: Option<String>,
    pub requests: Arc<Semaphore>,
    pub hosts: Hosts,
    pub origins: Origins,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
}

/// Every path: the size of the head, then the `Host` and `Origin` checks.
pub(crate) async fn screen(
    State(gate): State<Arc<Gate>>,
    request: Request,
    next: Next,
) -> Response {
    if head_bytes(&request) > MAX_HEAD_BYTES {
        return closing(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "the request head is larger than 64 KiB\n",
        );
    }
    if let Err(refusal) = gate.check_host_and_origin(&request) {
        return refusal;
    }
    next.run(request).await
}

/// The size of `request`'s head as it was sent: request line and headers.
fn head_bytes(request: &Request) -> usize {
    let line = request.method().as_str().len() + request.uri().to_string().len() + 12;
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    line + headers + 2
}

/// `/mcp` and `/metrics`: the token, a place among the requests in flight,
/// and the body read whole.
pub(crate) async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(token) = &gate.token
        && !authorized(&request, token)
    {
        return unauthorized();
    }
    let Ok(place) = Arc::clone(&gate.requests).try_acquire_owned() else {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests in flight (serve.max_requests_in_flight); try again shortly\n",
        );
    };
    let request = match gate.read_body(request).await {
        Ok(request) => request,
        Err(refusal) => return refusal,
    };
    let ends_session = request.method() == Method::DELETE;
    let json_body = is_json(&request);
    let response = next.run(request).await;
    if ends_session && response.status() == StatusCode::ACCEPTED {
        // The session is gone: say so as clients expect (200 or 204).
        return StatusCode::NO_CONTENT.into_response();
    }
    if json_body && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // rmcp's answer to a JSON body that is not a JSON-RPC message.
        return parse_error();
    }
    response.map(|body| {
        Body::new(Held {
            body,
            _place: place,
        })
    })
}

impl Gate {
    /// 400 unless the request has exactly one `Host` (RFC 9112); 403 for a
    /// `Host` or an `Origin` not allowed.
    #[allow(clippy::result_large_err)]
    fn check_host_and_origin(&self, request: &Request) -> Result<(), Response> {
        let mut hosts = request.headers().get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(plain(
                StatusCode::BAD_REQUEST,
                "a request needs exactly one Host header\n",
            ));
        };
        if !host.to_str().is_ok_and(|h| self.hosts.allow(h)) {
            return Err(plain(
                StatusCode::FORBIDDEN,
                "Forbidden: this Host is not one the server answers to (serve.allowed_hosts)\n",
            ));
        }
        let mut origins = request.headers().get_all(header::ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => Ok(()),
            (Some(origin), None) if origin.to_str().is_ok_and(|o| self.origins.allow(o)) => Ok(()),
            _ => Err(plain(
                StatusCode::FORBIDDEN,
                "Forbidden: this Origin is not allowed (serve.allowed_origins)\n",
            )),
        }
    }

    /// The request with its body read whole: 413 past `max_body_bytes`
    /// (unread, when the length is declared), 408 when it does not arrive
    /// within `body_timeout` (and the connection is closed).
    #[allow(clippy::result_large_err)]
    async fn read_body(&self, request: Request) -> Result<Request, Response> {
        let (parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body_bytes as u64) {
            return Err(too_large());
        }
        let limited = Limited::new(body, self.max_body_bytes);
        match tokio::time::timeout(self.body_timeout, limited.collect()).await {
            Ok(Ok(collected)) => Ok(with_raw_arguments(parts, collected.to_bytes())),
            Ok(Err(error)) if error.is::<LengthLimitError>() => Err(too_large()),
            Ok(Err(_)) => Err(closing(
                StatusCode::BAD_REQUEST,
                "the request body could not be read\n",
            )),
            Err(_) => Err(closing(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time (serve.body_timeout_ms)\n",
            )),
        }
    }
}

fn too_large() -> Response {
    closing(
        StatusCode::PAYLOAD_TOO_LARGE,
        "the request body is larger than serve.max_request_bytes\n",
    )
}

/// A plain-text answer.
fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, text).into_response()
}

/// A plain-text answer after which the connection is closed (the rest of
/// the body is never read).
fn closing(status: StatusCode, text: &'static str) -> Response {
    let mut response = plain(status, text);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The request of `parts` and `body`; a `tools/call`'s arguments taken out
/// of the body into its extensions, to reach the tool as they were written.
fn with_raw_arguments(mut parts: Parts, body: Bytes) -> Request {
    match take_arguments(&body) {
        Some(taken) => {
            parts.extensions.insert(taken.arguments);
            parts.headers.insert(
                header::CONTENT_LENGTH,
                HeaderValue::from(taken.message.len()),
            );
            Request::from_parts(parts, Body::from(taken.message))
        }
        None => Request::from_parts(parts, Body::from(body)),
    }
}

/// Whether `request` says its body is JSON.
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// 400 with the JSON-RPC parse error.
fn parse_error() -> Response {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the request body is not a JSON-RPC message"}}"#;
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// A response body that holds its request's place among the requests in
/// flight until it is dropped.
struct Held {
    body: Body,
    _place: OwnedSemaphorePermit,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Whether `request` carries `Authorization: Bearer <token>` (compared in
/// constant time).
fn authorized(request: &Request, token: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

fn unauthorized() -> Response {
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(
            header::WWW_AUTHENTICATE,
            "Bearer realm=\"toolhost\", error=\"invalid_token\"",
        )
        .body(Body::from("a valid bearer token is required\n"))
        .unwrap_or_else(|_| StatusCode::UNAUTHORIZED.into_response())
}
