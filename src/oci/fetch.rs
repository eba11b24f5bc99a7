//! Fetching one module's component: its digest fixed (the reference's, the
//! config's `digest`, the lockfile's) or resolved from its tag, its
//! signature verified where a `[[trust]]` rule applies, then the component
//! from the pull store or the registry, by digest.

use std::future::Future;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::trust::{Evidence, TrustRule, TrustRules};

use super::client::{Registry, hex};
use super::layout::{Layout, MANIFEST_TYPES, MAX_MANIFEST_BYTES, Manifest, component_layer};
use super::reference::OciReference;
use super::registries::{RegistryConfig, settings_for};
use super::signatures::find_evidence;
use super::store::PullStore;
use super::{OciError, OciErrorKind};

/// What fetching OCI modules needs from the config.
#[derive(Debug, Clone, Copy)]
pub struct OciContext<'a> {
    /// `[[registries]]`.
    pub registries: &'a [RegistryConfig],
    /// `[[trust]]`, resolved.
    pub trust: &'a TrustRules,
    /// Where relative paths (CA files) are taken from.
    pub base: &'a Path,
    /// Where pulled components are kept (none: nothing is kept).
    pub store: Option<&'a PullStore>,
}

/// Where a module's digest is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinSource {
    /// `oci = "...@sha256:..."`.
    Reference,
    /// `digest = "sha256:..."` in the module's entry.
    Entry,
    /// `toolhost.lock`.
    Lock,
}

/// One OCI module to fetch.
#[derive(Debug, Clone)]
pub struct OciRequest<'a> {
    /// The module's name, for messages.
    pub module: &'a str,
    /// `oci = ...`.
    pub reference: &'a OciReference,
    /// The entry's `digest`, if any.
    pub digest: Option<&'a str>,
    /// The lockfile's digest for this module, if any.
    pub locked: Option<&'a str>,
    /// The module's `max_component_bytes`.
    pub max_component_bytes: u64,
    /// Ask the registry even for a digest that is fixed and kept (for
    /// `toolhost lock` and `toolhost pull`: check `digest` against the tag).
    pub online: bool,
    /// Resolve a bare tag even without a rule (for `toolhost lock`, which
    /// pins what it resolves).
    pub locking: bool,
}

/// A fetched component.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The component's bytes.
    pub bytes: Vec<u8>,
    /// The manifest digest that was fetched (what a lock pins).
    pub digest: String,
    /// The component layer's size.
    pub size: u64,
    /// How it was accepted, in words (`cosign signature by key ...`,
    /// `digest pinned by toolhost.lock`).
    pub verified: String,
    /// Whether the registry was asked (not everything came from the store).
    pub from_registry: bool,
}

/// Runs `future` to completion on a runtime of its own, on a thread of its
/// own (so that it works whether or not the caller is inside a runtime).
pub(crate) fn block_on<T: Send>(future: impl Future<Output = T> + Send) -> Result<T, OciError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| {
                        OciError::new(
                            OciErrorKind::Config,
                            format!("cannot start an async runtime: {e}"),
                        )
                    })?;
                Ok(runtime.block_on(future))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(OciError::new(
                    OciErrorKind::Config,
                    "the registry client stopped unexpectedly".into(),
                ))
            })
    })
}

