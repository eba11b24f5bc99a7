//! Blocking calls that Ctrl-C stops: the call runs with the GIL released,
//! and every [`SIGNAL_CHECK`] the thread takes the GIL back for a moment
//! to run Python's signal handlers. When one raises (Ctrl-C's
//! `KeyboardInterrupt`), the call is dropped, which stops its guest at its
//! next epoch tick, and the exception is raised to the caller.

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use pyo3::prelude::*;

/// How often a blocking call looks for a signal: the engine's epoch tick.
const SIGNAL_CHECK: Duration = Duration::from_millis(10);

/// `call`'s output, or the exception a signal handler raised while it ran.
///
/// Inside a tokio runtime (a Python tool called back from toolhost's own
/// threads, which never run signal handlers) the call simply blocks.
pub fn run_interruptibly<T, F>(py: Python<'_>, call: F) -> PyResult<T>
where
    T: Send,
    F: Future<Output = T> + Send,
{
    py.detach(|| {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Ok(futures_executor::block_on(call));
        }
        let runtime = pyo3_async_runtimes::tokio::get_runtime();
        // Most calls end in their first step: then no timer is set at all.
        let mut call = Box::pin(call);
        {
            let _context = runtime.enter();
            let mut first = Context::from_waker(Waker::noop());
            if let Poll::Ready(output) = call.as_mut().poll(&mut first) {
                return Ok(output);
            }
        }
        runtime.block_on(async {
            loop {
                tokio::select! {
                    biased;
                    output = &mut call => return Ok(output),
                    () = tokio::time::sleep(SIGNAL_CHECK) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}
