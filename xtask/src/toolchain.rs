//! Installing each language's pinned toolchain into `.toolchains/<lang>/`,
//! and the two ways pins are installed (pip into a virtual environment,
//! `npm ci`), once and safely under concurrency ([`crate::install`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::install::{install_once, rewrite_paths};
use crate::process::{run, venv_bin, version_of};
use crate::{Language, Repo};

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
    install_pinned(&dir, &lockfile, &pins, &label, &retry)
}

/// How a lockfile is installed.
pub(crate) enum Pins {
    /// A hash-pinned `requirements.txt`, into a virtual environment.
    Pip,
    /// `npm ci` of the `package.json` and `package-lock.json` in this folder.
    Npm(PathBuf),
}

/// Installs `lockfile` as `pins` says into a folder under `root` named for
/// the lockfile's hash, unless that install is finished already; returns
/// that folder. `label` names it in messages; `retry` is the command that
/// installs it by hand.
pub(crate) fn install_pinned(
    root: &Path,
    lockfile: &Path,
    pins: &Pins,
    label: &str,
    retry: &str,
) -> Result<PathBuf> {
    let mut pinned = fs::read(lockfile)
        .with_context(|| format!("cannot read the lockfile {}", lockfile.display()))?;
    if let Pins::Npm(source) = pins {
        // `npm ci` checks the lockfile against package.json: both pin.
        let manifest = source.join("package.json");
        pinned.extend(
            fs::read(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?,
        );
    }
    install_once(root, &pinned, label, |partial, finished| match pins {
        Pins::Pip => install_with_pip(partial, finished, lockfile, label, retry),
        Pins::Npm(source) => install_with_npm(source, partial, label, retry),
    })
}

/// The file that pins `language`'s toolchain.
fn lockfile(repo: &Repo, language: Language) -> PathBuf {
    let sdk = repo.sdk_dir(language);
    match language {
        Language::Python | Language::C => sdk.join("requirements.txt"),
        Language::JavaScript => sdk.join("package-lock.json"),
    }
}

/// A virtual environment in `venv` with the hash-pinned `requirements`,
/// made to work from `finished`, where it will be moved.
fn install_with_pip(
    venv: &Path,
    finished: &Path,
    requirements: &Path,
    label: &str,
    retry: &str,
) -> Result<()> {
    let python = find_python(label, retry)?;
    run(Command::new(&python).arg("-m").arg("venv").arg(venv)).context(
        "cannot create a Python virtual environment (Debian/Ubuntu: apt install python3-venv)",
    )?;
    run(Command::new(venv_bin(venv, "python"))
        .args(["-m", "pip", "install", "--quiet", "--require-hashes", "-r"])
        .arg(requirements)
        // pip's own update check is not part of the install.
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1"))
    .with_context(|| format!("cannot install the {label} with pip"))?;
    // The environment's scripts name the folder it was made in.
    let scripts = venv_bin(venv, "python");
    let scripts = scripts.parent().unwrap_or(venv);
    rewrite_paths(scripts, venv, finished)?;
    rewrite_paths(venv, venv, finished)?;
    Ok(())
}

/// A Python 3.9 or newer to make virtual environments with.
pub(crate) fn find_python(label: &str, retry: &str) -> Result<String> {
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
