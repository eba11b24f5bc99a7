//! The artifact layout of a component, as `wkg oci push` writes it: an OCI
//! image manifest whose config is `application/vnd.wasm.config.v0+json`
//! and whose one wasm layer is the component; or an image index naming
//! one such manifest. Anything else is refused, saying what was found.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::policy::limit_key;
use crate::trust::check_digest;

/// An OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// An OCI image index.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker's image manifest (v2, schema 2).
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker's manifest list.
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// The config media type `wkg` writes.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type `wkg` writes.
pub const WASM_LAYER: &str = "application/wasm";
/// Every layer media type taken as the component.
pub const WASM_LAYER_TYPES: [&str; 3] = [
    WASM_LAYER,
    "application/vnd.wasm.component.v1",
    "application/vnd.bytecodealliance.wasm.component.layer.v0+wasm",
];
/// The media types a manifest request accepts.
pub const MANIFEST_TYPES: [&str; 4] = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST];
/// The largest manifest or config accepted.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// A descriptor: what a manifest says of a blob.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Its media type.
    pub media_type: String,
    /// Its digest.
    pub digest: String,
    /// Its size in bytes, as declared.
    pub size: i64,
    /// For index entries: the artifact type.
    #[serde(default)]
    pub artifact_type: Option<String>,
    /// Its annotations.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// For index entries: the platform.
    #[serde(default)]
    pub platform: Option<Platform>,
}

/// An index entry's platform.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Platform {
    /// For example `wasm`.
    #[serde(default)]
    pub architecture: String,
    /// For example `wasip2`.
    #[serde(default)]
    pub os: String,
}

/// A manifest or index, read leniently.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The declared media type.
    #[serde(default)]
    pub media_type: Option<String>,
    /// The config (image manifests).
    #[serde(default)]
    pub config: Option<Descriptor>,
    /// The layers (image manifests).
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    /// The manifests (indexes).
    #[serde(default)]
    pub manifests: Vec<Descriptor>,
}

impl Manifest {
    /// Parses manifest `bytes` (the registry's `content_type` decides when
    /// the manifest does not say).
    pub fn parse(bytes: &[u8], content_type: Option<&str>) -> Result<Self, String> {
        let mut manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| format!("the manifest is not valid JSON: {e}"))?;
        if manifest.media_type.is_none() {
            manifest.media_type = content_type
                .map(str::to_string)
                .or_else(|| (!manifest.manifests.is_empty()).then(|| OCI_INDEX.to_string()));
        }
        Ok(manifest)
    }

    /// Whether it is an index (a list of manifests).
    pub fn is_index(&self) -> bool {
        matches!(self.media_type.as_deref(), Some(OCI_INDEX | DOCKER_LIST))
            || (self.config.is_none() && !self.manifests.is_empty())
    }
}

/// What a manifest leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// The component: this layer.
    Component(Descriptor),
    /// An index: fetch this manifest next.
    Index(Descriptor),
}

