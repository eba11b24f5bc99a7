//! Filesystem functions replaced so that a call's files are bounded: the
//! descriptors and listings it holds open (`max_open_files`), the bytes it
//! writes (`max_write_bytes`: a write past a file's end counts the hole it
//! leaves, as growing a file does), the files, directories and links it
//! creates (`max_created_entries`), the host memory a directory listing
//! takes (entries are read one at a time, never collected), and symbolic
//! links (only with `symlinks = true`, and never pointing out of the
//! grant).

use std::future::Future;

use wasmtime::StoreContextMut;
use wasmtime::component::{LinkerInstance, Resource, ResourceType};
use wasmtime_wasi::filesystem::{Descriptor as FsDescriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, Descriptor, DescriptorFlags, DescriptorType, DirectoryEntry, ErrorCode, Filesize,
    HostDescriptor, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsResult};

use super::delete_on_drop;
use super::streams::{FileReader, FileWriter, WriteAt, no_space_left};
use crate::policy::symlink_target_stays_inside;
use crate::sandbox::budget::OpenFile;
use crate::sandbox::state::CallState;

/// What a replaced function answers: a result for the guest, or a trap.
type Answer<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;
type Boxed<'a, T> = Box<dyn Future<Output = Answer<T>> + Send + 'a>;

/// Adds the replacements to `types`, the `wasi:filesystem/types` instance.
pub(super) fn add(types: &mut LinkerInstance<'_, CallState>) -> anyhow::Result<()> {
    types.resource(
        "descriptor",
        ResourceType::host::<Descriptor>(),
        drop_descriptor,
    )?;
    types.resource(
        "directory-entry-stream",
        ResourceType::host::<DirectoryEntries>(),
        delete_on_drop::<DirectoryEntries>,
    )?;
    types.func_wrap_async("[method]descriptor.open-at", open_at)?;
    types.func_wrap_async("[method]descriptor.symlink-at", symlink_at)?;
    types.func_wrap_async(
        "[method]descriptor.create-directory-at",
        create_directory_at,
    )?;
    types.func_wrap_async("[method]descriptor.link-at", link_at)?;
    types.func_wrap("[method]descriptor.read-directory", read_directory)?;
    types.func_wrap(
        "[method]directory-entry-stream.read-directory-entry",
        read_directory_entry,
    )?;
    types.func_wrap("[method]descriptor.read-via-stream", read_via_stream)?;
    types.func_wrap("[method]descriptor.write-via-stream", write_via_stream)?;
    types.func_wrap("[method]descriptor.append-via-stream", append_via_stream)?;
    types.func_wrap_async("[method]descriptor.write", write)?;
    types.func_wrap_async("[method]descriptor.set-size", set_size)?;
    Ok(())
}

/// The answer to a wasmtime-wasi result: its value, or its error for the
/// guest (or a trap, for errors that are not the guest's to handle).
fn answer<T>(store: &mut StoreContextMut<'_, CallState>, result: FsResult<T>) -> Answer<T> {
    match result {
        Ok(value) => Ok((Ok(value),)),
        Err(error) => {
            let mut view = store.data_mut().filesystem();
            Ok((Err(fs::Host::convert_error_code(&mut view, error)?),))
        }
    }
}

/// `open-at`, within the call's open files, and a file it creates within
/// the call's entries.
fn open_at<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (dir, flags, path, oflags, dflags): (
        Resource<Descriptor>,
        PathFlags,
        String,
        OpenFlags,
        DescriptorFlags,
    ),
) -> Boxed<'a, Resource<Descriptor>> {
    Box::new(async move {
        let Some(open) = store.data().budget.open() else {
            return Ok((Err(ErrorCode::Quota),));
        };
        let creates = oflags.contains(OpenFlags::CREATE)
            && (oflags.contains(OpenFlags::EXCLUSIVE)
                || is_missing(&mut store, &dir, flags, &path).await);
        if creates && !store.data().budget.create() {
            return Ok((Err(ErrorCode::InsufficientSpace),));
        }
        let mut view = store.data_mut().filesystem();
        let opened = HostDescriptor::open_at(&mut view, dir, flags, path, oflags, dflags).await;
        match &opened {
            Ok(descriptor) => {
                store
                    .data_mut()
                    .open_descriptors
                    .insert(descriptor.rep(), open);
            }
            Err(_) if creates => store.data().budget.uncreate(),
            Err(_) => {}
        }
        answer(&mut store, opened)
    })
}

/// Whether nothing is at `path` in `dir` (so that opening it with `create`
/// makes a file).
async fn is_missing(
    store: &mut StoreContextMut<'_, CallState>,
    dir: &Resource<Descriptor>,
    flags: PathFlags,
    path: &str,
) -> bool {
    let mut view = store.data_mut().filesystem();
    let borrowed = Resource::new_borrow(dir.rep());
    let found = HostDescriptor::stat_at(&mut view, borrowed, flags, path.to_string()).await;
    match found {
        Ok(_) => false,
        Err(error) => matches!(
            fs::Host::convert_error_code(&mut view, error),
            Ok(ErrorCode::NoEntry)
        ),
    }
}

