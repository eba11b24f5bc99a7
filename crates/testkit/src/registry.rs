//! [`TestRegistry`]: a real OCI registry (Debian's `docker-registry`, CNCF
//! distribution 2.8) started on 127.0.0.1 with a temporary storage
//! directory, plain HTTP, optionally behind htpasswd basic auth or bearer
//! tokens from a [`TokenServer`](crate::token_server::TokenServer).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The program started.
const PROGRAM: &str = "docker-registry";
/// How long the registry may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How clients must authenticate.
#[derive(Debug, Clone)]
pub enum RegistryAuth {
    /// Anyone may pull and push.
    None,
    /// htpasswd basic auth with one user.
    Basic { user: String, password: String },
    /// Bearer tokens: `realm` issues them, signed by the key of `cert_pem`.
    Token {
        realm: String,
        service: String,
        issuer: String,
        cert_pem: String,
    },
}

/// A running `docker-registry`, stopped when dropped.
pub struct TestRegistry {
    child: Option<Child>,
    host: String,
    dir: tempfile::TempDir,
    log: Arc<Mutex<Vec<String>>>,
}

impl TestRegistry {
    /// Starts a registry anyone may use.
    pub fn start() -> Self {
        Self::start_with(RegistryAuth::None)
    }

    /// Starts a registry with `auth`. Panics, saying how to install it, if
    /// `docker-registry` is missing.
    pub fn start_with(auth: RegistryAuth) -> Self {
        Self::start_full(auth, None)
    }

    /// Starts a registry anyone may use, serving HTTPS with a certificate
    /// for 127.0.0.1 issued by `ca`.
    pub fn start_tls(ca: &crate::http_server::TestCa) -> Self {
        Self::start_full(RegistryAuth::None, Some(ca))
    }

