//! [`PoolConfig`]: the pooling instance allocator every call's instance
//! comes from, and how big it is.
//!
//! With the pool, wasmtime reserves the address space of every instance
//! slot once, at start, and a call's instance takes a slot and gives it
//! back: no `mmap`/`munmap` per call (whose TLB shootdowns serialise
//! threads), copy-on-write memory images reused from slot to slot, and only
//! the pages a call dirtied reset afterwards where that is exact
//! ([`MemoryReset`]). Isolation is unchanged: a slot is wiped before it is
//! used again.
//!
//! A component that does not fit a slot (more core instances, memories or
//! tables than a slot holds) is instantiated on demand instead, and so is a
//! call that finds the pool full: the pool only makes calls faster, it never
//! refuses one.

use serde::{Deserialize, Serialize};
use wasmtime::{Enabled, PoolingAllocationConfig};

use crate::settings::{Bounds, settings};

/// Core instances in the whole pool, per component instance.
const CORE_INSTANCES_PER_CALL: u32 = 16;
/// A table slot's elements kept resident between uses, in bytes.
const TABLE_KEEP_RESIDENT: usize = 1 << 20;
/// Largest values accepted, so that the reserved address space stays far
/// below what a 64-bit process has (47 bits).
const MAX_INSTANCES: u64 = 10_000;
const MAX_MEMORIES: u64 = 10_000;
const MAX_TABLES: u64 = 100_000;
/// The most memory a slot keeps resident: 1 GiB, in KiB.
const MAX_KEEP_RESIDENT_KIB: u64 = 1024 * 1024;
/// Bounds of the pre-instantiation keys.
const MAX_READY_PER_MODULE: u64 = 64;
const MIN_READY_IDLE_MS: u64 = 100;
const MAX_READY_IDLE_MS: u64 = 86_400_000;

settings! {
    section "pool";
    /// `[pool]`: the pooling instance allocator calls take their instances from.
    ///
    /// The defaults suit a server with up to 256 calls in flight. Past
    /// `instances` (or `memories`, or `tables`) calls at once, a call gets an
    /// instance allocated on demand, which is slower but otherwise the same.
    /// Each memory slot reserves a little over 4 GiB of address space (not
    /// memory). After a call, a slot keeps resident exactly the pages of
    /// linear memory its instances dirtied, reset, up to `keep_resident_kib`
    /// (with the `PAGEMAP_SCAN` reset), so the next instance does not fault
    /// them in again; a module's slots hold its own dirty set and no more.
    ///
    /// ```
    /// let pool: toolhost::PoolConfig = toml::from_str("instances = 64\nmemories = 128").unwrap();
    /// assert!(pool.enabled);
    /// assert_eq!(pool.instances, 64);
    /// pool.validate().unwrap();
    /// ```
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
    pub struct PoolConfig {
        /// Use the pool (default `true`); `false` allocates every instance on
        /// demand.
        enabled: bool = true, Bounds::Any;
        /// Component instances at once: calls in flight, in all modules.
        instances: u32 = 256, Bounds::Between(1, MAX_INSTANCES);
        /// Linear memories at once (a component has one or a few).
        memories: u32 = 512, Bounds::Between(1, MAX_MEMORIES);
        /// Tables at once (a component has one or a few per core module).
        tables: u32 = 1024, Bounds::Between(1, MAX_TABLES);
        /// Linear memory of a slot kept resident after a call, at most, in KiB
        /// (the dirty pages, reset; the rest is given back to the kernel).
        keep_resident_kib: u32 = 1024, Bounds::AtMost(MAX_KEEP_RESIDENT_KIB);
        /// Slots that keep memory resident for a module no call is using right
        /// now (they make that module's next call fast); the pool's resident
        /// memory for a module is at most [`PoolConfig::resident_slots`] x
        /// `keep_resident_kib` (or its instances' dirty set, if larger).
        warm_slots: u32 = 16, Bounds::Any;
        /// Fresh instances made ahead of calls, per module (default 2; 0 turns
        /// pre-instantiation off). Each serves exactly one call.
        ready_per_module: u32 = 2, Bounds::AtMost(MAX_READY_PER_MODULE);
        /// Instances made ahead of calls in all modules (default 64; with the
        /// pool on, at most half its `instances`). Each holds at most its
        /// module's memory limit.
        ready_total: u32 = 64, Bounds::AtMost(MAX_INSTANCES);
        /// An instance made ahead that no call took for this long is dropped
        /// (default 60000 ms).
        ready_idle_ms: u64 = 60_000, Bounds::Between(MIN_READY_IDLE_MS, MAX_READY_IDLE_MS);
        /// How a slot's memory is wiped between instances (default `"auto"`).
        memory_reset: MemoryReset = MemoryReset::Auto, Bounds::Any;
    }
}

