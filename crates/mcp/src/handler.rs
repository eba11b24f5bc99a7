//! [`ToolhostServer`]: the MCP server handler. `tools/list` lists the active
//! tools; `tools/call` runs one through the same sandboxed path as the
//! library and the command, and every failure is a result with `isError`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use axum::http::request::Parts;

// MCP logging is deprecated in the 2026-07-28 protocol (see client_log.rs).
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    ContentBlock, CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolhost::StderrListener;

use crate::arguments::RawArguments;
use crate::arguments::stdio::RawCalls;
use crate::catalog::OutputCheck;
use crate::client_log::{ClientLevel, ToolLog};
use crate::metrics::Outcome;
use crate::progress::CallProgress;
use crate::state::{Served, ToolSet};
use crate::tasks::Owner;

/// How long a client may keep a `tools/list` answer (it is also told of
/// changes), in milliseconds.
const LIST_TTL_MS: u64 = 60_000;

/// The session id of a stdio connection (one per process).
const STDIO: &str = "stdio";

/// The MCP server: one per connection (stdio) or session (HTTP), all
/// sharing one `Served`.
///
/// The calls of one MCP session are the calls of one toolhost session
/// ([`toolhost::Session`]): in modules with sessions on they share state.
/// Over HTTP that is the 2025-11-25 session (its `Mcp-Session-Id`); a
/// stdio connection is one session; a request without a session (a
/// 2026-07-28 client, which has none) is a fresh call.
#[derive(Clone)]
pub struct ToolhostServer {
    served: Arc<Served>,
    /// On stdio: the calls' arguments as the client wrote them, by id.
    raw_calls: Option<Arc<RawCalls>>,
    /// On stdio: the connection's session.
    stdio_session: Option<toolhost::SessionId>,
    /// The log level this session (or connection) asked for.
    level: ClientLevel,
}

impl ToolhostServer {
    pub(crate) fn new(served: Arc<Served>) -> Self {
        Self {
            served,
            raw_calls: None,
            stdio_session: None,
            level: ClientLevel::default(),
        }
    }

    /// A server whose calls take their arguments' text from `raw_calls`
    /// (stdio, where [`Intercepted`](crate::arguments::stdio::Intercepted)
    /// puts them), all in one session: `session`.
    pub(crate) fn with_raw_calls(
        served: Arc<Served>,
        raw_calls: Arc<RawCalls>,
        session: toolhost::SessionId,
    ) -> Self {
        Self {
            served,
            raw_calls: Some(raw_calls),
            stdio_session: Some(session),
            level: ClientLevel::default(),
        }
    }

    /// The toolhost session of the call `context` is about: the HTTP
    /// request's `Mcp-Session-Id`, or the stdio connection's; `None` for a
    /// request without a session.
    fn session(&self, context: &RequestContext<RoleServer>) -> Option<toolhost::SessionId> {
        let from_http =
            http_session(&context.extensions).and_then(|id| self.served.session_key(id));
        from_http.or_else(|| self.stdio_session.clone())
    }

    /// Who may see the tasks the request `context` makes: its HTTP
    /// session, the stdio connection, or every request without a session.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        match (http_session(&context.extensions), &self.stdio_session) {
            (Some(id), _) => Owner::Session(id.to_string()),
            (None, Some(_)) => Owner::Session(STDIO.to_string()),
            (None, None) => Owner::Sessionless,
        }
    }

    /// The arguments text of the call `context` is about, as the client
    /// sent it: from the HTTP request's extensions, or taken by id on stdio.
    fn raw_arguments(&self, context: &RequestContext<RoleServer>) -> Option<RawArguments> {
        let from_http = context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.extensions.get::<RawArguments>())
            .cloned();
        from_http.or_else(|| self.raw_calls.as_ref()?.take(&context.id))
    }

    /// The answer to a call that could not start: all places taken.
    fn busy(&self) -> CallToolResult {
        error_result(format!(
            "Error: toolhost is busy: {} tool calls are running, the most it runs at once \
             (serve.max_calls_in_flight); try again shortly.",
            self.served.settings.max_calls_in_flight
        ))
    }

    /// The metrics label of tool `name`: its name if it is one of the
    /// served tools (so that unknown names cannot grow the metrics).
    fn label(&self, name: &str) -> String {
        let tools = self.served.tools();
        if tools.manager.get(name).is_some() {
            name.to_string()
        } else {
            "(unknown)".to_string()
        }
    }
}

