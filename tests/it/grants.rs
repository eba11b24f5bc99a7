//! Grants: nothing unless granted; directories, environment, and no way out.

use std::path::Path;

use serde_json::json;
use toolhost::{DirGrant, DirMode, Grants, ToolManager};

use crate::common::{call, hostile};

/// A manager with the hostile guest (module `h`), granted `grants` (resolved against `base`).
fn granted(grants: Grants, base: &Path) -> ToolManager {
    let module = hostile().with_access(grants.resolve(base).expect("grants resolve"));
    let mut manager = ToolManager::new();
    manager.register(module).unwrap();
    manager
}

/// A temporary tree: `data/hello.txt` (granted) beside `secret.txt` (not granted).
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("data")).unwrap();
    std::fs::write(root.path().join("data/hello.txt"), "hi").unwrap();
    std::fs::write(root.path().join("secret.txt"), "top secret").unwrap();
    root
}

fn dir(mode: DirMode) -> Grants {
    Grants {
        dirs: vec![DirGrant {
            host: "data".into(),
            guest: "/data".into(),
            mode,
        }],
        ..Grants::default()
    }
}

#[test]
fn read_only_directory() {
    let root = tree();
    let m = granted(dir(DirMode::Ro), root.path());
    assert_eq!(
        call(&m, "h_read_file", json!({"text": "/data/hello.txt"})),
        "hi"
    );
    let out = call(
        &m,
        "h_write_file",
        json!({"path": "/data/new.txt", "text": "x"}),
    );
    assert!(
        out.starts_with("Error: tool 'h_write_file' failed: "),
        "{out}"
    );
    assert!(!root.path().join("data/new.txt").exists());
}

#[test]
fn read_write_directory() {
    let root = tree();
    let m = granted(dir(DirMode::Rw), root.path());
    assert_eq!(
        call(
            &m,
            "h_write_file",
            json!({"path": "/data/new.txt", "text": "made"})
        ),
        "written"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("data/new.txt")).unwrap(),
        "made"
    );
}

#[test]
fn no_way_out_of_a_granted_directory() {
    let root = tree();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        root.path().join("secret.txt"),
        root.path().join("data/link"),
    )
    .unwrap();
    let m = granted(dir(DirMode::Rw), root.path());
    for path in [
        "/data/../secret.txt",
        "/secret.txt",
        "/etc/passwd",
        "../secret.txt",
        "/data/link",
    ] {
        let out = call(&m, "h_read_file", json!({"text": path}));
        assert!(
            out.starts_with("Error: tool 'h_read_file' failed: "),
            "{path}: {out}"
        );
        assert!(
            !out.contains("top secret") && !out.contains("root:"),
            "{path}: {out}"
        );
    }
    // Hard links to files outside the grant fail too.
    let out = call(
        &m,
        "h_hard_link",
        json!({"target": "/data/../secret.txt", "link": "/data/hl"}),
    );
    assert!(
        out.starts_with("Error: tool 'h_hard_link' failed: "),
        "{out}"
    );
    assert!(!root.path().join("data/hl").exists());
    // Creating symlinks is refused, whatever they point to.
    for target in ["/etc/passwd", "../secret.txt", "hello.txt"] {
        let out = call(&m, "h_symlink", json!({"target": target, "link": "evil"}));
        assert_eq!(
            out, "Error: tool 'h_symlink' failed: not-permitted",
            "{target}"
        );
        assert!(std::fs::symlink_metadata(root.path().join("data/evil")).is_err());
    }
    assert_eq!(
        call(&m, "h_read_file", json!({"text": "/data/hello.txt"})),
        "hi"
    );
}

