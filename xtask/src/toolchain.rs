//! Installing each language's pinned toolchain into `.toolchains/<lang>/`.
//!
//! An install is recorded by a copy of the lockfile it installed
//! (`.toolchains/<lang>/installed.lock`), so it is done again exactly when
//! the lockfile changes, and a half-finished install (no record) is redone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::process::{run, venv_bin, version_of};
use crate::{Language, Repo};

/// The record of a finished install, beside the toolchain.
const RECORD: &str = "installed.lock";

/// Installs `language`'s toolchain unless the same lockfile is already
/// installed; returns the toolchain's folder.
pub fn install_toolchain(repo: &Repo, language: Language) -> Result<PathBuf> {
    let dir = repo.toolchain_dir(language);
    let lockfile = lockfile(repo, language);
    let label = format!("{language} toolchain");
    let retry = format!("cargo xtask toolchains {}", language.dir_name());
    let pins = match language {
        Language::Python | Language::C => Pins::Pip,
        Language::JavaScript => Pins::Npm(repo.sdk_dir(language)),
    };
    install_pinned(&dir, &lockfile, &pins, &label, &retry)?;
    Ok(dir)
}

/// How a lockfile is installed.
pub(crate) enum Pins {
    /// A hash-pinned `requirements.txt`, into a virtual environment.
    Pip,
    /// `npm ci` of the `package.json` and `package-lock.json` in this folder.
    Npm(PathBuf),
}

/// Installs `lockfile` into `dir` as `pins` says, unless the same lockfile
/// is already installed there. `label` names it in messages; `retry` is
/// the command that installs it by hand.
pub(crate) fn install_pinned(
    dir: &Path,
    lockfile: &Path,
    pins: &Pins,
    label: &str,
    retry: &str,
) -> Result<()> {
    let pinned = fs::read(lockfile)
        .with_context(|| format!("cannot read the lockfile {}", lockfile.display()))?;
    if fs::read(dir.join(RECORD)).ok().as_deref() == Some(pinned.as_slice()) {
        return Ok(());
    }
    eprintln!("installing the {label} into {}", dir.display());
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    match pins {
        Pins::Pip => install_with_pip(dir, lockfile, label, retry)?,
        Pins::Npm(source) => install_with_npm(source, dir, label, retry)?,
    }
    fs::write(dir.join(RECORD), &pinned)
        .with_context(|| format!("cannot record the install in {}", dir.display()))?;
    Ok(())
}

/// The file that pins `language`'s toolchain.
fn lockfile(repo: &Repo, language: Language) -> PathBuf {
    let sdk = repo.sdk_dir(language);
    match language {
        Language::Python | Language::C => sdk.join("requirements.txt"),
        Language::JavaScript => sdk.join("package-lock.json"),
    }
}

/// A virtual environment in `venv` with the hash-pinned `requirements`.
fn install_with_pip(venv: &Path, requirements: &Path, label: &str, retry: &str) -> Result<()> {
    let python = find_python(label, retry)?;
    run(Command::new(&python).arg("-m").arg("venv").arg(venv)).context(
        "cannot create a Python virtual environment (Debian/Ubuntu: apt install python3-venv)",
    )?;
    run(Command::new(venv_bin(venv, "python"))
        .args(["-m", "pip", "install", "--quiet", "--require-hashes", "-r"])
        .arg(requirements))
    .with_context(|| format!("cannot install the {label} with pip"))?;
    Ok(())
}

/// A Python 3.9 or newer to make virtual environments with.
fn find_python(label: &str, retry: &str) -> Result<String> {
    let candidates = if cfg!(windows) {
        ["python", "python3"]
    } else {
        ["python3", "python"]
    };
    let check = "import sys, venv; print('%d.%d' % sys.version_info[:2]); sys.exit(sys.version_info < (3, 9))";
    for candidate in candidates {
        if version_of(candidate, &["-c", check]).is_some() {
            return Ok(candidate.to_string());
        }
    }
    bail!(
        "the {label} is installed with pip and needs Python 3.9 or newer with venv, \
         and none was found on PATH (tried python3, python). Install it \
         (Debian/Ubuntu: `sudo apt install python3 python3-venv`; macOS: `brew install python`; \
         Windows: https://www.python.org/downloads/), then run `{retry}`"
    )
}

/// `npm ci` in `dir` of the pinned `package.json` and `package-lock.json`
/// found in `source`.
fn install_with_npm(source: &Path, dir: &Path, label: &str, retry: &str) -> Result<()> {
    check_node(label, retry)?;
    for file in ["package.json", "package-lock.json"] {
        fs::copy(source.join(file), dir.join(file))
            .with_context(|| format!("cannot copy {file} into {}", dir.display()))?;
    }
    run(Command::new(npm())
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir))
    .with_context(|| format!("cannot install the {label} with npm"))?;
    Ok(())
}

/// The npm program's name on this platform.
fn npm() -> &'static str {
    if cfg!(windows) { "npm.cmd" } else { "npm" }
}

/// Node.js 18 or newer and npm, or an error that says how to get them
/// (for the `label`, which `retry` installs by hand).
pub fn check_node(label: &str, retry: &str) -> Result<()> {
    let how = format!(
        "Install Node.js 18 or newer with npm (https://nodejs.org/en/download; \
         Debian/Ubuntu: `sudo apt install nodejs npm`; macOS: `brew install node`), \
         then run `{retry}`"
    );
    let Some(version) = version_of("node", &["--version"]) else {
        bail!("the {label} needs Node.js, and `node` was not found on PATH. {how}");
    };
    let major: Option<u32> = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok());
    if major.is_none_or(|m| m < 18) {
        bail!("the {label} needs Node.js 18 or newer, and this is {version}. {how}");
    }
    if version_of(npm(), &["--version"]).is_none() {
        bail!("the {label} is installed with npm, and `npm` was not found on PATH. {how}");
    }
    Ok(())
}
