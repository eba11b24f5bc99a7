//! The format of `toolhost.toml` and its validation: what each key means
//! and which values are accepted. Reading the file and loading what it
//! names is [`load`](super::load)'s job.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::PoolConfig;
use crate::module::ModuleSource;
use crate::names;
use crate::oci::{OciReference, RegistryConfig, check_registries};
use crate::policy::{Grants, LimitOverrides, Limits, SessionLimits, Warm};
use crate::registry::ToolController;
use crate::settings::{Bounds, settings};
use crate::trust::{TrustRuleConfig, check_digest, check_rules};

/// The parsed `toolhost.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Default limits for every module.
    #[serde(default)]
    pub limits: Limits,
    /// Which tools are active.
    #[serde(default)]
    pub controller: ToolController,
    /// The modules to load. With no config file at all, the bundled ones.
    #[serde(default)]
    pub modules: Vec<ModuleEntry>,
    /// The compile cache of the command-line program.
    #[serde(default)]
    pub cache: CacheConfig,
    /// How the host names of network grants are looked up.
    #[serde(default)]
    pub resolver: ResolverConfig,
    /// How `toolhost serve` serves the tools over MCP.
    #[serde(default)]
    pub serve: ServeConfig,
    /// The instance pool calls take their instances from.
    #[serde(default)]
    pub pool: PoolConfig,
    /// How OCI registries are reached (`[[registries]]`): plain HTTP or a
    /// CA file per host. Credentials are never here: they come from the
    /// Docker client's config.
    #[serde(default)]
    pub registries: Vec<RegistryConfig>,
    /// Which OCI references must be signed, and by whom (`[[trust]]`).
    #[serde(default)]
    pub trust: Vec<TrustRuleConfig>,
    /// How many session instances are kept, and for how long, for the
    /// modules with `sessions = true`.
    #[serde(default)]
    pub sessions: SessionLimits,
}

settings! {
    section "serve";
    /// `[serve]`: how `toolhost serve` serves the tools over the Model Context
    /// Protocol.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
    pub struct ServeConfig {
        /// Tool calls run at once; a call past it is answered at once with a
        /// "busy" error result instead of waiting.
        max_calls_in_flight: u64 = 64, Bounds::Positive;
        /// Tools per page of `tools/list`.
        page_size: u64 = 100, Bounds::Positive;
        /// HTTP: the `Host` header values accepted (host, or host:port); empty
        /// means the loopback names (`localhost`, `127.0.0.1`, `::1`).
        allowed_hosts: Vec<String> = Vec::new(), Bounds::Any;
        /// HTTP: the `Origin` header values accepted (`scheme://host[:port]`); a
        /// request with any other `Origin` gets 403. Requests without one (not
        /// from a browser) are not affected.
        allowed_origins: Vec<String> = Vec::new(), Bounds::Any;
        /// The largest request: an HTTP body, or a line on stdio, in bytes.
        max_request_bytes: u64 = 4 * 1024 * 1024, Bounds::Positive;
        /// HTTP: requests handled at once (calls included).
        max_requests_in_flight: u64 = 256, Bounds::Positive;
        /// HTTP: how long a connection may take to send a request head, from
        /// the moment it is accepted or its previous answer was sent, in
        /// milliseconds; a connection that sends nothing is closed then.
        header_timeout_ms: u64 = 10_000, Bounds::Positive;
        /// HTTP: how long a request's body may take to arrive once its head
        /// has, in milliseconds (408 after that).
        body_timeout_ms: u64 = 10_000, Bounds::Positive;
        /// HTTP: connections open at once; past it a new connection is closed
        /// as soon as it is accepted (and counted in `/metrics`).
        max_connections: u64 = 512, Bounds::Positive;
        /// HTTP: sessions (protocol 2025-11-25) open at once; a new one past it
        /// closes the one idle longest.
        max_sessions: u64 = 1000, Bounds::Positive;
        /// HTTP: a session without a request for this long is closed, in
        /// milliseconds.
        session_idle_ms: u64 = 300_000, Bounds::Positive;
        /// On SIGTERM (or SIGINT), how long calls in flight may take to finish
        /// before the server exits anyway, in milliseconds.
        drain_timeout_ms: u64 = 10_000, Bounds::Positive;
        /// Tasks (the MCP Tasks extension): how long a finished task's result
        /// is kept for `tasks/get` after the call ended, in milliseconds.
        task_ttl_ms: u64 = 300_000, Bounds::Positive;
        /// Tasks kept at once, running and finished; a new one past it drops
        /// the finished task that ended first.
        max_tasks: u64 = 1000, Bounds::Positive;
    }
}

