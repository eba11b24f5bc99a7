//! The HTTP grant: which origins a module's `wasi:http` requests may reach,
//! with which methods, and which headers the host adds for it; as written
//! ([`HttpGrant`]) and resolved ([`HttpAccess`]), with the one decision every
//! request goes through ([`HttpAccess::decide`]).
//!
//! ```toml
//! [modules.grants.http]
//! allow = ["https://api.example.com/v1/", "http://127.0.0.1:8080"]
//! methods = ["GET", "POST"]
//!
//! [[modules.grants.http.secret_headers]]
//! origin = "https://api.example.com"
//! name = "Authorization"
//! env = "EXAMPLE_TOKEN"
//! prefix = "Bearer "
//! ```

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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

/// The root certificates HTTPS servers are checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsRoots {
    /// Mozilla's root store, built into toolhost (the default).
    #[default]
    Bundled,
    /// The operating system's root store, read at load.
    Platform,
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

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain HTTP: only where an allow entry says `http://`.
    Http,
    /// HTTP over TLS.
    Https,
}

impl Scheme {
    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "http" => Some(Scheme::Http),
            "https" => Some(Scheme::Https),
            _ => None,
        }
    }
}

/// A host: a name (lowercase, no trailing dot) or an IP address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name.
    Name(String),
    /// An IP address, written in the entry itself.
    Ip(IpAddr),
}

impl Host {
    /// Parses a URL's host: `api.example.com`, `127.0.0.1` or `[::1]`.
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return inner
                .parse::<std::net::Ipv6Addr>()
                .ok()
                .map(|ip| Host::Ip(ip.into()));
        }
        if let Ok(ip) = text.parse::<std::net::Ipv4Addr>() {
            return Some(Host::Ip(ip.into()));
        }
        let name = text.trim_end_matches('.').to_ascii_lowercase();
        super::endpoint::is_host_name(&name).then_some(Host::Name(name))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

/// Scheme, host and port: where a request goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// The host.
    pub host: Host,
    /// The port (the scheme's default when the URL has none).
    pub port: u16,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.host)?;
        if self.port != self.scheme.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// One allow entry, checked: an origin and the path prefix under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAllow {
    /// Where requests may go.
    pub origin: Origin,
    /// The path requests must be under (`/` for any path).
    pub path_prefix: String,
    /// Whether the host name may resolve to a private address.
    pub allow_private: bool,
}

impl fmt::Display for HttpAllow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin, self.path_prefix)?;
        if self.allow_private {
            f.write_str(" (private addresses allowed)")?;
        }
        Ok(())
    }
}

/// A header value that never shows: its `Debug` prints `<secret>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<secret>")
    }
}

/// A header the host sets on requests to `origin`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHeader {
    /// The origin whose requests get it.
    pub origin: Origin,
    /// The header name, lowercase.
    pub name: String,
    /// The environment variable it was read from (for display).
    pub env: String,
    /// The whole value (prefix and variable), never shown.
    pub value: Secret,
}

/// Outbound HTTP a module's calls may make, resolved. The default allows
/// nothing: every request is denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpAccess {
    /// The allowed origins and path prefixes.
    pub allow: Vec<HttpAllow>,
    /// The allowed methods, uppercase (`None`: any).
    pub methods: Option<Vec<String>>,
    /// Extra root certificates (the contents of `ca_file`, PEM), and the
    /// file they came from.
    pub ca_file: Option<(PathBuf, Vec<u8>)>,
    /// The base root store.
    pub roots: TlsRoots,
    /// Headers the host sets, per origin.
    pub secret_headers: Vec<SecretHeader>,
}

/// A request, as far as the allow-list looks at it.
#[derive(Debug, Clone, Copy)]
pub struct RequestTarget<'a> {
    /// The URL's scheme, as the guest wrote it.
    pub scheme: &'a str,
    /// The URL's authority (`host[:port]`), as the guest wrote it.
    pub authority: &'a str,
    /// The path (without the query).
    pub path: &'a str,
    /// The method.
    pub method: &'a str,
}

/// Why a request was denied, said for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied(pub String);

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
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
    if header.env.is_empty() || header.env.contains(['=', '\0']) {
        return Err(format!(
            "'{}' is not a valid environment variable name",
            header.env
        ));
    }
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

