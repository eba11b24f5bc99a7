//! The loader: arbitrary bytes as a component (see `checks::loader`).
#![no_main]

#[allow(dead_code)] // each target uses one of the checks
#[path = "../checks.rs"]
mod checks;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolhost::Runtime;

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime starts"))
}

fuzz_target!(
    init: {
        runtime();
    },
    |data: &[u8]| checks::loader(runtime(), data)
);
