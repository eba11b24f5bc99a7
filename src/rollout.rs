//! Answering a batch of tool calls (an assistant message's `tool_calls`) in parallel.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::error::json_type_name;

/// The `{"role":"tool","tool_call_id","content"}` message that answers a call.
pub fn tool_message(tool_call_id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
}

/// The tool calls in `input`: an array of calls, an assistant message with
/// `tool_calls`, or a single call (a one-element batch).
pub fn tool_calls_of(input: &Value) -> Result<Vec<Value>, String> {
    match input {
        Value::Array(calls) => Ok(calls.clone()),
        Value::Object(map) if map.contains_key("tool_calls") => match &map["tool_calls"] {
            Value::Array(calls) => Ok(calls.clone()),
            Value::Null => Ok(Vec::new()),
            other => Err(format!(
                "\"tool_calls\" must be an array, got {}",
                json_type_name(other)
            )),
        },
        Value::Object(map) if map.contains_key("function") => Ok(vec![input.clone()]),
        Value::Object(_) => Err(
            "expected a tool call (with \"function\"), an assistant message (with \"tool_calls\") or an array of tool calls".into(),
        ),
        other => Err(format!(
            "expected a tool call, an assistant message or an array of tool calls, got {}",
            json_type_name(other)
        )),
    }
}

/// Runs `job` on every item with at most `max_parallel` threads, keeping order.
pub(crate) fn run_parallel<T, R, F>(items: &[T], max_parallel: usize, job: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let workers = max_parallel.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(&job).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = job(item);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_results_keep_their_order() {
        let items: Vec<u64> = (0..50).collect();
        let out = run_parallel(&items, 4, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(run_parallel(&Vec::<u64>::new(), 4, |x| *x).is_empty());
    }

    #[test]
    fn batches_come_in_three_shapes() {
        let call = json!({"id": "1", "function": {"name": "a"}});
        assert_eq!(tool_calls_of(&json!([call.clone()])).unwrap().len(), 1);
        assert_eq!(
            tool_calls_of(
                &json!({"role": "assistant", "tool_calls": [call.clone(), call.clone()]})
            )
            .unwrap()
            .len(),
            2
        );
        assert_eq!(tool_calls_of(&call).unwrap().len(), 1);
        assert!(
            tool_calls_of(&json!({"role": "assistant", "tool_calls": 3}))
                .unwrap_err()
                .contains("got number")
        );
        assert!(tool_calls_of(&json!(3)).is_err());
    }
}
