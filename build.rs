//! Builds the example tool modules (`example-tools/`) into WebAssembly
//! components, so that the `toolhost` library can bundle them and the CLI
//! works right after `git clone`.
//!
//! The components are built by a nested `cargo build --release --target
//! wasm32-wasip2` into `<target>/guests`, a target directory of their own,
//! so this never waits on the outer build's lock.

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The packages under `example-tools/` that are bundled.
const BUNDLED: [&str; 3] = ["calc", "text", "json"];
const GUEST_TARGET: &str = "wasm32-wasip2";
const GUEST_PROFILE: &str = "guest";
/// A directory with the example tools already built (`calc.wasm`, ...).
const PREBUILT_ENV: &str = "TOOLHOST_PREBUILT_GUESTS";

fn main() {
    let root =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    for path in [
        "example-tools/calc",
        "example-tools/text",
        "example-tools/json",
        "guest-sdk/rust",
        "wit",
        "Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    println!("cargo:rerun-if-env-changed={PREBUILT_ENV}");
    if let Some(dir) = env::var_os(PREBUILT_ENV) {
        use_prebuilt(&PathBuf::from(dir));
        return;
    }

    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root.join(p) })
        .unwrap_or_else(|| root.join("target"))
        .join("guests");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    ensure_guest_target();

    let mut command = Command::new(cargo);
    command
        .current_dir(&root)
        .args([
            "build",
            "--profile",
            GUEST_PROFILE,
            "--target",
            GUEST_TARGET,
            "--target-dir",
        ])
        .arg(&target_dir);
    for package in BUNDLED {
        command.args(["-p", package]);
    }
    // The outer build's compiler settings are for the host, not the guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(var);
    }

    let status = command.status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("building the example tools failed ({s})")),
        Err(e) => fail(&format!("cannot run cargo to build the example tools: {e}")),
    }

    let out = target_dir.join(GUEST_TARGET).join(GUEST_PROFILE);
    for package in BUNDLED {
        let wasm = out.join(format!("{package}.wasm"));
        if !wasm.is_file() {
            fail(&format!("the build did not produce {}", wasm.display()));
        }
    }
    println!("cargo:rustc-env=TOOLHOST_GUEST_DIR={}", out.display());
}

/// Uses example tools built beforehand in `dir` instead of building them:
/// for builds whose toolchain has no `wasm32-wasip2` standard library (the
/// fuzz build on nightly) or that must not run a nested cargo.
fn use_prebuilt(dir: &std::path::Path) {
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
    println!("cargo:rustc-env=TOOLHOST_GUEST_DIR={}", dir.display());
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
