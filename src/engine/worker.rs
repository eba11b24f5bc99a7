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
use std::io::{BufRead, Read, Write};
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
    /// The worker was killed by a signal (its number) before it finished.
    Killed(i32),
    /// The worker could not be run or answered nonsense.
    Worker(String),
}

impl CompileFailure {
    /// Signal `number` with its name, for a load error: "signal 11
    /// (SIGSEGV)".
    pub(crate) fn signal_text(number: i32) -> String {
        match signal_name(number) {
            Some(name) => format!("signal {number} ({name})"),
            None => format!("signal {number}"),
        }
    }
}

/// The name of signal `number` on Linux, for the signals a process can
/// die of.
fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: [(i32, &str); 16] = [
        (1, "SIGHUP"),
        (2, "SIGINT"),
        (3, "SIGQUIT"),
        (4, "SIGILL"),
        (5, "SIGTRAP"),
        (6, "SIGABRT"),
        (7, "SIGBUS"),
        (8, "SIGFPE"),
        (9, "SIGKILL"),
        (10, "SIGUSR1"),
        (11, "SIGSEGV"),
        (12, "SIGUSR2"),
        (13, "SIGPIPE"),
        (14, "SIGALRM"),
        (15, "SIGTERM"),
        (24, "SIGXCPU"),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == number)
        .map(|(_, name)| *name)
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
            // The worker logs warnings only, whatever the parent's level:
            // a compiler's debug log runs to megabytes.
            .env(LOG_VARIABLE, WORKER_LOG_LEVEL)
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
        let errors = drain_errors(child.stderr.take().expect("stderr is piped"));
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
        let errors = errors.join().unwrap_or_default();
        if status.success() {
            return Ok(artifact);
        }
        Err(failure(status, &errors))
    }
}

/// The environment variable the `toolhost` command reads its log level
/// from, and the level the worker gets.
const LOG_VARIABLE: &str = "TOOLHOST_LOG";
const WORKER_LOG_LEVEL: &str = "warn";

/// How much of the worker's stderr is kept for a failure's reason: its
/// last lines up to this many bytes (the reason is written last).
const ERRORS_KEPT: usize = 64 * 1024;
/// Lines of the worker's stderr passed on to the host's log, at debug
/// level; the rest are counted.
const LINES_FORWARDED: usize = 200;
/// Bytes of one line kept; the rest of a longer line is read and dropped.
const LINE_BYTES: usize = 4096;

/// Reads the worker's stderr to its end on a thread of its own, so that
/// however much it writes it never blocks on a full pipe: passes its first
/// lines on to the host's log and keeps its last ones.
fn drain_errors(from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut from = std::io::BufReader::new(from);
        let mut kept: std::collections::VecDeque<String> = std::collections::VecDeque::new();
        let (mut kept_bytes, mut lines) = (0usize, 0usize);
        while let Some(line) = read_line(&mut from) {
            lines += 1;
            if lines <= LINES_FORWARDED {
                tracing::debug!(target: "toolhost::compile_worker", "{}", crate::escape_controls(&line));
            }
            kept_bytes += line.len() + 1;
            kept.push_back(line);
            while kept_bytes > ERRORS_KEPT {
                let Some(old) = kept.pop_front() else { break };
                kept_bytes -= old.len() + 1;
            }
        }
        if lines > LINES_FORWARDED {
            tracing::debug!(
                target: "toolhost::compile_worker",
                "{} more lines from the compile worker were not passed on",
                lines - LINES_FORWARDED
            );
        }
        Vec::from(kept).join("\n")
    })
}

/// The next line of `from` (at most [`LINE_BYTES`] of it; the rest of a
/// longer line is skipped), or `None` at its end or on a read error.
fn read_line(from: &mut impl BufRead) -> Option<String> {
    let mut line = Vec::new();
    let read = (&mut *from)
        .take(LINE_BYTES as u64)
        .read_until(b'\n', &mut line)
        .ok()?;
    if read == 0 {
        return None;
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if read == LINE_BYTES {
        from.skip_until(b'\n').ok()?;
    }
    Some(String::from_utf8_lossy(&line).into_owned())
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

/// What a worker's unsuccessful end means, from its status and the last
/// lines it wrote to stderr.
fn failure(status: std::process::ExitStatus, errors: &str) -> CompileFailure {
    // The worker writes its reason last; log lines may come before it.
    if let Some(reason) = reason_after(errors, INVALID) {
        return CompileFailure::Invalid(reason.to_string());
    }
    if reason_after(errors, OUT_OF_MEMORY).is_some() || ran_out_of_memory(errors) {
        return CompileFailure::OutOfMemory;
    }
    let last = errors
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return CompileFailure::Killed(signal);
        }
    }
    CompileFailure::Worker(format!(
        "the compile worker failed ({status}): {}",
        last.trim()
    ))
}

/// What follows the last line of `errors` that starts with `prefix`, to
/// the end.
fn reason_after<'a>(errors: &'a str, prefix: &str) -> Option<&'a str> {
    let (at, _) = errors
        .match_indices(prefix)
        .filter(|(i, _)| *i == 0 || errors.as_bytes().get(i - 1) == Some(&b'\n'))
        .last()?;
    Some(errors[at + prefix.len()..].trim_end())
}

/// Whether the worker's stderr says an allocation failed (Rust's
/// allocation-failure message, or an `ENOMEM` from the system) under its
/// address-space limit.
fn ran_out_of_memory(errors: &str) -> bool {
    [
        "memory allocation of",
        "Cannot allocate memory",
        "os error 12",
    ]
    .iter()
    .any(|sign| errors.contains(sign))
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
    let artifact = engine.precompile_component(&bytes).map_err(|e| {
        let reason = super::describe_error(&e);
        if ran_out_of_memory(&reason) {
            format!("{OUT_OF_MEMORY}: {reason}")
        } else {
            format!("{INVALID}{reason}")
        }
    })?;
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
