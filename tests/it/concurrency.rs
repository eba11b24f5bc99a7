//! Many threads, many calls, hostile and benign mixed: every result right.

use std::sync::Arc;

use serde_json::json;
use toolhost::ToolManager;

use crate::common::{bundled_manager, call, hostile, logs_of};

#[test]
fn threads_share_one_manager() {
    let mut manager = bundled_manager();
    manager.register(hostile()).unwrap();
    let manager: Arc<ToolManager> = Arc::new(manager);
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let m = Arc::clone(&manager);
            std::thread::spawn(move || {
                for i in 0..8 {
                    let n = t * 100 + i;
                    assert_eq!(
                        call(
                            &m,
                            "calc_evaluate",
                            json!({"expression": format!("{n} * 2")})
                        ),
                        (n * 2).to_string()
                    );
                    assert_eq!(
                        call(&m, "h_add", json!({"a": n, "b": 1})),
                        (n + 1).to_string()
                    );
                    assert_eq!(call(&m, "h_counter", json!({})), "1 1");
                    match i % 4 {
                        0 => assert!(
                            call(&m, "h_panic", json!({"text": "x"}))
                                .starts_with("Error: tool 'h_panic' panicked")
                        ),
                        1 => assert!(call(&m, "h_membomb", json!({})).contains("memory limit")),
                        2 => assert!(call(&m, "h_trap", json!({})).contains("trapped")),
                        _ => {
                            assert!(call(&m, "h_fail", json!({"text": "f"})).ends_with("failed: f"))
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panicked");
    }
}

#[test]
fn call_many_runs_in_parallel_and_keeps_order() {
    let mut manager = bundled_manager();
    manager.register(hostile()).unwrap();
    manager.set_max_parallel(4);
    let calls: Vec<_> = (0..24)
        .map(|i| {
            let name = if i % 3 == 0 {
                "h_panic"
            } else {
                "calc_evaluate"
            };
            let args = if i % 3 == 0 {
                json!({"text": format!("p{i}")})
            } else {
                json!({"expression": format!("{i}+0")})
            };
            crate::common::tool_call(&format!("c{i}"), name, args)
        })
        .collect();
    let out = manager.call_many(&calls);
    for (i, message) in out.iter().enumerate() {
        assert_eq!(message["tool_call_id"], format!("c{i}"));
        let content = message["content"].as_str().unwrap();
        if i % 3 == 0 {
            assert_eq!(content, format!("Error: tool 'h_panic' panicked: p{i}"));
        } else {
            assert_eq!(content, i.to_string());
        }
    }
}

#[test]
fn calls_from_inside_an_async_runtime_work() {
    // An application may call the (blocking) manager from async code; that
    // must not panic with "cannot start a runtime from within a runtime".
    let manager = bundled_manager();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(async { call(&manager, "calc_evaluate", json!({"expression": "2+2"})) });
    assert_eq!(out, "4");
}

#[test]
fn output_of_concurrent_calls_is_never_mixed() {
    let manager = Arc::new(crate::common::hostile_manager());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&manager);
            std::thread::spawn(move || {
                let marker = format!("MARKER-{t}-");
                let ((), logs) = logs_of(|| {
                    for i in 0..10 {
                        let text = format!("{marker}{i}");
                        assert_eq!(call(&m, "h_print", json!({ "text": text })), "printed");
                    }
                });
                (t, logs)
            })
        })
        .collect();
    for thread in threads {
        let (t, logs) = thread.join().expect("no thread panicked");
        // Each call's stdout and stderr lines carry its own text, and only it.
        for line in logs.lines().filter(|l| l.contains("stream=")) {
            let marker = line
                .split_whitespace()
                .find(|w| w.starts_with("MARKER-"))
                .unwrap_or_else(|| panic!("no marker in {line}"));
            assert!(marker.starts_with(&format!("MARKER-{t}-")), "{line}");
            assert_eq!(line.matches("MARKER-").count(), 1, "{line}");
        }
        for i in 0..10 {
            let tag = format!("MARKER-{t}-{i} ");
            assert_eq!(
                logs.matches(&tag).count(),
                2,
                "stdout and stderr of call {i}: {logs}"
            );
        }
    }
}
