//! Building each language's example tool into `target/example-tools/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::componentize::componentize;
use crate::process::{run, venv_bin};
use crate::toolchain::install_toolchain;
use crate::{Language, Repo};

/// The wit-bindgen-cli that generated `guest-sdk/c/bindings/`.
const WIT_BINDGEN_VERSION: &str = "0.63.0";

/// Builds `language`'s example tool (installing its toolchain first if
/// needed) and returns the component's path.
pub fn build_example(repo: &Repo, language: Language) -> Result<PathBuf> {
    let toolchain = install_toolchain(repo, language)?;
    let out = repo.component(language);
    let out_dir = repo.out_dir();
    fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    // Built beside its final name and renamed, so a failed build never
    // leaves a truncated component where a config would load it.
    let partial = out.with_extension("wasm.partial");
    match language {
        Language::Python => build_python(repo, &toolchain, &partial)?,
        Language::JavaScript => build_js(repo, &toolchain, &partial)?,
        Language::C => build_c(repo, &toolchain, &partial)?,
    }
    fs::rename(&partial, &out)
        .with_context(|| format!("cannot move the component to {}", out.display()))?;
    Ok(out)
}

/// componentize-py: the example's `app` module with the SDK beside it.
fn build_python(repo: &Repo, venv: &Path, out: &Path) -> Result<()> {
    let mut command = Command::new(venv_bin(venv, "componentize-py"));
    command
        .arg("--wit-path")
        .arg(repo.wit_dir())
        .args(["--world", "tool", "componentize", "app", "--python-path"])
        .arg(repo.example_dir(Language::Python))
        .arg("--python-path")
        .arg(repo.sdk_dir(Language::Python))
        .arg("--output")
        .arg(out)
        // No __pycache__ folders written into the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1");
    run(&mut command).context("componentize-py failed to build the Python example")?;
    Ok(())
}

/// ComponentizeJS, without the wasi:http features toolhost does not provide.
fn build_js(repo: &Repo, toolchain: &Path, out: &Path) -> Result<()> {
    crate::toolchain::check_node("JavaScript toolchain", "cargo xtask toolchains js")?;
    let cli = toolchain.join("node_modules/@bytecodealliance/componentize-js/src/cli.js");
    let mut command = Command::new("node");
    command
        .arg(cli)
        .arg(repo.example_dir(Language::JavaScript).join("tool.js"))
        .arg("--wit")
        .arg(repo.wit_dir())
        .args([
            "--world-name",
            "tool",
            "--disable",
            "http",
            "fetch-event",
            "--out",
        ])
        .arg(out)
        // It resolves the module's relative imports against this folder.
        .current_dir(repo.root());
    run(&mut command).context("ComponentizeJS failed to build the JavaScript example")?;
    Ok(())
}

/// zig cc to a core module for wasm32-wasi, then a component of it.
fn build_c(repo: &Repo, venv: &Path, out: &Path) -> Result<()> {
    let sdk = repo.sdk_dir(Language::C);
    let bindings = sdk.join("bindings");
    let core = out.with_extension("core.wasm");
    let mut command = zig_cc(venv);
    command
        .args(["-target", "wasm32-wasi", "-mexec-model=reactor"])
        .args(["-Os", "-s"])
        // zig's default stack is 16 MiB, a quarter of a call's default
        // memory limit; 1 MiB is plenty for the SDK (its JSON parser is
        // bounded to 128 levels).
        .arg("-Wl,-z,stack-size=1048576")
        .arg("-I")
        .arg(&sdk)
        .args(c_sources(&repo.example_dir(Language::C))?)
        .arg(sdk.join("toolhost_tool.c"))
        .arg(bindings.join("tool.c"))
        .arg(bindings.join("tool_component_type.o"))
        .arg("-o")
        .arg(&core);
    run(&mut command).context("zig cc failed to build the C example")?;
    let module = fs::read(&core).with_context(|| format!("cannot read {}", core.display()))?;
    let component = componentize(&module)?;
    fs::write(out, component).with_context(|| format!("cannot write {}", out.display()))?;
    fs::remove_file(&core).with_context(|| format!("cannot remove {}", core.display()))?;
    Ok(())
}