/// `[resolver]`: the name servers that look up the host names of network
/// grants (default: the system's, from `/etc/resolv.conf`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResolverConfig {
    /// `ip:port` of each name server, for example `"10.0.0.2:53"`.
    pub name_servers: Vec<String>,
}

impl ResolverConfig {
    /// The name servers, parsed; the error names the entry.
    pub fn servers(&self) -> Result<Vec<SocketAddr>, String> {
        self.name_servers
            .iter()
            .enumerate()
            .map(|(i, text)| {
                text.parse().map_err(|_| {
                    format!(
                        "resolver.name_servers[{i}]: '{text}' is not ip:port, for example \"10.0.0.2:53\""
                    )
                })
            })
            .collect()
    }
}

/// `[cache]`: where the `toolhost` command keeps compiled components. The
/// command line's `--no-cache` and `--cache-dir` override it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Keep compiled components on disk (default `true`).
    pub enabled: bool,
    /// The cache directory, relative to the config file; default
    /// `$XDG_CACHE_HOME/toolhost`, else `~/.cache/toolhost`.
    pub dir: Option<PathBuf>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: None,
        }
    }
}

/// One `[[modules]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleEntry {
    /// The module name; default: the file stem (or the bundled name).
    pub name: Option<String>,
    /// The component file, relative to the config file.
    pub path: Option<PathBuf>,
    /// A bundled example module instead of a file: `calc`, `text` or `json`.
    pub bundled: Option<String>,
    /// A component in an OCI registry instead of a file:
    /// `REGISTRY/REPOSITORY:TAG` or `REGISTRY/REPOSITORY@sha256:HEX`.
    pub oci: Option<String>,
    /// With `oci`: the manifest digest it must have (`sha256:HEX`).
    pub digest: Option<String>,
    /// Overrides of the default limits for this module.
    #[serde(default)]
    pub limits: LimitOverrides,
    /// What this module's calls may reach; nothing unless granted.
    #[serde(default)]
    pub grants: Grants,
    /// Reuse long-lived instances from call to call (default `false`: a
    /// fresh instance for every call). See [`WasmModule::with_warm`](crate::WasmModule::with_warm).
    #[serde(default)]
    pub warm: bool,
    /// Keep state per session: a call made in a session runs in that
    /// session's own instance (default `false`). See
    /// [`WasmModule::with_sessions`](crate::WasmModule::with_sessions).
    #[serde(default)]
    pub sessions: bool,
    /// With `warm` or `sessions`: calls one instance serves before a fresh
    /// one replaces it (default 1000).
    pub max_calls: Option<u64>,
}

impl Config {
    /// Parses and checks config text; the error names the key.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let config: Config =
            toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        config.validate()?;
        Ok(config)
    }

    /// Checks limits, module entries, names, name servers, serving and the
    /// instance pool.
    pub fn validate(&self) -> Result<(), String> {
        self.resolver.servers()?;
        check_registries(&self.registries)?;
        check_rules(&self.trust)?;
        self.serve.validate()?;
        self.pool.validate()?;
        self.sessions.validate()?;
        self.limits
            .validate()
            .map_err(|e| format!("[limits]: {e}"))?;
        let mut seen = HashSet::new();
        for (i, entry) in self.modules.iter().enumerate() {
            let at = format!("[[modules]] #{}", i + 1);
            entry
                .limits
                .apply(self.limits)
                .validate()
                .map_err(|e| format!("{at} limits: {e}"))?;
            entry
                .limits
                .check_module_level()
                .map_err(|e| format!("{at} limits: {e}"))?;
            entry
                .grants
                .network
                .endpoints()
                .map_err(|e| format!("{at}: {e}"))?;
            entry
                .grants
                .http
                .check()
                .map_err(|e| format!("{at}: {e}"))?;
            entry.warmth().map_err(|e| format!("{at}: {e}"))?;
            let name = entry.module_name().map_err(|e| format!("{at}: {e}"))?;
            names::check_module_name(&name).map_err(|e| format!("{at}: {e}"))?;
            if !seen.insert(name.clone()) {
                return Err(format!("{at}: module name '{name}' is used twice"));
            }
        }
        Ok(())
    }
}

