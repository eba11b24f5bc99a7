//! `[[registries]]`: per registry host, plain HTTP (only where written) and
//! an extra CA file. Nothing secret: credentials come from the Docker
//! client's config (`credentials.rs`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The largest CA file read.
const MAX_CA_BYTES: u64 = 1024 * 1024;

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
#[derive(Debug, Clone, Default)]
pub(crate) struct HostSettings {
    pub plain_http: bool,
    /// DER certificates of the CA file.
    pub extra_roots: Vec<Vec<u8>>,
}

/// The settings for `host` from `entries` (default: HTTPS, bundled roots);
/// relative CA paths from `base`.
pub(crate) fn settings_for(
    entries: &[RegistryConfig],
    host: &str,
    base: &Path,
) -> Result<HostSettings, String> {
    let Some(entry) = entries.iter().find(|e| e.host == host) else {
        return Ok(HostSettings::default());
    };
    let mut settings = HostSettings {
        plain_http: entry.plain_http,
        extra_roots: Vec::new(),
    };
    if let Some(ca) = &entry.ca_file {
        settings.extra_roots = read_ca_file(&base.join(ca))?;
    }
    Ok(settings)
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
