//! [`Limits`]: what one call of a tool, and the loading of its module, may use.

use serde::{Deserialize, Serialize};

/// The resources a module may use: per call, and once at load.
///
/// Every limit is a config key of the same name (in `[limits]` for all
/// modules, or a module's `limits = { ... }`). [`Limits::SPECS`] lists each
/// one with its default, the most accepted and what it bounds; the README's
/// limits table is checked against it by a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Fuel units per call (roughly wasm instructions); running out is an error.
    pub fuel: u64,
    /// Wall-clock time per call, in milliseconds.
    pub timeout_ms: u64,
    /// Linear memory per call, in MiB, summed over all memories.
    pub memory_mib: u64,
    /// Elements of any one table.
    pub max_table_elements: u64,
    /// Core instances a call may create (a component is several).
    pub max_instances: u64,
    /// Tables a call may create.
    pub max_tables: u64,
    /// Linear memories a call may create.
    pub max_memories: u64,
    /// The wasm stack, in KiB; deeper recursion traps as `call stack exhausted`.
    pub max_stack_kib: u64,
    /// The largest arguments (as JSON text) a call accepts, in bytes.
    pub max_args_bytes: u64,
    /// The largest result (or error text) a call may return, in bytes.
    pub max_output_bytes: u64,
    /// Bytes kept of each of stdout and stderr per call; the rest is dropped and counted.
    pub max_captured_bytes: u64,
    /// The largest component accepted at load, in bytes.
    pub max_component_bytes: u64,
    /// Fuel for the one `tool-info` call at load.
    pub tool_info_fuel: u64,
    /// Wall-clock time for the one `tool-info` call at load, in milliseconds.
    pub tool_info_timeout_ms: u64,
    /// The largest `tool-info` answer accepted, in bytes.
    pub max_tool_info_bytes: u64,
    /// The most tools one module may declare.
    pub max_tools: u64,
}

/// One limit: its config key, default, the most accepted, and what it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSpec {
    /// The config key, also the field of [`Limits`].
    pub key: &'static str,
    /// The default value.
    pub default: u64,
    /// The largest value accepted; larger is a config error (so is 0).
    pub max: u64,
    /// `call` for a per-call limit, `load` for one applied when the module is loaded.
    pub applies_to: &'static str,
    /// What the limit bounds, in a few words.
    pub bounds: &'static str,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

impl Limits {
    /// Every limit, in the order of the README's table.
    pub const SPECS: [LimitSpec; 16] = [
        spec(
            "fuel",
            1_000_000_000,
            1 << 50,
            "call",
            "wasm instructions (fuel units)",
        ),
        spec(
            "timeout_ms",
            10_000,
            86_400_000,
            "call",
            "wall-clock time, ms",
        ),
        spec("memory_mib", 64, 4096, "call", "linear memory in all, MiB"),
        spec(
            "max_table_elements",
            100_000,
            10_000_000,
            "call",
            "elements of one table",
        ),
        spec(
            "max_instances",
            100,
            10_000,
            "call",
            "core instances created",
        ),
        spec("max_tables", 100, 10_000, "call", "tables created"),
        spec("max_memories", 20, 1_000, "call", "linear memories created"),
        spec("max_stack_kib", 512, 64 * KIB, "call", "wasm stack, KiB"),
        spec(
            "max_args_bytes",
            MIB,
            GIB,
            "call",
            "arguments (JSON text), bytes",
        ),
        spec(
            "max_output_bytes",
            MIB,
            GIB,
            "call",
            "result or error text, bytes",
        ),
        spec(
            "max_captured_bytes",
            64 * KIB,
            64 * MIB,
            "call",
            "stdout and stderr kept, bytes each",
        ),
        spec(
            "max_component_bytes",
            256 * MIB,
            4 * GIB,
            "load",
            "component size, bytes",
        ),
        spec(
            "tool_info_fuel",
            1_000_000_000,
            1 << 50,
            "load",
            "fuel of `tool-info`",
        ),
        spec(
            "tool_info_timeout_ms",
            10_000,
            86_400_000,
            "load",
            "wall-clock time of `tool-info`, ms",
        ),
        spec(
            "max_tool_info_bytes",
            MIB,
            GIB,
            "load",
            "`tool-info` answer, bytes",
        ),
        spec(
            "max_tools",
            1024,
            100_000,
            "load",
            "tools one module declares",
        ),
    ];

