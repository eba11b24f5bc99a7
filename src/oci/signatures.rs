//! Finding the signatures a registry holds for a manifest digest: cosign's
//! legacy `.sig` tag, and Sigstore bundles attached as referrers (the
//! referrers API, else the referrers tag schema).

use crate::trust::{BUNDLE_MEDIA_TYPE, Evidence, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE};

use super::client::Registry;
use super::layout::{MANIFEST_TYPES, MAX_MANIFEST_BYTES, Manifest, OCI_INDEX};
use super::reference::OciReference;
use super::{OciError, OciErrorKind};

/// The most signatures looked at per digest (each format).
const MAX_SIGNATURES: usize = 16;
/// The largest signature payload or bundle read (real ones are a few KiB).
const MAX_SIGNATURE_BYTES: u64 = 1024 * 1024;

/// Every signature found for `digest` in `reference`'s repository.
pub(crate) async fn find_evidence(
    registry: &Registry,
    reference: &OciReference,
    digest: &str,
) -> Result<Vec<Evidence>, OciError> {
    let mut evidence = legacy_signatures(registry, reference, digest).await?;
    evidence.extend(bundles(registry, reference, digest).await?);
    Ok(evidence)
}

/// The tag cosign's legacy signatures live at: `sha256-<hex>.sig`.
pub(crate) fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// The manifest at `tag`, if there is one.
async fn manifest_at(
    registry: &Registry,
    reference: &OciReference,
    target: &str,
    what: &str,
) -> Result<Option<Manifest>, OciError> {
    match registry
        .get(
            reference,
            &format!("manifests/{target}"),
            &MANIFEST_TYPES,
            MAX_MANIFEST_BYTES,
            what,
        )
        .await
    {
        Ok(body) => Manifest::parse(&body.bytes, body.content_type.as_deref())
            .map(Some)
            .map_err(|e| OciError::new(OciErrorKind::Refused, format!("{what}: {e}"))),
        Err(e) if e.kind == OciErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

async fn small_blob(
    registry: &Registry,
    reference: &OciReference,
    digest: &str,
    what: &str,
) -> Result<Vec<u8>, OciError> {
    let mut bytes = Vec::new();
    registry
        .download_blob(reference, digest, MAX_SIGNATURE_BYTES, what, &mut bytes)
        .await?;
    Ok(bytes)
}

async fn legacy_signatures(
    registry: &Registry,
    reference: &OciReference,
    digest: &str,
) -> Result<Vec<Evidence>, OciError> {
    let tag = signature_tag(digest);
    let Some(manifest) =
        manifest_at(registry, reference, &tag, "the cosign signature manifest").await?
    else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for layer in manifest
        .layers
        .iter()
        .filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE)
        .take(MAX_SIGNATURES)
    {
        let Some(signature) = layer.annotations.get(SIGNATURE_ANNOTATION) else {
            continue;
        };
        let payload = small_blob(
            registry,
            reference,
            &layer.digest,
            "a cosign signature payload",
        )
        .await?;
        found.push(Evidence::SimpleSigning {
            payload,
            signature: signature.clone(),
            found_at: format!("cosign signature at tag {tag} (layer {})", layer.digest),
        });
    }
    Ok(found)
}

async fn bundles(
    registry: &Registry,
    reference: &OciReference,
    digest: &str,
) -> Result<Vec<Evidence>, OciError> {
    let path = format!(
        "referrers/{digest}?artifactType={}",
        BUNDLE_MEDIA_TYPE.replace('+', "%2B")
    );
    let index = match registry
        .get(
            reference,
            &path,
            &[OCI_INDEX],
            MAX_MANIFEST_BYTES,
            "the referrers list",
        )
        .await
    {
        Ok(body) => Manifest::parse(&body.bytes, Some(OCI_INDEX)).map_err(|e| {
            OciError::new(OciErrorKind::Refused, format!("the referrers list: {e}"))
        })?,
        // No referrers API (distribution 2.8): the referrers tag schema.
        Err(e) if e.kind == OciErrorKind::NotFound || e.kind == OciErrorKind::Refused => {
            let tag = digest.replace(':', "-");
            match manifest_at(registry, reference, &tag, "the referrers tag").await? {
                Some(index) => index,
                None => return Ok(Vec::new()),
            }
        }
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for entry in index
        .manifests
        .iter()
        .filter(|m| m.artifact_type.as_deref() == Some(BUNDLE_MEDIA_TYPE))
        .take(MAX_SIGNATURES)
    {
        let Some(manifest) =
            manifest_at(registry, reference, &entry.digest, "a bundle referrer").await?
        else {
            continue;
        };
        for layer in manifest
            .layers
            .iter()
            .filter(|l| l.media_type == BUNDLE_MEDIA_TYPE)
            .take(1)
        {
            let json = small_blob(registry, reference, &layer.digest, "a Sigstore bundle").await?;
            found.push(Evidence::Bundle {
                json,
                found_at: format!("Sigstore bundle in referrer {}", entry.digest),
            });
        }
    }
    Ok(found)
}
