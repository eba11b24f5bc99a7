//! Test guest: tools that each attack the host in one way, and benign ones
//! to check that the module still serves correctly afterwards.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use toolhost_guest::{JsonSchema, NoArgs, Toolbox};

/// A size in bytes.
#[derive(Deserialize, JsonSchema)]
struct Size {
    bytes: usize,
}

/// Some text.
#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// A duration.
#[derive(Deserialize, JsonSchema)]
struct Millis {
    ms: u64,
}

static CALLS: AtomicU64 = AtomicU64::new(0);
static mut SCRATCH: u64 = 0;

fn echo(args: Text) -> Result<String, String> {
    Ok(args.text)
}

fn add(args: AddArgs) -> Result<String, String> {
    Ok((args.a + args.b).to_string())
}

/// Adds two integers.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// Counts calls in a static: a fresh instance per call always answers 1.
fn counter(_: NoArgs) -> Result<String, String> {
    // SAFETY: a component instance is single-threaded.
    let scratch = unsafe {
        SCRATCH += 1;
        SCRATCH
    };
    let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(format!("{calls} {scratch}"))
}

static HOARD: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Keeps `bytes` more (written, so resident) in a static: memory that
/// lasts as long as the instance. Answers how much is kept in all.
fn hoard(args: Size) -> Result<String, String> {
    let mut hoard = HOARD.lock().map_err(|_| "poisoned".to_string())?;
    let mut block = Vec::new();
    block
        .try_reserve_exact(args.bytes)
        .map_err(|e| format!("cannot hoard {} bytes more: {e}", args.bytes))?;
    block.resize(args.bytes, 1);
    hoard.push(block);
    let total: usize = hoard.iter().map(Vec::len).sum();
    Ok(format!("hoarded {total} bytes in all"))
}

#[allow(clippy::empty_loop)]
fn spin(_: NoArgs) -> Result<String, String> {
    loop {}
}

/// Loops over WASI calls (clock and random) without end.
fn spin_wasi(_: NoArgs) -> Result<String, String> {
    let mut n = 0u64;
    loop {
        n = n.wrapping_add(
            std::time::SystemTime::now()
                .elapsed()
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1),
        );
        let mut buf = [0u8; 8];
        let _ = std::hint::black_box(&mut buf);
        std::hint::black_box(n);
        std::hint::black_box(std::collections::hash_map::RandomState::new());
    }
}

fn sleep(args: Millis) -> Result<String, String> {
    std::thread::sleep(std::time::Duration::from_millis(args.ms));
    Ok("woke up".into())
}

fn membomb(_: NoArgs) -> Result<String, String> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1024 * 1024]);
        std::hint::black_box(&hoard);
    }
}

fn allocate(args: Size) -> Result<String, String> {
    let v = vec![7u8; args.bytes];
    Ok(format!("allocated {}", std::hint::black_box(v).len()))
}

fn panic(args: Text) -> Result<String, String> {
    panic!("{}", args.text)
}

fn trap(_: NoArgs) -> Result<String, String> {
    // Traps with `unreachable` and prints nothing, unlike a panic.
    std::process::abort()
}

/// Recursion that uses only the wasm call stack (no memory), so it ends in
/// "call stack exhausted".
fn recurse_forever(depth: u64) -> u64 {
    if std::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    std::hint::black_box(recurse_forever(depth + 1)) ^ depth
}

/// How deep to recurse.
#[derive(Deserialize, JsonSchema)]
struct Depth {
    depth: u64,
}

/// Recursion to a given depth, on the wasm stack only.
fn recurse_bounded(depth: u64) -> u64 {
    if std::hint::black_box(depth) == 0 {
        return 1;
    }
    std::hint::black_box(recurse_bounded(depth - 1)).wrapping_add(depth)
}

fn recurse_to(args: Depth) -> Result<String, String> {
    Ok(format!("returned {}", recurse_bounded(args.depth)))
}

fn recurse(_: NoArgs) -> Result<String, String> {
    Ok(recurse_forever(0).to_string())
}

fn big_output(args: Size) -> Result<String, String> {
    Ok("x".repeat(args.bytes))
}

/// An exit status.
#[derive(Deserialize, JsonSchema)]
struct Status {
    code: i32,
}

