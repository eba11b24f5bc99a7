//! A core WebAssembly module into a component (what `wasm-tools component
//! new` does), for the C toolchain.

use anyhow::{Context, Result};

/// The component of `core`: a core module that embeds its WIT world in a
/// `component-type` custom section (wit-bindgen's `*_component_type.o`
/// puts it there). No WASI adapter: a module that imports WASI preview 1 is
/// refused, since the C SDK's modules import nothing.
pub fn componentize(core: &[u8]) -> Result<Vec<u8>> {
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(core)
        .context("the core module has no usable component-type section (link the bindings' *_component_type.o)")?
        .encode()
        .context("cannot make a component of the core module")
}
