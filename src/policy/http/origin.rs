//! [`Scheme`], [`Host`] and [`Origin`]: where a request goes, and the URLs
//! they are read from.

use std::fmt;
use std::net::IpAddr;

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

    pub(super) fn parse(text: &str) -> Option<Self> {
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
        crate::policy::endpoint::is_host_name(&name).then_some(Host::Name(name))
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

/// Splits `scheme://authority/path` (no query, fragment or user info).
pub(super) fn split_url(text: &str) -> Result<(Scheme, &str, &str), String> {
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
pub(super) fn parse_authority(scheme: Scheme, authority: &str) -> Option<Origin> {
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

pub(super) fn parse_origin(text: &str) -> Result<Origin, String> {
    let (scheme, authority, path) = split_url(text)?;
    if !path.is_empty() && path != "/" {
        return Err(format!("'{text}': an origin has no path"));
    }
    parse_authority(scheme, authority).ok_or_else(|| bad_authority(text))
}

pub(super) fn bad_authority(text: &str) -> String {
    format!(
        "'{text}': the host must be a host name or IP address ([::1] for IPv6) and the port \
         a number from 1 to 65535"
    )
}
