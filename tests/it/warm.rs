//! Warm modules: long-lived instances reused across calls, with every limit
//! applied to each call, replaced after a fault, a limit or `max_calls`.

use serde_json::json;
use toolhost::{Limits, ToolManager, Warm, WasmModule};

use crate::common::{call, load_guest, logs_of, tight_limits};

fn warm_hostile(limits: Limits, max_calls: u64) -> WasmModule {
    load_guest("guest-hostile", "h", limits)
        .expect("hostile guest loads")
        .with_warm(Warm { max_calls })
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

/// The counter keeps a count in a static and on the heap: a warm instance
/// answers one more on each call.
fn counter(manager: &ToolManager) -> String {
    call(manager, "h_counter", json!({}))
}

#[test]
fn a_warm_instance_keeps_its_state_until_max_calls() {
    let module = warm_hostile(tight_limits(), 3);
    assert_eq!(module.warm(), Some(Warm { max_calls: 3 }));
    assert_eq!(module.ready_instances(), 0, "warm modules make none ahead");
    let manager = manager_of(module.clone());
    let answers: Vec<String> = (0..7).map(|_| counter(&manager)).collect();
    assert_eq!(
        answers,
        ["1 1", "2 2", "3 3", "1 1", "2 2", "3 3", "1 1"],
        "three calls per instance, then a fresh one"
    );
    assert_eq!(module.warm_instances(), 1);
}

#[test]
fn an_instance_that_faulted_or_hit_a_limit_is_replaced() {
    let module = warm_hostile(tight_limits(), 1000);
    let manager = manager_of(module);
    let faults = [
        ("h_trap", json!({})),
        ("h_spin", json!({})),
        ("h_membomb", json!({})),
        ("h_big_output", json!({"bytes": 100_000})),
        ("h_panic", json!({"text": "boom"})),
    ];
    assert_eq!(counter(&manager), "1 1");
    assert_eq!(counter(&manager), "2 2");
    for (tool, arguments) in faults {
        let answer = call(&manager, tool, arguments);
        assert!(answer.starts_with("Error: tool '"), "{tool}: {answer}");
        assert_eq!(counter(&manager), "1 1", "after {tool}: a fresh instance");
        assert_eq!(counter(&manager), "2 2", "after {tool}: kept again");
    }
    // The tool's own error is an answer, not a fault: the instance stays.
    let failed = call(&manager, "h_fail", json!({"text": "no"}));
    assert_eq!(failed, "Error: tool 'h_fail' failed: no");
    assert_eq!(counter(&manager), "3 3");
}

#[test]
fn fuel_and_time_start_afresh_for_every_call() {
    let limits = Limits {
        timeout_ms: 400,
        ..tight_limits()
    };
    let manager = manager_of(warm_hostile(limits, 1000));
    assert_eq!(counter(&manager), "1 1");
    // Together these take longer than the time limit, each well within it.
    for _ in 0..4 {
        assert_eq!(call(&manager, "h_sleep", json!({"ms": 150})), "woke up");
    }
    assert_eq!(counter(&manager), "2 2", "the same instance all along");
    // And each call is still bounded.
    assert_eq!(
        call(&manager, "h_sleep", json!({"ms": 5000})),
        "Error: tool 'h_sleep' exceeded its time limit of 400 ms."
    );
    // Fuel is checked with time to spare, so that a loaded machine's slow
    // spin cannot reach the time limit first.
    let limits = Limits {
        timeout_ms: 60_000,
        ..tight_limits()
    };
    let manager = manager_of(warm_hostile(limits, 1000));
    for _ in 0..3 {
        assert_eq!(
            call(&manager, "h_spin", json!({})),
            "Error: tool 'h_spin' ran out of fuel (limit 200000000)."
        );
        assert_eq!(counter(&manager), "1 1", "a fresh instance, fresh fuel");
    }
}

#[test]
fn the_memory_limit_bounds_a_warm_instance_over_its_calls() {
    let manager = manager_of(warm_hostile(tight_limits(), 1000));
    // 8 MiB kept per call: a few calls in, the instance reaches the 32 MiB
    // limit, and the guest is refused the memory (it answers its own error).
    let hoard = || call(&manager, "h_hoard", json!({"bytes": 8 << 20}));
    let mut answers = vec![hoard()];
    while answers.len() < 6 && !answers.last().unwrap().starts_with("Error") {
        answers.push(hoard());
    }
    assert_eq!(answers[0], "hoarded 8388608 bytes in all");
    assert!(answers.len() >= 3, "{answers:?}");
    let refused = answers.last().unwrap();
    assert!(
        refused.starts_with("Error: tool 'h_hoard' failed: cannot hoard 8388608 bytes more"),
        "{answers:?}"
    );
    // The instance that reached the limit is gone: the next starts afresh.
    assert_eq!(hoard(), "hoarded 8388608 bytes in all");
}

#[test]
fn each_call_captures_only_its_own_output() {
    let manager = manager_of(warm_hostile(tight_limits(), 1000));
    let (_, first) = logs_of(|| call(&manager, "h_print", json!({"text": "first-marker"})));
    let (_, second) = logs_of(|| call(&manager, "h_print", json!({"text": "second-marker"})));
    assert!(first.contains("first-marker"), "{first}");
    assert!(second.contains("second-marker"), "{second}");
    assert!(!second.contains("first-marker"), "{second}");
    assert_eq!(counter(&manager), "1 1", "h_print does not count");
}

#[test]
fn concurrent_calls_each_get_an_instance_of_their_own() {
    let module = warm_hostile(tight_limits(), 1000);
    let manager = manager_of(module.clone());
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let answer = counter(&manager);
                    let (calls, scratch) = answer.split_once(' ').expect("two counts");
                    assert_eq!(calls, scratch, "{answer}");
                    let calls: u64 = calls.parse().expect("a count");
                    assert!((1..=120).contains(&calls), "{answer}");
                }
            });
        }
    });
    assert!((1..=8).contains(&module.warm_instances()));
}

