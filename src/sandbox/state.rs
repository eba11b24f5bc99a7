//! [`CallState`]: what one call's store holds, and the limiter of its memory.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::policy::Access;

/// The per-call state a store holds.
pub struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: MemoryLimiter,
    pub(super) access: Arc<Access>,
}

impl CallState {
    /// What the call may reach.
    pub(super) fn access(&self) -> &Access {
        &self.access
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Limits the total linear memory of a call and remembers when it was hit.
pub(super) struct MemoryLimiter {
    counts: StoreLimits,
    limit: usize,
    used: usize,
    exceeded: bool,
}

impl MemoryLimiter {
    /// At most `limit` bytes of linear memory in all, and the `counts`.
    pub(super) fn new(limit: usize, counts: StoreLimits) -> Self {
        Self {
            counts,
            limit,
            used: 0,
            exceeded: false,
        }
    }

    /// Whether a memory growth was refused.
    pub(super) fn exceeded(&self) -> bool {
        self.exceeded
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.exceeded = true;
            return Ok(false);
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.counts.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.counts.instances()
    }

    fn tables(&self) -> usize {
        self.counts.tables()
    }

    fn memories(&self) -> usize {
        self.counts.memories()
    }
}
