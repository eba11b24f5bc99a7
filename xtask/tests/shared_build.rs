//! README's two commands share one build: everything `cargo run` compiles
//! (wasmtime above all) is compiled with the same features by
//! `cargo test --workspace`, so the tests reuse it instead of compiling it
//! again.
//!
//! Cargo builds a dependency with the union of the features that the
//! packages of one command ask for, and the tests build more packages than
//! `cargo run` does. `cargo tree` shows each package with the features a
//! command would build it with, without building anything; this compares
//! the two commands' lists. `crates/workspace-hack` is where a difference
//! is made up for.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use xtask::Repo;

/// Every package `cargo tree` lists for `args` (run at the workspace's
/// root), with the features it is built with: `name version [features]`.
fn built_with(args: &[&str]) -> BTreeSet<String> {
    let repo = Repo::from_manifest_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(repo.root())
        .args([
            "tree",
            "--locked",
            "--offline",
            "--no-dedupe",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p} [{f}]"])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "`cargo tree {}` failed (it reads only what cargo has downloaded: \
         `cargo fetch` downloads the rest):\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        // Workspace members are shown with their folder; only names matter.
        .map(|l| match (l.find(" ("), l.rfind(") [")) {
            (Some(start), Some(end)) if start < end => format!("{}{}", &l[..start], &l[end + 1..]),
            _ => l.to_string(),
        })
        .collect()
}

/// The package's name and version in a `built_with` line.
fn package(line: &str) -> &str {
    line.split(" [").next().unwrap_or(line)
}

#[test]
fn the_tests_reuse_everything_readmes_cargo_run_builds() {
    // README: `cargo run -- ...` at the root (its default members, no dev
    // dependencies), then `cargo test --workspace` (every member, with them).
    let run = built_with(&["--edges", "normal,build"]);
    let test = built_with(&["--workspace", "--edges", "normal,build,dev"]);
    assert!(
        run.iter().any(|l| l.starts_with("wasmtime v")),
        "cargo run builds wasmtime: {run:?}"
    );

    let mut in_tests: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in &test {
        in_tests.entry(package(line)).or_default().push(line);
    }
    let missing: Vec<String> = run
        .difference(&test)
        .map(|line| {
            let tests = in_tests.get(package(line)).cloned().unwrap_or_default();
            format!("  cargo run builds {line}; the tests build {tests:?}")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "the tests would compile these again, and all that is built on them:\n{}\n\
         Ask for the tests' features in crates/workspace-hack/Cargo.toml: under \
         [dependencies] for what the program links, under [build-dependencies] for \
         what build scripts and proc macros use (`cargo tree -i NAME -e features` \
         shows who asks for which).",
        missing.join("\n")
    );
}

/// The two wheels (`cargo xtask wheels`) are built one after the other,
/// `crates/python` alone and `crates/cli` alone: every dependency they
/// share is built with the same features, so that the second reuses the
/// first's build (wasmtime above all).
#[test]
fn the_wheels_share_one_build() {
    let python = built_with(&["--package", "toolhost-python", "--edges", "normal,build"]);
    let command = built_with(&["--package", "toolhost-cli", "--edges", "normal,build"]);
    assert!(
        python.iter().any(|l| l.starts_with("wasmtime v"))
            && command.iter().any(|l| l.starts_with("wasmtime v")),
        "both wheels build wasmtime"
    );
    let by_package = |lines: &BTreeSet<String>| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for line in lines {
            map.entry(package(line).to_string())
                .or_default()
                .insert(line.clone());
        }
        map
    };
    let (python, command) = (by_package(&python), by_package(&command));
    let differ: Vec<String> = python
        .iter()
        .filter_map(|(name, lines)| {
            let other = command.get(name)?;
            (lines != other)
                .then(|| format!("  {name}: the package's {lines:?}, the command's {other:?}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "the wheels would compile these twice, and all that is built on them:\n{}\n\
         Ask for the missing features in crates/workspace-hack/Cargo.toml, which both \
         crates depend on.",
        differ.join("\n")
    );
}