/// Runs `language`'s SDK tests (in `guest-sdk/<lang>/tests/`) natively,
/// with its pinned toolchain; their report.
///
/// - Python: `tests/test_toolbox.py` with the toolchain's Python;
/// - JavaScript: `node --test tests/`;
/// - C: `tests/test_json.c` compiled for this machine with the pinned zig
///   (`-fsanitize=undefined`) and run.
pub fn test_sdk(repo: &Repo, language: Language) -> Result<String> {
    let toolchain = install_toolchain(repo, language)?;
    let tests = repo.sdk_dir(language).join("tests");
    let output = match language {
        Language::Python => run(Command::new(venv_bin(&toolchain, "python"))
            .arg(tests.join("test_toolbox.py"))
            .env("PYTHONDONTWRITEBYTECODE", "1")),
        Language::JavaScript => {
            crate::toolchain::check_node("JavaScript toolchain", "cargo xtask toolchains js")?;
            run(Command::new("node").arg("--test").arg(&tests))
        }
        Language::C => {
            let exe = toolchain.join(if cfg!(windows) {
                "test_json.exe"
            } else {
                "test_json"
            });
            run(zig_cc(&toolchain)
                .args(["-O1", "-g", "-fsanitize=undefined"])
                .arg(tests.join("test_json.c"))
                .arg("-o")
                .arg(&exe))
            .context("zig cc failed to build the C SDK's tests")?;
            run(&mut Command::new(&exe))
        }
    }
    .with_context(|| format!("the {language} SDK's tests failed"))?;
    // unittest reports on stderr, node and the C tests on stdout.
    let mut report = String::from_utf8_lossy(&output.stdout).into_owned();
    report.push_str(&String::from_utf8_lossy(&output.stderr));
    Ok(report)
}

/// `zig cc` of the C toolchain in `venv`, strict C11 with warnings as
/// errors; zig's caches stay inside the toolchain's folder.
fn zig_cc(venv: &Path) -> Command {
    let mut command = Command::new(venv_bin(venv, "python"));
    command
        .args([
            "-m", "ziglang", "cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
        ])
        .env("ZIG_GLOBAL_CACHE_DIR", venv.join("zig-cache"))
        .env("ZIG_LOCAL_CACHE_DIR", venv.join("zig-cache"));
    command
}

/// The `.c` files of a C tool's folder, sorted.
fn c_sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut sources: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    if sources.is_empty() {
        bail!("{} has no .c file", dir.display());
    }
    Ok(sources)
}

/// Regenerates `guest-sdk/c/bindings/` from `wit/` with wit-bindgen-cli
/// (installed into `.toolchains/wit-bindgen/` the first time: it takes a
/// few minutes to compile).
pub fn regenerate_c_bindings(repo: &Repo) -> Result<PathBuf> {
    let root = repo.wit_bindgen_dir();
    let wit_bindgen = root.join("bin").join(if cfg!(windows) {
        "wit-bindgen.exe"
    } else {
        "wit-bindgen"
    });
    let installed = crate::process::version_of(&wit_bindgen, &["--version"]);
    if !installed.is_some_and(|v| v.contains(WIT_BINDGEN_VERSION)) {
        eprintln!(
            "installing wit-bindgen-cli {WIT_BINDGEN_VERSION} into {}",
            root.display()
        );
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        run(Command::new(cargo)
            .args(["install", "wit-bindgen-cli", "--locked", "--version"])
            .arg(WIT_BINDGEN_VERSION)
            .args(["--no-default-features", "--features", "c", "--root"])
            .arg(&root))
        .context("cannot install wit-bindgen-cli")?;
    }
    let out = repo.sdk_dir(Language::C).join("bindings");
    run(Command::new(&wit_bindgen)
        .arg("c")
        .arg(repo.wit_dir())
        .args(["--world", "tool", "--out-dir"])
        .arg(&out))
    .context("wit-bindgen failed to generate the C bindings")?;
    Ok(out)
}
