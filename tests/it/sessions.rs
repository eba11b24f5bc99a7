//! Sessions: a module with `sessions = true` runs each session's calls in
//! that session's own instance, never another's; calls without a session
//! stay fresh; instances are bounded (`[sessions] max`, `idle_ms`,
//! `max_calls`) and dropped after a fault, and a session whose state was
//! reset is told so.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::{Limits, Runtime, SessionId, SessionLimits, ToolErrorKind, ToolManager, WasmModule};

use crate::common::{call, guest, session_in_the_pool, tight_limits, tool_call};

/// The hostile guest (whose `counter` counts its instance's calls) as
/// module `h` of `runtime`, with sessions whose instances serve at most
/// `max_calls` calls each.
fn counting(runtime: &Runtime, max_calls: u64, limits: Limits) -> ToolManager {
    let module = WasmModule::from_file(runtime, &guest("guest-hostile"), Some("h"), limits)
        .expect("hostile guest loads")
        .with_sessions(max_calls);
    assert_eq!(module.sessions(), Some(max_calls));
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

fn counter_call() -> Value {
    tool_call("c", "h_counter", json!({}))
}

/// A runtime of its own, with sessions bounded by `limits`.
fn runtime_with(limits: SessionLimits) -> Runtime {
    Runtime::builder()
        .sessions(limits)
        .build()
        .expect("runtime starts")
}

#[test]
fn a_session_keeps_its_instance_and_others_never_see_it() {
    let manager = counting(crate::common::runtime(), 1000, tight_limits());
    let a = manager.session();
    let b = manager.session();
    assert_eq!(a.call(&counter_call()), "1 1");
    assert_eq!(a.call(&counter_call()), "2 2");
    assert_eq!(
        b.call(&counter_call()),
        "1 1",
        "b has an instance of its own"
    );
    assert_eq!(a.call(&counter_call()), "3 3");
    // Calls without a session stay fresh.
    assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
    assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
    // Every dispatch form carries the session.
    assert_eq!(a.call_json(&counter_call().to_string()), "4 4");
    assert_eq!(
        a.call_tool("h_counter", None).as_deref(),
        Ok("5 5"),
        "call_tool"
    );
    let answers = a.call_many(&[counter_call(), counter_call()]);
    let mut contents: Vec<&str> = answers
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    contents.sort();
    assert_eq!(
        contents,
        ["6 6", "7 7"],
        "one after another in its instance"
    );
    let message = json!({"role": "assistant", "tool_calls": [counter_call()]});
    assert_eq!(a.call_message(&message).unwrap()[0]["content"], "8 8");
    let clock = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(clock.block_on(a.call_async(&counter_call())), "9 9");
    assert_eq!(
        clock.block_on(a.call_message_async(&message)).unwrap()[0]["content"],
        "10 10"
    );
}

#[test]
fn an_ended_session_starts_afresh() {
    let manager = counting(crate::common::runtime(), 1000, tight_limits());
    let id = SessionId::new();
    let joined = manager.join_session(id.clone());
    assert_eq!(joined.call(&counter_call()), "1 1");
    drop(joined);
    let again = manager.join_session(id.clone());
    assert_eq!(
        again.call(&counter_call()),
        "2 2",
        "joining does not end it"
    );
    manager.end_session(&id);
    assert_eq!(
        again.call(&counter_call()),
        "1 1",
        "ended: a fresh instance"
    );
    let owned = manager.session();
    let owned_id = owned.id().clone();
    assert_eq!(owned.call(&counter_call()), "1 1");
    assert_eq!(owned.call(&counter_call()), "2 2");
    drop(owned);
    assert_eq!(
        manager.join_session(owned_id).call(&counter_call()),
        "1 1",
        "dropping a session from session() ends it"
    );
}

#[test]
fn a_fault_drops_the_sessions_instance_and_says_so() {
    let manager = counting(crate::common::runtime(), 1000, tight_limits());
    let session = manager.session();
    let faults = [
        ("h_trap", json!({})),
        ("h_spin", json!({})),
        ("h_membomb", json!({})),
        ("h_big_output", json!({"bytes": 100_000})),
    ];
    for (tool, arguments) in faults {
        manager.end_session(session.id());
        assert_eq!(session.call(&counter_call()), "1 1", "before {tool}");
        assert_eq!(session.call(&counter_call()), "2 2", "before {tool}");
        let answer = session.call(&tool_call("f", tool, arguments));
        assert!(answer.starts_with("Error: tool '"), "{tool}: {answer}");
        assert!(
            answer.ends_with(
                "(this session's state was dropped with its instance; the next call starts afresh)"
            ),
            "{tool}: {answer}"
        );
        assert_eq!(session.call(&counter_call()), "1 1", "after {tool}: fresh");
    }
    // The guest's own error keeps the instance.
    assert_eq!(session.call(&counter_call()), "2 2");
    let own = session.call(&tool_call("e", "h_fail", json!({"text": "no"})));
    assert!(!own.contains("dropped"), "{own}");
    assert_eq!(session.call(&counter_call()), "3 3");
}

#[test]
fn the_least_recently_used_session_is_evicted_and_told() {
    let runtime = runtime_with(SessionLimits {
        max: 2,
        ..SessionLimits::default()
    });
    let manager = counting(&runtime, 1000, tight_limits());
    let (a, b, c) = (manager.session(), manager.session(), manager.session());
    assert_eq!(a.call(&counter_call()), "1 1");
    assert_eq!(b.call(&counter_call()), "1 1");
    assert_eq!(a.call(&counter_call()), "2 2", "a is now the most recent");
    assert_eq!(c.call(&counter_call()), "1 1", "c evicts b");
    assert_eq!(runtime.live_sessions(), 2);
    let reset = b.try_call(&counter_call()).unwrap_err();
    assert_eq!(reset.kind(), ToolErrorKind::SessionReset);
    assert_eq!(
        reset.to_string(),
        "Error: tool 'h_counter' was not run: this session's state was reset to make room for \
         newer sessions (at most 2 session instances are kept, [sessions] max); its variables \
         and files are gone. Call again to start the session afresh."
    );
    assert_eq!(b.call(&counter_call()), "1 1", "then b starts afresh");
    assert!(
        a.call(&counter_call()).contains("was reset to make room"),
        "b's return evicted a"
    );
    assert_eq!(c.call(&counter_call()), "2 2", "c lives on");
}

/// A session whose state was dropped to make room is told at its next
/// call however many sessions came after it (here ten times what the store
/// keeps, five times what it recalls): its key carries the note. A key
/// joined again keeps being told; a brand-new session's first call runs.
#[test]
fn a_reset_session_is_told_however_many_sessions_came_after() {
    let runtime = runtime_with(SessionLimits {
        max: 4,
        ..SessionLimits::default()
    });
    let manager = counting(&runtime, 1000, tight_limits());
    let waiting = manager.session();
    assert_eq!(waiting.call(&counter_call()), "1 1");
    let joined = SessionId::new();
    assert_eq!(
        manager.join_session(joined.clone()).call(&counter_call()),
        "1 1"
    );
    for i in 0..40 {
        // Joined, so that each outlives its value and takes a place.
        let newer = manager.join_session(SessionId::new());
        assert_eq!(newer.call(&counter_call()), "1 1", "newer session {i}");
    }
    assert_eq!(runtime.live_sessions(), 4);
    let told = waiting.try_call(&counter_call()).unwrap_err();
    assert_eq!(told.kind(), ToolErrorKind::SessionReset, "{told}");
    assert!(
        told.to_string().contains("at most 4 session instances"),
        "{told}"
    );
    assert_eq!(
        waiting.call(&counter_call()),
        "1 1",
        "then it starts afresh"
    );
    let told = manager.join_session(joined.clone()).call(&counter_call());
    assert!(
        told.contains("was not run: this session's state was reset"),
        "{told}"
    );
    assert_eq!(manager.join_session(joined).call(&counter_call()), "1 1");
    assert_eq!(
        manager.session().call(&counter_call()),
        "1 1",
        "a new session runs"
    );
}

#[test]
fn an_idle_session_is_reset_and_max_calls_renews_one() {
    let runtime = runtime_with(SessionLimits {
        idle_ms: 50,
        ..SessionLimits::default()
    });
    let manager = counting(&runtime, 3, tight_limits());
    let idle = manager.session();
    assert_eq!(idle.call(&counter_call()), "1 1");
    // Idle sessions are looked for at most once a second.
    thread::sleep(Duration::from_millis(1100));
    let other = manager.session();
    assert_eq!(other.call(&counter_call()), "1 1");
    let reset = idle.call(&counter_call());
    assert!(
        reset.contains("was reset after 50 ms without a call ([sessions] idle_ms)"),
        "{reset}"
    );
    assert_eq!(idle.call(&counter_call()), "1 1");

    let worn = manager.session();
    let answers: Vec<String> = (0..5).map(|_| worn.call(&counter_call())).collect();
    assert_eq!(answers[..3], ["1 1", "2 2", "3 3"]);
    assert!(
        answers[3].contains("was reset after 3 calls, when its instance was renewed (max_calls)"),
        "{}",
        answers[3]
    );
    assert_eq!(answers[4], "1 1");
}

#[test]
fn a_thousand_sessions_in_a_loop_stay_bounded() {
    let runtime = runtime_with(SessionLimits {
        max: 50,
        ..SessionLimits::default()
    });
    let manager = counting(&runtime, 1000, tight_limits());
    for i in 0..1000 {
        let session = manager.join_session(SessionId::parse(&format!("loop-{i}")).unwrap());
        assert_eq!(session.call(&counter_call()), "1 1", "session {i}");
        assert!(runtime.live_sessions() <= 50);
    }
    assert_eq!(runtime.live_sessions(), 50);
    // Keys made again from their text carry no note of their own: the
    // store recalls the last resets (twice `max`) for them and tells each
    // once; older ones simply start afresh. The newest live on.
    let evicted = manager.join_session(SessionId::parse("loop-949").unwrap());
    assert!(
        evicted
            .call(&counter_call())
            .contains("was reset to make room")
    );
    assert_eq!(evicted.call(&counter_call()), "1 1");
    let oldest = manager.join_session(SessionId::parse("loop-0").unwrap());
    assert_eq!(oldest.call(&counter_call()), "1 1");
    let newest = manager.join_session(SessionId::parse("loop-999").unwrap());
    assert_eq!(newest.call(&counter_call()), "2 2");
    // A module that is dropped takes its sessions' instances with it.
    drop((evicted, oldest, newest));
    drop(manager);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while runtime.live_sessions() > 0 && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(runtime.live_sessions(), 0);
}

#[test]
fn concurrent_sessions_never_see_each_others_state() {
    let manager = Arc::new(counting(crate::common::runtime(), 1000, tight_limits()));
    let threads = 8;
    let rounds = 25;
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let manager = Arc::clone(&manager);
            let start = Arc::clone(&start);
            thread::spawn(move || {
                let session = manager.session();
                start.wait();
                (1..=rounds)
                    .map(|n| (n, session.call(&counter_call())))
                    .filter(|(n, answer)| *answer != format!("{n} {n}"))
                    .map(|(n, answer)| format!("thread {t} call {n}: {answer}"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let wrong: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("no panic"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_config_turns_sessions_on_and_bounds_them() {
    let config = toolhost::config::Config::from_toml(
        "[sessions]\nmax = 7\nidle_ms = 1000\n[[modules]]\nbundled = \"calc\"\nsessions = true\nmax_calls = 9\n",
    )
    .expect("parses");
    assert_eq!(
        config.sessions,
        SessionLimits {
            max: 7,
            idle_ms: 1000
        }
    );
    assert_eq!(config.modules[0].session_max_calls(), Some(9));
    let loaded = toolhost::config::LoadedConfig {
        config,
        ..Default::default()
    };
    let runtime = loaded.runtime_builder().unwrap().build().unwrap();
    assert_eq!(runtime.session_limits().max, 7);
    let e = toolhost::config::Config::from_toml("[sessions]\nmax = 0\n").unwrap_err();
    assert_eq!(
        e,
        "[sessions]: `max` must be between 1 and 100000 (it is 0)"
    );
    let e = toolhost::config::Config::from_toml("[sessions]\nmaximum = 3\n").unwrap_err();
    assert!(e.contains("unknown field `maximum`"), "{e}");
}

/// A runtime whose pool has one instance slot and makes nothing ahead.
fn one_slot_runtime() -> Runtime {
    Runtime::builder()
        .pool(toolhost::PoolConfig {
            instances: 1,
            memories: 1,
            tables: 8,
            ready_per_module: 0,
            ..toolhost::PoolConfig::default()
        })
        .build()
        .expect("runtime starts")
}

/// A session whose instance finds the pool full gets one made on demand,
/// which keeps its state like any other session's.
#[test]
fn a_session_made_past_a_full_pool_keeps_its_state() {
    let runtime = one_slot_runtime();
    let module =
        WasmModule::from_file(&runtime, &guest("guest-hostile"), Some("h"), tight_limits())
            .expect("hostile guest loads")
            .with_sessions(1000);
    assert!(module.pooled());
    let mut manager = ToolManager::new();
    manager.register(module.clone()).expect("registers");
    let first = session_in_the_pool(&runtime, &manager, &module, &counter_call(), "1 1");
    let before = module.calls_off_the_pool();
    let second = manager.session();
    assert_eq!(second.call(&counter_call()), "1 1");
    assert_eq!(
        module.calls_off_the_pool(),
        before + 1,
        "made past the full pool"
    );
    assert_eq!(second.call(&counter_call()), "2 2");
    assert_eq!(second.call(&counter_call()), "3 3", "it keeps its state");
    assert_eq!(first.call(&counter_call()), "2 2");
    assert_eq!(
        module.calls_off_the_pool(),
        before + 1,
        "the same instance served the later calls"
    );
}