/// Splits `scheme://authority/path` (no query, fragment or user info).
fn split_url(text: &str) -> Result<(Scheme, &str, &str), String> {
    let (scheme, rest) = text.split_once("://").ok_or_else(|| {
        format!("'{text}' is not a URL; write scheme://host[:port][/path], for example \"https://api.example.com/v1/\"")
    })?;
    let scheme = Scheme::parse(scheme)
        .ok_or_else(|| format!("'{text}': the scheme must be http or https"))?;
    if rest.contains(['?', '#']) {
        return Err(format!("'{text}': write no query or fragment"));
    }
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(format!("'{text}': write no user name or password"));
    }
    Ok((scheme, authority, path))
}

/// Parses `host[:port]` for `scheme`.
fn parse_authority(scheme: Scheme, authority: &str) -> Option<Origin> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            (host, port.parse::<u16>().ok().filter(|p| *p != 0)?)
        }
        _ => (authority, scheme.default_port()),
    };
    Some(Origin {
        scheme,
        host: Host::parse(host)?,
        port,
    })
}

fn parse_origin(text: &str) -> Result<Origin, String> {
    let (scheme, authority, path) = split_url(text)?;
    if !path.is_empty() && path != "/" {
        return Err(format!("'{text}': an origin has no path"));
    }
    parse_authority(scheme, authority).ok_or_else(|| bad_authority(text))
}

