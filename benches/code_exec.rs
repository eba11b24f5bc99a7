//! What running code a model writes costs: `cargo bench --bench code_exec`
//! runs the same small program, `print(sum(range(1000)))`, in a fresh
//! sandbox per execution, in one run:
//!
//! - toolhost's `run_python` (example-tools/python-exec, with the `[pool]` of
//!   example-tools/toolhost.toml: instances made ahead), through the manager
//!   as a model's call;
//! - pyeryx 0.11 (CPython in wasmtime, `Sandbox.execute`), with the Python
//!   named by `TOOLHOST_PYERYX_PYTHON` (3.12 or later; the row is skipped,
//!   saying so, where there is none);
//! - a plain `python3 -c` subprocess: the cost of a process, no sandbox;
//! - the same under `bwrap` (Debian's bubblewrap: new namespaces of every
//!   kind, the system read-only), what a typical Linux sandbox costs (the
//!   row is skipped, saying so, without `bwrap`);
//!
//! each with the median and p99 of one execution back to back (and, for
//! toolhost, 2 ms apart, so that the next instance is made ahead in the
//! gap), and
//! executions per second with 2 at a time (2 threads, or 2 processes for
//! pyeryx, whose Python holds one core). Then a session's second call
//! against a warm module's call (both reuse an instance), and a session's
//! first call. The ratios are of this one run; `TOOLHOST_BENCH_QUICK=1`
//! runs a few samples only, to show the bench works.

#[path = "support/pyeryx.rs"]
mod pyeryx;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::config::LoadedConfig;
use toolhost::{Grants, Limits, Runtime, ToolManager, Warm, WasmModule};
use xtask::{Example, Repo, build_named_example};

/// The program every sandbox runs.
const PROGRAM: &str = "print(sum(range(1000)))";
/// What it prints.
const PRINTED: &str = "499500";
/// The Python the subprocess rows run (Debian's).
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

/// Samples of toolhost and pyeryx, of a subprocess, and calls per
/// throughput run.
struct Counts {
    wasm: usize,
    process: usize,
    throughput: usize,
}

fn counts() -> Counts {
    if std::env::var_os("TOOLHOST_BENCH_QUICK").is_some() {
        Counts {
            wasm: 200,
            process: 5,
            throughput: 20,
        }
    } else {
        Counts {
            wasm: 2_000,
            process: 300,
            throughput: 2_000,
        }
    }
}

/// The median and 99th percentile of some samples.
#[derive(Clone, Copy)]
struct Stats {
    median: Duration,
    p99: Duration,
}

impl Stats {
    fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
        Self {
            median: at(0.5),
            p99: at(0.99),
        }
    }
}

/// `n` timed runs of `run` after `n / 10` (at least 3) untimed ones;
/// `before` runs untimed before each.
fn sample(n: usize, mut before: impl FnMut(), mut run: impl FnMut()) -> Stats {
    for _ in 0..(n / 10).max(3) {
        before();
        run();
    }
    let samples = (0..n)
        .map(|_| {
            before();
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    Stats::of(samples)
}

/// Runs per second of `run` on `threads` threads at once, `n` in all.
fn per_second(n: usize, threads: usize, run: impl Fn() + Sync) -> f64 {
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| (0..n / threads).for_each(|_| run()));
        }
    });
    n as f64 / started.elapsed().as_secs_f64()
}

fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn cell(s: Stats) -> String {
    format!("{} (p99 {})", us(s.median), us(s.p99))
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.1}x", a.as_secs_f64() / b.as_secs_f64())
}

/// The python-exec component, built from source.
fn python_exec(repo: &Repo) -> std::path::PathBuf {
    build_named_example(repo, Example::PYTHON_EXEC).unwrap_or_else(|e| panic!("{e:#}"))
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.set_max_parallel(2);
    manager.register(module).expect("registers");
    manager
}

fn run_python_call() -> Value {
    json!({"id": "c", "type": "function", "function": {
        "name": "python-exec_run_python", "arguments": {"code": PROGRAM}}})
}

/// Checks a sandbox's answer.
fn check(answer: &str) {
    assert_eq!(answer.trim_end(), PRINTED, "the program's output");
}

/// A process that runs the program, as `command` says.
fn process_run(command: &[&str]) {
    let output = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .output()
        .expect("the process runs");
    assert!(output.status.success(), "{command:?}: {output:?}");
    check(&String::from_utf8_lossy(&output.stdout));
}

/// `bwrap` around the system Python: every namespace new, the system
/// read-only, a fresh /proc and /dev, nothing else of the host.
fn bwrap_command() -> Vec<&'static str> {
    vec![
        "bwrap",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/bin",
        "/bin",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        SYSTEM_PYTHON,
        "-c",
        PROGRAM,
    ]
}

