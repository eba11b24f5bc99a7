//! The one place a [`Fault`] becomes text: for a call (what the model
//! reads) and for `tool-info` at load (why a module did not load).

use crate::policy::{Limits, limit_key};
use crate::sandbox::Fault;
use crate::tool::{SessionReset, ToolError, ToolErrorKind};

use super::load_error::{LoadError, LoadErrorKind};

/// The note on the error of a session's call after which its instance was
/// dropped (it trapped or hit a limit).
pub(super) const SESSION_DROPPED: &str =
    "this session's state was dropped with its instance; the next call starts afresh";

/// Whose fault it is.
#[derive(Debug, Clone, Copy)]
enum Subject<'a> {
    /// A call of the tool with this exposed name.
    Call(&'a str),
    /// The module's `tool-info`, run once at load.
    ToolInfo,
}

/// The error a call that ended in `fault` answers with.
pub(super) fn call_error(tool: &str, fault: Fault, limits: &Limits) -> ToolError {
    ToolError::new(call_kind(&fault), text(&fault, Subject::Call(tool), limits))
}

fn call_kind(fault: &Fault) -> ToolErrorKind {
    match fault {
        Fault::OutOfFuel => ToolErrorKind::OutOfFuel,
        Fault::Timeout => ToolErrorKind::Timeout,
        Fault::MemoryLimit => ToolErrorKind::MemoryLimit,
        Fault::OutputTooLarge(_) => ToolErrorKind::OutputTooLarge,
        Fault::ResourceLimit(_) => ToolErrorKind::ResourceLimit,
        Fault::Panicked(_) => ToolErrorKind::Panicked,
        Fault::Trapped(_) => ToolErrorKind::Trapped,
        Fault::Exited(_) => ToolErrorKind::Exited,
        Fault::HostCopy(..) => ToolErrorKind::ResourceLimit,
        Fault::Host(_) => ToolErrorKind::Host,
        Fault::SessionReset(_) => ToolErrorKind::SessionReset,
        Fault::AfterRefusedMemory(cause) => call_kind(cause),
    }
}

/// Why module `module` did not load when its `tool-info` (run under
/// `limits`, whose fuel and time are the `tool_info_*` ones) ended in `fault`.
pub(super) fn tool_info_error(module: &str, fault: Fault, limits: &Limits) -> LoadError {
    let kind = match fault {
        Fault::OutputTooLarge(_) => LoadErrorKind::InvalidToolInfo,
        _ => LoadErrorKind::ToolInfoFailed,
    };
    LoadError::new(module, kind, text(&fault, Subject::ToolInfo, limits))
}

