//! Running the toolchains' programs, with errors that say what failed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, Result, bail};

/// Runs `command` to completion; its output is returned, and shown in the
/// error when it fails.
pub fn run(command: &mut Command) -> Result<Output> {
    let shown = show(command);
    let output = command
        .output()
        .with_context(|| format!("cannot run `{shown}`"))?;
    if !output.status.success() {
        bail!(
            "`{shown}` failed ({})\n--- stdout ---\n{}\n--- stderr ---\n{}",
            output.status,
            tail(&output.stdout),
            tail(&output.stderr),
        );
    }
    Ok(output)
}

/// The command line as text, for messages.
fn show(command: &Command) -> String {
    let mut parts = vec![command.get_program().to_string_lossy().into_owned()];
    parts.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The last 4 KiB of a program's output.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.len().saturating_sub(4096);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].trim_end().to_string()
}

/// `program`'s version line, or `None` when it cannot be run.
pub fn version_of(program: impl AsRef<OsStr>, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Some(text)
}

/// The executable `name` in a virtual environment.
pub fn venv_bin(venv: &Path, name: &str) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join(format!("{name}.exe"))
    } else {
        venv.join("bin").join(name)
    }
}
