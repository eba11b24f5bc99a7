//! Builds the Python package `toolhost` into a virtual environment and runs
//! its pytest suite (the `test_*.py` files beside this one).
//!
//! The extension module is the cdylib that this same `cargo test` built
//! (same profile and target directory, so nothing is compiled twice); it is
//! put with the package's Python files into a folder of this run's own, on
//! the `PYTHONPATH` of the pinned pytest and mypy of
//! `.toolchains/python-package/` (an install this test never writes to). The
//! test components (echo, hostile, http, verbatim, calc, python-exec) are built here, and the answers
//! the Rust library gives to a set of calls are written for the suite to
//! compare its own with.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use toolhost::{LimitOverrides, Limits, Runtime, ToolManager, WasmModule};
use xtask::{Repo, install_python_test_env, venv_bin};

#[test]
fn pytest_suite() {
    let repo = Repo::at(toolhost_testkit::workspace_root());
    let venv = install_python_test_env(&repo)
        .unwrap_or_else(|e| panic!("cannot install the package's test tools: {e:#}"));
    let python = venv_bin(&venv, "python");
    let work = tempfile::tempdir().expect("a temporary directory");
    let packages = work.path().join("packages");
    place_package(&repo.python_package_dir(), &packages);
    let echo = toolhost_testkit::guest("guest-echo");
    let hostile = toolhost_testkit::guest("guest-hostile");
    let http = toolhost_testkit::guest("guest-http");
    let verbatim = toolhost_testkit::guest("guest-verbatim");
    let plain = toolhost_testkit::guest("guest-plain");
    let python_exec = xtask::build_named_example(&repo, xtask::Example::PYTHON_EXEC)
        .unwrap_or_else(|e| panic!("cannot build the python-exec example: {e:#}"));
    let table = repo.root().join("tests/data/verbatim_arguments.json");
    let calc = work.path().join("calc.wasm");
    fs::write(
        &calc,
        toolhost::bundled_module("calc").expect("calc is bundled"),
    )
    .unwrap();
    let expected = work.path().join("expected.json");
    write_expected(&hostile, &echo, &expected);

    let tests = repo.python_package_dir().join("tests");
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no"])
        .arg(&tests)
        // More pytest arguments, to run some tests or see more
        // (`TOOLHOST_PYTEST_ARGS="-v -k pickling"`).
        .args(
            std::env::var("TOOLHOST_PYTEST_ARGS")
                .unwrap_or_default()
                .split_whitespace(),
        )
        .current_dir(&tests)
        .env("PYTHONPATH", &packages)
        .env("TOOLHOST_TEST_ECHO", &echo)
        .env("TOOLHOST_TEST_HOSTILE", &hostile)
        .env("TOOLHOST_TEST_HTTP", &http)
        .env("TOOLHOST_TEST_VERBATIM", &verbatim)
        .env("TOOLHOST_TEST_PLAIN", &plain)
        .env("TOOLHOST_TEST_PYTHON_EXEC", &python_exec)
        .env("TOOLHOST_TEST_ARGUMENTS_TABLE", &table)
        .env("TOOLHOST_TEST_CALC", &calc)
        .env("TOOLHOST_TEST_EXPECTED", &expected)
        // The package's compile cache, kept out of the user's.
        .env("XDG_CACHE_HOME", work.path().join("cache"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the package's pytest suite failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains(" passed"), "pytest ran no tests:\n{stdout}");
    assert!(!stdout.contains("skipped"), "tests were skipped:\n{stdout}");
}

/// Puts the package (its Python files and the extension built by this
/// `cargo test`) into `packages/toolhost/`.
fn place_package(package: &Path, packages: &Path) {
    let target = packages.join("toolhost");
    fs::create_dir_all(&target).unwrap();
    for entry in fs::read_dir(package.join("python/toolhost")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            fs::copy(&path, target.join(path.file_name().unwrap())).unwrap();
        }
    }
    fs::copy(extension_module(), target.join("_native.abi3.so")).unwrap();
}

/// The extension module cargo built for this test run: the package's
/// cdylib, beside this test's executable.
fn extension_module() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let name = format!(
        "{}toolhost_python{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let path = dir.join(&name);
        if path.is_file() {
            return path;
        }
    }
    panic!("cargo did not build {name} beside {}", deps.display());
}

/// The limits the suite loads the hostile module with (its conftest.py's
/// `HOSTILE_LIMITS`).
fn hostile_limits() -> Limits {
    LimitOverrides {
        timeout_ms: Some(300),
        memory_mib: Some(64),
        ..LimitOverrides::default()
    }
    .apply(Limits::default())
}

/// What the Rust library answers to a set of calls that fail in every way
/// (and two that succeed), for the suite to compare the package's answers with.
fn write_expected(hostile: &Path, echo: &Path, out: &Path) {
    let runtime = Runtime::new().expect("a runtime");
    let mut manager = ToolManager::new();
    let hostile = WasmModule::from_file(&runtime, hostile, Some("hostile"), hostile_limits())
        .expect("the hostile module loads");
    let echo = WasmModule::from_file(&runtime, echo, Some("echo"), Limits::default())
        .expect("the echo module loads");
    manager.register(hostile).unwrap();
    manager.register(echo).unwrap();
    let call = |name: &str, arguments: Value| json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}});
    let calls = [
        call("echo_echo", json!("{\"text\": \"hello\"}")),
        call("hostile_add", json!({"a": 2, "b": 3})),
        call("hostile_spin", json!("{}")),
        call("hostile_membomb", json!("{}")),
        call("hostile_panic", json!("{\"text\": \"boom\"}")),
        call("hostile_trap", json!("{}")),
        call("hostile_recurse", json!("{}")),
        call("hostile_fail", json!("{\"text\": \"refused\"}")),
        call("hostile_big_output", json!({"bytes": 2_000_000})),
        call("echo_ecoh", json!("{}")),
        call("echo_echo", json!("{not json")),
        call("echo_echo", json!("[1, 2]")),
        call("echo_echo", json!({"text": 5})),
        json!({"id": "x", "type": "function"}),
        json!({"function": {"name": ""}}),
    ];
    let answers: Vec<Value> = calls
        .iter()
        .map(|c| json!({"call": c, "content": manager.call(c)}))
        .collect();
    let limits = json!({"timeout_ms": 300, "memory_mib": 64});
    let text =
        serde_json::to_string_pretty(&json!({"limits": limits, "answers": answers})).unwrap();
    fs::write(out, text).unwrap();
}
