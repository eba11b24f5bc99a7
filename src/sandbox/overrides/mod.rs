//! WASI functions toolhost replaces with stricter versions of its own.
//!
//! wasmtime-wasi's grants and resources are coarse in places, so the linker
//! shadows some functions:
//! - filesystem ([`files`]): symbolic links only as granted and never
//!   pointing out of the grant; descriptors and listings counted against
//!   `max_open_files`; listings read one entry at a time; file streams that
//!   work on the call's own thread ([`streams`]); writes counted against
//!   `max_write_bytes` (holes past a file's end too); files, directories
//!   and links created counted against `max_created_entries`;
//! - sockets ([`sockets`]): name lookups only of the granted host names, so
//!   lookups cannot carry data out through DNS; TCP sockets counted against
//!   `max_open_files`.

mod files;
mod sockets;
mod streams;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};

use super::state::CallState;

/// The WASI 0.2 filesystem version wasmtime-wasi provides (guests' imports
/// of any 0.2.x version resolve to it).
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Adds the replacements to a linker that already has WASI.
pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    linker.allow_shadowing(true);
    files::add(&mut linker.instance(FILESYSTEM_TYPES)?)?;
    sockets::add(linker)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The destructor of a resource type of toolhost's own: the guest dropped
/// its handle, so the host value goes.
fn delete_on_drop<T: 'static>(
    mut store: StoreContextMut<'_, CallState>,
    rep: u32,
) -> wasmtime::Result<()> {
    store.data_mut().table.delete(Resource::<T>::new_own(rep))?;
    Ok(())
}