/// The success result of tool `name` with its answer `text`, plus the
/// answer as structured content if it matches the tool's `outputSchema`.
/// The check runs on a thread of its own, within what is left of the
/// tool's time limit (counted from `started`); one that does not finish
/// in time is an error text naming the limit.
async fn structured(
    name: &str,
    check: OutputCheck,
    text: String,
    started: Instant,
    stop: &CancellationToken,
) -> Result<CallToolResult, String> {
    let left = check.time_limit.saturating_sub(started.elapsed());
    let limit_ms = check.time_limit.as_millis();
    let answer = Arc::new(text);
    let checked = {
        let answer = Arc::clone(&answer);
        tokio::task::spawn_blocking(move || check.structured(&answer))
    };
    let structured = tokio::select! {
        checked = tokio::time::timeout(left, checked) => match checked {
            Ok(checked) => checked.unwrap_or(None),
            Err(_) => {
                return Err(format!(
                    "Error: tool '{name}' answered, but checking its answer against its \
                     outputSchema did not finish within its time limit of {limit_ms} ms \
                     (limits.timeout_ms)."
                ));
            }
        },
        () = stop.cancelled() => return Err("Error: the call was cancelled.".into()),
    };
    let text = Arc::try_unwrap(answer).unwrap_or_else(|shared| (*shared).clone());
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    Ok(result)
}

/// The HTTP session (its `Mcp-Session-Id`) of the message whose transport
/// extensions are `extensions`; `None` on stdio or without a session.
fn http_session(extensions: &rmcp::model::Extensions) -> Option<&str> {
    extensions
        .get::<Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
}

/// A call's arguments: the text the client wrote, or rmcp's parsed value.
enum CallArguments {
    Text(Arc<str>),
    Parsed(Option<Value>),
}

/// The call of tool `name` in `session` (or none), its stderr handed to
/// `stderr` if given.
fn start_call(
    manager: &toolhost::ToolManager,
    session: Option<toolhost::SessionId>,
    name: &str,
    arguments: &CallArguments,
    stderr: Option<&StderrListener>,
) -> Pin<Box<dyn Future<Output = Result<String, toolhost::ToolError>> + Send>> {
    let Some(id) = session else {
        return match arguments {
            CallArguments::Text(text) => {
                Box::pin(manager.call_tool_json_listened_async(name, text, stderr))
            }
            CallArguments::Parsed(value) => {
                Box::pin(manager.call_tool_listened_async(name, value.as_ref(), stderr))
            }
        };
    };
    let session = manager.join_session(id);
    match arguments {
        CallArguments::Text(text) => {
            Box::pin(session.call_tool_json_listened_async(name, text, stderr))
        }
        CallArguments::Parsed(value) => {
            Box::pin(session.call_tool_listened_async(name, value.as_ref(), stderr))
        }
    }
}

/// One tool call, from its start to its result.
struct Call {
    served: Arc<Served>,
    /// The tool set in force when the call came (a reload does not change
    /// it under the call).
    tools: Arc<ToolSet>,
    session: Option<toolhost::SessionId>,
    name: String,
    /// The tool's name in the metrics.
    label: String,
    arguments: CallArguments,
}

impl Call {
    /// Runs the call, its stderr handed to `stderr` if given; `None` if
    /// `stop` was cancelled first (the call is then stopped).
    async fn answer(
        &self,
        stderr: Option<StderrListener>,
        stop: &CancellationToken,
        started: Instant,
    ) -> Option<Result<String, toolhost::ToolError>> {
        let metrics = &self.served.metrics;
        metrics.in_flight.inc();
        let call = start_call(
            &self.tools.manager,
            self.session.clone(),
            &self.name,
            &self.arguments,
            stderr.as_ref(),
        );
        let answer = tokio::select! {
            answer = self.served.threads.run(call) => Some(answer.unwrap_or_else(|e| {
                Err(toolhost::ToolError::new(
                    toolhost::ToolErrorKind::Host,
                    format!("the call ended in the host: {e}"),
                ))
            })),
            () = stop.cancelled() => None,
        };
        metrics.in_flight.dec();
        metrics.latency.observe(started.elapsed().as_secs_f64());
        answer
    }

