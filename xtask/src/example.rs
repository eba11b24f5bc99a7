//! Building each language's example tool into `target/example-tools/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::componentize::componentize;
use crate::guest::{componentize_js, componentize_py};
use crate::guest_cargo::{guest_build, guest_wasm};
use crate::process::{run, venv_bin};
use crate::toolchain::install_toolchain;
use crate::up_to_date::{Inputs, build_atomically, build_unless_up_to_date};
use crate::{Example, Language, Repo};

/// The wit-bindgen-cli that generated `guest-sdk/c/bindings/`.
const WIT_BINDGEN_VERSION: &str = "0.63.0";

/// The Rust example tools toolhost does not bundle (they need grants to be
/// of use): packages under `example-tools/`, built into
/// `target/example-tools/` like the other languages' examples.
pub const RUST_EXAMPLES: [&str; 1] = ["fetch"];

/// Builds `language`'s first example tool (installing its toolchain first
/// if needed) and returns the component's path.
pub fn build_example(repo: &Repo, language: Language) -> Result<PathBuf> {
    build_named_example(repo, language.examples()[0])
}

/// Builds `example` (installing its language's toolchain first if needed)
/// and returns the component's path.
pub fn build_named_example(repo: &Repo, example: Example) -> Result<PathBuf> {
    let toolchain = install_toolchain(repo, example.language)?;
    let out = repo.example_component(example);
    let source = repo.example_source_dir(example);
    let language = example.language;
    let build = |partial: &Path| match language {
        Language::Python => build_python(repo, &toolchain, &source, partial),
        Language::JavaScript => build_js(repo, &toolchain, &source, partial),
        Language::C => build_c(repo, &toolchain, &source, partial),
    };
    let built = if language == Language::C {
        // zig and the componentizing here make the same bytes each time,
        // in about a second: always built.
        build_atomically(&out, build)
    } else {
        let inputs = Inputs::new(&toolchain)
            .path(&source)?
            .path(&repo.sdk_dir(language))?
            .path(&repo.wit_dir())?;
        build_unless_up_to_date(&out, inputs, build).map(drop)
    };
    built.with_context(|| format!("building the {example} example failed"))?;
    Ok(out)
}

/// Builds the Rust example `package` (one of [`RUST_EXAMPLES`]) with cargo
/// and copies the component to `target/example-tools/<package>.wasm`;
/// returns that path.
pub fn build_rust_example(repo: &Repo, package: &str) -> Result<PathBuf> {
    let built = build_rust_guest(repo, package)?;
    let out = repo.out_dir().join(format!("{package}.wasm"));
    build_atomically(&out, |partial| {
        fs::copy(&built, partial)
            .map(drop)
            .with_context(|| format!("cannot copy {}", built.display()))
    })?;
    Ok(out)
}

/// Builds the workspace's guest package `package` (an example tool or a
/// test guest) as `build.rs` builds the bundled ones; returns the
/// component's path in [`Repo::guest_target_dir`].
pub(crate) fn build_rust_guest(repo: &Repo, package: &str) -> Result<PathBuf> {
    let target_dir = repo.guest_target_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(&mut guest_build(
        &cargo,
        repo.root(),
        &target_dir,
        [package],
    ))
    .with_context(|| format!("cargo failed to build the Rust guest {package}"))?;
    Ok(guest_wasm(&target_dir, package))
}

/// componentize-py: the example's `app` module (in `example`) with the SDK
/// beside it.
fn build_python(repo: &Repo, venv: &Path, example: &Path, out: &Path) -> Result<()> {
    let sdk = repo.sdk_dir(Language::Python);
    componentize_py(
        venv,
        &[&repo.wit_dir()],
        "tool",
        "app",
        &[example, &sdk],
        out,
    )
    .context("componentize-py failed to build the Python example")
}

/// ComponentizeJS with its default features: `fetch()` works, through the
/// wasi:http that toolhost provides (requests to the origins the config
/// grants).
fn build_js(repo: &Repo, toolchain: &Path, example: &Path, out: &Path) -> Result<()> {
    let source = example.join("tool.js");
    componentize_js(
        repo,
        toolchain,
        &source,
        (&repo.wit_dir(), "tool"),
        out,
        &[],
    )
    .context("ComponentizeJS failed to build the JavaScript example")
}

/// zig cc to a core module for wasm32-wasi, then a component of it.
fn build_c(repo: &Repo, venv: &Path, example: &Path, out: &Path) -> Result<()> {
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
        .args(c_sources(example)?)
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
            // A folder of this run's own: the toolchain is never written to,
            // and two runs at once do not build over each other's program.
            let work = tempfile::tempdir().context("cannot make a temporary folder")?;
            let exe = work.path().join(if cfg!(windows) {
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
/// errors. zig's cache (safe for several zig processes at once) is kept
/// beside the toolchain's installs, not in one: an install is never
/// written to once it is finished.
fn zig_cc(venv: &Path) -> Command {
    let cache = venv.parent().unwrap_or(venv).join(".zig-cache");
    let mut command = Command::new(venv_bin(venv, "python"));
    command
        .args([
            "-m", "ziglang", "cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
        ])
        .env("ZIG_GLOBAL_CACHE_DIR", &cache)
        .env("ZIG_LOCAL_CACHE_DIR", &cache);
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

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::Path;

    use crate::guest_cargo::{
        GUEST_PROFILE, GUEST_TARGET, HOST_ONLY_VARS, guest_build, guest_target_dir, guest_wasm,
    };

    #[test]
    fn the_guest_build_clears_every_host_only_variable() {
        let command = guest_build(
            OsStr::new("cargo"),
            Path::new("/repo"),
            Path::new("/repo/target/guests"),
            ["calc", "guest-echo"],
        );
        let envs: Vec<_> = command.get_envs().collect();
        for var in HOST_ONLY_VARS {
            assert!(
                envs.contains(&(OsStr::new(var), None)),
                "{var} is not cleared: {envs:?}"
            );
        }
        assert_eq!(envs.len(), HOST_ONLY_VARS.len(), "{envs:?}");
        let args: Vec<_> = command.get_args().collect();
        let expected = [
            "build",
            "--profile",
            GUEST_PROFILE,
            "--target",
            GUEST_TARGET,
            "--target-dir",
            "/repo/target/guests",
            "-p",
            "calc",
            "-p",
            "guest-echo",
        ];
        assert_eq!(args, expected.map(OsStr::new));
        assert_eq!(command.get_current_dir(), Some(Path::new("/repo")));
    }

    #[test]
    fn the_guest_target_dir_honours_cargo_target_dir() {
        let root = Path::new("/repo");
        let dir = |set: Option<&str>| guest_target_dir(root, set.map(OsStr::new));
        assert_eq!(dir(None), Path::new("/repo/target/guests"));
        assert_eq!(dir(Some("/tmp/t")), Path::new("/tmp/t/guests"));
        assert_eq!(dir(Some("out/t")), Path::new("/repo/out/t/guests"));
        assert_eq!(
            guest_wasm(Path::new("/t/guests"), "guest-echo"),
            Path::new("/t/guests/wasm32-wasip2/guest/guest_echo.wasm")
        );
    }
}
