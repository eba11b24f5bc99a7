//! [`Blueprint`]: what every instance of one module is made from (the
//! linked component, its exports, limits, access and the host's services
//! for it), apart from where instances come from ([`Target`](super::target::Target)).

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
///
/// Made with [`new`](Self::new) and the `with_*` methods; read only inside
/// the sandbox.
#[derive(Clone)]
pub(crate) struct Blueprint {
    /// The module's name (for logs).
    module: Arc<str>,
    /// The component, linked and ready to instantiate.
    pre: InstancePre<CallState>,
    /// Where its exports are, looked up once.
    exports: Exports,
    /// Where calls go when `pre`'s instance pool is full (`None` when `pre`
    /// allocates on demand).
    overflow: Option<Arc<Overflow>>,
    /// Where used stores are dropped.
    disposal: Arc<Disposal>,
    /// The limits of each call.
    limits: Limits,
    /// What each call may reach.
    access: Arc<Access>,
    /// Whether the component's strings are UTF-16 or latin1, which grow (up
    /// to twice) when the host converts them to UTF-8.
    transcodes: bool,
    /// Whether its instances made ahead are primed (see
    /// [`ReadyInstances`](super::ready::ReadyInstances)): it carries an
    /// interpreter that sets itself up on its first export call.
    primes_ready: bool,
    /// Host memory the call's instances hold for their state (estimated at
    /// load); it counts against the memory limit with linear memory.
    state_bytes: usize,
    /// Looks up the host names of the module's network grant.
    resolver: NameResolver,
    /// The TLS configuration of its HTTP requests (`None`: no HTTP grant).
    http: Option<Arc<HttpClient>>,
}

impl Blueprint {
    /// The blueprint of module `module`'s instances of `pre`, each call
    /// under `limits`, reaching nothing; its used stores go to `disposal`
    /// and its host names are looked up by `resolver`.
    pub(crate) fn new(
        module: &str,
        pre: InstancePre<CallState>,
        limits: Limits,
        disposal: Arc<Disposal>,
        resolver: NameResolver,
    ) -> Self {
        Self {
            module: module.into(),
            exports: Exports::of(pre.component()),
            pre,
            overflow: None,
            disposal,
            limits,
            access: Arc::default(),
            transcodes: false,
            primes_ready: false,
            state_bytes: 0,
            resolver,
            http: None,
        }
    }

    /// This blueprint with calls going to `overflow` when the instance
    /// pool is full.
    pub(crate) fn with_overflow(self, overflow: Option<Arc<Overflow>>) -> Self {
        Self { overflow, ..self }
    }

    /// This blueprint for a component whose strings are UTF-16 or latin1
    /// (`transcodes`), which grow when the host converts them to UTF-8.
    pub(crate) fn with_transcoding(self, transcodes: bool) -> Self {
        Self { transcodes, ..self }
    }

    /// This blueprint with its instances made ahead primed (`primes`): it
    /// carries an interpreter that sets itself up on its first export call.
    pub(crate) fn with_primed_ready(self, primes: bool) -> Self {
        Self {
            primes_ready: primes,
            ..self
        }
    }

    /// This blueprint for instances that hold `bytes` of host memory for
    /// their state.
    pub(crate) fn with_state_bytes(self, bytes: usize) -> Self {
        Self {
            state_bytes: bytes,
            ..self
        }
    }

    /// This blueprint with calls reaching what `access` allows (and the
    /// TLS configuration its HTTP grant needs).
    pub(crate) fn with_access(self, access: Access) -> Self {
        Self {
            http: HttpClient::for_access(&access.http),
            access: Arc::new(access),
            ..self
        }
    }

    /// This blueprint with each call under `limits`.
    pub(crate) fn with_limits(self, limits: Limits) -> Self {
        Self { limits, ..self }
    }

    /// The module's name.
    pub(super) fn module(&self) -> &Arc<str> {
        &self.module
    }

    /// The component, linked and ready to instantiate.
    pub(super) fn pre(&self) -> &InstancePre<CallState> {
        &self.pre
    }

    /// Where the component's exports are.
    pub(super) fn exports(&self) -> Exports {
        self.exports
    }

    /// Where calls go when the instance pool is full, if it is used.
    pub(super) fn overflow(&self) -> Option<&Overflow> {
        self.overflow.as_deref()
    }

    /// Where used stores are dropped.
    pub(super) fn disposal(&self) -> &Arc<Disposal> {
        &self.disposal
    }

    /// The limits of each call.
    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// What each call may reach.
    pub(super) fn access(&self) -> &Arc<Access> {
        &self.access
    }

    /// Whether instances made ahead are primed.
    pub(super) fn primes_ready(&self) -> bool {
        self.primes_ready
    }

    /// Host memory each instance holds for its state.
    pub(super) fn state_bytes(&self) -> usize {
        self.state_bytes
    }

    /// Looks up the host names of the network grant.
    pub(super) fn resolver(&self) -> &NameResolver {
        &self.resolver
    }

    /// The TLS configuration of HTTP requests (`None`: no HTTP grant).
    pub(super) fn http(&self) -> Option<&Arc<HttpClient>> {
        self.http.as_ref()
    }

    /// The most bytes the guest may make the host copy in one host call, or
    /// in lifting its answer, so that the host never holds more than the
    /// call's memory limit (at least 1 MiB) for it: the memory limit, or
    /// half of it for strings that grow when converted to UTF-8.
    pub(super) fn host_copy_bytes(&self) -> usize {
        let limit = self.limits.memory_bytes().max(1024 * 1024);
        if self.transcodes { limit / 2 } else { limit }
    }

    /// What a call may make the host copy, for the fault past it.
    pub(super) fn host_copy(&self) -> HostCopy {
        HostCopy {
            bytes: self.host_copy_bytes(),
            transcodes: self.transcodes,
        }
    }
}
