//! Sigstore bundles (v0.3, as `cosign` attaches them as OCI referrers),
//! checked with `sigstore-verify` against a rule's trusted root: the
//! signature over the manifest digest (a message signature, or a DSSE
//! in-toto statement whose subject is the digest), the certificate chain
//! and identity for keyless ones, the transparency-log inclusion.

use sigstore_verify::trust_root::TrustedRoot;
use sigstore_verify::types::{Artifact, ArtifactDigest, Bundle, DerPublicKey, Sha256Hash};
use sigstore_verify::{PublicKeyVerificationPolicy, VerificationPolicy, Verifier};

use super::identity::Identity;

/// A trusted root with nothing in it, for key rules without one (their
/// bundles' log entries cannot be checked then).
const EMPTY_ROOT: &str = r#"{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","tlogs":[],"certificateAuthorities":[],"ctlogs":[],"timestampAuthorities":[]}"#;

/// The bundle, parsed, and the digest as the artifact it must sign.
fn prepare(json: &[u8], digest: &str) -> Result<(Bundle, ArtifactDigest), String> {
    let text = std::str::from_utf8(json).map_err(|_| "the bundle is not UTF-8 text".to_string())?;
    let bundle = Bundle::from_json(text).map_err(|e| format!("not a Sigstore bundle: {e}"))?;
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    let hash = Sha256Hash::from_hex(hex).map_err(|e| format!("bad digest {digest}: {e}"))?;
    Ok((bundle, ArtifactDigest::sha256(hash)))
}

/// Checks a bundle signed with `key`: with `root`, its log entry too.
pub(super) fn check_with_key(
    json: &[u8],
    digest: &str,
    key: &DerPublicKey,
    key_shown: &str,
    root: Option<&TrustedRoot>,
) -> Result<String, String> {
    let (bundle, artifact) = prepare(json, digest)?;
    let mut policy = PublicKeyVerificationPolicy::new(key.clone());
    let empty;
    let root = match root {
        Some(root) => root,
        None => {
            policy = policy.skip_tlog_unsafe();
            empty = TrustedRoot::from_json(EMPTY_ROOT).map_err(|e| e.to_string())?;
            &empty
        }
    };
    let verifier =
        Verifier::new(root).map_err(|e| format!("the trusted root is not usable: {e}"))?;
    let result = verifier
        .verify(Artifact::from_digest(artifact), &bundle, &policy)
        .map_err(|e| explain(e.to_string(), Some(key_shown)))?;
    let logged = if result.tlog_verified() {
        ", logged"
    } else {
        ""
    };
    Ok(format!("Sigstore bundle by key {key_shown}{logged}"))
}

/// Checks a keyless bundle: certificate from the root's CAs, the issuer,
/// the identity, the log entry.
pub(super) fn check_keyless(
    json: &[u8],
    digest: &str,
    identity: &Identity,
    issuer: &str,
    root: &TrustedRoot,
) -> Result<String, String> {
    let (bundle, artifact) = prepare(json, digest)?;
    let mut policy = VerificationPolicy::any_identity().require_issuer(issuer);
    if let Some(exact) = identity.exact() {
        policy = policy.require_identity(exact);
    }
    let verifier =
        Verifier::new(root).map_err(|e| format!("the trusted root is not usable: {e}"))?;
    let result = verifier
        .verify(Artifact::from_digest(artifact), &bundle, &policy)
        .map_err(|e| explain(e.to_string(), None))?;
    let signer = result
        .identity()
        .map(|san| san.as_str().to_string())
        .unwrap_or_default();
    identity.check_pattern(&signer)?;
    Ok(format!(
        "Sigstore bundle by {signer} (issuer {issuer}), logged"
    ))
}

/// sigstore-verify's error, with the two common causes named.
fn explain(error: String, key: Option<&str>) -> String {
    let lower = error.to_ascii_lowercase();
    if lower.contains("identity") && key.is_none() {
        format!("{error} (wrong identity)")
    } else if lower.contains("digest") || lower.contains("subject") || lower.contains("artifact") {
        format!("{error} (a signature for another digest)")
    } else if let Some(key) = key
        && lower.contains("signature")
    {
        format!("{error} (not signed by key {key})")
    } else {
        error
    }
}
