//! The command's exit codes: 0 when every call answered, 1 when a call
//! failed (as the library's typed result says, never as the answer's text
//! reads), 2 for a usage, config or load error.

use std::process::ExitCode;

/// Exit code of a call that failed (its answer is an `Error: ...` text).
pub const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code of a usage, config or load error.
pub const EXIT_USAGE: u8 = 2;

/// 1 if a call `failed`, else 0.
pub fn exit_for(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(EXIT_TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}
