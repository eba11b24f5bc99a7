//! Writing the component a build makes: atomically, and only when
//! something it is built from changed.
//!
//! ComponentizeJS and componentize-py do not make the same bytes twice from
//! the same sources (their pre-initialized snapshots differ), so a rebuild
//! costs its own time and, because the component's hash changed, a fresh
//! compile wherever it is loaded (toolhost's compile cache is keyed by the
//! bytes). A build records the digest of its [`Inputs`] beside the
//! component (`<name>.wasm.inputs`); the next build with the same inputs
//! reuses the component.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// What a component is built from: the tool that builds it, its options,
/// and the files and folders it reads (each folder whole, recursively).
pub(crate) struct Inputs {
    hash: Sha256,
}

impl Inputs {
    /// Inputs of a build by `tool` (a toolchain's folder, named for its
    /// pins, or a program).
    pub(crate) fn new(tool: &Path) -> Self {
        let mut inputs = Inputs {
            hash: Sha256::new(),
        };
        inputs.field(b"tool", tool.as_os_str().as_encoded_bytes());
        inputs
    }

    /// An option the build is given.
    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.field(b"arg", arg.as_ref().as_encoded_bytes());
        self
    }

    /// A file the build reads, or a folder (every file below it, by path
    /// and contents).
    pub(crate) fn path(mut self, path: &Path) -> Result<Self> {
        self.field(b"path", path.as_os_str().as_encoded_bytes());
        let mut files = Vec::new();
        files_below(path, &mut files)?;
        files.sort();
        for file in files {
            let relative = file.strip_prefix(path).unwrap_or(&file);
            self.field(b"file", relative.as_os_str().as_encoded_bytes());
            let bytes =
                fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            self.field(b"bytes", &bytes);
        }
        Ok(self)
    }

    /// Adds `value` under `kind`, length-prefixed so that no two sequences
    /// of fields hash alike.
    fn field(&mut self, kind: &[u8], value: &[u8]) {
        for part in [kind, value] {
            self.hash.update((part.len() as u64).to_le_bytes());
            self.hash.update(part);
        }
    }

    fn digest(self) -> String {
        format!("{:x}", self.hash.finalize())
    }
}

/// Every file at or below `path` (skipping `__pycache__` folders, which
/// running the sources writes), into `files`.
fn files_below(path: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let meta = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    for entry in fs::read_dir(path).with_context(|| format!("cannot read {}", path.display()))? {
        let entry = entry?.path();
        if entry.file_name() != Some(OsStr::new("__pycache__")) {
            files_below(&entry, files)?;
        }
    }
    Ok(())
}

/// Where the digest of `out`'s inputs is kept.
fn stamp_of(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".inputs");
    PathBuf::from(name)
}

/// Forgets what `out` was built from, so that its next build runs
/// whatever its inputs (`cargo xtask build-tool` builds each time: a file
/// given there may import files its inputs do not cover).
pub fn forget_inputs(out: &Path) -> Result<()> {
    let stamp = stamp_of(out);
    match fs::remove_file(&stamp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", stamp.display()))
        }
        _ => Ok(()),
    }
}

/// Builds `out` with `build` (as [`build_atomically`] does) unless it was
/// built from the same `inputs` before and is still there; whether it was
/// built.
pub(crate) fn build_unless_up_to_date(
    out: &Path,
    inputs: Inputs,
    build: impl FnOnce(&Path) -> Result<()>,
) -> Result<bool> {
    let digest = inputs.digest();
    let stamp = stamp_of(out);
    if out.is_file() && fs::read_to_string(&stamp).is_ok_and(|recorded| recorded == digest) {
        return Ok(false);
    }
    // A component without its stamp is never taken for an up-to-date one.
    forget_inputs(out)?;
    build_atomically(out, build)?;
    fs::write(&stamp, &digest).with_context(|| format!("cannot write {}", stamp.display()))?;
    Ok(true)
}

