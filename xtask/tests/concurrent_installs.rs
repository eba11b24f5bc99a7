//! A toolchain installed on first use is installed once, however many
//! builds need it at the same moment (threads of one process and separate
//! processes alike), and an install that is killed half-way leaves nothing
//! that looks finished.
//!
//! These install the real C toolchain (pinned by
//! `guest-sdk/c/requirements.txt`) into empty folders of their own, as a
//! fresh clone's first `cargo test` does into `.toolchains/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use xtask::{Language, Repo, build_example};

/// The `cargo xtask` binary, with its toolchains in `toolchains`.
fn xtask(toolchains: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.arg("--toolchains").arg(toolchains).args(args);
    command
}

/// The folders in `dir`, by name.
fn folders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The finished installs in a toolchain's folder (partial ones begin with
/// a dot).
fn finished(dir: &Path) -> Vec<String> {
    folders(dir)
        .into_iter()
        .filter(|n| !n.starts_with('.'))
        .collect()
}

fn output_of(child: Child) -> Output {
    child.wait_with_output().expect("xtask runs")
}

fn describe(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The component header: `\0asm`, then version 0x0d and layer 1.
fn is_component(path: &Path) -> bool {
    let bytes = fs::read(path).unwrap_or_default();
    bytes.starts_with(b"\0asm\x0d\x00\x01\x00")
}

#[test]
fn several_builds_of_one_example_at_once_on_empty_toolchains_all_succeed() {
    let toolchains = tempfile::tempdir().expect("a temporary folder");
    let repo = Repo::from_manifest_dir().with_toolchains(toolchains.path());
    let processes: Vec<Child> = (0..2)
        .map(|_| {
            xtask(toolchains.path(), &["build-examples", "c"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("xtask starts")
        })
        .collect();
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let repo = repo.clone();
            thread::spawn(move || build_example(&repo, Language::C))
        })
        .collect();

    let mut built: Vec<PathBuf> = Vec::new();
    for thread in threads {
        let path = thread
            .join()
            .expect("the build does not panic")
            .unwrap_or_else(|e| panic!("a build in a thread failed: {e:#}"));
        built.push(path);
    }
    let mut installs = 0;
    for process in processes {
        let out = output_of(process);
        assert!(
            out.status.success(),
            "a build in a process failed: {}",
            describe(&out)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let path = stdout
            .trim()
            .strip_prefix("C: ")
            .unwrap_or_else(|| panic!("xtask names the component: {}", describe(&out)));
        built.push(PathBuf::from(path));
        installs += String::from_utf8_lossy(&out.stderr)
            .matches("installing the C toolchain")
            .count();
    }
    assert!(installs <= 1, "two processes installed the toolchain");
    for path in &built {
        assert_eq!(path, &repo.component(Language::C));
        assert!(is_component(path), "{} is a component", path.display());
    }
    let dir = repo.toolchain_dir(Language::C);
    assert_eq!(finished(&dir).len(), 1, "one install: {:?}", folders(&dir));
    let partial: Vec<String> = folders(&dir)
        .into_iter()
        .filter(|n| n.starts_with(".partial-"))
        .collect();
    assert!(partial.is_empty(), "nothing half-made is left: {partial:?}");
}

/// Kills the process group `group` (the install and everything it started).
#[cfg(unix)]
fn kill_group(group: u32) {
    let status = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -KILL -{group}");
}

#[cfg(unix)]
#[test]
fn an_install_killed_half_way_looks_unfinished_and_the_next_one_completes() {
    use std::os::unix::process::CommandExt;

    let toolchains = tempfile::tempdir().expect("a temporary folder");
    let dir = toolchains.path().join("c");
    let mut install = xtask(toolchains.path(), &["toolchains", "c"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("xtask starts");
    // Wait until pip is at work in the partial folder: the environment's
    // Python is there and pip is installing into it.
    let started = Instant::now();
    let partial = loop {
        let found = dir.is_dir().then(|| {
            folders(&dir)
                .into_iter()
                .find(|n| n.starts_with(".partial-"))
                .map(|n| dir.join(n))
                .filter(|p| p.join("pyvenv.cfg").is_file())
        });
        if let Some(Some(partial)) = found {
            break partial;
        }
        if let Some(status) = install.try_wait().expect("the install can be waited for") {
            panic!("the install ended ({status}) before it could be killed");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the install made no partial folder in 120 s"
        );
        thread::sleep(Duration::from_millis(20));
    };
    kill_group(install.id());
    let _ = install.wait();
    assert!(
        partial.is_dir(),
        "the killed install's folder is left as it was"
    );
    assert!(
        finished(&dir).is_empty(),
        "a killed install looks unfinished: {:?}",
        folders(&dir)
    );

    let out = xtask(toolchains.path(), &["toolchains", "c"])
        .output()
        .expect("xtask runs");
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left by an install that did not finish"),
        "{stderr}"
    );
    assert!(
        !partial.exists(),
        "the next install removed the partial folder"
    );
    let done = finished(&dir);
    assert_eq!(done.len(), 1, "{:?}", folders(&dir));
    // The finished environment works from where it was moved to: its Python
    // runs zig, and its scripts name the finished folder.
    let venv = dir.join(&done[0]);
    let zig = Command::new(xtask::venv_bin(&venv, "python"))
        .args(["-m", "ziglang", "version"])
        .output()
        .expect("python runs");
    assert!(zig.status.success(), "{}", describe(&zig));
    let pip = fs::read_to_string(xtask::venv_bin(&venv, "pip")).expect("pip's script");
    let shebang = pip.lines().next().unwrap_or_default();
    assert!(
        shebang.contains(&venv.join("bin").display().to_string()) && !pip.contains(".partial-"),
        "{shebang}"
    );
}
