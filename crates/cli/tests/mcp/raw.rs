//! `toolhost serve` on stdio, spoken to in raw JSON-RPC lines, for the
//! checks an SDK would not let a client make (malformed input, unknown
//! methods, cursors, busy answers, reloads seen in the log).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `toolhost serve` on stdio, initialized at 2025-11-25.
pub struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    /// What the server logged on stderr, line by line.
    pub log: mpsc::Receiver<String>,
    /// Notifications received while waiting for answers.
    pub notifications: Vec<Value>,
    /// Answers received while waiting for another one.
    pending: Vec<Value>,
    next_id: u64,
}

impl StdioServer {
    /// Starts `command` (a `toolhost ...` command) with `serve`, logging at
    /// `info`, and makes the initialize handshake.
    pub fn start(mut command: Command) -> StdioServer {
        let mut child = command
            .arg("serve")
            .env("TOOLHOST_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolhost serve starts");
        let stdin = child.stdin.take().expect("stdin piped");
        let stdout = child.stdout.take().expect("stdout piped");
        let stderr = child.stderr.take().expect("stderr piped");
        let (message_tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC: {e}: {line}"));
                if message_tx.send(message).is_err() {
                    return;
                }
            }
        });
        let (log_tx, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if log_tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = StdioServer {
            child,
            stdin,
            messages,
            log,
            notifications: Vec::new(),
            pending: Vec::new(),
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            }),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits up to `timeout` for the server to exit.
    pub fn terminate(&mut self, timeout: Duration) -> Option<ExitStatus> {
        terminate(&mut self.child, timeout)
    }

    /// Writes `line` and a newline to the server's stdin.
    pub fn send_line(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("stdin open");
        self.stdin.write_all(b"\n").expect("stdin open");
        self.stdin.flush().expect("stdin open");
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// Sends request `method` and returns its id, without waiting.
    pub fn start_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to request `id` (with `result` or `error`).
    pub fn answer(&mut self, id: u64) -> Value {
        if let Some(at) = self.pending.iter().position(|m| m["id"] == id) {
            return self.pending.remove(at);
        }
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to request {id}: {e}"));
            if message["id"] == id {
                return message;
            }
            self.stash(message);
        }
    }

    fn stash(&mut self, message: Value) {
        if message.get("id").is_some() {
            self.pending.push(message);
        } else {
            self.notifications.push(message);
        }
    }

    /// Sends request `method` and waits for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.answer(id)
    }

    /// Calls `tool`: (`isError`, the text).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: no text in {answer}"))
            .to_string();
        (result["isError"] == true, text)
    }

    /// Every tool name `tools/list` gives, page by page; panics if a page
    /// holds more than `page_size` tools.
    pub fn list_names(&mut self, page_size: usize) -> Vec<String> {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let answer = self.request("tools/list", params);
            let tools = answer["result"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("tools/list: {answer}"));
            assert!(tools.len() <= page_size, "a page of {}", tools.len());
            names.extend(
                tools
                    .iter()
                    .map(|t| t["name"].as_str().expect("name").to_string()),
            );
            match answer["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => return names,
            }
        }
        panic!("tools/list pages never ended");
    }

    /// Waits for a notification with `method`, and takes it.
    pub fn wait_notification(&mut self, method: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(at) = self
                .notifications
                .iter()
                .position(|n| n["method"] == method)
            {
                return self.notifications.remove(at);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no {method} notification: {e}"));
            self.stash(message);
        }
    }

    /// Whether an answer to request `id` has arrived (and not been taken).
    pub fn has_answer(&mut self, id: u64) -> bool {
        while let Ok(message) = self.messages.try_recv() {
            self.stash(message);
        }
        self.pending.iter().any(|m| m["id"] == id)
    }

    /// Waits for a log line containing `needle`; returns it.
    pub fn wait_log(&self, needle: &str, timeout: Duration) -> String {
        wait_log(&self.log, needle, timeout)
    }
}

/// Waits for a line of `log` containing `needle`; returns it.
pub fn wait_log(log: &mpsc::Receiver<String>, needle: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match log.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(line) => seen.push(line),
            Err(e) => panic!(
                "no log line says {needle:?} ({e}); the log:\n{}",
                seen.join("\n")
            ),
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends SIGTERM to `child` and waits up to `timeout` for it to exit.
pub fn terminate(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let pid = rustix::process::Pid::from_raw(child.id() as i32)?;
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// The CPU seconds process `pid` uses in one second, measured after
/// letting 300 ms pass (for a call just stopped to wind down).
pub fn cpu_in_the_next_second(pid: u32) -> f64 {
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(1));
    cpu_seconds(pid) - before
}

/// CPU seconds process `pid` has used (user + system), from `/proc`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let after_name = stat.rsplit_once(')').expect("stat has a name").1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    ticks as f64 / rustix::param::clock_ticks_per_second() as f64
}

/// An HTTP response, read whole.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    /// The head: status line and headers.
    pub head: String,
    /// The body, de-chunked.
    pub body: String,
}

