//! HTTP to one registry host and its token service: the clients (the
//! bundled roots plus the host's CA file, redirects never to plain HTTP,
//! a deadline on every request, answer included), bounded reads, and what
//! a failed request says.

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::registries::HostSettings;
use super::{OciError, OciErrorKind};

/// How long a connection may take to open.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a read may wait for the next bytes.
pub(super) const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The most redirects followed (blob downloads are often redirected).
const MAX_REDIRECTS: usize = 5;

/// The two clients for one registry host.
pub(super) struct Clients {
    /// For the registry's own answers: follows redirects (never to plain
    /// HTTP), which drop credentials when they leave the origin.
    pub registry: reqwest::Client,
    /// For `/v2/` challenges and token services: follows no redirect, so
    /// that credentials and identity tokens go only where they were checked
    /// to go.
    pub tokens: reqwest::Client,
}

/// The clients for `host` with `settings`, trusting `roots` (DER).
pub(super) fn clients(
    host: &str,
    settings: &HostSettings,
    roots: &[Vec<u8>],
) -> Result<Clients, OciError> {
    let build = |redirects: reqwest::redirect::Policy| {
        let certs = roots
            .iter()
            .map(|der| reqwest::Certificate::from_der(der))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| config_error(format!("a CA certificate for {host} is not usable: {e}")))?;
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .timeout(settings.timeout)
            .redirect(redirects)
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .tls_certs_only(certs)
            .build()
            .map_err(|e| config_error(format!("cannot set up a client for registry {host}: {e}")))
    };
    Ok(Clients {
        registry: build(redirect_policy())?,
        tokens: build(reqwest::redirect::Policy::none())?,
    })
}

fn config_error(message: String) -> OciError {
    OciError::new(OciErrorKind::Config, message)
}

/// Follows at most `MAX_REDIRECTS` redirects, never from HTTPS to HTTP.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let downgrade = attempt.url().scheme() == "http"
            && attempt.previous().iter().any(|url| url.scheme() == "https");
        if downgrade {
            attempt.error("a registry redirect from HTTPS to plain HTTP was refused")
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// One request to registry `host` (or its token service), for messages:
/// what it fetches, and when it started against which deadline.
pub(super) struct Attempt<'a> {
    host: &'a str,
    what: &'a str,
    deadline: Duration,
    started: Instant,
}

impl<'a> Attempt<'a> {
    /// An attempt at `what` from registry `host`, starting now.
    pub(super) fn start(host: &'a str, what: &'a str, deadline: Duration) -> Self {
        Self {
            host,
            what,
            deadline,
            started: Instant::now(),
        }
    }

    /// What `error` of this request says: the deadline, if it passed,
    /// naming the host and the key that sets it.
    pub(super) fn failed(&self, error: &reqwest::Error) -> OciError {
        let host = self.host;
        if error.is_timeout() {
            let message = if error.is_connect() {
                format!(
                    "registry {host}: {}: no connection within {} s",
                    self.what,
                    CONNECT_TIMEOUT.as_secs()
                )
            } else if self.started.elapsed() + Duration::from_millis(50) >= self.deadline {
                format!(
                    "registry {host}: {} did not arrive within {} ms, the deadline of one \
                     request to it (`timeout_ms` of its [[registries]] entry; default {})",
                    self.what,
                    self.deadline.as_millis(),
                    super::registries::DEFAULT_REGISTRY_TIMEOUT_MS
                )
            } else {
                format!(
                    "registry {host}: {} stalled: nothing arrived for {} s",
                    self.what,
                    READ_TIMEOUT.as_secs()
                )
            };
            return OciError::new(OciErrorKind::Unreachable, message);
        }
        let kind = if error.is_connect() {
            OciErrorKind::Unreachable
        } else {
            OciErrorKind::Refused
        };
        OciError::new(
            kind,
            format!("registry {host}: {}: {}", self.what, error_chain(error)),
        )
    }

    /// The whole body of `response`, refused past `limit` bytes (as it
    /// streams, whatever its length says).
    pub(super) async fn read(
        &self,
        response: reqwest::Response,
        limit: u64,
    ) -> Result<Vec<u8>, OciError> {
        let mut bytes = Vec::new();
        self.read_into(response, limit, |chunk| {
            bytes.extend_from_slice(chunk);
            Ok(())
        })
        .await?;
        Ok(bytes)
    }

    /// At most the first `limit` bytes of the body of `response` (for an
    /// error's text); nothing if it cannot be read in time.
    pub(super) async fn read_prefix(&self, response: reqwest::Response, limit: usize) -> Vec<u8> {
        let mut body = response.bytes_stream();
        let mut bytes = Vec::new();
        while bytes.len() < limit {
            match body.next().await {
                Some(Ok(chunk)) => {
                    let room = limit - bytes.len();
                    bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                _ => break,
            }
        }
        bytes
    }

    /// Hands the body of `response` to `sink` chunk by chunk, refused past
    /// `limit` bytes.
    pub(super) async fn read_into(
        &self,
        response: reqwest::Response,
        limit: u64,
        mut sink: impl FnMut(&[u8]) -> Result<(), OciError>,
    ) -> Result<(), OciError> {
        if let Some(length) = response.content_length()
            && length > limit
        {
            return Err(too_large(self.what, length, limit));
        }
        let mut body = response.bytes_stream();
        let mut received = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| self.failed(&e))?;
            received += chunk.len() as u64;
            if received > limit {
                return Err(too_large(self.what, received, limit));
            }
            sink(&chunk)?;
        }
        Ok(())
    }
}

fn too_large(what: &str, size: u64, limit: u64) -> OciError {
    OciError::new(
        OciErrorKind::Refused,
        format!(
            "{what} is {size} bytes or more, past the most accepted ({limit} bytes); nothing was kept"
        ),
    )
}

/// An error with its sources, which hold the cause (a TLS certificate, a
/// refused connection) under reqwest's and `oci-client`'s own words.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = inner.source();
    }
    text
}
