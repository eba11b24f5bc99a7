//! What isolation costs: `cargo bench --bench isolation` measures, in one
//! run, everything BENCHMARKS.md shows, and prints it as its tables.
//!
//! - a call of a trivial `echo` tool: native Rust, plain Python in-process
//!   dispatch (a script run by this bench), and the same tool as a
//!   component: a fresh instance allocated on demand, one from the tuned
//!   pool, one made ahead of the call, and a warm instance; median and p99
//!   of single calls, and the dispatch overhead of the manager;
//! - the same echo as a plain typed export (`echo: func(text: string) ->
//!   string` of tests/guests/guest-plain, arguments checked and converted
//!   by the host) beside echo through `tool-info`/`call`, isolated;
//! - the Python and JavaScript example tools, isolated (with the page
//!   faults of a made-ahead call, and calls 2 and 10 ms apart beside a
//!   pure-Python dispatch spaced the same way) and warm;
//! - code execution: one Python expression evaluated in a fresh sandbox
//!   per call, by a componentize-py `eval` tool (`tests/guests-py/eval`)
//!   and by pyeryx 0.11 (`TOOLHOST_PYERYX_PYTHON`; the row is skipped,
//!   saying so, where there is no pyeryx);
//! - calls per second through `call_many` on 1 and 2 threads, with how many
//!   cores the process kept busy meanwhile (its CPU time over the wall
//!   time: the instances are made and dropped on background threads);
//! - loading each example module, compiling and from the compile cache, and
//!   loading them all at once (start-up);
//! - resident memory per loaded module, its growth over 1,000,000 isolated
//!   echo calls, and over 100,000 isolated Python calls, after which the
//!   linear memory the pool holds is checked against the bound its
//!   settings give (`PoolConfig::resident_slots`).

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/faults.rs"]
mod faults;
#[path = "support/pyeryx.rs"]
mod pyeryx;
#[path = "support/ready.rs"]
mod ready;

use std::hint::black_box;

use cpu::process_cpu;
use faults::thread_faults;
use ready::wait_until_ready;
use std::path::{Path, PathBuf};

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::config::LoadedConfig;
use toolhost::{
    Arguments, Limits, PoolConfig, Runtime, Tool, ToolError, ToolInfo, ToolManager, Warm,
    WasmModule, bundled_module,
};
use xtask::{Language, Repo, build_example, build_python_component};

/// Set (to anything) for a quick run that only shows the bench works.
const QUICK_ENV: &str = "TOOLHOST_BENCH_QUICK";
/// Set to a comma-separated list of sections (`echo`, `languages`, `code`,
/// `throughput`, `loads`, `memory`) to run only those; a full run is one
/// run of every section, as BENCHMARKS.md shows it.
const ONLY_ENV: &str = "TOOLHOST_BENCH_ONLY";

/// Samples per measurement of a small call, and of a language runtime's.
struct Counts {
    small: usize,
    language: usize,
    throughput: usize,
    language_throughput: usize,
    long_run: usize,
    python_long_run: usize,
}

fn counts() -> Counts {
    if std::env::var_os(QUICK_ENV).is_some() {
        Counts {
            small: 200,
            language: 10,
            throughput: 1_000,
            language_throughput: 20,
            long_run: 20_000,
            python_long_run: 500,
        }
    } else {
        Counts {
            small: 20_000,
            language: 1_000,
            throughput: 40_000,
            language_throughput: 2_000,
            long_run: 1_000_000,
            python_long_run: 100_000,
        }
    }
}

// ------------------------------------------------------------ samples

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

/// `n` samples of `call` after `n / 10` (at least 3) unmeasured ones;
/// `prepare` runs before each, unmeasured.
fn sample(n: usize, prepare: impl FnMut(), call: impl FnMut() -> String) -> Stats {
    sample_around(n, prepare, call, || {})
}

/// [`sample`] with `after` run after each measured call, unmeasured too.
fn sample_around(
    n: usize,
    mut prepare: impl FnMut(),
    mut call: impl FnMut() -> String,
    mut after: impl FnMut(),
) -> Stats {
    for _ in 0..(n / 10).max(3) {
        prepare();
        call();
    }
    let samples = (0..n)
        .map(|_| {
            prepare();
            let started = Instant::now();
            black_box(call());
            let took = started.elapsed();
            after();
            took
        })
        .collect();
    Stats::of(samples)
}

fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 10.0 {
        format!("{us:.2} µs")
    } else {
        format!("{us:.0} µs")
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
}

// ------------------------------------------------------------ tools

/// The same work as the `echo` component, in native Rust: parse the
/// arguments, return the text.
struct NativeEcho;

impl Tool for NativeEcho {
    fn infos(&self) -> Vec<ToolInfo> {
        vec![ToolInfo::new(
            "native_echo",
            "Returns the text it is given.",
            ToolInfo::empty_parameters(),
        )]
    }

    fn call(&self, _name: &str, arguments: &Arguments) -> Result<String, ToolError> {
        let object = arguments.object()?;
        match object.get("text") {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(ToolError::failed("native_echo", "`text` must be a string")),
        }
    }
}

fn tool_call(name: &str, arguments: &Value) -> Value {
    json!({"id": "call_1", "type": "function",
           "function": {"name": name, "arguments": arguments.to_string()}})
}

fn echo_arguments() -> Value {
    json!({"text": "hello"})
}

fn runtime(pool: PoolConfig) -> Runtime {
    Runtime::builder().pool(pool).build().expect("runtime")
}

fn no_ready(pool: PoolConfig) -> PoolConfig {
    PoolConfig {
        ready_per_module: 0,
        ..pool
    }
}

fn manager_of(module: impl Tool + 'static) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

fn load(runtime: &Runtime, name: &str, bytes: &[u8]) -> WasmModule {
    WasmModule::from_bytes(runtime, name, bytes, Limits::default())
        .unwrap_or_else(|e| panic!("{name} loads: {e}"))
}

/// Samples `tool` on `module` with an instance made ahead of every call:
/// before each, the background is told to go on and the bench waits until
/// an instance is ready.
fn sample_ready(
    n: usize,
    runtime: &Runtime,
    module: &WasmModule,
    tool: &str,
    args: &Value,
) -> Stats {
    sample_ready_spaced(n, runtime, module, tool, args, Duration::ZERO).0
}

/// [`sample_ready`] with `gap` of sleep before each call (after its
/// instance is ready), as calls that come `gap` apart; also the median
/// page faults (minor and major) the calling thread took in a call.
fn sample_ready_spaced(
    n: usize,
    runtime: &Runtime,
    module: &WasmModule,
    tool: &str,
    args: &Value,
    gap: Duration,
) -> (Stats, u64) {
    let manager = manager_of(module.clone());
    let call = tool_call(tool, args);
    let wait = || {
        wait_until_ready(runtime, module);
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
    };
    let mut faults = Vec::with_capacity(n);
    let before = std::cell::Cell::new(0);
    let stats = sample_around(
        n,
        || {
            wait();
            before.set(thread_faults());
        },
        || manager.call(&call),
        || faults.push(thread_faults().saturating_sub(before.get())),
    );
    faults.sort_unstable();
    (stats, faults[faults.len() / 2])
}

/// Samples `tool` on `module` with `gap` of sleep before each call, as
/// calls that come `gap` apart (back to back when zero): the caller does
/// not wait for an instance made ahead.
fn sample_spaced(n: usize, module: &WasmModule, tool: &str, args: &Value, gap: Duration) -> Stats {
    let manager = manager_of(module.clone());
    let call = tool_call(tool, args);
    let pause = || {
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
    };
    sample(n, pause, || manager.call(&call))
}

fn sample_plain(n: usize, module: &WasmModule, tool: &str, args: &Value) -> Stats {
    let manager = manager_of(module.clone());
    let call = tool_call(tool, args);
    let first = manager.call(&call);
    assert!(!first.starts_with("Error"), "{tool}: {first}");
    sample(n, || {}, || manager.call(&call))
}

/// The plain-Python in-process dispatch of the same echo tool, as the
/// frameworks' own ToolManager does it: a dict lookup, `json.loads`, the
/// call. Timed per call in Python, by Python.
fn python_dispatch(n: usize) -> Stats {
    python_dispatch_spaced(n, Duration::ZERO)
}

/// [`python_dispatch`] with `gap` of sleep before each call (unmeasured).
fn python_dispatch_spaced(n: usize, gap: Duration) -> Stats {
    const SCRIPT: &str = r#"
import json, sys, time
class Echo:
    def __call__(self, tool_name, arguments):
        return arguments["text"]
tools = {"echo": Echo()}
def dispatch(tool_call):
    function = tool_call["function"]
    name = function["name"]
    tool = tools.get(name)
    if tool is None:
        return f"Error: unknown tool '{name}'"
    try:
        arguments = json.loads(function["arguments"])
    except Exception as e:
        return f"Error: invalid JSON in arguments: {e}"
    try:
        return str(tool(name, arguments))
    except Exception as e:
        return f"Error: {e}"
call = {"id": "call_1", "type": "function",
        "function": {"name": "echo", "arguments": json.dumps({"text": "hello"})}}
n = int(sys.argv[1])
gap = int(sys.argv[2]) / 1e9
clock = time.perf_counter_ns
for _ in range(n // 10 + 3):
    dispatch(call)
samples = []
for _ in range(n):
    if gap:
        time.sleep(gap)
    started = clock()
    dispatch(call)
    samples.append(clock() - started)
samples.sort()
print(samples[n // 2], samples[round((n - 1) * 0.99)])
"#;
    let output = Command::new("python3")
        .args(["-c", SCRIPT, &n.to_string(), &gap.as_nanos().to_string()])
        .output()
        .expect("python3 runs (the bench needs Python 3)");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let mut numbers = text
        .split_whitespace()
        .map(|t| t.parse::<u64>().expect("ns"));
    let mut next = || Duration::from_nanos(numbers.next().expect("two numbers"));
    Stats {
        median: next(),
        p99: next(),
    }
}

// ------------------------------------------------------------ memory

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// `RssAnon` of `/proc/self/status`: resident memory that is not a mapped
/// file (the compiled code and memory images are files).
fn anonymous_resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// `[start, end)` of each of this process's mappings.
fn mappings() -> Vec<(u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines().filter_map(mapping_range).collect()
}

/// The address range a `/proc/self/maps` or `smaps` mapping line starts
/// with (`None` for smaps' other lines).
fn mapping_range(line: &str) -> Option<(u64, u64)> {
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    Some((
        u64::from_str_radix(start, 16).ok()?,
        u64::from_str_radix(end, 16).ok()?,
    ))
}

/// The mappings of at least 1 GiB made since `before` was taken: the
/// reservations of a pool made since (its linear memories and tables).
fn reservations_since(before: &[(u64, u64)]) -> Vec<(u64, u64)> {
    mappings()
        .into_iter()
        .filter(|m| m.1 - m.0 >= 1 << 30 && !before.contains(m))
        .collect()
}

fn mib(bytes: i64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

// ------------------------------------------------------------ examples

/// An example tool of a language runtime, and the call measured on it.
struct Example {
    language: &'static str,
    module: &'static str,
    tool: &'static str,
    arguments: Value,
}

fn examples() -> Vec<Example> {
    vec![
        Example {
            language: "Python (componentize-py)",
            module: "stats",
            tool: "stats_mean",
            arguments: json!({"numbers": [1, 2, 3, 4]}),
        },
        Example {
            language: "JavaScript (ComponentizeJS)",
            module: "url",
            tool: "url_parse",
            arguments: json!({"url": "https://example.com/a?b=1"}),
        },
    ]
}

/// The component of example `module`: bundled (Rust) or built by the xtask.
fn example_bytes(repo: &Repo, module: &str) -> Vec<u8> {
    if let Some(bytes) = bundled_module(module) {
        return bytes.to_vec();
    }
    std::fs::read(example_path(repo, module)).expect("the component was built")
}

fn example_path(repo: &Repo, module: &str) -> PathBuf {
    let language = Language::ALL
        .into_iter()
        .find(|l| l.example() == module)
        .expect("an example module");
    build_example(repo, language).unwrap_or_else(|e| panic!("{e:#}"))
}

// ------------------------------------------------------------ the run

fn main() {
    let counts = counts();
    let repo = Repo::from_manifest_dir();
    let echo =
        std::fs::read(toolhost_testkit::guest("guest-echo")).expect("the echo guest was built");
    for example in examples() {
        example_path(&repo, example.module);
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("toolhost isolation benchmarks ({cores} cores, one run)\n");

    let only = std::env::var(ONLY_ENV).unwrap_or_default();
    let run = |section: &str| only.is_empty() || only.split(',').any(|s| s.trim() == section);
    if run("echo") {
        echo_calls(&counts, &echo);
    }
    if run("typed") {
        typed_export(&counts, &echo);
    }
    if run("languages") {
        language_calls(&counts, &repo);
    }
    if run("code") {
        code_execution(&counts, &repo);
    }
    if run("throughput") {
        throughput(&counts, &echo, &repo);
    }
    if run("loads") {
        loads(&repo, &echo);
    }
    if run("memory") {
        memory(&counts, &repo, &echo);
    }
}

/// The echo tool, every way it can run.
fn echo_calls(counts: &Counts, echo: &[u8]) {
    let n = counts.small;
    let args = echo_arguments();
    let python = python_dispatch(n);

    let native = NativeEcho;
    let native_manager = manager_of(NativeEcho);
    let native_call = tool_call("native_echo", &args);
    let native_stats = sample(n, || {}, || native_manager.call(&native_call));
    let native_arguments = Arguments::from_json(&args.to_string()).expect("JSON");
    let direct = sample(
        n,
        || {},
        || {
            native
                .call("native_echo", &native_arguments)
                .expect("echoes")
        },
    );

    let on_demand = runtime(no_ready(PoolConfig::disabled()));
    let on_demand_stats = sample_plain(n, &load(&on_demand, "echo", echo), "echo_echo", &args);
    let pooled = runtime(no_ready(PoolConfig::default()));
    let pooled_stats = sample_plain(n, &load(&pooled, "echo", echo), "echo_echo", &args);
    let ready = runtime(PoolConfig::default());
    let ready_module = load(&ready, "echo", echo);
    let ready_stats = sample_ready(n, &ready, &ready_module, "echo_echo", &args);
    let warm_module = load(&ready, "echo", echo).with_warm(Warm::default());
    let warm_stats = sample_plain(n, &warm_module, "echo_echo", &args);

    let rows = vec![
        (
            "native Rust tool, through the manager".to_string(),
            native_stats,
        ),
        (
            "plain Python in-process dispatch (dict lookup, json.loads, call)".into(),
            python,
        ),
        (
            "component, fresh instance, allocated on demand".into(),
            on_demand_stats,
        ),
        (
            "component, fresh instance, from the tuned pool".into(),
            pooled_stats,
        ),
        (
            "component, fresh instance made ahead of the call (pool)".into(),
            ready_stats,
        ),
        (
            "component, warm instance (`warm = true`)".into(),
            warm_stats,
        ),
    ];
    println!("## A call of a trivial echo tool ({n} calls each)\n");
    println!("| how it runs | median | p99 | median vs Python in-process |");
    println!("|---|---|---|---|");
    for (name, stats) in &rows {
        println!(
            "| {name} | {} | {} | {} |",
            us(stats.median),
            us(stats.p99),
            ratio(stats.median, python.median)
        );
    }
    let overhead = native_stats.median.saturating_sub(direct.median);
    println!(
        "\nManager dispatch overhead (through the manager minus calling the native tool \
         directly, medians): {} ({} vs {}).",
        us(overhead),
        us(native_stats.median),
        us(direct.median)
    );
    println!(
        "Isolated (made ahead) vs warm: {}; isolated (made ahead) vs plain Python: {}.\n",
        ratio(ready_stats.median, warm_stats.median),
        ratio(ready_stats.median, python.median)
    );
}

/// The same echo as a plain typed export and through `tool-info`/`call`,
/// each in a fresh instance (made ahead, and from the pool without), in
/// alternating rounds so that the machine's drift touches both alike.
fn typed_export(counts: &Counts, echo: &[u8]) {
    let n = counts.small;
    let args = echo_arguments();
    let plain = std::fs::read(toolhost_testkit::guest("guest-plain")).expect("guest-plain built");
    let ready = runtime(PoolConfig::default());
    let pooled = runtime(no_ready(PoolConfig::default()));
    let contract = (load(&ready, "echo", echo), load(&pooled, "echo", echo));
    let typed = (
        load(&ready, "plain", &plain),
        load(&pooled, "plain", &plain),
    );
    let rounds = 5;
    let (mut c_ready, mut t_ready, mut c_pool, mut t_pool) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        c_ready.push(sample_ready(
            n / rounds,
            &ready,
            &contract.0,
            "echo_echo",
            &args,
        ));
        t_ready.push(sample_ready(
            n / rounds,
            &ready,
            &typed.0,
            "plain_echo",
            &args,
        ));
        c_pool.push(sample_plain(n / rounds, &contract.1, "echo_echo", &args));
        t_pool.push(sample_plain(n / rounds, &typed.1, "plain_echo", &args));
    }
    let median = |v: &[Stats]| {
        let mut m: Vec<Duration> = v.iter().map(|s| s.median).collect();
        m.sort();
        m[m.len() / 2]
    };
    println!(
        "## Echo as a plain typed export vs through tool-info/call ({n} calls each, {rounds} alternating rounds)\n"
    );
    println!(
        "| fresh instance | tool-info/call (median of rounds) | typed export | typed vs tool-info/call |"
    );
    println!("|---|---|---|---|");
    for (name, c, t) in [
        ("made ahead of the call", &c_ready, &t_ready),
        ("from the pool", &c_pool, &t_pool),
    ] {
        let (c, t) = (median(c), median(t));
        println!("| {name} | {} | {} | {} |", us(c), us(t), ratio(t, c));
    }
    println!(
        "\nComponents: guest-echo {} bytes (toolhost's Rust SDK), guest-plain {} bytes \
         (wit-bindgen, 16 exported functions).\n",
        echo.len(),
        plain.len()
    );
}

/// Gaps between calls at which the made-ahead calls are also measured.
const GAPS: [Duration; 2] = [Duration::from_millis(2), Duration::from_millis(10)];

fn language_calls(counts: &Counts, repo: &Repo) {
    let n = counts.language;
    println!("## The example tools of language runtimes ({n} calls each)\n");
    println!(
        "| tool | fresh instance, made during the call | made ahead | page faults in a made-ahead \
         call (median) | made ahead, calls 2 ms apart | made ahead, calls 10 ms apart | warm |"
    );
    println!("|---|---|---|---|---|---|---|");
    let plain = runtime(no_ready(PoolConfig::default()));
    let ready = runtime(PoolConfig::default());
    let cell = |s: Stats| format!("{} (p99 {})", us(s.median), us(s.p99));
    for example in examples() {
        let bytes = example_bytes(repo, example.module);
        let args = &example.arguments;
        let fresh = sample_plain(n, &load(&plain, example.module, &bytes), example.tool, args);
        let module = load(&ready, example.module, &bytes);
        let (made_ahead, faults) =
            sample_ready_spaced(n, &ready, &module, example.tool, args, Duration::ZERO);
        let spaced =
            GAPS.map(|gap| sample_ready_spaced(n, &ready, &module, example.tool, args, gap).0);
        let warm = load(&ready, example.module, &bytes).with_warm(Warm::default());
        let warm = sample_plain(n, &warm, example.tool, args);
        println!(
            "| {} `{}` | {} | {} | {faults} | {} | {} | {} |",
            example.language,
            example.tool,
            cell(fresh),
            cell(made_ahead),
            cell(spaced[0]),
            cell(spaced[1]),
            cell(warm)
        );
    }
    let python = GAPS.map(|gap| python_dispatch_spaced(n, gap));
    println!(
        "| plain Python in-process dispatch of echo, for scale | | {} | | {} | {} | |",
        cell(python_dispatch(n)),
        cell(python[0]),
        cell(python[1])
    );
    println!();
}

/// The expression both sides of the code-execution row evaluate, and the
/// `repr` of its value.
const EXPRESSION: (&str, &str) = ("sum(i * i for i in range(10))", "285");

/// The `eval` test tool, built with componentize-py.
fn eval_component(repo: &Repo) -> Vec<u8> {
    let app = repo.root().join("tests/guests-py/eval");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-eval.wasm");
    let built = build_python_component(repo, &app, &[&repo.wit_dir()], "tool", &out)
        .unwrap_or_else(|e| panic!("{e:#}"));
    std::fs::read(built).expect("the eval component was built")
}

/// One Python expression in a fresh sandbox per call: toolhost's `eval`
/// tool (default `[pool]`: instances made ahead) against pyeryx's
/// `Sandbox.execute`, back to back and 2 ms apart.
fn code_execution(counts: &Counts, repo: &Repo) {
    let n = counts.language;
    let (expression, expected) = EXPRESSION;
    println!("## Code execution: `{expression}` in a fresh sandbox per call ({n} calls each)\n");
    let runtime = runtime(PoolConfig::default());
    let module = load(&runtime, "eval", &eval_component(repo));
    let args = json!({ "expression": expression });
    let answer = manager_of(module.clone()).call(&tool_call("eval_eval", &args));
    assert_eq!(answer, expected, "the eval tool's answer");
    let gaps = [Duration::ZERO, GAPS[0]];
    let toolhost = gaps.map(|gap| sample_spaced(n, &module, "eval_eval", &args, gap));
    let cell = |s: Stats| format!("{} (p99 {})", us(s.median), us(s.p99));
    println!("| sandbox | back to back | 2 ms apart |");
    println!("|---|---|---|");
    println!(
        "| toolhost, componentize-py `eval` tool | {} | {} |",
        cell(toolhost[0]),
        cell(toolhost[1])
    );
    let peer: Result<Vec<pyeryx::Measured>, String> = gaps
        .iter()
        .map(|gap| pyeryx::measure(expression, expected, n, *gap))
        .collect();
    match peer {
        Ok(peer) => {
            let cell = |m: &pyeryx::Measured| {
                cell(Stats {
                    median: m.median,
                    p99: m.p99,
                })
            };
            println!(
                "| pyeryx {} `Sandbox.execute` | {} | {} |",
                peer[0].version,
                cell(&peer[0]),
                cell(&peer[1])
            );
            let times = |m: &pyeryx::Measured, t: &Stats| {
                format!(
                    "{} (p99 {})",
                    ratio(m.median, t.median),
                    ratio(m.p99, t.p99)
                )
            };
            println!(
                "| pyeryx vs toolhost | {} | {} |\n",
                times(&peer[0], &toolhost[0]),
                times(&peer[1], &toolhost[1])
            );
        }
        Err(why) => println!(
            "\nThe pyeryx row is skipped: {why}. To include it: {}.\n",
            pyeryx::INSTALL
        ),
    }
}

fn throughput(counts: &Counts, echo: &[u8], repo: &Repo) {
    println!(
        "## Calls per second through `call_many` (default config: pool, instances made ahead)\n"
    );
    println!("| tool | calls | 1 thread | 2 threads | 2 vs 1 | cores busy: 1 thread, 2 threads |");
    println!("|---|---|---|---|---|---|");
    let runtime = runtime(PoolConfig::default());
    let stats = examples().into_iter().next().expect("the Python example");
    let stats_bytes = example_bytes(repo, stats.module);
    let cases = [
        (
            "echo",
            load(&runtime, "echo", echo),
            "echo_echo",
            echo_arguments(),
            counts.throughput,
        ),
        (
            "Python stats_mean",
            load(&runtime, stats.module, &stats_bytes),
            stats.tool,
            stats.arguments.clone(),
            counts.language_throughput,
        ),
    ];
    for (label, module, tool, args, n) in cases {
        let mut manager = manager_of(module);
        let calls: Vec<Value> = (0..n).map(|_| tool_call(tool, &args)).collect();
        let mut rates = Vec::new();
        let mut busy = Vec::new();
        for threads in [1, 2] {
            manager.set_max_parallel(threads);
            manager.call_many(&calls[..n / 10]);
            let (started, cpu) = (Instant::now(), process_cpu());
            let answers = manager.call_many(&calls);
            let elapsed = started.elapsed();
            busy.push((process_cpu() - cpu).as_secs_f64() / elapsed.as_secs_f64());
            assert!(
                answers
                    .iter()
                    .all(|a| !a["content"].as_str().unwrap_or("").starts_with("Error")),
                "{label}: a call failed"
            );
            rates.push(n as f64 / elapsed.as_secs_f64());
        }
        println!(
            "| {label} | {n} | {:.0}/s | {:.0}/s | {:.2}x | {:.2}, {:.2} |",
            rates[0],
            rates[1],
            rates[1] / rates[0],
            busy[0],
            busy[1]
        );
    }
    println!();
}

fn loads(repo: &Repo, echo: &[u8]) {
    println!("## Loading a module: compiling, and from the compile cache (median of 5)\n");
    println!("| module | size | compiling | cached | cached vs compiling |");
    println!("|---|---|---|---|---|");
    let cache = tempfile::tempdir().expect("temp dir");
    let modules: Vec<(&str, Vec<u8>)> = [
        ("echo", echo.to_vec()),
        ("calc", example_bytes(repo, "calc")),
        ("text", example_bytes(repo, "text")),
        ("stats", example_bytes(repo, "stats")),
        ("url", example_bytes(repo, "url")),
        ("hash", example_bytes(repo, "hash")),
    ]
    .into();
    let plain = Runtime::new().expect("runtime");
    let cached = Runtime::with_cache_dir(cache.path().join("cache")).expect("cache");
    for (name, bytes) in &modules {
        let timed = |runtime: &Runtime| {
            let started = Instant::now();
            load(runtime, name, bytes);
            started.elapsed()
        };
        let compile = timed(&plain);
        timed(&cached);
        let mut samples: Vec<Duration> = (0..5).map(|_| timed(&cached)).collect();
        samples.sort();
        let cached_time = samples[2];
        println!(
            "| `{name}` | {:.2} MB | {} | {} | 1/{:.0} |",
            bytes.len() as f64 / 1e6,
            ms(compile),
            ms(cached_time),
            compile.as_secs_f64() / cached_time.as_secs_f64()
        );
    }
    let config = repo.root().join("example-tools/toolhost.toml");
    let start = |dir: &Path| {
        let started = Instant::now();
        let runtime = Runtime::with_cache_dir(dir).expect("cache");
        let loaded = LoadedConfig::discover(Some(&config)).expect("the example config");
        let manager = loaded.build_manager(&runtime).expect("every example loads");
        let schemas = manager.tool_infos();
        (started.elapsed(), schemas.len())
    };
    let dir = cache.path().join("startup");
    start(&dir);
    let mut samples: Vec<Duration> = (0..5).map(|_| start(&dir).0).collect();
    samples.sort();
    let (_, tools) = start(&dir);
    println!(
        "\nStart-up with every example module cached (`example-tools/toolhost.toml`: runtime, \
         config, 6 modules, {tools} tool schemas; median of 5): {}.\n",
        ms(samples[2])
    );
}

fn memory(counts: &Counts, repo: &Repo, echo: &[u8]) {
    println!("## Resident memory\n");
    println!("| module | resident memory it adds when loaded |");
    println!("|---|---|");
    let runtime = runtime(PoolConfig::default());
    let mut kept = Vec::new();
    for name in ["echo", "calc", "text", "stats", "url", "hash"] {
        let bytes = if name == "echo" {
            echo.to_vec()
        } else {
            example_bytes(repo, name)
        };
        let before = resident_bytes();
        kept.push(load(&runtime, name, &bytes));
        std::thread::sleep(Duration::from_millis(200));
        let after = resident_bytes();
        println!("| `{name}` | {} |", mib(after as i64 - before as i64));
    }
    drop(kept);

    let module = load(&runtime, "echo", echo);
    let mut manager = manager_of(module);
    manager.set_max_parallel(2);
    let batch: Vec<Value> = (0..10_000)
        .map(|_| tool_call("echo_echo", &echo_arguments()))
        .collect();
    manager.call_many(&batch);
    let before = resident_bytes();
    let started = Instant::now();
    let mut done = 0;
    while done < counts.long_run {
        manager.call_many(&batch);
        done += batch.len();
    }
    let elapsed = started.elapsed();
    let after = resident_bytes();
    println!(
        "\nResident memory over {done} isolated echo calls (2 threads, after 10,000 to warm up): \
         {} before, {} after, growth {} ({:.0} calls/s).",
        mib(before as i64),
        mib(after as i64),
        mib(after as i64 - before as i64),
        done as f64 / elapsed.as_secs_f64()
    );
    drop(manager);
    drop(runtime);
    python_memory(counts, repo);
}

/// The anonymous resident memory over many isolated Python calls, at each
/// quarter of them, and then the linear memory the pool holds, slot by
/// slot, against the bound its settings give.
fn python_memory(counts: &Counts, repo: &Repo) {
    let stats = examples().into_iter().next().expect("the Python example");
    let bytes = example_bytes(repo, stats.module);
    let before_pool = mappings();
    let pool = PoolConfig::default();
    let runtime = runtime(pool.clone());
    let reservations = reservations_since(&before_pool);
    let module = load(&runtime, stats.module, &bytes);
    let mut manager = manager_of(module);
    let threads = 2;
    manager.set_max_parallel(threads);
    let batch: Vec<Value> = (0..1_000.min(counts.python_long_run))
        .map(|_| tool_call(stats.tool, &stats.arguments))
        .collect();
    let before = anonymous_resident_bytes();
    let started = Instant::now();
    let mut done = 0;
    let mut checkpoints = Vec::new();
    while done < counts.python_long_run {
        let answers = manager.call_many(&batch);
        assert!(
            answers
                .iter()
                .all(|a| !a["content"].as_str().unwrap_or("").starts_with("Error")),
            "a Python call failed"
        );
        done += batch.len();
        if done % (counts.python_long_run / 4).max(1) == 0 {
            checkpoints.push(format!(
                "{} after {done}",
                mib(anonymous_resident_bytes() as i64 - before as i64)
            ));
        }
    }
    let elapsed = started.elapsed();
    let after = anonymous_resident_bytes();
    let growth = after as i64 - before as i64;
    println!(
        "Anonymous resident memory of the process (RssAnon) over {done} isolated Python `{}` \
         calls (2 threads, default [pool]): {} before the first, {} after the last, growth {} \
         ({:.0} calls/s).",
        stats.tool,
        mib(before as i64),
        mib(after as i64),
        mib(growth),
        done as f64 / elapsed.as_secs_f64(),
    );
    println!("Growth along the way: {}.", checkpoints.join(", "));
    // Let the background drop the last used stores first.
    std::thread::sleep(Duration::from_millis(300));
    pool_memory(&pool, threads as u32, &reservations);
}

/// The linear memory `pool`'s slots hold (`reservations`: its mappings),
/// slot by slot, against the bound its settings give for one module with
/// `calls_in_flight` calls at a time ([`PoolConfig::resident_slots`]).
fn pool_memory(pool: &PoolConfig, calls_in_flight: u32, reservations: &[(u64, u64)]) {
    // The memory pool is the largest reservation: `memories` slots of
    // equal size.
    let Some(&(start, end)) = reservations.iter().max_by_key(|(a, b)| b - a) else {
        println!("The pool's reservations were not found in /proc/self/maps.");
        return;
    };
    let stride = (end - start) / u64::from(pool.memories);
    let mut per_slot = std::collections::BTreeMap::<u64, u64>::new();
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut slot = None;
    for line in smaps.lines() {
        if let Some((at, _)) = mapping_range(line) {
            slot = (start..end).contains(&at).then(|| (at - start) / stride);
            continue;
        }
        let value = line
            .strip_prefix("Anonymous:")
            .or_else(|| line.strip_prefix("Swap:"));
        if let (Some(slot), Some(value)) = (slot, value) {
            let kib: u64 = value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
            *per_slot.entry(slot).or_default() += kib * 1024;
        }
    }
    per_slot.retain(|_, bytes| *bytes > 0);
    let held: u64 = per_slot.values().sum();
    let largest = per_slot.values().copied().max().unwrap_or(0);
    let keep = u64::from(pool.keep_resident_kib) * 1024;
    let slots = pool.resident_slots(calls_in_flight);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bound = u64::from(slots) * keep.max(largest);
    println!(
        "Linear memory the pool holds after the last call (anonymous, resident or swapped, \
         from /proc/self/smaps): {} in {} slots, the largest {}. Bound from the settings \
         (`PoolConfig::resident_slots`: one wasmtime shard per core, {cores} here, each with \
         up to ({calls_in_flight} calls in flight + {} made ahead + {} used stores waiting to \
         be dropped) in use, + {} warm slots) = {slots} slots x {} (`keep_resident_kib`, or \
         the largest slot if larger) = {}: {}.",
        mib(held as i64),
        per_slot.len(),
        mib(largest as i64),
        pool.ready_per_module,
        PoolConfig::MAX_STORES_AWAITING_DROP,
        pool.warm_slots,
        mib(keep.max(largest) as i64),
        mib(bound as i64),
        if held <= bound {
            "within it"
        } else {
            "OVER IT"
        },
    );
}