/// Runs `build` to write a component beside `out` and renames it to `out`,
/// so a failed build never leaves a truncated component where a config or
/// a test would load it. The partial file's name is unique to this build,
/// so builds of the same `out` at once do not write into each other's.
pub(crate) fn build_atomically(out: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    static BUILDS: AtomicU32 = AtomicU32::new(0);
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    let partial = out.with_extension(format!("partial-{}-{n}.wasm", std::process::id()));
    let built = build(&partial).and_then(|()| {
        fs::rename(&partial, out)
            .with_context(|| format!("cannot move the component to {}", out.display()))
    });
    if built.is_err() {
        let _ = fs::remove_file(&partial);
    }
    built
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build that writes `text` and counts itself.
    fn writes<'a>(text: &'a str, runs: &'a mut u32) -> impl FnOnce(&Path) -> Result<()> + 'a {
        move |partial| {
            *runs += 1;
            fs::write(partial, text)?;
            Ok(())
        }
    }

    #[test]
    fn a_build_is_skipped_only_while_its_inputs_and_output_are_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("src");
        fs::create_dir_all(source.join("sub")).unwrap();
        fs::write(source.join("sub/a.py"), "one").unwrap();
        let out = dir.path().join("out/tool.wasm");
        let inputs = || {
            Inputs::new(Path::new("tool-1"))
                .arg("--x")
                .path(&source)
                .unwrap()
        };
        let mut runs = 0;

        assert!(build_unless_up_to_date(&out, inputs(), writes("first", &mut runs)).unwrap());
        assert!(!build_unless_up_to_date(&out, inputs(), writes("second", &mut runs)).unwrap());
        assert_eq!(
            (runs, fs::read_to_string(&out).unwrap().as_str()),
            (1, "first")
        );

        // A file below the folder changes: built again.
        fs::write(source.join("sub/a.py"), "two").unwrap();
        assert!(build_unless_up_to_date(&out, inputs(), writes("third", &mut runs)).unwrap());
        // Running the sources leaves bytecode behind: not a change.
        fs::create_dir_all(source.join("sub/__pycache__")).unwrap();
        fs::write(source.join("sub/__pycache__/a.pyc"), "x").unwrap();
        assert!(!build_unless_up_to_date(&out, inputs(), writes("-", &mut runs)).unwrap());
        // A file added, another option, another tool: built again each time.
        fs::write(source.join("b.py"), "").unwrap();
        assert!(build_unless_up_to_date(&out, inputs(), writes("4", &mut runs)).unwrap());
        let other_arg = || inputs().arg("--y");
        assert!(build_unless_up_to_date(&out, other_arg(), writes("5", &mut runs)).unwrap());
        let other_tool = Inputs::new(Path::new("tool-2"))
            .arg("--x")
            .path(&source)
            .unwrap();
        assert!(build_unless_up_to_date(&out, other_tool, writes("6", &mut runs)).unwrap());
        // The component removed: built again.
        fs::remove_file(&out).unwrap();
        assert!(build_unless_up_to_date(&out, inputs(), writes("7", &mut runs)).unwrap());
        assert_eq!((runs, fs::read_to_string(&out).unwrap().as_str()), (6, "7"));
    }

    #[test]
    fn a_failed_build_leaves_no_stamp_and_is_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("tool.wasm");
        let inputs = || Inputs::new(Path::new("tool"));
        let mut runs = 0;
        build_unless_up_to_date(&out, inputs(), writes("old", &mut runs)).unwrap();
        let changed = || inputs().arg("changed");
        let failed = build_unless_up_to_date(&out, changed(), |_| anyhow::bail!("no"));
        assert!(failed.is_err());
        assert!(!stamp_of(&out).exists(), "the old stamp is gone");
        // Even the old inputs build again: the stamp no longer vouches for
        // what is there.
        assert!(build_unless_up_to_date(&out, inputs(), writes("new", &mut runs)).unwrap());
        assert_eq!(fs::read_to_string(&out).unwrap(), "new");
    }

    #[test]
    fn fields_are_framed() {
        let a = Inputs::new(Path::new("t")).arg("ab").arg("c").digest();
        let b = Inputs::new(Path::new("t")).arg("a").arg("bc").digest();
        assert_ne!(a, b);
    }
}