fn bad_authority(text: &str) -> String {
    format!(
        "'{text}': the host must be a host name or IP address ([::1] for IPv6) and the port \
         a number from 1 to 65535"
    )
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

/// Whether `path` has a `.` or `..` segment, also written with `%2e`.
fn has_dot_segment(path: &str) -> bool {
    path.split(['/', '\\']).any(|segment| {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        decoded == "." || decoded == ".."
    })
}

/// Whether `path` is under `prefix`: a prefix ending in `/` takes what
/// starts with it; another takes itself and what is below it.
fn under_prefix(path: &str, prefix: &str) -> bool {
    if prefix == "/" {
        return true;
    }
    if prefix.ends_with('/') {
        return path.starts_with(prefix);
    }
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl HttpAccess {
    /// Whether any request may be made.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
    }

    /// The allow entry `request` falls under, or why it is denied: its
    /// scheme, host, port, path or method is not allowed. Decided before
    /// any lookup or connection.
    pub fn decide(&self, request: RequestTarget<'_>) -> Result<&HttpAllow, Denied> {
        let target = || {
            format!(
                "{} {}://{}{}",
                request.method, request.scheme, request.authority, request.path
            )
        };
        if self.allow.is_empty() {
            return Err(Denied(format!(
                "{}: this module has no HTTP grant (grants.http.allow)",
                target()
            )));
        }
        let scheme = Scheme::parse(request.scheme)
            .ok_or_else(|| Denied(format!("{}: only http and https are allowed", target())))?;
        if request.authority.contains('@') {
            return Err(Denied(format!("{}: user info in the URL", target())));
        }
        let origin = parse_authority(scheme, request.authority)
            .ok_or_else(|| Denied(format!("{}: the host or port is not valid", target())))?;
        let path = if request.path.is_empty() {
            "/"
        } else {
            request.path
        };
        let entry = self
            .allow
            .iter()
            .filter(|a| a.origin == origin)
            .find(|a| under_prefix(path, &a.path_prefix));
        let Some(entry) = entry else {
            let reason = if self.allow.iter().any(|a| a.origin == origin) {
                "the path is outside the allowed path prefixes"
            } else {
                "the origin is not in grants.http.allow"
            };
            return Err(Denied(format!("{}: {reason}", target())));
        };
        if entry.path_prefix != "/" && (has_dot_segment(path) || has_escaped_separator(path)) {
            return Err(Denied(format!(
                "{}: the path has '.', '..' or escaped '/' segments, which a path prefix cannot check",
                target()
            )));
        }
        if let Some(methods) = &self.methods
            && !methods
                .iter()
                .any(|m| m.eq_ignore_ascii_case(request.method))
        {
            return Err(Denied(format!(
                "{}: the method is not in grants.http.methods",
                target()
            )));
        }
        Ok(entry)
    }

    /// The secret headers for requests to `origin`.
    pub fn secrets_for<'a>(&'a self, origin: &'a Origin) -> impl Iterator<Item = &'a SecretHeader> {
        self.secret_headers
            .iter()
            .filter(move |s| s.origin == *origin)
    }
}

fn has_escaped_separator(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.contains("%2f") || lower.contains("%5c") || path.contains('\\')
}

/// Whether `ip` is one the SSRF guard refuses unless allowed: loopback,
/// private, link-local (cloud metadata), shared, unspecified, broadcast,
/// multicast or reserved; IPv4 inside IPv6 is judged as IPv4.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                // IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16)
                || (v6.segments()[..6] == [0; 6])
                || (v6.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0])
                || first == 0x2002
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(allow: &[&str], methods: Option<&[&str]>) -> HttpAccess {
        let grant = HttpGrant {
            allow: allow
                .iter()
                .map(|a| AllowEntry::Url(a.to_string()))
                .collect(),
            methods: methods.map(|m| m.iter().map(|s| s.to_string()).collect()),
            ..HttpGrant::default()
        };
        grant.resolve(Path::new(".")).unwrap()
    }

    fn req<'a>(
        method: &'a str,
        scheme: &'a str,
        authority: &'a str,
        path: &'a str,
    ) -> RequestTarget<'a> {
        RequestTarget {
            scheme,
            authority,
            path,
            method,
        }
    }

    #[test]
    fn only_what_the_list_names_is_allowed() {
        let a = access(
            &[
                "https://api.example.com/v1/",
                "http://127.0.0.1:8080",
                "https://[::1]:9443/x",
            ],
            None,
        );
        let ok = |r| a.decide(r).is_ok();
        assert!(ok(req("GET", "https", "api.example.com", "/v1/items")));
        assert!(ok(req("GET", "https", "API.example.com:443", "/v1/")));
        assert!(!ok(req("GET", "https", "api.example.com", "/v1")));
        assert!(!ok(req("GET", "https", "api.example.com", "/v2/items")));
        assert!(!ok(req("GET", "http", "api.example.com", "/v1/items")));
        assert!(!ok(req(
            "GET",
            "https",
            "api.example.com:8443",
            "/v1/items"
        )));
        assert!(!ok(req("GET", "https", "evil.example.com", "/v1/items")));
        assert!(!ok(req("GET", "https", "api.example.com.evil.com", "/v1/")));
        assert!(!ok(req("GET", "https", "user@api.example.com", "/v1/")));
        assert!(!ok(req("GET", "https", "api.example.com", "/v1/../admin")));
        assert!(!ok(req(
            "GET",
            "https",
            "api.example.com",
            "/v1/%2e%2E/admin"
        )));
        assert!(!ok(req("GET", "https", "api.example.com", "/v1/a%2fb")));
        assert!(ok(req("POST", "http", "127.0.0.1:8080", "/anything/../x")));
        assert!(!ok(req("GET", "http", "127.0.0.1:8081", "/")));
        assert!(!ok(req("GET", "http", "127.0.0.1", "/")));
        assert!(!ok(req("GET", "ftp", "127.0.0.1:8080", "/")));
        assert!(ok(req("GET", "https", "[::1]:9443", "/x")));
        assert!(ok(req("GET", "https", "[::1]:9443", "/x/y")));
        assert!(!ok(req("GET", "https", "[::1]:9443", "/xy")));
        let denied = a
            .decide(req("GET", "https", "api.example.com", "/v2/"))
            .unwrap_err();
        assert!(
            denied.0.contains("outside the allowed path prefixes"),
            "{denied}"
        );
        let denied = a
            .decide(req("GET", "https", "other.example", "/"))
            .unwrap_err();
        assert!(denied.0.contains("not in grants.http.allow"), "{denied}");
    }

    #[test]
    fn methods_are_checked_when_listed() {
        let a = access(&["http://127.0.0.1:1"], Some(&["get", "POST"]));
        assert!(a.decide(req("GET", "http", "127.0.0.1:1", "/")).is_ok());
        assert!(a.decide(req("POST", "http", "127.0.0.1:1", "/")).is_ok());
        let e = a
            .decide(req("DELETE", "http", "127.0.0.1:1", "/"))
            .unwrap_err();
        assert!(e.0.contains("grants.http.methods"), "{e}");
        assert!(
            HttpAccess::default()
                .decide(req("GET", "http", "127.0.0.1:1", "/"))
                .is_err()
        );
    }

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

    #[test]
    fn internal_addresses_are_recognized() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "172.32.0.1"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }
}