/// `[pool] memory_reset`: how a slot's linear memory is wiped before its
/// next instance.
///
/// The faster reset uses Linux's `PAGEMAP_SCAN` to find the pages the last
/// instance dirtied, whether they are in memory or swapped out, and resets
/// exactly those (toolhost's patched wasmtime 48.0.8: `vendor/README.md`).
/// Either way every page the last instance wrote is wiped or given back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryReset {
    /// `PAGEMAP_SCAN` on Linux 6.7 and later; the full reset otherwise.
    #[default]
    Auto,
    /// Always the full reset: the kept-resident part of a slot's memory is
    /// zeroed or copied from the image, and the rest given back to the
    /// kernel.
    Full,
}

/// The reset a pool uses on this machine, from [`PoolConfig::memory_reset_in_use`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetInUse {
    /// Only the pages a call dirtied, found with `PAGEMAP_SCAN`.
    DirtyPages,
    /// The full reset; the text says why `PAGEMAP_SCAN` is not used.
    Full(String),
}

impl std::fmt::Display for ResetInUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResetInUse::DirtyPages => {
                f.write_str("only the pages a call dirtied (PAGEMAP_SCAN: Linux 6.7 or later)")
            }
            ResetInUse::Full(why) => write!(
                f,
                "every kept-resident page, and the rest given back to the kernel ({why})"
            ),
        }
    }
}

impl PoolConfig {
    /// Used stores waiting to be dropped in the background, at most (past
    /// that a caller drops its own). Each still holds its slot.
    pub const MAX_STORES_AWAITING_DROP: u32 = 32;

    /// The most memory slots the pool keeps resident for one module while
    /// at most `calls_in_flight` of its calls run at once.
    ///
    /// A slot is in use while its instance lives: during a call, while it
    /// waits made ahead of one, and while its used store waits to be
    /// dropped. wasmtime 48 splits a pool of 128 slots or more into one
    /// shard per core (at most 16), each with its share of `warm_slots`,
    /// and a shard takes a never-used slot only while fewer than its share
    /// are idle; so each shard holds at most the slots in use at its peak
    /// plus its share. Each slot holds at most `keep_resident_kib` once
    /// reset (the pages its instance dirtied), and its instance's dirty
    /// pages while in use.
    pub fn resident_slots(&self, calls_in_flight: u32) -> u32 {
        let in_use = calls_in_flight
            .saturating_add(
                self.ready_per_module
                    .min(u32::try_from(self.ready_limit()).unwrap_or(u32::MAX)),
            )
            .saturating_add(Self::MAX_STORES_AWAITING_DROP);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let shards = if self.memories >= 128 {
            u32::try_from(cores.min(16)).unwrap_or(16)
        } else {
            1
        };
        shards
            .saturating_mul(in_use)
            .saturating_add(self.warm_slots)
    }

    /// No pool: every instance allocated on demand.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// Instances made ahead of calls, in all modules at once: `ready_total`,
    /// and with the pool on at most half its slots, so that calls always
    /// find room.
    pub(crate) fn ready_limit(&self) -> usize {
        let total = self.ready_total;
        let total = if self.enabled {
            total.min(self.instances / 2)
        } else {
            total
        };
        usize::try_from(total).unwrap_or(usize::MAX)
    }

    /// The reset this pool uses on this machine: `memory_reset` decided
    /// with the kernel's version (read now).
    pub fn memory_reset_in_use(&self) -> ResetInUse {
        decide_reset(self.memory_reset, kernel_version())
    }

    /// wasmtime's configuration for this pool, with `reset` and slots
    /// shaped as `slot`.
    pub(crate) fn allocation(
        &self,
        reset: &ResetInUse,
        slot: &SlotShape,
    ) -> PoolingAllocationConfig {
        let keep_resident = usize::try_from(self.keep_resident_kib)
            .unwrap_or(usize::MAX)
            .saturating_mul(1024);
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(self.instances)
            .total_core_instances(self.instances.saturating_mul(CORE_INSTANCES_PER_CALL))
            .total_memories(self.memories)
            .total_tables(self.tables)
            // One fiber stack per call in flight.
            .total_stacks(self.instances)
            .max_memory_size(slot.memory_bytes)
            .table_elements(usize::try_from(slot.table_elements).unwrap_or(usize::MAX))
            .max_core_instances_per_component(slot.core_instances)
            .max_memories_per_component(slot.memories)
            .max_tables_per_component(slot.tables)
            .max_memories_per_module(slot.memories)
            .max_tables_per_module(slot.tables)
            .linear_memory_keep_resident(keep_resident)
            .table_keep_resident(TABLE_KEEP_RESIDENT)
            .max_unused_warm_slots(self.warm_slots)
            .pagemap_scan(match reset {
                // wasmtime still checks that the kernel has it.
                ResetInUse::DirtyPages => Enabled::Auto,
                ResetInUse::Full(_) => Enabled::No,
            });
        pool
    }
}

