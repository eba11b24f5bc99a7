//! [`Registry`]: one registry host, reached over HTTPS (bundled roots plus
//! the host's `ca_file`) or, where `[[registries]]` says so, plain HTTP.
//!
//! Every request goes through here: reads ([`Registry::get`]) bound what
//! they keep in memory and hash what they stream; pushes
//! ([`Registry::push_blob`], [`Registry::push_manifest`]) are the
//! distribution spec's monolithic upload and manifest `PUT`. The
//! authentication (the `WWW-Authenticate: Bearer` token flow, basic auth) is
//! `token.rs`'s. (Pushes do not go through `oci-client`, whose token flow
//! sends credentials to whatever realm a registry names, over plain HTTP
//! too, and reads the answer whole.)

use std::collections::HashMap;
use std::io::Write;

use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, LOCATION, WWW_AUTHENTICATE,
};
use reqwest::{RequestBuilder, StatusCode, Url};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use super::credentials::{Credentials, credentials_for, where_credentials_are_read};
use super::http::{Attempt, Clients, clients};
use super::reference::OciReference;
use super::registries::HostSettings;
use super::token::{Authorization, TokenFlow};
use super::{OciError, OciErrorKind};

/// One registry host, and the tokens it gave.
pub(crate) struct Registry {
    host: String,
    scheme: &'static str,
    settings: HostSettings,
    http: Clients,
    credentials: Credentials,
    /// What requests carry, per repository and operation (push or not).
    authorizations: Mutex<HashMap<(String, bool), Authorization>>,
}

/// A body read whole (bounded).
pub(crate) struct Body {
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
}

impl Registry {
    /// A client for `host` with `settings`; credentials from the Docker config.
    pub(crate) async fn connect(host: &str, settings: &HostSettings) -> Result<Self, OciError> {
        let config_error = |message: String| OciError::new(OciErrorKind::Config, message);
        let credentials = credentials_for(host).map_err(config_error)?;
        tracing::debug!(
            registry = host,
            ?credentials,
            "credentials from the Docker config"
        );
        let roots = root_certificates(settings);
        let scheme = if settings.plain_http { "http" } else { "https" };
        Ok(Self {
            host: host.to_string(),
            scheme,
            http: clients(host, settings, &roots)?,
            settings: settings.clone(),
            credentials,
            authorizations: Mutex::new(HashMap::new()),
        })
    }

