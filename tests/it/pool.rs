//! The instance pool: modules use it when they fit, a full pool overflows
//! to instances allocated on demand, and isolation is the same either way.

use std::sync::Arc;

use serde_json::json;
use toolhost::{
    Limits, MemoryReset, PoolConfig, Runtime, Tool, ToolManager, WasmModule, bundled_module,
};

use crate::common::{call, guest, tight_limits, tool_call};

/// A runtime whose pool holds `instances` component instances.
fn runtime_with(pool: PoolConfig) -> Runtime {
    Runtime::builder()
        .pool(pool)
        .build()
        .expect("runtime starts")
}

fn tiny_pool() -> PoolConfig {
    PoolConfig {
        instances: 2,
        memories: 4,
        tables: 8,
        ..PoolConfig::default()
    }
}

fn hostile_in(runtime: &Runtime, limits: Limits) -> WasmModule {
    WasmModule::from_file(runtime, &guest("guest-hostile"), Some("h"), limits)
        .expect("hostile guest loads")
}

/// A Tokio runtime of two worker threads, for calls at once.
fn two_workers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

#[test]
fn modules_that_fit_take_instances_from_the_pool() {
    let runtime = runtime_with(PoolConfig::default());
    let calc = bundled_module("calc").expect("calc is bundled");
    let module = WasmModule::from_bytes(&runtime, "calc", calc, Limits::default()).unwrap();
    assert!(module.pooled());
    let manager = manager_of(module);
    assert_eq!(
        call(&manager, "calc_evaluate", json!({"expression": "6 * 7"})),
        "42"
    );
}

#[test]
fn a_module_allowed_larger_tables_than_a_slot_runs_on_demand() {
    let runtime = runtime_with(PoolConfig::default());
    let limits = Limits {
        max_table_elements: 200_000,
        ..tight_limits()
    };
    let module = hostile_in(&runtime, limits);
    assert!(!module.pooled());
    let manager = manager_of(module);
    assert_eq!(call(&manager, "h_add", json!({"a": 2, "b": 3})), "5");
}

#[test]
fn with_the_pool_off_every_instance_is_made_on_demand() {
    let runtime = runtime_with(PoolConfig::disabled());
    let module = hostile_in(&runtime, tight_limits());
    assert!(!module.pooled());
    let manager = manager_of(module);
    assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
    assert_eq!(
        call(&manager, "h_membomb", json!({})),
        "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."
    );
}

#[test]
fn calls_past_a_full_pool_run_on_demand_and_all_succeed() {
    let runtime = runtime_with(tiny_pool());
    let module = hostile_in(&runtime, tight_limits());
    assert!(module.pooled());
    let manager = Arc::new(manager_of(module));
    let tokio = two_workers();
    // Twelve calls asleep at once in a pool of two instances: ten of them
    // cannot have a slot.
    let answers = tokio.block_on(async {
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let manager = Arc::clone(&manager);
                let (tool, arguments) = match i % 3 {
                    0 => ("h_sleep", json!({"ms": 300})),
                    1 => ("h_counter", json!({})),
                    _ => ("h_membomb", json!({})),
                };
                let call = tool_call("c", tool, json!(arguments.to_string()));
                tokio::spawn(async move { (tool, manager.call_async(&call).await) })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.expect("no task panicked"));
        }
        answers
    });
    for (tool, answer) in answers {
        let expected = match tool {
            "h_sleep" => "woke up",
            "h_counter" => "1 1",
            _ => "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB.",
        };
        assert_eq!(answer, expected, "{tool}");
    }
}

#[test]
fn reused_slots_start_fresh() {
    // Two slots, used over and over: memory a call wrote is gone in the
    // next call, and a memory bomb leaves nothing behind.
    let runtime = runtime_with(tiny_pool());
    let manager = manager_of(hostile_in(&runtime, tight_limits()));
    for _ in 0..20 {
        assert_eq!(call(&manager, "h_counter", json!({})), "1 1");
        assert_eq!(
            call(&manager, "h_membomb", json!({})),
            "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."
        );
    }
    assert_eq!(call(&manager, "h_add", json!({"a": 1, "b": 1})), "2");
}

#[test]
fn a_bad_pool_size_is_refused_by_name() {
    let error = Runtime::builder()
        .pool(PoolConfig {
            tables: 0,
            ..PoolConfig::default()
        })
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("`tables`"), "{error}");
    let config = toolhost::config::Config::from_toml("[pool]\ninstances = 0\n").unwrap_err();
    assert!(config.contains("[pool]: `instances`"), "{config}");
    let unknown = toolhost::config::Config::from_toml("[pool]\nslots = 3\n").unwrap_err();
    assert!(unknown.contains("slots"), "{unknown}");
    let parsed = toolhost::config::Config::from_toml("[pool]\nenabled = false\n").unwrap();
    assert!(!parsed.pool.enabled);
}

