//! [`CallState`]: what one call's store holds, and the limiter of its memory.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Semaphore;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use super::budget::{CallBudget, OpenFile};
use super::deadline::Deadline;
use super::http::CallHttp;
use super::resolver::NameResolver;
use super::scratch::Scratch;
use crate::policy::Access;

/// The per-call state a store holds.
pub(crate) struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: MemoryLimiter,
    pub(super) access: Arc<Access>,
    /// What the call may still open and write.
    pub(super) budget: Arc<CallBudget>,
    /// The descriptors the guest opened, by resource, each holding its
    /// place among the open files until dropped.
    pub(super) open_descriptors: HashMap<u32, OpenFile>,
    /// The same for the TCP sockets it created.
    pub(super) open_sockets: HashMap<u32, OpenFile>,
    /// Looks up the granted host names.
    pub(super) resolver: NameResolver,
    /// Lookups the call may have in flight.
    pub(super) lookups: Arc<Semaphore>,
    /// When the call's time is up (lookups end by then).
    pub(super) deadline: Deadline,
    /// Its `wasi:http` context and hooks.
    pub(super) http: CallHttp,
    /// Its scratch directory (`grants.scratch`), removed when the store is
    /// dropped.
    pub(super) scratch: Option<Scratch>,
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

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http.ctx,
            table: &mut self.table,
            hooks: &mut self.http.hooks,
        }
    }
}

/// Bytes a table element holds in the host (a pointer).
const TABLE_ELEMENT_BYTES: usize = 8;

/// Limits the host memory of a call (its instances' state, linear
/// memories and table elements, together) and remembers when a growth was
/// refused for it.
pub(super) struct MemoryLimiter {
    counts: StoreLimits,
    limit: usize,
    used: usize,
    exceeded: bool,
    table_refused: bool,
}

impl MemoryLimiter {
    /// At most `limit` bytes in all, of which `state` are taken from the
    /// start by the instances' state; and the `counts`.
    pub(super) fn new(limit: usize, state: usize, counts: StoreLimits) -> Self {
        Self {
            counts,
            limit,
            used: state,
            exceeded: false,
            table_refused: false,
        }
    }

    /// Whether a memory growth was refused.
    pub(super) fn exceeded(&self) -> bool {
        self.exceeded
    }

    /// Whether a table growth was refused for the memory it would take.
    pub(super) fn table_refused(&self) -> bool {
        self.table_refused
    }

    /// Takes `bytes` more of the budget, if they fit.
    fn take(&mut self, old_bytes: usize, new_bytes: usize) -> bool {
        let total = self
            .used
            .saturating_sub(old_bytes)
            .saturating_add(new_bytes);
        if total > self.limit {
            self.exceeded = true;
            return false;
        }
        self.used = total;
        true
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.take(current, desired))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if !self.counts.table_growing(current, desired, maximum)? {
            return Ok(false);
        }
        let old = current.saturating_mul(TABLE_ELEMENT_BYTES);
        let new = desired.saturating_mul(TABLE_ELEMENT_BYTES);
        if !self.take(old, new) {
            self.table_refused = true;
            return Ok(false);
        }
        Ok(true)
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
