//! A resolver that never answers delays only the calls that ask it, and
//! only until their deadlines (point 4).

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{DirGrant, DirMode, Grants, Limits, NetworkGrant, Runtime, ToolManager, WasmModule};

use crate::common::{call, guest, tight_limits};

/// A name server on loopback that takes queries (UDP and TCP) and never
/// answers; the sockets live as long as the returned value.
fn silent_name_server() -> (SocketAddr, UdpSocket, TcpListener) {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = udp.local_addr().unwrap();
    let tcp = TcpListener::bind(addr).unwrap();
    (addr, udp, tcp)
}

fn load(runtime: &Runtime, name: &str, limits: Limits, grants: Grants, root: &Path) -> WasmModule {
    WasmModule::from_file(runtime, &guest("guest-hostile"), Some(name), limits)
        .unwrap()
        .with_access(grants.resolve(root).unwrap())
}

#[test]
fn a_silent_resolver_starves_no_other_call() {
    let (server, _udp, _tcp) = silent_name_server();
    let runtime = Runtime::builder().name_servers([server]).build().unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("data")).unwrap();
    std::fs::write(root.path().join("data/f.txt"), "hello").unwrap();
    // Module `a` may connect to a name only the silent server could resolve.
    let network = Grants {
        network: NetworkGrant {
            allow: vec!["api.example.net:9".into()],
        },
        ..Grants::default()
    };
    let patient = Limits {
        timeout_ms: 20_000,
        ..tight_limits()
    };
    let a = load(&runtime, "a", patient, network, root.path());
    // Module `b` reads a file.
    let files = Grants {
        dirs: vec![DirGrant {
            host: "data".into(),
            guest: "/data".into(),
            mode: DirMode::Ro,
        }],
        ..Grants::default()
    };
    let b = load(&runtime, "b", tight_limits(), files, root.path());
    let mut manager = ToolManager::new();
    manager.register(a).unwrap();
    manager.register(b).unwrap();
    let manager = Arc::new(manager);

    // Three calls start 200 connections each, every one needing a lookup.
    let floods: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&manager);
            std::thread::spawn(move || {
                let answer = call(&m, "a_connect_flood", json!({"port": 9, "count": 200}));
                (answer, Instant::now())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    // Meanwhile, 20 calls of `b` read their file, and all are done first.
    for _ in 0..20 {
        assert_eq!(
            call(&manager, "b_read_file", json!({"text": "/data/f.txt"})),
            "hello"
        );
    }
    let reads_done = Instant::now();
    for flood in floods {
        let (answer, done) = flood.join().unwrap();
        // Each lookup gave up (at most 5 s), so no connection was allowed.
        assert_eq!(answer, "200 sockets, 0 connected");
        assert!(reads_done < done);
    }
    // And afterwards, too.
    assert_eq!(
        call(&manager, "b_read_file", json!({"text": "/data/f.txt"})),
        "hello"
    );
}

#[test]
fn a_lookup_ends_with_its_call() {
    let (server, _udp, _tcp) = silent_name_server();
    let runtime = Runtime::builder().name_servers([server]).build().unwrap();
    let root = tempfile::tempdir().unwrap();
    let network = Grants {
        network: NetworkGrant {
            allow: vec!["api.example.net:80".into()],
        },
        ..Grants::default()
    };
    let quick = Limits {
        timeout_ms: 500,
        ..tight_limits()
    };
    let mut manager = ToolManager::new();
    manager
        .register(load(&runtime, "a", quick, network, root.path()))
        .unwrap();
    let started = Instant::now();
    assert_eq!(
        call(&manager, "a_lookup", json!({"text": "api.example.net"})),
        "Error: tool 'a_lookup' exceeded its time limit of 500 ms."
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}
