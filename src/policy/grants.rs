//! [`Grants`]: what the operator writes a module may reach beyond its own
//! memory, before it is checked and resolved into an [`Access`].
//!
//! Nothing is granted unless the operator writes it in the module's
//! `[modules.grants]` table: no directories, no environment variables, no
//! network, no symbolic links.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::access::{Access, DirAccess, DirMode};
use super::endpoint::Endpoint;
use super::env_name::check_env_name;
use super::http::HttpGrant;

/// The capabilities granted to one module's calls, as written in the config.
/// The default grants nothing; [`Grants::resolve`] checks them.
///
/// ```toml
/// [modules.grants]
/// dirs = [{ host = "./data", guest = "/data", mode = "ro" }]
/// env = { UNITS = "metric" }
/// env_inherit = ["WEATHER_API_KEY"]
/// network = { allow = ["api.example.com:443", "127.0.0.1:8080"] }
/// symlinks = true
/// http = { allow = ["https://api.example.com/v1/"] }
/// config = { region = "eu" }
/// config_inherit = ["DATABASE_URL"]
/// scratch = true
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
    /// Outbound TCP connections the guest may open.
    #[serde(default)]
    pub network: NetworkGrant,
    /// Whether the guest may create symbolic links in its read-write
    /// directories. Even then only relative targets without `..` are
    /// accepted, so a link never points outside the grant.
    #[serde(default)]
    pub symlinks: bool,
    /// Outbound HTTP requests (`wasi:http`) the guest may make.
    #[serde(default)]
    pub http: HttpGrant,
    /// Values `wasi:config/store` gives the guest, by name.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Names of host environment variables `wasi:config/store` gives the
    /// guest under the same name (read at load).
    #[serde(default)]
    pub config_inherit: Vec<String>,
    /// An empty read-write directory made for each call at
    /// [`SCRATCH_GUEST_PATH`] and removed after it (a session keeps its
    /// own for all its calls). Bounded by `max_write_bytes` and
    /// `max_open_files`; never shared between calls or sessions.
    #[serde(default)]
    pub scratch: bool,
}

/// Where the guest sees its scratch directory (`grants.scratch = true`).
pub const SCRATCH_GUEST_PATH: &str = "/scratch";

/// The network a module may use: outbound TCP to the listed endpoints only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkGrant {
    /// `host:port` endpoints: an IP address (`127.0.0.1:8080`, `[::1]:8080`)
    /// or a host name (`api.example.com:443`), whose addresses the guest may
    /// then look up and connect to.
    #[serde(default)]
    pub allow: Vec<String>,
}

impl NetworkGrant {
    /// The endpoints, parsed; the error names the entry.
    pub fn endpoints(&self) -> Result<Vec<Endpoint>, String> {
        self.allow
            .iter()
            .enumerate()
            .map(|(i, text)| {
                Endpoint::parse(text).map_err(|e| format!("grants.network.allow[{i}]: {e}"))
            })
            .collect()
    }
}

/// Whether a symbolic link to `target` is accepted with `symlinks = true`: a
/// relative path with no `..` component, so that following it (and any chain
/// of such links) only ever descends from the directory the link is in.
pub(crate) fn symlink_target_stays_inside(target: &str) -> bool {
    !target.is_empty()
        && Path::new(target)
            .components()
            .all(|part| matches!(part, Component::Normal(_) | Component::CurDir))
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

impl Grants {
    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
            && self.env.is_empty()
            && self.env_inherit.is_empty()
            && self.network.allow.is_empty()
            && !self.symlinks
            && self.http.is_empty()
            && self.config.is_empty()
            && self.config_inherit.is_empty()
            && !self.scratch
    }

    /// Checks these grants and makes them ready to use: host paths become
    /// absolute (relative ones are taken from `base`) and must be existing
    /// directories; inherited variables are read from the host now and must
    /// be set; endpoints are parsed. The error names the key.
    pub fn resolve(&self, base: &Path) -> Result<Access, String> {
        let dirs = self
            .dirs
            .iter()
            .enumerate()
            .map(|(i, dir)| resolve_dir(dir, base).map_err(|e| format!("grants.dirs[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
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
        let mut config = BTreeMap::new();
        for (key, value) in &self.config {
            check_config_name(key).map_err(|e| format!("grants.config: {e}"))?;
            config.insert(key.clone(), value.clone());
        }
        for name in &self.config_inherit {
            check_env_name(name).map_err(|e| format!("grants.config_inherit: {e}"))?;
            if self.config.contains_key(name) {
                return Err(format!(
                    "grants.config_inherit: '{name}' is also set in grants.config; give it once"
                ));
            }
            let value = std::env::var(name).map_err(|_| {
                format!("grants.config_inherit: '{name}' is not set (or not UTF-8) in toolhost's environment")
            })?;
            config.insert(name.clone(), value);
        }
        let endpoints = self.network.endpoints()?;
        let http = self.http.resolve(base)?;
        if self.symlinks && !self.scratch && !self.dirs.iter().any(|d| d.mode == DirMode::Rw) {
            return Err(
                "grants.symlinks = true needs a directory granted with mode = \"rw\"".to_string(),
            );
        }
        if let Some(i) = self
            .dirs
            .iter()
            .position(|d| self.scratch && d.guest == SCRATCH_GUEST_PATH)
        {
            return Err(format!(
                "grants.dirs[{i}]: guest path '{SCRATCH_GUEST_PATH}' is the scratch directory's (grants.scratch = true); choose another"
            ));
        }
        Ok(Access {
            dirs,
            env,
            inherited: self.env_inherit.clone(),
            endpoints,
            symlinks: self.symlinks,
            http,
            config,
            config_inherited: self.config_inherit.clone(),
            scratch: self.scratch,
        })
    }
}

/// A granted directory, checked: an existing host directory, made absolute.
fn resolve_dir(dir: &DirGrant, base: &Path) -> Result<DirAccess, String> {
    let host = base.join(&dir.host);
    let host = host
        .canonicalize()
        .map_err(|e| format!("host directory {} cannot be opened: {e}", host.display()))?;
    if !host.is_dir() {
        return Err(format!("host path {} is not a directory", host.display()));
    }
    if !dir.guest.starts_with('/') {
        return Err(format!(
            "guest path '{}' must be absolute, for example \"/data\"",
            dir.guest
        ));
    }
    Ok(DirAccess {
        host,
        guest: dir.guest.clone(),
        mode: dir.mode,
    })
}

/// Refuses an empty configuration name.
fn check_config_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name is empty".to_string());
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
    fn network_entries_name_their_index() {
        let grant = NetworkGrant {
            allow: vec!["a:1".into(), "b".into()],
        };
        assert!(
            grant
                .endpoints()
                .unwrap_err()
                .starts_with("grants.network.allow[1]: ")
        );
    }

    #[test]
    fn symlink_targets_must_stay_inside() {
        for inside in ["a", "./a", "a/b/c", "."] {
            assert!(symlink_target_stays_inside(inside), "{inside}");
        }
        for outside in [
            "",
            "/etc/passwd",
            "..",
            "../x",
            "a/..",
            "a/../../x",
            "./../x",
        ] {
            assert!(!symlink_target_stays_inside(outside), "{outside}");
        }
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
