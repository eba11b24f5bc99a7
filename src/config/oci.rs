//! The OCI modules of a config: fetching each (with its lockfile pin, the
//! `[[trust]]` rules and the pull store), `toolhost lock` and `toolhost
//! pull`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::module::{LoadError, LoadErrorKind};
use crate::oci::{OciContext, OciErrorKind, OciReference, OciRequest, PullStore, Pulled};
use crate::policy::limit_key;
use crate::trust::TrustRules;

use super::format::{ModuleEntry, Origin};
use super::load::LoadedConfig;
use super::lock::{LOCK_FILE_NAME, LockEntry, Lockfile};

/// What loading a config's OCI modules needs, read once per load.
pub(super) struct OciLoader {
    trust: Result<TrustRules, String>,
    lock: Result<Option<Lockfile>, String>,
    store: Option<PullStore>,
    registries: Vec<crate::oci::RegistryConfig>,
    base: PathBuf,
}

impl OciLoader {
    pub(super) fn new(loaded: &LoadedConfig) -> Self {
        let base = loaded.base_dir().to_path_buf();
        let lock = match loaded.lock_path() {
            Some(path) => Lockfile::read(&path),
            None => Ok(None),
        };
        Self {
            trust: TrustRules::resolve(&loaded.config.trust, &base),
            lock,
            store: loaded.pull_store(),
            registries: loaded.config.registries.clone(),
            base,
        }
    }

    /// A loader for one entry outside a config: no lockfile, no rules, no
    /// store.
    pub(super) fn standalone(base: &std::path::Path) -> Self {
        Self {
            trust: Ok(TrustRules::default()),
            lock: Ok(None),
            store: None,
            registries: Vec::new(),
            base: base.to_path_buf(),
        }
    }

    /// The context fetches run in, or why there is none (a bad rule).
    pub(super) fn context(&self) -> Result<OciContext<'_>, String> {
        Ok(OciContext {
            registries: &self.registries,
            trust: self.trust.as_ref().map_err(Clone::clone)?,
            base: &self.base,
            store: self.store.as_ref(),
        })
    }

    /// Fetches module `name`'s component from `reference` (its lockfile
    /// pin used unless `ignore_lock`).
    pub(super) fn fetch(
        &self,
        entry: &ModuleEntry,
        name: &str,
        reference: &OciReference,
        max_component_bytes: u64,
        mode: FetchMode,
    ) -> Result<Pulled, LoadError> {
        let not_verified = |e: String| LoadError::new(name, LoadErrorKind::NotVerified, e);
        let context = self.context().map_err(not_verified)?;
        let lock = self.lock.as_ref().map_err(|e| not_verified(e.clone()))?;
        let locked = match (mode, lock.as_ref().and_then(|l| l.entry(name))) {
            (FetchMode::Relock, _) | (_, None) => None,
            (_, Some(pin)) => {
                let same = pin
                    .reference
                    .parse::<OciReference>()
                    .is_ok_and(|r| r == *reference);
                if !same {
                    return Err(not_verified(format!(
                        "{LOCK_FILE_NAME} pins this module for {}, but the config now says {reference}: \
                         run `toolhost lock` to pin the new reference",
                        pin.reference
                    )));
                }
                Some(pin.digest.as_str())
            }
        };
        let request = OciRequest {
            module: name,
            reference,
            digest: entry.digest.as_deref(),
            locked,
            max_component_bytes,
            online: mode != FetchMode::Load,
            locking: mode == FetchMode::Relock,
        };
        context.fetch(&request).map_err(|e| {
            let kind = match e.kind {
                OciErrorKind::NotVerified => LoadErrorKind::NotVerified,
                OciErrorKind::Refused if e.message.contains(limit_key::max_component_bytes) => {
                    LoadErrorKind::TooLarge
                }
                _ => LoadErrorKind::Fetch,
            };
            LoadError::new(name, kind, e.message)
        })
    }
}

/// Why a module is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FetchMode {
    /// A load: the store first, the registry only for what is missing.
    Load,
    /// `toolhost pull`: as a load, checking `digest` against the tag.
    Pull,
    /// `toolhost lock` for a module it re-resolves: the lockfile's pin
    /// is not used.
    Relock,
}

/// One OCI module as `toolhost lock` or `toolhost pull` left it.
#[derive(Debug, Clone)]
pub struct OciOutcome {
    /// The module's name.
    pub module: String,
    /// Its reference.
    pub reference: String,
    /// What happened: the pin, or why it failed.
    pub result: Result<OciPin, LoadError>,
}

/// A module's digest and how it was verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciPin {
    /// The manifest digest.
    pub digest: String,
    /// The component's size.
    pub size: u64,
    /// How it was accepted.
    pub verified: String,
    /// Whether it was resolved anew (not kept from the lockfile).
    pub changed: bool,
}

impl LoadedConfig {
    /// The loader of OCI modules, if any entry is one.
    pub(super) fn oci_loader(&self) -> Option<OciLoader> {
        self.module_entries()
            .iter()
            .any(|entry| entry.oci.is_some())
            .then(|| OciLoader::new(self))
    }

