//! `toolhost push`: a component written in the layout `wkg oci push`
//! writes (so `wkg oci pull` and wassette read it back), and, with a key, a
//! cosign signature in the legacy format beside it.

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::trust::{
    SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, SigningKey, simple_signing_payload,
};

use super::client::{Registry, hex};
use super::fetch::{OciContext, block_on};
use super::layout::{MANIFEST_TYPES, MAX_MANIFEST_BYTES, OCI_MANIFEST, WASM_CONFIG, WASM_LAYER};
use super::reference::OciReference;
use super::signatures::signature_tag;
use super::{OciError, OciErrorKind};

/// The config media type of cosign's signature manifests.
const IMAGE_CONFIG: &str = "application/vnd.oci.image.config.v1+json";

/// What `push` wrote.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The manifest's digest (what to pin).
    pub digest: String,
    /// The component layer's size.
    pub size: u64,
    /// The tag of the signature, if one was written.
    pub signature_tag: Option<String>,
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

impl OciContext<'_> {
    /// Pushes `component` to `reference` (a tag), signed with `key` if
    /// given (blocking).
    pub fn push(
        &self,
        component: &[u8],
        reference: &OciReference,
        key: Option<&SigningKey>,
    ) -> Result<Pushed, OciError> {
        block_on(async {
            let registry = self.connect(reference).await?;
            let digest = push_component(&registry, reference, component).await?;
            let signature_tag = match key {
                Some(key) => Some(sign(&registry, reference, &digest, key).await?),
                None => None,
            };
            Ok(Pushed {
                digest,
                size: component.len() as u64,
                signature_tag,
            })
        })?
    }
}

async fn push_blob(
    registry: &Registry,
    reference: &OciReference,
    bytes: Vec<u8>,
) -> Result<(String, u64), OciError> {
    let digest = sha256(&bytes);
    let size = bytes.len() as u64;
    registry.push_blob(reference, bytes, &digest).await?;
    Ok((digest, size))
}

async fn push_manifest(
    registry: &Registry,
    reference: &OciReference,
    manifest: &Value,
) -> Result<String, OciError> {
    let body = serde_json::to_vec(manifest)
        .map_err(|e| OciError::new(OciErrorKind::Config, e.to_string()))?;
    let digest = sha256(&body);
    registry
        .push_manifest(reference, body, OCI_MANIFEST)
        .await?;
    Ok(digest)
}

/// Pushes `config` (as a blob of `config_type`) and an image manifest of
/// it and `layers` (already pushed) to `reference`; returns its digest.
async fn push_image(
    registry: &Registry,
    reference: &OciReference,
    config_type: &str,
    config: &Value,
    layers: Value,
) -> Result<String, OciError> {
    let config = serde_json::to_vec(config)
        .map_err(|e| OciError::new(OciErrorKind::Config, e.to_string()))?;
    let (config_digest, config_size) = push_blob(registry, reference, config).await?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": { "mediaType": config_type, "digest": config_digest, "size": config_size },
        "layers": layers,
    });
    push_manifest(registry, reference, &manifest).await
}

async fn push_component(
    registry: &Registry,
    reference: &OciReference,
    component: &[u8],
) -> Result<String, OciError> {
    let (layer_digest, layer_size) = push_blob(registry, reference, component.to_vec()).await?;
    let (exports, imports) = world_names(component);
    let config = json!({
        "created": jiff::Timestamp::now().to_string(),
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": { "exports": exports, "imports": imports },
    });
    let layers = json!([{ "mediaType": WASM_LAYER, "digest": layer_digest, "size": layer_size }]);
    push_image(registry, reference, WASM_CONFIG, &config, layers).await
}

/// Writes a cosign legacy-format signature of `digest` at its `.sig` tag,
/// keeping the signatures already there.
async fn sign(
    registry: &Registry,
    reference: &OciReference,
    digest: &str,
    key: &SigningKey,
) -> Result<String, OciError> {
    let payload = simple_signing_payload(&reference.repository_name(), digest);
    let signature = key
        .sign(&payload)
        .map_err(|e| OciError::new(OciErrorKind::Config, e))?;
    let signature = base64::engine::general_purpose::STANDARD.encode(signature);
    let tag = signature_tag(digest);
    let at_tag = reference.at_tag(&tag);
    let mut layers = existing_signature_layers(registry, &at_tag).await?;
    let (payload_digest, payload_size) = push_blob(registry, reference, payload).await?;
    layers.retain(|layer| layer["digest"] != payload_digest.as_str());
    layers.push(json!({
        "mediaType": SIMPLE_SIGNING_MEDIA_TYPE,
        "digest": payload_digest,
        "size": payload_size,
        "annotations": { SIGNATURE_ANNOTATION: signature },
    }));
    let diff_ids: Vec<Value> = layers.iter().map(|l| l["digest"].clone()).collect();
    let config = json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{ "created": "0001-01-01T00:00:00Z" }],
        "os": "",
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
    });
    push_image(
        registry,
        &at_tag,
        IMAGE_CONFIG,
        &config,
        Value::Array(layers),
    )
    .await?;
    Ok(tag)
}

/// The layers of the signature manifest at `at_tag`, if there is one.
async fn existing_signature_layers(
    registry: &Registry,
    at_tag: &OciReference,
) -> Result<Vec<Value>, OciError> {
    let path = format!("manifests/{}", at_tag.target());
    match registry
        .get(
            at_tag,
            &path,
            &MANIFEST_TYPES,
            MAX_MANIFEST_BYTES,
            "the signature manifest",
        )
        .await
    {
        Ok(body) => {
            // Kept as JSON: the layers go back into the new manifest as
            // they are, annotations and all.
            let value: Value = serde_json::from_slice(&body.bytes).map_err(|e| {
                OciError::new(
                    OciErrorKind::Refused,
                    format!("the existing signature manifest is not JSON: {e}"),
                )
            })?;
            Ok(value["layers"]
                .as_array()
                .map(|layers| {
                    layers
                        .iter()
                        .filter(|l| l["mediaType"] == SIMPLE_SIGNING_MEDIA_TYPE)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default())
        }
        Err(e) if e.kind == OciErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The names a component exports and imports at its top level.
fn world_names(component: &[u8]) -> (Vec<String>, Vec<String>) {
    use wasmparser::{Parser, Payload};
    let (mut exports, mut imports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(component) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentExportSection(reader) if depth == 1 => {
                exports.extend(
                    reader
                        .into_iter()
                        .flatten()
                        .map(|e| e.name.name.to_string()),
                );
            }
            Payload::ComponentImportSection(reader) if depth == 1 => {
                imports.extend(
                    reader
                        .into_iter()
                        .flatten()
                        .map(|i| i.name.name.to_string()),
                );
            }
            _ => {}
        }
    }
    (exports, imports)
}
