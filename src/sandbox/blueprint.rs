//! [`Blueprint`]: what every instance of one module is made from (the
//! linked component, its exports, limits, access and the host's services
//! for it), apart from where instances come from (`call.rs`'s `Target`).

use std::sync::Arc;

use wasmtime::component::InstancePre;

use super::disposal::Disposal;
use super::export::Exports;
use super::fault::HostCopy;
use super::http::HttpClient;
use super::overflow::Overflow;
use super::resolver::NameResolver;
use super::state::CallState;
use crate::policy::{Access, Limits};

/// What every instance of one module is made from, prepared once at load.
#[derive(Clone)]
pub(crate) struct Blueprint {
    /// The module's name (for logs).
    pub module: Arc<str>,
    /// The component, linked and ready to instantiate.
    pub pre: InstancePre<CallState>,
    /// Where its exports are, looked up once.
    pub exports: Exports,
    /// Where calls go when `pre`'s instance pool is full (`None` when `pre`
    /// allocates on demand).
    pub overflow: Option<Arc<Overflow>>,
    /// Where used stores are dropped.
    pub disposal: Arc<Disposal>,
    /// The limits of each call.
    pub limits: Limits,
    /// What each call may reach.
    pub access: Arc<Access>,
    /// Whether the component's strings are UTF-16 or latin1, which grow (up
    /// to twice) when the host converts them to UTF-8.
    pub transcodes: bool,
    /// Whether its instances made ahead are primed (see
    /// [`ReadyInstances`]): it carries an interpreter that sets itself up
    /// on its first export call.
    pub prime_ready: bool,
    /// Host memory the call's instances hold for their state (estimated at
    /// load); it counts against the memory limit with linear memory.
    pub state_bytes: usize,
    /// Looks up the host names of the module's network grant.
    pub resolver: NameResolver,
    /// The TLS configuration of its HTTP requests (`None`: no HTTP grant).
    pub http: Option<Arc<HttpClient>>,
}

impl Blueprint {
    /// The most bytes the guest may make the host copy in one host call, or
    /// in lifting its answer, so that the host never holds more than the
    /// call's memory limit (at least 1 MiB) for it: the memory limit, or
    /// half of it for strings that grow when converted to UTF-8.
    pub(crate) fn host_copy_bytes(&self) -> usize {
        let limit = self.limits.memory_bytes().max(1024 * 1024);
        if self.transcodes { limit / 2 } else { limit }
    }

    /// What a call may make the host copy, for the fault past it.
    pub(crate) fn host_copy(&self) -> HostCopy {
        HostCopy {
            bytes: self.host_copy_bytes(),
            transcodes: self.transcodes,
        }
    }
}
