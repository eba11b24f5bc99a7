//! [`TokenServer`]: a registry token service on 127.0.0.1 (the
//! `WWW-Authenticate: Bearer` flow of the distribution spec): it checks a
//! user's basic credentials and answers with a JWT (ES256, its certificate
//! in `x5c`) granting what the `scope` asks, which a
//! [`TestRegistry`](crate::registry::TestRegistry) started with
//! `RegistryAuth::Token` accepts.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};

use crate::registry::RegistryAuth;

/// The service name the registry and the tokens agree on.
pub const SERVICE: &str = "toolhost-test-registry";
/// The issuer of the tokens.
pub const ISSUER: &str = "toolhost-test-token-issuer";

/// A running token service, stopped when dropped.
pub struct TokenServer {
    addr: String,
    expected: String,
    cert_pem: String,
    stop: Arc<AtomicBool>,
    issued: Arc<AtomicUsize>,
}

impl TokenServer {
    /// Starts the service for one `user` and `password`.
    pub fn start(user: &str, password: &str) -> Self {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a key");
        let params =
            rcgen::CertificateParams::new(vec!["toolhost-test-token".to_string()]).expect("params");
        let cert = params.self_signed(&key).expect("a certificate");
        let signer = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &key.serialize_der(),
            &SystemRandom::new(),
        )
        .expect("the signing key");
        let cert_der = base64::engine::general_purpose::STANDARD.encode(cert.der());
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let addr = listener.local_addr().expect("its address").to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let issued = Arc::new(AtomicUsize::new(0));
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        );
        let (stop_flag, count) = (Arc::clone(&stop), Arc::clone(&issued));
        let accepted = expected.clone();
        std::thread::spawn(move || {
            while !stop_flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = answer(stream, &expected, &signer, &cert_der, &count);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            addr,
            expected: accepted,
            cert_pem: cert.pem(),
            stop,
            issued,
        }
    }

    /// Where it listens, `127.0.0.1:PORT`: the host a `[[registries]]`
    /// entry must mark `plain_http = true` for credentials to be sent here.
    pub fn host(&self) -> &str {
        &self.addr
    }

    /// The registry settings that send clients here for tokens.
    pub fn registry_auth(&self) -> RegistryAuth {
        RegistryAuth::Token {
            realm: format!("http://{}/token", self.addr),
            service: SERVICE.to_string(),
            issuer: ISSUER.to_string(),
            cert_pem: self.cert_pem.clone(),
        }
    }

    /// The identity token (OAuth2 refresh token) this service accepts in
    /// place of the user's password.
    pub fn identity_token(&self) -> String {
        refresh_token_for(&self.expected)
    }

    /// How many tokens were issued.
    pub fn issued(&self) -> usize {
        self.issued.load(Ordering::Relaxed)
    }
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The refresh token (a Docker config's `identitytoken`) the service
/// accepts for the user whose basic credentials are `expected`.
fn refresh_token_for(expected: &str) -> String {
    format!("refresh-{}", b64url(expected.as_bytes()))
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn answer(
    mut stream: TcpStream,
    expected: &str,
    signer: &EcdsaKeyPair,
    cert_der: &str,
    issued: &AtomicUsize,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut authorization = None;
    let mut length = 0usize;
    for _ in 0..100 {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("authorization") {
                authorization = Some(value.trim().to_string());
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0).min(64 * 1024);
            }
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or_default();
    // GET: the query; POST (an OAuth2 refresh token): the form body.
    let mut form = target
        .split_once('?')
        .map(|(_, q)| q.to_string())
        .unwrap_or_default();
    if request_line.starts_with("POST") {
        let mut body = vec![0; length];
        std::io::Read::read_exact(&mut reader, &mut body)?;
        form = String::from_utf8_lossy(&body).into_owned();
    }
    let field = |key: &str| -> Vec<String> {
        form.split('&')
            .filter_map(|pair| pair.strip_prefix(&format!("{key}=")))
            .map(percent_decode)
            .collect()
    };
    let scopes = field("scope");
    let refreshed = field("grant_type").first().map(String::as_str) == Some("refresh_token")
        && field("refresh_token").first().map(String::as_str) == Some(&refresh_token_for(expected));
    if authorization.as_deref() != Some(expected) && !refreshed {
        let body = r#"{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}"#;
        return write!(
            stream,
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
    let access: Vec<serde_json::Value> = scopes
        .iter()
        .filter_map(|scope| {
            let mut parts = scope.splitn(3, ':');
            let (kind, name, actions) = (parts.next()?, parts.next()?, parts.next()?);
            Some(serde_json::json!({"type": kind, "name": name, "actions": actions.split(',').collect::<Vec<_>>()}))
        })
        .collect();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let header = serde_json::json!({"alg": "ES256", "typ": "JWT", "x5c": [cert_der]});
    let claims = serde_json::json!({
        "iss": ISSUER, "sub": "tester", "aud": SERVICE,
        "exp": now + 300, "nbf": now - 10, "iat": now,
        "jti": format!("t{}", issued.fetch_add(1, Ordering::Relaxed)),
        "access": access,
    });
    let signing_input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let signature = signer
        .sign(&SystemRandom::new(), signing_input.as_bytes())
        .map_err(|_| std::io::Error::other("signing failed"))?;
    let token = format!("{signing_input}.{}", b64url(signature.as_ref()));
    let body =
        serde_json::json!({"token": token, "access_token": token, "expires_in": 300}).to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => out.push(b),
                    Err(_) => out.extend_from_slice(&bytes[i..i + 3]),
                }
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