/// What one instance slot of the pool holds. The runtime shapes it from
/// the limits a module has by default (`sandbox/runtime.rs`), so that a
/// module with default limits is pooled; one allowed larger tables runs on
/// demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotShape {
    /// The largest linear memory, in bytes: the most `memory_mib` accepts,
    /// so that a module's memory limit is the same pooled or not. Only
    /// address space is reserved for it (wasmtime reserves 4 GiB per
    /// memory anyway).
    pub(crate) memory_bytes: usize,
    /// Elements of one table (`max_table_elements`).
    pub(crate) table_elements: u64,
    /// Per component instance: core instances, memories and tables
    /// (`max_instances`, `max_memories` and `max_tables` per call).
    pub(crate) core_instances: u32,
    pub(crate) memories: u32,
    pub(crate) tables: u32,
}

impl SlotShape {
    /// Whether a module allowed tables of `max_table_elements` can use the
    /// pool (a pooled table cannot grow past its slot).
    pub(crate) fn fits_tables(&self, max_table_elements: u64) -> bool {
        max_table_elements <= self.table_elements
    }
}

/// The first Linux with `PAGEMAP_SCAN`.
const PAGEMAP_SCAN_SINCE: (u32, u32) = (6, 7);

/// The reset `setting` means on a kernel of `kernel` (major, minor; `None`
/// off Linux or unknown). Swap does not matter: the patched scan resets
/// dirty pages that were swapped out as well (`vendor/README.md`).
fn decide_reset(setting: MemoryReset, kernel: Option<(u32, u32)>) -> ResetInUse {
    if setting == MemoryReset::Full {
        return ResetInUse::Full("[pool] memory_reset = \"full\"".into());
    }
    let Some(kernel) = kernel else {
        return ResetInUse::Full("PAGEMAP_SCAN needs Linux 6.7 or later".into());
    };
    if kernel < PAGEMAP_SCAN_SINCE {
        return ResetInUse::Full(format!(
            "this is Linux {}.{}, and PAGEMAP_SCAN came in 6.7",
            kernel.0, kernel.1
        ));
    }
    ResetInUse::DirtyPages
}

/// The running kernel's version (major, minor), on Linux.
fn kernel_version() -> Option<(u32, u32)> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    parse_kernel_version(&release)
}

/// `6.18.44-fc-v1098` as (6, 18).
fn parse_kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut numbers = release.trim().split(['.', '-']);
    let major = numbers.next()?.parse().ok()?;
    let minor = numbers.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_huge_counts_are_refused_by_name() {
        let zero = PoolConfig {
            memories: 0,
            ..PoolConfig::default()
        };
        assert!(zero.validate().unwrap_err().contains("`memories`"));
        let huge = PoolConfig {
            instances: 1_000_000,
            ..PoolConfig::default()
        };
        assert!(huge.validate().unwrap_err().contains("`instances`"));
        let idle = PoolConfig {
            ready_idle_ms: 0,
            ..PoolConfig::default()
        };
        assert!(idle.validate().unwrap_err().contains("`ready_idle_ms`"));
        PoolConfig::default().validate().unwrap();
    }

    #[test]
    fn pagemap_scan_on_new_kernels_unless_the_full_reset_is_asked_for() {
        let auto = MemoryReset::Auto;
        assert_eq!(decide_reset(auto, Some((6, 18))), ResetInUse::DirtyPages);
        assert_eq!(decide_reset(auto, Some((6, 7))), ResetInUse::DirtyPages);
        let old = decide_reset(auto, Some((6, 6)));
        assert!(
            matches!(&old, ResetInUse::Full(why) if why.contains("Linux 6.6")),
            "{old}"
        );
        assert!(matches!(decide_reset(auto, None), ResetInUse::Full(_)));
        assert!(matches!(
            decide_reset(MemoryReset::Full, Some((6, 18))),
            ResetInUse::Full(why) if why.contains("memory_reset")
        ));
    }

    #[test]
    fn kernel_versions_are_read() {
        assert_eq!(parse_kernel_version("6.18.44-fc-v1098\n"), Some((6, 18)));
        assert_eq!(parse_kernel_version("5.4.0"), Some((5, 4)));
        assert_eq!(parse_kernel_version("6"), None);
    }

    #[test]
    fn ready_instances_leave_half_the_pool_to_calls() {
        let small = PoolConfig {
            instances: 10,
            ..PoolConfig::default()
        };
        assert_eq!(small.ready_limit(), 5);
        let off = PoolConfig {
            instances: 10,
            ..PoolConfig::disabled()
        };
        assert_eq!(off.ready_limit(), 64);
    }
}
