//! Signature rules (`[[trust]]`): which OCI references must carry a
//! signature, who must have made it, and checking a signature over one
//! manifest digest, offline.
//!
//! - `rule.rs`: a rule as the config writes it ([`TrustRuleConfig`]) and
//!   resolved ([`TrustRule`]: the key read, the trusted root parsed), and
//!   the longest-prefix choice among them ([`TrustRules`]);
//! - `keys.rs`: PEM public and private keys;
//! - `simple_signing.rs`: cosign's signatures in the legacy format (a
//!   SimpleSigning payload and a signature over it), checked and made;
//! - `bundle.rs`: Sigstore bundles, key-signed or keyless, checked with
//!   `sigstore-verify` against the rule's trusted root.
//!
//! Nothing here touches the network: the `oci` layer fetches the evidence
//! and hands it over as [`Evidence`].

mod bundle;
mod identity;
mod keys;
mod rule;
mod simple_signing;

pub use keys::SigningKey;
pub use rule::{TrustRule, TrustRuleConfig, TrustRules, check_rules};
pub use simple_signing::{SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, simple_signing_payload};

/// The media type of a Sigstore bundle (v0.3), as an OCI referrer's
/// `artifactType` and its layer's media type.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// One signature found for a manifest digest, as the registry holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// A cosign signature in the legacy format: the SimpleSigning payload
    /// and the base64 signature of its annotation.
    SimpleSigning {
        /// The payload's bytes, exactly as stored.
        payload: Vec<u8>,
        /// The `dev.cosignproject.cosign/signature` annotation (base64).
        signature: String,
        /// Where it was found, for messages (`tag sha256-….sig`).
        found_at: String,
    },
    /// A Sigstore bundle (JSON).
    Bundle {
        /// The bundle's JSON bytes.
        json: Vec<u8>,
        /// Where it was found, for messages (`referrer sha256:…`).
        found_at: String,
    },
}

impl Evidence {
    /// Where this signature was found.
    pub fn found_at(&self) -> &str {
        match self {
            Evidence::SimpleSigning { found_at, .. } | Evidence::Bundle { found_at, .. } => {
                found_at
            }
        }
    }
}

/// A signature a rule accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// How, in words: `cosign signature by key keys/acme.pub`, `Sigstore
    /// bundle by dev@example.com (issuer https://…), logged`.
    pub how: String,
    /// Which of the evidence given to [`TrustRule::verify`] it was.
    pub index: usize,
}

/// Why a rule found no valid signature: one line per signature found
/// (empty: there was none).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotVerified {
    /// What was wrong with each signature found.
    pub found: Vec<String>,
}

impl std::fmt::Display for NotVerified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.found.is_empty() {
            return f.write_str(
                "no signature was found (no cosign `.sig` tag, no Sigstore bundle referrer)",
            );
        }
        write!(f, "{} signature(s) found, none valid: ", self.found.len())?;
        f.write_str(&self.found.join("; "))
    }
}

/// A digest `sha256:<64 lowercase hex>`, checked.
pub fn check_digest(digest: &str) -> Result<(), String> {
    let hex = digest.strip_prefix("sha256:").ok_or_else(|| {
        format!("'{digest}' is not a sha256 digest (expected sha256:<64 hex digits>)")
    })?;
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "'{digest}' is not a sha256 digest (expected sha256:<64 lowercase hex digits>)"
        ));
    }
    Ok(())
}