    /// The call's result for the client, from its `answer`; counted in the
    /// metrics.
    async fn result(
        &self,
        answer: Option<Result<String, toolhost::ToolError>>,
        started: Instant,
        stop: &CancellationToken,
    ) -> CallToolResult {
        let (outcome, result) = match answer {
            None => (
                Outcome::Cancelled,
                error_result("Error: the call was cancelled.".to_string()),
            ),
            Some(Ok(text)) => match self.tools.catalog.output_check(&self.name) {
                None => (
                    Outcome::Ok,
                    CallToolResult::success(vec![ContentBlock::text(text)]),
                ),
                Some(check) => match structured(&self.name, check, text, started, stop).await {
                    Ok(result) => (Outcome::Ok, result),
                    Err(error) => (Outcome::Error, error_result(error)),
                },
            },
            Some(Err(error)) => (Outcome::Error, error_result(error.to_string())),
        };
        self.served.metrics.call(&self.label, outcome);
        result
    }
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ServerHandler for ToolhostServer {
    #[allow(deprecated)] // MCP logging (see client_log.rs)
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools from WebAssembly modules, each call run in a fresh sandbox under \
                 fuel, time and memory limits. A failed call is a result with isError and \
                 an `Error: ...` text.",
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(
                    format!("the cursor '{cursor}' is not one this server gave"),
                    None,
                )
            })?,
        };
        let tools = self.served.tools();
        let size = usize::try_from(self.served.settings.page_size).unwrap_or(usize::MAX);
        let (page, next) = tools.catalog.page(start, size);
        let mut result = ListToolsResult::with_all_items(page)
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next.map(|n| n.to_string());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        // Taken first, so that a busy answer leaves nothing waiting.
        let raw_arguments = self.raw_arguments(&context);
        let label = self.label(&name);
        let Some(place) = self.served.start_call() else {
            self.served.metrics.call(&label, Outcome::Busy);
            return Ok(self.busy().into());
        };
        // The text the client wrote, byte for byte; rmcp's parsed value
        // only for a message that did not pass through the interception.
        let arguments = match raw_arguments {
            Some(RawArguments(text)) => CallArguments::Text(text),
            None => CallArguments::Parsed(request.arguments.map(Value::Object)),
        };
        let call = Call {
            served: Arc::clone(&self.served),
            tools: self.served.tools(),
            session: self.session(&context),
            name,
            label,
            arguments,
        };
        if context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
        {
            // Logs and progress are not sent for tasks (the extension says
            // so): the request has ended when the call runs.
            let label = call.label.clone();
            let made = self
                .served
                .tasks
                .start(self.owner(&context), |stop| async move {
                    let _place = place;
                    let started = Instant::now();
                    let answer = call.answer(None, &stop, started).await;
                    call.result(answer, started, &stop).await
                });
            return Ok(match made {
                Ok(task) => CallToolResponse::Task(CreateTaskResult::new(task)),
                Err(full) => {
                    self.served.metrics.call(&label, Outcome::Busy);
                    error_result(full.text()).into()
                }
            });
        }
        let _place = place;
        let started = Instant::now();
        // The tool's stderr goes to the client as log entries, unless it
        // asked for less than `info` (client_log.rs says when it asks).
        let log = self
            .level
            .wants_tool_stderr(&context.meta)
            .then(|| ToolLog::new(context.peer.clone(), &call.name));
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| CallProgress::start(context.peer.clone(), token, &call.name));
        let answer = match log {
            Some(log) => {
                let stderr = log.listener();
                log.during(call.answer(Some(stderr), &context.ct, started))
                    .await
            }
            None => call.answer(None, &context.ct, started).await,
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        Ok(call.result(answer, started, &context.ct).await.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = self
            .served
            .tasks
            .get(&self.owner(&context), &request.task_id)?;
        Ok(GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.served
            .tasks
            .check(&self.owner(&context), &request.task_id)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.served
            .tasks
            .cancel(&self.owner(&context), &request.task_id)
    }

    #[allow(deprecated)] // MCP logging (see client_log.rs)
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(request.level);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.served.watch_changes();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    context
                        .sink()
                        .notify_tool_list_changed()
                        .await
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                }
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Over HTTP the session's id; over stdio there is one session.
        let id = http_session(&context.extensions)
            .unwrap_or(STDIO)
            .to_string();
        self.served.add_session(id, context.peer);
    }
}
