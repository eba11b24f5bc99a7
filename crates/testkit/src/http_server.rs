//! An HTTP/1.1 test server (plain or TLS) for the outbound-HTTP tests.
//!
//! Hand-rolled over tokio's TCP so that it records each request exactly as
//! received and can answer in ways a real server would not (trickling,
//! stalling, raw bytes). It runs on its own thread with its own runtime,
//! listens on `127.0.0.1` only, and stops when dropped.
//!
//! ```no_run
//! use toolhost_testkit::http_server::{Reply, TestServer};
//! let server = TestServer::start([("/hello", Reply::text(200, "hi"))]);
//! let url = server.url("/hello");
//! // ... let the host fetch `url` ...
//! assert_eq!(server.requests()[0].path, "/hello");
//! ```

use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::oneshot;
use tokio_rustls::TlsAcceptor;

/// The largest request head read (request line and headers, with the blank
/// line); a longer one is answered 431 and the connection closed.
pub const MAX_HEAD: usize = 64 * 1024;

/// The largest request body read (either framing); a larger one is answered
/// 413 and the connection closed.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The longest chunk-size or trailer line of a chunked request body.
const MAX_LINE: usize = 4 * 1024;

/// How much a closing connection reads (and discards) while waiting for the
/// client to close too, so that unread data does not turn the close into a
/// reset that could destroy the response.
const LINGER: Duration = Duration::from_secs(2);

/// How many bytes of each connection's stream [`TestServer::received`]
/// keeps.
pub const MAX_RECEIVED: usize = 64 * 1024;

/// How long [`TestServer::wait_until`] waits before it gives up.
const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// How a route answers.
///
/// Every reply but [`Reply::Trickle`], [`Reply::Stall`] and [`Reply::Raw`]
/// is framed (length or chunked), so the connection stays open for the next
/// request unless the request asked to close it. `HEAD` requests get the
/// head only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `status` with `body` as `content_type`.
    Text {
        /// The status code.
        status: u16,
        /// The body.
        body: String,
        /// The `content-type` header's value.
        content_type: String,
    },
    /// `status` (301, 302, 303, 307, 308) with `location`, empty body.
    Redirect {
        /// The status code.
        status: u16,
        /// The `location` header's value.
        location: String,
    },
    /// 200 with the request's headers as the body, one `name: value\n` line
    /// each, in order, names lowercased.
    Headers,
    /// 200 with `len` bytes `a` and a `content-length`.
    Bytes {
        /// The body's length.
        len: usize,
    },
    /// 200 with `len` bytes `a`, `transfer-encoding: chunked`.
    Chunked {
        /// The body's length.
        len: usize,
    },
    /// 200, empty body, with `count` extra headers `x-many-N`, each value
    /// `size` bytes `a`.
    ManyHeaders {
        /// How many headers.
        count: usize,
        /// Each value's length.
        size: usize,
    },
    /// A 200 head without length (the body ends at close), then one byte
    /// `a` every `interval_ms` until the client goes away.
    Trickle {
        /// The time between bytes.
        interval_ms: u64,
    },
    /// Reads the request and never answers, until the client goes away.
    Stall,
    /// Waits `ms` (less if the client goes away), then answers `then`.
    Delay {
        /// The wait.
        ms: u64,
        /// The answer after it.
        then: Box<Reply>,
    },
    /// 200 with the request's body as the body (`application/octet-stream`).
    Echo,
    /// `bytes` as they are, as the whole response; then the connection is
    /// closed. For malformed responses (an empty `bytes` closes without
    /// answering).
    Raw {
        /// What is written.
        bytes: Vec<u8>,
    },
}

impl Reply {
    /// [`Reply::Text`] as `text/plain`.
    pub fn text(status: u16, body: impl Into<String>) -> Reply {
        Reply::Text {
            status,
            body: body.into(),
            content_type: "text/plain; charset=utf-8".into(),
        }
    }

