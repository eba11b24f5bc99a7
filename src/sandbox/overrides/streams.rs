//! File streams that do their reads and writes on the call's own thread.
//!
//! wasmtime-wasi's file streams run each read and write as a task of a
//! thread pool shared by every call, and a guest can keep one going per
//! stream it opens, still running after the call ends; a slow filesystem
//! in one call could so hold up every other call. These streams read and
//! write at once, on the thread running the call (as the other filesystem
//! functions do with `allow_blocking_current_thread`), and count what they
//! write against the call's `max_write_bytes`.

use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use crate::sandbox::budget::CallBudget;

/// The most bytes one read returns, and one write accepts.
const CHUNK_BYTES: usize = 1024 * 1024;

/// A file read from `position` on.
pub(super) struct FileReader {
    file: Arc<std::fs::File>,
    position: u64,
    closed: bool,
}

impl FileReader {
    pub(super) fn new(file: Arc<std::fs::File>, position: u64) -> Self {
        Self {
            file,
            position,
            closed: false,
        }
    }
}

#[async_trait::async_trait]
impl Pollable for FileReader {
    async fn ready(&mut self) {}
}

impl InputStream for FileReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        let mut buffer = vec![0; size.min(CHUNK_BYTES)];
        if buffer.is_empty() {
            return Ok(Bytes::new());
        }
        let read = self
            .file
            .read_at(&mut buffer, self.position)
            .map_err(|e| StreamError::LastOperationFailed(e.into()))?;
        if read == 0 {
            self.closed = true;
            return Err(StreamError::Closed);
        }
        buffer.truncate(read);
        self.position += read as u64;
        Ok(buffer.into())
    }
}

/// Where a [`FileWriter`] writes.
#[derive(Clone, Copy)]
pub(super) enum WriteAt {
    /// From this position on.
    Position(u64),
    /// At the end of the file, wherever it is.
    End,
}

/// A file written within the call's budget.
pub(super) struct FileWriter {
    file: Arc<std::fs::File>,
    at: WriteAt,
    budget: Arc<CallBudget>,
    closed: bool,
}

impl FileWriter {
    pub(super) fn new(file: Arc<std::fs::File>, at: WriteAt, budget: Arc<CallBudget>) -> Self {
        Self {
            file,
            at,
            budget,
            closed: false,
        }
    }

    /// How much one write may take: what the budget has left, at most a chunk.
    fn permit(&self) -> usize {
        usize::try_from(self.budget.room())
            .unwrap_or(CHUNK_BYTES)
            .min(CHUNK_BYTES)
    }

    /// Takes from the budget the hole a write at this stream's position
    /// would leave past the file's end (a stream opened past the end, or a
    /// file cut short since), so that a sparse file counts as written.
    fn take_hole(&mut self) -> io::Result<()> {
        let WriteAt::Position(position) = self.at else {
            return Ok(());
        };
        let hole = position.saturating_sub(self.file.metadata()?.len());
        if hole > 0 && !self.budget.write(hole) {
            return Err(no_space_left());
        }
        Ok(())
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let position = match self.at {
            WriteAt::Position(p) => p,
            WriteAt::End => self.file.metadata()?.len(),
        };
        self.file.write_all_at(bytes, position)?;
        if let WriteAt::Position(p) = &mut self.at {
            *p += bytes.len() as u64;
        }
        Ok(())
    }
}

/// The error a guest gets past its write budget: no space left (the space
/// the call may use is used up), where WASI lets the host say so.
pub(super) fn no_space_left() -> io::Error {
    io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error())
}

#[async_trait::async_trait]
impl Pollable for FileWriter {
    async fn ready(&mut self) {}
}

#[async_trait::async_trait]
impl OutputStream for FileWriter {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        if let Err(e) = self.take_hole() {
            self.closed = true;
            return Err(StreamError::LastOperationFailed(e.into()));
        }
        if !self.budget.write(bytes.len() as u64) {
            self.closed = true;
            return Err(StreamError::LastOperationFailed(no_space_left().into()));
        }
        self.write_all(&bytes).map_err(|e| {
            self.closed = true;
            StreamError::LastOperationFailed(e.into())
        })
    }

    /// Writes all of `bytes`, or as much as the budget allows and then
    /// fails; unlike the default, no readiness check follows a write that
    /// used the budget up exactly.
    async fn blocking_write_and_flush(&mut self, bytes: Bytes) -> StreamResult<()> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        let room = usize::try_from(self.budget.room()).unwrap_or(usize::MAX);
        if bytes.len() <= room {
            return self.write(bytes);
        }
        let fits = bytes.slice(..room);
        self.write(fits)?;
        // Over the limit now: refused (and logged by the budget).
        self.write(bytes.slice(room..))
    }

    fn flush(&mut self) -> StreamResult<()> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        Ok(())
    }

    /// Ready at once (writes happen on the spot). A used-up budget is not
    /// an error here, where a flush asks, but at the next write.
    async fn write_ready(&mut self) -> StreamResult<usize> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        Ok(self.permit().max(1))
    }

    /// Room for at most what the budget has left, so that writes stop
    /// exactly at `max_write_bytes`; past it, the stream fails (which
    /// wasi-libc reports to the guest as EIO; the host log names the limit).
    fn check_write(&mut self) -> StreamResult<usize> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        match self.permit() {
            0 => {
                self.budget.write(1);
                self.closed = true;
                Err(StreamError::LastOperationFailed(no_space_left().into()))
            }
            permit => Ok(permit),
        }
    }
}
