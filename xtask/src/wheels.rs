//! `cargo xtask wheels`: the two wheels a user installs without Rust, the
//! Python package `toolhost` and the command `toolhost-cli`, built with the
//! pinned maturin and zig for manylinux, and checked as a user meets them
//! (`--test`: each installed into a fresh virtual environment, away from
//! the source tree, with no Rust toolchain on PATH).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::Repo;
use crate::example::build_rust_guest;
use crate::process::{run, venv_bin};
use crate::toolchain::{Pins, find_python, install_pinned};

/// The oldest glibc the wheels run on, as their platform tag says.
pub const MANYLINUX: &str = "manylinux_2_28";

/// One wheel `cargo xtask wheels` builds.
#[derive(Debug, Clone, Copy)]
pub struct WheelSpec {
    /// The distribution, as wheel file names spell it (`toolhost_cli`).
    pub distribution: &'static str,
    /// The crate (with its `pyproject.toml`) it is built from.
    pub crate_dir: &'static str,
    /// What `check_installed.py` checks of it: `package` or `command`.
    pub check: &'static str,
}

/// The wheels, in the order they are built.
pub const WHEELS: [WheelSpec; 2] = [
    WheelSpec {
        distribution: "toolhost",
        crate_dir: "crates/python",
        check: "package",
    },
    WheelSpec {
        distribution: "toolhost_cli",
        crate_dir: "crates/cli",
        check: "command",
    },
];

/// A wheel built: its file, size and build time.
#[derive(Debug, Clone)]
pub struct Built {
    /// Which wheel it is.
    pub spec: WheelSpec,
    /// The wheel file, in [`Repo::wheels_dir`].
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// How long maturin took to build it.
    pub seconds: f64,
}

/// A wheel installed and checked: how long `pip install` took, and what
/// the check saw (one JSON line).
#[derive(Debug, Clone)]
pub struct Checked {
    /// The wheel's file name.
    pub wheel: String,
    /// How long `pip install` of it took.
    pub install_seconds: f64,
    /// What `check_installed.py` saw, as one JSON object.
    pub seen: String,
}

/// Builds both wheels into [`Repo::wheels_dir`], replacing earlier ones of
/// the same distributions.
pub fn build_wheels(repo: &Repo) -> Result<Vec<Built>> {
    let tools = install_pinned(
        &repo.wheel_tools_dir(),
        &repo.root().join("xtask/wheels/requirements.txt"),
        &Pins::Pip,
        "wheel build tools (maturin, zig)",
        "cargo xtask wheels",
    )?;
    let out = repo.wheels_dir();
    fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    WHEELS
        .iter()
        .map(|spec| build_wheel(repo, &tools, &out, *spec))
        .collect()
}

