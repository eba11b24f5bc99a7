//! The example tool modules built into toolhost (`example-tools/`), with the
//! `bundled` cargo feature (on by default). `build.rs` builds them and
//! writes the list; without the feature the list is empty.

/// One bundled module: its name and its component bytes.
#[derive(Debug, Clone, Copy)]
pub struct BundledModule {
    /// The module name (the prefix of its exposed tool names).
    pub name: &'static str,
    /// The WebAssembly component.
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// The bytes of bundled module `name`, if there is one.
pub fn bundled_module(name: &str) -> Option<&'static [u8]> {
    BUNDLED_MODULES
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.bytes)
}
