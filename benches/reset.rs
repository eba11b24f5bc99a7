//! What a pooled instance costs in wasmtime itself, below toolhost:
//! `cargo bench --bench reset`. It exists to compare wasmtime versions (and
//! patches to them) on the part that decides a fresh instance's cost: how
//! the pooling allocator resets a slot's memory between instances.
//!
//! For each component (the echo test guest, the Python and JavaScript
//! examples) and each amount of memory kept resident per slot, it runs
//! rounds of: a store, an instance made from an `InstancePre` (timed), its
//! first call (timed, with the page faults the thread took and the fuel),
//! a second call on the same instance (timed, for scale), the store
//! dropped (timed). The Python and JavaScript examples are measured again
//! primed (`call` called once with an empty tool name after instantiation,
//! timed with it, and the fuel put back), as toolhost primes their
//! instances made ahead. The
//! engine is set up as toolhost's pooled engine is
//! (fuel, epoch interruption, the pooling allocator with copy-on-write
//! memory images, `PAGEMAP_SCAN` where the kernel has it, an empty WASI
//! context), so the figures move with the version of wasmtime it is built
//! against and nothing else. BENCHMARKS.md ("wasmtime 48 LTS or 50") shows
//! a run and how to build it against another version.

#[path = "support/faults.rs"]
mod faults;

use std::hint::black_box;

use faults::thread_faults;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Linker, ResourceTable};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{
    Error as HttpError, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks,
    WasiHttpView,
};
use xtask::{Language, Repo, build_example};

/// Set (to anything) for a quick run that only shows the bench works.
const QUICK_ENV: &str = "TOOLHOST_BENCH_QUICK";
/// Memory kept resident per slot: toolhost's default (which holds the Python
/// and JavaScript examples' whole dirty set), and 16 times that, where a
/// reset that resets more than the dirty pages shows in the drop.
const KEEP_RESIDENT_KIB: [usize; 2] = [1024, 16 * 1024];

/// A component, the call measured on it, and how many rounds.
#[derive(Clone)]
struct Case {
    name: String,
    path: PathBuf,
    tool: &'static str,
    arguments: &'static str,
    rounds: usize,
    /// Whether `call` is called once with an empty tool name after
    /// instantiation (timed with it) and the fuel put back, as toolhost
    /// primes an interpreter's instances made ahead.
    primed: bool,
}

struct State {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    no_http: NoHttp,
    table: ResourceTable,
}

impl State {
    fn new() -> Self {
        Self {
            wasi: WasiCtx::builder().build(),
            http: WasiHttpCtx::new(),
            no_http: NoHttp,
            table: ResourceTable::new(),
        }
    }
}

/// `wasi:http` linked (the examples import it) with every request denied.
struct NoHttp;

type Sent = (
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
);

impl WasiHttpHooks for NoHttp {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = Result<Sent, HttpError>> + Send> {
        Box::new(async { Err(HttpError::HttpRequestDenied) })
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.no_http,
        }
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Median and 99th percentile.
fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.99))
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// toolhost's pooled engine, keeping `keep_resident_kib` of each slot's
/// linear memory resident.
fn engine(keep_resident_kib: usize) -> Engine {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(16)
        .total_core_instances(16 * 16)
        .total_memories(32)
        .total_tables(64)
        .total_stacks(16)
        .max_memory_size(4 << 30)
        .table_elements(100_000)
        .max_core_instances_per_component(100)
        .max_memories_per_component(20)
        .max_tables_per_component(100)
        .max_memories_per_module(20)
        .max_tables_per_module(100)
        .linear_memory_keep_resident(keep_resident_kib * 1024)
        .table_keep_resident(1 << 20)
        .max_unused_warm_slots(16)
        .pagemap_scan(Enabled::Auto);
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(1 << 20)
        .async_stack_size(2 << 20)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config).expect("the engine")
}

/// What one round measured.
#[derive(Default)]
struct Samples {
    made: Vec<Duration>,
    first: Vec<Duration>,
    faults: Vec<u64>,
    dropped: Vec<Duration>,
    second: Vec<Duration>,
    fuel: Vec<(u64, u64)>,
}

