//! [`Endpoint`]: one `host:port` of a network grant, parsed.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// One endpoint of a [`NetworkGrant`](crate::NetworkGrant), parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An IP address and port.
    Addr(SocketAddr),
    /// A host name (lowercase, no trailing dot) and port.
    Name(String, u16),
}

impl Endpoint {
    /// Parses `host:port`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Self::addr(addr, text);
        }
        let Some((host, port)) = text.rsplit_once(':') else {
            return Err(format!(
                "'{text}' has no port; write host:port, for example \"api.example.com:443\""
            ));
        };
        let port: u16 = port
            .parse()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("'{text}': the port must be a number from 1 to 65535"))?;
        if host.parse::<IpAddr>().is_ok() || host.contains(['[', ']']) {
            return Err(format!(
                "'{text}' is not a valid address; IPv6 addresses are written [::1]:8080"
            ));
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if !is_host_name(&name) {
            return Err(format!(
                "'{host}' is not a host name (letters, digits, '-' and '.'; no wildcards)"
            ));
        }
        Ok(Self::Name(name, port))
    }

    fn addr(addr: SocketAddr, text: &str) -> Result<Self, String> {
        if addr.port() == 0 {
            return Err(format!(
                "'{text}': the port must be a number from 1 to 65535"
            ));
        }
        if addr.ip().is_unspecified() {
            return Err(format!(
                "'{text}': an unspecified address (0.0.0.0, ::) cannot be connected to"
            ));
        }
        Ok(Self::Addr(addr))
    }
}

pub(in crate::policy) fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Addr(addr) => write!(f, "{addr}"),
            Endpoint::Name(host, port) => write!(f, "{host}:{port}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_or_say_why_not() {
        let ok = |t: &str| Endpoint::parse(t).unwrap();
        assert_eq!(
            ok("127.0.0.1:8080"),
            Endpoint::Addr("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            ok("[::1]:443"),
            Endpoint::Addr("[::1]:443".parse().unwrap())
        );
        assert_eq!(
            ok("API.Example.com.:443"),
            Endpoint::Name("api.example.com".into(), 443)
        );
        assert_eq!(
            ok("API.Example.com.:443").to_string(),
            "api.example.com:443"
        );
        assert_eq!(ok("[::1]:443").to_string(), "[::1]:443");
        let err = |t: &str| Endpoint::parse(t).unwrap_err();
        assert!(err("example.com").contains("no port"));
        assert!(err("example.com:0").contains("from 1 to 65535"));
        assert!(err("example.com:http").contains("from 1 to 65535"));
        assert!(err("*.example.com:443").contains("not a host name"));
        assert!(err("::1:443").contains("[::1]:8080"));
        assert!(err("0.0.0.0:80").contains("unspecified"));
    }
}
