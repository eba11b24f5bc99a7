//! Instances made ahead of calls: each serves exactly one call, under the
//! call's full limits and its module's access, and they are bounded and
//! dropped when idle.

use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{Grants, Limits, PoolConfig, Runtime, ToolManager, WasmModule};

use toolhost_testkit::components;

use crate::common::{call, guest, logs_of, tight_limits};

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
    wait_until(module, |ready| ready == count, &format!("not {count}"));
}

/// Waits (up to 10 s) until `module`'s count of ready instances is `wanted`
/// (`what` says how, if it never is).
fn wait_until(module: &WasmModule, wanted: impl Fn(usize) -> bool, what: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while !wanted(module.ready_instances()) {
        assert!(
            Instant::now() < until,
            "{} ready instances, {what}",
            module.ready_instances()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Access to one environment variable, `UNITS=metric`.
fn units_access() -> toolhost::Access {
    let grants = Grants {
        env: [("UNITS".to_string(), "metric".to_string())].into(),
        ..Grants::default()
    };
    grants.resolve(std::path::Path::new(".")).unwrap()
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
    let granted = plain.clone().with_access(units_access());
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

/// The priming test guest as module `name`; with `interpreter`, it carries a
/// `producers` section naming ComponentizeJS, so that its instances made
/// ahead are primed (`call` called once with an empty tool name before
/// their call).
fn primed_guest(runtime: &Runtime, name: &str, limits: Limits, interpreter: bool) -> WasmModule {
    let mut bytes = std::fs::read(guest("guest-primed")).expect("the guest was built");
    if interpreter {
        let payload = components::producers_field("processed-by", &[("ComponentizeJS", "0.19.3")]);
        bytes = components::with_custom_section(bytes, "producers", &payload);
    }
    let module = WasmModule::from_bytes(runtime, name, &bytes, limits).expect("the guest loads");
    assert_eq!(
        module.producers().interpreter_sets_up_on_first_call(),
        interpreter
    );
    module
}

/// The answer of `tool` (with `arguments`) in an instance made ahead, and
/// the call's log lines (its stdout and stderr among them).
fn call_made_ahead(
    module: &WasmModule,
    manager: &ToolManager,
    tool: &str,
    arguments: serde_json::Value,
) -> (String, String) {
    wait_until(module, |ready| ready > 0, "none made ahead");
    logs_of(|| call(manager, tool, arguments))
}

#[test]
fn instances_of_an_interpreter_are_primed_and_their_calls_see_nothing_of_it() {
    let runtime = runtime_with(PoolConfig::default());
    let primed = primed_guest(&runtime, "p", tight_limits(), true);
    let plain = primed_guest(&runtime, "q", tight_limits(), false);
    let (primed_calls, plain_calls) = (manager_of(primed.clone()), manager_of(plain.clone()));
    for _ in 0..5 {
        // The primed instance had one call before this one, and what it
        // printed is not this call's.
        let (answer, logs) = call_made_ahead(&primed, &primed_calls, "p_calls_before", json!({}));
        assert_eq!(answer, "1");
        assert!(logs.contains("call of 'calls_before' (stdout)"), "{logs}");
        assert!(logs.contains("call of 'calls_before' (stderr)"), "{logs}");
        assert!(!logs.contains("call of ''"), "{logs}");
        let (answer, _) = call_made_ahead(&plain, &plain_calls, "q_calls_before", json!({}));
        assert_eq!(answer, "0");
    }
}

#[test]
fn a_primed_instance_gives_its_call_the_whole_fuel() {
    // The most rounds `spend` can do within the fuel, found by bisection in
    // instances made ahead: priming spends 200,000 rounds' worth, which is
    // given back. A primed call can even do a few rounds more: the guest's
    // own setup on its first export call (its constructors) was spent in
    // priming, not in the call.
    let limits = Limits {
        fuel: 20_000_000,
        ..tight_limits()
    };
    let most_rounds = |interpreter: bool| {
        let runtime = runtime_with(PoolConfig::default());
        let module = primed_guest(&runtime, "p", limits, interpreter);
        let manager = manager_of(module.clone());
        let (mut fits, mut fails) = (0u64, limits.fuel);
        while fails - fits > 1 {
            let rounds = fits + (fails - fits) / 2;
            let (answer, _) =
                call_made_ahead(&module, &manager, "p_spend", json!({ "rounds": rounds }));
            if answer == format!("spent {rounds} rounds") {
                fits = rounds;
            } else {
                assert!(answer.contains("ran out of fuel"), "{answer}");
                fails = rounds;
            }
        }
        fits
    };
    let (primed, plain) = (most_rounds(true), most_rounds(false));
    assert!(plain > 200_000, "{plain}");
    assert!(
        primed >= plain && primed - plain < 1_000,
        "{primed} vs {plain}"
    );
}

#[test]
fn instances_with_a_grant_are_not_primed() {
    let runtime = runtime_with(PoolConfig::default());
    let module = primed_guest(&runtime, "p", tight_limits(), true).with_access(units_access());
    let manager = manager_of(module.clone());
    for _ in 0..3 {
        let (answer, _) = call_made_ahead(&module, &manager, "p_calls_before", json!({}));
        assert_eq!(answer, "0");
    }
}

#[test]
fn instances_whose_only_grant_is_a_scratch_directory_are_primed() {
    let runtime = runtime_with(PoolConfig::default());
    let scratch = Grants {
        scratch: true,
        ..Grants::default()
    }
    .resolve(std::path::Path::new("."))
    .unwrap();
    let module = primed_guest(&runtime, "p", tight_limits(), true).with_access(scratch);
    let manager = manager_of(module.clone());
    for _ in 0..3 {
        let (answer, _) = call_made_ahead(&module, &manager, "p_calls_before", json!({}));
        assert_eq!(answer, "1", "primed: one call before, in its own instance");
    }
}

#[test]
fn a_module_whose_priming_fails_is_served_unprimed() {
    // Priming spends more fuel than a call may: it fails, and instances are
    // made without it from then on.
    let limits = Limits {
        fuel: 200_000,
        ..tight_limits()
    };
    let runtime = runtime_with(PoolConfig::default());
    let module = primed_guest(&runtime, "p", limits, true);
    let manager = manager_of(module.clone());
    // None was made ahead at load (its priming failed): this call makes
    // its own, and has the next ones made.
    assert_eq!(module.ready_instances(), 0);
    assert_eq!(call(&manager, "p_calls_before", json!({})), "0");
    for _ in 0..3 {
        let (answer, logs) = call_made_ahead(&module, &manager, "p_calls_before", json!({}));
        assert_eq!(answer, "0");
        assert!(!logs.contains("call of ''"), "{logs}");
    }
}
