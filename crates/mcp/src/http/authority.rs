//! Which `Host` and `Origin` header values the server answers: the
//! protection against DNS rebinding (a page on another site that makes the
//! browser send requests to a loopback server under that site's name).

use std::net::{IpAddr, SocketAddr};

/// The `Host` values accepted: each entry is a name or address, which
/// accepts any port, or `name:port`, which accepts that port only. Names
/// compare without case, IPv6 addresses with or without brackets. No
/// entries: any `Host` (the token guards such a server).
#[derive(Debug, Clone)]
pub(crate) struct Hosts(Vec<(String, Option<u16>)>);

impl Hosts {
    /// The rules of `entries`.
    pub(crate) fn new(entries: &[String]) -> Hosts {
        Hosts(entries.iter().filter_map(|e| split_authority(e)).collect())
    }

    /// Whether a request with `Host: value` is answered.
    pub(crate) fn allow(&self, value: &str) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let Some((host, port)) = split_authority(value) else {
            return false;
        };
        self.0
            .iter()
            .any(|(name, allowed)| *name == host && allowed.is_none_or(|p| Some(p) == port))
    }
}

/// The `Origin` values accepted: `scheme://host` (the scheme's default port),
/// `scheme://host:port`, `scheme://host:*` (any port) or `null`. A request
/// without an `Origin` (not sent by a browser) is not affected.
#[derive(Debug, Clone)]
pub(crate) struct Origins(Vec<Origin>);

/// One origin as compared: scheme and host in lowercase, the port (the
/// scheme's default when left out; `None`: any), or the opaque `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origins {
    /// The rules of `entries` (entries that are not origins are ignored).
    pub(crate) fn new(entries: &[String]) -> Origins {
        Origins(
            entries
                .iter()
                .filter_map(|e| parse_origin(e, true))
                .collect(),
        )
    }

    /// Whether a request with `Origin: value` is answered.
    pub(crate) fn allow(&self, value: &str) -> bool {
        let Some(origin) = parse_origin(value, false) else {
            return false;
        };
        self.0.iter().any(|allowed| match (allowed, &origin) {
            (Origin::Null, Origin::Null) => true,
            (
                Origin::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => scheme == s && host == h && (port.is_none() || port == p),
            _ => false,
        })
    }
}

/// The origins of a server listening at `local`, when that is a loopback
/// address: `http://` and the address, or `localhost`, with its port. A
/// page the server itself serves, or a local inspector, sends one of them;
/// a rebinding site cannot, since its origin carries its own name. Empty
/// off loopback, where only `allowed_origins` count.
pub(crate) fn own_origins(local: SocketAddr) -> Vec<String> {
    if !local.ip().is_loopback() {
        return Vec::new();
    }
    let port = local.port();
    let address = match local.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    vec![
        format!("http://{address}:{port}"),
        format!("http://localhost:{port}"),
    ]
}

/// `host[:port]` as (lowercase host without brackets, port); `None` if it
/// is not one.
fn split_authority(text: &str) -> Option<(String, Option<u16>)> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?.parse().ok()?)),
        }
    } else if text.matches(':').count() > 1 {
        // A bare IPv6 address.
        (text, None)
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port.parse().ok()?)),
            None => (text, None),
        }
    };
    if host.is_empty() || host.contains(['/', '@', ' ', '\t']) {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// An origin; as an allow-list `entry`, `:*` means any port.
fn parse_origin(text: &str, entry: bool) -> Option<Origin> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let (scheme, rest) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    let (authority, any_port) = match rest.strip_suffix(":*") {
        Some(authority) if entry => (authority, true),
        _ => (rest, false),
    };
    let (host, port) = split_authority(authority)?;
    let port = if any_port { None } else { port.or(default) };
    if port.is_none() && !any_port {
        return None;
    }
    Some(Origin::Tuple { scheme, host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn hosts_match_by_name_and_port() {
        let hosts = Hosts::new(&list(&[
            "localhost",
            "127.0.0.1",
            "::1",
            "api.example:8443",
        ]));
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1:1",
            "[::1]:80",
            "[::1]",
            "api.example:8443",
        ] {
            assert!(hosts.allow(ok), "{ok}");
        }
        for refused in [
            "rebound.example",
            "api.example",
            "api.example:443",
            "localhost.evil",
            "",
            "127.0.0.1:x",
            "user@localhost",
        ] {
            assert!(!hosts.allow(refused), "{refused}");
        }
        assert!(Hosts::new(&[]).allow("anything.example"));
    }

    #[test]
    fn origins_match_scheme_host_and_port() {
        let origins = Origins::new(&list(&[
            "https://app.example",
            "http://localhost:*",
            "null",
        ]));
        for ok in [
            "https://app.example",
            "https://APP.example:443",
            "http://localhost:3000",
            "null",
        ] {
            assert!(origins.allow(ok), "{ok}");
        }
        for refused in [
            "http://app.example",
            "https://app.example:8443",
            "https://evil.example",
            "https://localhost:3000",
            "garbage",
            "",
        ] {
            assert!(!origins.allow(refused), "{refused}");
        }
        assert!(!Origins::new(&[]).allow("https://app.example"));
    }

    #[test]
    fn a_loopback_server_accepts_its_own_origin_only() {
        let own = Origins::new(&own_origins("127.0.0.1:8080".parse().unwrap()));
        for ok in ["http://127.0.0.1:8080", "http://localhost:8080"] {
            assert!(own.allow(ok), "{ok}");
        }
        for refused in [
            "http://127.0.0.1:8081",
            "https://127.0.0.1:8080",
            "http://localhost",
            "http://rebound.example:8080",
            "null",
        ] {
            assert!(!own.allow(refused), "{refused}");
        }
        let v6 = Origins::new(&own_origins("[::1]:9000".parse().unwrap()));
        assert!(v6.allow("http://[::1]:9000"));
        assert!(!v6.allow("http://[::1]:9001"));
        assert!(own_origins("0.0.0.0:8080".parse().unwrap()).is_empty());
        assert!(own_origins("10.1.2.3:8080".parse().unwrap()).is_empty());
    }
}