    /// Each limit's key and value, in the order of [`Limits::SPECS`].
    pub fn values(&self) -> [(&'static str, u64); 16] {
        [
            ("fuel", self.fuel),
            ("timeout_ms", self.timeout_ms),
            ("memory_mib", self.memory_mib),
            ("max_table_elements", self.max_table_elements),
            ("max_instances", self.max_instances),
            ("max_tables", self.max_tables),
            ("max_memories", self.max_memories),
            ("max_stack_kib", self.max_stack_kib),
            ("max_args_bytes", self.max_args_bytes),
            ("max_output_bytes", self.max_output_bytes),
            ("max_captured_bytes", self.max_captured_bytes),
            ("max_component_bytes", self.max_component_bytes),
            ("tool_info_fuel", self.tool_info_fuel),
            ("tool_info_timeout_ms", self.tool_info_timeout_ms),
            ("max_tool_info_bytes", self.max_tool_info_bytes),
            ("max_tools", self.max_tools),
        ]
    }

    /// Checks every limit is positive and within reason; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (spec, (key, value)) in Self::SPECS.iter().zip(self.values()) {
            debug_assert_eq!(spec.key, key);
            if value == 0 {
                return Err(format!("`{key}` must be greater than 0"));
            }
            if value > spec.max {
                return Err(format!(
                    "`{key}` = {value} is too large; the most accepted is {}",
                    spec.max
                ));
            }
        }
        Ok(())
    }

    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> usize {
        to_usize(self.memory_mib.saturating_mul(MIB))
    }

    /// The result limit in bytes.
    pub fn output_bytes(&self) -> usize {
        to_usize(self.max_output_bytes)
    }

    /// The wasm stack limit in bytes.
    pub fn stack_bytes(&self) -> usize {
        to_usize(self.max_stack_kib.saturating_mul(KIB))
    }
}

impl Default for Limits {
    fn default() -> Self {
        let d = |i: usize| Self::SPECS[i].default;
        Self {
            fuel: d(0),
            timeout_ms: d(1),
            memory_mib: d(2),
            max_table_elements: d(3),
            max_instances: d(4),
            max_tables: d(5),
            max_memories: d(6),
            max_stack_kib: d(7),
            max_args_bytes: d(8),
            max_output_bytes: d(9),
            max_captured_bytes: d(10),
            max_component_bytes: d(11),
            tool_info_fuel: d(12),
            tool_info_timeout_ms: d(13),
            max_tool_info_bytes: d(14),
            max_tools: d(15),
        }
    }
}

const fn spec(
    key: &'static str,
    default: u64,
    max: u64,
    applies_to: &'static str,
    bounds: &'static str,
) -> LimitSpec {
    LimitSpec {
        key,
        default,
        max,
        applies_to,
        bounds,
    }
}

/// A limit as a `usize` (limits are validated far below `usize::MAX` on 64-bit hosts).
pub(crate) fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Per-module overrides of [`Limits`]: each key that is set replaces the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    /// Overrides [`Limits::fuel`].
    pub fuel: Option<u64>,
    /// Overrides [`Limits::timeout_ms`].
    pub timeout_ms: Option<u64>,
    /// Overrides [`Limits::memory_mib`].
    pub memory_mib: Option<u64>,
    /// Overrides [`Limits::max_table_elements`].
    pub max_table_elements: Option<u64>,
    /// Overrides [`Limits::max_instances`].
    pub max_instances: Option<u64>,
    /// Overrides [`Limits::max_tables`].
    pub max_tables: Option<u64>,
    /// Overrides [`Limits::max_memories`].
    pub max_memories: Option<u64>,
    /// Overrides [`Limits::max_stack_kib`].
    pub max_stack_kib: Option<u64>,
    /// Overrides [`Limits::max_args_bytes`].
    pub max_args_bytes: Option<u64>,
    /// Overrides [`Limits::max_output_bytes`].
    pub max_output_bytes: Option<u64>,
    /// Overrides [`Limits::max_captured_bytes`].
    pub max_captured_bytes: Option<u64>,
    /// Overrides [`Limits::max_component_bytes`].
    pub max_component_bytes: Option<u64>,
    /// Overrides [`Limits::tool_info_fuel`].
    pub tool_info_fuel: Option<u64>,
    /// Overrides [`Limits::tool_info_timeout_ms`].
    pub tool_info_timeout_ms: Option<u64>,
    /// Overrides [`Limits::max_tool_info_bytes`].
    pub max_tool_info_bytes: Option<u64>,
    /// Overrides [`Limits::max_tools`].
    pub max_tools: Option<u64>,
}