/// Runs `create` (which makes one entry) within the call's entries: refused
/// with `insufficient-space` past `max_created_entries`, the entry given
/// back if it fails.
async fn creating<T>(
    store: &mut StoreContextMut<'_, CallState>,
    create: impl AsyncFnOnce(&mut StoreContextMut<'_, CallState>) -> FsResult<T>,
) -> Answer<T> {
    if !store.data().budget.create() {
        return Ok((Err(ErrorCode::InsufficientSpace),));
    }
    let created = create(store).await;
    if created.is_err() {
        store.data().budget.uncreate();
    }
    answer(store, created)
}

/// `create-directory-at`, within the call's entries.
fn create_directory_at<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (dir, path): (Resource<Descriptor>, String),
) -> Boxed<'a, ()> {
    Box::new(async move {
        creating(&mut store, async |store| {
            let mut view = store.data_mut().filesystem();
            HostDescriptor::create_directory_at(&mut view, dir, path).await
        })
        .await
    })
}

/// `link-at`, within the call's entries.
fn link_at<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (dir, flags, old, new_dir, new): (
        Resource<Descriptor>,
        PathFlags,
        String,
        Resource<Descriptor>,
        String,
    ),
) -> Boxed<'a, ()> {
    Box::new(async move {
        creating(&mut store, async |store| {
            let mut view = store.data_mut().filesystem();
            HostDescriptor::link_at(&mut view, dir, flags, old, new_dir, new).await
        })
        .await
    })
}

/// Dropping a descriptor gives back its place among the open files.
fn drop_descriptor(mut store: StoreContextMut<'_, CallState>, rep: u32) -> wasmtime::Result<()> {
    let state = store.data_mut();
    state.open_descriptors.remove(&rep);
    HostDescriptor::drop(&mut state.filesystem(), Resource::new_own(rep))
}

/// `symlink-at`: refused unless the module has `symlinks = true`, and then
/// only for targets [`symlink_target_stays_inside`] accepts, within the
/// call's entries.
fn symlink_at<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (dir, target, link): (Resource<Descriptor>, String, String),
) -> Boxed<'a, ()> {
    Box::new(async move {
        if !store.data().access().symlinks || !symlink_target_stays_inside(&target) {
            return Ok((Err(ErrorCode::NotPermitted),));
        }
        creating(&mut store, async |store| {
            let mut view = store.data_mut().filesystem();
            HostDescriptor::symlink_at(&mut view, dir, target, link).await
        })
        .await
    })
}

/// A directory listing read one entry at a time, holding one open file.
pub(crate) struct DirectoryEntries {
    entries: cap_std::fs::ReadDir,
    _open: OpenFile,
}

/// `read-directory`: a listing that reads entries as the guest asks for
/// them (wasmtime-wasi's reads them all first, into host memory).
fn read_directory(
    mut store: StoreContextMut<'_, CallState>,
    (dir,): (Resource<Descriptor>,),
) -> Answer<Resource<DirectoryEntries>> {
    let state = store.data_mut();
    let handle = match state.table.get(&dir)? {
        FsDescriptor::Dir(dir) => dir.dir.try_clone(),
        FsDescriptor::File(_) => return Ok((Err(ErrorCode::NotDirectory),)),
    };
    let Some(open) = state.budget.open() else {
        return Ok((Err(ErrorCode::Quota),));
    };
    let entries = handle.and_then(|file| cap_std::fs::Dir::from_std_file(file).entries());
    let entries = match entries {
        Ok(entries) => entries,
        Err(error) => return Ok((Err(ErrorCode::from(error)),)),
    };
    let listing = state.table.push(DirectoryEntries {
        entries,
        _open: open,
    })?;
    Ok((Ok(listing),))
}

/// The next entry of a listing, or `None` at its end.
fn read_directory_entry(
    mut store: StoreContextMut<'_, CallState>,
    (listing,): (Resource<DirectoryEntries>,),
) -> Answer<Option<DirectoryEntry>> {
    let listing = store.data_mut().table.get_mut(&listing)?;
    let Some(entry) = listing.entries.next() else {
        return Ok((Ok(None),));
    };
    let entry = match entry {
        Ok(entry) => entry,
        Err(error) => return Ok((Err(ErrorCode::from(error)),)),
    };
    let type_ = match entry.file_type() {
        Ok(file_type) => descriptor_type(file_type),
        Err(error) => return Ok((Err(ErrorCode::from(error)),)),
    };
    match entry.file_name().into_string() {
        Ok(name) => Ok((Ok(Some(DirectoryEntry { type_, name })),)),
        Err(_) => Ok((Err(ErrorCode::IllegalByteSequence),)),
    }
}

