//! Socket functions replaced: name lookups only of granted names (so no
//! data leaves through DNS), and TCP sockets within the call's open files.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::p2::TcpSocket;
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{self, ResolveAddressStream};
use wasmtime_wasi::p2::bindings::sockets::network::{
    self, ErrorCode, IpAddressFamily, Network,
};
use wasmtime_wasi::p2::bindings::sockets::tcp::HostTcpSocket;
use wasmtime_wasi::p2::bindings::sockets::tcp_create_socket;
use wasmtime_wasi::sockets::WasiSocketsView;

use crate::sandbox::state::CallState;

/// The WASI 0.2 interfaces replaced here, in the version wasmtime-wasi
/// provides (guests' imports of any 0.2.x version resolve to it).
const IP_NAME_LOOKUP: &str = "wasi:sockets/ip-name-lookup@0.2.12";
const TCP: &str = "wasi:sockets/tcp@0.2.12";
const TCP_CREATE_SOCKET: &str = "wasi:sockets/tcp-create-socket@0.2.12";

type Answer<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;

/// Adds the replacements to a linker that already has WASI.
pub(super) fn add(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    linker
        .instance(IP_NAME_LOOKUP)?
        .func_wrap("resolve-addresses", resolve_addresses)?;
    linker
        .instance(TCP_CREATE_SOCKET)?
        .func_wrap("create-tcp-socket", create_tcp_socket)?;
    linker
        .instance(TCP)?
        .resource("tcp-socket", ResourceType::host::<TcpSocket>(), drop_tcp_socket)?;
    Ok(())
}

/// `resolve-addresses`, for the host names of the module's network grant only.
fn resolve_addresses(
    mut store: StoreContextMut<'_, CallState>,
    (net, name): (Resource<Network>, String),
) -> Answer<Resource<ResolveAddressStream>> {
    if !store.data().access().may_look_up(&name) {
        return Ok((Err(ErrorCode::AccessDenied),));
    }
    let mut view = store.data_mut().sockets();
    match ip_name_lookup::Host::resolve_addresses(&mut view, net, name) {
        Ok(stream) => Ok((Ok(stream),)),
        Err(error) => Ok((Err(network::Host::convert_error_code(&mut view, error)?),)),
    }
}

/// `create-tcp-socket`, within the call's open files.
fn create_tcp_socket(
    mut store: StoreContextMut<'_, CallState>,
    (family,): (IpAddressFamily,),
) -> Answer<Resource<TcpSocket>> {
    let Some(open) = store.data().budget.open() else {
        return Ok((Err(ErrorCode::NewSocketLimit),));
    };
    let state = store.data_mut();
    let mut view = state.sockets();
    match tcp_create_socket::Host::create_tcp_socket(&mut view, family) {
        Ok(socket) => {
            state.open_sockets.insert(socket.rep(), open);
            Ok((Ok(socket),))
        }
        Err(error) => Ok((Err(network::Host::convert_error_code(&mut view, error)?),)),
    }
}

/// Dropping a socket gives back its place among the open files.
fn drop_tcp_socket(mut store: StoreContextMut<'_, CallState>, rep: u32) -> wasmtime::Result<()> {
    let state = store.data_mut();
    state.open_sockets.remove(&rep);
    HostTcpSocket::drop(&mut state.sockets(), Resource::new_own(rep))
}
