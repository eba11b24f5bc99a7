//! Why a fetch failed, said so that the model knows what to do next.

use std::fmt;

use wasi::http::types::ErrorCode;

use crate::MAX_BYTES_LIMIT;
use crate::http::Failure;

/// Why `fetch_url` returned no text.
#[derive(Debug)]
pub enum FetchError {
    /// `max_bytes` is 0 or above [`MAX_BYTES_LIMIT`].
    MaxBytes(u64),
    /// The URL cannot be fetched (why).
    InvalidUrl(String),
    /// A 3xx with a `Location` (resolved against the URL).
    Redirect { location: String },
    /// Any other status that is not 2xx.
    Status { status: u16 },
    /// A body in a `Content-Encoding` other than identity.
    Encoded { coding: String },
    /// A body that is not text, of this media type if it declares one.
    Binary { media_type: Option<String> },
    /// The host's wasi:http error for the request to `url`.
    Http { code: ErrorCode, url: String },
    /// The body stream failed without an error code.
    Body { detail: String },
    /// The host refused a step of the request.
    Refused { what: &'static str },
}

impl FetchError {
    /// `failure` of the request to `url`.
    pub(crate) fn of(failure: Failure, url: &str) -> FetchError {
        match failure {
            Failure::Code(code) => FetchError::Http {
                code,
                url: url.to_owned(),
            },
            Failure::Stream(detail) => FetchError::Body { detail },
            Failure::Refused(what) => FetchError::Refused { what },
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::MaxBytes(n) => {
                write!(f, "max_bytes must be from 1 to {MAX_BYTES_LIMIT}, got {n}")
            }
            FetchError::InvalidUrl(why) => f.write_str(why),
            FetchError::Redirect { location } => write!(
                f,
                "the server redirected to {location}; fetch that URL if it is allowed"
            ),
            FetchError::Status { status } => {
                write!(f, "the server answered {status}")?;
                if let Some(reason) = reason(*status) {
                    write!(f, " {reason}")?;
                }
                match status {
                    300..=399 => f.write_str(" without a Location to follow"),
                    401 | 403 => f.write_str(": access is refused, and fetch_url cannot log in"),
                    404 | 410 => f.write_str(": there is no such page; check the URL"),
                    429 => f.write_str(": too many requests; wait before trying again"),
                    500..=599 => f.write_str(": the server failed; try again later"),
                    _ => Ok(()),
                }
            }
            FetchError::Encoded { coding } => write!(
                f,
                "the server sent the body compressed ({coding}), which fetch_url cannot decode"
            ),
            FetchError::Binary { media_type } => {
                match media_type {
                    Some(t) => write!(f, "the response is {t}, not text")?,
                    None => f.write_str("the response is not text (and declares no type)")?,
                }
                f.write_str("; fetch_url returns only text, HTML and JSON")
            }
            FetchError::Http { code, url } => {
                write!(f, "{} [{}]", advice(code, url), wit_name(code))
            }
            FetchError::Body { detail } => {
                write!(f, "reading the response body failed ({detail}); try again")
            }
            FetchError::Refused { what } => write!(
                f,
                "the host could not {what}; if the URL is right, tell the operator"
            ),
        }
    }
}

impl std::error::Error for FetchError {}

/// What went wrong and what to do, for the request to `url`.
fn advice(code: &ErrorCode, url: &str) -> String {
    let detail = |payload: Option<String>| payload.map(|p| format!(" ({p})")).unwrap_or_default();
    match code {
        ErrorCode::DnsTimeout => "looking up the host name timed out; try again later".into(),
        ErrorCode::DnsError(p) => format!(
            "the host name of {url} could not be looked up{}; check the URL",
            detail(p.rcode.clone())
        ),
        ErrorCode::DestinationNotFound => {
            format!("the host of {url} was not found; check the URL")
        }
        ErrorCode::DestinationUnavailable => {
            format!("the server of {url} is unavailable; try again later")
        }
        ErrorCode::DestinationIpProhibited => format!(
            "the host of {url} has an address this module may not connect to \
             (such as a private or loopback address)"
        ),
        ErrorCode::DestinationIpUnroutable => {
            format!("the address of {url}'s host cannot be reached")
        }
        ErrorCode::ConnectionRefused => format!(
            "the server of {url} refused the connection; check the port, or try again later"
        ),
        ErrorCode::ConnectionTerminated => {
            "the server closed the connection before answering; try again".into()
        }
        ErrorCode::ConnectionTimeout => {
            "connecting to the server timed out; try again later".into()
        }
        ErrorCode::ConnectionReadTimeout => {
            "the server stopped sending (read timeout); try again later".into()
        }
        ErrorCode::ConnectionWriteTimeout => {
            "sending the request timed out; try again later".into()
        }
        ErrorCode::ConnectionLimitReached => {
            "too many connections are open; try again later".into()
        }
        ErrorCode::TlsProtocolError => {
            format!("the TLS handshake with the server of {url} failed")
        }
        ErrorCode::TlsCertificateError => format!(
            "the TLS certificate of the server of {url} is not valid for it (expired, \
             self-signed or for another name), so the page cannot be fetched securely"
        ),
        ErrorCode::TlsAlertReceived(p) => format!(
            "the server of {url} aborted the TLS handshake{}",
            detail(p.alert_message.clone())
        ),
        ErrorCode::HttpRequestDenied => format!(
            "the request was denied: {url} is not in this module's HTTP allow-list \
             (grants.http.allow)"
        ),
        ErrorCode::HttpRequestLengthRequired => {
            "the server wants a request length, which a GET does not have".into()
        }
        ErrorCode::HttpRequestBodySize(_) => "the request body is too large".into(),
        ErrorCode::HttpRequestMethodInvalid => "the host does not allow a GET here".into(),
        ErrorCode::HttpRequestUriInvalid => format!("{url} is not a valid URL; check it"),
        ErrorCode::HttpRequestUriTooLong => "the URL is too long; shorten it".into(),
        ErrorCode::HttpRequestHeaderSectionSize(_)
        | ErrorCode::HttpRequestHeaderSize(_)
        | ErrorCode::HttpRequestTrailerSectionSize(_)
        | ErrorCode::HttpRequestTrailerSize(_) => "the request's headers are too large".into(),
        ErrorCode::HttpResponseIncomplete => {
            "the response ended before it was complete; try again".into()
        }
        ErrorCode::HttpResponseHeaderSectionSize(_) | ErrorCode::HttpResponseHeaderSize(_) => {
            "the response's headers are larger than the host accepts".into()
        }
        ErrorCode::HttpResponseBodySize(size) => format!(
            "the response body is larger than the host accepts{}; try a smaller max_bytes",
            detail(size.map(|n| format!("{n} bytes")))
        ),
        ErrorCode::HttpResponseTrailerSectionSize(_) | ErrorCode::HttpResponseTrailerSize(_) => {
            "the response's trailers are larger than the host accepts".into()
        }
        ErrorCode::HttpResponseTransferCoding(coding) => format!(
            "the response has a transfer coding the host cannot read{}",
            detail(coding.clone())
        ),
        ErrorCode::HttpResponseContentCoding(coding) => format!(
            "the response has a content coding that cannot be decoded{}",
            detail(coding.clone())
        ),
        ErrorCode::HttpResponseTimeout => {
            format!("the server of {url} did not answer in time; try again later")
        }
        ErrorCode::HttpUpgradeFailed => "the connection upgrade failed".into(),
        ErrorCode::HttpProtocolError => {
            format!("the server of {url} did not answer with valid HTTP")
        }
        ErrorCode::LoopDetected => "the request loops through a proxy".into(),
        ErrorCode::ConfigurationError => {
            "the host's HTTP configuration is broken; tell the operator".into()
        }
        ErrorCode::InternalError(message) => format!(
            "the host failed to make the request{}; try again, and tell the operator if \
             it keeps failing",
            detail(message.clone())
        ),
    }
}

/// The WIT name of `code`'s case of wasi:http's `error-code`.
pub fn wit_name(code: &ErrorCode) -> &'static str {
    match code {
        ErrorCode::DnsTimeout => "DNS-timeout",
        ErrorCode::DnsError(_) => "DNS-error",
        ErrorCode::DestinationNotFound => "destination-not-found",
        ErrorCode::DestinationUnavailable => "destination-unavailable",
        ErrorCode::DestinationIpProhibited => "destination-IP-prohibited",
        ErrorCode::DestinationIpUnroutable => "destination-IP-unroutable",
        ErrorCode::ConnectionRefused => "connection-refused",
        ErrorCode::ConnectionTerminated => "connection-terminated",
        ErrorCode::ConnectionTimeout => "connection-timeout",
        ErrorCode::ConnectionReadTimeout => "connection-read-timeout",
        ErrorCode::ConnectionWriteTimeout => "connection-write-timeout",
        ErrorCode::ConnectionLimitReached => "connection-limit-reached",
        ErrorCode::TlsProtocolError => "TLS-protocol-error",
        ErrorCode::TlsCertificateError => "TLS-certificate-error",
        ErrorCode::TlsAlertReceived(_) => "TLS-alert-received",
        ErrorCode::HttpRequestDenied => "HTTP-request-denied",
        ErrorCode::HttpRequestLengthRequired => "HTTP-request-length-required",
        ErrorCode::HttpRequestBodySize(_) => "HTTP-request-body-size",
        ErrorCode::HttpRequestMethodInvalid => "HTTP-request-method-invalid",
        ErrorCode::HttpRequestUriInvalid => "HTTP-request-URI-invalid",
        ErrorCode::HttpRequestUriTooLong => "HTTP-request-URI-too-long",
        ErrorCode::HttpRequestHeaderSectionSize(_) => "HTTP-request-header-section-size",
        ErrorCode::HttpRequestHeaderSize(_) => "HTTP-request-header-size",
        ErrorCode::HttpRequestTrailerSectionSize(_) => "HTTP-request-trailer-section-size",
        ErrorCode::HttpRequestTrailerSize(_) => "HTTP-request-trailer-size",
        ErrorCode::HttpResponseIncomplete => "HTTP-response-incomplete",
        ErrorCode::HttpResponseHeaderSectionSize(_) => "HTTP-response-header-section-size",
        ErrorCode::HttpResponseHeaderSize(_) => "HTTP-response-header-size",
        ErrorCode::HttpResponseBodySize(_) => "HTTP-response-body-size",
        ErrorCode::HttpResponseTrailerSectionSize(_) => "HTTP-response-trailer-section-size",
        ErrorCode::HttpResponseTrailerSize(_) => "HTTP-response-trailer-size",
        ErrorCode::HttpResponseTransferCoding(_) => "HTTP-response-transfer-coding",
        ErrorCode::HttpResponseContentCoding(_) => "HTTP-response-content-coding",
        ErrorCode::HttpResponseTimeout => "HTTP-response-timeout",
        ErrorCode::HttpUpgradeFailed => "HTTP-upgrade-failed",
        ErrorCode::HttpProtocolError => "HTTP-protocol-error",
        ErrorCode::LoopDetected => "loop-detected",
        ErrorCode::ConfigurationError => "configuration-error",
        ErrorCode::InternalError(_) => "internal-error",
    }
}

/// The reason phrase of common statuses.
fn reason(status: u16) -> Option<&'static str> {
    Some(match status {
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        414 => "URI Too Long",
        429 => "Too Many Requests",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}
