//! The example tool modules built into toolhost (`example-tools/`).

/// One bundled module: its name and its component bytes.
#[derive(Debug, Clone, Copy)]
pub struct BundledModule {
    /// The module name (the prefix of its exposed tool names).
    pub name: &'static str,
    /// The WebAssembly component.
    pub bytes: &'static [u8],
}

macro_rules! bundled {
    ($name:literal) => {
        BundledModule {
            name: $name,
            bytes: include_bytes!(concat!(env!("TOOLHOST_GUEST_DIR"), "/", $name, ".wasm")),
        }
    };
}

/// The bundled example modules: `calc`, `text` and `json`.
pub const BUNDLED_MODULES: &[BundledModule] =
    &[bundled!("calc"), bundled!("text"), bundled!("json")];

/// The bytes of bundled module `name`, if there is one.
pub fn bundled_module(name: &str) -> Option<&'static [u8]> {
    BUNDLED_MODULES
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.bytes)
}