fn descriptor_type(file_type: cap_std::fs::FileType) -> DescriptorType {
    use cap_std::fs::FileTypeExt;
    if file_type.is_dir() {
        DescriptorType::Directory
    } else if file_type.is_file() {
        DescriptorType::RegularFile
    } else if file_type.is_symlink() {
        DescriptorType::SymbolicLink
    } else if file_type.is_block_device() {
        DescriptorType::BlockDevice
    } else if file_type.is_char_device() {
        DescriptorType::CharacterDevice
    } else if file_type.is_fifo() {
        DescriptorType::Fifo
    } else if file_type.is_socket() {
        DescriptorType::Socket
    } else {
        DescriptorType::Unknown
    }
}

/// The file behind `descriptor`, or the guest's error for a directory.
fn file_of<'s>(
    state: &'s CallState,
    descriptor: &Resource<Descriptor>,
    directory: ErrorCode,
) -> wasmtime::Result<Result<&'s wasmtime_wasi::filesystem::File, ErrorCode>> {
    Ok(match state.table.get(descriptor)? {
        FsDescriptor::File(file) => Ok(file),
        FsDescriptor::Dir(_) => Err(directory),
    })
}

/// `read-via-stream`: a stream reading on the call's thread.
fn read_via_stream(
    mut store: StoreContextMut<'_, CallState>,
    (descriptor, offset): (Resource<Descriptor>, Filesize),
) -> Answer<Resource<DynInputStream>> {
    let state = store.data_mut();
    let file = match file_of(state, &descriptor, ErrorCode::IsDirectory)? {
        Ok(file) => std::sync::Arc::clone(&file.file),
        Err(code) => return Ok((Err(code),)),
    };
    let stream: DynInputStream = Box::new(FileReader::new(file, offset));
    Ok((Ok(state.table.push(stream)?),))
}

/// A stream writing `descriptor` at `at`, within the call's write budget.
fn writer(
    mut store: StoreContextMut<'_, CallState>,
    descriptor: Resource<Descriptor>,
    at: WriteAt,
) -> Answer<Resource<DynOutputStream>> {
    let state = store.data_mut();
    let file = match file_of(state, &descriptor, ErrorCode::BadDescriptor)? {
        Ok(file) if file.perms.write_not_permitted() => return Ok((Err(ErrorCode::NotPermitted),)),
        Ok(file) => std::sync::Arc::clone(&file.file),
        Err(code) => return Ok((Err(code),)),
    };
    let budget = std::sync::Arc::clone(&state.budget);
    let stream: DynOutputStream = Box::new(FileWriter::new(file, at, budget));
    Ok((Ok(state.table.push(stream)?),))
}

fn write_via_stream(
    store: StoreContextMut<'_, CallState>,
    (descriptor, offset): (Resource<Descriptor>, Filesize),
) -> Answer<Resource<DynOutputStream>> {
    writer(store, descriptor, WriteAt::Position(offset))
}

fn append_via_stream(
    store: StoreContextMut<'_, CallState>,
    (descriptor,): (Resource<Descriptor>,),
) -> Answer<Resource<DynOutputStream>> {
    writer(store, descriptor, WriteAt::End)
}

/// `write`, within the call's write budget: the bytes, and the hole left
/// between the file's end and `offset`.
fn write<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (descriptor, bytes, offset): (Resource<Descriptor>, Vec<u8>, Filesize),
) -> Boxed<'a, Filesize> {
    Box::new(async move {
        let state = store.data();
        let end = match file_of(state, &descriptor, ErrorCode::BadDescriptor)? {
            Ok(file) => file.file.metadata().map(|m| m.len()).unwrap_or(0),
            Err(code) => return Ok((Err(code),)),
        };
        let hole = offset.saturating_sub(end);
        if !state
            .budget
            .write((bytes.len() as u64).saturating_add(hole))
        {
            return Ok((Err(ErrorCode::from(no_space_left())),));
        }
        let mut view = store.data_mut().filesystem();
        let written = HostDescriptor::write(&mut view, descriptor, bytes, offset).await;
        answer(&mut store, written)
    })
}

/// `set-size`: growing a file counts as writing the bytes it grows by.
fn set_size<'a>(
    mut store: StoreContextMut<'a, CallState>,
    (descriptor, size): (Resource<Descriptor>, Filesize),
) -> Boxed<'a, ()> {
    Box::new(async move {
        let state = store.data();
        let current = match file_of(state, &descriptor, ErrorCode::BadDescriptor)? {
            Ok(file) => file.file.metadata().map(|m| m.len()).unwrap_or(0),
            Err(code) => return Ok((Err(code),)),
        };
        if size > current && !state.budget.write(size - current) {
            return Ok((Err(ErrorCode::from(no_space_left())),));
        }
        let mut view = store.data_mut().filesystem();
        let resized = HostDescriptor::set_size(&mut view, descriptor, size).await;
        answer(&mut store, resized)
    })
}
