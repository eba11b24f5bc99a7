//! [`Capture`]: a bounded in-memory stdout/stderr for one call.
//!
//! A guest may write as much as it likes; the first `limit` bytes are kept,
//! the rest are dropped and counted. Writing never fails and never blocks,
//! so a flood of output cannot trap or stall a call. What is kept is also
//! handed, as it is written, to the call's listener if it has one.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;

use crate::tool::StderrListener;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// What one stream captured: the kept bytes and how many were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    /// The first bytes written, up to the limit.
    pub(crate) bytes: Vec<u8>,
    /// How many bytes were written past the limit and dropped.
    pub(crate) dropped: u64,
}

impl Captured {
    /// The kept bytes as text (invalid UTF-8 replaced).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

#[derive(Debug)]
struct Buffer {
    captured: Captured,
    limit: usize,
    /// Who hears the kept bytes as they are written, during one call.
    listener: Option<StderrListener>,
}

/// A bounded output stream handed to a guest as stdout or stderr.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    buffer: Arc<Mutex<Buffer>>,
}

impl Capture {
    /// A capture that keeps at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        let buffer = Buffer {
            captured: Captured::default(),
            limit,
            listener: None,
        };
        Self {
            buffer: Arc::new(Mutex::new(buffer)),
        }
    }

    /// What was captured so far.
    pub(crate) fn contents(&self) -> Captured {
        self.lock().captured.clone()
    }

    /// Forgets what was captured (for the next call of a warm instance).
    pub(crate) fn clear(&self) {
        let mut buffer = self.lock();
        buffer.captured.bytes.clear();
        buffer.captured.dropped = 0;
    }

    /// Hands what is kept from now on to `listener` as well (`None`: to
    /// no one), for the call about to run.
    pub(crate) fn listen(&self, listener: Option<StderrListener>) {
        self.lock().listener = listener;
    }

    fn lock(&self) -> MutexGuard<'_, Buffer> {
        // A poisoned lock only means another writer panicked mid-append; the
        // bytes are still a valid prefix, so keep using them.
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append(&self, bytes: &[u8]) {
        let mut buffer = self.lock();
        let room = buffer.limit.saturating_sub(buffer.captured.bytes.len());
        let kept = bytes.len().min(room);
        buffer.captured.bytes.extend_from_slice(&bytes[..kept]);
        buffer.captured.dropped += (bytes.len() - kept) as u64;
        let listener = buffer.listener.clone();
        drop(buffer);
        if let (Some(listener), true) = (listener, kept > 0) {
            listener.hear(&bytes[..kept]);
        }
    }
}

impl IsTerminal for Capture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Capture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// How much a guest may write in one `write` call; WASI streams use ~64 KiB.
const WRITE_PERMIT: usize = 64 * 1024;

impl OutputStream for Capture {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[async_trait::async_trait]
impl Pollable for Capture {
    async fn ready(&mut self) {}
}

impl AsyncWrite for Capture {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_prefix_and_counts_the_rest() {
        let capture = Capture::new(4);
        capture.append(b"abc");
        capture.append(b"defg");
        let c = capture.contents();
        assert_eq!(c.bytes, b"abcd");
        assert_eq!(c.dropped, 3);
        assert_eq!(c.text(), "abcd");
    }

    #[test]
    fn a_listener_hears_only_what_is_kept_and_only_while_it_listens() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heard);
        let capture = Capture::new(6);
        capture.append(b"ab");
        capture.listen(Some(StderrListener::new(move |b| {
            kept.lock().unwrap().extend_from_slice(b)
        })));
        capture.append(b"cd");
        capture.append(b"efgh");
        capture.append(b"ij");
        capture.listen(None);
        capture.clear();
        capture.append(b"kl");
        assert_eq!(&*heard.lock().unwrap(), b"cdef");
    }
}
