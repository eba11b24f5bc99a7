//! What a tool module costs by the language it is written in.
//!
//! `cargo bench --bench languages` builds the Python, JavaScript and C
//! examples (as `cargo xtask build-examples` does), then for each example
//! module of every language measures, in one run: its size; loading it
//! without a cache (compile + `tool-info`, one load); loading it from the
//! compile cache (median of 5); and one call of a typical tool (median of
//! 30, a fresh sandboxed instance each). Ratios are to the Rust `calc`
//! module of the same run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::{Limits, Runtime, ToolManager, WasmModule, bundled_module};
use xtask::{Language, Repo, build_example};

/// An example module, and the call measured on it.
struct Case {
    language: &'static str,
    module: &'static str,
    tool: &'static str,
    arguments: Value,
}

fn cases() -> Vec<Case> {
    let case = |language, module, tool, arguments| Case {
        language,
        module,
        tool,
        arguments,
    };
    vec![
        case(
            "Rust",
            "calc",
            "calc_evaluate",
            json!({"expression": "2 * (3 + 4)"}),
        ),
        case(
            "Rust",
            "text",
            "text_word_count",
            json!({"text": "one two three"}),
        ),
        case(
            "Python",
            "stats",
            "stats_mean",
            json!({"numbers": [1, 2, 3, 4]}),
        ),
        case(
            "JavaScript",
            "url",
            "url_parse",
            json!({"url": "https://example.com/a?b=1"}),
        ),
        case("C", "hash", "hash_sha256", json!({"text": "abc"})),
    ]
}

/// The component's bytes: bundled (Rust) or built by the xtask.
fn component(repo: &Repo, module: &str) -> Vec<u8> {
    if let Some(bytes) = bundled_module(module) {
        return bytes.to_vec();
    }
    let language = Language::ALL
        .into_iter()
        .find(|l| l.example() == module)
        .expect("an example module");
    let path = build_example(repo, language).unwrap_or_else(|e| panic!("{e:#}"));
    std::fs::read(&path).expect("the component was just built")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Row {
    language: &'static str,
    module: &'static str,
    size: usize,
    compile: Duration,
    cached: Duration,
    call: Duration,
}

fn measure(repo: &Repo, case: &Case) -> Row {
    let bytes = component(repo, case.module);
    let load = |runtime: &Runtime| {
        let started = Instant::now();
        let module = WasmModule::from_bytes(runtime, case.module, &bytes, Limits::default())
            .unwrap_or_else(|e| panic!("{} loads: {e}", case.module));
        (module, started.elapsed())
    };
    let (module, compile) = load(&Runtime::new().expect("runtime"));

    let cache = tempfile::tempdir().expect("temp dir");
    let cached_runtime = Runtime::with_cache_dir(cache.path().join("cache")).expect("cache");
    load(&cached_runtime);
    let cached = median((0..5).map(|_| load(&cached_runtime).1).collect());

    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    let call = json!({"id": "c", "type": "function",
        "function": {"name": case.tool, "arguments": case.arguments.to_string()}});
    let first = manager.call(&call);
    assert!(!first.starts_with("Error:"), "{}: {first}", case.tool);
    let samples = (0..30)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(manager.call(&call));
            started.elapsed()
        })
        .collect();
    Row {
        language: case.language,
        module: case.module,
        size: bytes.len(),
        compile,
        cached,
        call: median(samples),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let repo = Repo::from_manifest_dir();
    let rows: Vec<Row> = cases().iter().map(|c| measure(&repo, c)).collect();
    let base = &rows[0];
    println!(
        "| language | module | size | load, compiling | load, cached | call (median) | call vs calc |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | `{}` | {:.2} MB | {:.0} ms ({:.1}x) | {:.1} ms ({:.1}x) | {:.0} µs | {:.1}x |",
            row.language,
            row.module,
            row.size as f64 / 1e6,
            millis(row.compile),
            row.compile.as_secs_f64() / base.compile.as_secs_f64(),
            millis(row.cached),
            row.cached.as_secs_f64() / base.cached.as_secs_f64(),
            row.call.as_secs_f64() * 1e6,
            row.call.as_secs_f64() / base.call.as_secs_f64(),
        );
    }
}