#[test]
fn module_infos_are_the_same_pooled_or_not() {
    let pooled = hostile_in(&runtime_with(tiny_pool()), tight_limits());
    let on_demand = hostile_in(&runtime_with(PoolConfig::disabled()), tight_limits());
    assert_eq!(pooled.infos(), on_demand.infos());
}

/// Where the marker goes: 4 MiB from 8 MiB on, far above the guest's heap
/// (and 256 KiB of its memory's initial image besides).
const STRETCH: (usize, usize) = (8 << 20, 4096);

/// A pool of one instance slot and one memory slot, so every call's
/// instance and memory are in the same slots, with `keep_resident_kib` and
/// `memory_reset`; no instance is made ahead.
fn one_slot(memory_reset: MemoryReset, keep_resident_kib: u32) -> PoolConfig {
    PoolConfig {
        instances: 1,
        memories: 1,
        tables: 8,
        keep_resident_kib,
        ready_per_module: 0,
        memory_reset,
        ..PoolConfig::default()
    }
}

fn stretch(hold_ms: u64) -> serde_json::Value {
    json!({"at": STRETCH.0, "kib": STRETCH.1, "hold_ms": hold_ms})
}

/// Runs `calls` (calls of `module`) until none of them ran off the pool:
/// the store of the instance before is dropped in the background, and a
/// call that finds the pool's one slot still taken runs on demand, in a
/// memory of its own, where it proves nothing.
fn in_the_slot<T>(runtime: &Runtime, module: &WasmModule, mut calls: impl FnMut() -> T) -> T {
    for _ in 0..200 {
        let before = module.calls_off_the_pool();
        let answer = calls();
        if module.calls_off_the_pool() == before {
            return answer;
        }
        runtime.on_idle();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the pool's slot was never free");
}

/// The machine's swap, in KiB (`SwapTotal` of /proc/meminfo).
fn swap_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("SwapTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The mappings of this process: (start, end, readable and writable).
fn mappings() -> Vec<(usize, usize, bool)> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (start, end) = fields.next()?.split_once('-')?;
            let rw = fields.next()?.starts_with("rw");
            Some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
                rw,
            ))
        })
        .collect()
}

/// Whether the page at `page` (mapped readable) begins with the marker.
fn is_marked(page: usize) -> bool {
    // SAFETY: the caller found the page mapped readable; reading it races
    // with nothing, as the instance that owns it is asleep.
    unsafe { std::ptr::read_volatile(page as *const u64) == 0xA5A5_A5A5_A5A5_A5A5 }
}

/// The pages of this process that hold the marker while an instance
/// sleeps on it: the stretch ([`STRETCH`] from the start of a pool's
/// memory slot, which is where readable memory follows an inaccessible
/// mapping) and the image's 256 KiB, which lie low in the same memory, so
/// that the reset meets them before anything else the call dirtied.
fn find_the_marker() -> Option<Vec<usize>> {
    let maps = mappings();
    for pair in maps.windows(2) {
        let (before, slot) = (pair[0], pair[1]);
        if before.2 || !slot.2 || before.1 != slot.0 {
            continue;
        }
        // The readable mappings from the slot's start on, one after another.
        let mut reach = slot.0;
        for &(s, e, rw) in maps.iter().filter(|m| m.0 >= slot.0) {
            if s != reach || !rw {
                break;
            }
            reach = e;
        }
        let stretch = slot.0 + STRETCH.0..slot.0 + STRETCH.0 + STRETCH.1 * 1024;
        if reach < stretch.end || !stretch.clone().step_by(4096).all(is_marked) {
            continue;
        }
        let image = (slot.0..stretch.start)
            .step_by(4096)
            .filter(|&p| is_marked(p));
        return Some(image.chain(stretch.step_by(4096)).collect());
    }
    None
}

/// Pages `pages` out to swap; how many of them are then swapped out (bit
/// 62 of their /proc/self/pagemap entries).
fn page_out(pages: &[usize]) -> usize {
    use std::io::{Read, Seek, SeekFrom};
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").expect("/proc/self/pagemap");
    let mut swapped = 0;
    for &page in pages {
        // SAFETY: MADV_PAGEOUT only moves pages to swap; their contents are
        // unchanged for whoever reads them next.
        let paged = unsafe {
            rustix::mm::madvise(
                page as *mut std::ffi::c_void,
                4096,
                rustix::mm::Advice::LinuxPageOut,
            )
        };
        assert!(paged.is_ok(), "MADV_PAGEOUT: {paged:?}");
        let mut entry = [0u8; 8];
        pagemap
            .seek(SeekFrom::Start((page / 4096 * 8) as u64))
            .and_then(|_| pagemap.read_exact(&mut entry))
            .expect("the page's pagemap entry");
        if u64::from_le_bytes(entry) & (1 << 62) != 0 {
            swapped += 1;
        }
    }
    swapped
}

