//! [`Warm`]: how a module that opted in reuses its instances.

/// How a warm module keeps its instances (see
/// [`WasmModule::with_warm`](crate::WasmModule::with_warm)).
///
/// ```
/// let warm = toolhost::Warm::default();
/// assert_eq!(warm.max_calls, 1000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warm {
    /// Calls one instance serves before it is replaced by a fresh one
    /// (at least 1; 1 is the same as not warm).
    pub max_calls: u64,
}

impl Default for Warm {
    fn default() -> Self {
        Self { max_calls: 1000 }
    }
}
