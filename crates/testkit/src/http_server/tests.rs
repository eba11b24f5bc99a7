//! The test server against hand-written HTTP/1.1 clients (std TCP, and
//! rustls for TLS).

use super::*;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// A response as a test client read it.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("the body is UTF-8")
    }
}

type Client = BufReader<TcpStream>;

fn connect(server: &TestServer) -> Client {
    let tcp = TcpStream::connect(server.addr()).expect("the client connects");
    // A safety net against a hung test, not an assertion.
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("the timeout is set");
    BufReader::new(tcp)
}

fn send<S: Write>(client: &mut BufReader<S>, bytes: &[u8]) {
    client
        .get_mut()
        .write_all(bytes)
        .expect("the request is sent");
    client.get_mut().flush().expect("the request is flushed");
}

fn read_head(client: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    client.read_line(&mut line).expect("a status line");
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        client.read_line(&mut line).expect("a header line");
        if line == "\r\n" {
            return (status, headers);
        }
        let (name, value) = line.split_once(':').expect("a header");
        headers.push((name.to_string(), value.trim().to_string()));
    }
}

fn read_response(client: &mut impl BufRead) -> Response {
    let (status, headers) = read_head(client);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|t| t == "chunked") {
        loop {
            let mut line = String::new();
            client.read_line(&mut line).expect("a chunk size");
            let size = usize::from_str_radix(line.trim_end(), 16).expect("a hex chunk size");
            if size == 0 {
                client.read_line(&mut line).expect("the last blank line");
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            client.read_exact(&mut body[start..]).expect("a chunk");
            let mut crlf = [0; 2];
            client.read_exact(&mut crlf).expect("a chunk's CRLF");
            assert_eq!(&crlf, b"\r\n");
        }
    } else if let Some(len) = header("content-length") {
        body.resize(len.parse().expect("a length"), 0);
        client.read_exact(&mut body).expect("the body");
    } else {
        client
            .read_to_end(&mut body)
            .expect("the body up to the close");
    }
    Response {
        status,
        headers,
        body,
    }
}

