//! Without Python or Node.js on PATH, `cargo xtask` says what is missing and
//! how to install it, instead of failing obscurely.

use std::process::{Command, Output};

/// Runs the xtask binary with an empty PATH and fresh toolchain folder.
fn xtask_without_path(args: &[&str]) -> Output {
    let empty = tempfile::tempdir().expect("temp dir");
    let toolchains = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--toolchains")
        .arg(toolchains.path())
        .args(args)
        .env("PATH", empty.path())
        .output()
        .expect("xtask runs")
}

#[test]
fn without_python_it_says_how_to_install_it() {
    for language in ["python", "c"] {
        let out = xtask_without_path(&["build-examples", language]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("needs Python 3.9 or newer with venv"),
            "{stderr}"
        );
        assert!(
            stderr.contains("sudo apt install python3 python3-venv"),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("then run `cargo xtask toolchains {language}`")),
            "{stderr}"
        );
    }
}

#[test]
fn without_node_it_says_how_to_install_it() {
    let out = xtask_without_path(&["toolchains", "js"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("needs Node.js, and `node` was not found on PATH"),
        "{stderr}"
    );
    assert!(
        stderr.contains("https://nodejs.org/en/download"),
        "{stderr}"
    );
    assert!(
        stderr.contains("then run `cargo xtask toolchains js`"),
        "{stderr}"
    );
}
