//! What a module may use and reach: [`Limits`] on its resources, the
//! [`Grants`] the operator writes, and the [`Access`] they resolve to.

mod access;
mod endpoint;
mod grants;
mod http;
mod limits;
mod sessions;
mod warm;

pub use access::{Access, DirAccess};
pub use endpoint::Endpoint;
pub(crate) use grants::symlink_target_stays_inside;
pub use grants::{DirGrant, DirMode, Grants, NetworkGrant, SCRATCH_GUEST_PATH};
pub use http::{
    AllowEntry, Denied, Host, HttpAccess, HttpAllow, HttpGrant, Origin, RequestTarget, Scheme,
    Secret, SecretHeader, SecretHeaderGrant, TlsRoots, is_internal,
};
pub(crate) use limits::to_usize;
pub use limits::{Applies, LimitOverrides, LimitSpec, Limits};
pub use sessions::SessionLimits;
pub use warm::Warm;
