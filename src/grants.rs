//! [`Grants`]: what one module may reach beyond its own memory.
//!
//! Nothing is granted unless the operator writes it in the module's
//! `[modules.grants]` table: no directories, no environment variables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The capabilities granted to one module's calls. The default grants nothing.
///
/// ```toml
/// [modules.grants]
/// dirs = [{ host = "./data", guest = "/data", mode = "ro" }]
/// env = { UNITS = "metric" }
/// env_inherit = ["WEATHER_API_KEY"]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Host directories the guest sees as preopened directories.
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
    /// Environment variables the guest sees, with their values.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Names of host environment variables passed through (read at load).
    #[serde(default)]
    pub env_inherit: Vec<String>,
}

/// One granted directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// The directory on the host (relative to the config file).
    pub host: PathBuf,
    /// Where the guest sees it, for example `/data`.
    pub guest: String,
    /// `ro` (the default) or `rw`.
    #[serde(default)]
    pub mode: DirMode,
}

/// Whether a granted directory may be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirMode {
    /// Read only (the default).
    #[default]
    Ro,
    /// Read and write.
    Rw,
}

impl Grants {
    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.env.is_empty() && self.env_inherit.is_empty()
    }

    /// Checks these grants and makes them ready to use: host paths become
    /// absolute (relative ones are taken from `base`) and must be existing
    /// directories; inherited variables are read from the host now and must
    /// be set. The error names the key.
    pub fn resolve(&self, base: &Path) -> Result<Grants, String> {
        let mut dirs = Vec::with_capacity(self.dirs.len());
        for (i, dir) in self.dirs.iter().enumerate() {
            let at = format!("grants.dirs[{i}]");
            let host = base.join(&dir.host);
            let host = host.canonicalize().map_err(|e| {
                format!(
                    "{at}: host directory {} cannot be opened: {e}",
                    host.display()
                )
            })?;
            if !host.is_dir() {
                return Err(format!(
                    "{at}: host path {} is not a directory",
                    host.display()
                ));
            }
            if !dir.guest.starts_with('/') {
                return Err(format!(
                    "{at}: guest path '{}' must be absolute, for example \"/data\"",
                    dir.guest
                ));
            }
            dirs.push(DirGrant {
                host,
                guest: dir.guest.clone(),
                mode: dir.mode,
            });
        }
        let mut env = BTreeMap::new();
        for (key, value) in &self.env {
            check_env_name(key).map_err(|e| format!("grants.env: {e}"))?;
            env.insert(key.clone(), value.clone());
        }
        for name in &self.env_inherit {
            check_env_name(name).map_err(|e| format!("grants.env_inherit: {e}"))?;
            let value = std::env::var(name).map_err(|_| {
                format!("grants.env_inherit: '{name}' is not set (or not UTF-8) in toolhost's environment")
            })?;
            env.insert(name.clone(), value);
        }
        Ok(Grants {
            dirs,
            env,
            env_inherit: self.env_inherit.clone(),
        })
    }
}

fn check_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(format!("'{name}' is not a valid environment variable name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_grant_nothing_and_parse_from_toml() {
        assert!(Grants::default().is_empty());
        let g: Grants = toml::from_str(
            "dirs = [{ host = \".\", guest = \"/data\" }]\nenv = { A = \"1\" }\nenv_inherit = [\"PATH\"]\n",
        )
        .unwrap();
        assert_eq!(g.dirs[0].mode, DirMode::Ro);
        let r = g.resolve(Path::new(".")).unwrap();
        assert!(r.dirs[0].host.is_absolute());
        assert_eq!(r.env["A"], "1");
        assert!(r.env.contains_key("PATH"));
    }

    #[test]
    fn bad_grants_name_the_key() {
        let e =
            toml::from_str::<Grants>("dirs = [{ host = \".\", guest = \"/d\", mode = \"rwx\" }]")
                .unwrap_err();
        assert!(e.to_string().contains("unknown variant `rwx`"), "{e}");
        let one_dir = |host: &str, guest: &str| Grants {
            dirs: vec![DirGrant {
                host: host.into(),
                guest: guest.into(),
                mode: DirMode::Ro,
            }],
            ..Grants::default()
        };
        let missing = one_dir("no/such/dir", "/d");
        assert!(
            missing
                .resolve(Path::new("."))
                .unwrap_err()
                .starts_with("grants.dirs[0]: host directory")
        );
        let relative = one_dir(".", "data");
        assert!(
            relative
                .resolve(Path::new("."))
                .unwrap_err()
                .contains("must be absolute")
        );
        let unset = Grants {
            env_inherit: vec!["TOOLHOST_SURELY_UNSET_VAR".into()],
            ..Grants::default()
        };
        assert!(
            unset
                .resolve(Path::new("."))
                .unwrap_err()
                .contains("is not set")
        );
    }
}
