//! [`Fault`]: why a call did not return normally, and how a wasmtime error
//! is classified as one.

use wasmtime::Trap;

use crate::engine::describe_error;

/// Why a call did not return normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    OutOfFuel,
    Timeout,
    MemoryLimit,
    /// The answer has this many bytes, more than the limit; it was not copied.
    OutputTooLarge(usize),
    /// Another limit, by its config key (`max_instances`, `max_tables`, ...).
    ResourceLimit(&'static str),
    Panicked(String),
    Trapped(String),
    /// The host could not set up or run the call.
    Host(String),
}

/// Names the cause of a failed call from the error and the limiter's record.
///
/// Running out of fuel or time is reported as such even if the guest had hit
/// the memory limit before and carried on; any other trap after a refused
/// memory growth (typically the allocator aborting) is the memory limit.
pub(super) fn classify(error: &wasmtime::Error, memory_exceeded: bool) -> Fault {
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Fault::OutOfFuel,
        Some(Trap::Interrupt) => Fault::Timeout,
        _ if memory_exceeded => Fault::MemoryLimit,
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
        ("instance count too high", "max_instances"),
        ("table count too high", "max_tables"),
        ("memory count too high", "max_memories"),
        ("exceeds table limits", "max_table_elements"),
    ];
    KNOWN
        .iter()
        .find(|(needle, _)| text.contains(needle))
        .map(|(_, key)| *key)
}
