//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), spoken
//! in raw JSON-RPC (neither official SDK speaks it yet): a client that
//! declares it gets a task for a call that runs longer than it waits for
//! an answer, polls it to the same result a plain call gives, cancels it
//! (and the guest stops), sees only its own session's tasks, and finished
//! tasks expire and are bounded in number.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixture::{Fixture, HOSTILE_MODULES};
use crate::raw::{
    StdioServer, cpu_in_the_next_second, delete_session, http_exchange_within, open_session,
    open_session_with, post_bytes, session_post, session_post_within,
};
use crate::server::HttpServer;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// How long the clients here wait for any one answer: less than the calls
/// that run as tasks take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a test polls a task before it gives up.
const POLL_LIMIT: Duration = Duration::from_secs(60);

fn with_tasks() -> Value {
    json!({"extensions": {TASKS: {}}})
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

fn task_request(method: &str, task_id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"taskId": task_id}})
}

/// The one JSON-RPC answer in a response.
fn answer(messages: Vec<Value>) -> Value {
    messages
        .into_iter()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .expect("an answer")
}

/// `message` in HTTP session `session`, by a client that waits
/// [`CLIENT_TIMEOUT`]: the answer.
fn in_session(at: &str, session: &str, message: &Value) -> Value {
    let response = session_post_within(at, Some(session), message, CLIENT_TIMEOUT)
        .unwrap_or_else(|| panic!("no answer within {CLIENT_TIMEOUT:?} to {message}"));
    answer(response.messages())
}

/// The result of a created task: its id, after checking its shape.
fn task_id(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "task", "{answer}");
    assert_eq!(result["status"], "working", "{answer}");
    assert!(result["ttlMs"].as_u64().is_some(), "{answer}");
    assert!(result["pollIntervalMs"].as_u64().is_some(), "{answer}");
    result["taskId"].as_str().expect("a taskId").to_string()
}

/// Polls with `get` until the task is no longer working: the last answer
/// and how many polls read `working`.
fn poll(mut get: impl FnMut() -> Value) -> (Value, usize) {
    let started = Instant::now();
    let mut working = 0;
    while started.elapsed() < POLL_LIMIT {
        let answer = get();
        let status = answer["result"]["status"].as_str().unwrap_or_default();
        if status != "working" {
            assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
            return (answer, working);
        }
        working += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the task was still working after {POLL_LIMIT:?}");
}

/// A completed task's call result: (`isError`, text).
fn completed(answer: &Value) -> (bool, String) {
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let result = &answer["result"]["result"];
    let text = result["content"][0]["text"].as_str().expect("a text");
    (result["isError"] == true, text.to_string())
}

#[test]
fn a_call_longer_than_the_clients_timeout_is_a_task_with_the_plain_calls_result() {
    let fixture = Fixture::new();
    fixture.write_config(HOSTILE_MODULES);
    let server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    let plain = open_session(&at);
    let tasks = open_session_with(&at, &with_tasks());

    // The server says it speaks the extension.
    let init = session_post(
        &at,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}}),
    );
    let init = answer(init.messages());
    assert_eq!(
        init["result"]["capabilities"]["extensions"][TASKS],
        json!({}),
        "{init}"
    );

    // Without the extension, a call of 4 s gets no answer in the client's 2 s.
    let slow = call("s_sleep", json!({"ms": 4000}));
    assert!(session_post_within(&at, Some(&plain), &slow, CLIENT_TIMEOUT).is_none());

    // With it, the answer is a task at once, polled until it ends.
    let id = task_id(&in_session(&at, &tasks, &slow));
    let (done, working) = poll(|| in_session(&at, &tasks, &task_request("tasks/get", &id)));
    assert!(working > 0, "the task never read working");
    assert_eq!(completed(&done), (false, "woke up".into()));

    // A task's result is the plain call's, errors included (`completed`
    // with isError, as the extension says).
    for (tool, arguments) in [
        ("h_add", json!({"a": 1, "b": 2})),
        ("t_spin", json!({})),
        ("h_add", json!({"a": "one"})),
        ("no_such_tool", json!({})),
    ] {
        let message = call(tool, arguments);
        let expected = session_post(&at, Some(&plain), &message).call_result();
        let id = task_id(&in_session(&at, &tasks, &message));
        let (done, _) = poll(|| in_session(&at, &tasks, &task_request("tasks/get", &id)));
        assert_eq!(completed(&done), expected, "{tool}");
    }

    // Another session, or a request without one, cannot see the task.
    let other = open_session_with(&at, &with_tasks());
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let mut request = task_request(method, &id);
        request["params"]["inputResponses"] = json!({});
        let refused = in_session(&at, &other, &request);
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&id), "{message}");
        let stateless = stateless(&at, method, &request["params"]);
        assert_eq!(stateless["error"]["code"], -32602, "{method}: {stateless}");
    }
    // A session that did not declare the extension is told what it lacks.
    let undeclared = in_session(&at, &plain, &task_request("tasks/get", &id));
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    // Its owner still can.
    let again = in_session(&at, &tasks, &task_request("tasks/get", &id));
    assert_eq!(again["result"]["status"], "completed", "{again}");
}

