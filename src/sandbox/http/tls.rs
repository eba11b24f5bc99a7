//! [`HttpClient`]: what a module's HTTPS requests are checked against,
//! made once when its access is set.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

use crate::policy::{HttpAccess, TlsRoots};

/// The TLS configuration of one module's requests: its root store (the
/// bundled or the platform's, plus its `ca_file`), HTTP/1.1 only.
#[derive(Debug)]
pub(crate) struct HttpClient {
    tls: Arc<ClientConfig>,
}

impl HttpClient {
    /// The client for `access`, or `None` when it allows no request.
    pub(crate) fn for_access(access: &HttpAccess) -> Option<Arc<Self>> {
        if access.is_empty() {
            return None;
        }
        let mut roots = RootCertStore::empty();
        match access.roots() {
            TlsRoots::Bundled => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            TlsRoots::Platform => {
                let (added, _ignored) =
                    roots.add_parsable_certificates(platform_roots().iter().cloned());
                if added == 0 {
                    tracing::warn!(
                        "the platform's root store has no usable certificates; HTTPS requests of modules with grants.http.roots = \"platform\" will fail"
                    );
                }
            }
        }
        if let Some(pem) = access.ca_pem() {
            let certs = CertificateDer::pem_slice_iter(pem).filter_map(Result::ok);
            roots.add_parsable_certificates(certs);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tracing::error!("cannot set up TLS: {e}"))
            .ok()?;
        let mut config = config.with_root_certificates(roots).with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Some(Arc::new(Self {
            tls: Arc::new(config),
        }))
    }

    /// The TLS configuration.
    pub(super) fn tls(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.tls)
    }
}

/// The operating system's root certificates, read once.
fn platform_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::warn!("reading the platform's root certificates: {error}");
        }
        found.certs
    })
}
