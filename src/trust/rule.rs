//! `[[trust]]` rules: as written ([`TrustRuleConfig`]), resolved
//! ([`TrustRule`]), and chosen by the longest matching prefix
//! ([`TrustRules`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sigstore_verify::trust_root::TrustedRoot;
use sigstore_verify::types::DerPublicKey;

use super::identity::Identity;
use super::keys::read_public_key;
use super::{Evidence, NotVerified, Verified, bundle, simple_signing};

/// The largest trusted root file read.
const MAX_TRUSTED_ROOT_BYTES: u64 = 4 * 1024 * 1024;

/// One `[[trust]]` entry, as the config writes it.
///
/// ```toml
/// [[trust]]                      # a key
/// prefix = "ghcr.io/acme/"
/// key = "keys/acme.pub"
///
/// [[trust]]                      # keyless (Sigstore, Fulcio certificates)
/// prefix = "ghcr.io/acme/tools/"
/// identity = "https://github.com/acme/tools/.github/workflows/release.yml@refs/heads/main"
/// issuer = "https://token.actions.githubusercontent.com"
/// trusted_root = "trusted_root.json"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrustRuleConfig {
    /// The references it covers: those starting with it
    /// (`REGISTRY/REPOSITORY...`); the longest matching prefix wins.
    pub prefix: String,
    /// A PEM public key (ECDSA P-256/P-384, Ed25519, RSA) that must have
    /// signed, relative to the config file.
    pub key: Option<PathBuf>,
    /// Keyless: the certificate identity that must have signed (an email
    /// or URI, exactly).
    pub identity: Option<String>,
    /// Keyless: a regular expression the whole identity must match
    /// (`".*"` accepts any identity, and must be written out).
    pub identity_regexp: Option<String>,
    /// Keyless: the OIDC issuer of the signer's certificate.
    pub issuer: Option<String>,
    /// The Sigstore trusted root (`trusted_root.json`): required for
    /// keyless rules; for a key rule, it makes bundles' log entries checked.
    pub trusted_root: Option<PathBuf>,
}

impl TrustRuleConfig {
    /// Checks the keys' combination; the error says what to write.
    pub fn check(&self) -> Result<(), String> {
        if self.prefix.trim().is_empty() {
            return Err(
                "`prefix` must name the references it covers, e.g. \"ghcr.io/acme/\"".into(),
            );
        }
        let keyless =
            self.identity.is_some() || self.identity_regexp.is_some() || self.issuer.is_some();
        match (&self.key, keyless) {
            (Some(_), true) => Err(
                "give either `key` or keyless `identity`/`identity_regexp` with `issuer`, not both"
                    .into(),
            ),
            (None, false) => Err(
                "say who must have signed: `key = \"KEY.pub\"`, or keyless `identity` (or \
                 `identity_regexp`) with `issuer` and `trusted_root`"
                    .into(),
            ),
            (Some(_), false) => Ok(()),
            (None, true) => self.check_keyless(),
        }
    }