fn build_wheel(repo: &Repo, tools: &Path, out: &Path, spec: WheelSpec) -> Result<Built> {
    for old in wheels_of(out, spec.distribution)? {
        fs::remove_file(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    let manifest = repo.root().join(spec.crate_dir).join("Cargo.toml");
    eprintln!(
        "building the {} wheel from {}",
        spec.distribution, spec.crate_dir
    );
    let start = Instant::now();
    let status = Command::new(venv_bin(tools, "maturin"))
        .current_dir(repo.root())
        .args(["build", "--release", "--zig", "--compatibility", MANYLINUX])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--out")
        .arg(out)
        // maturin finds zig as `python3 -m ziglang`, the pinned one.
        .env(
            "PATH",
            path_with(
                &scripts_of(tools),
                &std::env::var_os("PATH").unwrap_or_default(),
            )?,
        )
        .status()
        .context("cannot run maturin")?;
    if !status.success() {
        bail!(
            "maturin failed to build the {} wheel ({status})",
            spec.distribution
        );
    }
    let seconds = start.elapsed().as_secs_f64();
    let [path] = <[PathBuf; 1]>::try_from(wheels_of(out, spec.distribution)?)
        .map_err(|found| anyhow::anyhow!("maturin left {found:?} in {}", out.display()))?;
    let bytes = fs::metadata(&path)?.len();
    Ok(Built {
        spec,
        path,
        bytes,
        seconds,
    })
}

/// The wheels of `distribution` in `dir`.
fn wheels_of(dir: &Path, distribution: &str) -> Result<Vec<PathBuf>> {
    let prefix = format!("{distribution}-");
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(".whl") {
            found.push(path);
        }
    }
    Ok(found)
}

/// The folder of a virtual environment's programs.
fn scripts_of(venv: &Path) -> PathBuf {
    let python = venv_bin(venv, "python");
    python.parent().unwrap_or(venv).to_path_buf()
}

/// A PATH with `first` before the folders of `rest`.
fn path_with(first: &Path, rest: &OsStr) -> Result<OsString> {
    let dirs = std::iter::once(first.to_path_buf()).chain(std::env::split_paths(rest));
    Ok(std::env::join_paths(dirs)?)
}

/// Installs each wheel into a fresh virtual environment and checks it
/// there (`xtask/wheels/check_installed.py`): from a temporary folder with
/// a config that loads the bundled `calc` and a file module, with a PATH
/// that has no Rust toolchain on it.
pub fn test_wheels(repo: &Repo, built: &[Built]) -> Result<Vec<Checked>> {
    let trial = Trial::new(repo)?;
    built.iter().map(|wheel| trial.check(repo, wheel)).collect()
}

/// Where the wheels are tried, as a user would: a temporary folder away
/// from the source tree, and a PATH without cargo, rustc or rustup.
struct Trial {
    work: tempfile::TempDir,
    /// The user's folder: `toolhost.toml` and `hostile.wasm`.
    app: PathBuf,
    script: PathBuf,
    /// The Python the environments are made with, by its own path.
    python: PathBuf,
    path: OsString,
}

impl Trial {
    fn new(repo: &Repo) -> Result<Trial> {
        let work = tempfile::tempdir().context("cannot make a temporary folder")?;
        let app = work.path().join("app");
        fs::create_dir(&app)?;
        write_app(repo, &app)?;
        let script = work.path().join("check_installed.py");
        fs::copy(repo.root().join("xtask/wheels/check_installed.py"), &script)?;
        Ok(Trial {
            work,
            app,
            script,
            python: interpreter()?,
            path: path_without_rust(),
        })
    }

    /// `program` run in the user's folder, with nothing of this process's
    /// environment but HOME and a PATH with `first` (if any) before the
    /// Rust-free one.
    fn command(&self, program: &Path, first: Option<&Path>) -> Result<Command> {
        let path = match first {
            Some(first) => path_with(first, &self.path)?,
            None => self.path.clone(),
        };
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", path)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .current_dir(&self.app);
        if let Some(home) = std::env::var_os("HOME") {
            command.env("HOME", home);
        }
        Ok(command)
    }

    /// Installs `wheel` (a copy of it) into a fresh environment, timed, and
    /// checks it there.
    fn check(&self, repo: &Repo, wheel: &Built) -> Result<Checked> {
        let name = wheel.path.file_name().unwrap_or_default();
        let copy = self.work.path().join(name);
        fs::copy(&wheel.path, &copy)?;
        let venv = self.work.path().join(format!("venv-{}", wheel.spec.check));
        run(self
            .command(&self.python, None)?
            .args(["-m", "venv"])
            .arg(&venv))
        .context("cannot make a virtual environment")?;
        let python = venv_bin(&venv, "python");
        let scripts = scripts_of(&venv);
        let scripts = Some(scripts.as_path());
        let start = Instant::now();
        run(self
            .command(&python, scripts)?
            .args(["-m", "pip", "install", "--quiet", "--no-index"])
            .arg(&copy))
        .with_context(|| format!("pip cannot install {}", name.to_string_lossy()))?;
        let install_seconds = start.elapsed().as_secs_f64();
        let seen = run(self
            .command(&python, scripts)?
            .arg(&self.script)
            .arg(wheel.spec.check))
        .with_context(|| {
            format!(
                "the installed {} wheel failed its check",
                wheel.spec.distribution
            )
        })?;
        let seen = String::from_utf8_lossy(&seen.stdout).trim().to_string();
        let shown = run(self.command(&python, scripts)?.args([
            "-m",
            "pip",
            "show",
            &wheel.spec.distribution.replace('_', "-"),
        ]))?;
        check_metadata(repo, wheel, &String::from_utf8_lossy(&shown.stdout), &seen)?;
        Ok(Checked {
            wheel: name.to_string_lossy().into_owned(),
            install_seconds,
            seen,
        })
    }
}

/// The app folder: `hostile.wasm` (a test guest whose `trap` tool traps)
/// and a `toolhost.toml` that loads it and the bundled `calc`.
fn write_app(repo: &Repo, app: &Path) -> Result<()> {
    fs::copy(
        build_rust_guest(repo, "guest-hostile")?,
        app.join("hostile.wasm"),
    )?;
    fs::write(
        app.join("toolhost.toml"),
        "[[modules]]\nbundled = \"calc\"\n\n[[modules]]\npath = \"hostile.wasm\"\n",
    )?;
    Ok(())
}

/// `pip show` (`shown`) reads right: the name, the version (the
/// workspace's, which the check saw too, in `seen`) and a summary.
fn check_metadata(repo: &Repo, wheel: &Built, shown: &str, seen: &str) -> Result<()> {
    let version = workspace_version(repo)?;
    let name = wheel.spec.distribution.replace('_', "-");
    let field = |key: &str| {
        let prefix = format!("{key}: ");
        shown
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(str::trim)
            .unwrap_or_default()
            .to_string()
    };
    for (key, value) in [("Name", name.as_str()), ("Version", version.as_str())] {
        if field(key) != value {
            bail!(
                "pip show {name}: {key} is {:?}, not {value:?}:\n{shown}",
                field(key)
            );
        }
    }
    if field("Summary").is_empty() {
        bail!("pip show {name}: no Summary:\n{shown}");
    }
    if !seen.contains(&format!("\"version\": \"{version}\"")) {
        bail!("the installed {name} says its version is not {version}: {seen}");
    }
    Ok(())
}

/// `[workspace.package] version` of the root Cargo.toml: the one version.
pub fn workspace_version(repo: &Repo) -> Result<String> {
    let manifest = fs::read_to_string(repo.root().join("Cargo.toml"))?;
    manifest_entry(&manifest, "workspace.package", "version")
        .map(|v| v.trim_matches('"').to_string())
        .context("Cargo.toml has no [workspace.package] version")
}

/// The value, as written, of a one-line `key = value` in table `[section]`
/// of a TOML manifest (Cargo.toml, pyproject.toml) laid out one entry a
/// line, as this repository's are.
pub fn manifest_entry<'a>(manifest: &'a str, section: &str, key: &str) -> Option<&'a str> {
    let (_, rest) = manifest.split_once(&format!("[{section}]"))?;
    let table = rest.split("\n[").next().unwrap_or(rest);
    table.lines().find_map(|line| {
        let (name, value) = line.split_once('=')?;
        (name.trim() == key).then(|| value.trim())
    })
}

/// PATH without the folders that hold cargo, rustc or rustup.
fn path_without_rust() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept = std::env::split_paths(&path).filter(|dir| {
        !["cargo", "rustc", "rustup"]
            .iter()
            .any(|program| dir.join(program).exists())
    });
    std::env::join_paths(kept).unwrap_or_default()
}

/// The Python that makes the virtual environments, by its own path (not a
/// launcher's, such as pyenv's, which needs the environment cleared away).
fn interpreter() -> Result<PathBuf> {
    let python = find_python("wheel check", "cargo xtask wheels --test")?;
    let found = run(Command::new(&python).args(["-c", "import sys; print(sys.executable)"]))?;
    Ok(PathBuf::from(String::from_utf8_lossy(&found.stdout).trim()))
}
