//! [`HttpGrant`]: outbound HTTP as the operator writes it, checked and
//! resolved into an [`HttpAccess`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::access::has_dot_segment;
use super::access::{HttpAccess, HttpAllow, Secret, SecretHeader, TlsRoots};
use super::origin::{bad_authority, parse_authority, parse_origin, split_url};
use crate::policy::env_name::check_env_name;

/// Outbound HTTP as the operator writes it in `[modules.grants.http]`.
/// The default allows no request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpGrant {
    /// Origins, each optionally with a path prefix: `"https://api.example.com/v1/"`.
    #[serde(default)]
    pub allow: Vec<AllowEntry>,
    /// The methods allowed (`GET`, `POST`, ...); unset allows any.
    #[serde(default)]
    pub methods: Option<Vec<String>>,
    /// Whether host names of every entry may resolve to loopback, private,
    /// link-local or unspecified addresses (refused by default).
    #[serde(default)]
    pub allow_private: bool,
    /// A PEM file of extra root certificates (a private CA), relative to
    /// the config file.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// Which roots HTTPS servers are checked against besides `ca_file`:
    /// `bundled` (Mozilla's, built in; the default) or `platform` (the
    /// operating system's store).
    #[serde(default)]
    pub roots: TlsRoots,
    /// Headers the host sets on requests to an origin, from its own
    /// environment; the guest never sees their values.
    #[serde(default)]
    pub secret_headers: Vec<SecretHeaderGrant>,
}

/// One entry of `allow`: a URL, or a table with `url` and `allow_private`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowEntry {
    /// `"https://api.example.com/v1/"`.
    Url(String),
    /// `{ url = "http://wiki.internal/", allow_private = true }`.
    Table {
        /// The origin and optional path prefix.
        url: String,
        /// Whether this entry's host name may resolve to a private address.
        #[serde(default)]
        allow_private: bool,
    },
}

/// One `[[modules.grants.http.secret_headers]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretHeaderGrant {
    /// The origin (`https://api.example.com`) whose requests get the header.
    pub origin: String,
    /// The header's name, for example `Authorization`.
    pub name: String,
    /// The variable of toolhost's environment holding the value (read at
    /// load; unset is a config error).
    pub env: String,
    /// Text put before the value, for example `"Bearer "`.
    #[serde(default)]
    pub prefix: String,
}

/// The most bytes of a `ca_file` read.
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Header names a grant may not set: they frame the request, which the
/// host does.
const FRAMING_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
];

impl HttpGrant {
    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.secret_headers.is_empty()
    }

    /// Checks the grant (each URL, method and header) without reading the
    /// environment or files; the error names the key.
    pub fn check(&self) -> Result<(), String> {
        self.allow_entries()?;
        self.methods()?;
        Ok(())
    }

    fn allow_entries(&self) -> Result<Vec<HttpAllow>, String> {
        self.allow
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let (url, private) = match entry {
                    AllowEntry::Url(url) => (url.as_str(), false),
                    AllowEntry::Table { url, allow_private } => (url.as_str(), *allow_private),
                };
                parse_allow(url, private || self.allow_private)
                    .map_err(|e| format!("grants.http.allow[{i}]: {e}"))
            })
            .collect()
    }

    fn methods(&self) -> Result<Option<Vec<String>>, String> {
        let Some(methods) = &self.methods else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(methods.len());
        for method in methods {
            let valid = !method.is_empty()
                && method.len() <= 32
                && method.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-');
            if !valid {
                return Err(format!(
                    "grants.http.methods: '{method}' is not an HTTP method (GET, POST, ...)"
                ));
            }
            out.push(method.to_ascii_uppercase());
        }
        Ok(Some(out))
    }

    /// Checks the grant and makes it ready to use: URLs parsed, `ca_file`
    /// read (relative to `base`), secret values read from toolhost's
    /// environment (an unset variable is an error). The error names the key.
    pub fn resolve(&self, base: &Path) -> Result<HttpAccess, String> {
        let allow = self.allow_entries()?;
        let methods = self.methods()?;
        let ca_file = match &self.ca_file {
            None => None,
            Some(path) => Some(read_ca_file(&base.join(path))?),
        };
        let secret_headers = self
            .secret_headers
            .iter()
            .enumerate()
            .map(|(i, header)| {
                resolve_secret(header, &allow)
                    .map_err(|e| format!("grants.http.secret_headers[{i}]: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !secret_headers.is_empty() && allow.is_empty() {
            return Err("grants.http.secret_headers needs grants.http.allow".into());
        }
        Ok(HttpAccess {
            allow,
            methods,
            ca_file,
            roots: self.roots,
            secret_headers,
        })
    }
}

fn read_ca_file(path: &Path) -> Result<(PathBuf, Vec<u8>), String> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| format!("grants.http.ca_file: cannot open {}: {e}", path.display()))?;
    let mut pem = Vec::new();
    file.take(MAX_CA_FILE_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|e| format!("grants.http.ca_file: cannot read {}: {e}", path.display()))?;
    if pem.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(format!(
            "grants.http.ca_file: {} is larger than 4 MiB",
            path.display()
        ));
    }
    check_certificates(&pem)
        .map_err(|e| format!("grants.http.ca_file: {}: {e}", path.display()))?;
    Ok((path.to_path_buf(), pem))
}

