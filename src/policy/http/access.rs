//! [`HttpAccess`]: the resolved HTTP grant, and the allow-list decision
//! every request goes through before anything is looked up or connected.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::origin::{Origin, Scheme, parse_authority};

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
pub struct Secret(pub(super) String);

impl Secret {
    /// The value, for the one place that sends it.
    pub(crate) fn expose(&self) -> &str {
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
    pub(super) allow: Vec<HttpAllow>,
    /// The allowed methods, uppercase (`None`: any).
    pub(super) methods: Option<Vec<String>>,
    /// Extra root certificates (the contents of `ca_file`, PEM), and the
    /// file they came from.
    pub(super) ca_file: Option<(PathBuf, Vec<u8>)>,
    /// The base root store.
    pub(super) roots: TlsRoots,
    /// Headers the host sets, per origin.
    pub(super) secret_headers: Vec<SecretHeader>,
}

/// A request, as far as the allow-list looks at it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestTarget<'a> {
    /// The URL's scheme, as the guest wrote it.
    pub(crate) scheme: &'a str,
    /// The URL's authority (`host[:port]`), as the guest wrote it.
    pub(crate) authority: &'a str,
    /// The path (without the query).
    pub(crate) path: &'a str,
    /// The method.
    pub(crate) method: &'a str,
}

/// Why a request was denied, said for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denied(String);

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `path` has a `.` or `..` segment, also written with `%2e`.
pub(super) fn has_dot_segment(path: &str) -> bool {
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

    /// The allowed origins and path prefixes.
    pub fn allow(&self) -> &[HttpAllow] {
        &self.allow
    }

    /// The allowed methods, uppercase (`None`: any).
    pub fn methods(&self) -> Option<&[String]> {
        self.methods.as_deref()
    }

    /// The base root store HTTPS servers are checked against.
    pub fn roots(&self) -> TlsRoots {
        self.roots
    }

    /// The file of extra root certificates (`ca_file`), if there is one.
    pub fn ca_file(&self) -> Option<&Path> {
        self.ca_file.as_ref().map(|(path, _)| path.as_path())
    }

    /// The extra root certificates (PEM), read from `ca_file` at load.
    pub(crate) fn ca_pem(&self) -> Option<&[u8]> {
        self.ca_file.as_ref().map(|(_, pem)| pem.as_slice())
    }

    /// The headers the host sets, per origin (their values never show).
    pub fn secret_headers(&self) -> &[SecretHeader] {
        &self.secret_headers
    }

    /// The allow entry `request` falls under, or why it is denied: its
    /// scheme, host, port, path or method is not allowed. Decided before
    /// any lookup or connection.
    pub(crate) fn decide(&self, request: RequestTarget<'_>) -> Result<&HttpAllow, Denied> {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::policy::http::{AllowEntry, HttpGrant};

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
}