/// One request (`Connection: close`) on a new connection.
fn get(server: &TestServer, path: &str) -> Response {
    let mut client = connect(server);
    send(
        &mut client,
        format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    read_response(&mut client)
}

/// Whether the server has closed `client`'s connection (nothing more
/// arrives).
fn at_end(client: &mut impl Read) -> bool {
    let mut byte = [0; 1];
    matches!(client.read(&mut byte), Ok(0) | Err(_))
}

#[test]
fn text_routes_match_the_first_prefix_else_404() {
    let server = TestServer::start([
        ("/a/b", Reply::text(200, "ab")),
        ("/a", Reply::text(201, "a")),
        (
            "/json",
            Reply::Text {
                status: 200,
                body: "{}".into(),
                content_type: "application/json".into(),
            },
        ),
    ]);
    let ab = get(&server, "/a/b/c?x=1");
    assert_eq!((ab.status, ab.text().as_str()), (200, "ab"));
    assert_eq!(ab.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(ab.header("content-length"), Some("2"));
    assert_eq!(ab.header("connection"), Some("close"));
    let a = get(&server, "/a/z");
    assert_eq!((a.status, a.text().as_str()), (201, "a"));
    let json = get(&server, "/json");
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(get(&server, "/elsewhere").status, 404);
    assert_eq!(get(&server, "/").status, 404);
    assert_eq!(server.connections(), 5);
    assert_eq!(server.requests().len(), 5);
}

#[test]
fn absolute_form_targets_are_routed_by_their_path() {
    let server = TestServer::start([("/p", Reply::text(200, "p"))]);
    let response = get(&server, "http://example.test/p/q");
    assert_eq!(response.text(), "p");
    assert_eq!(server.requests()[0].path, "http://example.test/p/q");
}

#[test]
fn redirects_carry_their_location() {
    let server = TestServer::start([("/old", Reply::redirect(308, "/new"))]);
    let response = get(&server, "/old");
    assert_eq!(response.status, 308);
    assert_eq!(response.header("location"), Some("/new"));
    assert!(response.body.is_empty());
}

#[test]
fn requests_are_recorded_and_headers_listed_in_order() {
    let server = TestServer::start([("/h", Reply::Headers)]);
    let mut client = connect(&server);
    let head = "GET /h?q=1 HTTP/1.1\r\nHost: test\r\nX-Token:  secret \r\nAccept: */*\r\nx-token: two\r\nConnection: close\r\n\r\n";
    send(&mut client, head.as_bytes());
    let response = read_response(&mut client);
    assert_eq!(response.status, 200);
    assert_eq!(
        response.text(),
        "host: test\nx-token: secret\naccept: */*\nx-token: two\nconnection: close\n"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.connection, 0);
    assert_eq!(request.method, "GET");
    assert_eq!(request.path, "/h?q=1");
    assert_eq!(request.version, "HTTP/1.1");
    assert_eq!(request.head, head);
    assert_eq!(request.header("X-TOKEN"), Some("secret"));
    assert_eq!(request.header_all("x-token"), ["secret", "two"]);
    assert_eq!(request.header("missing"), None);
    assert!(request.body.is_empty());
}

#[test]
fn bytes_and_chunked_bodies() {
    let server = TestServer::start([
        ("/bytes0", Reply::Bytes { len: 0 }),
        ("/bytes", Reply::Bytes { len: 100_000 }),
        ("/chunked0", Reply::Chunked { len: 0 }),
        ("/chunked", Reply::Chunked { len: 100_000 }),
    ]);
    let bytes = get(&server, "/bytes");
    assert_eq!(bytes.header("content-length"), Some("100000"));
    assert_eq!(bytes.body, vec![b'a'; 100_000]);
    assert_eq!(get(&server, "/bytes0").body, b"");

    let chunked = get(&server, "/chunked");
    assert_eq!(chunked.header("transfer-encoding"), Some("chunked"));
    assert_eq!(chunked.header("content-length"), None);
    assert_eq!(chunked.body, vec![b'a'; 100_000]);
    assert_eq!(get(&server, "/chunked0").body, b"");
}

#[test]
fn many_headers() {
    let server = TestServer::start([(
        "/",
        Reply::ManyHeaders {
            count: 50,
            size: 100,
        },
    )]);
    let response = get(&server, "/");
    assert_eq!(response.status, 200);
    let many: Vec<_> = response
        .headers
        .iter()
        .filter(|(n, _)| n.starts_with("x-many-"))
        .collect();
    assert_eq!(many.len(), 50);
    assert_eq!(many[49].0, "x-many-49");
    assert!(many.iter().all(|(_, v)| *v == "a".repeat(100)));
    assert!(response.body.is_empty());
}

#[test]
fn echo_with_length_and_chunked_request_bodies() {
    let server = TestServer::start([("/echo", Reply::Echo)]);
    let mut client = connect(&server);
    send(
        &mut client,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world",
    );
    let response = read_response(&mut client);
    assert_eq!(response.body, b"hello world");
    assert_eq!(
        response.header("content-type"),
        Some("application/octet-stream")
    );

    send(
        &mut client,
        b"PUT /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
          5;ext=1\r\nhello\r\n1\r\n \r\nA\r\nchunked!!!\r\n0\r\nx-trailer: t\r\n\r\n",
    );
    let response = read_response(&mut client);
    assert_eq!(response.text(), "hello chunked!!!");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].body, b"hello world");
    assert_eq!(requests[1].method, "PUT");
    assert_eq!(requests[1].body, b"hello chunked!!!");
    assert_eq!(requests[1].header("transfer-encoding"), Some("chunked"));
}

