//! The component's bytes, before and while compiling: size, header, and
//! what to do when wasmtime cannot compile them.

use std::path::Path;

use crate::engine::CompileFailure;
use crate::policy::{Limits, limit_key};

use super::load_error::{LoadError, LoadErrorKind};

const WASM_MAGIC: &[u8; 4] = b"\0asm";
const CORE_MODULE_VERSION: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
const COMPONENT_LAYER: [u8; 2] = [0x01, 0x00];

/// Reads the component at `path` for module `name`, refusing it before
/// reading if it is larger than `max_component_bytes`.
pub(super) fn read_file(name: &str, path: &Path, limits: &Limits) -> Result<Vec<u8>, LoadError> {
    let size = std::fs::metadata(path)
        .map_err(|e| io_error(name, path, &e))?
        .len();
    if size > limits.max_component_bytes {
        return Err(too_big(name, size, limits));
    }
    std::fs::read(path).map_err(|e| io_error(name, path, &e))
}

fn io_error(name: &str, path: &Path, error: &std::io::Error) -> LoadError {
    LoadError::new(
        name,
        LoadErrorKind::Io,
        format!("cannot read {}: {error}", path.display()),
    )
}

fn too_big(name: &str, size: u64, limits: &Limits) -> LoadError {
    LoadError::new(
        name,
        LoadErrorKind::TooLarge,
        format!(
            "the component is {size} bytes, more than its limit of {} bytes (limits.{})",
            limits.max_component_bytes,
            limit_key::max_component_bytes
        ),
    )
}

/// Checks the size and the first bytes: a component, not text, not a core module.
pub(super) fn check_header(name: &str, bytes: &[u8], limits: &Limits) -> Result<(), LoadError> {
    let not = |reason: String| Err(LoadError::new(name, LoadErrorKind::NotAComponent, reason));
    if bytes.is_empty() {
        return not("the file is empty, not a WebAssembly component".into());
    }
    if bytes.len() as u64 > limits.max_component_bytes {
        return Err(too_big(name, bytes.len() as u64, limits));
    }
    if bytes.len() < 8 || &bytes[..4] != WASM_MAGIC {
        return not(
            "it is not a WebAssembly component (it does not start with the `\\0asm` header); \
             build the tool for wasm32-wasip2"
                .into(),
        );
    }
    if bytes[4..8] == CORE_MODULE_VERSION {
        return not(
            "it is a core WebAssembly module, not a component; build it for wasm32-wasip2 \
             (or wrap it with `wasm-tools component new`)"
                .into(),
        );
    }
    if bytes[6..8] != COMPONENT_LAYER {
        return not("it is not a WebAssembly component (unknown binary layer)".into());
    }
    Ok(())
}

/// What a component's canonical functions and imports ask of the host,
/// read in one pass before compiling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct AbiUse {
    /// Some string is lifted or lowered as UTF-16 or latin1 (which the host
    /// converts to UTF-8, at up to twice the size).
    pub transcodes_strings: bool,
    /// It needs an engine with concurrency support: it lifts or lowers a
    /// function with the async ABI, uses one of the ABI's built-ins (tasks,
    /// subtasks, waitables, streams, futures, context, ...), or imports a
    /// WASI 0.3 interface.
    pub needs_concurrency: bool,
}