#[test]
fn no_instance_reads_what_the_previous_one_in_its_slot_wrote() {
    let swap = swap_kib();
    // The stretch within the memory kept resident (reset page by page)
    // and past it (given back to the kernel), with each reset.
    for memory_reset in [MemoryReset::Auto, MemoryReset::Full] {
        for keep_resident_kib in [1024, 16 * 1024] {
            let pool = one_slot(memory_reset, keep_resident_kib);
            let reset = pool.memory_reset_in_use();
            let runtime = runtime_with(pool);
            let module = hostile_in(&runtime, Limits::default());
            assert!(module.pooled());
            let manager = Arc::new(manager_of(module.clone()));
            let case = format!("{memory_reset:?}, {keep_resident_kib} KiB resident: {reset}");
            for round in 0..3 {
                let marked = in_the_slot(&runtime, &module, || {
                    call(&manager, "h_mark_memory", stretch(0))
                });
                assert_eq!(marked, "marked 4352 KiB", "{case}");
                let seen = in_the_slot(&runtime, &module, || {
                    call(&manager, "h_scan_memory", stretch(0))
                });
                assert_eq!(
                    seen, "0 0",
                    "round {round}: the next instance saw marked bytes (image, stretch); {case}"
                );
            }
            if swap == 0 {
                eprintln!(
                    "{case}: the part with the marker paged out did not run: this machine has \
                     no swap (SwapTotal is 0 in /proc/meminfo), so nothing can be paged out"
                );
                continue;
            }
            // The marker swapped out while its instance still holds the
            // slot, then the next instance in the slot.
            let (swapped, pages) = in_the_slot(&runtime, &module, || {
                let marking = {
                    let manager = Arc::clone(&manager);
                    std::thread::spawn(move || call(&manager, "h_mark_memory", stretch(1500)))
                };
                let marker = (0..100).find_map(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    find_the_marker()
                });
                let marker =
                    marker.unwrap_or_else(|| panic!("{case}: the marker is nowhere in memory"));
                let swapped = page_out(&marker);
                assert_eq!(marking.join().unwrap(), "marked 4352 KiB", "{case}");
                (swapped, marker.len())
            });
            eprintln!(
                "{case}: {swapped} of the marker's {pages} pages were swapped out before the reset"
            );
            assert!(swapped > 0, "{case}: MADV_PAGEOUT swapped nothing out");
            let seen = in_the_slot(&runtime, &module, || {
                call(&manager, "h_scan_memory", stretch(0))
            });
            assert_eq!(
                seen, "0 0",
                "the next instance saw marked bytes that had been swapped out (image, stretch); {case}"
            );
        }
    }
}

#[test]
fn typed_calls_past_a_full_pool_find_their_function_in_the_on_demand_twin() {
    let runtime = runtime_with(PoolConfig {
        ready_per_module: 0,
        ..tiny_pool()
    });
    let hostile = hostile_in(&runtime, tight_limits());
    let plain = WasmModule::from_file(
        &runtime,
        &guest("guest-plain"),
        Some("p"),
        Limits::default(),
    )
    .expect("guest-plain loads");
    assert!(plain.pooled());
    let mut manager = manager_of(hostile);
    manager.register(plain.clone()).unwrap();
    let manager = Arc::new(manager);
    let tokio = two_workers();
    let answers = tokio.block_on(async {
        // Two sleepers take both slots; the typed calls then find none.
        let sleepers: Vec<_> = (0..2)
            .map(|_| {
                let manager = Arc::clone(&manager);
                let call = tool_call("s", "h_sleep", json!(json!({"ms": 1500}).to_string()));
                tokio::spawn(async move { manager.call_async(&call).await })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let mut answers = Vec::new();
        for (tool, arguments) in [
            ("p_echo", json!({"text": "world"})),
            ("p_text_echo", json!({"s": "iface"})),
        ] {
            let call = tool_call("c", tool, json!(arguments.to_string()));
            answers.push(manager.call_async(&call).await);
        }
        for sleeper in sleepers {
            assert_eq!(sleeper.await.unwrap(), "woke up");
        }
        answers
    });
    assert_eq!(answers, ["world", "text:iface"]);
    assert_eq!(plain.calls_off_the_pool(), 2);
}