impl OciContext<'_> {
    /// Fetches `request`'s component (blocking).
    pub fn fetch(&self, request: &OciRequest<'_>) -> Result<Pulled, OciError> {
        block_on(self.fetch_async(request))?
    }

    /// Resolves `reference` to its manifest digest, and every signature
    /// found for it, from the registry (blocking): for `toolhost verify`.
    pub fn inspect(&self, reference: &OciReference) -> Result<(String, Vec<Evidence>), OciError> {
        block_on(async {
            let registry = self.connect(reference).await?;
            let digest = resolve(&registry, reference, self.store).await?;
            let evidence = find_evidence(&registry, reference, &digest).await?;
            Ok((digest, evidence))
        })?
    }

    pub(crate) async fn connect(&self, reference: &OciReference) -> Result<Registry, OciError> {
        let settings = settings_for(self.registries, reference.registry(), self.base)
            .map_err(|e| OciError::new(OciErrorKind::Config, e))?;
        Registry::connect(reference.registry(), &settings).await
    }

    async fn fetch_async(&self, request: &OciRequest<'_>) -> Result<Pulled, OciError> {
        let reference = request.reference;
        let pin = fixed_digest(request)?;
        let rule = self.trust.rule_for(&reference.to_string());
        let mut registry = None;
        let digest = match &pin {
            // A `digest` beside a tag is checked against the tag whenever
            // the registry is asked anyway.
            Some((digest, PinSource::Entry))
                if reference.digest().is_none() && (request.online || !self.kept(digest)) =>
            {
                let connected = self.registry(&mut registry, reference).await?;
                let resolved = resolve(connected, reference, self.store).await?;
                if *digest != resolved {
                    return Err(OciError::new(
                        OciErrorKind::NotVerified,
                        format!(
                            "`digest = \"{digest}\"` disagrees with the registry: \
                             {reference} is {resolved} there; check which one you meant and fix \
                             `digest` (or remove it and pin with `toolhost lock`)"
                        ),
                    ));
                }
                resolved
            }
            Some((digest, _)) => digest.clone(),
            None if rule.is_none() && !request.locking => return Err(unpinned(request)),
            None => {
                let connected = self.registry(&mut registry, reference).await?;
                resolve(connected, reference, self.store).await?
            }
        };
        let verified = match rule {
            Some(rule) => self.verify(rule, request, &digest, &mut registry).await?,
            None => match pin {
                Some((_, PinSource::Reference)) => "digest pinned in `oci`".to_string(),
                Some((_, PinSource::Entry)) => "digest pinned by `digest`".to_string(),
                Some((_, PinSource::Lock)) => "digest pinned by toolhost.lock".to_string(),
                None if request.locking => {
                    "tag resolved by `toolhost lock` (no [[trust]] rule covers it)".to_string()
                }
                None => return Err(unpinned(request)),
            },
        };
        let (bytes, size, from_registry) = self.component(request, &digest, &mut registry).await?;
        Ok(Pulled {
            bytes,
            digest,
            size,
            verified,
            from_registry: from_registry || registry.is_some(),
        })
    }

    /// Verifies `digest` under `rule`: from the signatures kept in the
    /// store if one passes, else from the registry's.
    async fn verify(
        &self,
        rule: &TrustRule,
        request: &OciRequest<'_>,
        digest: &str,
        registry: &mut Option<Registry>,
    ) -> Result<String, OciError> {
        if !request.online
            && let Some(store) = self.store
            && let Ok(verified) = rule.verify(digest, &store.read_evidence(digest))
        {
            return Ok(verified.how);
        }
        let connected = self.registry(registry, request.reference).await?;
        let evidence = find_evidence(connected, request.reference, digest).await?;
        match rule.verify(digest, &evidence) {
            Ok(verified) => {
                if let Some(store) = self.store {
                    let kept = &evidence[verified.index..=verified.index];
                    if let Err(e) = store.write_evidence(digest, kept) {
                        tracing::warn!("cannot keep the verified signature of {digest}: {e}");
                    }
                }
                Ok(verified.how)
            }
            Err(why) => Err(OciError::new(
                OciErrorKind::NotVerified,
                format!(
                    "{} ({digest}) is refused by {}: {why}",
                    request.reference,
                    rule.describe()
                ),
            )),
        }
    }

    /// The component of manifest `digest`: from the store, else pulled.
    async fn component(
        &self,
        request: &OciRequest<'_>,
        digest: &str,
        registry: &mut Option<Registry>,
    ) -> Result<(Vec<u8>, u64, bool), OciError> {
        let mut manifest_digest = digest.to_string();
        let mut pulled = false;
        for _hop in 0..2 {
            let bytes = match self
                .store
                .and_then(|s| s.read_blob(&manifest_digest, MAX_MANIFEST_BYTES))
            {
                Some(bytes) => bytes,
                None => {
                    pulled = true;
                    let connected = self.registry(registry, request.reference).await?;
                    let at = request.reference.at_digest(&manifest_digest);
                    let body = connected
                        .get(
                            &at,
                            &format!("manifests/{manifest_digest}"),
                            &MANIFEST_TYPES,
                            MAX_MANIFEST_BYTES,
                            "the manifest",
                        )
                        .await?;
                    let actual = format!("sha256:{}", hex(&Sha256::digest(&body.bytes)));
                    if actual != manifest_digest {
                        return Err(OciError::new(
                            OciErrorKind::Refused,
                            format!(
                                "the manifest {} sent for {manifest_digest} hashes to {actual}: refused",
                                request.reference.registry()
                            ),
                        ));
                    }
                    self.keep(&manifest_digest, &body.bytes);
                    body.bytes
                }
            };
            let manifest = Manifest::parse(&bytes, None).map_err(|e| layout_error(request, e))?;
            match component_layer(&manifest, request.max_component_bytes)
                .map_err(|e| layout_error(request, e))?
            {
                Layout::Index(entry) => manifest_digest = entry.digest,
                Layout::Component(layer) => {
                    let size = layer.size.max(0) as u64;
                    if let Some(bytes) = self.store.and_then(|s| s.read_blob(&layer.digest, size)) {
                        return Ok((bytes, size, pulled));
                    }
                    let connected = self.registry(registry, request.reference).await?;
                    let bytes = self
                        .download(connected, request, &layer.digest, size)
                        .await?;
                    return Ok((bytes, size, true));
                }
            }
        }
        Err(layout_error(
            request,
            "an image index names another index; expected a wasm manifest".into(),
        ))
    }

    async fn registry<'r>(
        &self,
        registry: &'r mut Option<Registry>,
        reference: &OciReference,
    ) -> Result<&'r Registry, OciError> {
        if registry.is_none() {
            *registry = Some(self.connect(reference).await?);
        }
        Ok(registry.as_ref().expect("just connected"))
    }

    /// Downloads the layer into the store (or memory, without one),
    /// hashed as it streams, at most `size` bytes.
    async fn download(
        &self,
        registry: &Registry,
        request: &OciRequest<'_>,
        digest: &str,
        size: u64,
    ) -> Result<Vec<u8>, OciError> {
        let at = request.reference.at_digest(digest);
        let store_error = |e: std::io::Error| {
            OciError::new(
                OciErrorKind::Store,
                format!("cannot keep the component {digest}: {e}"),
            )
        };
        match self.store {
            Some(store) => {
                let mut pending = store.pending_blob(digest).map_err(store_error)?;
                registry
                    .download_blob(&at, digest, size, "the component layer", pending.file())
                    .await?;
                store.commit_blob(pending, digest).map_err(store_error)?;
                store.read_blob(digest, size).ok_or_else(|| {
                    OciError::new(
                        OciErrorKind::Store,
                        format!(
                            "the component {digest} kept in {} cannot be read back",
                            store.dir().display()
                        ),
                    )
                })
            }
            None => {
                let mut bytes = Vec::new();
                registry
                    .download_blob(&at, digest, size, "the component layer", &mut bytes)
                    .await?;
                Ok(bytes)
            }
        }
    }

    /// Whether manifest `digest` is in the store.
    fn kept(&self, digest: &str) -> bool {
        self.store.is_some_and(|s| s.has_blob(digest))
    }

    fn keep(&self, digest: &str, bytes: &[u8]) {
        if let Some(store) = self.store {
            store.keep_blob(digest, bytes);
        }
    }
}

