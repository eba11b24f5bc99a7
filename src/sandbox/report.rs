//! What came of a call: its [`Outcome`], and the [`CallReport`] of the
//! outcome with what the guest printed.

use wasmtime::Store;

use crate::policy::limit_key;

use super::capture::{Capture, Captured};
use super::fault::Fault;
use super::guest_stderr::name_the_cause;
use super::state::CallState;

/// A call's answer: the guest's `ok` or `err` text, or why there is none.
pub(crate) type Outcome = Result<Result<String, String>, Fault>;

/// The outcome of one call and what the guest printed.
#[derive(Debug)]
pub(crate) struct CallReport {
    /// The export's answer: `Ok` and `Err` are the guest's own.
    pub result: Outcome,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The first HTTP request the host refused (a denial or a limit), for
    /// the text of a call that ended in an error.
    pub http_problem: Option<String>,
}

/// What the store saw besides the outcome: whether a memory growth was
/// refused, and the first HTTP problem.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub memory_refused: bool,
    pub http_problem: Option<String>,
}

/// The report of a call with `result`, naming the cause of a fault from
/// what the guest wrote to stderr.
pub(super) fn report(
    result: Outcome,
    seen: Seen,
    stdout: &Capture,
    stderr: &Capture,
) -> CallReport {
    let stderr = stderr.contents();
    let result = result.map_err(|fault| name_the_cause(fault, &stderr.text(), seen.memory_refused));
    CallReport {
        result,
        stdout: stdout.contents(),
        stderr,
        http_problem: seen.http_problem,
    }
}

/// `outcome` as the limits saw it, and what the store saw.
pub(super) fn settle(store: &Store<CallState>, outcome: Outcome) -> (Outcome, Seen) {
    let limiter = &store.data().limiter;
    // A table refused for the memory it would take hit the memory limit,
    // whatever wasmtime's text says.
    let outcome = match outcome {
        Err(Fault::ResourceLimit(limit_key::max_table_elements)) if limiter.table_refused() => {
            Err(Fault::MemoryLimit)
        }
        other => other,
    };
    let seen = Seen {
        memory_refused: limiter.exceeded(),
        http_problem: store.data().http.problem(),
    };
    (outcome, seen)
}
