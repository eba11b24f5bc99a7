//! What a guest said on stderr before it trapped: a Rust panic message, an
//! uncaught Python exception. Used to name the cause of a trap.

use super::fault::Fault;

/// Turns an `unreachable`-style trap into what the guest said on stderr: a
/// Rust panic message, with the uncaught Python exception that caused it
/// when the guest is a componentize-py module.
pub(super) fn explain_trap(message: String, stderr: &str) -> Fault {
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
}
