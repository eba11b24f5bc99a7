//! The languages with a guest SDK, and each one's example tool.

use std::fmt;

/// A language toolhost has a guest SDK for (besides Rust, which `cargo`
/// builds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Language {
    /// componentize-py: CPython and the module in one component.
    Python,
    /// ComponentizeJS: SpiderMonkey (StarlingMonkey) and the module.
    #[value(name = "js", alias = "javascript")]
    JavaScript,
    /// zig cc for wasm32-wasi, bindings from wit-bindgen, wit-component.
    C,
}

impl Language {
    /// Every language, in the order they are built.
    pub const ALL: [Language; 3] = [Language::Python, Language::JavaScript, Language::C];

    /// The name of the example module (`example-tools/<name>/`), which is
    /// also the component's file stem and so its module name.
    pub fn example(self) -> &'static str {
        match self {
            Language::Python => "stats",
            Language::JavaScript => "url",
            Language::C => "hash",
        }
    }

    /// The folder under `.toolchains/` its toolchain is installed in, and
    /// under `guest-sdk/` its SDK lives in.
    pub fn dir_name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "js",
            Language::C => "c",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::C => "C",
        })
    }
}
