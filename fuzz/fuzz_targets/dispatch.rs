//! The dispatch path: arbitrary bytes as a tool call, an assistant message,
//! or the arguments of a bundled tool, through a manager with the example
//! tools loaded (see `checks::dispatch`).
#![no_main]

#[allow(dead_code)] // each target uses one of the checks
#[path = "../checks.rs"]
mod checks;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolhost::config::LoadedConfig;
use toolhost::{Runtime, ToolManager};

fn manager() -> &'static ToolManager {
    static MANAGER: OnceLock<ToolManager> = OnceLock::new();
    MANAGER.get_or_init(|| {
        let runtime = Runtime::new().expect("runtime starts");
        LoadedConfig::default()
            .build_manager(&runtime)
            .expect("the bundled modules load")
    })
}

fuzz_target!(
    // Compiling the bundled tools takes a while under the sanitizer: do it
    // before fuzzing starts, so it does not count against a unit's timeout.
    init: {
        manager();
    },
    |data: &[u8]| checks::dispatch(manager(), data)
);
