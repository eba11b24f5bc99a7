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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
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

/// `cargo xtask` (.ci/run's wheels step, README's `cargo xtask
/// build-examples`) builds the xtask package alone, right after
/// `cargo test --workspace` has built it with the rest: it compiles nothing
/// the tests have not compiled already.
///
/// `cargo tree` shows one feature list per package and kind, which is not
/// always what is compiled (a dependency reached through a dev-dependency
/// is listed with fewer features than it is built with), so this compares
/// the compilations themselves: `--unit-graph`, which prints them without
/// building anything.
#[test]
fn cargo_xtask_reuses_the_tests_build() {
    let xtask = UnitGraph::of(&["build", "--package", "xtask"]);
    let tests = UnitGraph::of(&["test", "--workspace", "--no-run"]);
    assert!(
        xtask
            .units
            .iter()
            .any(|u| u.package().starts_with("wit-component@")),
        "cargo xtask builds wit-component"
    );
    let built: BTreeSet<u64> = tests.keys().into_iter().collect();
    let keys = xtask.keys();
    // The compilations cargo xtask makes afresh although each of their own
    // dependencies is reused: where the features part.
    let first: Vec<String> = (0..xtask.units.len())
        .filter(|&i| !built.contains(&keys[i]))
        .filter(|&i| {
            xtask.units[i]
                .dependencies
                .iter()
                .all(|d| built.contains(&keys[d.index]))
        })
        .map(|i| {
            let unit = &xtask.units[i];
            let in_tests: Vec<String> = tests
                .units
                .iter()
                .filter(|t| t.pkg_id == unit.pkg_id && t.mode == unit.mode)
                .map(|t| {
                    format!(
                        "[{}] on {}",
                        t.features.join(","),
                        tests.dependency_features(t).join(", ")
                    )
                })
                .collect();
            format!(
                "  {} ({}) with [{}] on {}; the tests build it with {}",
                unit.package(),
                unit.mode,
                unit.features.join(","),
                xtask.dependency_features(unit).join(", "),
                in_tests.join(" or ")
            )
        })
        .collect();
    assert!(
        first.is_empty(),
        "cargo xtask would compile these again, and all that is built on them:\n{}\n\
         Ask in xtask/Cargo.toml for the features the tests' build has (under \
         [build-dependencies] for what build scripts and proc macros use); \
         `cargo tree -i NAME -e features` shows who asks for which.",
        first.join("\n")
    );
}

/// What cargo would compile for a command, from `--unit-graph`.
#[derive(serde::Deserialize)]
struct UnitGraph {
    units: Vec<Unit>,
}

/// One compilation.
#[derive(serde::Deserialize)]
struct Unit {
    pkg_id: String,
    target: serde_json::Value,
    profile: serde_json::Map<String, serde_json::Value>,
    platform: serde_json::Value,
    mode: String,
    features: Vec<String>,
    dependencies: Vec<Dependency>,
}

#[derive(serde::Deserialize)]
struct Dependency {
    index: usize,
}

impl Unit {
    /// `name@version`. An id ends in `#name@version`, or for a package in a
    /// folder of its name, in `/name#version`.
    fn package(&self) -> String {
        let (source, tail) = self.pkg_id.rsplit_once('#').unwrap_or(("", &self.pkg_id));
        if tail.contains('@') {
            tail.to_string()
        } else {
            let name = source.rsplit('/').next().unwrap_or(source);
            format!("{name}@{tail}")
        }
    }
}

impl UnitGraph {
    /// The graph of `cargo ARGS --unit-graph` at the workspace's root. The
    /// option is unstable; RUSTC_BOOTSTRAP lets this stable cargo print it.
    fn of(args: &[&str]) -> Self {
        let repo = Repo::from_manifest_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(repo.root())
            .env("RUSTC_BOOTSTRAP", "1")
            .args(args)
            .args([
                "--locked",
                "--offline",
                "--unit-graph",
                "-Z",
                "unstable-options",
            ])
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "`cargo {} --unit-graph` failed (it reads only what cargo has downloaded: \
             `cargo fetch` downloads the rest):\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("cargo's unit graph is JSON")
    }

    /// For each unit, what makes cargo compile it apart from another: its
    /// package, target, mode, features, platform and profile settings (not
    /// the profile's name, which cargo leaves out too), and the same of each
    /// unit it depends on.
    fn keys(&self) -> Vec<u64> {
        let mut keys = HashMap::new();
        (0..self.units.len())
            .map(|index| self.key(index, &mut keys))
            .collect()
    }

    fn key(&self, index: usize, keys: &mut HashMap<usize, u64>) -> u64 {
        if let Some(key) = keys.get(&index) {
            return *key;
        }
        let unit = &self.units[index];
        let mut dependencies: Vec<u64> = unit
            .dependencies
            .iter()
            .map(|d| self.key(d.index, keys))
            .collect();
        dependencies.sort_unstable();
        let mut profile = unit.profile.clone();
        profile.remove("name");
        let mut hasher = DefaultHasher::new();
        (
            &unit.pkg_id,
            unit.target.to_string(),
            serde_json::Value::Object(profile).to_string(),
            unit.platform.to_string(),
            &unit.mode,
            &unit.features,
            dependencies,
        )
            .hash(&mut hasher);
        let key = hasher.finish();
        keys.insert(index, key);
        key
    }

    /// Each dependency of `unit` with its features.
    fn dependency_features(&self, unit: &Unit) -> Vec<String> {
        unit.dependencies
            .iter()
            .map(|d| {
                let dep = &self.units[d.index];
                format!("{} [{}]", dep.package(), dep.features.join(","))
            })
            .collect()
    }
}
