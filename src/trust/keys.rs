//! PEM keys: the public keys `[[trust]]` rules name, and the private key
//! `toolhost push --sign-key` signs with.

use std::path::Path;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use sigstore_verify::crypto::{KeyAlgorithm, KeyPair, SigningScheme, VerificationKey};
use sigstore_verify::types::{DerPublicKey, SignatureBytes};

/// The largest key file read.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// Reads a small text file (a key), refusing one past `MAX_KEY_BYTES`.
pub(super) fn read_small(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if meta.len() > MAX_KEY_BYTES {
        return Err(format!(
            "{what} {shown} is {} bytes; a key file is at most {MAX_KEY_BYTES}",
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))
}

/// A public key from a PEM file (`-----BEGIN PUBLIC KEY-----`: ECDSA
/// P-256 or P-384, Ed25519, RSA), as the SPKI DER.
pub(super) fn read_public_key(path: &Path) -> Result<DerPublicKey, String> {
    let shown = path.display();
    let text = read_small(path, "the public key")?;
    let der = SubjectPublicKeyInfoDer::from_pem_slice(&text).map_err(|e| {
        format!(
            "{shown} holds no PEM public key (-----BEGIN PUBLIC KEY-----): {e}; \
             `cosign public-key` or `openssl pkey -pubout` writes one"
        )
    })?;
    let key = DerPublicKey::new(der.as_ref().to_vec());
    let algorithm = KeyAlgorithm::from_spki(&key)
        .map_err(|e| format!("{shown}: not a usable public key: {e}"))?;
    match algorithm {
        KeyAlgorithm::EcdsaP256
        | KeyAlgorithm::EcdsaP384
        | KeyAlgorithm::Ed25519
        | KeyAlgorithm::Rsa => Ok(key),
        other => Err(format!(
            "{shown}: {other:?} keys are not accepted (ECDSA P-256/P-384, Ed25519 or RSA)"
        )),
    }
}

/// The schemes a signature by `key` may use: the key's own, and for RSA
/// both PKCS#1 v1.5 and PSS with SHA-256.
fn schemes(key: &DerPublicKey) -> Vec<SigningScheme> {
    match KeyAlgorithm::from_spki(key) {
        Ok(KeyAlgorithm::Rsa) => vec![
            SigningScheme::RsaPkcs1Sha256,
            SigningScheme::RsaPssSha256,
            SigningScheme::RsaPkcs1Sha384,
            SigningScheme::RsaPkcs1Sha512,
        ],
        Ok(algorithm) => vec![algorithm.default_signing_scheme()],
        Err(_) => Vec::new(),
    }
}

/// Whether `signature` is `key`'s signature over `message`.
pub(super) fn signature_matches(key: &DerPublicKey, message: &[u8], signature: &[u8]) -> bool {
    let signature = SignatureBytes::new(signature.to_vec());
    schemes(key).into_iter().any(|scheme| {
        VerificationKey::from_spki_with_scheme(key, scheme)
            .is_ok_and(|k| k.verify(message, &signature).is_ok())
    })
}

/// A private key to sign with (`toolhost push --sign-key`): PKCS#8 PEM
/// (`-----BEGIN PRIVATE KEY-----`), ECDSA P-256 or P-384, or Ed25519.
pub struct SigningKey {
    pair: KeyPair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.pair.algorithm())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Reads the key at `path`; the error says what the file holds and how
    /// to convert it.
    pub fn read(path: &Path) -> Result<Self, String> {
        let shown = path.display();
        let text = read_small(path, "the signing key")?;
        if text.windows(9).any(|w| w == b"ENCRYPTED") {
            return Err(format!(
                "{shown} is an encrypted key (cosign's `ENCRYPTED SIGSTORE PRIVATE KEY` or \
                 PKCS#8 `ENCRYPTED PRIVATE KEY`); give an unencrypted PKCS#8 PEM key, for \
                 example from `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`"
            ));
        }
        let der = PrivatePkcs8KeyDer::from_pem_slice(&text).map_err(|e| {
            format!(
                "{shown} holds no PKCS#8 private key (-----BEGIN PRIVATE KEY-----): {e}; \
                 `openssl pkcs8 -topk8 -nocrypt` converts an `EC PRIVATE KEY`"
            )
        })?;
        let pair = KeyPair::from_pkcs8_der(der.secret_pkcs8_der())
            .map_err(|e| format!("{shown}: cannot sign with this key: {e}"))?;
        Ok(Self { pair })
    }

    /// A fresh ECDSA P-256 key (for tests and examples).
    pub fn generate() -> Result<Self, String> {
        KeyPair::generate_ecdsa_p256()
            .map(|pair| Self { pair })
            .map_err(|e| format!("cannot make a key: {e}"))
    }

    /// The public key, as PEM (`-----BEGIN PUBLIC KEY-----`).
    pub fn public_key_pem(&self) -> Result<String, String> {
        self.pair
            .public_key_der()
            .map(|der| der.to_pem())
            .map_err(|e| format!("cannot encode the public key: {e}"))
    }

    /// The signature over `message`, with the key's default scheme (ECDSA:
    /// ASN.1 DER over SHA-256 for P-256, SHA-384 for P-384).
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        self.pair
            .sign(message)
            .map(|s| s.as_bytes().to_vec())
            .map_err(|e| format!("cannot sign: {e}"))
    }
}
