//! cosign's signatures in the legacy format: a SimpleSigning payload
//! naming the manifest digest, stored as a layer of the manifest tagged
//! `sha256-<hex>.sig`, with the signature over the payload's bytes in the
//! layer's `dev.cosignproject.cosign/signature` annotation (base64).

use base64::Engine as _;
use serde::Deserialize;
use sigstore_verify::types::DerPublicKey;

use super::keys::signature_matches;

/// The media type of a SimpleSigning payload layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The `critical.type` of a cosign image signature.
const SIGNATURE_TYPE: &str = "cosign container image signature";

/// The payload cosign signs for `docker_reference` (the repository) at
/// `digest`, byte for byte as cosign writes it.
pub fn simple_signing_payload(docker_reference: &str, digest: &str) -> Vec<u8> {
    serde_json::json!({
        "critical": {
            "identity": { "docker-reference": docker_reference },
            "image": { "docker-manifest-digest": digest },
            "type": SIGNATURE_TYPE,
        },
        "optional": null,
    })
    .to_string()
    .into_bytes()
}

#[derive(Deserialize)]
struct Payload {
    critical: Critical,
}

#[derive(Deserialize)]
struct Critical {
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    digest: String,
}

/// Checks a legacy signature: made by `key` over `payload`, and the
/// payload names `digest`. The error says what was wrong.
pub(super) fn check(
    key: &DerPublicKey,
    key_shown: &str,
    digest: &str,
    payload: &[u8],
    signature_b64: &str,
) -> Result<(), String> {
    let signature = base64::engine::general_purpose::STANDARD
        .decode(signature_b64.trim())
        .map_err(|e| format!("its signature annotation is not base64: {e}"))?;
    if !signature_matches(key, payload, &signature) {
        return Err(format!(
            "not signed by key {key_shown} (wrong key, or a changed payload)"
        ));
    }
    let parsed: Payload = serde_json::from_slice(payload)
        .map_err(|e| format!("signed, but its payload is not a SimpleSigning payload: {e}"))?;
    if parsed.critical.kind != SIGNATURE_TYPE {
        return Err(format!(
            "signed, but its payload's type is '{}', not '{SIGNATURE_TYPE}'",
            parsed.critical.kind
        ));
    }
    if parsed.critical.image.digest != digest {
        return Err(format!(
            "a valid signature by key {key_shown}, but its payload is for another digest, {}",
            parsed.critical.image.digest
        ));
    }
    Ok(())
}