    /// `toolhost.lock` beside the config file (none without a file).
    pub fn lock_path(&self) -> Option<PathBuf> {
        self.path
            .as_ref()
            .map(|_| self.base_dir().join(LOCK_FILE_NAME))
    }

    /// The pull store: `store_dir`, else `oci` in the config's `[cache]
    /// dir`, else [`PullStore::default_dir`]; `None` (with a warning) if it
    /// cannot be opened.
    pub fn pull_store(&self) -> Option<PullStore> {
        let dir = self
            .store_dir
            .clone()
            .or_else(|| self.cache_dir().map(|dir| dir.join("oci")))
            .or_else(PullStore::default_dir)?;
        match PullStore::open(&dir) {
            Ok(store) => Some(store),
            Err(e) => {
                tracing::warn!("pulled components are not kept: {e}");
                None
            }
        }
    }

    /// The OCI module entries with their names and references.
    fn oci_entries(&self) -> Vec<(ModuleEntry, String, OciReference)> {
        self.module_entries()
            .into_iter()
            .filter_map(|entry| {
                let Ok(Origin::Oci(reference)) = entry.origin(self.base_dir()) else {
                    return None;
                };
                let name = entry.module_name().ok()?;
                Some((entry, name, reference))
            })
            .collect()
    }

    /// `toolhost pull`: fetches every OCI module into the pull store
    /// (verifying signatures where a rule applies), without compiling.
    pub fn pull_modules(&self) -> Vec<OciOutcome> {
        let loader = OciLoader::new(self);
        self.oci_entries()
            .into_iter()
            .map(|(entry, name, reference)| {
                let limit = entry.limits.apply(self.config.limits).max_component_bytes;
                let result = loader
                    .fetch(&entry, &name, &reference, limit, FetchMode::Pull)
                    .map(|pulled| OciPin {
                        digest: pulled.digest,
                        size: pulled.size,
                        verified: pulled.verified,
                        changed: pulled.from_registry,
                    });
                OciOutcome {
                    module: name,
                    reference: reference.to_string(),
                    result,
                }
            })
            .collect()
    }

    /// `toolhost lock`: resolves every OCI module not locked yet (or whose
    /// reference changed), and those in `update` (all of them if
    /// `update_all`), and writes `toolhost.lock`. Nothing is written if a
    /// module fails.
    pub fn lock_modules(
        &self,
        update: &[String],
        update_all: bool,
    ) -> Result<Vec<OciOutcome>, String> {
        let path = self
            .lock_path()
            .ok_or("`toolhost lock` needs a config file (toolhost.toml, or --config FILE)")?;
        let entries = self.oci_entries();
        let known: BTreeSet<&str> = entries.iter().map(|(_, name, _)| name.as_str()).collect();
        if let Some(unknown) = update.iter().find(|m| !known.contains(m.as_str())) {
            return Err(format!(
                "there is no OCI module '{unknown}' in {} (OCI modules: {})",
                self.label().display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                }
            ));
        }
        let previous = Lockfile::read(&path).ok().flatten().unwrap_or_default();
        let loader = OciLoader::new(self);
        let mut lock = Lockfile::default();
        let mut outcomes = Vec::new();
        for (entry, name, reference) in entries {
            let kept = previous
                .entry(&name)
                .filter(|pin| {
                    pin.reference
                        .parse::<OciReference>()
                        .is_ok_and(|r| r == reference)
                })
                .filter(|_| !update_all && !update.contains(&name));
            let limit = entry.limits.apply(self.config.limits).max_component_bytes;
            let mode = if kept.is_some() {
                FetchMode::Pull
            } else {
                FetchMode::Relock
            };
            let result = loader
                .fetch(&entry, &name, &reference, limit, mode)
                .map(|pulled| {
                    let changed = kept.is_none_or(|k| k.digest != pulled.digest);
                    OciPin {
                        digest: pulled.digest,
                        size: pulled.size,
                        verified: pulled.verified,
                        changed,
                    }
                });
            if let Ok(pin) = &result {
                lock.modules.push(LockEntry {
                    name: name.clone(),
                    reference: entry.oci.clone().unwrap_or_default().trim().to_string(),
                    digest: pin.digest.clone(),
                    size: pin.size,
                    verified: pin.verified.clone(),
                });
            }
            outcomes.push(OciOutcome {
                module: name,
                reference: reference.to_string(),
                result,
            });
        }
        if outcomes.iter().all(|o| o.result.is_ok()) {
            lock.write(&path)?;
        }
        Ok(outcomes)
    }

    /// Runs `f` with this config's registries, rules and pull store (for
    /// `toolhost verify` and `toolhost push`); the error is a bad rule.
    pub fn with_oci<T>(&self, f: impl FnOnce(&OciContext<'_>) -> T) -> Result<T, String> {
        let loader = OciLoader::new(self);
        let context = loader.context()?;
        Ok(f(&context))
    }
}
