//! Absolute http and https URLs, checked and split into the parts a
//! wasi:http request takes.

use std::fmt::{self, Write as _};

/// The longest URL accepted, in bytes.
pub const MAX_URL_LENGTH: usize = 8192;

/// An absolute http or https URL without its fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Whether the scheme is https.
    pub https: bool,
    /// `host` or `host:port`, in lower case.
    pub authority: String,
    /// `/path?query`, never empty, with spaces and non-ASCII characters
    /// percent-encoded.
    pub path_with_query: String,
}

impl Url {
    /// Checks and splits `text`; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Url, String> {
        let text = text.trim();
        if text.len() > MAX_URL_LENGTH {
            return Err(format!(
                "the URL is too long: {} bytes (the limit is {MAX_URL_LENGTH})",
                text.len()
            ));
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(format!(
                "'{text}' is not an absolute URL: it must start with https:// or http://"
            ));
        };
        let https = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err(format!(
                "only http and https URLs can be fetched, not {scheme}:"
            ));
        };
        if text.chars().any(char::is_control) {
            return Err("the URL contains control characters".into());
        }
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        check_authority(authority)?;
        let path_with_query = match tail {
            "" => "/".to_owned(),
            query if query.starts_with('?') => format!("/{}", encode(query)),
            path => encode(path),
        };
        Ok(Url {
            https,
            authority: authority.to_ascii_lowercase(),
            path_with_query,
        })
    }

    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// `location` (a redirect's `Location`) as an absolute URL, resolved
    /// against this one.
    pub fn join(&self, location: &str) -> String {
        let location = location.trim();
        let scheme = self.scheme();
        if has_scheme(location) {
            location.to_owned()
        } else if location.starts_with("//") {
            format!("{scheme}:{location}")
        } else if location.starts_with('/') {
            format!("{scheme}://{}{location}", self.authority)
        } else {
            let path = self.path_with_query.split('?').next().unwrap_or("/");
            let base = if location.starts_with('?') {
                path
            } else {
                &path[..path.rfind('/').map_or(0, |i| i + 1)]
            };
            format!("{scheme}://{}{base}{location}", self.authority)
        }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme(),
            self.authority,
            self.path_with_query
        )
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`, without credentials.
fn check_authority(authority: &str) -> Result<(), String> {
    if authority.contains('@') {
        return Err("the URL must not contain a user name or password".into());
    }
    if !authority.is_ascii() {
        return Err(
            "the host name must be ASCII: write an internationalized name in punycode (xn--...)"
                .into(),
        );
    }
    if let Some(c) = authority
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || "-._~:[]%".contains(c)))
    {
        return Err(format!("the URL's host contains '{c}'"));
    }
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => (&authority[..i], Some(&authority[i + 1..])),
        _ => (authority, None),
    };
    if host.is_empty() {
        return Err("the URL has no host".into());
    }
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Err(format!("'{port}' is not a port number (1 to 65535)"));
    }
    Ok(())
}

/// Whether `text` starts with a scheme (`letter *(letter / digit / + - .) ":"`).
fn has_scheme(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// `text` with the bytes a URL's path or query may not hold as they are
/// (spaces, non-ASCII, `"<>\^`{|}`) percent-encoded; `%` is left alone,
/// taken to start an escape already.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}"); // writing to a String cannot fail
        }
    }
    out
}