impl Samples {
    /// The row's cells after the component and the setting.
    fn cells(mut self) -> String {
        self.faults.sort_unstable();
        self.fuel.sort_unstable();
        let (made, _) = percentiles(self.made);
        let (first, first_p99) = percentiles(self.first);
        let (dropped, _) = percentiles(self.dropped);
        let (second, _) = percentiles(self.second);
        let (fuel_first, fuel_second) = self.fuel[self.fuel.len() / 2];
        format!(
            "{} | {} (p99 {}) | {} | {} | {} | {} | {fuel_first} / {fuel_second}",
            us(made),
            us(first),
            us(first_p99),
            self.faults[self.faults.len() / 2],
            us(dropped),
            us(made + first + dropped),
            us(second)
        )
    }
}

/// `case`'s component made ready to instantiate in `engine`.
fn prepare(engine: &Engine, artifact: &[u8]) -> (InstancePre<State>, ComponentExportIndex) {
    // SAFETY: the artifact was made by `Engine::precompile_component` in
    // this process, with the same settings.
    let component = unsafe { Component::deserialize(engine, artifact) }.expect("deserializes");
    let mut linker = Linker::<State>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("WASI");
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).expect("wasi:http");
    let pre = linker.instantiate_pre(&component).expect("instantiate_pre");
    let call = component.get_export_index(None, "call").expect("`call`");
    (pre, call)
}

/// One round: a store, an instance, two calls, the store dropped.
async fn round(
    engine: &Engine,
    (pre, call): &(InstancePre<State>, ComponentExportIndex),
    case: &Case,
    samples: Option<&mut Samples>,
) {
    let started = Instant::now();
    let mut store = Store::new(engine, State::new());
    store.set_fuel(u64::MAX / 2).expect("fuel");
    store.set_epoch_deadline(1 << 40);
    let instance = pre.instantiate_async(&mut store).await.expect("instance");
    let func = instance
        .get_typed_func::<(&str, &str), (Result<String, String>,)>(&mut store, *call)
        .expect("the `call` export");
    if case.primed {
        let (answer,) = func
            .call_async(&mut store, ("", ""))
            .await
            .expect("priming");
        assert!(
            answer.is_err(),
            "{}: an empty tool name answered {answer:?}",
            case.name
        );
        store.set_fuel(u64::MAX / 2).expect("fuel");
    }
    let instantiated = Instant::now();
    let before = thread_faults();
    let calling = Instant::now();
    let (answer,) = func
        .call_async(&mut store, (case.tool, case.arguments))
        .await
        .expect("the call");
    let called = Instant::now();
    let faults = thread_faults().saturating_sub(before);
    assert!(answer.is_ok(), "{}: {answer:?}", case.name);
    black_box(answer.ok());
    let fuel_left = store.get_fuel().expect("fuel");
    let again = Instant::now();
    let (answer,) = func
        .call_async(&mut store, (case.tool, case.arguments))
        .await
        .expect("the second call");
    let second = again.elapsed();
    black_box(answer.ok());
    let fuel_second = fuel_left - store.get_fuel().expect("fuel");
    let dropping = Instant::now();
    drop(store);
    let dropped = dropping.elapsed();
    if let Some(samples) = samples {
        samples.made.push(instantiated - started);
        samples.first.push(called - calling);
        samples.faults.push(faults);
        samples.dropped.push(dropped);
        samples.second.push(second);
        samples.fuel.push((u64::MAX / 2 - fuel_left, fuel_second));
    }
}

/// The rows of `group` (builds of one tool's component, with the same
/// number of rounds), one per case and setting, their rounds interleaved
/// (one round of each case with each setting in turn) so that every row
/// sees the same noise.
async fn measure(engines: &[Engine], group: &[&Case]) -> Vec<Vec<String>> {
    let mut prepared = Vec::new();
    for case in group {
        let bytes = std::fs::read(&case.path).expect("the component was built");
        let artifact = engines[0].precompile_component(&bytes).expect("compiles");
        let each: Vec<_> = engines.iter().map(|e| prepare(e, &artifact)).collect();
        prepared.push(each);
    }
    let mut samples: Vec<Vec<Samples>> = group
        .iter()
        .map(|_| engines.iter().map(|_| Samples::default()).collect())
        .collect();
    let rounds = group[0].rounds;
    let warm_up = (rounds / 10).max(3);
    for n in 0..warm_up + rounds {
        for ((case, pres), samples) in group.iter().zip(&prepared).zip(&mut samples) {
            for ((engine, pre), samples) in engines.iter().zip(pres).zip(samples.iter_mut()) {
                round(engine, pre, case, (n >= warm_up).then_some(samples)).await;
            }
        }
    }
    samples
        .into_iter()
        .map(|rows| rows.into_iter().map(Samples::cells).collect())
        .collect()
}

