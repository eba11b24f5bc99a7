//! Bodies that count: a request body cut at its limit, and a response body
//! cut at its limit, at the guest's idle timeout and at the call's deadline,
//! holding one of the call's in-flight slots until it ends.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;
use wasmtime_wasi_http::{Error, WasiBody};

use super::shared::Shared;

/// A guest's request body, refused past `limit` bytes.
pub(in crate::sandbox) struct RequestBody {
    inner: WasiBody,
    left: u64,
    limit: u64,
    exceeded: Arc<AtomicBool>,
}

impl RequestBody {
    /// `inner`, at most `limit` bytes of it.
    pub(super) fn new(inner: WasiBody, limit: u64) -> Self {
        Self {
            inner,
            left: limit,
            limit,
            exceeded: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Set once the body went past its limit.
    pub(super) fn exceeded(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.exceeded)
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            let len = data.len() as u64;
            if len > self.left {
                self.exceeded.store(true, Ordering::Relaxed);
                self.left = 0;
                return Poll::Ready(Some(Err(Error::HttpRequestBodySize(Some(self.limit)))));
            }
            self.left -= len;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body as the guest reads it: at most the call's limit, each
/// frame within the guest's idle timeout, none after the call's deadline.
pub(super) struct ResponseBody {
    inner: hyper::body::Incoming,
    left: u64,
    shared: Arc<Shared>,
    deadline: Pin<Box<Sleep>>,
    idle: Option<(Duration, Pin<Box<Sleep>>)>,
    /// The call's in-flight slot, freed when the body is dropped.
    _slot: OwnedSemaphorePermit,
}

impl ResponseBody {
    /// The body of a response to a request of `shared`'s call.
    pub(super) fn new(
        inner: hyper::body::Incoming,
        shared: Arc<Shared>,
        slot: OwnedSemaphorePermit,
        idle: Option<Duration>,
    ) -> Self {
        let deadline = Box::pin(tokio::time::sleep_until(shared.deadline.get().into()));
        let idle = idle.map(|after| (after, Box::pin(tokio::time::sleep(after))));
        Self {
            inner,
            left: shared.response_body_limit(),
            shared,
            deadline,
            idle,
            _slot: slot,
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(Error::Hyper(error)))),
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let len = data.len() as u64;
                    if len > this.left {
                        this.left = 0;
                        let limit = this.shared.note_response_too_large();
                        return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(limit)))));
                    }
                    this.left -= len;
                }
                if let Some((after, sleep)) = &mut this.idle {
                    let at = tokio::time::Instant::now() + *after;
                    sleep.as_mut().reset(at);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    this.shared.note_deadline();
                    return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
                }
                if let Some((_, sleep)) = &mut this.idle
                    && sleep.as_mut().poll(cx).is_ready()
                {
                    return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
