//! The `wasi:http` state of one call, and the hook every request a guest
//! makes goes through ([`HttpCall`]'s `send_request`).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::header::{CONTENT_LENGTH, HeaderMap, HeaderValue};
use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks};

use super::body::{RequestBody, ResponseBody};
use super::connect;
use super::problem::FirstProblem;
use super::tls::HttpClient;
use crate::policy::{Access, HttpAllow, Limits, RequestTarget, to_usize};
use crate::sandbox::deadline::Deadline;
use crate::sandbox::resolver::NameResolver;

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
        let concurrent = to_usize(call.limits.max_http_concurrent);
        let shared = Shared {
            module: call.module,
            access: call.access,
            client: call.client,
            limits: call.limits,
            resolver: call.resolver,
            deadline: call.deadline,
            lookups: call.lookups,
            in_flight: Arc::new(Semaphore::new(concurrent)),
            sent: AtomicU64::new(0),
            problem: FirstProblem::default(),
        };
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
        self.hooks.shared.sent.store(0, Ordering::Relaxed);
        self.hooks.shared.problem.clear();
    }

    /// The first HTTP denial or limit of the call, for its error text.
    pub(in crate::sandbox) fn problem(&self) -> Option<String> {
        self.hooks.shared.problem.get()
    }
}

/// What a call's HTTP state is made of.
pub(in crate::sandbox) struct HttpCallParts {
    pub module: Arc<str>,
    pub access: Arc<Access>,
    pub client: Option<Arc<HttpClient>>,
    pub limits: Limits,
    pub resolver: NameResolver,
    pub deadline: Deadline,
    pub lookups: Arc<Semaphore>,
}

/// toolhost's `wasi:http` hooks for one call.
pub(in crate::sandbox) struct HttpCall {
    shared: Arc<Shared>,
}

/// What every request of a call shares.
pub(super) struct Shared {
    pub(super) module: Arc<str>,
    access: Arc<Access>,
    pub(super) client: Option<Arc<HttpClient>>,
    limits: Limits,
    pub(super) resolver: NameResolver,
    pub(super) deadline: Deadline,
    pub(super) lookups: Arc<Semaphore>,
    /// Slots of requests in flight (`max_http_concurrent`).
    in_flight: Arc<Semaphore>,
    /// Requests made so far (`max_http_requests`).
    sent: AtomicU64,
    problem: FirstProblem,
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
        Box::new(async move { shared.send(request, options.unwrap_or_default()).await })
    }
}

impl Shared {
    /// Notes `text` as the call's HTTP problem.
    pub(super) fn note(&self, text: String) {
        self.problem.note(&self.module, text);
    }