/// What the component `bytes` asks of the host. Bytes that do not parse
/// ask for nothing as far as they were read (the compiler then says what is
/// wrong with them).
pub(super) fn abi_use(bytes: &[u8]) -> AbiUse {
    use wasmparser::{CanonicalFunction, CanonicalOption, Parser, Payload};
    let mut found = AbiUse::default();
    let note_options = |found: &mut AbiUse, options: &[CanonicalOption]| {
        for option in options {
            match option {
                CanonicalOption::UTF16 | CanonicalOption::CompactUTF16 => {
                    found.transcodes_strings = true;
                }
                CanonicalOption::Async | CanonicalOption::Callback(_) => {
                    found.needs_concurrency = true;
                }
                _ => {}
            }
        }
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload {
            Err(_) => break,
            Ok(Payload::ComponentCanonicalSection(reader)) => {
                for function in reader.into_iter().flatten() {
                    match &function {
                        CanonicalFunction::Lift { options, .. }
                        | CanonicalFunction::Lower { options, .. } => {
                            note_options(&mut found, options);
                        }
                        CanonicalFunction::ResourceNew { .. }
                        | CanonicalFunction::ResourceDrop { .. }
                        | CanonicalFunction::ResourceRep { .. } => {}
                        _ => found.needs_concurrency = true,
                    }
                }
            }
            Ok(Payload::ComponentImportSection(reader)) => {
                let p3 = reader.into_iter().flatten().any(|import| {
                    let suffix = import.name.version_suffix.unwrap_or("");
                    import.name.name.contains("@0.3")
                        || suffix.trim_start_matches('@').starts_with("0.3")
                });
                found.needs_concurrency |= p3;
            }
            Ok(_) => {}
        }
        if found.transcodes_strings && found.needs_concurrency {
            break;
        }
    }
    found
}

/// Why a component did not compile, for a load error.
pub(super) fn compile_failure_reason(failure: CompileFailure, limits: &Limits) -> String {
    match failure {
        CompileFailure::Invalid(error) => compile_error_reason(&error),
        CompileFailure::TimedOut => format!(
            "compiling it took longer than its limit of {} ms (limits.{})",
            limits.compile_timeout_ms,
            limit_key::compile_timeout_ms
        ),
        CompileFailure::OutOfMemory => format!(
            "compiling it needed more memory than its limit of {} MiB (limits.{})",
            limits.compile_memory_mib,
            limit_key::compile_memory_mib
        ),
        CompileFailure::Killed(signal) => format!(
            "the compile worker was killed by {} before it finished (it ran under \
             limits of {} ms and {} MiB of address space: limits.{}, limits.{})",
            CompileFailure::signal_text(signal),
            limits.compile_timeout_ms,
            limits.compile_memory_mib,
            limit_key::compile_timeout_ms,
            limit_key::compile_memory_mib
        ),
        CompileFailure::Worker(reason) => format!("it could not be compiled: {reason}"),
    }
}

/// Why a component did not compile, with what to do where that is known.
fn compile_error_reason(error: &str) -> String {
    let mut reason = format!("it is not a valid component: {error}");
    if error.contains("requires the component model") {
        reason.push_str(
            "; toolhost runs components built with the component-model async ABI, but not the \
             parts of it that wasmtime 48 leaves unfinished and off (async stackful, \
             error-context, threading and the further async built-ins): build the component \
             without them (jco's and wit-bindgen's default options do not use them)",
        );
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_async_abi_or_wasip3_components_need_concurrency() {
        let needs = |text: &str| abi_use(&wat::parse_str(text).unwrap()).needs_concurrency;
        assert!(!needs("(component)"));
        assert!(!needs(
            r#"(component (import "wasi:clocks/monotonic-clock@0.2.6" (instance)))"#
        ));
        assert!(needs(
            r#"(component (import "wasi:clocks/monotonic-clock@0.3.0" (instance)))"#
        ));
        assert_eq!(abi_use(b"\0asm\x0d\0\x01\0 not really"), AbiUse::default());
    }

    #[test]
    fn headers_are_checked_before_compiling() {
        let limits = Limits::default();
        let kind = |b: &[u8]| check_header("m", b, &limits).unwrap_err().reason;
        assert!(kind(b"").contains("empty"));
        assert!(kind(b"(component)").contains("\\0asm"));
        assert!(kind(b"\0asm\x01\0\0\0").contains("core WebAssembly module"));
        assert!(check_header("m", b"\0asm\x0d\0\x01\0", &limits).is_ok());
        let tiny = Limits {
            max_component_bytes: 4,
            ..limits
        };
        let err = check_header("m", b"\0asm\x0d\0\x01\0", &tiny).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::TooLarge);
    }
}
