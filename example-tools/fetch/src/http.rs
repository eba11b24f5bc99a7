//! One GET through wasi:http: the response's status and headers first, then
//! a bounded read of its body.

use wasi::http::outgoing_handler;
use wasi::http::types::{
    self, ErrorCode, Fields, IncomingResponse, Method, OutgoingRequest, Scheme,
};
use wasi::io::streams::StreamError;

use crate::url::Url;

/// The most bytes asked of one read.
const READ_CHUNK: usize = 16 * 1024;

/// The request headers, each optional: a host that refuses one still
/// gets the request.
const HEADERS: [(&str, &str); 3] = [
    (
        "user-agent",
        concat!("toolhost-fetch/", env!("CARGO_PKG_VERSION")),
    ),
    (
        "accept",
        "text/html, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5",
    ),
    ("accept-encoding", "identity"),
];

/// Why a request failed.
#[derive(Debug)]
pub enum Failure {
    /// The host's wasi:http error.
    Code(ErrorCode),
    /// The body stream failed without an error code (its debug text).
    Stream(String),
    /// The host refused a step of the request: what could not be done.
    Refused(&'static str),
}

/// A response whose body is not read yet.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The first `Content-Type`.
    pub content_type: Option<String>,
    /// The first `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// The first `Location`.
    pub location: Option<String>,
    incoming: IncomingResponse,
}

/// The first at most `limit` bytes of a body.
pub struct Body {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// Whether the body is longer.
    pub truncated: bool,
}

/// Sends a GET for `url` and waits for the response's status and headers.
pub fn get(url: &Url) -> Result<Response, Failure> {
    let headers = Fields::new();
    for (name, value) in HEADERS {
        let _ = headers.set(name, &[value.as_bytes().to_vec()]);
    }
    let request = OutgoingRequest::new(headers);
    let scheme = if url.https {
        Scheme::Https
    } else {
        Scheme::Http
    };
    request
        .set_method(&Method::Get)
        .map_err(|()| Failure::Refused("set the method GET"))?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| Failure::Refused("set the URL's scheme"))?;
    request
        .set_authority(Some(&url.authority))
        .map_err(|()| Failure::Refused("set the URL's host and port"))?;
    request
        .set_path_with_query(Some(&url.path_with_query))
        .map_err(|()| Failure::Refused("set the URL's path and query"))?;
    let future = outgoing_handler::handle(request, None).map_err(Failure::Code)?;
    future.subscribe().block();
    let incoming = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(Failure::Code(code)),
        Some(Err(())) | None => return Err(Failure::Refused("get the response")),
    };
    // The headers are a child of the response: read them and let them go.
    let (content_type, content_encoding, location) = {
        let headers = incoming.headers();
        let first = |name: &str| {
            let values = headers.get(name);
            let value = values.first()?;
            Some(String::from_utf8_lossy(value).trim().to_owned())
        };
        (
            first("content-type"),
            first("content-encoding"),
            first("location"),
        )
    };
    Ok(Response {
        status: incoming.status(),
        content_type,
        content_encoding,
        location,
        incoming,
    })
}

impl Response {
    /// Reads the body up to `limit` bytes (and one more, to tell whether it
    /// is longer).
    pub fn read_body(self, limit: usize) -> Result<Body, Failure> {
        let body = self
            .incoming
            .consume()
            .map_err(|()| Failure::Refused("read the response body"))?;
        let stream = body
            .stream()
            .map_err(|()| Failure::Refused("read the response body"))?;
        let mut bytes = Vec::with_capacity(limit.min(READ_CHUNK) + 1);
        let outcome = loop {
            let wanted = (limit + 1 - bytes.len()).min(READ_CHUNK);
            if wanted == 0 {
                break Ok(());
            }
            match stream.blocking_read(wanted as u64) {
                Ok(chunk) => bytes.extend_from_slice(&chunk[..chunk.len().min(wanted)]),
                Err(StreamError::Closed) => break Ok(()),
                Err(StreamError::LastOperationFailed(error)) => {
                    break Err(match types::http_error_code(&error) {
                        Some(code) => Failure::Code(code),
                        None => Failure::Stream(error.to_debug_string()),
                    });
                }
            }
        };
        // The stream is a child of the body: it goes first.
        drop(stream);
        drop(body);
        outcome?;
        let truncated = bytes.len() > limit;
        bytes.truncate(limit);
        Ok(Body { bytes, truncated })
    }
}