impl HttpResponse {
    /// The JSON-RPC messages of the body: the body itself if it is JSON,
    /// else the `data:` lines of an event stream.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(message) = serde_json::from_str::<Value>(&self.body) {
            return vec![message];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    }

    /// The text of the `tools/call` result in the body: (`isError`, text).
    pub fn call_result(&self) -> (bool, String) {
        let messages = self.messages();
        let result = messages
            .iter()
            .find_map(|m| m.get("result"))
            .unwrap_or_else(|| panic!("no result in {self:?}"));
        let text = result["content"][0]["text"]
            .as_str()
            .expect("a text")
            .to_string();
        (result["isError"] == true, text)
    }
}

/// Sends `request` (a whole HTTP/1.1 request, with `Connection: close`) to
/// `authority` and reads the response; `None` if the server closed the
/// connection without one.
pub fn http_exchange(authority: &str, request: &[u8]) -> Option<HttpResponse> {
    let (bytes, _) = exchange(authority, request, ANSWER_TIMEOUT);
    parse_response(&bytes)
}

/// [`http_exchange`] by a client that waits at most `timeout` for the
/// whole response: `None` if the server had not finished it by then.
pub fn http_exchange_within(
    authority: &str,
    request: &[u8],
    timeout: Duration,
) -> Option<HttpResponse> {
    let (bytes, whole) = exchange(authority, request, timeout);
    if !whole {
        return None;
    }
    parse_response(&bytes)
}

/// Sends `request` and reads until the server closes the connection or
/// `timeout` has passed: the bytes, and whether the server closed.
fn exchange(authority: &str, request: &[u8], timeout: Duration) -> (Vec<u8>, bool) {
    let deadline = Instant::now() + timeout;
    let mut stream = TcpStream::connect(authority).expect("connects");
    // The server may close early (a request it refuses): that is an answer too.
    let _ = stream.write_all(request);
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return (bytes, false);
        }
        match stream.read(&mut buffer) {
            Ok(0) => return (bytes, true),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (bytes, false);
            }
            // Reset by the server: what came is the answer.
            Err(_) => return (bytes, true),
        }
    }
}

/// An HTTP/1.1 response from its bytes.
fn parse_response(bytes: &[u8]) -> Option<HttpResponse> {
    let text = String::from_utf8_lossy(bytes).to_string();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some(HttpResponse {
        status,
        head: head.to_string(),
        body,
    })
}

/// The payload of a chunked body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// `GET path` from `authority`.
pub fn http_get(authority: &str, path: &str) -> HttpResponse {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    http_exchange(authority, request.as_bytes()).expect("an HTTP response")
}

/// A stateless (2026-07-28) JSON-RPC request `method` to `/mcp`, as HTTP
/// bytes, with `extra` header lines (each ending in CRLF).
pub fn mcp_request(authority: &str, method: &str, mut params: Value, extra: &str) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = match params.get("name").and_then(Value::as_str) {
        Some(name) => format!("Mcp-Name: {name}\r\n"),
        None => String::new(),
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    post_bytes(
        authority,
        &body,
        &format!("Mcp-Method: {method}\r\n{name}{extra}"),
    )
}

/// A POST of `body` to `/mcp`, with `extra` header lines.
pub fn post_bytes(authority: &str, body: &str, extra: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Calls `tool` over HTTP, statelessly: the whole response.
pub fn http_call(authority: &str, tool: &str, arguments: Value) -> HttpResponse {
    let request = mcp_request(
        authority,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        "",
    );
    http_exchange(authority, &request).expect("an HTTP response")
}

/// A POST of the JSON-RPC `message` to `/mcp` at protocol 2025-11-25, in
/// session `session` if given: the response.
pub fn session_post(authority: &str, session: Option<&str>, message: &Value) -> HttpResponse {
    session_post_within(authority, session, message, ANSWER_TIMEOUT).expect("an HTTP response")
}

/// [`session_post`] by a client that waits at most `timeout` for the
/// response: `None` if none came by then.
pub fn session_post_within(
    authority: &str,
    session: Option<&str>,
    message: &Value,
    timeout: Duration,
) -> Option<HttpResponse> {
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    let body = message.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    http_exchange_within(authority, request.as_bytes(), timeout)
}

/// Opens a 2025-11-25 session (initialize, then `notifications/initialized`):
/// its id.
pub fn open_session(authority: &str) -> String {
    open_session_with(authority, &json!({}))
}

/// [`open_session`] by a client that declares `capabilities`.
pub fn open_session_with(authority: &str, capabilities: &Value) -> String {
    let init = session_post(
        authority,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "raw-test", "version": "1"},
        }}),
    );
    assert_eq!(init.status, 200, "{init:?}");
    let id = init
        .head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id: {init:?}"));
    let initialized = session_post(
        authority,
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(initialized.status, 202, "{initialized:?}");
    id
}

/// `tools/list` in session `id`: the HTTP status.
pub fn list_in_session(authority: &str, id: &str) -> u16 {
    session_post(
        authority,
        Some(id),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    )
    .status
}

/// Deletes session `id`: the HTTP status.
pub fn delete_session(authority: &str, id: &str) -> u16 {
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {id}\r\n\r\n"
    );
    http_exchange(authority, request.as_bytes())
        .expect("an HTTP response")
        .status
}

/// The resident memory of process `pid`, in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}