/// Checks that `pem` holds at least one certificate and that each can be a
/// root of trust.
fn check_certificates(pem: &[u8]) -> Result<(), String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a PEM file of certificates: {e}"))?;
    if certs.is_empty() {
        return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
    }
    let mut store = rustls::RootCertStore::empty();
    for (i, cert) in certs.into_iter().enumerate() {
        store
            .add(cert)
            .map_err(|e| format!("certificate #{} cannot be a root: {e}", i + 1))?;
    }
    Ok(())
}

fn resolve_secret(header: &SecretHeaderGrant, allow: &[HttpAllow]) -> Result<SecretHeader, String> {
    let origin = parse_origin(&header.origin)?;
    if !allow.iter().any(|a| a.origin == origin) {
        return Err(format!(
            "origin {origin} is not in grants.http.allow, so the header would never be sent"
        ));
    }
    let name = header.name.to_ascii_lowercase();
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(format!("'{}' is not a valid header name", header.name));
    }
    if FRAMING_HEADERS.contains(&name.as_str()) {
        return Err(format!(
            "'{}' frames the request and is set by the host; it cannot be a secret header",
            header.name
        ));
    }
    check_env_name(&header.env)?;
    let value = std::env::var(&header.env).map_err(|_| {
        format!(
            "env '{}' is not set (or not UTF-8) in toolhost's environment",
            header.env
        )
    })?;
    let value = format!("{}{value}", header.prefix);
    let printable = value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
    if !printable || value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']) {
        return Err(format!(
            "the value of env '{}' (with the prefix) is not a valid header value: \
             printable ASCII, no leading or trailing space",
            header.env
        ));
    }
    Ok(SecretHeader {
        origin,
        name,
        env: header.env.clone(),
        value: Secret(value),
    })
}

fn parse_allow(text: &str, allow_private: bool) -> Result<HttpAllow, String> {
    let (scheme, authority, path) = split_url(text)?;
    let origin = parse_authority(scheme, authority).ok_or_else(|| bad_authority(text))?;
    let path_prefix = if path.is_empty() { "/" } else { path };
    if has_dot_segment(path_prefix) || path_prefix.contains('%') {
        return Err(format!(
            "'{text}': the path prefix may not contain '.', '..' segments or %-escapes"
        ));
    }
    Ok(HttpAllow {
        origin,
        path_prefix: path_prefix.to_string(),
        allow_private,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_entries_name_their_key() {
        let bad = |url: &str| {
            HttpGrant {
                allow: vec![
                    AllowEntry::Url("https://ok.example".into()),
                    AllowEntry::Url(url.into()),
                ],
                ..HttpGrant::default()
            }
            .check()
            .unwrap_err()
        };
        for url in [
            "api.example.com",
            "ftp://x.example",
            "https://*.example.com",
            "https://x.example:0",
            "https://x.example:99999",
            "https://u:p@x.example",
            "https://x.example/?q",
            "https://x.example/a/../b",
            "https://",
        ] {
            assert!(
                bad(url).starts_with("grants.http.allow[1]: "),
                "{url}: {}",
                bad(url)
            );
        }
        let methods = HttpGrant {
            methods: Some(vec!["GET /".into()]),
            ..HttpGrant::default()
        };
        assert!(methods.check().unwrap_err().contains("grants.http.methods"));
    }

    #[test]
    fn secrets_are_read_at_load_and_never_shown() {
        let var = "TOOLHOST_TEST_HTTP_SECRET_POLICY";
        // SAFETY: this test alone reads and writes this variable.
        unsafe { std::env::set_var(var, "t0ken") };
        let grant = |env: &str, origin: &str, name: &str| HttpGrant {
            allow: vec![AllowEntry::Url("https://api.example.com/v1/".into())],
            secret_headers: vec![SecretHeaderGrant {
                origin: origin.into(),
                name: name.into(),
                env: env.into(),
                prefix: "Bearer ".into(),
            }],
            ..HttpGrant::default()
        };
        let a = grant(var, "https://api.example.com", "Authorization")
            .resolve(Path::new("."))
            .unwrap();
        assert_eq!(a.secret_headers[0].value.expose(), "Bearer t0ken");
        assert_eq!(a.secret_headers[0].name, "authorization");
        assert!(!format!("{a:?}").contains("t0ken"));
        let err = |g: HttpGrant| g.resolve(Path::new(".")).unwrap_err();
        assert!(
            err(grant(
                "TOOLHOST_SURELY_UNSET",
                "https://api.example.com",
                "X-Key"
            ))
            .contains("is not set")
        );
        assert!(
            err(grant(var, "https://other.example", "X-Key")).contains("not in grants.http.allow")
        );
        assert!(err(grant(var, "https://api.example.com", "Host")).contains("set by the host"));
        assert!(
            err(grant(var, "https://api.example.com", "Bad Name"))
                .contains("not a valid header name")
        );
    }
}
