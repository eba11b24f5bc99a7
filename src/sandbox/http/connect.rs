//! The connection of one request: the host's own lookup of the granted
//! name, the SSRF guard on the addresses found, TCP to exactly an address
//! that passed it, and TLS for `https`.

use std::io;
use std::net::SocketAddr;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use wasmtime_wasi_http::Error;

use super::shared::Shared;
use crate::policy::{Host, HttpAllow, Scheme, is_internal};
use crate::sandbox::resolver::LookupFailure;

/// A connection a request is sent over: TCP, or TLS over TCP.
pub(in crate::sandbox) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A connection to a request's origin.
pub(in crate::sandbox) type Stream = Box<dyn Io>;

/// Opens a connection to `entry`'s origin.
pub(super) async fn open(shared: &Shared, entry: &HttpAllow) -> Result<Stream, Error> {
    let addresses = addresses(shared, entry).await?;
    let tcp = connect_any(&addresses).await?;
    // Requests are small and latency matters more than packets.
    let _ = tcp.set_nodelay(true);
    match entry.origin.scheme {
        Scheme::Http => Ok(Box::new(tcp)),
        Scheme::Https => tls(shared, entry, tcp).await,
    }
}

/// The addresses to try for `entry`: the address the entry names, or what
/// its host name resolves to now, less the internal addresses unless the
/// entry allows them.
async fn addresses(shared: &Shared, entry: &HttpAllow) -> Result<Vec<SocketAddr>, Error> {
    let port = entry.origin.port;
    let name = match &entry.origin.host {
        Host::Ip(ip) => return Ok(vec![SocketAddr::new(*ip, port)]),
        Host::Name(name) => name,
    };
    let found = shared
        .resolver
        .lookup(name, shared.deadline.get(), &shared.lookups)
        .await
        .map_err(|failure| match failure {
            LookupFailure::TimedOut => Error::DnsTimeout,
            LookupFailure::Unresolvable => Error::DnsError {
                rcode: Some("NXDOMAIN".into()),
                info_code: None,
            },
        })?;
    let allowed: Vec<SocketAddr> = found
        .iter()
        .filter(|ip| entry.allow_private || !is_internal(**ip))
        .map(|ip| SocketAddr::new(*ip, port))
        .collect();
    if allowed.is_empty() {
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        shared.note(format!(
            "an HTTP request to {} was refused: {name} resolves to {}, an internal address \
             (loopback, private, link-local or unspecified); name that address in \
             grants.http.allow, or set allow_private = true, to allow it",
            entry.origin,
            shown.join(", ")
        ));
        return Err(Error::DestinationIpProhibited);
    }
    Ok(allowed)
}

/// TCP to the first of `addresses` that accepts.
async fn connect_any(addresses: &[SocketAddr]) -> Result<TcpStream, Error> {
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(match last {
        Some(error) if error.kind() == io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
        Some(error) if error.kind() == io::ErrorKind::TimedOut => Error::ConnectionTimeout,
        _ => Error::DestinationUnavailable,
    })
}

/// TLS over `tcp`, checking the server's certificate for `entry`'s host
/// against the module's roots.
async fn tls(shared: &Shared, entry: &HttpAllow, tcp: TcpStream) -> Result<Stream, Error> {
    let Some(client) = &shared.client else {
        return Err(Error::ConfigurationError);
    };
    let name = match &entry.origin.host {
        Host::Name(name) => {
            ServerName::try_from(name.clone()).map_err(|_| Error::HttpRequestUriInvalid)?
        }
        Host::Ip(ip) => ServerName::IpAddress((*ip).into()),
    };
    let connector = TlsConnector::from(client.tls());
    match connector.connect(name, tcp).await {
        Ok(stream) => Ok(Box::new(stream)),
        Err(error) => Err(tls_error(&error)),
    }
}

/// The `wasi:http` error for a failed TLS handshake.
fn tls_error(error: &io::Error) -> Error {
    match error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(_)) => Error::TlsCertificateError,
        Some(rustls::Error::AlertReceived(alert)) => Error::TlsAlertReceived {
            alert_id: Some(u8::from(*alert)),
            alert_message: Some(format!("{alert:?}")),
        },
        _ => Error::TlsProtocolError,
    }
}