/// Exits the guest (`std::process::exit`) instead of returning.
fn exit(args: Status) -> Result<String, String> {
    std::process::exit(args.code)
}

/// Asks for more memory than the limit with `try_reserve`, which fails
/// politely, then panics with a message of its own.
fn reserve_then_panic(args: Size) -> Result<String, String> {
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve(args.bytes).is_err() {
        panic!("could not reserve {} bytes, giving up", args.bytes);
    }
    Ok("reserved".into())
}

/// As `reserve_then_panic`, but then overflows the stack.
fn reserve_then_recurse(args: Size) -> Result<String, String> {
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve(args.bytes).is_err() {
        return Ok(recurse_forever(0).to_string());
    }
    Ok("reserved".into())
}

/// A path, and how many times to do something with it.
#[derive(Deserialize, JsonSchema)]
struct PathCount {
    path: String,
    count: usize,
}

/// Files to open and hold.
#[derive(Deserialize, JsonSchema)]
struct OpenArgs {
    path: String,
    count: usize,
    /// How long to hold them open before answering, in milliseconds.
    #[serde(default)]
    hold_ms: u64,
}

/// Opens `path` `count` times and holds every file open for `hold_ms`; says
/// how many opened and the first error.
fn open_files(args: OpenArgs) -> Result<String, String> {
    let mut held = Vec::new();
    let mut failure = String::new();
    for _ in 0..args.count {
        match std::fs::File::open(&args.path) {
            Ok(file) => held.push(file),
            Err(e) => {
                failure = format!("; then: {e}");
                break;
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(args.hold_ms));
    Ok(format!("opened {}{failure}", held.len()))
}

/// Writes `count` bytes to `path` in 64 KiB pieces; says how many were
/// written and the first error.
fn write_bytes(args: PathCount) -> Result<String, String> {
    use std::io::Write;
    let mut file = std::fs::File::create(&args.path).map_err(|e| e.to_string())?;
    let piece = vec![b'w'; 64 * 1024];
    let mut written = 0;
    while written < args.count {
        let n = piece.len().min(args.count - written);
        if let Err(e) = file.write_all(&piece[..n]) {
            return Ok(format!("wrote {written}; then: {e}"));
        }
        written += n;
    }
    Ok(format!("wrote {written}"))
}

/// Grows `path` to `count` bytes without writing them (`set_len`).
fn grow_file(args: PathCount) -> Result<String, String> {
    let file = std::fs::File::create(&args.path).map_err(|e| e.to_string())?;
    file.set_len(args.count as u64)
        .map_err(|e| format!("set_len: {e}"))?;
    Ok("grown".into())
}

/// Counts the entries of directory `text`.
fn list_dir(args: Text) -> Result<String, String> {
    let entries = std::fs::read_dir(&args.text).map_err(|e| e.to_string())?;
    let mut count = 0;
    for entry in entries {
        entry.map_err(|e| e.to_string())?;
        count += 1;
    }
    Ok(format!("{count} entries"))
}

/// Where to start connections, and how many at once.
#[derive(Deserialize, JsonSchema)]
struct ConnectFlood {
    port: u16,
    count: usize,
}

/// Starts `count` TCP connections to 127.0.0.1:`port` at once and waits
/// for all of them; says how many sockets could be made and how many
/// connected.
fn connect_flood(args: ConnectFlood) -> Result<String, String> {
    use wasip2::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
    let network = wasip2::sockets::instance_network::instance_network();
    let address = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port: args.port,
        address: (127, 0, 0, 1),
    });
    let mut sockets = Vec::new();
    for _ in 0..args.count {
        match wasip2::sockets::tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4) {
            Ok(socket) => {
                if socket.start_connect(&network, address).is_ok() {
                    sockets.push(socket);
                }
            }
            Err(_) => break,
        }
    }
    let made = sockets.len();
    // Wait for all of them at once, so that all their checks run together.
    let mut waiting: Vec<_> = sockets.iter().map(|s| (s, s.subscribe())).collect();
    let mut connected = 0;
    while !waiting.is_empty() {
        let pollables: Vec<_> = waiting.iter().map(|(_, p)| p).collect();
        let mut ready = wasip2::io::poll::poll(&pollables);
        ready.sort_unstable();
        for index in ready.into_iter().rev() {
            let (socket, _) = waiting.swap_remove(index as usize);
            if socket.finish_connect().is_ok() {
                connected += 1;
            }
        }
    }
    Ok(format!("{made} sockets, {connected} connected"))
}