#[test]
fn cancelling_a_task_stops_its_guest_and_an_ended_session_stops_its_tasks() {
    let fixture = Fixture::new();
    fixture.write_config(HOSTILE_MODULES);
    let server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    let session = open_session_with(&at, &with_tasks());

    let id = task_id(&in_session(&at, &session, &call("s_spin", json!({}))));
    std::thread::sleep(Duration::from_millis(500));
    let working = in_session(&at, &session, &task_request("tasks/get", &id));
    assert_eq!(working["result"]["status"], "working", "{working}");
    let ack = in_session(&at, &session, &task_request("tasks/cancel", &id));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let used = cpu_in_the_next_second(server.pid());
    assert!(
        used < 0.4,
        "the server used {used:.2} s of CPU in the second after tasks/cancel"
    );
    let cancelled = in_session(&at, &session, &task_request("tasks/get", &id));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(
        server.metric_sum(r#"toolhost_tool_calls_total{tool="s_spin",outcome="cancelled"}"#),
        1.0
    );

    // A session that ends takes its running tasks with it.
    let id = task_id(&in_session(&at, &session, &call("s_spin", json!({}))));
    std::thread::sleep(Duration::from_millis(500));
    assert!(matches!(delete_session(&at, &session), 200 | 204));
    let used = cpu_in_the_next_second(server.pid());
    assert!(
        used < 0.4,
        "the server used {used:.2} s of CPU in the second after the session ended"
    );
    let fresh = open_session_with(&at, &with_tasks());
    let gone = in_session(&at, &fresh, &task_request("tasks/get", &id));
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[test]
fn finished_tasks_expire_after_their_ttl_and_are_bounded_in_number() {
    let fixture = Fixture::new();
    fixture.write_config(&format!(
        "[serve]\ntask_ttl_ms = 1500\nmax_tasks = 2\n\n{HOSTILE_MODULES}"
    ));
    let server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    let session = open_session_with(&at, &with_tasks());
    let get = |id: &str| in_session(&at, &session, &task_request("tasks/get", id));
    let add = call("h_add", json!({"a": 1, "b": 2}));

    let first = task_id(&in_session(&at, &session, &add));
    let (done, _) = poll(|| get(&first));
    assert_eq!(completed(&done), (false, "3".into()));
    let ttl = done["result"]["ttlMs"].as_u64().expect("ttlMs");
    assert!(ttl >= 1500, "{done}");
    // Kept while its TTL runs, gone after.
    std::thread::sleep(Duration::from_millis(2000));
    let expired = get(&first);
    assert_eq!(expired["error"]["code"], -32602, "{expired}");
    let message = expired["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("serve.task_ttl_ms"), "{message}");

    // Two kept at most: a third drops the finished one that ended first;
    // with both places taken by running tasks, a call is answered with an
    // error naming the bound.
    let second = task_id(&in_session(&at, &session, &add));
    poll(|| get(&second));
    let spin = task_id(&in_session(&at, &session, &call("s_spin", json!({}))));
    let third = task_id(&in_session(
        &at,
        &session,
        &call("s_sleep", json!({"ms": 30000})),
    ));
    assert_eq!(get(&second)["error"]["code"], -32602);
    let full = in_session(&at, &session, &add);
    assert_eq!(full["result"]["isError"], true, "{full}");
    let text = full["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.starts_with("Error: ") && text.contains("serve.max_tasks"),
        "{text}"
    );
    for id in [&spin, &third] {
        in_session(&at, &session, &task_request("tasks/cancel", id));
    }
    assert_eq!(get(&spin)["result"]["status"], "cancelled");
}

#[test]
fn tasks_over_stdio_and_without_a_session() {
    let fixture = Fixture::new();
    fixture.write_config(HOSTILE_MODULES);

    // stdio: the capability in the request's _meta (the connection did not
    // declare it at initialize).
    let mut stdio = StdioServer::start(fixture.toolhost());
    let meta = json!({"io.modelcontextprotocol/clientCapabilities": with_tasks()});
    let created = stdio.request(
        "tools/call",
        json!({"name": "s_sleep", "arguments": {"ms": 1500}, "_meta": meta}),
    );
    let id = task_id(&created);
    let (done, _) = poll(|| {
        stdio.request(
            "tasks/get",
            json!({"taskId": id, "_meta": {"io.modelcontextprotocol/clientCapabilities": with_tasks()}}),
        )
    });
    assert_eq!(completed(&done), (false, "woke up".into()));
    let undeclared = stdio.request("tasks/get", json!({"taskId": id}));
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    // Without the capability the same call is answered plainly.
    assert_eq!(
        stdio.call("s_sleep", json!({"ms": 10})),
        (false, "woke up".into())
    );

    // HTTP at 2026-07-28, no session: a task any request without a
    // session can read, by its id.
    let server = HttpServer::start(fixture.toolhost(), &[]);
    let at = server.authority();
    let created = stateless(
        &at,
        "tools/call",
        &json!({"name": "s_sleep", "arguments": {"ms": 3000}}),
    );
    let id = task_id(&created);
    let (done, working) = poll(|| stateless(&at, "tasks/get", &json!({"taskId": id})));
    assert!(working > 0, "the task never read working");
    assert_eq!(completed(&done), (false, "woke up".into()));
    // A session cannot.
    let session = open_session_with(&at, &with_tasks());
    let hidden = in_session(&at, &session, &task_request("tasks/get", &id));
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
}

/// A 2026-07-28 request without a session that declares the extension,
/// by a client that waits [`CLIENT_TIMEOUT`]: the answer.
fn stateless(at: &str, method: &str, params: &Value) -> Value {
    let mut params = params.clone();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": with_tasks(),
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map_or(String::new(), |name| format!("Mcp-Name: {name}\r\n"));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let request = post_bytes(at, &body, &format!("Mcp-Method: {method}\r\n{name}"));
    let response = http_exchange_within(at, &request, CLIENT_TIMEOUT)
        .unwrap_or_else(|| panic!("no answer within {CLIENT_TIMEOUT:?} to {method}"));
    answer(response.messages())
}
