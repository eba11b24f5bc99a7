//! With the `bundled` feature (on by default): builds the example tool
//! modules (`example-tools/`) into WebAssembly components, so that the
//! `toolhost` library can bundle them and the command works right after
//! `git clone`. Writes `$OUT_DIR/bundled.rs`, the list of bundled modules
//! (empty without the feature), which `src/module/bundled.rs` includes.
//!
//! The components are built by a nested `cargo build --profile guest
//! --target wasm32-wasip2` into `<target>/guests`, a target directory of
//! their own, so this never waits on the outer build's lock.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/guest_cargo.rs"]
mod guest_cargo;

use guest_cargo::{GUEST_TARGET, guest_build, guest_out_dir, guest_target_dir, guest_wasm};

/// The packages under `example-tools/` that are bundled: the one list.
const BUNDLED: [&str; 3] = ["calc", "text", "json"];
/// A directory with the example tools already built (`calc.wasm`, ...).
const PREBUILT_ENV: &str = "TOOLHOST_PREBUILT_GUESTS";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if env::var_os("CARGO_FEATURE_BUNDLED").is_none() {
        write_list(&out, None);
        return;
    }
    println!("cargo:rerun-if-env-changed={PREBUILT_ENV}");
    let dir = match env::var_os(PREBUILT_ENV) {
        Some(dir) => use_prebuilt(&PathBuf::from(dir)),
        None => build_guests(),
    };
    println!("cargo:rustc-env=TOOLHOST_GUEST_DIR={}", dir.display());
    write_list(&out, Some(&dir));
}

/// Writes `bundled.rs`: `BUNDLED_MODULES`, each module's bytes included
/// from `dir` (no modules without a directory).
fn write_list(out: &Path, dir: Option<&Path>) {
    let mut list = String::from(
        "/// The bundled example modules: `calc`, `text` and `json` (none without\n\
         /// the `bundled` feature).\n\
         pub const BUNDLED_MODULES: &[BundledModule] = &[\n",
    );
    if let Some(dir) = dir {
        for package in BUNDLED {
            let wasm = dir.join(format!("{package}.wasm"));
            writeln!(
                list,
                "    BundledModule {{ name: {package:?}, bytes: include_bytes!({:?}) }},",
                wasm.display().to_string()
            )
            .expect("writing to a String");
        }
    }
    list.push_str("];\n");
    std::fs::write(out.join("bundled.rs"), list).expect("OUT_DIR is writable");
}

/// Builds the bundled example tools; returns the directory they are in.
fn build_guests() -> PathBuf {
    let root =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let examples = BUNDLED.map(|package| format!("example-tools/{package}"));
    let inputs = [
        "guest-sdk/rust",
        "wit",
        "Cargo.lock",
        "build/guest_cargo.rs",
    ];
    for path in examples.iter().map(String::as_str).chain(inputs) {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");

    let target_dir = guest_target_dir(&root, env::var_os("CARGO_TARGET_DIR").as_deref());
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    ensure_guest_target();

    match guest_build(&cargo, &root, &target_dir, BUNDLED).status() {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("building the example tools failed ({s})")),
        Err(e) => fail(&format!("cannot run cargo to build the example tools: {e}")),
    }

    for package in BUNDLED {
        let wasm = guest_wasm(&target_dir, package);
        if !wasm.is_file() {
            fail(&format!("the build did not produce {}", wasm.display()));
        }
    }
    guest_out_dir(&target_dir)
}

/// Uses example tools built beforehand in `dir` instead of building them:
/// for builds whose toolchain has no `wasm32-wasip2` standard library (the
/// fuzz build on nightly) or that must not run a nested cargo.
fn use_prebuilt(dir: &Path) -> PathBuf {
    for package in BUNDLED {
        let wasm = dir.join(format!("{package}.wasm"));
        if !wasm.is_file() {
            fail(&format!(
                "{PREBUILT_ENV} is set, but {} does not exist",
                wasm.display()
            ));
        }
        println!("cargo:rerun-if-changed={}", wasm.display());
    }
    dir.to_path_buf()
}

/// Installs the guest target with rustup when its standard library is missing,
/// so that a fresh clone builds with nothing but rustup.
fn ensure_guest_target() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", GUEST_TARGET])
        .output();
    let installed = match libdir {
        Ok(out) if out.status.success() => {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                })
                .unwrap_or(false)
        }
        _ => false,
    };
    if installed {
        return;
    }
    println!(
        "cargo:warning=installing the {GUEST_TARGET} target with rustup to build the example tools"
    );
    let status = Command::new("rustup")
        .args(["target", "add", GUEST_TARGET])
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        fail(&format!(
            "the `{GUEST_TARGET}` target is not installed and rustup could not add it"
        ));
    }
}

fn fail(message: &str) -> ! {
    eprintln!(
        "error: {message}.\n\
         The example tools are built for the `{GUEST_TARGET}` target; install it with\n\
         `rustup target add {GUEST_TARGET}` (rust-toolchain.toml asks rustup for it)."
    );
    std::process::exit(1);
}
