//! What a guest said on stderr before it trapped (a Rust panic message, an
//! allocation failure, an uncaught Python exception), used to name the
//! cause of a trap.

use super::fault::Fault;

/// The trap wasmtime reports for an `unreachable` instruction (an abort).
const UNREACHABLE: &str = "wasm `unreachable` instruction executed";

/// The cause of a call that ended in `fault`, with what the guest wrote to
/// `stderr` and whether a memory growth was refused (`memory_refused`).
///
/// A trap is named by the guest's panic message or Python exception when
/// it printed one. After a refused memory growth, the call is reported as
/// having exceeded its memory limit only when that is what ended it: the
/// allocator gave up (Rust's `memory allocation of N bytes failed`, a Python
/// `MemoryError`, or an abort with nothing said). Any other end (a panic of
/// the guest's own after a failed `try_reserve`, a stack overflow) is
/// reported as itself, with the refused growth mentioned. Running out of
/// fuel or time, or exiting, are reported as such in any case.
pub(super) fn name_the_cause(fault: Fault, stderr: &str, memory_refused: bool) -> Fault {
    let Fault::Trapped(message) = fault else {
        return fault;
    };
    let ended_by_memory = stderr.contains("memory allocation of")
        || python_exception(stderr).is_some_and(|e| e.starts_with("MemoryError"))
        || (message == UNREACHABLE && panic_message(stderr).is_none());
    if memory_refused && ended_by_memory {
        return Fault::MemoryLimit;
    }
    let explained = explain_trap(message, stderr);
    if memory_refused {
        Fault::AfterRefusedMemory(Box::new(explained))
    } else {
        explained
    }
}

/// Turns an `unreachable`-style trap into what the guest said on stderr: a
/// Rust panic message, with the uncaught Python exception that caused it
/// when the guest is a componentize-py module.
fn explain_trap(message: String, stderr: &str) -> Fault {
    let python = python_exception(stderr);
    match (panic_message(stderr), python) {
        (Some(panic), Some(exception)) => Fault::Panicked(format!("{panic}: {exception}")),
        (Some(panic), None) => Fault::Panicked(panic),
        (None, Some(exception)) => Fault::Trapped(format!("{message}: {exception}")),
        (None, None) => Fault::Trapped(message),
    }
}

/// The last uncaught Python exception on stderr (`ZeroDivisionError: ...`),
/// the line that ends a `Traceback (most recent call last):` block.
fn python_exception(stderr: &str) -> Option<String> {
    let start = stderr.rfind("Traceback (most recent call last):")?;
    stderr[start..]
        .lines()
        .skip(1)
        .find(|line| !line.is_empty() && !line.starts_with(' '))
        .map(|line| line.trim().to_string())
}

/// Extracts a Rust guest's panic message from its stderr.
///
/// Rust prints `thread '<name>' panicked at <file>:<line>:<col>:` followed by
/// the message and, usually, a `note: run with RUST_BACKTRACE=1` line.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at ")?;
    let after = &stderr[start..];
    let (_location, rest) = after.split_once('\n')?;
    let message: Vec<&str> = rest
        .lines()
        .take_while(|line| !line.starts_with("note: "))
        .collect();
    let message = message.join("\n").trim().to_string();
    Some(if message.is_empty() {
        "(no message)".to_string()
    } else {
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_are_extracted() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nboom: 42\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(panic_message(stderr).as_deref(), Some("boom: 42"));
        let multi = "thread 'main' panicked at a.rs:1:1:\nline one\nline two\n";
        assert_eq!(panic_message(multi).as_deref(), Some("line one\nline two"));
        assert_eq!(panic_message("just some output\n"), None);
    }

    #[test]
    fn python_exceptions_are_extracted() {
        let stderr = "Traceback (most recent call last):\n  File \"/0/app.py\", line 17, in call\n    x = 1 / 0\nZeroDivisionError: division by zero\n\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1293:29:\nPython function threw an unexpected exception\n";
        assert_eq!(
            python_exception(stderr).as_deref(),
            Some("ZeroDivisionError: division by zero")
        );
        assert_eq!(
            explain_trap("unreachable".into(), stderr),
            Fault::Panicked("Python function threw an unexpected exception: ZeroDivisionError: division by zero".into())
        );
        assert_eq!(
            explain_trap("unreachable".into(), ""),
            Fault::Trapped("unreachable".into())
        );
    }

    #[test]
    fn a_refused_growth_is_blamed_only_when_it_ended_the_call() {
        let trap = || Fault::Trapped(UNREACHABLE.into());
        let oom = "memory allocation of 1048576 bytes failed\n";
        assert_eq!(name_the_cause(trap(), oom, true), Fault::MemoryLimit);
        assert_eq!(name_the_cause(trap(), "", true), Fault::MemoryLimit);
        let panic = "thread 'main' panicked at src/lib.rs:1:1:\nno room\n";
        assert_eq!(
            name_the_cause(trap(), panic, true),
            Fault::AfterRefusedMemory(Box::new(Fault::Panicked("no room".into())))
        );
        let overflow = Fault::Trapped("call stack exhausted".into());
        assert_eq!(
            name_the_cause(overflow.clone(), "", true),
            Fault::AfterRefusedMemory(Box::new(overflow.clone()))
        );
        assert_eq!(name_the_cause(overflow.clone(), "", false), overflow);
        assert_eq!(
            name_the_cause(Fault::OutOfFuel, oom, true),
            Fault::OutOfFuel
        );
        assert_eq!(name_the_cause(Fault::Exited(0), "", true), Fault::Exited(0));
        let python = "Traceback (most recent call last):\n  File \"a\", line 1\nMemoryError\n";
        assert_eq!(name_the_cause(trap(), python, true), Fault::MemoryLimit);
    }
}