fn main() {
    let quick = std::env::var_os(QUICK_ENV).is_some();
    // `TOOLHOST_RESET_ROUNDS=N`: N rounds of each case (for a profile).
    let fixed: Option<usize> = std::env::var("TOOLHOST_RESET_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok());
    let rounds = |full: usize| fixed.unwrap_or(if quick { 20 } else { full });
    let repo = Repo::from_manifest_dir();
    let example = |language| build_example(&repo, language).unwrap_or_else(|e| panic!("{e:#}"));
    let cases = [
        Case {
            name: "Rust echo".into(),
            path: toolhost_testkit::guest("guest-echo"),
            tool: "echo",
            arguments: r#"{"text": "hello"}"#,
            rounds: rounds(2_000),
            primed: false,
        },
        Case {
            name: "Python `stats_mean`".into(),
            path: example(Language::Python),
            tool: "mean",
            arguments: r#"{"numbers": [1, 2, 3, 4]}"#,
            rounds: rounds(300),
            primed: false,
        },
        Case {
            name: "JavaScript `url_parse`".into(),
            path: example(Language::JavaScript),
            tool: "parse",
            arguments: r#"{"url": "https://example.com/a?b=1"}"#,
            rounds: rounds(300),
            primed: false,
        },
    ];
    // `TOOLHOST_RESET_PYTHON_TOO=PATH` (`TOOLHOST_RESET_JS_TOO=PATH`):
    // another build of the Python (JavaScript) example, before a change to
    // it, say, measured in the same run, its rounds interleaved.
    let mut cases = Vec::from(cases);
    let also = [
        ("TOOLHOST_RESET_PYTHON_TOO", &cases[1]),
        ("TOOLHOST_RESET_JS_TOO", &cases[2]),
    ];
    let also: Vec<Case> = also
        .into_iter()
        .filter_map(|(variable, like)| {
            let path = std::env::var_os(variable)?;
            Some(Case {
                name: format!("{} ({variable})", like.name),
                path: path.into(),
                ..like.clone()
            })
        })
        .collect();
    cases.extend(also);
    // The interpreters again, primed as toolhost primes their instances
    // made ahead (`src/sandbox/ready.rs`).
    let primed: Vec<Case> = cases[1..3]
        .iter()
        .map(|like| Case {
            name: format!("{}, primed", like.name),
            primed: true,
            ..like.clone()
        })
        .collect();
    cases.extend(primed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio");
    println!("wasmtime pooled instances, below toolhost (one run; medians)\n");
    println!(
        "| component | kept resident | instantiate | first call | page faults in it | drop | \
         all three | a second call | fuel: instantiate and first call (primed: the first \
         call) / second call |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let engines = KEEP_RESIDENT_KIB.map(engine);
    // `TOOLHOST_RESET_ONLY=Python` measures only the cases whose name has it.
    let only = std::env::var("TOOLHOST_RESET_ONLY").unwrap_or_default();
    let chosen: Vec<&Case> = cases.iter().filter(|c| c.name.contains(&only)).collect();
    // Cases with as many rounds are measured together, interleaved.
    let mut groups: Vec<Vec<&Case>> = Vec::new();
    for case in chosen {
        match groups
            .iter_mut()
            .find(|g| g[0].rounds == case.rounds && g[0].tool == case.tool)
        {
            Some(group) => group.push(case),
            None => groups.push(vec![case]),
        }
    }
    for group in &groups {
        let rows = runtime.block_on(measure(&engines, group));
        for (case, rows) in group.iter().zip(rows) {
            for (keep, row) in KEEP_RESIDENT_KIB.iter().zip(rows) {
                println!("| {} | {} MiB | {row} |", case.name, keep / 1024);
            }
        }
    }
}