    fn start_full(auth: RegistryAuth, tls: Option<&crate::http_server::TestCa>) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let tls_yaml = match tls {
            None => String::new(),
            Some(ca) => {
                let (cert, key) = ca.issue(&["127.0.0.1"]);
                let cert_path = dir.path().join("registry.crt");
                let key_path = dir.path().join("registry.key");
                std::fs::write(&cert_path, pem("CERTIFICATE", cert.as_ref()))
                    .expect("the certificate");
                std::fs::write(&key_path, pem("PRIVATE KEY", key.secret_der())).expect("the key");
                format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    cert_path.display(),
                    key_path.display()
                )
            }
        };
        let storage = dir.path().join("storage");
        std::fs::create_dir_all(&storage).expect("the storage directory");
        let auth_yaml = match &auth {
            RegistryAuth::None => String::new(),
            RegistryAuth::Basic { user, password } => {
                let hash = bcrypt::hash(password, 4).expect("bcrypt");
                let htpasswd = dir.path().join("htpasswd");
                std::fs::write(&htpasswd, format!("{user}:{hash}\n")).expect("htpasswd");
                format!(
                    "auth:\n  htpasswd:\n    realm: toolhost-test\n    path: {}\n",
                    htpasswd.display()
                )
            }
            RegistryAuth::Token {
                realm,
                service,
                issuer,
                cert_pem,
            } => {
                let bundle = dir.path().join("token-ca.pem");
                std::fs::write(&bundle, cert_pem).expect("the token certificate");
                format!(
                    "auth:\n  token:\n    realm: {realm}\n    service: {service}\n    issuer: {issuer}\n    rootcertbundle: {}\n",
                    bundle.display()
                )
            }
        };
        let config = format!(
            "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
             http:\n  addr: 127.0.0.1:0\n  secret: toolhost-test-secret\n{tls_yaml}{auth_yaml}",
            storage.display()
        );
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).expect("the registry config");
        let mut child = match Command::new(PROGRAM)
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => panic!(
                "cannot start `{PROGRAM}` ({e}): the OCI tests need a real registry; install \
                 CNCF distribution with `sudo apt-get install -y docker-registry` (Debian/Ubuntu)"
            ),
        };
        let log = Arc::new(Mutex::new(Vec::new()));
        let (found, listening) = mpsc::channel();
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = Arc::clone(&log);
            let found = found.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if let Some(rest) = line.split("listening on ").nth(1) {
                        let addr: String = rest
                            .chars()
                            .take_while(|c| !c.is_whitespace() && *c != '"' && *c != ',')
                            .collect();
                        let _ = found.send(addr);
                    }
                    log.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                }
            });
        }
        let host = match listening.recv_timeout(START_TIMEOUT) {
            Ok(host) => host,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{PROGRAM}` did not start listening within {START_TIMEOUT:?}; its log:\n{}",
                    log.lock().unwrap_or_else(|e| e.into_inner()).join("\n")
                );
            }
        };
        assert!(
            host.starts_with("127.0.0.1:"),
            "the registry listens on {host}"
        );
        Self {
            child: Some(child),
            host,
            dir,
            log,
        }
    }

    /// `127.0.0.1:PORT`: the registry part of references to it.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The storage directory (`docker/registry/v2/...`).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("storage")
    }

    /// The file holding blob `digest` (`sha256:...`) in the storage.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// The registry's log so far.
    pub fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .join("\n")
    }

    /// Stops the registry (its storage stays until dropped).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The temporary directory the registry's files are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `der` as a PEM block labelled `label`.
fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|chunk| std::str::from_utf8(chunk).unwrap_or_default())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// A response of [`TestRegistry::request`].
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// Header `name` (lowercase), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

impl TestRegistry {
    /// One HTTP/1.1 request to the registry (no auth), for building what
    /// the tests need (signatures, referrers, odd manifests) by hand.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Response {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&self.host).expect("the registry accepts");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\nAccept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json\r\n",
            self.host,
            body.len()
        );
        if let Some(content_type) = content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("request sent");
        stream.write_all(body).expect("body sent");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("response read");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a response head");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = dechunk(&body);
        }
        Response {
            status,
            headers,
            body,
        }
    }

    /// Uploads `bytes` as a blob of `repository`; returns its digest.
    pub fn push_blob(&self, repository: &str, bytes: &[u8]) -> String {
        let digest = sha256(bytes);
        let start = self.request(
            "POST",
            &format!("/v2/{repository}/blobs/uploads/"),
            None,
            b"",
        );
        assert_eq!(
            start.status,
            202,
            "upload start: {}",
            String::from_utf8_lossy(&start.body)
        );
        let location = start
            .header("location")
            .expect("an upload location")
            .to_string();
        let path = location
            .strip_prefix(&format!("http://{}", self.host))
            .unwrap_or(&location)
            .to_string();
        let separator = if path.contains('?') { '&' } else { '?' };
        let done = self.request(
            "PUT",
            &format!("{path}{separator}digest={digest}"),
            Some("application/octet-stream"),
            bytes,
        );
        assert_eq!(
            done.status,
            201,
            "upload: {}",
            String::from_utf8_lossy(&done.body)
        );
        digest
    }

    /// Puts manifest `body` (of `media_type`) at `reference` (a tag or
    /// digest) of `repository`; returns its digest.
    pub fn put_manifest(
        &self,
        repository: &str,
        reference: &str,
        media_type: &str,
        body: &[u8],
    ) -> String {
        let put = self.request(
            "PUT",
            &format!("/v2/{repository}/manifests/{reference}"),
            Some(media_type),
            body,
        );
        assert_eq!(
            put.status,
            201,
            "manifest put: {}",
            String::from_utf8_lossy(&put.body)
        );
        sha256(body)
    }

    /// The manifest at `reference` of `repository`.
    pub fn manifest(&self, repository: &str, reference: &str) -> Response {
        self.request(
            "GET",
            &format!("/v2/{repository}/manifests/{reference}"),
            None,
            b"",
        )
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
}

/// A fresh ECDSA P-256 key pair as PEM: the private key (PKCS#8) and the
/// public key (SPKI), as `cosign` and `openssl` write them.
pub fn key_pair_pem() -> (String, String) {
    key_pair_pem_of("p256")
}

/// A fresh key pair as [`key_pair_pem`] does, of `kind`: `p256`, `p384`
/// or `ed25519`.
pub fn key_pair_pem_of(kind: &str) -> (String, String) {
    let algorithm = match kind {
        "p384" => &rcgen::PKCS_ECDSA_P384_SHA384,
        "ed25519" => &rcgen::PKCS_ED25519,
        _ => &rcgen::PKCS_ECDSA_P256_SHA256,
    };
    let key = rcgen::KeyPair::generate_for(algorithm).expect("a key");
    (key.serialize_pem(), key.public_key_pem())
}
