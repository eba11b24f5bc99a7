//! [`Limits`]: what one call of a tool, and the loading of its module, may use.
//!
//! Every limit is written once, in the table at the end of this file; the
//! struct, its defaults, [`Limits::SPECS`], the per-module
//! [`LimitOverrides`], parsing, validation, display and the keys the error
//! texts name ([`key`]) all come from it.

use serde::{Deserialize, Serialize};

/// Whether a limit bounds each call, the loading of a module, or a whole
/// batch of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Checked on every call.
    Call,
    /// Checked once, when the module is loaded.
    Load,
    /// Bounds a whole batch (`call_many`, an assistant message); set in
    /// `[limits]` only, not per module.
    Batch,
}

impl Applies {
    /// `call`, `load` or `batch`, as the README's limits table writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Applies::Call => "call",
            Applies::Load => "load",
            Applies::Batch => "batch",
        }
    }
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
    /// Whether it applies to each call or to loading.
    pub applies: Applies,
    /// What the limit bounds, in a few words.
    pub bounds: &'static str,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// Declares every limit once: each line gives the key (also the field of
/// [`Limits`] and [`LimitOverrides`]), its default, the most accepted,
/// whether it applies per call or at load, and what it bounds.
macro_rules! limits {
    ($($(#[doc = $doc:literal])* $key:ident = $default:expr, max $max:expr, $applies:ident, $bounds:literal;)*) => {
        /// The resources a module may use: per call, and once at load.
        ///
        /// Every limit is a config key of the same name (in `[limits]` for
        /// all modules, or a module's `limits = { ... }`). [`Limits::SPECS`]
        /// lists each one with its default, the most accepted and what it
        /// bounds; the README's limits table is checked against it by a test.
        ///
        /// ```
        /// use toolhost::Limits;
        ///
        /// let limits = Limits { timeout_ms: 500, ..Limits::default() };
        /// assert!(limits.validate().is_ok());
        /// assert_eq!(limits.get("timeout_ms"), Some(500));
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct Limits {
            $($(#[doc = $doc])* pub $key: u64,)*
        }

        /// Per-module overrides of [`Limits`]: each key that is set replaces the default.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct LimitOverrides {
            $(
                #[doc = concat!("Overrides [`Limits::", stringify!($key), "`].")]
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $key: Option<u64>,
            )*
        }

        /// Each limit's config key, for the texts that name it (so that a
        /// renamed key leaves no text behind).
        /// Not every limit is named in a text.
        #[allow(non_upper_case_globals, dead_code)]
        pub(crate) mod key {
            $(
                #[doc = concat!("`", stringify!($key), "`.")]
                pub(crate) const $key: &str = stringify!($key);
            )*
        }

        /// How many limits there are.
        const COUNT: usize = [$(stringify!($key)),*].len();

        impl Limits {
            /// Every limit, in the order of the README's table.
            pub const SPECS: [LimitSpec; COUNT] = [$(LimitSpec {
                key: stringify!($key),
                default: $default,
                max: $max,
                applies: Applies::$applies,
                bounds: $bounds,
            },)*];

            /// Each limit's key and value, in the order of [`Limits::SPECS`].
            pub fn values(&self) -> [(&'static str, u64); COUNT] {
                [$((stringify!($key), self.$key),)*]
            }
        }

        impl Default for Limits {
            fn default() -> Self {
                Self { $($key: $default,)* }
            }
        }

        impl Limits {
            /// Every limit at the most it accepts.
            pub(crate) fn largest() -> Self {
                Self { $($key: $max,)* }
            }
        }

        impl LimitOverrides {
            /// `base` with these overrides applied.
            pub fn apply(&self, base: Limits) -> Limits {
                Limits { $($key: self.$key.unwrap_or(base.$key),)* }
            }

            /// Each key and whether it is set, in the order of [`Limits::SPECS`].
            pub fn values(&self) -> [(&'static str, Option<u64>); COUNT] {
                [$((stringify!($key), self.$key),)*]
            }
        }
    };
}

impl LimitOverrides {
    /// Refuses a limit that bounds a whole batch of calls (such as
    /// `batch_timeout_ms`), which a module's own limits cannot set.
    pub fn check_module_level(&self) -> Result<(), String> {
        for (spec, (key, value)) in Limits::SPECS.iter().zip(self.values()) {
            if spec.applies == Applies::Batch && value.is_some() {
                return Err(format!(
                    "`{key}` bounds a whole batch of calls, not one module's; set it in [limits]"
                ));
            }
        }
        Ok(())
    }
}

limits! {
    /// Fuel units per call (roughly wasm instructions); running out is an error.
    fuel = 1_000_000_000, max 1 << 50, Call, "wasm instructions (fuel units)";
    /// Wall-clock time per call, in milliseconds.
    timeout_ms = 10_000, max 86_400_000, Call, "wall-clock time, ms";
    /// Linear memory per call, in MiB, summed over all memories.
    memory_mib = 64, max 4096, Call, "linear memory in all, MiB";
    /// Elements of any one table.
    max_table_elements = 100_000, max 10_000_000, Call, "elements of one table";
    /// Core instances a call may create (a component is several).
    max_instances = 100, max 10_000, Call, "core instances created";
    /// Tables a call may create.
    max_tables = 100, max 10_000, Call, "tables created";
    /// Linear memories a call may create.
    max_memories = 20, max 1_000, Call, "linear memories created";
    /// The wasm stack, in KiB; deeper recursion traps as `call stack exhausted`.
    max_stack_kib = 512, max 64 * KIB, Call, "wasm stack, KiB";
    /// The largest arguments (as JSON text) a call accepts, in bytes.
    max_args_bytes = MIB, max GIB, Call, "arguments (JSON text), bytes";
    /// The largest result (or error text) a call may return, in bytes.
    max_output_bytes = MIB, max GIB, Call, "result or error text, bytes";
    /// Bytes kept of each of stdout and stderr per call; the rest is dropped and counted.
    max_captured_bytes = 64 * KIB, max 64 * MIB, Call, "stdout and stderr kept, bytes each";
    /// Files, directory listings and sockets a call may hold open at once.
    max_open_files = 256, max 100_000, Call, "files and sockets open at once";
    /// Bytes a call may write into its granted directories.
    max_write_bytes = 64 * MIB, max 1 << 40, Call, "bytes written to granted directories";
    /// Files, directories and links a call may create in its granted
    /// directories; a session's scratch directory counts what it already
    /// holds. Each entry costs the host at most about 4 KiB beyond the
    /// bytes written (an inode, a directory's block, its name).
    max_created_entries = 10_000, max 10_000_000, Call, "files, directories and links created";
    /// HTTP requests (`wasi:http`) a call may make.
    max_http_requests = 64, max 100_000, Call, "HTTP requests per call";
    /// HTTP requests a call may have in flight at once.
    max_http_concurrent = 8, max 1_000, Call, "HTTP requests in flight at once";
    /// Bytes of one HTTP request's body.
    max_http_request_body_bytes = 4 * MIB, max GIB, Call, "HTTP request body, bytes";
    /// Bytes of one HTTP response's body.
    max_http_response_body_bytes = 16 * MIB, max 4 * GIB, Call, "HTTP response body, bytes";
    /// Header fields of one HTTP request or response.
    max_http_fields = 100, max 10_000, Call, "HTTP header fields of a request or response";
    /// Bytes of the header fields of one HTTP request or response (names and
    /// values; wasmtime's `max-http-fields-size`).
    max_http_fields_size = 64 * KIB, max 16 * MIB, Call, "HTTP header bytes of a request or response";
    /// Time to connect (TCP and TLS) for one HTTP request, in milliseconds.
    http_connect_timeout_ms = 10_000, max 86_400_000, Call, "HTTP connect time, ms";
    /// Time from sending an HTTP request to its response's head, in milliseconds.
    http_first_byte_timeout_ms = 30_000, max 86_400_000, Call, "HTTP time to the response, ms";
    /// The largest component accepted at load, in bytes.
    max_component_bytes = 256 * MIB, max 4 * GIB, Load, "component size, bytes";
    /// Wall-clock time for compiling the component, in milliseconds (enforced
    /// when compiling runs in a worker process, as the command does).
    compile_timeout_ms = 60_000, max 86_400_000, Load, "wall-clock time of compiling, ms";
    /// Memory (address space) for compiling the component, in MiB (enforced
    /// when compiling runs in a worker process, as the command does).
    compile_memory_mib = 2048, max 65_536, Load, "memory of compiling, MiB";
    /// Fuel for the one `tool-info` call at load.
    tool_info_fuel = 1_000_000_000, max 1 << 50, Load, "fuel of `tool-info`";
    /// Wall-clock time for the one `tool-info` call at load, in milliseconds.
    tool_info_timeout_ms = 10_000, max 86_400_000, Load, "wall-clock time of `tool-info`, ms";
    /// The largest `tool-info` answer accepted, in bytes; for a component
    /// written for another host, the most its tools' schemas may take.
    max_tool_info_bytes = MIB, max GIB, Load, "`tool-info` answer (or a typed component's schemas), bytes";
    /// The most tools one module may declare.
    max_tools = 1024, max 100_000, Load, "tools one module declares";
    /// Wall-clock time for a whole batch of calls, in milliseconds; calls not
    /// started by then are answered with an error naming this limit.
    batch_timeout_ms = 300_000, max 86_400_000, Batch, "wall-clock time of a batch, ms";
}

impl Limits {
    /// The value of the limit with config key `key`, if there is one.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, value)| value)
    }

    /// Checks every limit is positive and within reason; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (spec, (key, value)) in Self::SPECS.iter().zip(self.values()) {
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

    /// The compile time limit as a duration.
    pub fn compile_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.compile_timeout_ms)
    }

    /// The compile memory limit in bytes.
    pub fn compile_memory_bytes(&self) -> u64 {
        self.compile_memory_mib.saturating_mul(MIB)
    }

    /// The batch limit as a duration.
    pub fn batch_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.batch_timeout_ms)
    }

    /// The HTTP connect limit as a duration.
    pub fn http_connect_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.http_connect_timeout_ms)
    }

    /// The HTTP first-byte limit as a duration.
    pub fn http_first_byte_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.http_first_byte_timeout_ms)
    }

    /// The wasm stack limit in bytes.
    pub fn stack_bytes(&self) -> usize {
        to_usize(self.max_stack_kib.saturating_mul(KIB))
    }
}

/// A limit as a `usize` (limits are validated far below `usize::MAX` on 64-bit hosts).
pub(crate) fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
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
            assert_eq!(defaults.get(key), Some(value));
        }
        assert_eq!(defaults.get("nope"), None);
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
