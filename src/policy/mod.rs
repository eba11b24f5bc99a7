//! What a module may use and reach: [`Limits`] on its resources, the
//! [`Grants`] the operator writes, and the [`Access`] they resolve to.

mod access;
mod endpoint;
mod env_name;
mod grants;
mod http;
mod limits;
mod sessions;
mod warm;

pub use access::{Access, DirAccess, DirMode};
pub use endpoint::Endpoint;
pub(crate) use grants::symlink_target_stays_inside;
pub use grants::{DirGrant, Grants, NetworkGrant, SCRATCH_GUEST_PATH};
pub use http::{
    AllowEntry, Host, HttpAccess, HttpAllow, HttpGrant, Origin, Scheme, Secret, SecretHeader,
    SecretHeaderGrant, TlsRoots,
};
pub(crate) use http::{RequestTarget, is_internal};
pub use limits::{Applies, LimitOverrides, LimitSpec, Limits};
pub(crate) use limits::{key as limit_key, to_usize};
pub use sessions::SessionLimits;
pub use warm::Warm;
