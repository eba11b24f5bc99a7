//! The linker every module is instantiated with: WASI 0.2 with toolhost's
//! stricter versions of a few functions ([`overrides`](super::overrides)),
//! `wasi:http` 0.2 and 0.3 (every request decided by the host, see
//! [`http`](super::http)), and the WASI 0.3 interfaces that reach nothing
//! by themselves (cli, clocks, random), and `wasi:config/store` (the
//! module's granted configuration, [`config_store`](super::config_store)).
//!
//! WASI 0.3's filesystem and sockets are left out: toolhost's checks of
//! files (open-file and write budgets, symbolic links) and of name lookups
//! are written for their 0.2 versions, which every toolchain still targets.
//! A component importing them does not load, and the load error says so.
//!
//! The linker only says which functions exist; what each call actually
//! reaches is decided by its WASI context ([`wasi_context`](super::wasi_context)).

use wasmtime::Engine;
use wasmtime::component::Linker;

use super::config_store;
use super::overrides;
use super::state::CallState;
use crate::engine::concurrency_of;

/// A linker for `engine` with WASI 0.2, the overrides and `wasi:http` 0.2;
/// and, when `engine` supports concurrency (the engines of components that
/// use the async ABI or WASIp3), the WASI 0.3 interfaces above.
pub(crate) fn new_linker(engine: &Engine) -> anyhow::Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(anyhow::Error::from)?;
    overrides::add_to_linker(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
        .map_err(anyhow::Error::from)?;
    config_store::add_to_linker(&mut linker)?;
    if !concurrency_of(engine).is_on() {
        return Ok(linker);
    }
    wasmtime_wasi::p3::cli::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    wasmtime_wasi::p3::clocks::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    wasmtime_wasi::p3::random::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    wasmtime_wasi_http::p3::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    Ok(linker)
}
