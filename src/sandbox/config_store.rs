//! `wasi:config/store`, the runtime-config interface wassette and Spin
//! give components: `get(key)` and `get-all()`, answered from the module's
//! granted configuration ([`Access::config`](crate::Access)), which holds
//! nothing unless the operator grants values (`grants.config`,
//! `grants.config_inherit`).
//!
//! Linked at each version components are built against: `0.2.0-draft`
//! (wassette), `0.2.0-draft-2024-09-27` (Spin) and `0.2.0-rc.1`
//! (wasmtime's own crate). Prerelease versions only match exactly, so each
//! is its own instance in the linker, with the same functions.

use wasmtime::StoreContextMut;
use wasmtime::component::{ComponentType, Lift, Linker, Lower};

use super::state::CallState;

/// The versions of `wasi:config/store` linked.
pub(crate) const VERSIONS: [&str; 3] = ["0.2.0-draft", "0.2.0-draft-2024-09-27", "0.2.0-rc.1"];

/// The interface's `error` variant. toolhost's store is a table in
/// memory, so it never answers with one; the type is what the interface
/// declares.
#[derive(ComponentType, Lift, Lower, Debug, Clone)]
#[component(variant)]
enum ConfigError {
    #[component(name = "upstream")]
    Upstream(String),
    #[component(name = "io")]
    Io(String),
}

type Get = (Result<Option<String>, ConfigError>,);
type GetAll = (Result<Vec<(String, String)>, ConfigError>,);

/// Adds every version of `wasi:config/store` to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    for version in VERSIONS {
        let mut instance = linker.instance(&format!("wasi:config/store@{version}"))?;
        instance.func_wrap(
            "get",
            |store: StoreContextMut<'_, CallState>, (key,): (String,)| -> wasmtime::Result<Get> {
                let value = store.data().access().config.get(&key).cloned();
                Ok((Ok(value),))
            },
        )?;
        instance.func_wrap(
            "get-all",
            |store: StoreContextMut<'_, CallState>, (): ()| -> wasmtime::Result<GetAll> {
                let all = store
                    .data()
                    .access()
                    .config
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok((Ok(all),))
            },
        )?;
    }
    Ok(())
}
