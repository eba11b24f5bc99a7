//! [`Shared`]: what every `wasi:http` request of one call shares (the
//! module's access, the call's limits, deadline and counters), the checks
//! a request passes before it is sent, and the notes that become the call's
//! error text when a limit or a denial stops a request.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::Request;
use http::header::{HeaderMap, HeaderValue};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi_http::{Error, WasiBody};

use super::problem::FirstProblem;
use super::tls::HttpClient;
use crate::policy::{Access, HttpAllow, Limits, RequestTarget, limit_key, to_usize};
use crate::sandbox::deadline::Deadline;
use crate::sandbox::resolver::NameResolver;

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

impl Shared {
    /// The state of one call's requests, made of `call`'s parts.
    pub(super) fn new(call: HttpCallParts) -> Self {
        let concurrent = to_usize(call.limits.max_http_concurrent);
        Self {
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
        }
    }

    /// The call's limits.
    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Starts the count of requests anew, for a call in a store made
    /// before it (or kept from an earlier call).
    pub(super) fn begin_call(&self) {
        self.sent.store(0, Ordering::Relaxed);
        self.problem.clear();
    }

    /// The first HTTP denial or limit of the call, for its error text.
    pub(super) fn problem(&self) -> Option<String> {
        self.problem.get()
    }

    /// Notes `text` as the call's HTTP problem.
    pub(super) fn note(&self, text: String) {
        self.problem.note(&self.module, text);
    }

    /// The allow entry `request` falls under, and a count of it; or the
    /// error the guest sees (nothing has been looked up or connected).
    pub(super) fn admit(&self, request: &Request<WasiBody>) -> Result<HttpAllow, Error> {
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
                "the call made more HTTP requests than {} ({})",
                limit_key::max_http_requests,
                self.limits.max_http_requests
            ));
            return Err(Error::ConnectionLimitReached);
        }
        Ok(entry)
    }

    /// One of the call's in-flight slots, held until the response ends.
    pub(super) fn take_slot(&self) -> Result<OwnedSemaphorePermit, Error> {
        Arc::clone(&self.in_flight)
            .try_acquire_owned()
            .map_err(|_| {
                self.note(format!(
                    "the call had more HTTP requests in flight than {} ({})",
                    limit_key::max_http_concurrent,
                    self.limits.max_http_concurrent
                ));
                Error::ConnectionLimitReached
            })
    }

    /// Checks `headers` against the field limits; the error is their size.
    pub(super) fn check_fields(&self, headers: &HeaderMap, what: &str) -> Result<(), u32> {
        let size: usize = headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum();
        let size_u32 = u32::try_from(size).unwrap_or(u32::MAX);
        if headers.len() as u64 > self.limits.max_http_fields {
            self.note(format!(
                "an HTTP {what} had {} header fields, more than {} ({})",
                headers.len(),
                limit_key::max_http_fields,
                self.limits.max_http_fields
            ));
            return Err(size_u32);
        }
        if size as u64 > self.limits.max_http_fields_size {
            self.note(format!(
                "an HTTP {what} had {size} bytes of header fields, more than {} ({})",
                limit_key::max_http_fields_size,
                self.limits.max_http_fields_size
            ));
            return Err(size_u32);
        }
        Ok(())
    }

    /// Sets the grant's secret headers for `entry`'s origin, replacing any
    /// the guest set of the same name.
    pub(super) fn add_secrets(&self, entry: &HttpAllow, headers: &mut HeaderMap) {
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

    /// Notes that a request took longer than limit `key`.
    pub(super) fn note_timeout(&self, key: &str, limit: Duration) {
        self.note(format!(
            "an HTTP request took longer than {key} ({} ms)",
            limit.as_millis()
        ));
    }

    /// Notes that a request body went past its limit, `limit` bytes.
    pub(super) fn note_request_too_large(&self, limit: u64) {
        self.note(format!(
            "an HTTP request body was larger than {} ({limit})",
            limit_key::max_http_request_body_bytes
        ));
    }

    /// Notes that a response body went past its limit.
    pub(super) fn note_response_too_large(&self) -> u64 {
        let limit = self.limits.max_http_response_body_bytes;
        self.note(format!(
            "an HTTP response body was larger than {} ({limit})",
            limit_key::max_http_response_body_bytes
        ));
        limit
    }

    /// Notes that a response was still coming at the call's deadline.
    pub(super) fn note_deadline(&self) {
        self.note(format!(
            "an HTTP response was cut at the call's deadline ({} = {})",
            limit_key::timeout_ms,
            self.limits.timeout_ms
        ));
    }

    /// The response body limit.
    pub(super) fn response_body_limit(&self) -> u64 {
        self.limits.max_http_response_body_bytes
    }
}
