//! [`ModuleSource`]: where a module's component comes from, a file or the
//! bundled set, and loading it from there.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use crate::names;
use crate::policy::Limits;
use crate::sandbox::Runtime;

use super::WasmModule;
use super::binary;
use super::bundled::{BUNDLED_MODULES, bundled_module};
use super::load_error::{LoadError, LoadErrorKind};

/// Where a module's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleSource {
    /// A component file.
    File(PathBuf),
    /// One of the bundled example modules ([`BUNDLED_MODULES`]), by name.
    Bundled(String),
}

impl ModuleSource {
    /// The module name used when none is given: the bundled name, or the
    /// file's stem ([`names::module_name_for_file`]).
    pub fn default_name(&self) -> String {
        match self {
            ModuleSource::File(path) => names::module_name_for_file(path),
            ModuleSource::Bundled(name) => name.clone(),
        }
    }

    /// Loads the component as module `name` (default:
    /// [`ModuleSource::default_name`]) under `limits`.
    pub fn load(
        &self,
        runtime: &Runtime,
        name: Option<&str>,
        limits: Limits,
    ) -> Result<WasmModule, LoadError> {
        let name = name.map_or_else(|| self.default_name(), str::to_string);
        let bytes = self.read(&name, &limits)?;
        WasmModule::from_bytes(runtime, &name, &bytes, limits)
    }

    /// The component's bytes, for module `name` (a file larger than
    /// `max_component_bytes` is refused before it is read).
    pub fn read(&self, name: &str, limits: &Limits) -> Result<Cow<'static, [u8]>, LoadError> {
        match self {
            ModuleSource::File(path) => Ok(Cow::Owned(binary::read_file(name, path, limits)?)),
            ModuleSource::Bundled(bundled) => bundled_module(bundled)
                .map(Cow::Borrowed)
                .ok_or_else(|| no_such_bundled(name, bundled)),
        }
    }
}

impl fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleSource::File(path) => write!(f, "{}", path.display()),
            ModuleSource::Bundled(name) => write!(f, "bundled {name}"),
        }
    }
}

fn no_such_bundled(name: &str, bundled: &str) -> LoadError {
    let known: Vec<&str> = BUNDLED_MODULES.iter().map(|m| m.name).collect();
    let there_are = if known.is_empty() {
        "toolhost was built without the `bundled` feature".to_string()
    } else {
        format!("there are: {}", known.join(", "))
    };
    LoadError::new(
        name,
        LoadErrorKind::Io,
        format!("there is no bundled module '{bundled}' ({there_are})"),
    )
}
