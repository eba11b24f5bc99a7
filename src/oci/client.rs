//! [`Registry`]: one registry host, reached over HTTPS (bundled roots plus
//! the host's `ca_file`) or, where `[[registries]]` says so, plain HTTP.
//!
//! Every read goes through [`Registry::get`] here, which bounds what it
//! keeps in memory and hashes what it streams; the authentication (the
//! `WWW-Authenticate: Bearer` token flow, basic auth) is `token.rs`'s.
//! `oci-client` does the pushes, with the authorization found here.

use std::collections::HashMap;
use std::io::Write;

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use super::credentials::{Credentials, credentials_for, where_credentials_are_read};
use super::http::{Attempt, CONNECT_TIMEOUT, Clients, READ_TIMEOUT, clients};
use super::reference::OciReference;
use super::registries::HostSettings;
use super::token::{Authorization, TokenFlow};
use super::{OciError, OciErrorKind};

/// One registry host, and the tokens it gave.
pub(crate) struct Registry {
    host: String,
    scheme: &'static str,
    settings: HostSettings,
    oci: oci_client::Client,
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
        let oci = oci_client::Client::try_from(ClientConfig {
            protocol: if settings.plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            tls_certs_only: roots
                .iter()
                .map(|der| Certificate {
                    encoding: CertificateEncoding::Der,
                    data: der.clone(),
                })
                .collect(),
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(READ_TIMEOUT),
            platform_resolver: None,
            ..ClientConfig::default()
        })
        .map_err(|e| config_error(format!("cannot set up a client for registry {host}: {e}")))?;
        Ok(Self {
            host: host.to_string(),
            scheme,
            http: clients(host, settings, &roots)?,
            settings: settings.clone(),
            oci,
            credentials,
            authorizations: Mutex::new(HashMap::new()),
        })
    }

    /// The `oci-client` client (for pushes).
    pub(crate) fn oci(&self) -> &oci_client::Client {
        &self.oci
    }

    /// The auth to give `oci-client` for pushing to `reference`'s
    /// repository: the authorization found here, so that it never asks a
    /// token service itself.
    pub(crate) async fn push_auth(
        &self,
        reference: &OciReference,
    ) -> Result<RegistryAuth, OciError> {
        Ok(match self.authorization(reference, true).await? {
            Authorization::None => RegistryAuth::Anonymous,
            Authorization::Basic { user, password } => RegistryAuth::Basic(user, password),
            Authorization::Bearer(token) => RegistryAuth::Bearer(token),
        })
    }

    /// Runs `operation` (an `oci-client` call doing `what`) under the
    /// host's deadline.
    pub(crate) async fn within<T>(
        &self,
        what: &str,
        operation: impl std::future::Future<Output = Result<T, OciError>>,
    ) -> Result<T, OciError> {
        tokio::time::timeout(self.settings.timeout, operation)
            .await
            .unwrap_or_else(|_| {
                Err(OciError::new(
                    OciErrorKind::Unreachable,
                    format!(
                        "registry {}: {what} did not finish within {} ms, the deadline of one \
                         request to it (`timeout_ms` of its [[registries]] entry; default {})",
                        self.host,
                        self.settings.timeout.as_millis(),
                        super::registries::DEFAULT_REGISTRY_TIMEOUT_MS
                    ),
                ))
            })
    }

    /// The registry's host, as references write it.
    pub(crate) fn host(&self) -> &str {
        &self.host
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

    /// The `Authorization` header for reading `reference`'s repository.
    async fn read_header(&self, reference: &OciReference) -> Result<Option<HeaderValue>, OciError> {
        let Some(text) = self.authorization(reference, false).await?.header() else {
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
        let mut retried = false;
        let response = loop {
            let mut request = self.http.registry.get(&url);
            if !accept.is_empty() {
                request = request.header(ACCEPT, accept.join(", "));
            }
            if let Some(header) = self.read_header(reference).await? {
                request = request.header(AUTHORIZATION, header);
            }
            let response = request.send().await.map_err(|e| attempt.failed(&e))?;
            if response.status() == StatusCode::UNAUTHORIZED && !retried {
                // A token may have expired: ask again once.
                retried = true;
                self.authorizations.lock().await.clear();
                continue;
            }
            break response;
        };
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