/// Where a module entry's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file or a bundled module.
    Local(ModuleSource),
    /// An OCI registry.
    Oci(OciReference),
}

/// The most calls one warm instance may serve.
const MAX_WARM_CALLS: u64 = 1_000_000_000;

impl ModuleEntry {
    /// How the module keeps warm instances (`None`: not warm); the error
    /// names the key.
    pub fn warmth(&self) -> Result<Option<Warm>, String> {
        let max_calls = self.max_calls()?;
        if self.max_calls.is_some() && !self.warm && !self.sessions {
            return Err(
                "`max_calls` applies to warm modules and modules with sessions only: add \
                 `warm = true` or `sessions = true`, or remove it"
                    .into(),
            );
        }
        Ok(self.warm.then_some(Warm { max_calls }))
    }

    /// With `sessions = true`, the calls one session instance serves at
    /// most (`max_calls`, default 1000); `None` when sessions are off.
    pub fn session_max_calls(&self) -> Option<u64> {
        self.sessions
            .then(|| self.max_calls().unwrap_or(Warm::default().max_calls))
    }

    /// `max_calls`, checked, or its default.
    fn max_calls(&self) -> Result<u64, String> {
        match self.max_calls {
            None => Ok(Warm::default().max_calls),
            Some(n) if (1..=MAX_WARM_CALLS).contains(&n) => Ok(n),
            Some(n) => Err(format!(
                "`max_calls` must be between 1 and {MAX_WARM_CALLS} (it is {n})"
            )),
        }
    }

    /// Where the component comes from: `path` (relative to `base`),
    /// `bundled` or `oci` (exactly one); the error names the keys.
    pub fn origin(&self, base: &Path) -> Result<Origin, String> {
        if self.digest.is_some() && self.oci.is_none() {
            return Err("`digest` pins an `oci` module's manifest; this entry has no `oci`".into());
        }
        match (&self.path, &self.bundled, &self.oci) {
            (Some(path), None, None) => Ok(Origin::Local(ModuleSource::File(base.join(path)))),
            (None, Some(bundled), None) => {
                Ok(Origin::Local(ModuleSource::Bundled(bundled.clone())))
            }
            (None, None, Some(oci)) => {
                let reference: OciReference = oci.parse().map_err(|e| format!("`oci`: {e}"))?;
                if let Some(digest) = &self.digest {
                    check_digest(digest).map_err(|e| format!("`digest`: {e}"))?;
                }
                Ok(Origin::Oci(reference))
            }
            (None, None, None) => Err(
                "missing the component: give `path` (a file), `bundled` (an example module) or \
                 `oci` (REGISTRY/REPOSITORY:TAG or @sha256:HEX)"
                    .into(),
            ),
            _ => Err("give exactly one of `path`, `bundled` and `oci`".into()),
        }
    }

    /// Where a local component comes from: `path` (relative to `base`) or
    /// `bundled`; an `oci` entry is an error (its component is fetched by
    /// [`LoadedConfig`](super::LoadedConfig)).
    pub fn source(&self, base: &Path) -> Result<ModuleSource, String> {
        match self.origin(base)? {
            Origin::Local(source) => Ok(source),
            Origin::Oci(reference) => Err(format!(
                "{reference} is fetched from its registry by the config's loader, not read as a file"
            )),
        }
    }

    /// Where the component comes from, as the config writes it.
    pub fn describe_source(&self) -> String {
        match self.origin(Path::new("")) {
            Ok(Origin::Local(source)) => source.to_string(),
            Ok(Origin::Oci(reference)) => format!("oci {reference}"),
            Err(_) => "?".to_string(),
        }
    }

