//! The command's compile cache: `--cache-dir`, `[cache]`, `compile`.

use toolhost_testkit::cache_entries;

#[cfg(unix)]
#[test]
fn the_command_compiles_without_a_cache_others_can_write() {
    let dir = tempfile::tempdir().unwrap();
    let cache = toolhost_testkit::world_writable_dir(dir.path(), "cache");
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
    assert_eq!(cache_entries(&cache).len(), 3);
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
    assert_eq!(cache_entries(&dir.path().join("conf/artifacts")).len(), 1);
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
    assert_eq!(cache_entries(&flag).len(), 1);

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