fn fail(args: Text) -> Result<String, String> {
    Err(args.text)
}

fn stderr_flood(args: Size) -> Result<String, String> {
    let line = "flood ".repeat(100);
    let mut written = 0;
    while written < args.bytes {
        eprintln!("{line}");
        written += line.len() + 1;
    }
    Ok(format!("wrote {written} bytes to stderr"))
}

fn print(args: Text) -> Result<String, String> {
    println!("{}", args.text);
    eprintln!("{}", args.text);
    Ok("printed".into())
}

fn env(_: NoArgs) -> Result<String, String> {
    let vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(format!("{} vars: {}", vars.len(), vars.join(",")))
}

fn read_file(args: Text) -> Result<String, String> {
    std::fs::read_to_string(&args.text).map_err(|e| e.to_string())
}

/// Asks WASI for `bytes` random bytes in one call.
fn random(args: Size) -> Result<String, String> {
    let bytes = wasip2::random::random::get_random_bytes(args.bytes as u64);
    Ok(format!("got {} random bytes", bytes.len()))
}

/// Writes `bytes` to stdout in one WASI call, bypassing std's chunking.
fn big_write(args: Size) -> Result<String, String> {
    let stdout = wasip2::cli::stdout::get_stdout();
    let data = vec![b'x'; args.bytes];
    match stdout.write(&data) {
        Ok(()) => Ok("written".into()),
        Err(e) => Err(format!("write failed: {e:?}")),
    }
}

/// A path and the text to write there.
#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    path: String,
    text: String,
}

fn write_file(args: WriteArgs) -> Result<String, String> {
    std::fs::write(&args.path, &args.text).map_err(|e| e.to_string())?;
    Ok("written".into())
}

/// A link to create in the first granted directory.
#[derive(Deserialize, JsonSchema)]
struct LinkArgs {
    target: String,
    link: String,
}

fn symlink(args: LinkArgs) -> Result<String, String> {
    let dirs = wasip2::filesystem::preopens::get_directories();
    let (dir, _) = dirs.first().ok_or("no directory is granted")?;
    dir.symlink_at(&args.target, &args.link)
        .map_err(|e| e.name().to_string())?;
    Ok("linked".into())
}

fn hard_link(args: LinkArgs) -> Result<String, String> {
    std::fs::hard_link(&args.target, &args.link).map_err(|e| e.to_string())?;
    Ok("linked".into())
}

/// Where to connect and what to send.
#[derive(Deserialize, JsonSchema)]
struct ConnectArgs {
    address: String,
    message: String,
}

/// Connects over TCP, sends `message` and a newline, and returns the reply.
///
/// Checks `peer_addr` after connecting: on wasip2, std can report success for
/// a connection that was refused.
fn connect(args: ConnectArgs) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(&args.address).map_err(|e| format!("connect: {e}"))?;
    let peer = stream.peer_addr().map_err(|e| format!("peer_addr: {e}"))?;
    stream
        .write_all(format!("{}\n", args.message).as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut reply = String::new();
    stream
        .read_to_string(&mut reply)
        .map_err(|e| format!("read: {e}"))?;
    Ok(format!("connected to {peer}; reply: {}", reply.trim_end()))
}

/// Looks up a host name.
fn lookup(args: Text) -> Result<String, String> {
    use std::net::ToSocketAddrs;
    let found = (args.text.as_str(), 80)
        .to_socket_addrs()
        .map_err(|e| format!("lookup: {e}"))?;
    Ok(format!("{} addresses", found.count()))
}

/// Tries to accept connections on an ephemeral port.
fn listen(_: NoArgs) -> Result<String, String> {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").map_err(|e| format!("bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("local_addr: {e}"))?;
    Ok(format!("listening on {addr}"))
}

/// Tries to send one UDP datagram to `text` (an address).
/// A stretch of linear memory: `kib` KiB from `at` (a byte offset).
#[derive(Deserialize, JsonSchema)]
struct Stretch {
    at: usize,
    kib: usize,
    /// Milliseconds to wait after writing, before the call ends.
    #[serde(default)]
    hold_ms: u64,
}

