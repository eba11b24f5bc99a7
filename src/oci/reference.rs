//! [`OciReference`]: `REGISTRY/REPOSITORY:TAG` or
//! `REGISTRY/REPOSITORY@sha256:HEX`, parsed by `oci-client`, with the
//! registry always written out.

use std::fmt;
use std::str::FromStr;

use crate::trust::check_digest;

/// A reference to an artifact in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciReference {
    inner: oci_client::Reference,
}

impl FromStr for OciReference {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let first = text.split('/').next().unwrap_or_default();
        let names_registry = text.contains('/')
            && (first.contains('.') || first.contains(':') || first == "localhost");
        if !names_registry {
            return Err(format!(
                "'{text}' does not name its registry: write REGISTRY/REPOSITORY:TAG or \
                 REGISTRY/REPOSITORY@sha256:HEX, for example ghcr.io/acme/calc:1.0"
            ));
        }
        let inner = oci_client::Reference::try_from(text)
            .map_err(|e| format!("'{text}' is not an OCI reference: {e}"))?;
        if let Some(digest) = inner.digest() {
            check_digest(digest).map_err(|e| format!("'{text}': {e}"))?;
        }
        Ok(Self { inner })
    }
}

impl OciReference {
    /// The registry host (and port) as written.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository, without registry, tag or digest.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, if one is written (a reference with neither tag nor digest
    /// means `latest`).
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest, if one is written (`sha256:…`).
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// `REGISTRY/REPOSITORY`: what cosign's payload names.
    pub fn repository_name(&self) -> String {
        format!("{}/{}", self.registry(), self.repository())
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> Self {
        Self {
            inner: oci_client::Reference::with_digest(
                self.registry().to_string(),
                self.repository().to_string(),
                digest.to_string(),
            ),
        }
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> Self {
        Self {
            inner: oci_client::Reference::with_tag(
                self.registry().to_string(),
                self.repository().to_string(),
                tag.to_string(),
            ),
        }
    }

    /// What the registry is asked for: the digest if there is one, else
    /// the tag (`latest` if none).
    pub(crate) fn target(&self) -> &str {
        self.digest().or(self.tag()).unwrap_or("latest")
    }

    /// The name a module gets when the config gives none: the
    /// repository's last part.
    pub fn default_module_name(&self) -> String {
        let last = self.repository().rsplit('/').next().unwrap_or_default();
        crate::names::module_name_from(last)
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry(), self.repository())?;
        if let Some(tag) = self.tag() {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = self.digest() {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_need_their_registry() {
        let r: OciReference = "127.0.0.1:5000/acme/calc:1.0".parse().unwrap();
        assert_eq!(
            (r.registry(), r.repository(), r.tag()),
            ("127.0.0.1:5000", "acme/calc", Some("1.0"))
        );
        assert_eq!(r.to_string(), "127.0.0.1:5000/acme/calc:1.0");
        assert_eq!(r.default_module_name(), "calc");
        let d = format!("ghcr.io/acme/calc@sha256:{}", "a".repeat(64));
        let r: OciReference = d.parse().unwrap();
        assert_eq!(r.to_string(), d);
        for bad in [
            "calc:1.0",
            "acme/calc:1.0",
            "ghcr.io/acme/calc@sha256:abc",
            "ghcr.io/Acme/calc:1",
        ] {
            assert!(bad.parse::<OciReference>().is_err(), "{bad}");
        }
    }
}
