//! `fetch`: a toolhost tool module with one tool, `fetch_url`, that gets a
//! URL over HTTP(S) through wasi:http and returns the body as text, HTML
//! reduced to its readable text.
//!
//! The module reaches only what its grant allows (`grants.http.allow` in the
//! config); the host refuses every other request, and the error says so.
//! Redirects are reported, not followed, so every URL fetched is one the
//! model asked for. The body is read up to a limit ([`MAX_BYTES_LIMIT`] at
//! most), so no response can make the module use more memory than that.

// The doc comments of the argument types are the tool's descriptions for
// the model (its JSON schema), written for it, not for rustdoc.
#![allow(rustdoc::bare_urls)]

mod error;
mod html;
mod http;
mod url;

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_guest::{Hints, Toolbox};

pub use error::{FetchError, wit_name};
pub use html::to_text;
pub use url::Url;

/// How many bytes of the body are read unless `max_bytes` says otherwise.
pub const DEFAULT_MAX_BYTES: u64 = 65_536;

/// The largest `max_bytes` accepted.
pub const MAX_BYTES_LIMIT: u64 = 1_048_576;

/// Gets a URL (http or https) and returns its body as text. HTML is reduced
/// to its readable text: no markup, scripts, styles or head; headings,
/// paragraphs, list items and table rows on lines of their own. Plain text
/// and JSON are returned as they are; images, PDFs and other binary content
/// are refused. Redirects are not followed: a redirect is an error naming
/// the new URL, which you may fetch next. Only URLs this module is allowed
/// to reach can be fetched. At most max_bytes of the body are read; a longer
/// body is cut there and the text ends with "[truncated at N bytes]".
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchUrl {
    /// The absolute URL to get, e.g. "https://www.rust-lang.org/".
    pub url: String,
    /// The most bytes of the body to read (default 65536, at most 1048576).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1_048_576))]
    pub max_bytes: Option<u64>,
}

/// The `fetch_url` tool.
pub fn fetch_url(args: FetchUrl) -> Result<String, FetchError> {
    let max_bytes = match args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES) {
        n @ 1..=MAX_BYTES_LIMIT => n as usize,
        n => return Err(FetchError::MaxBytes(n)),
    };
    let url = Url::parse(&args.url).map_err(FetchError::InvalidUrl)?;
    let shown = url.to_string();
    let response = http::get(&url).map_err(|f| FetchError::of(f, &shown))?;
    check_status(&url, response.status, response.location.as_deref())?;
    check_encoding(response.content_encoding.as_deref())?;
    let content_type = response.content_type.clone();
    let body = response
        .read_body(max_bytes)
        .map_err(|f| FetchError::of(f, &shown))?;
    render(
        content_type.as_deref(),
        &body.bytes,
        body.truncated.then_some(max_bytes),
    )
}

/// The module's one tool: it reads the world outside, changing nothing.
pub fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool("url", fetch_url)
        .title("Fetch a URL")
        .hints(Hints {
            open_world: Some(true),
            ..Hints::pure()
        })
}

toolhost_guest::export_toolbox!(toolbox);

/// Refuses a status that is not 2xx; a redirect names where it leads.
pub fn check_status(url: &Url, status: u16, location: Option<&str>) -> Result<(), FetchError> {
    match (status, location) {
        (200..=299, _) => Ok(()),
        (300..=399, Some(location)) if !location.trim().is_empty() => Err(FetchError::Redirect {
            location: url.join(location),
        }),
        _ => Err(FetchError::Status { status }),
    }
}

/// Refuses a compressed body (it was asked for without compression).
pub fn check_encoding(content_encoding: Option<&str>) -> Result<(), FetchError> {
    match content_encoding.map(str::trim) {
        None | Some("") => Ok(()),
        Some(coding) if coding.eq_ignore_ascii_case("identity") => Ok(()),
        Some(coding) => Err(FetchError::Encoded {
            coding: coding.to_owned(),
        }),
    }
}

/// The text of a body of `content_type`; `truncated_at` is the length it
/// was cut at, if it was.
pub fn render(
    content_type: Option<&str>,
    body: &[u8],
    truncated_at: Option<usize>,
) -> Result<String, FetchError> {
    // A cut body may end in the middle of a character: drop its start.
    let body = if truncated_at.is_some() {
        without_partial_char(body)
    } else {
        body
    };
    let media_type = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let html = match media_type.as_str() {
        "text/html" | "application/xhtml+xml" => true,
        t if is_text_type(t) => false,
        "" if looks_like_html(body) => true,
        _ if is_text(body) => false,
        _ => {
            return Err(FetchError::Binary {
                media_type: Some(media_type).filter(|t| !t.is_empty()),
            });
        }
    };
    let decoded = String::from_utf8_lossy(body);
    let mut text = if html {
        match to_text(&decoded) {
            text if text.is_empty() => "[the page has no readable text]".to_owned(),
            text => text,
        }
    } else if decoded.is_empty() {
        "[the response body is empty]".to_owned()
    } else {
        decoded.into_owned()
    };
    if let Some(limit) = truncated_at {
        let _ = write!(text, "\n[truncated at {limit} bytes]"); // to a String: cannot fail
    }
    Ok(text)
}

/// Media types that are text whatever their bytes.
fn is_text_type(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || matches!(
            media_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/x-ndjson"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/csv"
                | "application/x-www-form-urlencoded"
        )
}

/// Whether `body` is UTF-8 text without NUL bytes.
fn is_text(body: &[u8]) -> bool {
    !body.contains(&0) && std::str::from_utf8(body).is_ok()
}

/// Whether an undeclared body starts like an HTML document.
fn looks_like_html(body: &[u8]) -> bool {
    let start = body.trim_ascii_start();
    let start = &start[..start.len().min(16)];
    [&b"<!doctype html"[..], b"<html"]
        .iter()
        .any(|tag| start.len() >= tag.len() && start[..tag.len()].eq_ignore_ascii_case(tag))
}

/// `bytes` without the first bytes of a UTF-8 character cut off at its end.
fn without_partial_char(bytes: &[u8]) -> &[u8] {
    let tail = bytes.len().saturating_sub(3);
    for i in (tail..bytes.len()).rev() {
        let byte = bytes[i];
        if byte & 0xC0 != 0x80 {
            let length = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if bytes.len() - i < length {
                &bytes[..i]
            } else {
                bytes
            };
        }
    }
    bytes
}

#[cfg(test)]
mod tests;
