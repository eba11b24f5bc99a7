//! A batch has an overall bound (point 14).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{hostile_manager, tool_call};

#[test]
fn calls_not_started_within_the_batch_timeout_are_answered_at_once() {
    let mut manager = hostile_manager();
    manager.set_max_parallel(2);
    manager.set_batch_timeout(Duration::from_millis(300));
    // 40 calls of 200 ms each, two at a time, would take 4 s.
    let calls: Vec<Value> = (0..40)
        .map(|i| tool_call(&format!("c{i}"), "h_sleep", json!("{\"ms\": 200}")))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let blocking = |calls: &[Value]| manager.call_many(calls);
    let asynchronous = |calls: &[Value]| runtime.block_on(manager.call_many_async(calls));
    for run in [&blocking as &dyn Fn(&[Value]) -> Vec<Value>, &asynchronous] {
        let started = Instant::now();
        let replies = run(&calls);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let woke = replies.iter().filter(|r| r["content"] == "woke up").count();
        let late = "Error: tool 'h_sleep' was not run: its batch reached its time limit of 300 ms (limits.batch_timeout_ms).";
        let refused = replies.iter().filter(|r| r["content"] == late).count();
        assert!(woke >= 2, "{replies:?}");
        assert_eq!(woke + refused, 40, "{replies:?}");
        // In order, with their ids.
        assert!(
            replies
                .iter()
                .enumerate()
                .all(|(i, r)| r["tool_call_id"] == format!("c{i}"))
        );
    }
}
