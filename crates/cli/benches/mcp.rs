//! What serving over MCP costs. `cargo bench -p toolhost-cli --bench mcp`
//! measures, in one run:
//!
//! - **stdio round trip**: `tools/call calc_evaluate` sent by a minimal raw
//!   JSON-RPC client (one line out, one line back) to `toolhost serve`,
//!   and to a no-op `rmcp` stdio server answering the same call with the
//!   same text (the floor: this binary, run as that server). The two are
//!   measured in many short alternating rounds, so that both see the same
//!   machine (a virtual machine's stolen time drifts from second to
//!   second); the ratio is the median of the rounds' ratios of medians, the
//!   cost of toolhost's sandboxed call and dispatch over bare MCP.
//! - **start-up**: from spawning `toolhost serve` (every example module of
//!   `example-tools/toolhost.toml` in the compile cache) to the answer to
//!   its first `tools/list`.
//! - **HTTP**: calls per second of `calc_evaluate` over streamable HTTP
//!   (stateless, 2026-07-28), 16 clients each on its own keep-alive
//!   connection, and the latency p50 and p99.
//!
//! The numbers are printed as a table; the README quotes one run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use xtask::{Language, Repo, build_example};

/// Set (to anything) when this binary is to be the no-op server.
const NOOP_ENV: &str = "TOOLHOST_BENCH_NOOP_SERVER";

/// The call every measurement makes, and its answer.
const TOOL: &str = "calc_evaluate";
const EXPRESSION: &str = "2 * (3 + 4)";
const ANSWER: &str = "14";

const ROUNDS: usize = 40;
const CALLS_PER_ROUND: usize = 250;
const STARTUPS: usize = 15;
const HTTP_CLIENTS: usize = 16;
const HTTP_DURATION: Duration = Duration::from_secs(10);

fn main() {
    if std::env::var_os(NOOP_ENV).is_some() {
        serve_noop();
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // else useful: run quickly there, only to show that the bench works.
    let quick = !std::env::args().any(|a| a == "--bench");
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, "[[modules]]\nbundled = \"calc\"\n").expect("config written");
    let toolhost = PathBuf::from(env!("CARGO_BIN_EXE_toolhost"));
    let status = Command::new(&toolhost)
        .args(["--config"])
        .arg(&config)
        .arg("compile")
        .status()
        .expect("toolhost compile runs");
    assert!(status.success(), "toolhost compile failed");

    println!("toolhost MCP benchmarks ({} cores)", cores());
    stdio_round_trip(&toolhost, &config, quick);
    startup(&toolhost, quick);
    http(&toolhost, &config, quick);
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

// ------------------------------------------------------------ the floor

/// The no-op server: one tool, every call answered with [`ANSWER`].
#[derive(Clone)]
struct Noop;

impl ServerHandler for Noop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"expression": {"type": "string"}}});
        let Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        let tool = Tool::new(TOOL, "Evaluates nothing.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(ANSWER)]).into())
    }
}

fn serve_noop() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let running = Noop
            .serve(rmcp::transport::stdio_pipes())
            .await
            .expect("serves on stdio");
        let _ = running.waiting().await;
    });
}

// ------------------------------------------------------------ stdio