/// The text of `fault`. A call's text ends with a period where it ends
/// with a number; `tool-info`'s names the config key of the limit.
fn text(fault: &Fault, subject: Subject<'_>, limits: &Limits) -> String {
    let (who, call) = match subject {
        Subject::Call(tool) => (format!("tool '{tool}'"), true),
        Subject::ToolInfo => ("tool-info".to_string(), false),
    };
    // Where `tool-info` ran into a limit, the text ends with its key.
    let tool_info_key = |before: &str, key: &str, after: &str| {
        if call {
            String::new()
        } else {
            format!("{before}limits.{key}{after}")
        }
    };
    let limit = if call { "its limit" } else { "the limit" };
    let end = if call { "." } else { "" };
    match fault {
        Fault::OutOfFuel => format!(
            "{who} ran out of {} (limit {}{}){end}",
            limit_key::fuel,
            limits.fuel,
            tool_info_key(", ", limit_key::tool_info_fuel, "")
        ),
        Fault::Timeout => format!(
            "{who} exceeded its time limit of {} ms{}{end}",
            limits.timeout_ms,
            tool_info_key(" (", limit_key::tool_info_timeout_ms, ")")
        ),
        Fault::MemoryLimit => format!(
            "{who} exceeded its memory limit of {} MiB{end}",
            limits.memory_mib
        ),
        Fault::OutputTooLarge(bytes) => {
            let (of, max) = if call {
                ("its output limit", limits.max_output_bytes)
            } else {
                ("the limit", limits.max_tool_info_bytes)
            };
            let returned = match bytes {
                Some(bytes) => format!("returned {bytes} bytes"),
                None => "answered".to_string(),
            };
            format!(
                "{who} {returned}, more than {of} of {max} bytes{}{end}",
                tool_info_key(" (", limit_key::max_tool_info_bytes, ")")
            )
        }
        Fault::ResourceLimit(name) => format!(
            "{who} exceeded {limit} {name} = {}{end}",
            limits.get(name).unwrap_or_default()
        ),
        Fault::Panicked(message) => format!("{who} panicked: {message}"),
        Fault::Trapped(message) => format!("{who} trapped: {message}"),
        Fault::Exited(status) => {
            format!("{who} exited with status {status} before returning a result{end}")
        }
        Fault::HostCopy(bytes, transcodes) => {
            let why = if *transcodes {
                "half its memory limit, as its strings are UTF-16 or latin1 and grow when made UTF-8"
            } else {
                "its memory limit"
            };
            format!("{who} passed the host more than {bytes} bytes at once ({why}){end}")
        }
        Fault::Host(message) if call => format!("{who} could not be run: {message}"),
        Fault::Host(message) => message.clone(),
        Fault::AfterRefusedMemory(cause) => format!(
            "{} (after a memory growth past its limit of {} MiB was refused)",
            text(cause, subject, limits),
            limits.memory_mib
        ),
        Fault::SessionReset(reason) => format!(
            "{who} was not run: this session's state was reset {}; its variables and files are gone. Call again to start the session afresh.",
            reset_reason(*reason)
        ),
    }
}

/// Why a session's state was reset, as the end of a sentence.
fn reset_reason(reason: SessionReset) -> String {
    match reason {
        SessionReset::Evicted { max } => format!(
            "to make room for newer sessions (at most {max} session instances are kept, [sessions] max)"
        ),
        SessionReset::Idle { idle_ms } => {
            format!("after {idle_ms} ms without a call ([sessions] idle_ms)")
        }
        SessionReset::MaxCalls { max_calls } => {
            format!("after {max_calls} calls, when its instance was renewed (max_calls)")
        }
    }
}