    /// The module's name: `name`, else the bundled name, the file stem or
    /// the OCI repository's last part.
    pub fn module_name(&self) -> Result<String, String> {
        let default = match self.origin(Path::new(""))? {
            Origin::Local(source) => source.default_name(),
            Origin::Oci(reference) => reference.default_module_name(),
        };
        Ok(self.name.clone().unwrap_or(default))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_config_parses() {
        let c = Config::from_toml(
            r#"
            [limits]
            fuel = 5
            [controller]
            default_mode = "deactivate"
            rules = [{ mode = "activate", pattern = "calc_*" }]
            [[modules]]
            path = "tools/My_Calc.wasm"
            limits = { timeout_ms = 100 }
            [[modules]]
            bundled = "json"
            "#,
        )
        .unwrap();
        assert_eq!(c.limits.fuel, 5);
        assert_eq!(c.limits.memory_mib, 64);
        assert!(c.controller.check_tool_status("calc_evaluate"));
        assert_eq!(c.modules[0].module_name().unwrap(), "my-calc");
        assert_eq!(c.modules[0].limits.timeout_ms, Some(100));
        assert_eq!(c.modules[1].module_name().unwrap(), "json");
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::from_toml("[limits]\nfuell = 3\n").unwrap_err();
        assert!(e.contains("unknown field `fuell`"), "{e}");
        let e = Config::from_toml("[limits]\nfuel = 0\n").unwrap_err();
        assert_eq!(e, "[limits]: `fuel` must be greater than 0");
        let e = Config::from_toml("[limits]\nfuel = -1\n").unwrap_err();
        assert!(e.contains("fuel"), "{e}");
        let e = Config::from_toml("[[modules]]\nname = \"a\"\n").unwrap_err();
        assert!(e.contains("give `path`") && e.contains("`oci`"), "{e}");
        let e = Config::from_toml("[[modules]]\npath = \"a.wasm\"\noci = \"ghcr.io/a/b:1\"\n")
            .unwrap_err();
        assert!(
            e.contains("exactly one of `path`, `bundled` and `oci`"),
            "{e}"
        );
        let e = Config::from_toml("[[modules]]\npath = \"a.wasm\"\ndigest = \"sha256:00\"\n")
            .unwrap_err();
        assert!(e.contains("has no `oci`"), "{e}");
        let e = Config::from_toml("[[modules]]\noci = \"ghcr.io/a/b:1\"\ndigest = \"md5:00\"\n")
            .unwrap_err();
        assert!(e.contains("`digest`") && e.contains("sha256"), "{e}");
        let e = Config::from_toml("[[trust]]\nprefix = \"ghcr.io/\"\nidentity = \"a@b\"\n")
            .unwrap_err();
        assert!(e.contains("[[trust]] #1") && e.contains("issuer"), "{e}");
        let e =
            Config::from_toml("[[modules]]\nbundled = \"calc\"\n[[modules]]\nbundled = \"calc\"\n")
                .unwrap_err();
        assert!(e.contains("used twice"), "{e}");
        let e = Config::from_toml("[[modules]]\nname = \"A_b\"\npath = \"x.wasm\"\n").unwrap_err();
        assert!(e.contains("[[modules]] #1"), "{e}");
        let e = Config::from_toml("[controller]\ndefault_mode = \"on\"\n").unwrap_err();
        assert!(e.contains("invalid mode 'on'"), "{e}");
        let e = Config::from_toml("[[modules]]\nbundled = \"calc\"\nlimits = { memory_mib = 0 }\n")
            .unwrap_err();
        assert!(e.contains("memory_mib"), "{e}");
        let e = Config::from_toml(
            "[[modules]]\nbundled = \"calc\"\nlimits = { batch_timeout_ms = 5 }\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "[[modules]] #1 limits: `batch_timeout_ms` bounds a whole batch of calls, not one module's; set it in [limits]"
        );
        for key in Limits::SPECS.map(|spec| spec.key) {
            let zero = format!("[[modules]]\nbundled = \"calc\"\nlimits = {{ {key} = 0 }}\n");
            let e = Config::from_toml(&zero).unwrap_err();
            assert_eq!(
                e,
                format!("[[modules]] #1 limits: `{key}` must be greater than 0")
            );
            let huge = format!("[limits]\n{key} = 1000000000000000000\n");
            let e = Config::from_toml(&huge).unwrap_err();
            assert!(e.starts_with(&format!("[limits]: `{key}` = ")), "{e}");
        }
        let e = Config::from_toml(
            "[[modules]]\nbundled = \"calc\"\n[modules.grants]\nnetwork = { allow = [\"x\"] }\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "[[modules]] #1: grants.network.allow[0]: 'x' has no port; write host:port, for example \"api.example.com:443\""
        );
    }
}
