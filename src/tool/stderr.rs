//! [`StderrListener`]: where a tool's stderr goes while its call runs.

use std::fmt;
use std::sync::Arc;

/// Receives what a tool writes to stderr during a call, as it writes it:
/// a server passes it on (as MCP log messages, say) while the call still
/// runs. It gets only what the module keeps of its output (the first
/// `limits.max_captured_bytes` of the call), so what it receives is
/// bounded as the capture is; it is called on the thread that runs the
/// guest, so it must return at once (hand the bytes on, never wait).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolhost::StderrListener;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let kept = Arc::clone(&seen);
/// let listener = StderrListener::new(move |bytes| kept.lock().unwrap().extend_from_slice(bytes));
/// listener.hear(b"working\n");
/// assert_eq!(&*seen.lock().unwrap(), b"working\n");
/// ```
#[derive(Clone)]
pub struct StderrListener(Arc<Hear>);

/// What a listener does with a piece of stderr.
type Hear = dyn Fn(&[u8]) + Send + Sync;

impl StderrListener {
    /// A listener that passes each piece the guest writes to `hear`.
    pub fn new(hear: impl Fn(&[u8]) + Send + Sync + 'static) -> Self {
        Self(Arc::new(hear))
    }

    /// Hands `bytes` (a piece of the guest's stderr) to the listener.
    pub fn hear(&self, bytes: &[u8]) {
        (self.0)(bytes);
    }
}

impl fmt::Debug for StderrListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StderrListener")
    }
}
