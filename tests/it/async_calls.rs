//! The async entry points: calls on the caller's tokio runtime, without a
//! thread per call, with the same answers and limits as blocking calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::{Limits, ToolManager};

use crate::common::{bundled_manager, call, hostile, load_guest, tight_limits, tool_call};

/// The number of threads of this process (Linux).
fn thread_count() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}

/// Whether an answer is the right one.
type Check = Box<dyn Fn(&str) -> bool + Send>;

/// Call `i` of the mix: the tool, its arguments, and a check of the answer.
fn case(i: usize) -> (&'static str, Value, Check) {
    match i % 6 {
        0 => {
            let expected = (i * 2).to_string();
            (
                "calc_evaluate",
                json!({"expression": format!("{i} * 2")}),
                Box::new(move |out| out == expected),
            )
        }
        1 => (
            "h_spin",
            json!({}),
            Box::new(|out| {
                out == "Error: tool 'h_spin' ran out of fuel (limit 200000000)."
                    || (out.starts_with("Error: tool 'h_spin' exceeded its time limit of ")
                        && out.ends_with(" ms."))
            }),
        ),
        2 => (
            "h_sleep",
            json!({"ms": 30}),
            Box::new(|out| out == "woke up"),
        ),
        3 => (
            "h_membomb",
            json!({}),
            Box::new(|out| out == "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."),
        ),
        4 => (
            "h_panic",
            json!({"text": "boom"}),
            Box::new(|out| out == "Error: tool 'h_panic' panicked: boom"),
        ),
        _ => {
            let expected = (i + 1).to_string();
            (
                "h_add",
                json!({"a": i, "b": 1}),
                Box::new(move |out| out == expected),
            )
        }
    }
}

fn mixed_manager() -> Arc<ToolManager> {
    let mut manager = bundled_manager();
    manager.register(hostile()).unwrap();
    Arc::new(manager)
}

/// [`mixed_manager`] with time enough for every memory bomb to reach its
/// memory limit while 200 calls share two cores (the spins run out of fuel
/// or time either way).
fn patient_mixed_manager() -> Arc<ToolManager> {
    let limits = Limits {
        timeout_ms: 30_000,
        ..tight_limits()
    };
    let mut manager = bundled_manager();
    manager
        .register(load_guest("guest-hostile", "h", limits).expect("hostile guest loads"))
        .unwrap();
    Arc::new(manager)
}