#[test]
fn warm_modules_from_the_config() {
    let text = format!(
        "[[modules]]\npath = \"{}\"\nname = \"h\"\nwarm = true\nmax_calls = 2\n",
        crate::common::guest("guest-hostile").display()
    );
    let config = toolhost::config::Config::from_toml(&text).expect("config parses");
    let loaded = toolhost::config::LoadedConfig {
        config,
        ..Default::default()
    };
    let manager = loaded
        .build_manager(crate::common::runtime())
        .expect("loads");
    let answers: Vec<String> = (0..3).map(|_| counter(&manager)).collect();
    assert_eq!(answers, ["1 1", "2 2", "1 1"]);

    let refused =
        toolhost::config::Config::from_toml("[[modules]]\nbundled = \"calc\"\nmax_calls = 5\n");
    assert!(
        refused
            .unwrap_err()
            .contains("`max_calls` applies to warm modules and modules with sessions only"),
        "max_calls alone"
    );
    let zero = toolhost::config::Config::from_toml(
        "[[modules]]\nbundled = \"calc\"\nwarm = true\nmax_calls = 0\n",
    );
    assert!(zero.unwrap_err().contains("`max_calls` must be between 1"));
}

#[test]
fn a_warm_module_given_access_stays_warm_with_new_instances() {
    let module = warm_hostile(tight_limits(), 1000);
    let manager = manager_of(module.clone());
    assert_eq!(counter(&manager), "1 1");
    let grants = toolhost::Grants {
        env: [("UNITS".to_string(), "metric".to_string())].into(),
        ..toolhost::Grants::default()
    };
    let granted = module.with_access(grants.resolve(std::path::Path::new(".")).unwrap());
    assert_eq!(granted.warm(), Some(Warm { max_calls: 1000 }));
    let granted = manager_of(granted);
    assert_eq!(call(&granted, "h_env", json!({})), "1 vars: UNITS=metric");
    assert_eq!(
        counter(&granted),
        "1 1",
        "instances of the old access are not used"
    );
    assert_eq!(counter(&granted), "2 2");
}

/// A warm call that finds the pool full (its one slot held by another
/// module's session) is served as a module that is not warm would be: in a
/// fresh instance made on demand, which is not kept.
#[test]
fn a_warm_call_past_a_full_pool_is_served_fresh() {
    use toolhost::{PoolConfig, Runtime};
    let runtime = Runtime::builder()
        .pool(PoolConfig {
            instances: 1,
            memories: 1,
            tables: 8,
            ready_per_module: 0,
            ..PoolConfig::default()
        })
        .build()
        .expect("runtime starts");
    let hostile = crate::common::guest("guest-hostile");
    let holder = WasmModule::from_file(&runtime, &hostile, Some("x"), tight_limits())
        .expect("hostile guest loads")
        .with_sessions(1000);
    let warm = WasmModule::from_file(&runtime, &hostile, Some("h"), tight_limits())
        .expect("hostile guest loads")
        .with_warm(Warm { max_calls: 1000 });
    assert!(warm.pooled());
    let mut manager = ToolManager::new();
    manager.register(holder.clone()).expect("registers");
    manager.register(warm.clone()).expect("registers");
    let hold = crate::common::tool_call("c", "x_counter", json!({}));
    // The session's instance takes the one slot.
    let session = crate::common::session_in_the_pool(&runtime, &manager, &holder, &hold, "1 1");
    let before = warm.calls_off_the_pool();
    assert_eq!(counter(&manager), "1 1");
    assert_eq!(counter(&manager), "1 1", "nothing was kept");
    assert_eq!(warm.calls_off_the_pool(), before + 2);
    assert_eq!(warm.warm_instances(), 0);
    assert_eq!(session.call(&hold), "2 2", "the session kept its slot");
}