    /// Sends `request` if the grant and the limits allow it.
    async fn send(
        self: Arc<Self>,
        request: Request<WasiBody>,
        options: RequestOptions,
    ) -> Result<Sent, Error> {
        let entry = self.admit(&request)?;
        let slot = self.take_slot()?;
        let (mut parts, body) = request.into_parts();
        self.check_fields(&parts.headers, "request")
            .map_err(|size| Error::HttpRequestHeaderSectionSize(Some(size)))?;
        let body_limit = self.limits.max_http_request_body_bytes;
        if content_length(&parts.headers).is_some_and(|len| len > body_limit) {
            self.note(format!(
                "an HTTP request body was larger than max_http_request_body_bytes ({body_limit})"
            ));
            return Err(Error::HttpRequestBodySize(Some(body_limit)));
        }
        self.add_secrets(&entry, &mut parts.headers);
        parts.uri = origin_form(&parts.uri);
        let body = RequestBody::new(body, body_limit);
        let exceeded = body.exceeded();
        let request = Request::from_parts(parts, body);

        let connect_limit = limited(self.limits.http_connect_timeout(), options.connect_timeout);
        let until = self.deadline.get();
        let by_limit = bound_by_limit(connect_limit, until);
        let connected =
            tokio::time::timeout_at(earliest(connect_limit, until).into(), self.connect(&entry))
                .await;
        let (mut sender, connection) = match connected {
            Ok(result) => result?,
            Err(_) => {
                if by_limit {
                    self.note_timeout("http_connect_timeout_ms", connect_limit);
                }
                return Err(Error::ConnectionTimeout);
            }
        };
        let connection = wasmtime_wasi::runtime::spawn(connection);

        let first_byte_limit = limited(
            self.limits.http_first_byte_timeout(),
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
                    self.note_timeout("http_first_byte_timeout_ms", first_byte_limit);
                }
                return Err(Error::ConnectionReadTimeout);
            }
            Ok(Err(_)) if exceeded.load(Ordering::Relaxed) => {
                self.note(format!(
                    "an HTTP request body was larger than max_http_request_body_bytes ({body_limit})"
                ));
                return Err(Error::HttpRequestBodySize(Some(body_limit)));
            }
            Ok(Err(error)) if error.is_parse_too_large() => {
                self.note(format!(
                    "an HTTP response had more header fields than max_http_fields ({}) or more \
                     header bytes than max_http_fields_size ({})",
                    self.limits.max_http_fields, self.limits.max_http_fields_size
                ));
                return Err(Error::HttpResponseHeaderSectionSize(None));
            }
            Ok(Err(error)) => return Err(Error::Hyper(error)),
            Ok(Ok(response)) => response,
        };
        self.check_fields(response.headers(), "response")
            .map_err(|size| Error::HttpResponseHeaderSectionSize(Some(size)))?;
        let response = response.map(|incoming| {
            ResponseBody::new(
                incoming,
                Arc::clone(&self),
                slot,
                options.between_bytes_timeout,
            )
            .boxed_unsync()
        });
        let connection: Box<dyn Future<Output = Result<(), Error>> + Send> =
            Box::new(async move { connection.await.map_err(Error::Hyper) });
        Ok((response, connection))
    }

    /// The allow entry `request` falls under, and a count of it; or the
    /// error the guest sees (nothing has been looked up or connected).
    fn admit(&self, request: &Request<WasiBody>) -> Result<HttpAllow, Error> {
        let uri = request.uri();
        let target = RequestTarget {
            scheme: uri.scheme_str().unwrap_or(""),
            authority: uri.authority().map_or("", |a| a.as_str()),
            path: uri.path(),
            method: request.method().as_str(),
        };
        let entry = match self.access.http.decide(target) {
            Ok(entry) => entry.clone(),
            Err(denied) => {
                self.note(format!("an HTTP request was denied: {denied}"));
                return Err(Error::HttpRequestDenied);
            }
        };
        let sent = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        if sent > self.limits.max_http_requests {
            self.note(format!(
                "the call made more HTTP requests than max_http_requests ({})",
                self.limits.max_http_requests
            ));
            return Err(Error::ConnectionLimitReached);
        }
        Ok(entry)
    }

    /// One of the call's in-flight slots, held until the response ends.
    fn take_slot(&self) -> Result<OwnedSemaphorePermit, Error> {
        Arc::clone(&self.in_flight)
            .try_acquire_owned()
            .map_err(|_| {
                self.note(format!(
                    "the call had more HTTP requests in flight than max_http_concurrent ({})",
                    self.limits.max_http_concurrent
                ));
                Error::ConnectionLimitReached
            })
    }

    /// Checks `headers` against the field limits; the error is their size.
    fn check_fields(&self, headers: &HeaderMap, what: &str) -> Result<(), u32> {
        let size: usize = headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum();
        let size_u32 = u32::try_from(size).unwrap_or(u32::MAX);
        if headers.len() as u64 > self.limits.max_http_fields {
            self.note(format!(
                "an HTTP {what} had {} header fields, more than max_http_fields ({})",
                headers.len(),
                self.limits.max_http_fields
            ));
            return Err(size_u32);
        }
        if size as u64 > self.limits.max_http_fields_size {
            self.note(format!(
                "an HTTP {what} had {size} bytes of header fields, more than \
                 max_http_fields_size ({})",
                self.limits.max_http_fields_size
            ));
            return Err(size_u32);
        }
        Ok(())
    }

    /// Sets the grant's secret headers for `entry`'s origin, replacing any
    /// the guest set of the same name.
    fn add_secrets(&self, entry: &HttpAllow, headers: &mut HeaderMap) {
        for secret in self.access.http.secrets_for(&entry.origin) {
            // Checked at load: a token name and a printable value.
            let (Ok(name), Ok(mut value)) = (
                http::HeaderName::from_bytes(secret.name.as_bytes()),
                HeaderValue::from_str(secret.value.expose()),
            ) else {
                continue;
            };
            value.set_sensitive(true);
            headers.remove(&name);
            headers.insert(name, value);
        }
    }

    /// A connection to `entry`'s origin, with HTTP/1.1 spoken over it.
    async fn connect(
        &self,
        entry: &HttpAllow,
    ) -> Result<
        (
            hyper::client::conn::http1::SendRequest<RequestBody>,
            hyper::client::conn::http1::Connection<TokioIo<connect::Stream>, RequestBody>,
        ),
        Error,
    > {
        let stream = connect::open(self, entry).await?;
        let mut builder = hyper::client::conn::http1::Builder::new();
        builder
            .max_headers(to_usize(self.limits.max_http_fields))
            .max_buf_size(to_usize(self.limits.max_http_fields_size).max(8192));
        builder
            .handshake(TokioIo::new(stream))
            .await
            .map_err(Error::Hyper)
    }

    /// Notes that a request took longer than limit `key`.
    fn note_timeout(&self, key: &str, limit: Duration) {
        self.note(format!(
            "an HTTP request took longer than {key} ({} ms)",
            limit.as_millis()
        ));
    }

    /// Notes that a response body went past its limit.
    pub(super) fn note_response_too_large(&self) -> u64 {
        let limit = self.limits.max_http_response_body_bytes;
        self.note(format!(
            "an HTTP response body was larger than max_http_response_body_bytes ({limit})"
        ));
        limit
    }

    /// Notes that a response was still coming at the call's deadline.
    pub(super) fn note_deadline(&self) {
        self.note(format!(
            "an HTTP response was cut at the call's deadline (timeout_ms = {})",
            self.limits.timeout_ms
        ));
    }

    /// The response body limit.
    pub(super) fn response_body_limit(&self) -> u64 {
        self.limits.max_http_response_body_bytes
    }
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
