//! One sandboxed call: a fresh store and instance under fuel, time and
//! memory limits, reaching only what its module's [`Access`](crate::Access)
//! allows.
//!
//! Nothing survives a call: each gets a new store, a new instance, a WASI
//! context built from the module's access (by default no directories,
//! environment, network or stdin; stdout and stderr captured and bounded),
//! and the module's limits. Whatever the guest does ends in a [`Fault`] or a
//! result.

mod blueprint;
mod budget;
mod call;
mod capture;
mod config_store;
mod deadline;
mod dir_tree;
mod disposal;
mod export;
mod fault;
mod fresh;
mod guest_stderr;
mod http;
mod instantiate;
mod linker;
mod network;
mod on_instance;
mod open_files;
mod overflow;
mod overrides;
mod ready;
mod report;
mod resolver;
mod reused;
mod runtime;
mod scratch;
mod sessions;
mod state;
mod store;
mod target;
mod warm;
mod wasi_context;

pub(crate) use blueprint::Blueprint;
pub(crate) use call::run;
pub(crate) use capture::Captured;
pub(crate) use export::{Request, TextStopped, TypedCall};
pub(crate) use fault::Fault;
pub use open_files::open_file_limit;
pub(crate) use overflow::Overflow;
pub(crate) use report::CallReport;
pub use runtime::{Runtime, RuntimeBuilder};
pub(crate) use sessions::{SessionCall, run as run_in_session};
pub(crate) use target::Target;
