//! Logs for the client: the level a client asked for (`logging/setLevel`,
//! per session over HTTP, per connection over stdio; or, at 2026-07-28, the
//! request's own `io.modelcontextprotocol/logLevel`) and what a tool writes
//! to stderr during a call, sent to it as `notifications/message` entries
//! while the call runs, never mixed into the result.
//!
//! What reaches the client is bounded three ways: by the module's capture
//! (only the first `limits.max_captured_bytes` of a call's stderr are heard
//! at all), by [`MAX_LINES`] entries per call, and by a queue of
//! [`QUEUE`] entries that is never waited on: a guest never blocks on a
//! slow client, and what does not fit is counted and said in one last
//! entry.

// MCP logging is deprecated in the 2026-07-28 protocol (SEP-2577), which
// rmcp marks on its types; 2025-11-25 and 2025-06-18 clients still use it.
#![allow(deprecated)]

use std::future::Future;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject};
use rmcp::service::RoleServer;
use serde_json::Value;
use tokio::sync::mpsc;
use toolhost::StderrListener;

/// The most log entries one call sends; the rest are counted.
pub(crate) const MAX_LINES: u64 = 1000;

/// The longest entry, in bytes: a longer line is cut, saying so.
pub(crate) const MAX_LINE_BYTES: usize = 8 * 1024;

/// Entries waiting to be sent, at most; past that they are counted.
const QUEUE: usize = 256;

/// How long the entries still queued when a call ends may take to be
/// handed to the transport before the result goes anyway.
const FINISH_WITHIN: Duration = Duration::from_secs(1);

/// The level a client asked for: entries below it are not sent. Until a
/// client asks, `info` (a tool's stderr, which is sent at `info`).
#[derive(Clone, Debug)]
pub(crate) struct ClientLevel(Arc<AtomicU8>);

