//! [`Limits`]: what one call of a tool may use.

use serde::{Deserialize, Serialize};

/// The resources one call (and the `tool-info` read at load) may use.
///
/// | limit | default |
/// |---|---|
/// | `fuel` | 1,000,000,000 units (roughly that many wasm instructions) |
/// | `timeout_ms` | 10,000 ms of wall-clock time |
/// | `memory_mib` | 64 MiB of linear memory in all |
/// | `max_output_bytes` | 1 MiB for the result (and the error text) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Fuel units per call; running out is an error.
    pub fuel: u64,
    /// Wall-clock time per call, in milliseconds.
    pub timeout_ms: u64,
    /// Linear memory per call, in MiB.
    pub memory_mib: u64,
    /// The largest result (or error text) a call may return, in bytes.
    pub max_output_bytes: u64,
}

/// The most of any limit that is accepted: larger values are config errors.
const MAX_FUEL: u64 = 1 << 50;
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;
const MAX_MEMORY_MIB: u64 = 4096;
const MAX_OUTPUT_BYTES: u64 = 1 << 30;

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 1_000_000_000,
            timeout_ms: 10_000,
            memory_mib: 64,
            max_output_bytes: 1024 * 1024,
        }
    }
}

impl Limits {
    /// Checks every limit is positive and within reason; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        check("fuel", self.fuel, MAX_FUEL)?;
        check("timeout_ms", self.timeout_ms, MAX_TIMEOUT_MS)?;
        check("memory_mib", self.memory_mib, MAX_MEMORY_MIB)?;
        check("max_output_bytes", self.max_output_bytes, MAX_OUTPUT_BYTES)
    }

    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }

    /// The output limit in bytes.
    pub fn output_bytes(&self) -> usize {
        usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX)
    }
}

fn check(key: &str, value: u64, max: u64) -> Result<(), String> {
    if value == 0 {
        return Err(format!("`{key}` must be greater than 0"));
    }
    if value > max {
        return Err(format!(
            "`{key}` = {value} is too large; the most accepted is {max}"
        ));
    }
    Ok(())
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
    /// Overrides [`Limits::max_output_bytes`].
    pub max_output_bytes: Option<u64>,
}

impl LimitOverrides {
    /// `base` with these overrides applied.
    pub fn apply(&self, base: Limits) -> Limits {
        Limits {
            fuel: self.fuel.unwrap_or(base.fuel),
            timeout_ms: self.timeout_ms.unwrap_or(base.timeout_ms),
            memory_mib: self.memory_mib.unwrap_or(base.memory_mib),
            max_output_bytes: self.max_output_bytes.unwrap_or(base.max_output_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_zero_is_not() {
        assert!(Limits::default().validate().is_ok());
        let zero = Limits {
            fuel: 0,
            ..Limits::default()
        };
        assert_eq!(
            zero.validate().unwrap_err(),
            "`fuel` must be greater than 0"
        );
        let huge = Limits {
            memory_mib: 1 << 40,
            ..Limits::default()
        };
        assert!(huge.validate().unwrap_err().contains("too large"));
    }

    #[test]
    fn overrides_replace_only_what_is_set() {
        let o = LimitOverrides {
            fuel: Some(5),
            ..Default::default()
        };
        let l = o.apply(Limits::default());
        assert_eq!(l.fuel, 5);
        assert_eq!(l.timeout_ms, 10_000);
    }
}