impl LimitOverrides {
    /// `base` with these overrides applied.
    pub fn apply(&self, base: Limits) -> Limits {
        Limits {
            fuel: self.fuel.unwrap_or(base.fuel),
            timeout_ms: self.timeout_ms.unwrap_or(base.timeout_ms),
            memory_mib: self.memory_mib.unwrap_or(base.memory_mib),
            max_table_elements: self.max_table_elements.unwrap_or(base.max_table_elements),
            max_instances: self.max_instances.unwrap_or(base.max_instances),
            max_tables: self.max_tables.unwrap_or(base.max_tables),
            max_memories: self.max_memories.unwrap_or(base.max_memories),
            max_stack_kib: self.max_stack_kib.unwrap_or(base.max_stack_kib),
            max_args_bytes: self.max_args_bytes.unwrap_or(base.max_args_bytes),
            max_output_bytes: self.max_output_bytes.unwrap_or(base.max_output_bytes),
            max_captured_bytes: self.max_captured_bytes.unwrap_or(base.max_captured_bytes),
            max_component_bytes: self.max_component_bytes.unwrap_or(base.max_component_bytes),
            tool_info_fuel: self.tool_info_fuel.unwrap_or(base.tool_info_fuel),
            tool_info_timeout_ms: self
                .tool_info_timeout_ms
                .unwrap_or(base.tool_info_timeout_ms),
            max_tool_info_bytes: self.max_tool_info_bytes.unwrap_or(base.max_tool_info_bytes),
            max_tools: self.max_tools.unwrap_or(base.max_tools),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_values_and_serde_agree() {
        let defaults = Limits::default();
        let json = serde_json::to_value(defaults).unwrap();
        let object = json.as_object().unwrap();
        assert_eq!(object.len(), Limits::SPECS.len());
        for (spec, (key, value)) in Limits::SPECS.iter().zip(defaults.values()) {
            assert_eq!(spec.key, key);
            assert_eq!(spec.default, value);
            assert_eq!(object[key], value, "{key}");
            assert!(spec.default <= spec.max, "{key}");
        }
    }

    #[test]
    fn defaults_are_valid_and_zero_or_huge_are_not() {
        assert!(Limits::default().validate().is_ok());
        for (i, spec) in Limits::SPECS.iter().enumerate() {
            let mut json = serde_json::to_value(Limits::default()).unwrap();
            json[spec.key] = 0.into();
            let zero: Limits = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(
                zero.validate().unwrap_err(),
                format!("`{}` must be greater than 0", spec.key),
                "#{i}"
            );
            json[spec.key] = (spec.max + 1).into();
            let huge: Limits = serde_json::from_value(json).unwrap();
            assert!(huge.validate().unwrap_err().contains("too large"), "#{i}");
        }
    }

    #[test]
    fn overrides_replace_only_what_is_set() {
        let mut json = serde_json::Map::new();
        for (i, spec) in Limits::SPECS.iter().enumerate() {
            json.insert(spec.key.into(), (i as u64 + 1).into());
        }
        let all: LimitOverrides = serde_json::from_value(json.into()).unwrap();
        let applied = all.apply(Limits::default());
        for (i, (_, value)) in applied.values().iter().enumerate() {
            assert_eq!(*value, i as u64 + 1);
        }
        let one = LimitOverrides {
            fuel: Some(5),
            ..Default::default()
        };
        let l = one.apply(Limits::default());
        assert_eq!(l.fuel, 5);
        assert_eq!(l.timeout_ms, 10_000);
    }
}
