//! Builds toolhost's example tools written in Python, JavaScript and C,
//! and the Rust ones it does not bundle ([`RUST_EXAMPLES`], built with cargo).
//!
//! Every toolchain is pinned by a lockfile in the repository
//! (`guest-sdk/python/requirements.txt`, `guest-sdk/js/package-lock.json`,
//! `guest-sdk/c/requirements.txt`) and installed into `.toolchains/` (ignored
//! by git), never globally. What it needs from the machine: Python 3.9+ with
//! `venv` (Python and C) and Node.js 18+ with npm (JavaScript).
//!
//! The command line is `cargo xtask`; the integration tests call
//! [`build_example`] directly, and build their own test tools with
//! [`build_js_component`], [`build_qjs_component`] and
//! [`build_python_component`].
//!
//! ```no_run
//! use xtask::{Language, Repo, build_example};
//!
//! let repo = Repo::from_manifest_dir();
//! let stats = build_example(&repo, Language::Python)?;
//! println!("built {}", stats.display());
//! # Ok::<(), anyhow::Error>(())
//! ```

mod componentize;
mod example;
mod guest;
#[path = "../../build/guest_cargo.rs"]
mod guest_cargo;
mod install;
mod language;
pub mod layers;
mod mcp_client;
mod process;
mod python_package;
mod repo;
mod toolchain;
mod up_to_date;
mod wheels;

pub use componentize::componentize;
pub use example::{
    RUST_EXAMPLES, build_example, build_named_example, build_rust_example, regenerate_c_bindings,
    test_sdk,
};
pub use guest::{
    JsFeature, build_js_component, build_js_world_component, build_python_component,
    build_qjs_component,
};
pub use language::{Example, Language};
pub use mcp_client::{McpClient, install_mcp_client};
pub use process::venv_bin;
pub use python_package::install_python_test_env;
pub use repo::Repo;
pub use toolchain::install_toolchain;
pub use up_to_date::forget_inputs;
pub use wheels::{
    Built, Checked, MANYLINUX, WHEELS, WheelSpec, build_wheels, manifest_entry, test_wheels,
    workspace_version,
};
