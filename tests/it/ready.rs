//! Instances made ahead of calls: each serves exactly one call, under the
//! call's full limits and its module's access, and they are bounded and
//! dropped when idle.

use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{Grants, Limits, PoolConfig, Runtime, ToolManager, WasmModule};

use crate::common::{call, guest, tight_limits};

fn runtime_with(pool: PoolConfig) -> Runtime {
    Runtime::builder()
        .pool(pool)
        .build()
        .expect("runtime starts")
}

fn hostile_in(runtime: &Runtime, name: &str, limits: Limits) -> WasmModule {
    WasmModule::from_file(runtime, &guest("guest-hostile"), Some(name), limits)
        .expect("hostile guest loads")
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

/// Waits (up to 10 s) until `module` has `count` ready instances.
fn wait_for_ready(module: &WasmModule, count: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while module.ready_instances() != count {
        assert!(
            Instant::now() < until,
            "{} ready instances, not {count}",
            module.ready_instances()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_first_call_finds_an_instance_made_at_load_and_the_shelf_refills() {
    let runtime = runtime_with(PoolConfig::default());
    let module = hostile_in(&runtime, "h", tight_limits());
    assert_eq!(module.ready_instances(), 1);
    let manager = manager_of(module.clone());
    assert_eq!(call(&manager, "h_add", json!({"a": 2, "b": 3})), "5");
    wait_for_ready(&module, 2);
}

#[test]
fn no_ready_instance_serves_two_calls() {
    // The counter keeps a count in a static and on the heap: a reused
    // instance would answer "2 2".
    for pool in [PoolConfig::default(), PoolConfig::disabled()] {
        let runtime = runtime_with(pool);
        let module = hostile_in(&runtime, "h", tight_limits());
        let manager = manager_of(module.clone());
        for _ in 0..30 {
            assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
            wait_for_ready(&module, 2);
        }
    }
}

#[test]
fn a_ready_instance_gives_its_call_the_whole_timeout() {
    let limits = Limits {
        timeout_ms: 400,
        ..tight_limits()
    };
    let runtime = runtime_with(PoolConfig::default());
    let module = hostile_in(&runtime, "h", limits);
    let manager = manager_of(module.clone());
    // Made long before the call: its time starts when the call does.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(module.ready_instances(), 1);
    assert_eq!(call(&manager, "h_sleep", json!({"ms": 250})), "woke up");
    // And the deadline still holds.
    wait_for_ready(&module, 2);
    assert_eq!(
        call(&manager, "h_sleep", json!({"ms": 5000})),
        "Error: tool 'h_sleep' exceeded its time limit of 400 ms."
    );
}

#[test]
fn limits_hold_in_ready_instances() {
    let runtime = runtime_with(PoolConfig::default());
    let module = hostile_in(&runtime, "h", tight_limits());
    let manager = manager_of(module.clone());
    let cases = [
        (
            "h_spin",
            "Error: tool 'h_spin' ran out of fuel (limit 200000000).",
        ),
        (
            "h_membomb",
            "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB.",
        ),
    ];
    for (tool, expected) in cases {
        assert_eq!(call(&manager, tool, json!({})), expected);
        wait_for_ready(&module, 2);
    }
    assert_eq!(call(&manager, "h_add", json!({"a": 1, "b": 1})), "2");
}

#[test]
fn instances_made_for_one_access_never_serve_another() {
    let runtime = runtime_with(PoolConfig::default());
    let plain = hostile_in(&runtime, "h", tight_limits());
    assert_eq!(plain.ready_instances(), 1);
    let grants = Grants {
        env: [("UNITS".to_string(), "metric".to_string())].into(),
        ..Grants::default()
    };
    let access = grants.resolve(std::path::Path::new(".")).unwrap();
    let granted = plain.clone().with_access(access);
    assert_eq!(granted.ready_instances(), 1);
    let granted = manager_of(granted);
    let plain = manager_of(plain);
    for _ in 0..3 {
        assert_eq!(call(&granted, "h_env", json!({})), "1 vars: UNITS=metric");
        assert_eq!(call(&plain, "h_env", json!({})), "0 vars: ");
    }
}

#[test]
fn idle_ready_instances_are_dropped() {
    let runtime = runtime_with(PoolConfig {
        ready_idle_ms: 200,
        ..PoolConfig::default()
    });
    let module = hostile_in(&runtime, "h", tight_limits());
    let manager = manager_of(module.clone());
    assert_eq!(call(&manager, "h_add", json!({"a": 1, "b": 2})), "3");
    wait_for_ready(&module, 0);
    // A call after that makes its own instance, and the shelf fills again.
    assert_eq!(call(&manager, "h_add", json!({"a": 2, "b": 2})), "4");
    wait_for_ready(&module, 2);
}

#[test]
fn ready_instances_are_bounded_in_all_and_can_be_turned_off() {
    let runtime = runtime_with(PoolConfig {
        ready_total: 3,
        ..PoolConfig::default()
    });
    let modules: Vec<WasmModule> = ["a", "b", "c"]
        .into_iter()
        .map(|name| hostile_in(&runtime, name, tight_limits()))
        .collect();
    let mut manager = ToolManager::new();
    for module in &modules {
        manager.register(module.clone()).unwrap();
    }
    for name in ["a", "b", "c"] {
        let tool = format!("{name}_add");
        assert_eq!(call(&manager, &tool, json!({"a": 1, "b": 1})), "2");
    }
    std::thread::sleep(Duration::from_millis(300));
    let ready: usize = modules.iter().map(WasmModule::ready_instances).sum();
    assert!(ready <= 3, "{ready} ready instances past a total of 3");

    let off = runtime_with(PoolConfig {
        ready_per_module: 0,
        ..PoolConfig::default()
    });
    let module = hostile_in(&off, "h", tight_limits());
    let manager = manager_of(module.clone());
    assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(module.ready_instances(), 0);
}

#[test]
fn bad_ready_settings_are_refused_by_name() {
    let config = toolhost::config::Config::from_toml("[pool]\nready_per_module = 1000\n");
    assert!(
        config.unwrap_err().contains("`ready_per_module`"),
        "per module"
    );
    let config = toolhost::config::Config::from_toml("[pool]\nready_idle_ms = 5\n");
    assert!(config.unwrap_err().contains("`ready_idle_ms`"), "idle");
}
