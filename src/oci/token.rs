//! How a registry wants to be authenticated, and the access token it asks
//! for: `GET /v2/` names the scheme (`WWW-Authenticate`); for `Bearer`, the
//! realm it names is asked for a token of the repository's scope (the
//! distribution spec's token flow, with basic credentials, or OAuth2 with
//! an identity token).
//!
//! Credentials and identity tokens go only over HTTPS, or over plain HTTP
//! to a host that a `[[registries]]` entry marks `plain_http = true`;
//! every answer is bounded in size, and every request by the host's
//! deadline (`http.rs`).

use std::collections::HashMap;

use reqwest::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};

use super::credentials::{Credentials, where_credentials_are_read};
use super::http::Attempt;
use super::registries::HostSettings;
use super::{OciError, OciErrorKind};

/// The largest answer read from a token service (tokens are a few KiB).
pub(crate) const MAX_TOKEN_ANSWER_BYTES: u64 = 64 * 1024;

/// What a request to the registry carries, once the flow is done.
#[derive(Clone)]
pub(super) enum Authorization {
    /// Nothing: anonymous.
    None,
    /// `Basic` with the Docker config's user and password.
    Basic { user: String, password: String },
    /// `Bearer` with an access token from the registry's token service.
    Bearer(String),
}

impl Authorization {
    /// The `Authorization` header's value, if any.
    pub(super) fn header(&self) -> Option<String> {
        match self {
            Authorization::None => None,
            Authorization::Basic { user, password } => Some(format!(
                "Basic {}",
                base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    format!("{user}:{password}")
                )
            )),
            Authorization::Bearer(token) => Some(format!("Bearer {token}")),
        }
    }
}

/// One registry host's side of the flow.
pub(super) struct TokenFlow<'a> {
    /// The registry as references write it.
    pub host: &'a str,
    /// `http` or `https`, as the registry is reached.
    pub scheme: &'a str,
    /// A client that follows no redirect.
    pub client: &'a reqwest::Client,
    /// What the Docker config holds for the host.
    pub credentials: &'a Credentials,
    /// The host's settings (deadline, plain HTTP hosts).
    pub settings: &'a HostSettings,
}