/// Whether `bwrap` runs here; why not otherwise.
fn bwrap_works() -> Result<(), String> {
    let output = Command::new("bwrap")
        .args(&bwrap_command()[1..])
        .output()
        .map_err(|e| format!("cannot run bwrap ({e}): apt-get install bubblewrap"))?;
    if !output.status.success() {
        return Err(format!(
            "bwrap failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(())
}

fn main() {
    let counts = counts();
    let repo = Repo::from_manifest_dir();
    let component = python_exec(&repo);
    println!(
        "# Code execution: `{PROGRAM}` in a fresh sandbox per execution\n\n\
         {} executions of each WebAssembly sandbox, {} of each process, {} for each rate; 2 at a time \
         for the rate.\n",
        counts.wasm, counts.process, counts.throughput
    );
    // The pool as example-tools/toolhost.toml sets it (`keep_resident_kib`
    // large enough for an interpreter's call); TOOLHOST_BENCH_RESIDENT_KIB
    // overrides it.
    let config = repo.root().join("example-tools/toolhost.toml");
    let loaded = LoadedConfig::discover(Some(&config)).expect("the example config reads");
    let mut pool = loaded.config.pool.clone();
    if let Some(kib) = std::env::var("TOOLHOST_BENCH_RESIDENT_KIB")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        pool.keep_resident_kib = kib;
    }
    println!("`[pool] keep_resident_kib = {}`.\n", pool.keep_resident_kib);
    let runtime = Runtime::builder()
        .pool(pool)
        .build()
        .expect("runtime starts");
    let limits = Limits::default();
    let module = WasmModule::from_file(&runtime, &component, None, limits).expect("loads");
    let scratch = Grants {
        scratch: true,
        ..Grants::default()
    }
    .resolve(Path::new("."))
    .expect("grants");
    let call = run_python_call();

    println!("| sandbox | one execution, back to back | executions/s, 2 at a time |");
    println!("|---|---|---|");
    let mut rows: Vec<(&str, Stats)> = Vec::new();
    let toolhost_manager = Arc::new(manager_of(module.clone()));
    let toolhost = sample(counts.wasm, || {}, || check(&toolhost_manager.call(&call)));
    let toolhost_rate = per_second(counts.throughput, 2, || {
        check(&toolhost_manager.call(&call));
    });
    println!(
        "| toolhost `run_python` (fresh instance, made ahead) | {} | {toolhost_rate:.0} |",
        cell(toolhost)
    );
    let spaced = sample(
        counts.wasm / 4,
        || thread::sleep(Duration::from_millis(2)),
        || check(&toolhost_manager.call(&call)),
    );
    println!(
        "| toolhost `run_python`, calls 2 ms apart (the instance made ahead in the gap) | {} | |",
        cell(spaced)
    );
    rows.push(("toolhost", toolhost));
    let scratch_manager = Arc::new(manager_of(module.clone().with_access(scratch)));
    let with_scratch = sample(counts.wasm, || {}, || check(&scratch_manager.call(&call)));
    println!(
        "| toolhost `run_python` with `grants.scratch` (a directory made and removed per call) | {} | |",
        cell(with_scratch)
    );

    let n = counts.wasm.min(1000);
    match pyeryx::measure_code(PROGRAM, PRINTED, n, Duration::ZERO) {
        Ok(peer) => {
            let rate = pyeryx::throughput(PROGRAM, counts.throughput / 2, 2)
                .map_or_else(|e| format!("({e})"), |r| format!("{r:.0}"));
            let stats = Stats {
                median: peer.median,
                p99: peer.p99,
            };
            println!(
                "| pyeryx {} `Sandbox.execute` | {} | {rate} |",
                peer.version,
                cell(stats)
            );
            rows.push(("pyeryx", stats));
        }
        Err(why) => println!(
            "| pyeryx: skipped, {why} (to include it: {}) | | |",
            pyeryx::INSTALL
        ),
    }

    let plain = [SYSTEM_PYTHON, "-c", PROGRAM];
    let process = sample(counts.process, || {}, || process_run(&plain));
    let process_rate = per_second(counts.process, 2, || process_run(&plain));
    println!(
        "| `python3 -c` subprocess (no sandbox) | {} | {process_rate:.0} |",
        cell(process)
    );
    rows.push(("python3 -c", process));
    match bwrap_works() {
        Ok(()) => {
            let command = bwrap_command();
            let bwrap = sample(counts.process, || {}, || process_run(&command));
            let rate = per_second(counts.process, 2, || process_run(&command));
            println!(
                "| `bwrap` + `python3 -c` (bubblewrap) | {} | {rate:.0} |",
                cell(bwrap)
            );
            rows.push(("bwrap", bwrap));
        }
        Err(why) => println!("| bwrap: skipped, {why} | | |"),
    }
    println!();
    for (name, stats) in &rows[1..] {
        println!(
            "- {name} against toolhost: median {}, p99 {}",
            ratio(stats.median, toolhost.median),
            ratio(stats.p99, toolhost.p99)
        );
    }

    println!("\n## Sessions: calls that reuse an instance\n");
    println!("| call | one call |");
    println!("|---|---|");
    let sessions = manager_of(module.clone().with_sessions(1_000_000));
    let first = {
        let session = std::cell::RefCell::new(sessions.session());
        sample(
            counts.wasm.min(500),
            || *session.borrow_mut() = sessions.session(),
            || check(&session.borrow().call(&call)),
        )
    };
    let kept = sessions.session();
    check(&kept.call(&call));
    let second = sample(counts.wasm, || {}, || check(&kept.call(&call)));
    let warm = manager_of(module.with_warm(Warm {
        max_calls: 1_000_000,
    }));
    let warm_call = sample(counts.wasm, || {}, || check(&warm.call(&call)));
    println!(
        "| a session's first call (its instance made then) | {} |",
        cell(first)
    );
    println!("| a session's later call | {} |", cell(second));
    println!("| a warm module's call | {} |", cell(warm_call));
    println!(
        "\nA session's later call against a warm call: median {}, p99 {}.",
        ratio(second.median, warm_call.median),
        ratio(second.p99, warm_call.p99)
    );
}