    /// [`Reply::Redirect`].
    pub fn redirect(status: u16, location: impl Into<String>) -> Reply {
        Reply::Redirect {
            status,
            location: location.into(),
        }
    }

    /// [`Reply::Delay`]: `then` after `ms`.
    pub fn delay(ms: u64, then: Reply) -> Reply {
        Reply::Delay {
            ms,
            then: Box::new(then),
        }
    }
}

/// A request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The connection it came on: 0 for the first accepted, and so on.
    pub connection: usize,
    /// The method, as sent (`GET`).
    pub method: String,
    /// The request target, as sent (`/path?query`).
    pub path: String,
    /// The version, as sent (`HTTP/1.1`).
    pub version: String,
    /// The headers in order, names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked if it was chunked).
    pub body: Vec<u8>,
    /// The head as received: request line and header lines, each ending
    /// in CRLF, and the blank line (non-UTF-8 bytes replaced).
    pub head: String,
}

impl Recorded {
    /// The value of the first header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_all(name).into_iter().next()
    }

    /// The values of every header `name` (any case), in order.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// A certificate authority for the TLS test servers: trust it (write it to
/// the host's `ca_file` with [`TestCa::write_pem`]) and their certificates
/// verify.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl TestCa {
    /// A new CA with a fresh key (ECDSA P-256).
    pub fn new() -> TestCa {
        let mut params =
            CertificateParams::new(Vec::<String>::new()).expect("no names are valid names");
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, "toolhost test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("a key is generated");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("the CA is signed");
        TestCa { issuer }
    }

    /// The CA certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// The CA certificate, DER.
    pub fn cert_der(&self) -> CertificateDer<'static> {
        self.issuer.der().clone()
    }

    /// Writes the CA certificate (PEM) to `path`.
    pub fn write_pem(&self, path: &Path) {
        std::fs::write(path, self.pem())
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    /// A server certificate signed by this CA for `names` (DNS names or IP
    /// addresses) and its private key.
    pub fn issue(&self, names: &[&str]) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        let sans: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(sans).expect("the names are valid");
        params.distinguished_name = DistinguishedName::new();
        if let Some(first) = names.first() {
            params.distinguished_name.push(DnType::CommonName, *first);
        }
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("a key is generated");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("the certificate is signed");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        (cert.der().clone(), key)
    }
}

impl Default for TestCa {
    fn default() -> TestCa {
        TestCa::new()
    }
}

impl fmt::Debug for TestCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

/// A running test server on `127.0.0.1`; it stops when dropped (its
/// connections are cut).
///
/// Routes are `(path_prefix, reply)` pairs: the first whose prefix starts
/// the request's path answers, otherwise 404.
pub struct TestServer {
    addr: SocketAddr,
    tls: bool,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a plain HTTP server with `routes`.
    pub fn start<P: Into<String>>(routes: impl IntoIterator<Item = (P, Reply)>) -> TestServer {
        TestServer::launch(routes, None)
    }

    /// Starts an HTTPS server with `routes` whose certificate, issued by
    /// `ca`, is for `localhost` and `127.0.0.1`.
    pub fn start_tls<P: Into<String>>(
        routes: impl IntoIterator<Item = (P, Reply)>,
        ca: &TestCa,
    ) -> TestServer {
        TestServer::start_tls_for(routes, ca, &["localhost", "127.0.0.1"])
    }

    /// [`TestServer::start_tls`] with a certificate for `names` instead.
    pub fn start_tls_for<P: Into<String>>(
        routes: impl IntoIterator<Item = (P, Reply)>,
        ca: &TestCa,
        names: &[&str],
    ) -> TestServer {
        let (cert, key) = ca.issue(names);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .expect("the certificate and key match");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TestServer::launch(routes, Some(TlsAcceptor::from(Arc::new(config))))
    }

