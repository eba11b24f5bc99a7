//! Building a tool module from any source file, not only the examples: a
//! JavaScript module with ComponentizeJS or with jco's QuickJS backend, a
//! Python module with componentize-py. The integration tests build their
//! test tools (`tests/guests-js/`, `tests/guests-py/`) with these.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::process::{run, venv_bin};
use crate::toolchain::{check_node, install_toolchain};
use crate::up_to_date::{Inputs, build_unless_up_to_date};
use crate::{Language, Repo};

/// A feature of ComponentizeJS's engine (StarlingMonkey) that its
/// `--disable` option leaves out of a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum JsFeature {
    /// `console` output and error reports (wasi:cli).
    Stdio,
    /// `crypto.getRandomValues` and `Math.random` seeds (wasi:random).
    Random,
    /// Timers and `Date.now` (wasi:clocks).
    Clocks,
    /// `fetch()` (wasi:http/outgoing-handler).
    Http,
    /// `addEventListener("fetch", ...)` (wasi:http/incoming-handler).
    #[value(name = "fetch-event")]
    FetchEvent,
}

impl JsFeature {
    /// Its name on ComponentizeJS's command line.
    fn flag(self) -> &'static str {
        match self {
            JsFeature::Stdio => "stdio",
            JsFeature::Random => "random",
            JsFeature::Clocks => "clocks",
            JsFeature::Http => "http",
            JsFeature::FetchEvent => "fetch-event",
        }
    }
}

/// Builds the JavaScript module `source` (which may import other files, the
/// SDK among them, anywhere in the repository) into the component `out`
/// with ComponentizeJS, for the world `tool` of `wit/`, leaving out the
/// `disable`d features: with none, `fetch()` works and the component
/// imports wasi:http/outgoing-handler. Installs the JavaScript toolchain
/// first if needed; returns `out`.
pub fn build_js_component(
    repo: &Repo,
    source: &Path,
    out: &Path,
    disable: &[JsFeature],
) -> Result<PathBuf> {
    let toolchain = install_toolchain(repo, Language::JavaScript)?;
    let world = (repo.wit_dir(), "tool");
    let inputs = js_inputs(repo, &toolchain, source, &world.0)?
        .arg(world.1)
        .arg(format!("{disable:?}"));
    build_unless_up_to_date(out, inputs, |partial| {
        componentize_js(
            repo,
            &toolchain,
            source,
            (&world.0, world.1),
            partial,
            disable,
        )
    })
    .with_context(|| format!("ComponentizeJS failed to build {}", source.display()))?;
    Ok(out.to_path_buf())
}

/// Builds the JavaScript module `source` into the component `out` with
/// ComponentizeJS (default features), for the world `world` of the WIT
/// folder `wit`: a component of any world, not only toolhost's. Installs
/// the JavaScript toolchain first if needed; returns `out`.
pub fn build_js_world_component(
    repo: &Repo,
    source: &Path,
    wit: &Path,
    world: &str,
    out: &Path,
) -> Result<PathBuf> {
    let toolchain = install_toolchain(repo, Language::JavaScript)?;
    let inputs = js_inputs(repo, &toolchain, source, wit)?.arg(world);
    build_unless_up_to_date(out, inputs, |partial| {
        componentize_js(repo, &toolchain, source, (wit, world), partial, &[])
    })
    .with_context(|| format!("ComponentizeJS failed to build {}", source.display()))?;
    Ok(out.to_path_buf())
}

/// Builds the JavaScript module `source` into the component `out` with
/// jco's QuickJS backend (componentize-qjs, pre-initialized with Wizer),
/// with its default options: `jco componentize <source> --wit wit
/// --world-name tool --backend quickjs`, so with the runtime that uses the
/// component-model async ABI. The component also exports `init`, which
/// Wizer already called at build time (a second call answers `err`).
/// Installs the JavaScript toolchain first if needed; returns `out`.
pub fn build_qjs_component(repo: &Repo, source: &Path, out: &Path) -> Result<PathBuf> {
    let toolchain = install_toolchain(repo, Language::JavaScript)?;
    check_node("JavaScript toolchain", "cargo xtask toolchains js")?;
    let root = absolute(repo.root())?;
    let jco = toolchain.join("node_modules/@bytecodealliance/jco/dist/jco.js");
    let inputs = js_inputs(repo, &toolchain, source, &repo.wit_dir())?.arg("quickjs");
    build_unless_up_to_date(out, inputs, |partial| {
        let mut command = Command::new("node");
        command
            .arg(&jco)
            .arg("componentize")
            // jco 1.35.0 resolves the source against the folder it builds
            // in (`--cwd`), not the one it was started in: absolute paths.
            .arg(absolute(source)?)
            .arg("--wit")
            .arg(absolute(&repo.wit_dir())?)
            .args(["--world-name", "tool", "--backend", "quickjs"])
            // The folder its module loader may read during pre-initialization
            // (by default the source's own): the whole repository, so the
            // SDK can be imported.
            .arg("--cwd")
            .arg(&root)
            .arg("-o")
            .arg(absolute(partial)?);
        run(&mut command)?;
        Ok(())
    })
    .with_context(|| format!("jco's QuickJS backend failed to build {}", source.display()))?;
    Ok(out.to_path_buf())
}

