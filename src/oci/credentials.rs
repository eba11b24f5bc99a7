//! Registry credentials, from the Docker client's config only:
//! `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`; its `auths`
//! entry for the registry, with `auth` (base64 `user:password`) or
//! `identitytoken` (an OAuth2 refresh token). Never from toolhost.toml.

use std::path::PathBuf;

use base64::Engine as _;
use serde::Deserialize;

/// The largest Docker config read.
const MAX_DOCKER_CONFIG_BYTES: u64 = 1024 * 1024;

/// What to present to a registry.
#[derive(Clone, Default)]
pub(crate) enum Credentials {
    /// Nothing: anonymous access.
    #[default]
    Anonymous,
    /// A user name and password (basic auth, or for a bearer token).
    Basic { user: String, password: String },
    /// An OAuth2 refresh token, exchanged for an access token.
    IdentityToken(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Basic { user, .. } => write!(f, "Basic({user}, <secret>)"),
            Credentials::IdentityToken(_) => f.write_str("IdentityToken(<secret>)"),
        }
    }
}

/// The Docker config file credentials are read from.
pub(crate) fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker").join("config.json"))
}

/// Where credentials are read from, in words, for messages.
pub(crate) fn where_credentials_are_read() -> String {
    match docker_config_path() {
        Some(path) => format!(
            "credentials are read from {} (`auths`; set DOCKER_CONFIG to use another folder; \
             `docker login` writes it)",
            path.display()
        ),
        None => "credentials are read from $DOCKER_CONFIG/config.json or ~/.docker/config.json, \
                 and neither DOCKER_CONFIG nor HOME is set"
            .to_string(),
    }
}

#[derive(Deserialize, Default)]
struct DockerConfig {
    #[serde(default)]
    auths: std::collections::BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize, Default)]
struct AuthEntry {
    auth: Option<String>,
    identitytoken: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

/// The credentials for `registry` (anonymous if the file or an entry for it
/// is missing); a file that cannot be parsed is an error saying where.
pub(crate) fn credentials_for(registry: &str) -> Result<Credentials, String> {
    let Some(path) = docker_config_path() else {
        return Ok(Credentials::Anonymous);
    };
    let shown = path.display();
    let Some(text) =
        crate::small_file::read_small_file(&path, MAX_DOCKER_CONFIG_BYTES, "the Docker config")?
    else {
        return Ok(Credentials::Anonymous);
    };
    let config: DockerConfig = serde_json::from_slice(&text)
        .map_err(|e| format!("the Docker config {shown} is not valid JSON: {e}"))?;
    let Some(entry) = find_entry(&config, registry) else {
        return Ok(Credentials::Anonymous);
    };
    if let Some(token) = entry.identitytoken.as_ref().filter(|t| !t.is_empty()) {
        return Ok(Credentials::IdentityToken(token.clone()));
    }
    if let Some(auth) = entry.auth.as_ref().filter(|a| !a.is_empty()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| format!("{shown}: the `auth` of '{registry}' is not base64"))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| format!("{shown}: the `auth` of '{registry}' is not text"))?;
        let (user, password) = decoded
            .split_once(':')
            .ok_or_else(|| format!("{shown}: the `auth` of '{registry}' is not user:password"))?;
        return Ok(Credentials::Basic {
            user: user.to_string(),
            password: password.to_string(),
        });
    }
    match (&entry.username, &entry.password) {
        (Some(user), Some(password)) => Ok(Credentials::Basic {
            user: user.clone(),
            password: password.clone(),
        }),
        _ => Ok(Credentials::Anonymous),
    }
}

/// The `auths` entry for `registry`: keyed by the host, or by a URL of it
/// (`https://host`, `https://host/v1/`), as Docker writes them.
fn find_entry<'a>(config: &'a DockerConfig, registry: &str) -> Option<&'a AuthEntry> {
    let wanted = normalize(registry);
    config
        .auths
        .iter()
        .find(|(key, _)| normalize(key) == wanted)
        .map(|(_, entry)| entry)
}

fn normalize(key: &str) -> String {
    let key = key
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let host = key
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".to_string(),
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_host_or_url() {
        let config: DockerConfig = serde_json::from_str(
            r#"{"auths": {"https://index.docker.io/v1/": {"auth": "eA=="}, "127.0.0.1:5000": {}}}"#,
        )
        .unwrap();
        assert!(find_entry(&config, "docker.io").is_some());
        assert!(find_entry(&config, "127.0.0.1:5000").is_some());
        assert!(find_entry(&config, "127.0.0.1:5001").is_none());
    }
}
