//! Network grants: outbound TCP to exactly the allowed endpoints, nothing else.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::thread::JoinHandle;

use serde_json::json;
use toolhost::{Grants, NetworkGrant, ToolManager};

use crate::common::{call, hostile};

fn granted(allow: &[String]) -> ToolManager {
    let grants = Grants {
        network: NetworkGrant {
            allow: allow.to_vec(),
        },
        ..Grants::default()
    };
    let module = hostile().with_access(grants.resolve(Path::new(".")).expect("grants resolve"));
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    manager
}

/// A server on 127.0.0.1 that answers one connection with `echo: <line>`.
fn echo_server() -> (SocketAddr, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line).unwrap();
        (&stream)
            .write_all(format!("echo: {}", line.trim_end()).as_bytes())
            .unwrap();
        line
    });
    (addr, server)
}

/// A listener that must never see a connection.
fn bystander() -> TcpListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

fn assert_untouched(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("a refused connection reached the host: {other:?}"),
    }
}

fn connect(m: &ToolManager, address: &str) -> String {
    call(
        m,
        "h_connect",
        json!({"address": address, "message": "ping"}),
    )
}

/// Asserts the guest saw WASI's `access-denied` (std's "Permission denied") in step `step`.
fn assert_refused(out: &str, tool: &str) {
    let step = match tool {
        "h_connect" => "connect",
        "h_lookup" => "lookup",
        _ => "bind",
    };
    assert_eq!(
        out,
        format!("Error: tool '{tool}' failed: {step}: Permission denied (os error 2)")
    );
}

#[test]
fn no_network_without_a_grant() {
    let m = granted(&[]);
    let closed = bystander();
    let addr = closed.local_addr().unwrap().to_string();
    let out = connect(&m, &addr);
    assert_refused(&out, "h_connect");
    assert_untouched(&closed);
    assert_refused(
        &call(&m, "h_lookup", json!({"text": "localhost"})),
        "h_lookup",
    );
    assert_refused(&call(&m, "h_listen", json!({})), "h_listen");
    assert_refused(&call(&m, "h_udp", json!({"text": addr})), "h_udp");
    assert_eq!(call(&m, "h_add", json!({"a": 1, "b": 2})), "3");
}

#[test]
fn an_allowed_address_and_nothing_else() {
    let (addr, server) = echo_server();
    let other = bystander();
    let m = granted(&[addr.to_string()]);
    assert_eq!(
        connect(&m, &addr.to_string()),
        format!("connected to {addr}; reply: echo: ping")
    );
    assert_eq!(server.join().unwrap(), "ping\n");
    // Another port on the same host, and listening or UDP, are refused.
    let out = connect(&m, &other.local_addr().unwrap().to_string());
    assert_refused(&out, "h_connect");
    assert_untouched(&other);
    assert_refused(&call(&m, "h_listen", json!({})), "h_listen");
    assert_refused(
        &call(&m, "h_udp", json!({"text": addr.to_string()})),
        "h_udp",
    );
    // No host names are granted, so none can be looked up.
    assert_refused(
        &call(&m, "h_lookup", json!({"text": "localhost"})),
        "h_lookup",
    );
}

#[test]
fn an_allowed_host_name_and_no_other_lookups() {
    let (addr, server) = echo_server();
    let other = bystander();
    let m = granted(&[format!("localhost:{}", addr.port())]);
    let out = connect(&m, &format!("localhost:{}", addr.port()));
    assert!(out.ends_with("; reply: echo: ping"), "{out}");
    assert_eq!(server.join().unwrap(), "ping\n");
    assert!(
        call(&m, "h_lookup", json!({"text": "LOCALHOST"})).ends_with(" addresses"),
        "granted names are looked up case-insensitively"
    );
    // Other names cannot even be looked up (no data leaves through DNS) ...
    for name in [
        "example.com",
        "secret-data.attacker.example",
        "localhost.evil",
    ] {
        let out = call(&m, "h_lookup", json!({"text": name}));
        assert_refused(&out, "h_lookup");
    }
    // ... and the name's addresses are granted only on the granted port.
    let out = connect(&m, &other.local_addr().unwrap().to_string());
    assert_refused(&out, "h_connect");
    assert_untouched(&other);
}

#[test]
fn bad_endpoints_are_config_errors() {
    for (entry, says) in [
        ("localhost", "has no port"),
        ("localhost:0", "from 1 to 65535"),
        ("*.example.com:443", "not a host name"),
        ("0.0.0.0:80", "unspecified address"),
    ] {
        let grants = Grants {
            network: NetworkGrant {
                allow: vec![entry.to_string()],
            },
            ..Grants::default()
        };
        let err = grants.resolve(Path::new(".")).unwrap_err();
        assert!(
            err.starts_with("grants.network.allow[0]: ") && err.contains(says),
            "{entry}: {err}"
        );
    }
}