/// 256 KiB of the memory's initial image (zeros, in .bss).
static mut IMAGE: [u8; 256 * 1024] = [0; 256 * 1024];

/// The stretch as a slice, the memory grown to hold it.
fn stretch(at: usize, kib: usize) -> Result<&'static mut [u8], String> {
    let end = kib
        .checked_mul(1024)
        .and_then(|len| at.checked_add(len))
        .ok_or("the stretch is too long")?;
    grow_memory_to(end.div_ceil(65536))?;
    // SAFETY: the memory holds `at..end` now; nothing else of the program
    // lives there (it is far above the heap, or it is IMAGE).
    Ok(unsafe { std::slice::from_raw_parts_mut(at as *mut u8, end - at) })
}

/// Grows memory 0 to at least `pages` 64 KiB pages.
#[cfg(target_arch = "wasm32")]
fn grow_memory_to(pages: usize) -> Result<(), String> {
    let have = core::arch::wasm32::memory_size(0);
    if pages > have && core::arch::wasm32::memory_grow(0, pages - have) == usize::MAX {
        return Err(format!("cannot grow the memory to {pages} pages"));
    }
    Ok(())
}

/// Off wasm32 (when the workspace's lints build this crate for the host)
/// there is no linear memory to grow.
#[cfg(not(target_arch = "wasm32"))]
fn grow_memory_to(pages: usize) -> Result<(), String> {
    Err(format!("cannot grow to {pages} pages: not a wasm32 build"))
}

/// Writes 0xA5 over IMAGE and over the stretch, then waits `hold_ms`:
/// data that no later instance may see.
fn mark_memory(args: Stretch) -> Result<String, String> {
    // SAFETY: a component instance is single-threaded.
    let image = unsafe { &mut *std::ptr::addr_of_mut!(IMAGE) };
    image.fill(0xA5);
    std::hint::black_box(&image);
    let stretch = stretch(args.at, args.kib)?;
    stretch.fill(0xA5);
    std::hint::black_box(&stretch);
    std::thread::sleep(std::time::Duration::from_millis(args.hold_ms));
    Ok(format!("marked {} KiB", args.kib + image.len() / 1024))
}

/// The bytes of IMAGE and of the stretch that are not zero: `image stretch`.
fn scan_memory(args: Stretch) -> Result<String, String> {
    // SAFETY: a component instance is single-threaded.
    let image = unsafe { &*std::ptr::addr_of!(IMAGE) };
    let in_image = image.iter().filter(|b| **b != 0).count();
    let stretch = stretch(args.at, args.kib)?;
    let in_stretch = stretch.iter().filter(|b| **b != 0).count();
    Ok(format!("{in_image} {in_stretch}"))
}

fn udp(args: Text) -> Result<String, String> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| format!("bind: {e}"))?;
    socket
        .send_to(b"hello", &args.text)
        .map_err(|e| format!("send: {e}"))?;
    Ok("sent".into())
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool("echo", echo)
        .tool("add", add)
        .tool("counter", counter)
        .tool("hoard", hoard)
        .tool("spin", spin)
        .tool("spin_wasi", spin_wasi)
        .tool("sleep", sleep)
        .tool("membomb", membomb)
        .tool("allocate", allocate)
        .tool("panic", panic)
        .tool("trap", trap)
        .tool("recurse", recurse)
        .tool("recurse_to", recurse_to)
        .tool("big_output", big_output)
        .tool("fail", fail)
        .tool("exit", exit)
        .tool("open_files", open_files)
        .tool("write_bytes", write_bytes)
        .tool("grow_file", grow_file)
        .tool("list_dir", list_dir)
        .tool("connect_flood", connect_flood)
        .tool("reserve_then_panic", reserve_then_panic)
        .tool("reserve_then_recurse", reserve_then_recurse)
        .tool("stderr_flood", stderr_flood)
        .tool("print", print)
        .tool("env", env)
        .tool("read_file", read_file)
        .tool("random", random)
        .tool("write_file", write_file)
        .tool("symlink", symlink)
        .tool("hard_link", hard_link)
        .tool("big_write", big_write)
        .tool("connect", connect)
        .tool("lookup", lookup)
        .tool("listen", listen)
        .tool("udp", udp)
        .tool("mark_memory", mark_memory)
        .tool("scan_memory", scan_memory)
}

toolhost_guest::export_toolbox!(toolbox);
