//! The builds that follow one another share what they compile. Cargo
//! compiles a dependency with the union of the features that the packages
//! of one command ask for, so a command that builds fewer packages than the
//! one before it can ask for other features and compile the dependency,
//! and everything built on it, again. These compare what the commands
//! would compile, without building anything: cargo's unit graph
//! (`--unit-graph`), one unit per compilation.
//!
//! - README's `cargo run`, then `cargo test --workspace`, which reuses it
//!   (`crates/workspace-hack` asks for the tests' features in `cargo run`);
//! - `cargo xtask` (.ci/run's wheels step, README's `cargo xtask
//!   build-examples`) after the tests (xtask's manifest asks for them);
//! - the two wheels, the command's after the package's (the workspace hack
//!   asks, in the package's build, for the command's features).
//!
//! `cargo tree` is not enough for this: it shows one feature list per
//! package and kind, and a dependency reached through a dev-dependency is
//! listed with fewer features than it is compiled with.

use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::process::Command;

use xtask::{Repo, WHEELS, manifest_entry};

#[test]
fn the_tests_reuse_everything_readmes_cargo_run_builds() {
    // README: `cargo run -- ...` at the root (its default members), then
    // `cargo test --workspace`.
    let run = UnitGraph::of(&["build"]);
    let tests = UnitGraph::of(&["test", "--workspace", "--no-run"]);
    assert!(run.builds("wasmtime@"), "cargo run builds wasmtime");
    let again = compiled_again(&run, &tests, |_| true);
    assert!(
        again.is_empty(),
        "the tests would compile these again, and all that is built on them:\n{}\n\
         Ask for the tests' features in crates/workspace-hack/Cargo.toml: under \
         [dependencies] for what the program links, under [build-dependencies] for \
         what build scripts and proc macros use (`cargo tree -i NAME -e features` \
         shows who asks for which).",
        again.join("\n")
    );
}

/// `cargo xtask` builds the xtask package alone, right after
/// `cargo test --workspace` has built it with the rest: it compiles nothing
/// the tests have not compiled already.
#[test]
fn cargo_xtask_reuses_the_tests_build() {
    let xtask = UnitGraph::of(&["build", "--package", "xtask"]);
    let tests = UnitGraph::of(&["test", "--workspace", "--no-run"]);
    assert!(
        xtask.builds("wit-component@"),
        "cargo xtask builds wit-component"
    );
    let again = compiled_again(&xtask, &tests, |_| true);
    assert!(
        again.is_empty(),
        "cargo xtask would compile these again, and all that is built on them:\n{}\n\
         Ask in xtask/Cargo.toml for the features the tests' build has (under \
         [build-dependencies] for what build scripts and proc macros use); \
         `cargo tree -i NAME -e features` shows who asks for which.",
        again.join("\n")
    );
}

/// The two wheels (`cargo xtask wheels`) are built one after the other, as
/// maturin builds them (release, for an explicit target, with the features
/// their pyproject.toml gives): the package's, then the command's, which
/// compiles again nothing the two share.
#[test]
fn the_wheels_share_one_build() {
    let target = host_triple();
    let [python, command] = WHEELS.map(|wheel| {
        let manifest = format!("{}/Cargo.toml", wheel.crate_dir);
        let mut args = vec!["build", "--release", "--target", &target];
        args.extend(["--manifest-path", &manifest]);
        let features = maturin_features(wheel.crate_dir);
        if !features.is_empty() {
            args.extend(["--features", &features]);
        }
        UnitGraph::of(&args)
    });
    assert!(
        python.builds("wasmtime@") && command.builds("wasmtime@"),
        "both wheels build wasmtime"
    );
    let shared: BTreeSet<String> = python.units.iter().map(Unit::package).collect();
    let again = compiled_again(&command, &python, |unit| shared.contains(&unit.package()));
    assert!(
        again.is_empty(),
        "the command's wheel would compile these again, and all that is built on them:\n{}\n\
         Ask for the command's features in crates/workspace-hack/Cargo.toml, which both \
         crates depend on.",
        again.join("\n")
    );
}

/// The units of `built` that `should_reuse` says are in `before` but are
/// not, the first of each chain only (those none of whose dependencies is
/// one): each with its features and its dependencies' in both builds.
fn compiled_again(
    built: &UnitGraph,
    before: &UnitGraph,
    should_reuse: impl Fn(&Unit) -> bool,
) -> Vec<String> {
    let reused: BTreeSet<u64> = before.keys().into_iter().collect();
    let keys = built.keys();
    let parts = |i: usize| should_reuse(&built.units[i]) && !reused.contains(&keys[i]);
    (0..built.units.len())
        .filter(|&i| parts(i) && !built.units[i].dependencies.iter().any(|d| parts(d.index)))
        .map(|i| {
            let unit = &built.units[i];
            let earlier: Vec<String> = before
                .units
                .iter()
                .filter(|u| u.pkg_id == unit.pkg_id && u.mode == unit.mode)
                .map(|u| before.describe(u))
                .collect();
            format!(
                "  {} ({}) with {}; the build before has it with {}",
                unit.package(),
                unit.mode,
                built.describe(unit),
                if earlier.is_empty() {
                    "nothing".to_string()
                } else {
                    earlier.join(" or ")
                }
            )
        })
        .collect()
}

/// The host's target triple, which maturin builds for with `--zig`.
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

/// The `features` of `[tool.maturin]` in `crate_dir`'s pyproject.toml,
/// comma-separated.
fn maturin_features(crate_dir: &str) -> String {
    let path = Repo::from_manifest_dir()
        .root()
        .join(crate_dir)
        .join("pyproject.toml");
    let text = std::fs::read_to_string(&path).expect("the pyproject is readable");
    manifest_entry(&text, "tool.maturin", "features")
        .map(|list| {
            list.trim_matches(['[', ']'])
                .split(',')
                .map(|f| f.trim().trim_matches('"'))
                .filter(|f| !f.is_empty())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
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
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "cannot read the unit graph of `cargo {}` (--unit-graph is unstable; \
                 did its format change?): {e}",
                args.join(" ")
            )
        })
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

    /// Whether a unit's package is `prefix...` (`name@`).
    fn builds(&self, prefix: &str) -> bool {
        self.units.iter().any(|u| u.package().starts_with(prefix))
    }

    /// `unit`'s features, and each dependency's.
    fn describe(&self, unit: &Unit) -> String {
        let dependencies: Vec<String> = unit
            .dependencies
            .iter()
            .map(|d| {
                let dep = &self.units[d.index];
                format!("{} [{}]", dep.package(), dep.features.join(","))
            })
            .collect();
        let features = format!("[{}]", unit.features.join(","));
        if dependencies.is_empty() {
            features
        } else {
            format!("{features} on {}", dependencies.join(", "))
        }
    }
}