    fn check_keyless(&self) -> Result<(), String> {
        match (&self.identity, &self.identity_regexp) {
            (Some(_), Some(_)) => {
                return Err("give `identity` or `identity_regexp`, not both".into());
            }
            (None, None) => {
                return Err(
                    "a keyless rule needs `identity` or `identity_regexp` (write \
                     identity_regexp = \".*\" to accept any identity)"
                        .into(),
                );
            }
            (None, Some(pattern)) => {
                Identity::pattern(pattern)?;
            }
            (Some(_), None) => {}
        }
        if self.issuer.as_deref().is_none_or(str::is_empty) {
            return Err("a keyless rule needs `issuer` (the OIDC issuer of the signer)".into());
        }
        if self.trusted_root.is_none() {
            return Err(
                "a keyless rule needs `trusted_root` (the Sigstore trusted root JSON file; \
                 nothing is fetched at load)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Reads the key or trusted root (relative paths from `base`).
    pub fn resolve(&self, base: &Path) -> Result<TrustRule, String> {
        self.check()?;
        let root = match &self.trusted_root {
            Some(path) => Some(read_trusted_root(&base.join(path))?),
            None => None,
        };
        let signer = match (&self.key, root) {
            (Some(path), root) => Signer::Key {
                key: read_public_key(&base.join(path))?,
                shown: path.display().to_string(),
                root,
            },
            (None, Some(root)) => Signer::Keyless {
                identity: match (&self.identity, &self.identity_regexp) {
                    (Some(exact), _) => Identity::Exact(exact.clone()),
                    (None, Some(pattern)) => Identity::pattern(pattern)?,
                    (None, None) => unreachable_rule()?,
                },
                issuer: self.issuer.clone().unwrap_or_default(),
                root: Box::new(root),
            },
            (None, None) => unreachable_rule()?,
        };
        Ok(TrustRule {
            config: self.clone(),
            signer,
        })
    }

    /// The rule in words: `[[trust]] prefix "ghcr.io/acme/" (key keys/acme.pub)`.
    pub fn describe(&self) -> String {
        let who = match (&self.key, &self.identity, &self.identity_regexp) {
            (Some(key), _, _) => format!("key {}", key.display()),
            (None, Some(identity), _) => format!(
                "identity {identity}, issuer {}",
                self.issuer.as_deref().unwrap_or("?")
            ),
            (None, None, Some(pattern)) => format!(
                "identity_regexp {pattern}, issuer {}",
                self.issuer.as_deref().unwrap_or("?")
            ),
            (None, None, None) => "nobody".into(),
        };
        format!("[[trust]] prefix \"{}\" ({who})", self.prefix)
    }
}

/// `check` has ruled this out; an error rather than a panic all the same.
fn unreachable_rule<T>() -> Result<T, String> {
    Err("a [[trust]] rule names neither a key nor an identity".into())
}

fn read_trusted_root(path: &Path) -> Result<TrustedRoot, String> {
    let shown = path.display();
    let bytes =
        crate::small_file::read_required_file(path, MAX_TRUSTED_ROOT_BYTES, "the trusted root")?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("the trusted root {shown} is not UTF-8 JSON"))?;
    TrustedRoot::from_json(&text).map_err(|e| {
        format!(
            "{shown} is not a Sigstore trusted root ({e}); `sigstore` and `cosign trusted-root` \
             write one, and sigstore's TUF repository publishes trusted_root.json"
        )
    })
}

#[derive(Debug, Clone)]
enum Signer {
    Key {
        key: DerPublicKey,
        shown: String,
        root: Option<TrustedRoot>,
    },
    Keyless {
        identity: Identity,
        issuer: String,
        root: Box<TrustedRoot>,
    },
}

/// A `[[trust]]` rule with its key or trusted root read.
#[derive(Debug, Clone)]
pub struct TrustRule {
    config: TrustRuleConfig,
    signer: Signer,
}

impl TrustRule {
    /// The rule as written.
    pub fn config(&self) -> &TrustRuleConfig {
        &self.config
    }

    /// The rule in words, for messages.
    pub fn describe(&self) -> String {
        self.config.describe()
    }

    /// Whether the rule covers `reference` (`REGISTRY/REPOSITORY[:TAG][@DIGEST]`).
    pub fn covers(&self, reference: &str) -> bool {
        reference.starts_with(&self.config.prefix)
    }

    /// The first of `evidence` this rule accepts as a signature over
    /// `digest`, else what was wrong with each.
    pub fn verify(&self, digest: &str, evidence: &[Evidence]) -> Result<Verified, NotVerified> {
        let mut found = Vec::new();
        for (index, item) in evidence.iter().enumerate() {
            match self.check(digest, item) {
                Ok(how) => return Ok(Verified { how, index }),
                Err(why) => found.push(format!("{}: {why}", item.found_at())),
            }
        }
        Err(NotVerified { found })
    }

    fn check(&self, digest: &str, item: &Evidence) -> Result<String, String> {
        match (&self.signer, item) {
            (
                Signer::Key { key, shown, .. },
                Evidence::SimpleSigning {
                    payload, signature, ..
                },
            ) => simple_signing::check(key, shown, digest, payload, signature)
                .map(|()| format!("cosign signature by key {shown}")),
            (Signer::Key { key, shown, root }, Evidence::Bundle { json, .. }) => {
                bundle::check_with_key(json, digest, key, shown, root.as_ref())
            }
            (Signer::Keyless { .. }, Evidence::SimpleSigning { .. }) => Err(
                "a cosign key signature (legacy format), but this rule wants a keyless \
                 Sigstore bundle"
                    .into(),
            ),
            (
                Signer::Keyless {
                    identity,
                    issuer,
                    root,
                },
                Evidence::Bundle { json, .. },
            ) => bundle::check_keyless(json, digest, identity, issuer, root),
        }
    }
}

/// Every `[[trust]]` rule of a config, resolved.
#[derive(Debug, Clone, Default)]
pub struct TrustRules {
    rules: Vec<TrustRule>,
}

impl TrustRules {
    /// Resolves `configs` (relative paths from `base`); the error names the
    /// rule.
    pub fn resolve(configs: &[TrustRuleConfig], base: &Path) -> Result<Self, String> {
        let rules = configs
            .iter()
            .map(|config| {
                config
                    .resolve(base)
                    .map_err(|e| format!("{}: {e}", config.describe()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// The rule in force for `reference`: the longest matching prefix.
    pub fn rule_for(&self, reference: &str) -> Option<&TrustRule> {
        self.rules
            .iter()
            .filter(|rule| rule.covers(reference))
            .max_by_key(|rule| rule.config.prefix.len())
    }

    /// Every rule covering `reference`, the one in force first.
    pub fn covering(&self, reference: &str) -> Vec<&TrustRule> {
        let mut rules: Vec<&TrustRule> =
            self.rules.iter().filter(|r| r.covers(reference)).collect();
        rules.sort_by_key(|rule| std::cmp::Reverse(rule.config.prefix.len()));
        rules
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// Checks a config's rules as written: each rule, and no prefix twice.
pub fn check_rules(configs: &[TrustRuleConfig]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, config) in configs.iter().enumerate() {
        config
            .check()
            .map_err(|e| format!("[[trust]] #{}: {e}", i + 1))?;
        if !seen.insert(config.prefix.as_str()) {
            return Err(format!(
                "[[trust]] #{}: prefix \"{}\" is used twice",
                i + 1,
                config.prefix
            ));
        }
    }
    Ok(())
}