#[test]
fn symlinks_only_when_granted_and_only_inside() {
    let root = tree();
    let grants = Grants {
        symlinks: true,
        ..dir(DirMode::Rw)
    };
    let m = granted(grants, root.path());
    assert_eq!(
        call(
            &m,
            "h_symlink",
            json!({"target": "hello.txt", "link": "alias"})
        ),
        "linked"
    );
    assert_eq!(
        std::fs::read_link(root.path().join("data/alias")).unwrap(),
        Path::new("hello.txt")
    );
    assert_eq!(
        call(&m, "h_read_file", json!({"text": "/data/alias"})),
        "hi"
    );
    // Targets that leave the directory are refused even with the grant.
    for target in [
        "/etc/passwd",
        "../secret.txt",
        "sub/../../secret.txt",
        "alias/..",
    ] {
        let out = call(&m, "h_symlink", json!({"target": target, "link": "evil"}));
        assert_eq!(
            out, "Error: tool 'h_symlink' failed: not-permitted",
            "{target}"
        );
        assert!(std::fs::symlink_metadata(root.path().join("data/evil")).is_err());
    }
    // `symlinks = true` means nothing without a writable directory.
    let err = Grants {
        symlinks: true,
        ..dir(DirMode::Ro)
    }
    .resolve(root.path())
    .unwrap_err();
    assert_eq!(
        err,
        "grants.symlinks = true needs a directory granted with mode = \"rw\""
    );
}

#[test]
fn environment_only_as_granted() {
    // SAFETY: this variable is set only here, before the grants read it.
    unsafe { std::env::set_var("TOOLHOST_TEST_API_KEY", "k-123") };
    let grants = Grants {
        env: [("UNITS".to_string(), "metric".to_string())].into(),
        env_inherit: vec!["TOOLHOST_TEST_API_KEY".into()],
        ..Grants::default()
    };
    let m = granted(grants, Path::new("."));
    assert_eq!(
        call(&m, "h_env", json!({})),
        "2 vars: TOOLHOST_TEST_API_KEY=k-123,UNITS=metric"
    );
}

#[test]
fn grants_in_the_config() {
    let root = tree();
    let config = "[[modules]]\nbundled = \"calc\"\n[modules.grants]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\nenv = { A = \"1\" }\n";
    std::fs::write(root.path().join("toolhost.toml"), config).unwrap();
    let loaded =
        toolhost::config::LoadedConfig::discover(Some(&root.path().join("toolhost.toml"))).unwrap();
    let modules = loaded.load_modules(crate::common::runtime()).unwrap();
    assert_eq!(
        modules[0].access().dirs[0].host,
        root.path().join("data").canonicalize().unwrap()
    );
    assert_eq!(modules[0].access().env["A"], "1");
    let bad = "[[modules]]\nbundled = \"calc\"\n[modules.grants]\ndirs = [{ host = \"missing\", guest = \"/data\" }]\n";
    std::fs::write(root.path().join("bad.toml"), bad).unwrap();
    let loaded =
        toolhost::config::LoadedConfig::discover(Some(&root.path().join("bad.toml"))).unwrap();
    let err = loaded
        .load_modules(crate::common::runtime())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot load module 'calc': grants.dirs[0]: host directory"),
        "{err}"
    );
    let typo = "[[modules]]\nbundled = \"calc\"\n[modules.grants]\ndirz = []\n";
    let err = toolhost::config::Config::from_toml(typo).unwrap_err();
    assert!(err.contains("unknown field `dirz`"), "{err}");
}

#[test]
fn grants_belong_to_one_module_only() {
    let root = tree();
    let rich = crate::common::load_guest("guest-hostile", "rich", crate::common::tight_limits())
        .unwrap()
        .with_access(
            Grants {
                env: [("TOKEN".to_string(), "t-1".to_string())].into(),
                ..dir(DirMode::Rw)
            }
            .resolve(root.path())
            .unwrap(),
        );
    let poor =
        crate::common::load_guest("guest-hostile", "poor", crate::common::tight_limits()).unwrap();
    let mut m = ToolManager::new();
    m.register(rich).unwrap();
    m.register(poor).unwrap();
    assert_eq!(
        call(&m, "rich_read_file", json!({"text": "/data/hello.txt"})),
        "hi"
    );
    assert_eq!(call(&m, "rich_env", json!({})), "1 vars: TOKEN=t-1");
    // The other module, loaded from the same component, sees none of it.
    let out = call(&m, "poor_read_file", json!({"text": "/data/hello.txt"}));
    assert!(
        out.starts_with("Error: tool 'poor_read_file' failed: "),
        "{out}"
    );
    assert_eq!(call(&m, "poor_env", json!({})), "0 vars: ");
    let out = call(
        &m,
        "poor_write_file",
        json!({"path": "/data/x.txt", "text": "x"}),
    );
    assert!(
        out.starts_with("Error: tool 'poor_write_file' failed: "),
        "{out}"
    );
    assert!(!root.path().join("data/x.txt").exists());
}
