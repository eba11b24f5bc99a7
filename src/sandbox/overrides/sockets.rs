//! Socket functions replaced: name lookups only of granted names (so no
//! data leaves through DNS), made by toolhost's resolver within the call's
//! deadline; and TCP sockets within the call's open files.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::p2::bindings::sockets::network::{
    self, ErrorCode, IpAddress, IpAddressFamily, Network,
};
use wasmtime_wasi::p2::bindings::sockets::tcp::HostTcpSocket;
use wasmtime_wasi::p2::bindings::sockets::tcp_create_socket;
use wasmtime_wasi::p2::{DynPollable, Pollable, TcpSocket};
use wasmtime_wasi::sockets::WasiSocketsView;

use super::delete_on_drop;
use crate::sandbox::resolver::LookupFailure;
use crate::sandbox::state::CallState;

/// The WASI 0.2 interfaces replaced here, in the version wasmtime-wasi
/// provides (guests' imports of any 0.2.x version resolve to it).
const IP_NAME_LOOKUP: &str = "wasi:sockets/ip-name-lookup@0.2.12";
const TCP: &str = "wasi:sockets/tcp@0.2.12";
const TCP_CREATE_SOCKET: &str = "wasi:sockets/tcp-create-socket@0.2.12";

type Answer<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;

/// Adds the replacements to a linker that already has WASI.
pub(super) fn add(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    let mut lookup = linker.instance(IP_NAME_LOOKUP)?;
    lookup.resource(
        "resolve-address-stream",
        ResourceType::host::<NameLookup>(),
        delete_on_drop::<NameLookup>,
    )?;
    lookup.func_wrap("resolve-addresses", resolve_addresses)?;
    lookup.func_wrap(
        "[method]resolve-address-stream.resolve-next-address",
        resolve_next_address,
    )?;
    lookup.func_wrap("[method]resolve-address-stream.subscribe", subscribe)?;
    linker
        .instance(TCP_CREATE_SOCKET)?
        .func_wrap("create-tcp-socket", create_tcp_socket)?;
    linker.instance(TCP)?.resource(
        "tcp-socket",
        ResourceType::host::<TcpSocket>(),
        drop_tcp_socket,
    )?;
    Ok(())
}

/// A name being looked up: the lookup, then its addresses, one at a time.
pub(crate) struct NameLookup {
    state: LookupState,
}

type Lookup = Pin<Box<dyn Future<Output = Result<Vec<IpAddr>, LookupFailure>> + Send>>;

enum LookupState {
    Waiting(Lookup),
    Found(std::vec::IntoIter<IpAddr>),
    Failed(ErrorCode),
}

#[async_trait::async_trait]
impl Pollable for NameLookup {
    async fn ready(&mut self) {
        if let LookupState::Waiting(lookup) = &mut self.state {
            self.state = match lookup.await {
                Ok(found) => LookupState::Found(found.into_iter()),
                Err(LookupFailure::Unresolvable) => {
                    LookupState::Failed(ErrorCode::NameUnresolvable)
                }
                Err(LookupFailure::TimedOut) => {
                    LookupState::Failed(ErrorCode::TemporaryResolverFailure)
                }
            };
        }
    }
}

/// `resolve-addresses`, for the host names of the module's network grant
/// only, looked up when the guest waits for the answer.
fn resolve_addresses(
    mut store: StoreContextMut<'_, CallState>,
    (_network, name): (Resource<Network>, String),
) -> Answer<Resource<NameLookup>> {
    let state = store.data_mut();
    if !state.access().may_look_up(&name) {
        return Ok((Err(ErrorCode::AccessDenied),));
    }
    let resolver = state.resolver.clone();
    let deadline = state.deadline.get();
    let slots = Arc::clone(&state.lookups);
    let lookup: Lookup = Box::pin(async move { resolver.lookup(&name, deadline, &slots).await });
    let stream = state.table.push(NameLookup {
        state: LookupState::Waiting(lookup),
    })?;
    Ok((Ok(stream),))
}

/// The next address of a lookup; `would-block` until it has an answer.
fn resolve_next_address(
    mut store: StoreContextMut<'_, CallState>,
    (stream,): (Resource<NameLookup>,),
) -> Answer<Option<IpAddress>> {
    let lookup = store.data_mut().table.get_mut(&stream)?;
    Ok((match &mut lookup.state {
        LookupState::Waiting(_) => Err(ErrorCode::WouldBlock),
        LookupState::Found(addresses) => Ok(addresses.next().map(IpAddress::from)),
        LookupState::Failed(code) => Err(*code),
    },))
}

/// A pollable ready when the lookup has an answer.
fn subscribe(
    mut store: StoreContextMut<'_, CallState>,
    (stream,): (Resource<NameLookup>,),
) -> wasmtime::Result<(Resource<DynPollable>,)> {
    let pollable = wasmtime_wasi::p2::subscribe(&mut store.data_mut().table, stream)?;
    Ok((pollable,))
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
