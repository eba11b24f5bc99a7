//! On stdio: [`Intercepted`], the server's input with each `tools/call`'s
//! arguments taken out of its line before rmcp reads it, and [`RawCalls`],
//! where they wait for their call, by request id.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::model::RequestId;
use tokio::io::{AsyncRead, ReadBuf};

use super::{RawArguments, take_arguments};

/// The arguments taken from the lines read, waiting for their calls: at
/// most `limit`, the oldest forgotten past it (a request rmcp refused
/// never takes its arguments).
pub(crate) struct RawCalls {
    waiting: Mutex<VecDeque<(RequestId, RawArguments)>>,
    limit: usize,
}

impl RawCalls {
    /// Room for `limit` calls' arguments.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            waiting: Mutex::new(VecDeque::new()),
            limit: limit.max(1),
        })
    }

    /// Keeps `arguments` for request `id`, in place of any kept before for
    /// that id (a request rmcp refused, whose id a later one reuses).
    fn put(&self, id: RequestId, arguments: RawArguments) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.retain(|(waiting_id, _)| *waiting_id != id);
        if waiting.len() >= self.limit {
            waiting.pop_front();
        }
        waiting.push_back((id, arguments));
    }

    /// The arguments of request `id`, taken.
    pub(crate) fn take(&self, id: &RequestId) -> Option<RawArguments> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let at = waiting
            .iter()
            .position(|(waiting_id, _)| waiting_id == id)?;
        waiting.remove(at).map(|(_, arguments)| arguments)
    }
}

/// `inner`, each line of which that is a `tools/call` (and no longer than
/// `max_line`) comes out with its arguments taken into `calls`. A longer
/// line passes through as it is, never held whole: rmcp drops it.
pub(crate) struct Intercepted<R> {
    inner: R,
    calls: Arc<RawCalls>,
    max_line: usize,
    /// The line being read, while it is no longer than `max_line`.
    line: Vec<u8>,
    /// The current line is too long: its bytes pass straight through.
    passing: bool,
    /// Bytes ready for the reader, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    ended: bool,
}

/// How much is read from the input at once.
const CHUNK: usize = 16 * 1024;

impl<R> Intercepted<R> {
    /// `inner`, its calls' arguments put in `calls`.
    pub(crate) fn new(inner: R, calls: Arc<RawCalls>, max_line: usize) -> Self {
        Self {
            inner,
            calls,
            max_line,
            line: Vec::new(),
            passing: false,
            ready: Vec::new(),
            ready_at: 0,
            ended: false,
        }
    }

    /// Takes in `bytes` read from the input.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(at) => bytes.split_at(at + 1),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if self.passing {
                self.ready.extend_from_slice(part);
            } else {
                self.line.extend_from_slice(part);
                if self.line.len() > self.max_line.saturating_add(2) {
                    // Too long for rmcp to read: let it pass, unlooked at.
                    self.ready.append(&mut self.line);
                    self.passing = true;
                }
            }
            if newline.is_some() {
                if !self.passing {
                    self.finish_line();
                }
                self.passing = false;
            }
        }
    }

    /// Passes on the line read whole (with its newline), its call's
    /// arguments taken out.
    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        match take_arguments(body) {
            Some(taken) if taken.id.is_some() => {
                let id = taken.id.expect("checked");
                self.calls.put(id, taken.arguments);
                self.ready.extend_from_slice(&taken.message);
                self.ready.push(b'\n');
            }
            _ => self.ready.extend_from_slice(&line),
        }
    }

    /// Hands out what is ready; whether anything was.
    fn hand_out(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        let ready = &self.ready[self.ready_at..];
        if ready.is_empty() {
            return false;
        }
        let n = ready.len().min(buf.remaining());
        buf.put_slice(&ready[..n]);
        self.ready_at += n;
        if self.ready_at == self.ready.len() {
            self.ready.clear();
            self.ready_at = 0;
        }
        true
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Intercepted<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.hand_out(buf) {
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                // An unfinished last line is not a message: rmcp drops it.
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; CHUNK];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    this.ended = true;
                    let rest = std::mem::take(&mut this.line);
                    this.ready.extend_from_slice(&rest);
                }
                Poll::Ready(Ok(())) => this.take_in(read.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_through(input: &[u8], max_line: usize) -> (Vec<u8>, Arc<RawCalls>) {
        let calls = RawCalls::new(8);
        let mut reader = Intercepted::new(input, Arc::clone(&calls), max_line);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.expect("read");
        (out, calls)
    }

    #[tokio::test]
    async fn calls_lose_their_arguments_to_the_table_and_the_rest_passes() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1.10}}}"#,
            "\r\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"a","arguments":{"y":-0}}}"#,
            "\n",
            "unfinished"
        );
        let (out, calls) = read_through(input.as_bytes(), 1 << 20).await;
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"a","arguments":{}}}"#,
                "\n",
                "unfinished"
            )
        );
        let take = |id| calls.take(&id).map(|a| a.0.to_string());
        assert_eq!(take(RequestId::Number(1)).as_deref(), Some(r#"{"x":1.10}"#));
        assert_eq!(
            take(RequestId::String("s".into())).as_deref(),
            Some(r#"{"y":-0}"#)
        );
        assert_eq!(take(RequestId::Number(1)), None, "taken once");
    }

    #[tokio::test]
    async fn a_line_too_long_passes_through_unlooked_at() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"a","arguments":{{"p":"{}"}}}}}}"#,
            "x".repeat(100_000)
        );
        let input = format!("{long}\n{{\"id\":2}}\n");
        let (out, calls) = read_through(input.as_bytes(), 1000).await;
        assert_eq!(out, input.as_bytes());
        assert_eq!(calls.take(&RequestId::Number(1)), None);
    }

    #[test]
    fn the_table_keeps_at_most_its_limit() {
        let calls = RawCalls::new(2);
        for n in 0..3 {
            calls.put(
                RequestId::Number(n),
                RawArguments(format!("{{\"n\":{n}}}").into()),
            );
        }
        assert_eq!(calls.take(&RequestId::Number(0)), None);
        assert!(calls.take(&RequestId::Number(2)).is_some());
    }

    #[test]
    fn a_reused_id_takes_the_arguments_read_last() {
        // The first request was refused by rmcp and never took its own.
        let calls = RawCalls::new(8);
        calls.put(RequestId::Number(5), RawArguments("{\"stale\":1}".into()));
        calls.put(RequestId::Number(5), RawArguments("{\"fresh\":2}".into()));
        let taken = calls.take(&RequestId::Number(5)).map(|a| a.0.to_string());
        assert_eq!(taken.as_deref(), Some("{\"fresh\":2}"));
        assert_eq!(calls.take(&RequestId::Number(5)), None);
    }
}
