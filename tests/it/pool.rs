//! The instance pool: modules use it when they fit, a full pool overflows
//! to instances allocated on demand, and isolation is the same either way.

use std::sync::Arc;

use serde_json::json;
use toolhost::{Limits, PoolConfig, Runtime, Tool, ToolManager, WasmModule, bundled_module};

use crate::common::{call, guest, tight_limits, tool_call};

/// A runtime whose pool holds `instances` component instances.
fn runtime_with(pool: PoolConfig) -> Runtime {
    Runtime::builder()
        .pool(pool)
        .build()
        .expect("runtime starts")
}

fn tiny_pool() -> PoolConfig {
    PoolConfig {
        instances: 2,
        memories: 4,
        tables: 8,
        ..PoolConfig::default()
    }
}

fn hostile_in(runtime: &Runtime, limits: Limits) -> WasmModule {
    WasmModule::from_file(runtime, &guest("guest-hostile"), Some("h"), limits)
        .expect("hostile guest loads")
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

#[test]
fn modules_that_fit_take_instances_from_the_pool() {
    let runtime = runtime_with(PoolConfig::default());
    let calc = bundled_module("calc").expect("calc is bundled");
    let module = WasmModule::from_bytes(&runtime, "calc", calc, Limits::default()).unwrap();
    assert!(module.pooled());
    let manager = manager_of(module);
    assert_eq!(
        call(&manager, "calc_evaluate", json!({"expression": "6 * 7"})),
        "42"
    );
}

#[test]
fn a_module_allowed_larger_tables_than_a_slot_runs_on_demand() {
    let runtime = runtime_with(PoolConfig::default());
    let limits = Limits {
        max_table_elements: 200_000,
        ..tight_limits()
    };
    let module = hostile_in(&runtime, limits);
    assert!(!module.pooled());
    let manager = manager_of(module);
    assert_eq!(call(&manager, "h_add", json!({"a": 2, "b": 3})), "5");
}

#[test]
fn with_the_pool_off_every_instance_is_made_on_demand() {
    let runtime = runtime_with(PoolConfig::disabled());
    let module = hostile_in(&runtime, tight_limits());
    assert!(!module.pooled());
    let manager = manager_of(module);
    assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
    assert_eq!(
        call(&manager, "h_membomb", json!({})),
        "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."
    );
}

#[test]
fn calls_past_a_full_pool_run_on_demand_and_all_succeed() {
    let runtime = runtime_with(tiny_pool());
    let module = hostile_in(&runtime, tight_limits());
    assert!(module.pooled());
    let manager = Arc::new(manager_of(module));
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Twelve calls asleep at once in a pool of two instances: ten of them
    // cannot have a slot.
    let answers = tokio.block_on(async {
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let manager = Arc::clone(&manager);
                let (tool, arguments) = match i % 3 {
                    0 => ("h_sleep", json!({"ms": 300})),
                    1 => ("h_counter", json!({})),
                    _ => ("h_membomb", json!({})),
                };
                let call = tool_call("c", tool, json!(arguments.to_string()));
                tokio::spawn(async move { (tool, manager.call_async(&call).await) })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.expect("no task panicked"));
        }
        answers
    });
    for (tool, answer) in answers {
        let expected = match tool {
            "h_sleep" => "woke up",
            "h_counter" => "1 1",
            _ => "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB.",
        };
        assert_eq!(answer, expected, "{tool}");
    }
}

#[test]
fn reused_slots_start_fresh() {
    // Two slots, used over and over: memory a call wrote is gone in the
    // next call, and a memory bomb leaves nothing behind.
    let runtime = runtime_with(tiny_pool());
    let manager = manager_of(hostile_in(&runtime, tight_limits()));
    for _ in 0..20 {
        assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
        assert_eq!(
            call(&manager, "h_membomb", json!({})),
            "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."
        );
    }
    assert_eq!(call(&manager, "h_add", json!({"a": 1, "b": 1})), "2");
}

#[test]
fn a_bad_pool_size_is_refused_by_name() {
    let error = Runtime::builder()
        .pool(PoolConfig {
            tables: 0,
            ..PoolConfig::default()
        })
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("`tables`"), "{error}");
    let config = toolhost::config::Config::from_toml("[pool]\ninstances = 0\n").unwrap_err();
    assert!(config.contains("[pool]: `instances`"), "{config}");
    let unknown = toolhost::config::Config::from_toml("[pool]\nslots = 3\n").unwrap_err();
    assert!(unknown.contains("slots"), "{unknown}");
    let parsed = toolhost::config::Config::from_toml("[pool]\nenabled = false\n").unwrap();
    assert!(!parsed.pool.enabled);
}

#[test]
fn module_infos_are_the_same_pooled_or_not() {
    let pooled = hostile_in(&runtime_with(tiny_pool()), tight_limits());
    let on_demand = hostile_in(&runtime_with(PoolConfig::disabled()), tight_limits());
    assert_eq!(pooled.infos(), on_demand.infos());
}