/// The component's layer of `manifest`, or (an index) the wasm manifest
/// it names; the error says what was found. `max_component_bytes`
/// bounds the layer's declared size.
pub fn component_layer(manifest: &Manifest, max_component_bytes: u64) -> Result<Layout, String> {
    if manifest.is_index() {
        return index_entry(manifest).map(Layout::Index);
    }
    let media_type = manifest.media_type.as_deref().unwrap_or(OCI_MANIFEST);
    if media_type != OCI_MANIFEST && media_type != DOCKER_MANIFEST {
        return Err(format!(
            "the manifest's media type is {media_type}, not an OCI image manifest ({OCI_MANIFEST})"
        ));
    }
    if let Some(config) = &manifest.config {
        check_descriptor(config, MAX_MANIFEST_BYTES, "the config")?;
    }
    let wasm: Vec<&Descriptor> = manifest
        .layers
        .iter()
        .filter(|l| WASM_LAYER_TYPES.contains(&l.media_type.as_str()))
        .collect();
    let layer = match wasm.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "it holds no wasm layer (layer media types: {}; expected {})",
                list_types(&manifest.layers),
                WASM_LAYER_TYPES.join(" or ")
            ));
        }
        several => {
            return Err(format!(
                "it holds {} wasm layers ({}); a module is one component, one layer",
                several.len(),
                several
                    .iter()
                    .map(|l| l.digest.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    };
    check_descriptor(layer, max_component_bytes, "the component layer").map_err(|e| {
        if e.contains("past") {
            format!("{e} ({})", limit_key::max_component_bytes)
        } else {
            e
        }
    })?;
    Ok(Layout::Component(layer.clone()))
}

/// The one wasm manifest an index names.
fn index_entry(index: &Manifest) -> Result<Descriptor, String> {
    let wasm: Vec<&Descriptor> = index
        .manifests
        .iter()
        .filter(|entry| {
            let platform = entry.platform.as_ref();
            entry.artifact_type.as_deref() == Some(WASM_CONFIG)
                || platform.is_some_and(|p| p.architecture == "wasm" || p.os.starts_with("wasi"))
        })
        .collect();
    match wasm.as_slice() {
        [one] => {
            check_descriptor(one, MAX_MANIFEST_BYTES, "the index's wasm manifest")?;
            Ok((*one).clone())
        }
        [] => Err(format!(
            "it is an image index without a wasm manifest (entries: {})",
            if index.manifests.is_empty() {
                "none".to_string()
            } else {
                index
                    .manifests
                    .iter()
                    .map(|m| match &m.platform {
                        Some(p) => format!("{}/{}", p.os, p.architecture),
                        None => m
                            .artifact_type
                            .clone()
                            .unwrap_or_else(|| m.media_type.clone()),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
        several => Err(format!(
            "it is an image index naming {} wasm manifests; reference one of them by digest",
            several.len()
        )),
    }
}

fn check_descriptor(descriptor: &Descriptor, limit: u64, what: &str) -> Result<(), String> {
    check_digest(&descriptor.digest).map_err(|e| format!("{what}: {e}"))?;
    let size = u64::try_from(descriptor.size)
        .map_err(|_| format!("{what} declares a negative size ({})", descriptor.size))?;
    if size > limit {
        return Err(format!(
            "{what} declares {size} bytes, past the most accepted ({limit} bytes); nothing was downloaded"
        ));
    }
    Ok(())
}

fn list_types(layers: &[Descriptor]) -> String {
    if layers.is_empty() {
        return "none".into();
    }
    layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(layers: &str) -> Manifest {
        let d = "a".repeat(64);
        Manifest::parse(
            format!(
                r#"{{"schemaVersion":2,"mediaType":"{OCI_MANIFEST}","config":{{"mediaType":"{WASM_CONFIG}","digest":"sha256:{d}","size":10}},"layers":[{layers}]}}"#
            )
            .as_bytes(),
            None,
        )
        .unwrap()
    }

    fn layer(media_type: &str, size: u64) -> String {
        format!(
            r#"{{"mediaType":"{media_type}","digest":"sha256:{}","size":{size}}}"#,
            "b".repeat(64)
        )
    }

    #[test]
    fn one_wasm_layer_is_the_component() {
        for media_type in WASM_LAYER_TYPES {
            let m = manifest(&layer(media_type, 100));
            assert!(matches!(
                component_layer(&m, 1000),
                Ok(Layout::Component(_))
            ));
        }
        let e = component_layer(&manifest(&layer("application/tar", 1)), 1000).unwrap_err();
        assert!(
            e.contains("no wasm layer") && e.contains("application/tar"),
            "{e}"
        );
        let two = format!("{},{}", layer(WASM_LAYER, 1), layer(WASM_LAYER, 1));
        assert!(
            component_layer(&manifest(&two), 1000)
                .unwrap_err()
                .contains("2 wasm layers")
        );
        let e = component_layer(&manifest(&layer(WASM_LAYER, 5000)), 1000).unwrap_err();
        assert!(
            e.contains("5000") && e.contains("max_component_bytes"),
            "{e}"
        );
    }
}
