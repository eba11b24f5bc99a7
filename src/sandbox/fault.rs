//! [`Fault`]: why a call did not return normally, and how a wasmtime error
//! is classified as one.

use wasmtime::Trap;

use crate::engine::describe_error;
use crate::policy::limit_key;
use crate::tool::SessionReset;

/// What wasmtime says when a guest passes the host more than the store's
/// host-call budget (its error type is private).
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// Why a call did not return normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    OutOfFuel,
    Timeout,
    /// A refused memory growth ended the call (the guest's allocator gave up).
    MemoryLimit,
    /// The guest called `exit` with this status before answering.
    Exited(i32),
    /// The answer has this many bytes (`None`: it was not all made), more
    /// than the limit; it was not copied.
    OutputTooLarge(Option<usize>),
    /// Another limit, by its config key (`max_instances`, `max_tables`, ...).
    ResourceLimit(&'static str),
    Panicked(String),
    Trapped(String),
    /// The host could not set up or run the call.
    Host(String),
    /// The guest passed the host more than this many bytes in one piece (a
    /// string or list; `true`: its strings are UTF-16 or latin1).
    HostCopy(usize, bool),
    /// The guest went on after a memory growth past its limit was refused,
    /// and then ended in this other fault.
    AfterRefusedMemory(Box<Fault>),
    /// The call was not run: its session's instance had been dropped, for
    /// this reason, since its previous call.
    SessionReset(SessionReset),
}

/// What a call may make the host copy at once (past it, [`Fault::HostCopy`]):
/// the bytes, and whether the guest's strings grow when made UTF-8.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostCopy {
    pub bytes: usize,
    pub transcodes: bool,
}

/// Names the cause of a failed call from wasmtime's error.
///
/// Whether a refused memory growth is to blame is decided later, with what
/// the guest printed (see `guest_stderr::name_the_cause`).
pub(super) fn classify(error: &wasmtime::Error, copy: HostCopy) -> Fault {
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return Fault::Exited(exit.0);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Fault::OutOfFuel,
        Some(Trap::Interrupt) => Fault::Timeout,
        Some(trap) => {
            let text = trap.to_string();
            Fault::Trapped(
                text.strip_prefix("wasm trap: ")
                    .unwrap_or(&text)
                    .to_string(),
            )
        }
        None => {
            let text = describe_error(error);
            if text.contains(HOSTCALL_FUEL_EXHAUSTED) {
                return Fault::HostCopy(copy.bytes, copy.transcodes);
            }
            match resource_limit(&text) {
                Some(key) => Fault::ResourceLimit(key),
                None => Fault::Trapped(text),
            }
        }
    }
}

/// The limit named by one of wasmtime's instantiation errors, if it is one.
///
/// wasmtime reports these as plain errors (not traps), so their text is the
/// only way to tell them apart; anything unrecognised stays a trap message.
fn resource_limit(text: &str) -> Option<&'static str> {
    const KNOWN: [(&str, &str); 4] = [
        ("instance count too high", limit_key::max_instances),
        ("table count too high", limit_key::max_tables),
        ("memory count too high", limit_key::max_memories),
        ("exceeds table limits", limit_key::max_table_elements),
    ];
    KNOWN
        .iter()
        .find(|(needle, _)| text.contains(needle))
        .map(|(_, key)| *key)
}