/// Builds the Python module `app` (`app_dir/app.py`, with the SDK
/// `guest-sdk/python` on its path) into the component `out` with
/// componentize-py, for the world `world` of the WIT folders `wit`
/// (resolved together; name the world in full, `namespace:package/world@version`,
/// when there are several packages). Installs the Python toolchain first
/// if needed; returns `out`.
///
/// The HTTP test tool: `wit` = [`wit/`, `tests/guests-py/http/wit/`],
/// `world` = `toolhost:tool-http/tool-http@0.1.0`.
pub fn build_python_component(
    repo: &Repo,
    app_dir: &Path,
    wit: &[&Path],
    world: &str,
    out: &Path,
) -> Result<PathBuf> {
    let venv = install_toolchain(repo, Language::Python)?;
    let sdk = repo.sdk_dir(Language::Python);
    let python_path = [app_dir, sdk.as_path()];
    let mut inputs = Inputs::new(&venv).arg(world).path(app_dir)?.path(&sdk)?;
    for dir in wit {
        inputs = inputs.path(dir)?;
    }
    build_unless_up_to_date(out, inputs, |partial| {
        componentize_py(&venv, wit, world, "app", &python_path, partial)
    })
    .with_context(|| format!("componentize-py failed to build {}", app_dir.display()))?;
    Ok(out.to_path_buf())
}

/// What a JavaScript component is built from: the toolchain, the folder of
/// `source` (the files it imports beside it), the SDK and the WIT folder.
fn js_inputs(repo: &Repo, toolchain: &Path, source: &Path, wit: &Path) -> Result<Inputs> {
    let folder = source
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Inputs::new(toolchain)
        .arg(source.file_name().unwrap_or_default())
        .path(folder)?
        .path(&repo.sdk_dir(Language::JavaScript))?
        .path(wit)
}

/// ComponentizeJS (the toolchain's, in `toolchain`): `source` into `out`,
/// for the world `world.1` of the WIT folder `world.0`, without the
/// `disable`d features.
pub(crate) fn componentize_js(
    repo: &Repo,
    toolchain: &Path,
    source: &Path,
    (wit, world): (&Path, &str),
    out: &Path,
    disable: &[JsFeature],
) -> Result<()> {
    check_node("JavaScript toolchain", "cargo xtask toolchains js")?;
    let cli = toolchain.join("node_modules/@bytecodealliance/componentize-js/src/cli.js");
    let mut command = Command::new("node");
    command
        .arg(cli)
        .arg(absolute(source)?)
        .arg("--wit")
        .arg(absolute(wit)?)
        .args(["--world-name", world]);
    if !disable.is_empty() {
        command
            .arg("--disable")
            .args(disable.iter().map(|f| f.flag()));
    }
    command
        .arg("--out")
        .arg(absolute(out)?)
        // The folder the engine may read the module and its imports from
        // while it is pre-initialized: the whole repository, so the SDK can
        // be imported.
        .current_dir(repo.root());
    run(&mut command)?;
    Ok(())
}

/// componentize-py (of the virtual environment `venv`): the module
/// `module`, found on `python_path`, into `out`, for `world` of the WIT
/// folders `wit`.
pub(crate) fn componentize_py(
    venv: &Path,
    wit: &[&Path],
    world: &str,
    module: &str,
    python_path: &[&Path],
    out: &Path,
) -> Result<()> {
    let mut command = Command::new(venv_bin(venv, "componentize-py"));
    for dir in wit {
        command.arg("--wit-path").arg(dir);
    }
    command.args(["--world", world, "componentize", module]);
    for dir in python_path {
        command.arg("--python-path").arg(dir);
    }
    command
        .arg("--output")
        .arg(out)
        // No __pycache__ folders written into the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1");
    run(&mut command)?;
    Ok(())
}

/// `path` made absolute against the current folder.
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot make {} absolute", path.display()))
}