    /// Uploads `bytes` as blob `digest` of `reference`'s repository: the
    /// distribution spec's monolithic upload (`POST` for a location, then
    /// `PUT` the bytes there).
    pub(crate) async fn push_blob(
        &self,
        reference: &OciReference,
        bytes: Vec<u8>,
        digest: &str,
    ) -> Result<(), OciError> {
        let what = format!("the upload of blob {digest}");
        let start = self.url(reference, "blobs/uploads/");
        let response = self
            .send_pushing(reference, &what, true, || {
                self.http.registry.post(&start).header(CONTENT_LENGTH, 0)
            })
            .await?;
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| self.refused(format!("{what}: the registry gave no upload location")))?;
        let base = Url::parse(&start).map_err(|e| self.refused(format!("{what}: {e}")))?;
        let mut url = base.join(location).map_err(|e| {
            self.refused(format!(
                "{what}: the upload location is not a URL ({e}): '{}'",
                crate::escape::escape_controls(location)
            ))
        })?;
        url.query_pairs_mut().append_pair("digest", digest);
        // Credentials go with the bytes only to the registry's own origin.
        let same_origin = url.origin() == base.origin();
        let body = bytes::Bytes::from(bytes);
        self.send_pushing(reference, &what, same_origin, || {
            self.http
                .registry
                .put(url.clone())
                .header(CONTENT_TYPE, "application/octet-stream")
                .body(body.clone())
        })
        .await?;
        Ok(())
    }

    /// `PUT`s `body` as the manifest of `reference` (its tag or digest).
    pub(crate) async fn push_manifest(
        &self,
        reference: &OciReference,
        body: Vec<u8>,
        media_type: &'static str,
    ) -> Result<(), OciError> {
        let what = format!("the manifest {reference}");
        let url = self.url(reference, &format!("manifests/{}", reference.target()));
        let body = bytes::Bytes::from(body);
        self.send_pushing(reference, &what, true, || {
            self.http
                .registry
                .put(&url)
                .header(CONTENT_TYPE, media_type)
                .body(body.clone())
        })
        .await?;
        Ok(())
    }

    /// Sends the request `build` makes, with the authorization for reading
    /// (`Some(false)`) or pushing (`Some(true)`) `reference`'s repository,
    /// or none; once more, found afresh, if the registry answers 401 (a
    /// token may have expired).
    async fn send(
        &self,
        reference: &OciReference,
        authorization: Option<bool>,
        attempt: &Attempt<'_>,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<reqwest::Response, OciError> {
        let mut retried = false;
        loop {
            let mut request = build();
            if let Some(push) = authorization
                && let Some(header) = self.header(reference, push).await?
            {
                request = request.header(AUTHORIZATION, header);
            }
            let response = request.send().await.map_err(|e| attempt.failed(&e))?;
            if response.status() != StatusCode::UNAUTHORIZED || retried {
                return Ok(response);
            }
            retried = true;
            self.authorizations.lock().await.clear();
        }
    }

    /// Sends the request `build` makes (with the push authorization when
    /// `authorized`), once more if a token may have expired; a status that
    /// is not success is an error naming `what`.
    async fn send_pushing(
        &self,
        reference: &OciReference,
        what: &str,
        authorized: bool,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<reqwest::Response, OciError> {
        let attempt = Attempt::start(&self.host, what, self.settings.timeout);
        let authorized = authorized.then_some(true);
        let response = self.send(reference, authorized, &attempt, build).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let said = attempt.read_prefix(response, 1024).await;
        let said = String::from_utf8_lossy(&said);
        let said = crate::escape::escape_controls(said.trim());
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(OciError::new(
                OciErrorKind::Unauthorized,
                format!(
                    "registry {} answered {status} to {what} ({said}): the credentials are \
                     missing or not accepted for pushing; {}",
                    self.host,
                    where_credentials_are_read()
                ),
            ));
        }
        Err(self.refused(format!("it answered {status} to {what} ({said})")))
    }

    fn refused(&self, why: String) -> OciError {
        OciError::new(
            OciErrorKind::Refused,
            format!("registry {}: {why}", self.host),
        )
    }

    fn url(&self, reference: &OciReference, path: &str) -> String {
        format!(
            "{}://{}/v2/{}/{path}",
            self.scheme,
            self.host,
            reference.repository()
        )
    }

    /// What requests to `reference`'s repository carry (the bearer token
    /// flow or basic auth, as the registry asks), found once per
    /// repository and operation.
    async fn authorization(
        &self,
        reference: &OciReference,
        push: bool,
    ) -> Result<Authorization, OciError> {
        let key = (reference.repository().to_string(), push);
        let mut found = self.authorizations.lock().await;
        if let Some(authorization) = found.get(&key) {
            return Ok(authorization.clone());
        }
        let flow = TokenFlow {
            host: &self.host,
            scheme: self.scheme,
            client: &self.http.tokens,
            credentials: &self.credentials,
            settings: &self.settings,
        };
        let authorization = flow.authorize(reference.repository(), push).await?;
        found.insert(key, authorization.clone());
        Ok(authorization)
    }

    /// The `Authorization` header for reading (or, with `push`, writing)
    /// `reference`'s repository.
    async fn header(
        &self,
        reference: &OciReference,
        push: bool,
    ) -> Result<Option<HeaderValue>, OciError> {
        let Some(text) = self.authorization(reference, push).await?.header() else {
            return Ok(None);
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            OciError::new(
                OciErrorKind::Unauthorized,
                format!(
                    "registry {} refused to authenticate: its token (or the credentials for it) \
                     is not a valid header value; {}",
                    self.host,
                    where_credentials_are_read()
                ),
            )
        })?;
        value.set_sensitive(true);
        Ok(Some(value))
    }

    /// GETs `path` of `reference`'s repository, keeping at most `limit`
    /// bytes of the body (more is an error naming `what`).
    pub(crate) async fn get(
        &self,
        reference: &OciReference,
        path: &str,
        accept: &[&str],
        limit: u64,
        what: &str,
    ) -> Result<Body, OciError> {
        let mut bytes = Vec::new();
        let content_type = self
            .stream(reference, path, accept, limit, what, |chunk| {
                bytes.extend_from_slice(chunk);
                Ok(())
            })
            .await?;
        Ok(Body {
            bytes,
            content_type,
        })
    }

    /// GETs blob `digest` of `reference`'s repository into `out`,
    /// refusing more than `limit` bytes and any byte that does not hash to
    /// `digest`; returns the size.
    pub(crate) async fn download_blob(
        &self,
        reference: &OciReference,
        digest: &str,
        limit: u64,
        what: &str,
        out: &mut impl Write,
    ) -> Result<u64, OciError> {
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        self.stream(
            reference,
            &format!("blobs/{digest}"),
            &[],
            limit,
            what,
            |chunk| {
                hasher.update(chunk);
                size += chunk.len() as u64;
                out.write_all(chunk).map_err(|e| {
                    OciError::new(OciErrorKind::Store, format!("cannot write {what}: {e}"))
                })
            },
        )
        .await?;
        let actual = format!("sha256:{}", hex(&hasher.finalize()));
        if actual != digest {
            return Err(OciError::new(
                OciErrorKind::Refused,
                format!(
                    "{what} from {} does not match its digest: expected {digest}, the {size} bytes \
                     received hash to {actual} (a corrupt or tampered blob); nothing was kept",
                    self.host
                ),
            ));
        }
        Ok(size)
    }

    /// GETs `path` and hands the body to `sink` chunk by chunk, at most
    /// `limit` bytes; returns the content type. 404 is `NotFound`.
    async fn stream(
        &self,
        reference: &OciReference,
        path: &str,
        accept: &[&str],
        limit: u64,
        what: &str,
        sink: impl FnMut(&[u8]) -> Result<(), OciError>,
    ) -> Result<Option<String>, OciError> {
        let url = self.url(reference, path);
        let attempt = Attempt::start(&self.host, what, self.settings.timeout);
        let response = self
            .send(reference, Some(false), &attempt, || {
                let request = self.http.registry.get(&url);
                if accept.is_empty() {
                    request
                } else {
                    request.header(ACCEPT, accept.join(", "))
                }
            })
            .await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Err(OciError::new(
                OciErrorKind::NotFound,
                format!(
                    "{what} not found in {}/{} ({url}: 404)",
                    self.host,
                    reference.repository()
                ),
            ));
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(|v| format!(" (it asks: {})", crate::escape::escape_controls(v)))
                .unwrap_or_default();
            return Err(OciError::new(
                OciErrorKind::Unauthorized,
                format!(
                    "registry {} answered {status} for {what}{challenge}: the credentials are \
                     missing or not accepted; {}",
                    self.host,
                    where_credentials_are_read()
                ),
            ));
        }
        if !status.is_success() {
            return Err(OciError::new(
                OciErrorKind::Refused,
                format!(
                    "registry {} answered {status} for {what} ({url})",
                    self.host
                ),
            ));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        attempt.read_into(response, limit, sink).await?;
        Ok(content_type)
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bundled roots (Mozilla's, from webpki-root-certs) and the host's CA file.
fn root_certificates(settings: &HostSettings) -> Vec<Vec<u8>> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|cert| cert.to_vec())
        .chain(settings.extra_roots.iter().cloned())
        .collect()
}