/// docs/sandbox.md's error tables, as the tests read them.
#[cfg(test)]
#[path = "../../tests/it/error_table.rs"]
mod error_table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_and_tool_info_texts() {
        let limits = Limits::default();
        let call = |f: Fault| call_error("m_t", f, &limits).to_string();
        assert_eq!(
            call(Fault::OutOfFuel),
            "Error: tool 'm_t' ran out of fuel (limit 1000000000)."
        );
        assert_eq!(
            call(Fault::Timeout),
            "Error: tool 'm_t' exceeded its time limit of 10000 ms."
        );
        assert_eq!(
            call(Fault::OutputTooLarge(Some(5))),
            "Error: tool 'm_t' returned 5 bytes, more than its output limit of 1048576 bytes."
        );
        assert_eq!(
            call(Fault::ResourceLimit("max_tables")),
            "Error: tool 'm_t' exceeded its limit max_tables = 100."
        );
        assert_eq!(
            call(Fault::Host("x".into())),
            "Error: tool 'm_t' could not be run: x"
        );
        let info = |f: Fault| tool_info_error("m", f, &limits).reason;
        assert_eq!(
            info(Fault::OutOfFuel),
            "tool-info ran out of fuel (limit 1000000000, limits.tool_info_fuel)"
        );
        assert_eq!(
            info(Fault::Timeout),
            "tool-info exceeded its time limit of 10000 ms (limits.tool_info_timeout_ms)"
        );
        assert_eq!(
            info(Fault::OutputTooLarge(Some(5))),
            "tool-info returned 5 bytes, more than the limit of 1048576 bytes (limits.max_tool_info_bytes)"
        );
        assert_eq!(
            info(Fault::ResourceLimit("max_tables")),
            "tool-info exceeded the limit max_tables = 100"
        );
        assert_eq!(
            info(Fault::MemoryLimit),
            "tool-info exceeded its memory limit of 64 MiB"
        );
        assert_eq!(info(Fault::Host("x".into())), "x");
        assert_eq!(
            call(Fault::SessionReset(SessionReset::Evicted { max: 7 })),
            "Error: tool 'm_t' was not run: this session's state was reset to make room for newer \
             sessions (at most 7 session instances are kept, [sessions] max); its variables and \
             files are gone. Call again to start the session afresh."
        );
        assert_eq!(
            call(Fault::Exited(3)),
            "Error: tool 'm_t' exited with status 3 before returning a result."
        );
        assert_eq!(
            call(Fault::AfterRefusedMemory(Box::new(Fault::Trapped(
                "call stack exhausted".into()
            )))),
            "Error: tool 'm_t' trapped: call stack exhausted (after a memory growth past its limit of 64 MiB was refused)"
        );
    }

    /// The sandbox page, whose error tables this file's texts must match.
    const PAGE: &str = include_str!("../../docs/sandbox.md");

    /// The `Error:` texts of the page's row for `cause`.
    fn page_texts(cause: &str) -> Vec<&'static str> {
        error_table::error_texts(PAGE, cause)
    }

    /// Every `Error:` text of docs/sandbox.md's tables that a fault (or a
    /// call's own error) makes is what this file makes of it, for tool
    /// `calc_evaluate` under the default limits; the rows made by dispatch
    /// are checked in tests/it/docs.rs.
    #[test]
    fn the_sandbox_page_says_what_the_model_reads() {
        let limits = Limits::default();
        let call = |f: Fault| call_error("calc_evaluate", f, &limits).to_string();
        let rows: [(&str, String); 12] = [
            ("`fuel`", call(Fault::OutOfFuel)),
            ("`timeout_ms`", call(Fault::Timeout)),
            ("`memory_mib`", call(Fault::MemoryLimit)),
            (
                "`max_stack_kib`",
                call(Fault::Trapped("call stack exhausted".into())),
            ),
            (
                "`max_args_bytes`",
                ToolError::arguments_too_large("calc_evaluate", 2_000_000, limits.max_args_bytes)
                    .to_string(),
            ),
            (
                "`max_output_bytes`",
                call(Fault::OutputTooLarge(Some(2_000_000))),
            ),
            (
                "`max_instances`, `max_tables`, `max_memories`, `max_table_elements`",
                call(Fault::ResourceLimit("max_tables")),
            ),
            (
                "a Rust panic (message read from the guest's stderr)",
                call(Fault::Panicked("<message>".into())),
            ),
            (
                "a panic or trap after a memory growth was refused (and went on)",
                call(Fault::AfterRefusedMemory(Box::new(Fault::Panicked(
                    "<message>".into(),
                )))),
            ),
            ("the guest calls `exit`", call(Fault::Exited(1))),
            (
                "a string passed to the host larger than a host call may carry",
                call(Fault::HostCopy(limits.memory_bytes(), false)),
            ),
            (
                "any other trap",
                call(Fault::Trapped("<wasmtime's trap message>".into())),
            ),
        ];
        for (cause, text) in &rows {
            assert_eq!(page_texts(cause), [text.as_str()], "the row for {cause}");
        }
        assert_eq!(
            page_texts("the tool's own `err`"),
            [ToolError::failed("calc_evaluate", "<the tool's text>").to_string()]
        );
        // Every row that gives a text is checked: here, by tests/it/docs.rs
        // (dispatch's texts), or by tests/it/http.rs (the HTTP note).
        let elsewhere = [
            "`batch_timeout_ms`",
            "a deactivated tool",
            "an unknown tool",
            "a malformed call",
            "bad arguments",
            "the HTTP limits, and HTTP denials",
        ];
        for (cause, texts) in error_table::error_rows(PAGE) {
            if texts.is_empty() {
                continue;
            }
            let checked = rows.iter().any(|(c, _)| *c == cause)
                || cause == "the tool's own `err`"
                || elsewhere.contains(&cause);
            assert!(checked, "no test checks the row for {cause}");
        }
    }
}