impl TokenFlow<'_> {
    /// How to authenticate to `repository` (`pull`, or `pull,push`).
    pub(super) async fn authorize(
        &self,
        repository: &str,
        push: bool,
    ) -> Result<Authorization, OciError> {
        let Some(challenge) = self.challenge().await? else {
            return Ok(self.without_token());
        };
        let realm = self.realm(&challenge)?;
        let actions = if push { "pull,push" } else { "pull" };
        let scope = format!("repository:{repository}:{actions}");
        let service = challenge.get("service").map(String::as_str);
        self.token(&realm, &scope, service)
            .await
            .map(Authorization::Bearer)
    }

    /// What a registry that asks for no bearer token gets: the basic
    /// credentials, if any, over the registry's own connection.
    fn without_token(&self) -> Authorization {
        match self.credentials {
            Credentials::Basic { user, password } => Authorization::Basic {
                user: user.clone(),
                password: password.clone(),
            },
            Credentials::Anonymous | Credentials::IdentityToken(_) => Authorization::None,
        }
    }

    /// The `Bearer` challenge of `GET /v2/`, if the registry sends one.
    async fn challenge(&self) -> Result<Option<HashMap<String, String>>, OciError> {
        let url = format!("{}://{}/v2/", self.scheme, self.host);
        let what = "the answer to /v2/ (which says how to authenticate)";
        let attempt = Attempt::start(self.host, what, self.settings.timeout);
        let response = self
            .client
            .get(&url)
            .send()
            .await
            .map_err(|e| attempt.failed(&e))?;
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .filter(|v| {
                v.trim_start()
                    .get(..6)
                    .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
            })
            .map(parse_challenge);
        // The body says nothing the flow needs; it is not read.
        drop(response);
        if challenge.is_none() && matches!(self.credentials, Credentials::IdentityToken(_)) {
            return Err(self.refused(
                "it holds an identity token for this registry, but the registry does not ask \
                 for a bearer token"
                    .into(),
            ));
        }
        Ok(challenge)
    }

    /// The challenge's realm, checked as a place the credentials may go.
    fn realm(&self, challenge: &HashMap<String, String>) -> Result<Url, OciError> {
        let Some(text) = challenge.get("realm") else {
            return Err(self.refused("its bearer challenge names no realm (token service)".into()));
        };
        let realm = Url::parse(text).map_err(|e| {
            self.refused(format!(
                "its bearer challenge names a realm that is not a URL ({e}): '{}'",
                crate::escape::escape_controls(text)
            ))
        })?;
        match realm.scheme() {
            "https" => Ok(realm),
            "http" if self.credentials_travel_in_clear(&realm) => {
                let host = host_of(&realm);
                Err(OciError::new(
                    OciErrorKind::Unauthorized,
                    format!(
                        "registry {} sends clients for tokens to {realm}, over plain HTTP, where \
                         the credentials for it ({}) would travel in clear text; refused. Only \
                         a host that a [[registries]] entry marks plain_http = true is sent \
                         credentials without TLS: add one with host = \"{host}\" if that is \
                         meant (a registry on a private network)",
                        self.host,
                        where_credentials_are_read()
                    ),
                ))
            }
            "http" => Ok(realm),
            other => Err(self.refused(format!(
                "its bearer challenge names a realm of scheme '{other}' ({realm}); only https \
                 (or http to a plain_http host) is used"
            ))),
        }
    }

    /// Whether asking `realm` (plain HTTP) for a token would send
    /// credentials to a host no entry marks `plain_http = true`.
    fn credentials_travel_in_clear(&self, realm: &Url) -> bool {
        let has_credentials = !matches!(self.credentials, Credentials::Anonymous);
        let host = host_of(realm);
        has_credentials && !self.settings.plain_http_hosts.contains(&host)
    }

    /// An access token of `scope` from `realm`.
    async fn token(
        &self,
        realm: &Url,
        scope: &str,
        service: Option<&str>,
    ) -> Result<String, OciError> {
        let what = format!("the token answer from {realm}");
        let attempt = Attempt::start(self.host, &what, self.settings.timeout);
        let request = match self.credentials {
            Credentials::IdentityToken(refresh) => {
                let mut form = vec![
                    ("grant_type", "refresh_token"),
                    ("refresh_token", refresh.as_str()),
                    ("client_id", "toolhost"),
                    ("scope", scope),
                ];
                form.extend(service.map(|s| ("service", s)));
                self.client
                    .post(realm.clone())
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(url_encoded(&form))
            }
            Credentials::Basic { user, password } => self
                .client
                .get(with_query(realm, scope, service))
                .basic_auth(user, Some(password)),
            Credentials::Anonymous => self.client.get(with_query(realm, scope, service)),
        };
        let response = request.send().await.map_err(|e| attempt.failed(&e))?;
        let status = response.status();
        if !status.is_success() {
            let to = match self.credentials {
                Credentials::IdentityToken(_) => " to the identity token",
                Credentials::Basic { .. } => " to the credentials",
                Credentials::Anonymous => "",
            };
            let kind = if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                "refused"
            } else {
                "failed"
            };
            return Err(self.refused(format!(
                "its token service {realm} answered {status}{to} ({kind})"
            )));
        }
        let bytes = attempt.read(response, MAX_TOKEN_ANSWER_BYTES).await?;
        #[derive(serde::Deserialize)]
        struct Token {
            access_token: Option<String>,
            token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&bytes).map_err(|e| {
            self.refused(format!(
                "the answer of its token service {realm} is not a token (JSON with `token` or \
                 `access_token`): {e}"
            ))
        })?;
        token
            .access_token
            .filter(|t| !t.is_empty())
            .or(token.token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| self.refused(format!("its token service {realm} gave no token")))
    }

    fn refused(&self, why: String) -> OciError {
        OciError::new(
            OciErrorKind::Unauthorized,
            format!(
                "registry {} refused to authenticate: {why}; {}",
                self.host,
                where_credentials_are_read()
            ),
        )
    }
}

/// `host` or `host:port` of `url`, as `[[registries]]` entries write it.
fn host_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// `realm` with the token flow's query (`scope`, `service`) added.
fn with_query(realm: &Url, scope: &str, service: Option<&str>) -> Url {
    let mut url = realm.clone();
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("scope", scope);
        if let Some(service) = service {
            query.append_pair("service", service);
        }
    }
    url
}

/// An `application/x-www-form-urlencoded` body of `pairs`.
fn url_encoded(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// `key="value"` pairs of a `WWW-Authenticate: Bearer ...` challenge.
fn parse_challenge(header: &str) -> HashMap<String, String> {
    let rest = header.trim();
    let rest = rest.get(6..).unwrap_or_default();
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

    #[test]
    fn realms_are_named_as_entries_name_hosts() {
        let url = |u: &str| Url::parse(u).unwrap();
        assert_eq!(
            host_of(&url("http://127.0.0.1:5001/token")),
            "127.0.0.1:5001"
        );
        assert_eq!(host_of(&url("http://auth.internal/token")), "auth.internal");
        assert_eq!(
            host_of(&url("http://auth.internal:80/token")),
            "auth.internal"
        );
        assert_eq!(host_of(&url("http://[::1]:8080/t")), "[::1]:8080");
    }

    #[test]
    fn forms_and_queries_are_encoded() {
        assert_eq!(
            url_encoded(&[("a", "x y&z"), ("scope", "repository:a/b:pull,push")]),
            "a=x+y%26z&scope=repository%3Aa%2Fb%3Apull%2Cpush"
        );
        let url = with_query(
            &Url::parse("https://auth.example/token?x=1").unwrap(),
            "repository:a:pull",
            Some("svc"),
        );
        assert_eq!(
            url.as_str(),
            "https://auth.example/token?x=1&scope=repository%3Aa%3Apull&service=svc"
        );
    }
}
