//! The compile cache: compile once, load after; never trust a bad entry.

use std::path::Path;

use serde_json::{Map, Value, json};
use toolhost::{Compiled, Limits, Runtime, Tool, WasmModule, bundled_module};

fn calc(runtime: &Runtime, limits: Limits) -> WasmModule {
    let bytes = bundled_module("calc").unwrap();
    WasmModule::from_bytes(runtime, "calc", bytes, limits).expect("calc loads")
}

fn evaluate(module: &WasmModule) -> String {
    let args: Map<String, Value> = serde_json::from_value(json!({"expression": "6 * 7"})).unwrap();
    module.call("calc_evaluate", &args).unwrap()
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn compiled_once_then_loaded_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let first = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    assert_eq!(first.compiled(), Compiled::Fresh);
    assert_eq!(evaluate(&first), "42");
    let files = entries(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    // A new runtime (a new process, in effect) loads it instead of compiling.
    let second = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    assert_eq!(second.compiled(), Compiled::Cached);
    assert_eq!(evaluate(&second), "42");
    // The stack size is checked at run time, not compiled in: wasmtime's
    // compatibility hash leaves it out, so the entry serves that engine too.
    let deep = Limits {
        max_stack_kib: 1024,
        ..Limits::default()
    };
    let other = calc(&Runtime::with_cache_dir(&cache).unwrap(), deep);
    assert_eq!(other.compiled(), Compiled::Cached);
    assert_eq!(evaluate(&other), "42");
    assert_eq!(entries(&cache).len(), 1);
    // Another component is another entry.
    let text = WasmModule::from_bytes(
        &Runtime::with_cache_dir(&cache).unwrap(),
        "text",
        bundled_module("text").unwrap(),
        Limits::default(),
    )
    .unwrap();
    assert_eq!(text.compiled(), Compiled::Fresh);
    assert_eq!(entries(&cache).len(), 2);
}

#[test]
fn corrupt_or_truncated_entries_are_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    let entry = entries(&cache).remove(0);
    let good = std::fs::read(&entry).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x55;
    for bad in [
        &good[..good.len() / 3],
        &flipped[..],
        b"",
        b"not a cache entry",
    ] {
        std::fs::write(&entry, bad).unwrap();
        let module = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
        assert_eq!(module.compiled(), Compiled::Fresh);
        assert_eq!(evaluate(&module), "42");
        // ... and the entry is whole again.
        assert_eq!(std::fs::read(&entry).unwrap(), good);
    }
}

#[cfg(unix)]
#[test]
fn a_cache_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Runtime::with_cache_dir(&cache).unwrap_err().to_string();
    assert!(err.contains("is writable by other users"), "{err}");
    // The command warns and compiles without it; `compile` says it cannot fill it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("--cache-dir")
        .arg(&cache)
        .args(["call", "calc_evaluate", r#"{"expression": "1+1"}"#])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("compile cache unavailable"));
    assert!(std::fs::read_dir(&cache).unwrap().next().is_none());
}

#[test]
fn the_compile_command_fills_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("--cache-dir")
            .arg(&cache)
            .arg("compile")
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let first = run();
    assert_eq!(first.status.code(), Some(0));
    let text = String::from_utf8_lossy(&first.stdout).into_owned();
    for name in ["calc", "text", "json"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.contains(" compiled ")),
            "{text}"
        );
    }
    let again = String::from_utf8_lossy(&run().stdout).into_owned();
    assert_eq!(again.matches(" cached ").count(), 3, "{again}");
    assert_eq!(entries(&cache).len(), 3);
}

#[test]
fn the_config_names_the_cache_or_turns_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let toolhost = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(args)
            .current_dir(dir.path())
            // No default cache directory: only what the config names is used.
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", dir.path().join("home"))
            .output()
            .unwrap()
    };
    // `[cache] dir` is relative to the config file.
    std::fs::create_dir(dir.path().join("conf")).unwrap();
    std::fs::write(
        dir.path().join("conf/toolhost.toml"),
        "[cache]\ndir = \"artifacts\"\n\n[[modules]]\nbundled = \"calc\"\n",
    )
    .unwrap();
    let out = toolhost(&["--config", "conf/toolhost.toml", "compile"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(entries(&dir.path().join("conf/artifacts")).len(), 1);
    assert!(!dir.path().join("home").exists());
    // `--cache-dir` wins over the config.
    let flag = dir.path().join("flag");
    let out = toolhost(&[
        "--config",
        "conf/toolhost.toml",
        "--cache-dir",
        flag.to_str().unwrap(),
        "compile",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(entries(&flag).len(), 1);

    // `enabled = false`: nothing is written, and `compile` says why.
    std::fs::write(
        dir.path().join("off.toml"),
        "[cache]\nenabled = false\n\n[[modules]]\nbundled = \"calc\"\n",
    )
    .unwrap();
    let out = toolhost(&[
        "--config",
        "off.toml",
        "call",
        "calc_evaluate",
        r#"{"expression": "2+3"}"#,
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "5\n");
    assert!(!dir.path().join("home").exists());
    let out = toolhost(&["--config", "off.toml", "compile"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("[cache] enabled = false"),
        "{out:?}"
    );
    // An unknown key is a config error naming it.
    std::fs::write(dir.path().join("bad.toml"), "[cache]\ndirectory = \"x\"\n").unwrap();
    let out = toolhost(&["--config", "bad.toml", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("directory"),
        "{out:?}"
    );
}
