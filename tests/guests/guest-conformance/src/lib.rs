//! Test guest: the two tools the MCP conformance suite calls on a server
//! (served as module `test`, so `test_tool_with_logging` and
//! `test_tool_with_progress`), written as any tool would be: one writes to
//! stderr while it runs, the other simply takes its time.

use std::time::Duration;

use toolhost_guest::{NoArgs, Toolbox};

/// How long `tool_with_progress` runs: long enough for the host's progress
/// notifications at its start, every second, and its end.
const PROGRESS_RUN: Duration = Duration::from_millis(2500);

/// Writes three lines to stderr, 50 ms apart.
fn tool_with_logging(_: NoArgs) -> Result<String, String> {
    for step in 1..=3 {
        eprintln!("tool_with_logging: step {step} of 3");
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok("logged 3 lines".into())
}

/// Runs for 2.5 seconds.
fn tool_with_progress(_: NoArgs) -> Result<String, String> {
    std::thread::sleep(PROGRESS_RUN);
    Ok(format!("done after {} ms", PROGRESS_RUN.as_millis()))
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool("tool_with_logging", tool_with_logging)
        .describe("Writes three lines to stderr, 50 ms apart.")
        .tool("tool_with_progress", tool_with_progress)
        .describe("Runs for 2.5 seconds.")
}

toolhost_guest::export_toolbox!(toolbox);
