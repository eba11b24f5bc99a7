//! The `wasi:http` state of one call, and the hook every request a guest
//! makes goes through ([`HttpCall`]'s `send_request`).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use http::header::{CONTENT_LENGTH, HeaderMap};
use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks};

use super::body::{RequestBody, ResponseBody};
use super::connect;
use super::shared::{HttpCallParts, Shared};
use crate::policy::{HttpAllow, limit_key, to_usize};

/// The `wasi:http` part of a call's store: wasmtime-wasi-http's context
/// (with the call's header size limit) and toolhost's hooks.
pub(in crate::sandbox) struct CallHttp {
    pub(in crate::sandbox) ctx: WasiHttpCtx,
    pub(in crate::sandbox) hooks: HttpCall,
}

impl CallHttp {
    /// The HTTP state of one call, made of `call`'s module, access,
    /// limits, resolver and deadline.
    pub(in crate::sandbox) fn new(call: HttpCallParts) -> Self {
        let mut ctx = WasiHttpCtx::new();
        // wasmtime counts the in-memory size of fields, which is larger
        // than their bytes on the wire; twice the wire limit leaves room.
        ctx.set_field_size_limit(to_usize(call.limits.max_http_fields_size).saturating_mul(2));
        let shared = Shared::new(call);
        Self {
            ctx,
            hooks: HttpCall {
                shared: Arc::new(shared),
            },
        }
    }

    /// Starts the count of requests anew, for a call in a store made
    /// before it (or kept from an earlier call).
    pub(in crate::sandbox) fn begin_call(&self) {
        self.hooks.shared.begin_call();
    }

    /// The first HTTP denial or limit of the call, for its error text.
    pub(in crate::sandbox) fn problem(&self) -> Option<String> {
        self.hooks.shared.problem()
    }
}

/// toolhost's `wasi:http` hooks for one call.
pub(in crate::sandbox) struct HttpCall {
    shared: Arc<Shared>,
}

/// What `send_request` gives back: the response, and the future driving
/// its connection.
type Sent = (
    Response<WasiBody>,
    Box<dyn Future<Output = Result<(), Error>> + Send>,
);

impl WasiHttpHooks for HttpCall {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Result<Sent, Error>> + Send> {
        let shared = Arc::clone(&self.shared);
        Box::new(async move { send(shared, request, options.unwrap_or_default()).await })
    }
}

/// Sends `request` if the grant and the limits allow it.
async fn send(
    shared: Arc<Shared>,
    request: Request<WasiBody>,
    options: RequestOptions,
) -> Result<Sent, Error> {
    let entry = shared.admit(&request)?;
    let slot = shared.take_slot()?;
    let (mut parts, body) = request.into_parts();
    shared
        .check_fields(&parts.headers, "request")
        .map_err(|size| Error::HttpRequestHeaderSectionSize(Some(size)))?;
    let body_limit = shared.limits().max_http_request_body_bytes;
    if content_length(&parts.headers).is_some_and(|len| len > body_limit) {
        shared.note_request_too_large(body_limit);
        return Err(Error::HttpRequestBodySize(Some(body_limit)));
    }
    shared.add_secrets(&entry, &mut parts.headers);
    parts.uri = origin_form(&parts.uri);
    let body = RequestBody::new(body, body_limit);
    let exceeded = body.exceeded();
    let request = Request::from_parts(parts, body);

    let connect_limit = limited(
        shared.limits().http_connect_timeout(),
        options.connect_timeout,
    );
    let until = shared.deadline.get();
    let by_limit = bound_by_limit(connect_limit, until);
    let connected = tokio::time::timeout_at(
        earliest(connect_limit, until).into(),
        connect(&shared, &entry),
    )
    .await;
    let (mut sender, connection) = match connected {
        Ok(result) => result?,
        Err(_) => {
            if by_limit {
                shared.note_timeout(limit_key::http_connect_timeout_ms, connect_limit);
            }
            return Err(Error::ConnectionTimeout);
        }
    };
    let connection = wasmtime_wasi::runtime::spawn(connection);

    let first_byte_limit = limited(
        shared.limits().http_first_byte_timeout(),
        options.first_byte_timeout,
    );
    let by_limit = bound_by_limit(first_byte_limit, until);
    let answered = tokio::time::timeout_at(
        earliest(first_byte_limit, until).into(),
        sender.send_request(request),
    )
    .await;
    let response = match answered {
        Err(_) => {
            if by_limit {
                shared.note_timeout(limit_key::http_first_byte_timeout_ms, first_byte_limit);
            }
            return Err(Error::ConnectionReadTimeout);
        }
        Ok(Err(_)) if exceeded.load(Ordering::Relaxed) => {
            shared.note_request_too_large(body_limit);
            return Err(Error::HttpRequestBodySize(Some(body_limit)));
        }
        Ok(Err(error)) if error.is_parse_too_large() => {
            shared.note(format!(
                "an HTTP response had more header fields than {} ({}) or more \
                 header bytes than {} ({})",
                limit_key::max_http_fields,
                shared.limits().max_http_fields,
                limit_key::max_http_fields_size,
                shared.limits().max_http_fields_size
            ));
            return Err(Error::HttpResponseHeaderSectionSize(None));
        }
        Ok(Err(error)) => return Err(Error::Hyper(error)),
        Ok(Ok(response)) => response,
    };
    shared
        .check_fields(response.headers(), "response")
        .map_err(|size| Error::HttpResponseHeaderSectionSize(Some(size)))?;
    let response = response.map(|incoming| {
        ResponseBody::new(
            incoming,
            Arc::clone(&shared),
            slot,
            options.between_bytes_timeout,
        )
        .boxed_unsync()
    });
    let connection: Box<dyn Future<Output = Result<(), Error>> + Send> =
        Box::new(async move { connection.await.map_err(Error::Hyper) });
    Ok((response, connection))
}

/// A connection to `entry`'s origin, with HTTP/1.1 spoken over it.
async fn connect(
    shared: &Shared,
    entry: &HttpAllow,
) -> Result<
    (
        hyper::client::conn::http1::SendRequest<RequestBody>,
        hyper::client::conn::http1::Connection<TokioIo<connect::Stream>, RequestBody>,
    ),
    Error,
> {
    let stream = connect::open(shared, entry).await?;
    let mut builder = hyper::client::conn::http1::Builder::new();
    builder
        .max_headers(to_usize(shared.limits().max_http_fields))
        .max_buf_size(to_usize(shared.limits().max_http_fields_size).max(8192));
    builder
        .handshake(TokioIo::new(stream))
        .await
        .map_err(Error::Hyper)
}

/// The limit `ours`, or the guest's own if that is shorter.
fn limited(ours: Duration, guest: Option<Duration>) -> Duration {
    guest.map_or(ours, |guest| guest.min(ours))
}

/// Whether `timeout` from now ends before `until` (so that a timeout is the
/// limit's, not the call's deadline).
fn bound_by_limit(timeout: Duration, until: Instant) -> bool {
    Instant::now()
        .checked_add(timeout)
        .is_some_and(|at| at < until)
}

/// `timeout` from now, or `until` if that is sooner.
fn earliest(timeout: Duration, until: Instant) -> Instant {
    Instant::now()
        .checked_add(timeout)
        .map_or(until, |at| at.min(until))
}

/// The value of a `Content-Length` header, if there is a valid one.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `uri` as it goes on the wire to an origin server: path and query only.
fn origin_form(uri: &Uri) -> Uri {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    Uri::builder()
        .path_and_query(path)
        .build()
        .unwrap_or_else(|_| Uri::from_static("/"))
}
