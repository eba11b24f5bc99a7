//! Waiting, untimed, for a module's instance made ahead of its next call.

use std::time::{Duration, Instant};

use toolhost::{Runtime, WasmModule};

/// Tells `runtime`'s background to go on and waits until `module` has an
/// instance made ahead (at most 10 s, then the bench fails).
pub fn wait_until_ready(runtime: &Runtime, module: &WasmModule) {
    runtime.on_idle();
    let until = Instant::now() + Duration::from_secs(10);
    while module.ready_instances() == 0 {
        assert!(Instant::now() < until, "no instance was made ahead");
        std::thread::yield_now();
    }
}