#[test]
fn a_large_body_arrives_whole() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut client = connect(&server);
    let writer = {
        let mut tcp = client.get_ref().try_clone().expect("the stream clones");
        let body = body.clone();
        std::thread::spawn(move || {
            let head = format!("POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n", body.len());
            tcp.write_all(head.as_bytes()).expect("the head is sent");
            tcp.write_all(&body).expect("the body is sent");
        })
    };
    let response = read_response(&mut client);
    writer.join().expect("the writer finishes");
    assert!(response.body == body, "the echo differs");
    assert!(server.requests()[0].body == body, "the record differs");
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let server = TestServer::start([("/echo", Reply::Echo), ("/", Reply::text(200, "ok"))]);
    let mut client = connect(&server);
    send(&mut client, b"GET /one HTTP/1.1\r\nHost: t\r\n\r\n");
    let one = read_response(&mut client);
    assert_eq!(one.text(), "ok");
    assert_eq!(one.header("connection"), None);
    send(
        &mut client,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert_eq!(read_response(&mut client).text(), "abc");
    send(
        &mut client,
        b"GET /three HTTP/1.1\r\nHost: t\r\nConnection: keep-alive, close\r\n\r\n",
    );
    let three = read_response(&mut client);
    assert_eq!(three.text(), "ok");
    assert_eq!(three.header("connection"), Some("close"));
    assert!(at_end(&mut client), "the server closes after `close`");

    assert_eq!(server.connections(), 1);
    let requests = server.requests();
    let paths: Vec<_> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/one", "/echo", "/three"]);
    assert!(requests.iter().all(|r| r.connection == 0));

    // A second connection is numbered 1.
    get(&server, "/");
    assert_eq!(server.requests()[3].connection, 1);
    assert_eq!(server.connections(), 2);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let mut client = connect(&server);
    send(
        &mut client,
        b"POST /1 HTTP/1.1\r\nContent-Length: 1\r\n\r\n1\
          POST /2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n2\r\n0\r\n\r\n\
          POST /3 HTTP/1.1\r\nContent-Length: 1\r\nConnection: close\r\n\r\n3",
    );
    for expected in ["1", "2", "3"] {
        assert_eq!(read_response(&mut client).text(), expected);
    }
    assert!(at_end(&mut client));
}

#[test]
fn every_byte_a_connection_sends_is_kept_even_past_its_requests() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let mut client = connect(&server);
    // A whole request, then bytes that never make up one.
    let sent: &[u8] = b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nsmuggled";
    send(&mut client, sent);
    assert_eq!(read_response(&mut client).text(), "sm");
    drop(client);
    server.wait_until("the connection ends", |s| s.closed() == 1);
    assert_eq!(server.received(), [sent.to_vec()]);
    assert_eq!(server.requests().len(), 1);

    // Only the first MAX_RECEIVED bytes of a connection are kept.
    let mut client = connect(&server);
    send(&mut client, &vec![b'\r'; MAX_RECEIVED + 100]);
    drop(client);
    server.wait_until("the second connection ends", |s| s.closed() == 2);
    assert_eq!(server.received()[1].len(), MAX_RECEIVED);
}

#[test]
fn http_1_0_closes_after_the_response() {
    let server = TestServer::start([("/", Reply::text(200, "ok"))]);
    let mut client = connect(&server);
    send(&mut client, b"GET / HTTP/1.0\r\n\r\n");
    let response = read_response(&mut client);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(at_end(&mut client));
}

#[test]
fn head_requests_get_no_body() {
    let server = TestServer::start([
        ("/bytes", Reply::Bytes { len: 10 }),
        ("/chunked", Reply::Chunked { len: 10 }),
        ("/", Reply::text(200, "ok")),
    ]);
    let mut client = connect(&server);
    send(&mut client, b"HEAD /bytes HTTP/1.1\r\n\r\n");
    let (status, headers) = read_head(&mut client);
    assert_eq!(status, 200);
    assert!(headers.contains(&("content-length".into(), "10".into())));
    send(&mut client, b"HEAD /chunked HTTP/1.1\r\n\r\n");
    read_head(&mut client);
    send(&mut client, b"HEAD / HTTP/1.1\r\n\r\n");
    read_head(&mut client);
    // Had a body been sent, this would read it instead.
    send(&mut client, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(read_response(&mut client).text(), "ok");
}

#[test]
fn expect_100_continue_is_answered() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let mut client = connect(&server);
    send(
        &mut client,
        b"POST / HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n",
    );
    let (status, _) = read_head(&mut client);
    assert_eq!(status, 100);
    send(&mut client, b"hi");
    assert_eq!(read_response(&mut client).text(), "hi");
}