/// The manifest digest `reference` names now (its tag resolved; the
/// manifest is kept in `store`).
pub(crate) async fn resolve(
    registry: &Registry,
    reference: &OciReference,
    store: Option<&PullStore>,
) -> Result<String, OciError> {
    if let Some(digest) = reference.digest() {
        return Ok(digest.to_string());
    }
    let body = registry
        .get(
            reference,
            &format!("manifests/{}", reference.target()),
            &MANIFEST_TYPES,
            MAX_MANIFEST_BYTES,
            "the manifest",
        )
        .await?;
    let digest = format!("sha256:{}", hex(&Sha256::digest(&body.bytes)));
    if let Some(store) = store {
        store.keep_blob(&digest, &body.bytes);
    }
    Ok(digest)
}

/// The digest fixed for `request`, and where; several that disagree are
/// refused, naming both.
fn fixed_digest<'a>(request: &OciRequest<'a>) -> Result<Option<(String, PinSource)>, OciError> {
    let pins = [
        (request.reference.digest(), PinSource::Reference, "`oci`"),
        (request.digest, PinSource::Entry, "`digest`"),
        (request.locked, PinSource::Lock, "toolhost.lock"),
    ];
    let mut fixed: Option<(&str, PinSource, &str)> = None;
    for (digest, source, named) in pins {
        let Some(digest) = digest else { continue };
        match fixed {
            None => fixed = Some((digest, source, named)),
            Some((first, _, first_named)) if first != digest => {
                return Err(OciError::new(
                    OciErrorKind::NotVerified,
                    format!(
                        "{first_named} pins {first} but {named} pins {digest}; \
                         make them agree (run `toolhost lock --update {}` after fixing the config)",
                        request.module
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(fixed.map(|(digest, source, _)| (digest.to_string(), source)))
}

fn unpinned(request: &OciRequest<'_>) -> OciError {
    OciError::new(
        OciErrorKind::NotVerified,
        format!(
            "{} is a bare tag: its digest is not fixed and no [[trust]] rule covers \
             it, so what runs could change without notice. Fix it one of three ways: write the \
             digest in the reference (`oci = \"{}@sha256:...\"`) or as `digest = \"sha256:...\"`, \
             run `toolhost lock` to pin it in toolhost.lock, or add a [[trust]] rule whose prefix \
             covers it so its signature is verified",
            request.reference,
            request.reference.repository_name()
        ),
    )
}

fn layout_error(request: &OciRequest<'_>, why: String) -> OciError {
    OciError::new(
        OciErrorKind::Refused,
        format!(
            "{} is not a wasm component artifact: {why}",
            request.reference
        ),
    )
}