    fn launch<P: Into<String>>(
        routes: impl IntoIterator<Item = (P, Reply)>,
        tls: Option<TlsAcceptor>,
    ) -> TestServer {
        let routes: Arc<Vec<(String, Reply)>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.into(), r)).collect());
        let listener = StdTcpListener::bind("127.0.0.1:0").expect("the test server binds");
        listener
            .set_nonblocking(true)
            .expect("the listener is made non-blocking");
        let addr = listener.local_addr().expect("the listener has an address");
        let state = Arc::new(State::default());
        let (stop, stopped) = oneshot::channel::<()>();
        let is_tls = tls.is_some();
        let thread = std::thread::Builder::new()
            .name(format!("test-server-{}", addr.port()))
            .spawn({
                let state = state.clone();
                move || run(listener, tls, routes, state, stopped)
            })
            .expect("the server thread starts");
        TestServer {
            addr,
            tls: is_tls,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The address it listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Whether it speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// `http://127.0.0.1:PORT` (or `https://…`): [`TestServer::origin_ip`].
    pub fn origin(&self) -> String {
        self.origin_ip()
    }

    /// The origin by address: `http://127.0.0.1:PORT` (`https` for TLS).
    pub fn origin_ip(&self) -> String {
        self.origin_host("127.0.0.1")
    }

    /// The origin by host name `host` (e.g. `localhost`, which must then
    /// resolve to 127.0.0.1): `https://localhost:PORT`.
    pub fn origin_host(&self, host: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{host}:{}", self.port())
    }

    /// [`TestServer::origin`] followed by `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    /// How many connections it accepted (TCP; with TLS, including those
    /// whose handshake failed).
    pub fn connections(&self) -> usize {
        self.state.received().len()
    }

    /// The requests received so far (whole: head and body), in order.
    ///
    /// A request is recorded before it is answered.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests().clone()
    }

    /// The bytes each connection sent, in the order the connections were
    /// accepted: the first [`MAX_RECEIVED`] of each, as read (plaintext
    /// with TLS), whether or not they made up a request.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.state.received().clone()
    }

    /// How many connections have ended (closed by either side, or failed).
    pub fn closed(&self) -> usize {
        self.state.closed.load(Ordering::SeqCst)
    }

    /// How many requests are in flight now: head read, response not yet
    /// finished and connection not dropped.
    pub fn in_flight(&self) -> usize {
        self.state.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests that were in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Waits until `condition` holds, checking every few milliseconds;
    /// panics (naming `what`) if it still does not after 30 seconds.
    pub fn wait_until(&self, what: &str, condition: impl Fn(&TestServer) -> bool) {
        let start = Instant::now();
        while !condition(self) {
            assert!(
                start.elapsed() < WAIT_LIMIT,
                "the test server waited in vain for: {what}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for TestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

/// What the server's tasks share with the [`TestServer`].
#[derive(Default)]
struct State {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    closed: AtomicUsize,
    requests: Mutex<Vec<Recorded>>,
    /// What each accepted connection sent (one entry per connection).
    received: Mutex<Vec<Vec<u8>>>,
}

impl State {
    fn requests(&self) -> MutexGuard<'_, Vec<Recorded>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn received(&self) -> MutexGuard<'_, Vec<Vec<u8>>> {
        self.received.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a new connection; its number.
    fn accepted(&self) -> usize {
        let mut received = self.received();
        received.push(Vec::new());
        received.len() - 1
    }
}

/// Counts a connection as closed when its task ends (or is cancelled).
struct Closed(Arc<State>);

impl Drop for Closed {
    fn drop(&mut self) {
        self.0.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// A connection's stream that keeps what it reads in
/// [`State::received`].
struct Recording<S> {
    io: S,
    connection: usize,
    state: Arc<State>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Recording<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let mut received = this.state.received();
            let kept = &mut received[this.connection];
            let new = &buf.filled()[before..];
            let room = MAX_RECEIVED.saturating_sub(kept.len());
            kept.extend_from_slice(&new[..new.len().min(room)]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Recording<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Counts a request in flight while it lives.
struct InFlight<'a>(&'a State);

impl<'a> InFlight<'a> {
    fn new(state: &'a State) -> InFlight<'a> {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(state)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The server thread: accepts until told to stop, then drops the runtime,
/// which cancels every connection's task.
fn run(
    listener: StdTcpListener,
    tls: Option<TlsAcceptor>,
    routes: Arc<Vec<(String, Reply)>>,
    state: Arc<State>,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the server runtime starts");
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::from_std(listener).expect("the listener joins the runtime");
        let accept = async {
            loop {
                let tcp = match listener.accept().await {
                    Ok((tcp, _)) => tcp,
                    Err(_) => {
                        // Out of descriptors or an aborted connection.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let id = state.accepted();
                let (tls, routes, state) = (tls.clone(), routes.clone(), state.clone());
                tokio::spawn(async move {
                    let _closed = Closed(state.clone());
                    match tls {
                        None => serve(tcp, id, &state, &routes).await,
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(tcp).await {
                                serve(stream, id, &state, &routes).await;
                            }
                        }
                    }
                });
            }
        };
        tokio::select! {
            _ = stopped => {}
            _ = accept => {}
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// Why a request could not be read.
enum ReadError {
    /// The client went away (or the stream failed).
    Gone,
    /// The request is refused with this status, then the connection closed.
    Reject(u16),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> ReadError {
        ReadError::Gone
    }
}

/// One connection: its stream and the bytes read but not yet used.
struct Conn<S> {
    io: S,
    buf: Vec<u8>,
}

/// Answers the requests of one connection until it closes.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    io: S,
    connection: usize,
    state: &Arc<State>,
    routes: &[(String, Reply)],
) {
    let io = Recording {
        io,
        connection,
        state: state.clone(),
    };
    let mut conn = Conn {
        io,
        buf: Vec::new(),
    };
    loop {
        match conn.exchange(connection, state, routes).await {
            Ok(true) => continue,
            Ok(false) => break,
            Err(ReadError::Gone) => return,
            Err(ReadError::Reject(status)) => {
                let head = response_head(status, &[("content-length", "0".into())], false);
                if conn.io.write_all(&head).await.is_err() {
                    return;
                }
                break;
            }
        }
    }
    conn.close().await;
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    /// Reads one request, records it and answers it; whether the
    /// connection stays open.
    async fn exchange(
        &mut self,
        connection: usize,
        state: &State,
        routes: &[(String, Reply)],
    ) -> Result<bool, ReadError> {
        let head = self.read_head().await?;
        let _in_flight = InFlight::new(state);
        let (method, path, version, headers) = parse_head(&head).ok_or(ReadError::Reject(400))?;
        let mut request = Recorded {
            connection,
            method,
            path,
            version,
            headers,
            body: Vec::new(),
            head,
        };
        let keep_alive = request.version == "HTTP/1.1"
            && !request
                .header_all("connection")
                .iter()
                .flat_map(|v| v.split(','))
                .any(|t| t.trim().eq_ignore_ascii_case("close"));

        let body = body_framing(&request)?;
        if !matches!(body, Framing::None)
            && request
                .header("expect")
                .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
        {
            self.io.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
            self.io.flush().await?;
        }
        request.body = match body {
            Framing::None => Vec::new(),
            Framing::Length(len) => {
                let mut body = Vec::new();
                self.read_exact_into(len, &mut body).await?;
                body
            }
            Framing::Chunked => self.read_chunked().await?,
        };
        state.requests().push(request.clone());

        let not_found = Reply::text(404, "not found\n");
        let target = route_path(&request.path);
        let reply = routes
            .iter()
            .find(|(prefix, _)| target.starts_with(prefix.as_str()))
            .map_or(&not_found, |(_, reply)| reply);
        Ok(self.respond(reply, &request, keep_alive).await?)
    }

    /// Reads more into `buf`; the count (0 at end of stream).
    async fn fill(&mut self) -> io::Result<usize> {
        self.buf.reserve(16 * 1024);
        self.io.read_buf(&mut self.buf).await
    }

    /// Reads a request head, skipping empty lines before it.
    async fn read_head(&mut self) -> Result<String, ReadError> {
        let mut scanned = 0;
        loop {
            let blank = self
                .buf
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            if blank > 0 {
                // Keep a lone `\r` that may begin `\r\n` of a later read.
                let skip = if self.buf[..blank].ends_with(b"\r") {
                    blank - 1
                } else {
                    blank
                };
                self.buf.drain(..skip);
                scanned = 0;
            }
            if let Some(at) = find(&self.buf[scanned..], b"\r\n\r\n") {
                let end = scanned + at + 4;
                if end > MAX_HEAD {
                    return Err(ReadError::Reject(431));
                }
                let head: Vec<u8> = self.buf.drain(..end).collect();
                return Ok(String::from_utf8_lossy(&head).into_owned());
            }
            if self.buf.len() >= MAX_HEAD {
                return Err(ReadError::Reject(431));
            }
            scanned = self.buf.len().saturating_sub(3);
            if self.fill().await? == 0 {
                return Err(ReadError::Gone);
            }
        }
    }

    /// Appends exactly `len` more bytes of the stream to `out`.
    async fn read_exact_into(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), ReadError> {
        let buffered = len.min(self.buf.len());
        out.extend(self.buf.drain(..buffered));
        let rest = len - buffered;
        if rest > 0 {
            let got = (&mut self.io).take(rest as u64).read_to_end(out).await?;
            if got < rest {
                return Err(ReadError::Gone);
            }
        }
        Ok(())
    }

    /// Reads a line ending in CRLF (at most [`MAX_LINE`]), without it.
    async fn read_line(&mut self) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(at) = find(&self.buf, b"\r\n") {
                let line = self.buf[..at].to_vec();
                self.buf.drain(..at + 2);
                return Ok(line);
            }
            if self.buf.len() > MAX_LINE {
                return Err(ReadError::Reject(400));
            }
            if self.fill().await? == 0 {
                return Err(ReadError::Gone);
            }
        }
    }

    /// Reads a chunked body (its trailers are read and dropped).
    async fn read_chunked(&mut self) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line().await?;
            let line = String::from_utf8_lossy(&line);
            let size = line.split(';').next().unwrap_or_default().trim();
            if size.is_empty() || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ReadError::Reject(400));
            }
            let size = usize::from_str_radix(size, 16).map_err(|_| ReadError::Reject(413))?;
            if size == 0 {
                let mut trailers = 0;
                loop {
                    let line = self.read_line().await?;
                    if line.is_empty() {
                        return Ok(body);
                    }
                    trailers += line.len() + 2;
                    if trailers > MAX_HEAD {
                        return Err(ReadError::Reject(431));
                    }
                }
            }
            if body.len().saturating_add(size) > MAX_BODY {
                return Err(ReadError::Reject(413));
            }
            self.read_exact_into(size, &mut body).await?;
            if !self.read_line().await?.is_empty() {
                return Err(ReadError::Reject(400));
            }
        }
    }

    /// Waits `wait` (forever if `None`) while watching the client, keeping
    /// what it sends for the next request; false if it went away first.
    async fn idle(&mut self, wait: Option<Duration>) -> bool {
        let timer = async {
            match wait {
                Some(wait) => tokio::time::sleep(wait).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timer);
        let mut scratch = [0u8; 8 * 1024];
        loop {
            tokio::select! {
                _ = &mut timer => return true,
                read = self.io.read(&mut scratch) => match read {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => {
                        // Beyond a head's worth, pipelined bytes are dropped.
                        if self.buf.len() < 2 * MAX_HEAD {
                            self.buf.extend_from_slice(&scratch[..n]);
                        }
                    }
                },
            }
        }
    }

    /// Answers `request` with `reply`; whether the connection stays open.
    async fn respond(
        &mut self,
        mut reply: &Reply,
        request: &Recorded,
        keep_alive: bool,
    ) -> io::Result<bool> {
        while let Reply::Delay { ms, then } = reply {
            if !self.idle(Some(Duration::from_millis(*ms))).await {
                return Ok(false);
            }
            reply = then;
        }
        let head_only = request.method.eq_ignore_ascii_case("HEAD");
        match reply {
            Reply::Text {
                status,
                body,
                content_type,
            } => {
                let headers = [("content-type", content_type.clone())];
                self.fixed(*status, &headers, body.as_bytes(), keep_alive, head_only)
                    .await
            }
            Reply::Redirect { status, location } => {
                let headers = [("location", location.clone())];
                self.fixed(*status, &headers, b"", keep_alive, head_only)
                    .await
            }
            Reply::Headers => {
                let body: String = request
                    .headers
                    .iter()
                    .map(|(name, value)| format!("{name}: {value}\n"))
                    .collect();
                let headers = [("content-type", "text/plain; charset=utf-8".to_string())];
                self.fixed(200, &headers, body.as_bytes(), keep_alive, head_only)
                    .await
            }
            Reply::Echo => {
                let headers = [("content-type", "application/octet-stream".to_string())];
                self.fixed(200, &headers, &request.body, keep_alive, head_only)
                    .await
            }
            Reply::ManyHeaders { count, size } => {
                let value = "a".repeat(*size);
                let names: Vec<String> = (0..*count).map(|i| format!("x-many-{i}")).collect();
                let headers: Vec<(&str, String)> =
                    names.iter().map(|n| (n.as_str(), value.clone())).collect();
                self.fixed(200, &headers, b"", keep_alive, head_only).await
            }
            Reply::Bytes { len } => {
                let headers = [
                    ("content-type", "application/octet-stream".to_string()),
                    ("content-length", len.to_string()),
                ];
                self.io
                    .write_all(&response_head(200, &headers, keep_alive))
                    .await?;
                if !head_only {
                    self.write_a(*len).await?;
                }
                self.io.flush().await?;
                Ok(keep_alive)
            }
            Reply::Chunked { len } => {
                let headers = [
                    ("content-type", "application/octet-stream".to_string()),
                    ("transfer-encoding", "chunked".to_string()),
                ];
                self.io
                    .write_all(&response_head(200, &headers, keep_alive))
                    .await?;
                if !head_only {
                    let mut left = *len;
                    while left > 0 {
                        let n = left.min(8 * 1024);
                        self.io.write_all(format!("{n:x}\r\n").as_bytes()).await?;
                        self.write_a(n).await?;
                        self.io.write_all(b"\r\n").await?;
                        left -= n;
                    }
                    self.io.write_all(b"0\r\n\r\n").await?;
                }
                self.io.flush().await?;
                Ok(keep_alive)
            }
            Reply::Trickle { interval_ms } => {
                let headers = [("content-type", "application/octet-stream".to_string())];
                self.io
                    .write_all(&response_head(200, &headers, false))
                    .await?;
                self.io.flush().await?;
                if head_only {
                    return Ok(false);
                }
                while self.idle(Some(Duration::from_millis(*interval_ms))).await {
                    self.io.write_all(b"a").await?;
                    self.io.flush().await?;
                }
                Ok(false)
            }
            Reply::Stall => {
                self.idle(None).await;
                Ok(false)
            }
            Reply::Raw { bytes } => {
                self.io.write_all(bytes).await?;
                self.io.flush().await?;
                Ok(false)
            }
            Reply::Delay { .. } => unreachable!("delays are waited out above"),
        }
    }

    /// Writes a response with `body` and its `content-length`.
    async fn fixed(
        &mut self,
        status: u16,
        headers: &[(&str, String)],
        body: &[u8],
        keep_alive: bool,
        head_only: bool,
    ) -> io::Result<bool> {
        let mut all = headers.to_vec();
        all.push(("content-length", body.len().to_string()));
        let mut out = response_head(status, &all, keep_alive);
        if !head_only {
            out.extend_from_slice(body);
        }
        self.io.write_all(&out).await?;
        self.io.flush().await?;
        Ok(keep_alive)
    }

    /// Writes `len` bytes `a`.
    async fn write_a(&mut self, len: usize) -> io::Result<()> {
        static A: [u8; 16 * 1024] = [b'a'; 16 * 1024];
        let mut left = len;
        while left > 0 {
            let n = left.min(A.len());
            self.io.write_all(&A[..n]).await?;
            left -= n;
        }
        Ok(())
    }

    /// Closes the connection: ends the sending side, then reads until the
    /// client closes too (for at most [`LINGER`]).
    async fn close(mut self) {
        if self.io.shutdown().await.is_err() {
            return;
        }
        let mut scratch = [0u8; 8 * 1024];
        let drain = async {
            while let Ok(n) = self.io.read(&mut scratch).await {
                if n == 0 {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(LINGER, drain).await;
    }
}

/// How a request's body is framed.
enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// The framing of `request`'s body: chunked if its last transfer coding is
/// `chunked`, else its (single) content-length.
fn body_framing(request: &Recorded) -> Result<Framing, ReadError> {
    let codings = request.header_all("transfer-encoding");
    if !codings.is_empty() {
        let last = codings
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .rfind(|c| !c.is_empty());
        return match last {
            Some(c) if c.eq_ignore_ascii_case("chunked") => Ok(Framing::Chunked),
            _ => Err(ReadError::Reject(400)),
        };
    }
    let mut length = None;
    for value in request.header_all("content-length") {
        for part in value.split(',') {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ReadError::Reject(400));
            }
            let len: usize = part.parse().map_err(|_| ReadError::Reject(413))?;
            if length.is_some_and(|l| l != len) {
                return Err(ReadError::Reject(400));
            }
            length = Some(len);
        }
    }
    match length {
        None | Some(0) => Ok(Framing::None),
        Some(len) if len > MAX_BODY => Err(ReadError::Reject(413)),
        Some(len) => Ok(Framing::Length(len)),
    }
}

/// A parsed head: method, target, version and headers (names lowercased).
type Head = (String, String, String, Vec<(String, String)>);

/// Parses a request head (which ends in the blank line); `None` if it is
/// malformed.
fn parse_head(head: &str) -> Option<Head> {
    let mut lines = head.strip_suffix("\r\n\r\n")?.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || method.is_empty()
        || target.is_empty()
        || !version.starts_with("HTTP/")
    {
        return None;
    }
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        if name.is_empty()
            || name
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return None;
        }
        let value = value.trim_matches(|c| c == ' ' || c == '\t');
        headers.push((name.to_ascii_lowercase(), value.to_string()));
    }
    Some((
        method.to_string(),
        target.to_string(),
        version.to_string(),
        headers,
    ))
}

/// The path a route is matched against: the target, without scheme and
/// authority if it is in absolute form.
fn route_path(target: &str) -> &str {
    for scheme in ["http://", "https://"] {
        if let Some(rest) = target.strip_prefix(scheme) {
            return rest.find('/').map_or("/", |at| &rest[at..]);
        }
    }
    target
}

/// A response head: status line, `headers`, `connection: close` unless
/// `keep_alive`, blank line.
fn response_head(status: u16, headers: &[(&str, String)], keep_alive: bool) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    if !keep_alive {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// The reason phrase of `status`.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
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
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests;
