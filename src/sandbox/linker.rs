//! The linker every module is instantiated with: WASI 0.2 with toolhost's
//! stricter versions of a few functions ([`overrides`](super::overrides)).
//!
//! The linker only says which functions exist; what each call actually
//! reaches is decided by its WASI context ([`wasi_context`](super::wasi_context)).

use wasmtime::Engine;
use wasmtime::component::Linker;

use super::overrides;
use super::state::CallState;

/// A linker for `engine` with WASI 0.2 and the overrides.
pub(crate) fn new_linker(engine: &Engine) -> anyhow::Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(anyhow::Error::from)?;
    overrides::add_to_linker(&mut linker)?;
    Ok(linker)
}