#[test]
fn raw_replies_are_written_as_they_are() {
    let server = TestServer::start([
        (
            "/garbage",
            Reply::Raw {
                bytes: b"NOT HTTP AT ALL\r\n".to_vec(),
            },
        ),
        ("/nothing", Reply::Raw { bytes: Vec::new() }),
    ]);
    let mut client = connect(&server);
    send(&mut client, b"GET /garbage HTTP/1.1\r\n\r\n");
    let mut all = Vec::new();
    client
        .read_to_end(&mut all)
        .expect("the response up to the close");
    assert_eq!(all, b"NOT HTTP AT ALL\r\n");

    let mut client = connect(&server);
    send(&mut client, b"GET /nothing HTTP/1.1\r\n\r\n");
    assert!(at_end(&mut client));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn malformed_and_oversized_requests_are_refused() {
    let server = TestServer::start([("/", Reply::Echo)]);
    let refused = |request: &[u8]| {
        let mut client = connect(&server);
        send(&mut client, request);
        let response = read_response(&mut client);
        assert_eq!(response.header("connection"), Some("close"));
        assert!(at_end(&mut client));
        response.status
    };
    assert_eq!(refused(b"NONSENSE\r\n\r\n"), 400);
    assert_eq!(refused(b"GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
    assert_eq!(refused(b"GET / HTTP/1.1\r\n folded: x\r\n\r\n"), 400);
    assert_eq!(
        refused(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
        400
    );
    assert_eq!(
        refused(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
        400
    );
    assert_eq!(
        refused(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
        400
    );
    assert_eq!(
        refused(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        400
    );
    let too_long = format!(
        "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        MAX_BODY + 1
    );
    assert_eq!(refused(too_long.as_bytes()), 413);
    let chunk_too_long = format!(
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        MAX_BODY + 1
    );
    assert_eq!(refused(chunk_too_long.as_bytes()), 413);
    let big_head = format!("GET / HTTP/1.1\r\nx-big: {}\r\n\r\n", "a".repeat(MAX_HEAD));
    assert_eq!(refused(big_head.as_bytes()), 431);
    // None of them reached a route.
    assert!(server.requests().is_empty());
    // A head just under the limit is fine.
    let filler = MAX_HEAD - "GET / HTTP/1.1\r\nx-big: \r\n\r\n".len();
    let just_fits = format!("GET / HTTP/1.1\r\nx-big: {}\r\n\r\n", "a".repeat(filler));
    let mut client = connect(&server);
    send(&mut client, just_fits.as_bytes());
    assert_eq!(read_response(&mut client).status, 200);
}

#[test]
fn trickle_sends_bytes_until_the_client_goes_away() {
    let server = TestServer::start([("/", Reply::Trickle { interval_ms: 5 })]);
    let mut client = connect(&server);
    send(&mut client, b"GET / HTTP/1.1\r\n\r\n");
    let (status, headers) = read_head(&mut client);
    assert_eq!(status, 200);
    assert!(!headers.iter().any(|(n, _)| n == "content-length"));
    let mut body = [0; 3];
    client.read_exact(&mut body).expect("three body bytes");
    assert_eq!(&body, b"aaa");
    assert_eq!(server.in_flight(), 1);
    drop(client);
    server.wait_until("the trickle ends", |s| s.in_flight() == 0);
}

#[test]
fn stall_holds_requests_in_flight_until_the_clients_go() {
    let server = TestServer::start([("/", Reply::Stall)]);
    let clients: Vec<Client> = (0..3)
        .map(|i| {
            let mut client = connect(&server);
            send(
                &mut client,
                format!("POST /{i} HTTP/1.1\r\nContent-Length: 1\r\n\r\n{i}").as_bytes(),
            );
            client
        })
        .collect();
    server.wait_until("three requests", |s| s.requests().len() == 3);
    assert_eq!(server.in_flight(), 3);
    assert_eq!(server.max_in_flight(), 3);
    assert_eq!(server.connections(), 3);
    for client in &clients {
        client
            .get_ref()
            .set_nonblocking(true)
            .expect("non-blocking");
        let mut byte = [0; 1];
        let read = client.get_ref().read(&mut byte);
        assert!(
            matches!(&read, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "no answer: {read:?}"
        );
    }
    let mut bodies: Vec<_> = server.requests().into_iter().map(|r| r.body).collect();
    bodies.sort();
    assert_eq!(bodies, [b"0", b"1", b"2"]);
    drop(clients);
    server.wait_until("the stalls end", |s| s.in_flight() == 0);
    assert_eq!(server.max_in_flight(), 3);
}

#[test]
fn delay_answers_later_unless_the_client_goes() {
    let server = TestServer::start([
        ("/short", Reply::delay(10, Reply::text(200, "late"))),
        ("/long", Reply::delay(600_000, Reply::text(200, "never"))),
        (
            "/twice",
            Reply::delay(1, Reply::delay(1, Reply::Bytes { len: 2 })),
        ),
    ]);
    assert_eq!(get(&server, "/short").text(), "late");
    assert_eq!(get(&server, "/twice").text(), "aa");

    let mut client = connect(&server);
    send(&mut client, b"GET /long HTTP/1.1\r\n\r\n");
    server.wait_until("the request", |s| s.in_flight() == 1);
    drop(client);
    server.wait_until("the delay is cut short", |s| s.in_flight() == 0);
}

#[test]
fn many_connections_at_once() {
    let server = TestServer::start([("/", Reply::delay(20, Reply::Echo))]);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let server = &server;
                scope.spawn(move || {
                    let mut client = connect(server);
                    let body = format!("client {i}");
                    send(
                        &mut client,
                        format!(
                            "POST / HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    );
                    assert_eq!(read_response(&mut client).text(), body);
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("the client succeeds");
        }
    });
    assert_eq!(server.connections(), 16);
    assert_eq!(server.requests().len(), 16);
    assert!((1..=16).contains(&server.max_in_flight()));
    server.wait_until("all finished", |s| s.in_flight() == 0);
}

#[test]
fn dropping_the_server_cuts_its_connections() {
    let server = TestServer::start([
        ("/stall", Reply::Stall),
        ("/trickle", Reply::Trickle { interval_ms: 1 }),
    ]);
    let mut stalled = connect(&server);
    send(&mut stalled, b"GET /stall HTTP/1.1\r\n\r\n");
    let mut trickled = connect(&server);
    send(&mut trickled, b"GET /trickle HTTP/1.1\r\n\r\n");
    read_head(&mut trickled);
    server.wait_until("both requests", |s| s.in_flight() == 2);
    let addr = server.addr();
    drop(server);
    assert!(at_end(&mut stalled));
    let mut rest = Vec::new();
    let _ = trickled.read_to_end(&mut rest);
    assert!(
        TcpStream::connect(addr).is_err(),
        "nothing listens any more"
    );
}

#[test]
fn origins_and_urls() {
    let server = TestServer::start(Vec::<(String, Reply)>::new());
    let port = server.port();
    assert_eq!(server.addr().to_string(), format!("127.0.0.1:{port}"));
    assert!(!server.is_tls());
    assert_eq!(server.origin(), format!("http://127.0.0.1:{port}"));
    assert_eq!(server.origin_ip(), server.origin());
    assert_eq!(
        server.origin_host("localhost"),
        format!("http://localhost:{port}")
    );
    assert_eq!(server.url("/x"), format!("http://127.0.0.1:{port}/x"));
    assert_eq!(server.connections(), 0);
    assert_eq!(server.max_in_flight(), 0);
}

type TlsClient = BufReader<StreamOwned<ClientConnection, TcpStream>>;

/// A TLS connection to `server` that trusts `ca` and expects `name`.
fn tls_connect(server: &TestServer, ca: &TestCa, name: &str) -> Result<TlsClient, rustls::Error> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert_der()).expect("the CA is a valid root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(name.to_string()).expect("a valid server name");
    let connection = ClientConnection::new(Arc::new(config), name).expect("a client connection");
    let tcp = TcpStream::connect(server.addr()).expect("the client connects");
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("the timeout is set");
    let mut stream = StreamOwned::new(connection, tcp);
    while stream.conn.is_handshaking() {
        if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
            let inner = e.into_inner().expect("a TLS error");
            return Err(*inner.downcast::<rustls::Error>().expect("a TLS error"));
        }
    }
    Ok(BufReader::new(stream))
}

#[test]
fn tls_serves_localhost_and_127_0_0_1() {
    let ca = TestCa::new();
    let server = TestServer::start_tls([("/h", Reply::Headers), ("/", Reply::Echo)], &ca);
    assert!(server.is_tls());
    let port = server.port();
    assert_eq!(server.origin(), format!("https://127.0.0.1:{port}"));
    assert_eq!(
        server.origin_host("localhost"),
        format!("https://localhost:{port}")
    );

    for name in ["localhost", "127.0.0.1"] {
        let mut client = tls_connect(&server, &ca, name).expect("the handshake succeeds");
        send(
            &mut client,
            b"GET /h HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer s3cret\r\n\r\n",
        );
        assert_eq!(
            read_response(&mut client).text(),
            "host: localhost\nauthorization: Bearer s3cret\n"
        );
        // Keep-alive and bodies work over TLS too.
        send(
            &mut client,
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        );
        assert_eq!(read_response(&mut client).text(), "abc");
        assert!(at_end(&mut client));
    }
    assert_eq!(server.connections(), 2);
    assert_eq!(server.requests().len(), 4);
    assert_eq!(server.requests()[3].connection, 1);
}

#[test]
fn tls_refuses_clients_that_trust_another_ca_or_name() {
    let ca = TestCa::new();
    let server = TestServer::start_tls([("/", Reply::Echo)], &ca);
    let stranger = TestCa::new();
    let error = tls_connect(&server, &stranger, "localhost").err();
    assert!(
        matches!(error, Some(rustls::Error::InvalidCertificate(_))),
        "{error:?}"
    );
    let error = tls_connect(&server, &ca, "other.test").err();
    assert!(
        matches!(error, Some(rustls::Error::InvalidCertificate(_))),
        "{error:?}"
    );
    server.wait_until("both connections", |s| s.connections() == 2);
    assert!(server.requests().is_empty());
}

#[test]
fn tls_certificates_for_other_names() {
    let ca = TestCa::new();
    let server = TestServer::start_tls_for([("/", Reply::text(200, "ok"))], &ca, &["api.test"]);
    assert_eq!(
        server.origin_host("api.test"),
        format!("https://api.test:{}", server.port())
    );
    let mut client = tls_connect(&server, &ca, "api.test").expect("the handshake succeeds");
    send(&mut client, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(read_response(&mut client).text(), "ok");
    assert!(tls_connect(&server, &ca, "localhost").is_err());
}

#[test]
fn tls_stall_and_trickle() {
    let ca = TestCa::new();
    let server = TestServer::start_tls(
        [
            ("/stall", Reply::Stall),
            ("/trickle", Reply::Trickle { interval_ms: 2 }),
        ],
        &ca,
    );
    let mut trickled = tls_connect(&server, &ca, "localhost").expect("a handshake");
    send(&mut trickled, b"GET /trickle HTTP/1.1\r\n\r\n");
    read_head(&mut trickled);
    let mut body = [0; 2];
    trickled.read_exact(&mut body).expect("two body bytes");
    assert_eq!(&body, b"aa");
    let mut stalled = tls_connect(&server, &ca, "localhost").expect("a handshake");
    send(&mut stalled, b"GET /stall HTTP/1.1\r\n\r\n");
    server.wait_until("both in flight", |s| s.in_flight() == 2);
    drop(trickled);
    drop(stalled);
    server.wait_until("both end", |s| s.in_flight() == 0);
    assert_eq!(server.max_in_flight(), 2);
}

#[test]
fn the_ca_is_written_as_pem() {
    let ca = TestCa::default();
    let pem = ca.pem();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    let path = std::env::temp_dir().join(format!("toolhost-testkit-ca-{}.pem", std::process::id()));
    ca.write_pem(&path);
    let written = std::fs::read_to_string(&path).expect("the PEM is written");
    let _ = std::fs::remove_file(&path);
    assert_eq!(written, pem);
    assert_ne!(TestCa::new().pem(), pem, "each CA is new");
}
