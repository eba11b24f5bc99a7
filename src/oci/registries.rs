//! `[[registries]]`: per registry host, plain HTTP (only where written), an
//! extra CA file and the deadline of one request. Nothing secret:
//! credentials come from the Docker client's config (`credentials.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The largest CA file read.
const MAX_CA_BYTES: u64 = 1024 * 1024;

/// How long one request to a registry or its token service may take in
/// all, its answer included, unless its entry's `timeout_ms` says otherwise.
pub const DEFAULT_REGISTRY_TIMEOUT_MS: u64 = 300_000;

/// The largest `timeout_ms` accepted (an hour).
const MAX_REGISTRY_TIMEOUT_MS: u64 = 3_600_000;

/// One `[[registries]]` entry.
///
/// ```toml
/// [[registries]]
/// host = "registry.internal:5000"
/// ca_file = "certs/internal-ca.pem"   # also trusted, besides the bundled roots
///
/// [[registries]]
/// host = "127.0.0.1:5000"
/// plain_http = true                   # HTTP without TLS: only for this host
/// timeout_ms = 60000                  # one request, its answer included (default 300000)
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryConfig {
    /// The registry as references write it: `host` or `host:port`.
    pub host: String,
    /// Talk plain HTTP to this host (default `false`: HTTPS).
    #[serde(default)]
    pub plain_http: bool,
    /// A PEM file of CA certificates trusted for this host besides the
    /// bundled roots, relative to the config file.
    pub ca_file: Option<PathBuf>,
    /// How long one request to this host or its token service may take in
    /// all, answer included (default [`DEFAULT_REGISTRY_TIMEOUT_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl RegistryConfig {
    /// Checks the host is a bare `host[:port]`.
    pub fn check(&self) -> Result<(), String> {
        let host = &self.host;
        if host.is_empty()
            || host.contains('/')
            || host.contains("://")
            || host.contains(char::is_whitespace)
        {
            return Err(format!(
                "`host` must be a registry as references write it (host or host:port, no scheme \
                 or path), not '{host}'"
            ));
        }
        if self.plain_http && self.ca_file.is_some() {
            return Err(format!(
                "{host}: `ca_file` has no use with `plain_http = true`"
            ));
        }
        if let Some(ms) = self.timeout_ms
            && !(1..=MAX_REGISTRY_TIMEOUT_MS).contains(&ms)
        {
            return Err(format!(
                "{host}: `timeout_ms` must be from 1 to {MAX_REGISTRY_TIMEOUT_MS} (an hour), not {ms}"
            ));
        }
        Ok(())
    }
}

/// Checks every entry, and no host twice.
pub fn check_registries(entries: &[RegistryConfig]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        entry
            .check()
            .map_err(|e| format!("[[registries]] #{}: {e}", i + 1))?;
        if !seen.insert(entry.host.as_str()) {
            return Err(format!(
                "[[registries]] #{}: host '{}' is listed twice",
                i + 1,
                entry.host
            ));
        }
    }
    Ok(())
}

/// How to reach one registry host.
#[derive(Debug, Clone)]
pub(crate) struct HostSettings {
    pub plain_http: bool,
    /// DER certificates of the CA file.
    pub extra_roots: Vec<Vec<u8>>,
    /// The deadline of one request, answer included.
    pub timeout: Duration,
    /// Every host an entry marks `plain_http = true`: the only places
    /// credentials may be sent without TLS (a token realm among them).
    pub plain_http_hosts: Vec<String>,
}

/// The settings for `host` from `entries` (default: HTTPS, bundled roots,
/// [`DEFAULT_REGISTRY_TIMEOUT_MS`]); relative CA paths from `base`.
pub(crate) fn settings_for(
    entries: &[RegistryConfig],
    host: &str,
    base: &Path,
) -> Result<HostSettings, String> {
    let entry = entries.iter().find(|e| e.host == host);
    let extra_roots = match entry.and_then(|e| e.ca_file.as_ref()) {
        Some(ca) => read_ca_file(&base.join(ca))?,
        None => Vec::new(),
    };
    Ok(HostSettings {
        plain_http: entry.is_some_and(|e| e.plain_http),
        extra_roots,
        timeout: Duration::from_millis(
            entry
                .and_then(|e| e.timeout_ms)
                .unwrap_or(DEFAULT_REGISTRY_TIMEOUT_MS),
        ),
        plain_http_hosts: entries
            .iter()
            .filter(|e| e.plain_http)
            .map(|e| e.host.clone())
            .collect(),
    })
}

fn read_ca_file(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let shown = path.display();
    let text = crate::small_file::read_required_file(path, MAX_CA_BYTES, "the registry's ca_file")?;
    let certs: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(&text)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the ca_file {shown} is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "the ca_file {shown} holds no certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &str, plain_http: bool, timeout_ms: Option<u64>) -> RegistryConfig {
        RegistryConfig {
            host: host.into(),
            plain_http,
            ca_file: None,
            timeout_ms,
        }
    }

    #[test]
    fn a_deadline_out_of_range_is_refused_by_name() {
        for bad in [0, MAX_REGISTRY_TIMEOUT_MS + 1] {
            let error = check_registries(&[entry("r.example", false, Some(bad))]).unwrap_err();
            assert!(
                error.contains(
                    "[[registries]] #1: r.example: `timeout_ms` must be from 1 to 3600000"
                ),
                "{error}"
            );
        }
        assert!(check_registries(&[entry("r.example", false, Some(1))]).is_ok());
    }

    #[test]
    fn settings_give_the_deadline_and_every_plain_http_host() {
        let entries = [
            entry("a.example", false, Some(1500)),
            entry("127.0.0.1:5000", true, None),
            entry("127.0.0.1:5001", true, None),
        ];
        let here = Path::new(".");
        let a = settings_for(&entries, "a.example", here).unwrap();
        assert_eq!(a.timeout, Duration::from_millis(1500));
        assert!(!a.plain_http);
        assert_eq!(a.plain_http_hosts, ["127.0.0.1:5000", "127.0.0.1:5001"]);
        let other = settings_for(&entries, "b.example", here).unwrap();
        assert_eq!(
            other.timeout,
            Duration::from_millis(DEFAULT_REGISTRY_TIMEOUT_MS)
        );
        assert!(
            settings_for(&entries, "127.0.0.1:5001", here)
                .unwrap()
                .plain_http
        );
    }
}
