//! The runtime that `load_module` loads into: one per process, with the
//! user's compile cache (so a module loads from its compiled artifact the
//! second time), started on first use.

use std::sync::OnceLock;

use toolhost::Runtime;

static DEFAULT: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The process's runtime, or why it could not start.
pub fn default_runtime() -> Result<&'static Runtime, String> {
    DEFAULT
        .get_or_init(|| {
            Runtime::with_compile_cache()
                .or_else(|_| Runtime::new())
                .map_err(|e| format!("cannot start the WebAssembly runtime: {e:#}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}
