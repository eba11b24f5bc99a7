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

    /// The name of the language's first example module
    /// (`example-tools/<name>/`), which is also the component's file stem
    /// and so its module name.
    pub fn example(self) -> &'static str {
        self.examples()[0].name
    }

    /// Every example module in this language, its first one first.
    pub fn examples(self) -> &'static [Example] {
        match self {
            Language::Python => &Example::ALL[0..2],
            Language::JavaScript => &Example::ALL[2..4],
            Language::C => &Example::ALL[4..5],
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

/// An example tool module written in a language with a guest SDK: its
/// source is `example-tools/<name>/` (`app.py`, `tool.js` or `.c` files),
/// its component `target/example-tools/<name>.wasm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Example {
    /// The module's name, and its folder's.
    pub name: &'static str,
    /// What it is written in.
    pub language: Language,
}

impl Example {
    /// Every example, by language in the order of [`Language::ALL`].
    pub const ALL: [Example; 5] = [
        Example::new("stats", Language::Python),
        Example::PYTHON_EXEC,
        Example::new("url", Language::JavaScript),
        Example::JS_EXEC,
        Example::new("hash", Language::C),
    ];

    /// The code interpreter for Python (tool `run_python`).
    pub const PYTHON_EXEC: Example = Example::new("python-exec", Language::Python);

    /// The code interpreter for JavaScript (tool `run_javascript`).
    pub const JS_EXEC: Example = Example::new("js-exec", Language::JavaScript);

    const fn new(name: &'static str, language: Language) -> Self {
        Self { name, language }
    }
}

impl fmt::Display for Example {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.language, self.name)
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
