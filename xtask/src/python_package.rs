//! The Python environment the `toolhost` package's tests run in: pytest and
//! mypy, pinned by `crates/python/tests/requirements.txt` and installed into
//! `.toolchains/python-package/`.

use std::path::PathBuf;

use anyhow::Result;

use crate::Repo;
use crate::toolchain::{Pins, install_pinned};

/// Installs the package tests' pinned tools unless they already are;
/// returns the virtual environment (never changed after: the tests put the
/// package on its path from a folder of their own).
pub fn install_python_test_env(repo: &Repo) -> Result<PathBuf> {
    install_pinned(
        &repo.python_test_env_dir(),
        &repo.python_package_dir().join("tests/requirements.txt"),
        &Pins::Pip,
        "Python package's test tools (pytest, mypy)",
        "cargo xtask python-test-env",
    )
}
