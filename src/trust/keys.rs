//! PEM keys: the public keys `[[trust]]` rules name, and the private key
//! `toolhost push --sign-key` signs with.

use std::path::Path;

use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1_SIGNING, ECDSA_P384_SHA384_ASN1_SIGNING, EcdsaKeyPair, Ed25519KeyPair,
    KeyPair as _,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use sigstore_verify::crypto::{KeyAlgorithm, SigningScheme, VerificationKey};
use sigstore_verify::types::{DerPublicKey, SignatureBytes};

/// The largest key file read.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// Reads a small text file (a key), refusing one past `MAX_KEY_BYTES`.
fn read_small(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    crate::small_file::read_required_file(path, MAX_KEY_BYTES, what)
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
/// Signing is done with `ring`.
pub struct SigningKey {
    pair: Pair,
}

enum Pair {
    Ecdsa(EcdsaKeyPair, KeyAlgorithm),
    Ed25519(Ed25519KeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let algorithm = match &self.pair {
            Pair::Ecdsa(_, algorithm) => *algorithm,
            Pair::Ed25519(_) => KeyAlgorithm::Ed25519,
        };
        f.debug_struct("SigningKey")
            .field("algorithm", &algorithm)
            .finish_non_exhaustive()
    }
}

/// The DER that precedes a raw public key in its SubjectPublicKeyInfo.
const SPKI_P256: &[u8] = &[
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
const SPKI_P384: &[u8] = &[
    0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b,
    0x81, 0x04, 0x00, 0x22, 0x03, 0x62, 0x00,
];
const SPKI_ED25519: &[u8] = &[
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

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
        Self::from_pkcs8(der.secret_pkcs8_der()).ok_or_else(|| {
            format!(
                "{shown}: not an ECDSA P-256 or P-384 or an Ed25519 key (RSA keys can be \
                 trusted, but toolhost does not sign with them)"
            )
        })
    }

    fn from_pkcs8(der: &[u8]) -> Option<Self> {
        let random = SystemRandom::new();
        let ecdsa = [
            (&ECDSA_P256_SHA256_ASN1_SIGNING, KeyAlgorithm::EcdsaP256),
            (&ECDSA_P384_SHA384_ASN1_SIGNING, KeyAlgorithm::EcdsaP384),
        ];
        for (signing, algorithm) in ecdsa {
            if let Ok(pair) = EcdsaKeyPair::from_pkcs8(signing, der, &random) {
                return Some(Self {
                    pair: Pair::Ecdsa(pair, algorithm),
                });
            }
        }
        Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
            .ok()
            .map(|pair| Self {
                pair: Pair::Ed25519(pair),
            })
    }

    /// A fresh ECDSA P-256 key (for tests and examples).
    pub fn generate() -> Result<Self, String> {
        let random = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &random)
            .map_err(|_| "cannot make a key".to_string())?;
        Self::from_pkcs8(der.as_ref()).ok_or_else(|| "cannot read the key made".to_string())
    }

    /// The public key, as PEM (`-----BEGIN PUBLIC KEY-----`).
    pub fn public_key_pem(&self) -> Result<String, String> {
        let (prefix, raw) = match &self.pair {
            Pair::Ecdsa(pair, KeyAlgorithm::EcdsaP384) => (SPKI_P384, pair.public_key().as_ref()),
            Pair::Ecdsa(pair, _) => (SPKI_P256, pair.public_key().as_ref()),
            Pair::Ed25519(pair) => (SPKI_ED25519, pair.public_key().as_ref()),
        };
        Ok(DerPublicKey::new([prefix, raw].concat()).to_pem())
    }

    /// The signature over `message`: ECDSA as ASN.1 DER over SHA-256
    /// (P-256) or SHA-384 (P-384), or Ed25519.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        match &self.pair {
            Pair::Ecdsa(pair, _) => pair
                .sign(&SystemRandom::new(), message)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "cannot sign".to_string()),
            Pair::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
        }
    }
}