impl Default for ClientLevel {
    fn default() -> Self {
        Self(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl ClientLevel {
    /// Sets the level the client asked for.
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    /// Whether a tool's stderr (sent at `info`) is sent for the request
    /// whose `_meta` is `meta`: at the level it carries if it carries one;
    /// for a 2026-07-28 request (which names its protocol version) that
    /// carries none, not at all (that version sends logs only to requests
    /// that opt in); else at the level of the session or connection.
    pub(crate) fn wants_tool_stderr(&self, meta: &RequestMetaObject) -> bool {
        match (meta.log_level(), meta.protocol_version()) {
            (Some(level), _) => rank(LoggingLevel::Info) >= rank(level),
            (None, Some(_)) => false,
            (None, None) => self.wants(LoggingLevel::Info),
        }
    }

    /// Whether an entry at `level` is sent.
    pub(crate) fn wants(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// The levels' order of severity, lowest first.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// One call's stderr on its way to the client as log entries (logger: the
/// tool's name, level `info`). Nothing is spawned for it: the entries are
/// sent by the future that runs the call ([`during`](Self::during)), so a
/// call that writes nothing costs a queue and no task.
pub(crate) struct ToolLog {
    lines: Arc<Lines>,
    entries: mpsc::Receiver<String>,
    peer: Peer<RoleServer>,
    logger: String,
}

impl ToolLog {
    /// The stderr of tool `tool`'s call, for `peer`.
    pub(crate) fn new(peer: Peer<RoleServer>, tool: &str) -> Self {
        let (queue, entries) = mpsc::channel::<String>(QUEUE);
        Self {
            lines: Arc::new(Lines::new(queue)),
            entries,
            peer,
            logger: tool.to_string(),
        }
    }

    /// The listener to hand the call.
    pub(crate) fn listener(&self) -> StderrListener {
        let lines = Arc::clone(&self.lines);
        StderrListener::new(move |bytes| lines.hear(bytes))
    }

    /// Runs `call`, sending its stderr's lines to the client as they come.
    /// When it ends: queues its last line (one without a newline) and how
    /// many were left out, closes the queue (a listener still held anywhere
    /// hears nothing more), and waits up to [`FINISH_WITHIN`] for the
    /// entries to be handed to the transport, so that they go before the
    /// call's result.
    pub(crate) async fn during<F: Future>(self, call: F) -> F::Output {
        let Self {
            lines,
            mut entries,
            peer,
            logger,
        } = self;
        let sending = send_all(&mut entries, &peer, &logger);
        tokio::pin!(sending, call);
        let mut sent_all = false;
        let output = loop {
            tokio::select! {
                output = &mut call => break output,
                () = &mut sending, if !sent_all => sent_all = true,
            }
        };
        lines.flush();
        let left_out = lines.left_out.load(Ordering::Relaxed);
        let queue = lines.close();
        let note = async move {
            if let Some(queue) = queue
                && left_out > 0
            {
                let note = format!(
                    "(toolhost: {left_out} more lines of this call's stderr were not sent: at \
                     most {MAX_LINES} are sent per call, and only while the client keeps up)"
                );
                let _ = queue.send(note).await;
            }
        };
        let rest = async {
            if !sent_all {
                sending.await;
            }
        };
        let _ = tokio::time::timeout(FINISH_WITHIN, async { tokio::join!(note, rest) }).await;
        output
    }
}

/// Sends each entry of `entries` to `peer` until the queue is closed and
/// empty, or the client is gone (which takes its log with it).
async fn send_all(entries: &mut mpsc::Receiver<String>, peer: &Peer<RoleServer>, logger: &str) {
    while let Some(line) = entries.recv().await {
        let mut entry =
            LoggingMessageNotificationParam::new(LoggingLevel::Info, Value::String(line));
        entry.logger = Some(logger.to_string());
        if peer.notify_logging_message(entry).await.is_err() {
            return;
        }
    }
}

/// The lines of one call's stderr: the start of a line not ended yet, and
/// the queue complete lines go to.
struct Lines {
    partial: Mutex<Vec<u8>>,
    /// `None` once the call has finished.
    queue: Mutex<Option<mpsc::Sender<String>>>,
    sent: AtomicU64,
    left_out: AtomicU64,
}

impl Lines {
    fn new(queue: mpsc::Sender<String>) -> Self {
        Self {
            partial: Mutex::new(Vec::new()),
            queue: Mutex::new(Some(queue)),
            sent: AtomicU64::new(0),
            left_out: AtomicU64::new(0),
        }
    }

    /// Closes the queue: returns its sender, the last one.
    fn close(&self) -> Option<mpsc::Sender<String>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Takes a piece the guest wrote: each line it completes is queued.
    fn hear(&self, bytes: &[u8]) {
        let mut partial = self.partial.lock().unwrap_or_else(|e| e.into_inner());
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let (text, ended) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            // Kept up to one entry's length (plus one byte, to know it was
            // longer); the rest of a long line is not held.
            let room = (MAX_LINE_BYTES + 1).saturating_sub(partial.len());
            partial.extend_from_slice(&text[..text.len().min(room)]);
            if ended {
                let line = std::mem::take(&mut *partial);
                self.queue_line(line);
            }
        }
    }

    /// Queues what is left of a line the call did not end.
    fn flush(&self) {
        let line = std::mem::take(&mut *self.partial.lock().unwrap_or_else(|e| e.into_inner()));
        if !line.is_empty() {
            self.queue_line(line);
        }
    }

    fn queue_line(&self, line: Vec<u8>) {
        if self.sent.load(Ordering::Relaxed) >= MAX_LINES {
            self.left_out.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queue) = queue.as_ref() else {
            return;
        };
        match queue.try_send(entry_text(&line)) {
            Ok(()) => {
                self.sent.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                self.left_out.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A line as an entry's text: invalid UTF-8 replaced, a trailing `\r`
/// dropped, cut at [`MAX_LINE_BYTES`] (at a character boundary), saying so.
fn entry_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_LINE_BYTES {
        return text.into_owned();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{} (toolhost: line cut at {MAX_LINE_BYTES} bytes)",
        &text[..end]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> (Lines, mpsc::Receiver<String>) {
        let (queue, entries) = mpsc::channel(QUEUE);
        (Lines::new(queue), entries)
    }

    fn drain(entries: &mut mpsc::Receiver<String>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(line) = entries.try_recv() {
            out.push(line);
        }
        out
    }

    #[test]
    fn pieces_become_lines_and_the_last_is_flushed() {
        let (lines, mut entries) = lines();
        lines.hear(b"one\ntw");
        lines.hear(b"o\r\nthree");
        assert_eq!(drain(&mut entries), ["one", "two"]);
        lines.flush();
        assert_eq!(drain(&mut entries), ["three"]);
    }

    #[test]
    fn a_long_line_is_cut_and_held_no_further() {
        let (lines, mut entries) = lines();
        let long = vec![b'x'; MAX_LINE_BYTES * 3];
        lines.hear(&long);
        assert!(lines.partial.lock().unwrap().len() <= MAX_LINE_BYTES + 1);
        lines.hear(b"\n");
        let got = drain(&mut entries);
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with(&"x".repeat(MAX_LINE_BYTES)));
        assert!(got[0].ends_with("(toolhost: line cut at 8192 bytes)"));
    }

    #[test]
    fn lines_past_the_queue_or_the_most_per_call_are_counted() {
        let (lines, mut entries) = lines();
        lines.hear("x\n".repeat(QUEUE + 10).as_bytes());
        assert_eq!(drain(&mut entries).len(), QUEUE);
        assert_eq!(lines.left_out.load(Ordering::Relaxed), 10);
        let (lines, mut entries) = self::lines();
        for _ in 0..MAX_LINES + 5 {
            lines.hear(b"y\n");
            drain(&mut entries);
        }
        assert_eq!(lines.sent.load(Ordering::Relaxed), MAX_LINES);
        assert_eq!(lines.left_out.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_closed_queue_takes_nothing_more() {
        let (lines, mut entries) = lines();
        lines.hear(b"before\n");
        let queue = lines.close();
        lines.hear(b"after\n");
        drop(queue);
        assert_eq!(drain(&mut entries), ["before"]);
        assert!(entries.try_recv().is_err());
    }

    #[test]
    fn the_level_filters_by_severity() {
        let level = ClientLevel::default();
        assert!(level.wants(LoggingLevel::Info));
        assert!(!level.wants(LoggingLevel::Debug));
        level.set(LoggingLevel::Warning);
        assert!(!level.wants(LoggingLevel::Info));
        assert!(level.wants(LoggingLevel::Error));
        level.set(LoggingLevel::Debug);
        assert!(level.wants(LoggingLevel::Debug));
    }

    #[test]
    fn a_request_of_2026_07_28_gets_logs_only_if_it_asks() {
        let level = ClientLevel::default();
        let mut meta = RequestMetaObject::new();
        assert!(level.wants_tool_stderr(&meta));
        meta.set_protocol_version(rmcp::model::ProtocolVersion::V_2026_07_28);
        assert!(!level.wants_tool_stderr(&meta));
        meta.set_log_level(LoggingLevel::Debug);
        assert!(level.wants_tool_stderr(&meta));
        meta.set_log_level(LoggingLevel::Error);
        assert!(!level.wants_tool_stderr(&meta));
    }
}
