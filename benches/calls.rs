//! What a call and a load cost.
//!
//! `cargo bench --bench calls` measures, in one run:
//! - `call/native`: dispatching to a native Rust tool (the floor);
//! - `call/wasm_calc`: dispatching `calc_evaluate`, a fresh sandboxed instance per call,
//!   back to back (on a machine with few cores the background that makes
//!   instances ahead falls behind, so a share of these calls make their
//!   instance themselves, and that share moves with timing from build to
//!   build);
//! - `made_ahead/echo` and `made_ahead/calc`: one call of `echo_echo`
//!   (tests/guests/guest-echo) and of `calc_evaluate` with an instance made
//!   ahead of it: before each (untimed), the bench waits until the module
//!   has one ready, so every timed call takes one;
//! - `warm/echo`: one call of `echo_echo` in a warm instance (`warm =
//!   true`), kept from the call before;
//! - `load/compile`: loading the `calc` component, compiling it;
//! - `load/cached`: loading it again through toolhost's on-disk compile cache.

#[path = "support/ready.rs"]
mod ready;

use std::hint::black_box;
use std::time::{Duration, Instant};

use ready::wait_until_ready;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolhost::{
    Arguments, Limits, Runtime, Tool, ToolError, ToolInfo, ToolManager, Warm, WasmModule,
    bundled_module,
};

struct Echo;

impl Tool for Echo {
    fn infos(&self) -> Vec<ToolInfo> {
        vec![ToolInfo::new(
            "echo",
            "Echoes.",
            ToolInfo::empty_parameters(),
        )]
    }

    fn call(&self, _name: &str, arguments: &Arguments) -> Result<String, ToolError> {
        Ok(Value::Object(arguments.object()?).to_string())
    }
}

fn calls(c: &mut Criterion) {
    let runtime = Runtime::new().expect("runtime");
    let calc = bundled_module("calc").expect("calc is bundled");
    let mut manager = ToolManager::new();
    manager.register(Echo).unwrap();
    manager
        .register(WasmModule::from_bytes(&runtime, "calc", calc, Limits::default()).unwrap())
        .unwrap();
    let native = json!({"id": "1", "type": "function", "function": {"name": "echo", "arguments": "{\"expression\": \"2 * (3 + 4)\"}"}});
    let wasm = json!({"id": "1", "type": "function", "function": {"name": "calc_evaluate", "arguments": "{\"expression\": \"2 * (3 + 4)\"}"}});
    assert_eq!(manager.call(&wasm), "14");
    let mut group = c.benchmark_group("call");
    group.bench_function("native", |b| b.iter(|| manager.call(black_box(&native))));
    group.bench_function("wasm_calc", |b| b.iter(|| manager.call(black_box(&wasm))));
    group.finish();
}

fn loads(c: &mut Criterion) {
    let calc = bundled_module("calc").expect("calc is bundled");
    let plain = Runtime::new().expect("runtime");
    let cached = Runtime::with_compile_cache().expect("cache");
    // Fill the cache once.
    WasmModule::from_bytes(&cached, "calc", calc, Limits::default()).unwrap();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("compile", |b| {
        b.iter(|| {
            WasmModule::from_bytes(&plain, "calc", black_box(calc), Limits::default()).unwrap()
        })
    });
    group.bench_function("cached", |b| {
        b.iter(|| {
            WasmModule::from_bytes(&cached, "calc", black_box(calc), Limits::default()).unwrap()
        })
    });
    group.finish();
}

fn made_ahead(c: &mut Criterion) {
    let runtime = Runtime::new().expect("runtime");
    let echo = std::fs::read(toolhost_testkit::guest("guest-echo")).expect("the echo guest");
    let calc = bundled_module("calc").expect("calc is bundled");
    let modules = [
        ("echo", &echo[..], "echo_echo", r#"{"text": "hello"}"#),
        (
            "calc",
            calc,
            "calc_evaluate",
            r#"{"expression": "2 * (3 + 4)"}"#,
        ),
    ];
    let mut group = c.benchmark_group("made_ahead");
    for (name, bytes, tool, arguments) in modules {
        let module = WasmModule::from_bytes(&runtime, name, bytes, Limits::default()).unwrap();
        let arguments = Arguments::from_json(arguments).unwrap();
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut took = Duration::ZERO;
                for _ in 0..iterations {
                    wait_until_ready(&runtime, &module);
                    let started = Instant::now();
                    black_box(module.call(tool, black_box(&arguments)).unwrap());
                    took += started.elapsed();
                }
                took
            })
        });
    }
    group.finish();
}

fn warm(c: &mut Criterion) {
    let runtime = Runtime::new().expect("runtime");
    let echo = std::fs::read(toolhost_testkit::guest("guest-echo")).expect("the echo guest");
    let module = WasmModule::from_bytes(&runtime, "echo", &echo, Limits::default())
        .unwrap()
        .with_warm(Warm::default());
    let arguments = Arguments::from_json(r#"{"text": "hello"}"#).unwrap();
    module.call("echo_echo", &arguments).unwrap();
    let mut group = c.benchmark_group("warm");
    group.bench_function("echo", |b| {
        b.iter(|| black_box(module.call("echo_echo", black_box(&arguments)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, calls, made_ahead, warm, loads);
criterion_main!(benches);