/// A server on stdio and the raw client's end of its pipes.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    fn spawn(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Peer {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("stdin open");
        self.stdin.flush().expect("stdin open");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let read = self.stdout.read_line(&mut line).expect("stdout open");
            assert!(read > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn initialize(&mut self) {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        );
        assert!(answer.get("result").is_some(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// One call, checked; its round-trip time.
    fn timed_call(&mut self) -> Duration {
        let started = Instant::now();
        let answer = self.request(
            "tools/call",
            json!({"name": TOOL, "arguments": {"expression": EXPRESSION}}),
        );
        let elapsed = started.elapsed();
        assert_eq!(answer["result"]["content"][0]["text"], ANSWER, "{answer}");
        elapsed
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio_round_trip(toolhost: &Path, config: &Path, quick: bool) {
    let mut serve = Command::new(toolhost);
    serve.arg("--config").arg(config).arg("serve");
    let mut noop = Command::new(std::env::current_exe().expect("this binary"));
    noop.env(NOOP_ENV, "1");
    let mut peers = [
        ("toolhost serve", Peer::spawn(serve)),
        ("no-op rmcp server", Peer::spawn(noop)),
    ];
    let (rounds, calls) = if quick {
        (1, 20)
    } else {
        (ROUNDS, CALLS_PER_ROUND)
    };
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for (_, peer) in &mut peers {
        peer.initialize();
        for _ in 0..calls {
            peer.timed_call(); // warm up
        }
    }
    let mut ratios = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut medians = [Duration::ZERO; 2];
        for (i, (_, peer)) in peers.iter_mut().enumerate() {
            let mut round: Vec<Duration> = (0..calls).map(|_| peer.timed_call()).collect();
            medians[i] = percentile(&mut round, 50.0);
            times[i].extend(round);
        }
        ratios.push(medians[0].as_secs_f64() / medians[1].as_secs_f64());
    }
    println!(
        "\nstdio round trip of tools/call {TOOL} ({} calls each, {rounds} alternating rounds)",
        rounds * calls
    );
    println!(
        "{:<20} {:>10} {:>10} {:>10}",
        "server", "median", "mean", "p99"
    );
    for (i, (name, _)) in peers.iter().enumerate() {
        let t = &mut times[i];
        println!(
            "{name:<20} {:>10} {:>10} {:>10}",
            micros(percentile(t, 50.0)),
            micros(mean(t)),
            micros(percentile(t, 99.0))
        );
    }
    let overall = percentile(&mut times[0], 50.0).as_secs_f64()
        / percentile(&mut times[1], 50.0).as_secs_f64();
    ratios.sort_by(f64::total_cmp);
    let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    println!(
        "toolhost / no-op floor: median of the rounds' ratios {:.2}x (quartiles {:.2}x, {:.2}x); \
         ratio of the overall medians {overall:.2}x",
        quartile(2),
        quartile(1),
        quartile(3)
    );
}

// ------------------------------------------------------------ start-up

fn startup(toolhost: &Path, quick: bool) {
    let repo = Repo::at(workspace_root());
    for language in [Language::Python, Language::JavaScript, Language::C] {
        build_example(&repo, language)
            .unwrap_or_else(|e| panic!("building the {language} example failed: {e:#}"));
    }
    let config = repo.root().join("example-tools/toolhost.toml");
    let status = Command::new(toolhost)
        .arg("--config")
        .arg(&config)
        .arg("compile")
        .stdout(Stdio::null())
        .status()
        .expect("toolhost compile runs");
    assert!(status.success(), "toolhost compile failed");
    let runs = if quick { 2 } else { STARTUPS };
    let mut times = Vec::new();
    let mut tools = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let mut serve = Command::new(toolhost);
        serve.arg("--config").arg(&config).arg("serve");
        let mut peer = Peer::spawn(serve);
        peer.initialize();
        let list = peer.request("tools/list", json!({}));
        times.push(started.elapsed());
        tools = list["result"]["tools"].as_array().map_or(0, Vec::len);
    }
    println!(
        "\nstart-up to the first tools/list answer (example-tools/toolhost.toml: 6 modules, {tools} tools, cached; {runs} runs)"
    );
    println!(
        "median {}  min {}  max {}",
        millis(percentile(&mut times, 50.0)),
        millis(*times.iter().min().expect("runs")),
        millis(*times.iter().max().expect("runs"))
    );
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/cli is two levels down")
        .to_path_buf()
}

// ------------------------------------------------------------ HTTP

fn http(toolhost: &Path, config: &Path, quick: bool) {
    let mut child = Command::new(toolhost)
        .arg("--config")
        .arg(config)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolhost serve --http starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let authority = loop {
        let mut line = String::new();
        let read = stderr.read_line(&mut line).expect("stderr open");
        assert!(read > 0, "toolhost serve --http exited");
        if let Some(url) = line.trim().strip_prefix("toolhost: serving MCP at http://") {
            break url.trim_end_matches("/mcp").to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let duration = if quick {
        Duration::from_secs(1)
    } else {
        HTTP_DURATION
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut times: Vec<Duration> = runtime.block_on(async {
        let clients =
            (0..HTTP_CLIENTS).map(|_| tokio::spawn(http_client(authority.clone(), duration)));
        let mut all = Vec::new();
        for client in clients.collect::<Vec<_>>() {
            all.extend(client.await.expect("a client"));
        }
        all
    });
    let _ = child.kill();
    let _ = child.wait();
    let calls = times.len();
    println!(
        "\nHTTP (stateless 2026-07-28), {HTTP_CLIENTS} clients on keep-alive connections, {} s, client and server on the same {} cores",
        duration.as_secs(),
        cores()
    );
    println!(
        "{:.0} calls/s  p50 {}  p99 {}",
        calls as f64 / duration.as_secs_f64(),
        millis(percentile(&mut times, 50.0)),
        millis(percentile(&mut times, 99.0))
    );
}

/// One client: calls in a loop on one connection for `duration`; the
/// latency of each call.
async fn http_client(authority: String, duration: Duration) -> Vec<Duration> {
    let stream = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connects");
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .expect("handshake");
    tokio::spawn(connection);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": TOOL, "arguments": {"expression": EXPRESSION},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }})
    .to_string();
    let body = Bytes::from(body);
    let end = Instant::now() + duration;
    let mut times = Vec::new();
    while Instant::now() < end {
        let request = hyper::Request::post("/mcp")
            .header("host", &authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", TOOL)
            .body(Full::new(body.clone()))
            .expect("a request");
        let started = Instant::now();
        sender.ready().await.expect("the connection is open");
        let response = sender.send_request(request).await.expect("a response");
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        times.push(started.elapsed());
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            status.is_success() && text.contains(&format!("\"text\":\"{ANSWER}\"")),
            "{status}: {text}"
        );
    }
    times
}

// ------------------------------------------------------------ statistics

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort_unstable();
    let rank = ((p / 100.0) * (times.len() - 1) as f64).round() as usize;
    times[rank]
}

fn mean(times: &[Duration]) -> Duration {
    times.iter().sum::<Duration>() / u32::try_from(times.len()).expect("fewer than 2^32")
}

fn micros(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}