#[test]
fn two_hundred_concurrent_async_calls_need_no_thread_each() {
    let manager = patient_mixed_manager();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    // Warm up: the first calls start the clock and build the test guests.
    assert_eq!(call(&manager, "h_add", json!({"a": 1, "b": 2})), "3");
    let before = thread_count();
    let peak = Arc::new(AtomicUsize::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(thread_count(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let answers = runtime.block_on(async {
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let manager = Arc::clone(&manager);
                let (tool, arguments, _) = case(i);
                let call = tool_call(
                    &format!("call_{i}"),
                    tool,
                    Value::String(arguments.to_string()),
                );
                tokio::spawn(async move { manager.call_async(&call).await })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.expect("no task panicked"));
        }
        answers
    });
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    for (i, answer) in answers.iter().enumerate() {
        let (tool, _, check) = case(i);
        assert!(check(answer), "call {i} ({tool}): {answer}");
    }
    let peak = peak.load(Ordering::Relaxed);
    // The runtime's 4 workers, and nothing per call (200 calls).
    assert!(
        peak <= before + 4 + 4,
        "{before} threads before, {peak} at the peak"
    );
}

#[test]
fn async_and_blocking_calls_answer_alike_under_every_limit() {
    let manager = mixed_manager();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cases = [
        ("h_spin", json!({})),
        ("h_sleep", json!({"ms": 5_000})),
        ("h_membomb", json!({})),
        ("h_recurse", json!({})),
        ("h_big_output", json!({"bytes": 100_000})),
        ("h_echo", json!({"text": "x".repeat(2_000_000)})),
        ("h_fail", json!({"text": "no"})),
        ("calc_evaluate", json!({"expression": "1/0"})),
        ("nope", json!({})),
    ];
    for (tool, arguments) in cases {
        let blocking = call(&manager, tool, arguments.clone());
        let request = tool_call("1", tool, Value::String(arguments.to_string()));
        let asynchronous = runtime.block_on(manager.call_async(&request));
        if tool == "h_spin" {
            // Fuel or time, whichever ends it first; both are that limit's text.
            assert!(
                asynchronous.starts_with("Error: tool 'h_spin' "),
                "{asynchronous}"
            );
            continue;
        }
        assert_eq!(asynchronous, blocking, "{tool}");
    }
    let sleepy =
        runtime.block_on(manager.call_async(&tool_call("1", "h_sleep", json!("{\"ms\": 5000}"))));
    assert_eq!(
        sleepy,
        "Error: tool 'h_sleep' exceeded its time limit of 2000 ms."
    );
}

#[test]
fn a_spinning_call_does_not_hold_the_only_worker() {
    // One worker thread: while a guest spins to its time limit, other tasks
    // on the same runtime still run, because the guest yields at every tick.
    let slow = load_guest(
        "guest-hostile",
        "slow",
        Limits {
            timeout_ms: 1_000,
            fuel: 1 << 40,
            ..tight_limits()
        },
    )
    .unwrap();
    let mut manager = ToolManager::new();
    manager.register(slow).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (spun, ticks) = runtime.block_on(async {
        let ticks = Arc::new(AtomicUsize::new(0));
        let counter = {
            let ticks = Arc::clone(&ticks);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let spun = manager
            .call_async(&tool_call("1", "slow_spin", json!("{}")))
            .await;
        counter.abort();
        (spun, ticks.load(Ordering::Relaxed))
    });
    assert_eq!(
        spun,
        "Error: tool 'slow_spin' exceeded its time limit of 1000 ms."
    );
    assert!(
        ticks >= 10,
        "the other task ran only {ticks} times in a second"
    );
}

#[test]
fn dropping_an_async_call_stops_it() {
    let manager = mixed_manager();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    runtime.block_on(async {
        let spin = manager.call_async(&tool_call("1", "h_sleep", json!("{\"ms\": 1500}")));
        let cut = tokio::time::timeout(Duration::from_millis(50), spin).await;
        assert!(cut.is_err(), "the call was still running");
    });
    assert!(started.elapsed() < Duration::from_millis(1_000));
    // The module serves the next call normally.
    assert_eq!(call(&manager, "h_add", json!({"a": 2, "b": 2})), "4");
}

#[test]
fn batches_run_async_in_order_on_any_runtime() {
    let manager = mixed_manager();
    let calls: Vec<Value> = (0..24)
        .map(|i| {
            let (tool, arguments, _) = case(i);
            tool_call(&format!("c{i}"), tool, Value::String(arguments.to_string()))
        })
        .collect();
    let check = |replies: Vec<Value>| {
        assert_eq!(replies.len(), calls.len());
        for (i, reply) in replies.iter().enumerate() {
            let (tool, _, check) = case(i);
            assert_eq!(reply["tool_call_id"], format!("c{i}"));
            let content = reply["content"].as_str().unwrap();
            assert!(check(content), "call {i} ({tool}): {content}");
        }
    };
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    check(multi.block_on(manager.call_many_async(&calls)));
    // A current-thread runtime without timers or I/O of its own works too:
    // a call's timers and sockets are driven by toolhost's clock.
    let bare = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    check(bare.block_on(manager.call_many_async(&calls)));
    let message = json!({"role": "assistant", "tool_calls": calls});
    check(
        multi
            .block_on(manager.call_message_async(&message))
            .unwrap(),
    );
}

#[test]
fn blocking_calls_inside_a_runtime_work() {
    let manager = mixed_manager();
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for runtime in [&multi, &current] {
        let answer = runtime.block_on(async { call(&manager, "h_sleep", json!({"ms": 10})) });
        assert_eq!(answer, "woke up");
    }
}

/// What `listener` heard, and the listener.
fn recording() -> (Arc<std::sync::Mutex<Vec<u8>>>, toolhost::StderrListener) {
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&heard);
    let listener = toolhost::StderrListener::new(move |bytes| {
        kept.lock().unwrap().extend_from_slice(bytes);
    });
    (heard, listener)
}

/// A listener hears what a tool writes to stderr, in a fresh (or made
/// ahead) instance, a warm one and a session's; only what the module keeps
/// (`max_captured_bytes`); and the answer is the same as without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_a_tools_stderr_in_every_kind_of_instance() {
    let limits = Limits {
        max_captured_bytes: 4096,
        ..tight_limits()
    };
    let plain = load_guest("guest-hostile", "h", limits).expect("loads");
    let warm = plain.clone().with_warm(toolhost::Warm { max_calls: 10 });
    let sessions = plain.clone().with_sessions(10);
    for (kind, module) in [("fresh", plain), ("warm", warm), ("session", sessions)] {
        let mut manager = ToolManager::new();
        manager.register(module).expect("registers");
        let session = manager.session();
        for round in 0..2 {
            let (heard, listener) = recording();
            let text = format!("{kind} {round}");
            let arguments = json!({ "text": text });
            let answer = session
                .call_tool_listened_async("h_print", Some(&arguments), Some(&listener))
                .await;
            assert_eq!(answer.as_deref(), Ok("printed"), "{kind}");
            assert_eq!(
                *heard.lock().unwrap(),
                format!("{text}\n").into_bytes(),
                "{kind}"
            );
        }
        let (heard, listener) = recording();
        let answer = manager
            .call_tool_json_listened_async(
                "h_stderr_flood",
                r#"{"bytes": 100000}"#,
                Some(&listener),
            )
            .await
            .expect("the flood answers");
        assert!(answer.starts_with("wrote "), "{kind}: {answer}");
        let heard = heard.lock().unwrap();
        assert_eq!(heard.len(), 4096, "{kind}: heard {} bytes", heard.len());
        assert!(heard.starts_with(b"flood flood"), "{kind}");
    }
}
