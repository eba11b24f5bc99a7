//! [`Registry`]: one registry host, reached over HTTPS (bundled roots plus
//! the host's `ca_file`) or, where `[[registries]]` says so, plain HTTP.
//!
//! `oci-client` does the authentication (the `WWW-Authenticate: Bearer`
//! token flow, basic auth) and the pushes; every read goes through
//! [`Registry::get`] here, which bounds what it keeps in memory and hashes
//! what it streams, as `oci-client`'s reads do not bound a manifest's size.

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use futures_util::StreamExt;
use oci_client::RegistryOperation;
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use super::credentials::{Credentials, credentials_for, where_credentials_are_read};
use super::reference::OciReference;
use super::registries::HostSettings;
use super::{OciError, OciErrorKind};

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a read may wait for the next bytes.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request may take in all (a large blob included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// The most redirects followed (blob downloads are often redirected).
const MAX_REDIRECTS: usize = 5;

/// One registry host, and the tokens it gave.
pub(crate) struct Registry {
    host: String,
    scheme: &'static str,
    oci: oci_client::Client,
    http: reqwest::Client,
    auth: RegistryAuth,
    /// An identity token (OAuth2 refresh token) to exchange per scope.
    identity_token: Option<String>,
    /// `Authorization` header per repository and operation.
    headers: Mutex<HashMap<(String, bool), Option<HeaderValue>>>,
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
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .redirect(redirect_policy())
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")));
        if !settings.plain_http {
            let certs = roots
                .iter()
                .map(|der| reqwest::Certificate::from_der(der))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    config_error(format!("a CA certificate for {host} is not usable: {e}"))
                })?;
            builder = builder.tls_certs_only(certs);
        }
        let http = builder.build().map_err(|e| {
            config_error(format!("cannot set up a client for registry {host}: {e}"))
        })?;
        let auth = match &credentials {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Basic { user, password } => {
                RegistryAuth::Basic(user.clone(), password.clone())
            }
            Credentials::IdentityToken(_) => RegistryAuth::Anonymous,
        };
        let identity_token = match credentials {
            Credentials::IdentityToken(token) => Some(token),
            _ => None,
        };
        Ok(Self {
            host: host.to_string(),
            scheme,
            oci,
            http,
            auth,
            identity_token,
            headers: Mutex::new(HashMap::new()),
        })
    }

    /// The `oci-client` client (for pushes).
    pub(crate) fn oci(&self) -> &oci_client::Client {
        &self.oci
    }

    /// The auth to give `oci-client` for `reference` (an identity token is
    /// exchanged for an access token of the repository's scope).
    pub(crate) async fn oci_auth(
        &self,
        reference: &OciReference,
        push: bool,
    ) -> Result<RegistryAuth, OciError> {
        match &self.identity_token {
            Some(refresh) => {
                let actions = if push { "pull,push" } else { "pull" };
                let scope = format!("repository:{}:{actions}", reference.repository());
                Ok(RegistryAuth::Bearer(
                    self.exchange_identity_token(refresh, &scope).await?,
                ))
            }
            None => Ok(self.auth.clone()),
        }
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

    /// The `Authorization` header for `reference`'s repository (the
    /// bearer token flow or basic auth, as the registry asks).
    async fn authorization(
        &self,
        reference: &OciReference,
        push: bool,
    ) -> Result<Option<HeaderValue>, OciError> {
        let key = (reference.repository().to_string(), push);
        let mut headers = self.headers.lock().await;
        if let Some(header) = headers.get(&key) {
            return Ok(header.clone());
        }
        let operation = if push {
            RegistryOperation::Push
        } else {
            RegistryOperation::Pull
        };
        let auth = self.oci_auth(reference, push).await?;
        let token = self
            .oci
            .auth(reference.oci(), &auth, operation)
            .await
            .map_err(|e| self.auth_error(error_chain(&e)))?;
        let header = match (token, &auth) {
            (Some(token), _) => Some(format!("Bearer {token}")),
            (None, RegistryAuth::Basic(user, password)) => {
                let both = base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    format!("{user}:{password}"),
                );
                Some(format!("Basic {both}"))
            }
            (None, RegistryAuth::Bearer(token)) => Some(format!("Bearer {token}")),
            (None, RegistryAuth::Anonymous) => None,
        };
        let header = header
            .map(|h| {
                HeaderValue::from_str(&h).map(|mut v| {
                    v.set_sensitive(true);
                    v
                })
            })
            .transpose()
            .map_err(|_| {
                self.auth_error("the registry's token is not a valid header value".into())
            })?;
        headers.insert(key, header.clone());
        Ok(header)
    }

    fn auth_error(&self, why: String) -> OciError {
        if why.contains("error sending request") || why.contains("connect") {
            return OciError::new(
                OciErrorKind::Unreachable,
                format!("cannot reach registry {}: {why}", self.host),
            );
        }
        OciError::new(
            OciErrorKind::Unauthorized,
            format!(
                "registry {} refused to authenticate: {why}; {}",
                self.host,
                where_credentials_are_read()
            ),
        )
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
        mut sink: impl FnMut(&[u8]) -> Result<(), OciError>,
    ) -> Result<Option<String>, OciError> {
        let url = self.url(reference, path);
        let mut retried = false;
        let response = loop {
            let mut request = self.http.get(&url);
            if !accept.is_empty() {
                request = request.header(ACCEPT, accept.join(", "));
            }
            if let Some(header) = self.authorization(reference, false).await? {
                request = request.header(AUTHORIZATION, header);
            }
            let response = request.send().await.map_err(|e| self.send_error(e))?;
            if response.status() == StatusCode::UNAUTHORIZED && !retried {
                // A token may have expired: ask again once.
                retried = true;
                self.headers.lock().await.clear();
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
        if let Some(length) = response.content_length()
            && length > limit
        {
            return Err(too_large(what, length, limit));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        let mut body = response.bytes_stream();
        let mut received = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| self.send_error(e))?;
            received += chunk.len() as u64;
            if received > limit {
                return Err(too_large(what, received, limit));
            }
            sink(&chunk)?;
        }
        Ok(content_type)
    }

    fn send_error(&self, error: reqwest::Error) -> OciError {
        let text = error_chain(&error);
        let kind = if error.is_connect() || error.is_timeout() {
            OciErrorKind::Unreachable
        } else {
            OciErrorKind::Refused
        };
        OciError::new(kind, format!("registry {}: {text}", self.host))
    }

    /// Exchanges an identity token (an OAuth2 refresh token, from `docker
    /// login` to some registries) for an access token at the realm the
    /// registry names.
    async fn exchange_identity_token(
        &self,
        refresh: &str,
        scope: &str,
    ) -> Result<String, OciError> {
        let url = format!("{}://{}/v2/", self.scheme, self.host);
        let response = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| self.send_error(e))?;
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(parse_challenge)
            .unwrap_or_default();
        let Some(realm) = challenge.get("realm") else {
            return Err(self.auth_error(
                "it holds an identity token for this registry, but the registry does not ask \
                 for a bearer token"
                    .into(),
            ));
        };
        let mut form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.to_string()),
            ("client_id", "toolhost".to_string()),
            ("scope", scope.to_string()),
        ];
        if let Some(service) = challenge.get("service") {
            form.push(("service", service.clone()));
        }
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", url_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let response = self
            .http
            .post(realm)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| self.send_error(e))?;
        if !response.status().is_success() {
            return Err(self.auth_error(format!(
                "the token service {realm} answered {} to the identity token",
                response.status()
            )));
        }
        let bytes = response.bytes().await.map_err(|e| self.send_error(e))?;
        #[derive(serde::Deserialize)]
        struct Token {
            access_token: Option<String>,
            token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&bytes[..bytes.len().min(1 << 20)])
            .map_err(|e| self.auth_error(format!("the token service's answer is not JSON: {e}")))?;
        token
            .access_token
            .or(token.token)
            .ok_or_else(|| self.auth_error("the token service gave no access token".into()))
    }
}

/// `key="value"` pairs of a `WWW-Authenticate: Bearer ...` challenge.
fn parse_challenge(header: &str) -> HashMap<String, String> {
    let rest = header.trim();
    let rest = rest
        .strip_prefix("Bearer")
        .or_else(|| rest.strip_prefix("bearer"))
        .unwrap_or(rest);
    let mut pairs = HashMap::new();
    let mut rest = rest.trim_start();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            },
            None => match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            },
        };
        pairs.insert(key, value.to_string());
        rest = next.trim_start_matches([',', ' ']);
    }
    pairs
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed() {
        let pairs = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
        );
        assert_eq!(pairs["realm"], "https://auth.example/token");
        assert_eq!(pairs["service"], "registry.example");
        assert_eq!(pairs["scope"], "repository:a/b:pull");
    }
}
