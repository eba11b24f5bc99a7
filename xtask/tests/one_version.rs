//! One version for everything a user installs: the workspace's
//! `[workspace.package] version`, which the library, the command, the MCP
//! server and the Python package's crates take (`version.workspace =
//! true`) and both wheels' `pyproject.toml` read through maturin
//! (`dynamic = ["version"]`). `cargo xtask wheels --test` checks the
//! installed wheels say it too.

use xtask::{Repo, WHEELS, workspace_version};

fn read(path: &str) -> String {
    let repo = Repo::from_manifest_dir();
    std::fs::read_to_string(repo.root().join(path)).unwrap()
}

#[test]
fn the_crates_a_user_installs_take_the_workspace_version() {
    let version = workspace_version(&Repo::from_manifest_dir()).unwrap();
    assert!(
        version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{version:?}"
    );
    for manifest in [
        "Cargo.toml",
        "crates/cli/Cargo.toml",
        "crates/mcp/Cargo.toml",
        "crates/python/Cargo.toml",
    ] {
        let text = read(manifest);
        let package = text
            .split_once("\n[package]\n")
            .or_else(|| text.split_once("[package]\n"))
            .map(|(_, rest)| rest.split("\n[").next().unwrap_or(rest))
            .unwrap_or_else(|| panic!("{manifest} has a [package]"));
        assert!(
            package
                .lines()
                .any(|l| l.trim() == "version.workspace = true"),
            "{manifest}: its [package] should say `version.workspace = true`"
        );
    }
}

#[test]
fn the_wheels_read_their_version_from_cargo() {
    for wheel in WHEELS {
        let pyproject = read(&format!("{}/pyproject.toml", wheel.crate_dir));
        assert!(
            pyproject.contains("dynamic = [\"version\"]"),
            "{}/pyproject.toml: the version comes from Cargo.toml",
            wheel.crate_dir
        );
        assert!(
            !pyproject.lines().any(|l| l.starts_with("version =")),
            "{}/pyproject.toml: no version of its own",
            wheel.crate_dir
        );
        let name = wheel.distribution.replace('_', "-");
        assert!(
            pyproject.contains(&format!("name = \"{name}\"")),
            "{}/pyproject.toml names {name}",
            wheel.crate_dir
        );
    }
}
