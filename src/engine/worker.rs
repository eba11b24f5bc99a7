//! [`CompileWorker`]: compiling components in a child process, under a time
//! and an address-space limit, so that a component built to make the
//! compiler run for minutes or take gigabytes cannot stall or exhaust the
//! host.
//!
//! The parent writes the component to the child's stdin; the child
//! ([`serve_compile_worker`]) compiles it with an engine configured as the
//! parent's, writes the compiled artifact to stdout and exits. The parent
//! kills it at the time limit, and the child's address space is limited by
//! `setrlimit` before it reads anything.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::Concurrency;

/// How a component failed to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CompileFailure {
    /// wasmtime refused it (the text says why).
    Invalid(String),
    /// Compiling took longer than the time limit.
    TimedOut,
    /// Compiling needed more memory than the limit.
    OutOfMemory,
    /// The worker could not be run or answered nonsense.
    Worker(String),
}

/// A program that compiles components for toolhost: a command that, run
/// with the arguments given here, calls [`serve_compile_worker`] with the
/// rest of its arguments. The `toolhost` command is one: `toolhost
/// compile-worker`.
///
/// ```no_run
/// use toolhost::{CompileWorker, Runtime};
///
/// let worker = CompileWorker::new("/usr/local/bin/toolhost", ["compile-worker"]);
/// let runtime = Runtime::builder().compile_worker(worker).build()?;
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileWorker {
    program: PathBuf,
    args: Vec<OsString>,
}

/// How often the parent looks whether the worker has finished.
const POLL: Duration = Duration::from_millis(5);

impl CompileWorker {
    /// The worker `program`, run with `args` first.
    pub fn new<I, S>(program: impl Into<PathBuf>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// Compiles `bytes` for an engine with `stack_bytes` of wasm stack and
    /// `concurrency`, within `timeout` and `memory_bytes` of address space;
    /// the artifact.
    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        (stack_bytes, concurrency): (usize, Concurrency),
        timeout: Duration,
        memory_bytes: u64,
    ) -> Result<Vec<u8>, CompileFailure> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .arg(stack_bytes.to_string())
            .arg(memory_bytes.to_string())
            .arg(if concurrency.is_on() { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                CompileFailure::Worker(format!(
                    "cannot start the compile worker {}: {e}",
                    self.program.display()
                ))
            })?;
        let started = Instant::now();
        let input = child.stdin.take().expect("stdin is piped");
        let component = bytes.to_vec();
        let writer = std::thread::spawn(move || {
            let mut input = input;
            let _ = input.write_all(&component);
        });
        let output = read_all(child.stdout.take().expect("stdout is piped"), memory_bytes);
        let errors = read_all(child.stderr.take().expect("stderr is piped"), 64 * 1024);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CompileFailure::TimedOut);
                }
                Ok(None) => std::thread::sleep(POLL),
                Err(e) => {
                    return Err(CompileFailure::Worker(format!(
                        "cannot wait for the compile worker: {e}"
                    )));
                }
            }
        };
        let _ = writer.join();
        let artifact = output.join().unwrap_or_default();
        let errors = String::from_utf8_lossy(&errors.join().unwrap_or_default()).into_owned();
        if status.success() {
            return Ok(artifact);
        }
        Err(failure(status, errors.trim()))
    }
}

/// Reads `from` to its end on a thread of its own, keeping at most `limit`
/// bytes.
fn read_all(from: impl Read + Send + 'static, limit: u64) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.take(limit).read_to_end(&mut bytes);
        bytes
    })
}

/// What a worker's unsuccessful end means.
fn failure(status: std::process::ExitStatus, errors: &str) -> CompileFailure {
    if let Some(reason) = errors.strip_prefix(INVALID) {
        return CompileFailure::Invalid(reason.to_string());
    }
    if errors.contains("memory allocation of") || errors.contains(OUT_OF_MEMORY) {
        return CompileFailure::OutOfMemory;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        // Aborted by the allocator, or killed for memory.
        if matches!(status.signal(), Some(6 | 9 | 11)) {
            return CompileFailure::OutOfMemory;
        }
    }
    CompileFailure::Worker(format!("the compile worker failed ({status}): {errors}"))
}

/// What the worker writes before the reason a component is not valid.
const INVALID: &str = "invalid component: ";
/// What the worker writes when compiling ran out of memory.
const OUT_OF_MEMORY: &str = "out of memory";

/// The compile worker's side: compiles the component on stdin for the
/// engine `args` describe (the wasm stack size, then the address-space
/// limit in bytes) and writes the artifact to stdout. Call it from the
/// program a [`CompileWorker`] runs, with the arguments after those the
/// worker was given, and exit with what it returns.
pub fn serve_compile_worker(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    match serve(args.into_iter().collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn serve(args: Vec<OsString>) -> Result<(), String> {
    let number = |i: usize| -> Result<u64, String> {
        args.get(i)
            .and_then(|a| a.to_str())
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| {
                "usage: compile-worker STACK_BYTES MEMORY_BYTES CONCURRENT(0|1) (component on stdin)"
                    .to_string()
            })
    };
    let (stack_bytes, memory_bytes) = (number(0)?, number(1)?);
    let concurrency = match number(2)? {
        0 => Concurrency::Off,
        _ => Concurrency::On,
    };
    limit_address_space(memory_bytes)?;
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the component: {e}"))?;
    let engine = super::new_engine(
        usize::try_from(stack_bytes).unwrap_or(usize::MAX),
        concurrency,
    )
    .map_err(|e| format!("cannot make the engine: {e:#}"))?;
    let artifact = engine
        .precompile_component(&bytes)
        .map_err(|e| format!("{INVALID}{}", super::describe_error(&e)))?;
    std::io::stdout()
        .write_all(&artifact)
        .and_then(|()| std::io::stdout().flush())
        .map_err(|e| format!("cannot write the artifact: {e}"))
}

#[cfg(unix)]
fn limit_address_space(bytes: u64) -> Result<(), String> {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let limit = Rlimit {
        current: Some(bytes),
        maximum: Some(bytes),
    };
    setrlimit(Resource::As, limit).map_err(|e| format!("cannot limit the address space: {e}"))
}

#[cfg(not(unix))]
fn limit_address_space(_bytes: u64) -> Result<(), String> {
    Ok(())
}
