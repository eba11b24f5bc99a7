//! Where things are in the repository.

use std::path::{Path, PathBuf};

use crate::{Example, Language, McpClient};

/// The repository being built: every path the build reads or writes.
#[derive(Clone, Debug)]
pub struct Repo {
    root: PathBuf,
    toolchains: PathBuf,
}

impl Repo {
    /// The repository this crate is part of (`xtask/..`).
    pub fn from_manifest_dir() -> Repo {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        Repo::at(manifest.parent().unwrap_or(manifest))
    }

    /// The repository at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Repo {
        let root = root.into();
        let toolchains = root.join(".toolchains");
        Repo { root, toolchains }
    }

    /// The same repository with its toolchains installed in `dir` instead
    /// of `.toolchains/`.
    pub fn with_toolchains(self, dir: impl Into<PathBuf>) -> Repo {
        Repo {
            toolchains: dir.into(),
            ..self
        }
    }

    /// The repository's top folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `wit/`, the contract every tool module implements.
    pub fn wit_dir(&self) -> PathBuf {
        self.root.join("wit")
    }

    /// `guest-sdk/<lang>/`.
    pub fn sdk_dir(&self, language: Language) -> PathBuf {
        self.root.join("guest-sdk").join(language.dir_name())
    }

    /// `example-tools/<example>/` of `language`'s first example.
    pub fn example_dir(&self, language: Language) -> PathBuf {
        self.example_source_dir(language.examples()[0])
    }

    /// `example-tools/<name>/`, the source of `example`.
    pub fn example_source_dir(&self, example: Example) -> PathBuf {
        self.root.join("example-tools").join(example.name)
    }

    /// `.toolchains/<lang>/`, the folder the language's toolchain is
    /// installed in (one subfolder per lockfile: see `install.rs`).
    pub fn toolchain_dir(&self, language: Language) -> PathBuf {
        self.toolchains.join(language.dir_name())
    }

    /// `.toolchains/wit-bindgen/`, where `cargo xtask c-bindings` installs
    /// wit-bindgen-cli.
    pub fn wit_bindgen_dir(&self) -> PathBuf {
        self.toolchains.join("wit-bindgen")
    }

    /// `crates/cli/tests/mcp/<client>/`: the client's pins and the script
    /// the tests run with it.
    pub fn mcp_client_dir(&self, client: McpClient) -> PathBuf {
        self.root
            .join("crates/cli/tests/mcp")
            .join(client.dir_name())
    }

    /// `.toolchains/mcp-<client>/`, the folder the client's SDK is installed in.
    pub fn mcp_client_install_dir(&self, client: McpClient) -> PathBuf {
        self.toolchains.join(format!("mcp-{}", client.dir_name()))
    }

    /// `crates/python/`: the Python package `toolhost`.
    pub fn python_package_dir(&self) -> PathBuf {
        self.root.join("crates/python")
    }

    /// `.toolchains/python-package/`, the folder the package's test tools
    /// are installed in.
    pub fn python_test_env_dir(&self) -> PathBuf {
        self.toolchains.join("python-package")
    }

    /// `.toolchains/wheel-tools/`, the folder maturin and zig are
    /// installed in for `cargo xtask wheels`.
    pub fn wheel_tools_dir(&self) -> PathBuf {
        self.toolchains.join("wheel-tools")
    }

    /// `<target>/wheels/` (`<target>` is `CARGO_TARGET_DIR` when set, else
    /// `target/`), where `cargo xtask wheels` writes the wheels.
    pub fn wheels_dir(&self) -> PathBuf {
        let target = std::env::var_os("CARGO_TARGET_DIR");
        crate::guest_cargo::workspace_target_dir(&self.root, target.as_deref()).join("wheels")
    }

    /// `target/example-tools/`, where the built components go (the path
    /// `example-tools/toolhost.toml` loads them from).
    pub fn out_dir(&self) -> PathBuf {
        self.root.join("target").join("example-tools")
    }

    /// `<target>/guests/` (`<target>` is `CARGO_TARGET_DIR` when set, else
    /// `target/`), the target directory the guest components are built in
    /// (the one `build.rs` builds the bundled examples in).
    pub fn guest_target_dir(&self) -> PathBuf {
        let target = std::env::var_os("CARGO_TARGET_DIR");
        crate::guest_cargo::guest_target_dir(&self.root, target.as_deref())
    }

    /// The component built for `language`'s first example.
    pub fn component(&self, language: Language) -> PathBuf {
        self.example_component(language.examples()[0])
    }

    /// The component built for `example`: `target/example-tools/<name>.wasm`.
    pub fn example_component(&self, example: Example) -> PathBuf {
        self.out_dir().join(format!("{}.wasm", example.name))
    }
}
