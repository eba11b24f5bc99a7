//! WASI functions toolhost replaces with stricter versions of its own.
//!
//! wasmtime-wasi's grants are coarse in two places, so the linker shadows:
//! - `descriptor.symlink-at`: with a writable directory a guest could leave a
//!   link on the host pointing outside its grant, for any host process that
//!   later follows it. Refused unless the module has `symlinks = true`, and
//!   then only for targets [`symlink_target_stays_inside`] accepts.
//! - `ip-name-lookup.resolve-addresses`: wasmtime-wasi allows looking up any
//!   name or none; toolhost allows only the host names of the module's
//!   network grant, so lookups cannot carry data out through DNS.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, Descriptor, ErrorCode as FsErrorCode, HostDescriptor,
};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{self, ResolveAddressStream};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode as NetErrorCode, Network};
use wasmtime_wasi::sockets::WasiSocketsView;

use super::state::CallState;
use crate::policy::symlink_target_stays_inside;

/// The WASI 0.2 versions wasmtime-wasi provides (guests' imports of any 0.2.x
/// version resolve to these).
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";
const IP_NAME_LOOKUP: &str = "wasi:sockets/ip-name-lookup@0.2.12";

/// Adds the replacements to a linker that already has WASI.
pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    linker.allow_shadowing(true);
    linker
        .instance(FILESYSTEM_TYPES)
        .map_err(anyhow::Error::from)?
        .func_wrap_async("[method]descriptor.symlink-at", symlink_at)
        .map_err(anyhow::Error::from)?;
    linker
        .instance(IP_NAME_LOOKUP)
        .map_err(anyhow::Error::from)?
        .func_wrap("resolve-addresses", resolve_addresses)
        .map_err(anyhow::Error::from)?;
    linker.allow_shadowing(false);
    Ok(())
}

type SymlinkResult = wasmtime::Result<(Result<(), FsErrorCode>,)>;

fn symlink_at<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (dir, target, link): (Resource<Descriptor>, String, String),
) -> Box<dyn Future<Output = SymlinkResult> + Send + 'a> {
    Box::new(async move {
        if !store.data().access().symlinks || !symlink_target_stays_inside(&target) {
            return Ok((Err(FsErrorCode::NotPermitted),));
        }
        let mut view = store.data_mut().filesystem();
        match HostDescriptor::symlink_at(&mut view, dir, target, link).await {
            Ok(()) => Ok((Ok(()),)),
            Err(error) => Ok((Err(fs::Host::convert_error_code(&mut view, error)?),)),
        }
    })
}

type LookupResult = wasmtime::Result<(Result<Resource<ResolveAddressStream>, NetErrorCode>,)>;

fn resolve_addresses(
    mut store: StoreContextMut<'_, CallState>,
    (net, name): (Resource<Network>, String),
) -> LookupResult {
    if !store.data().access().may_look_up(&name) {
        return Ok((Err(NetErrorCode::AccessDenied),));
    }
    let mut view = store.data_mut().sockets();
    match ip_name_lookup::Host::resolve_addresses(&mut view, net, name) {
        Ok(stream) => Ok((Ok(stream),)),
        Err(error) => Ok((Err(network::Host::convert_error_code(&mut view, error)?),)),
    }
}
