//! The config the tests serve: every example tool module, the hostile test
//! module under three sets of limits, a module that cannot load, and a
//! deactivated tool; and the calls to make, with the answers the command
//! line gives for them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost_testkit::guest;
use xtask::{Language, Repo, build_example};

/// The hostile test module under three sets of limits: `h` (small limits:
/// its tools fail fast), `t` (only a time limit of 300 ms: a spin ends on
/// it) and `s` (spins until cancelled).
pub const HOSTILE_MODULES: &str = r#"# Small limits: the hostile tools fail fast.
[[modules]]
name = "h"
path = "hostile.wasm"
limits = { memory_mib = 16, fuel = 50000000, max_output_bytes = 4096 }

# Only a time limit: a spin ends on it.
[[modules]]
name = "t"
path = "hostile.wasm"
limits = { fuel = 100000000000000, timeout_ms = 300 }

# Spins until cancelled.
[[modules]]
name = "s"
path = "hostile.wasm"
limits = { fuel = 100000000000000, timeout_ms = 120000 }
"#;

/// A folder with `toolhost.toml` and what it loads.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

/// The tools listed, in order: the config's module order, each module's
/// tools in its own order, `h_env` deactivated.
pub fn example_components() -> &'static [PathBuf] {
    static BUILT: OnceLock<Vec<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let repo = Repo::at(toolhost_testkit::workspace_root());
        [Language::Python, Language::JavaScript, Language::C]
            .into_iter()
            .map(|language| {
                build_example(&repo, language)
                    .unwrap_or_else(|e| panic!("building the {language} example failed: {e:#}"))
            })
            .collect()
    })
}

/// The `[[modules]]` entries of the bundled modules (`calc`, `text`,
/// `json`) and of the Python, JavaScript and C examples, in that order.
pub fn example_modules() -> String {
    let [stats, url, hash] = example_components() else {
        unreachable!("three examples")
    };
    let mut text = String::new();
    for bundled in ["calc", "text", "json"] {
        text.push_str(&format!("[[modules]]\nbundled = \"{bundled}\"\n\n"));
    }
    for path in [stats, url, hash] {
        text.push_str(&format!("[[modules]]\npath = \"{}\"\n\n", path.display()));
    }
    text
}

impl Fixture {
    /// The full config: examples, hostile modules, a broken one.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::copy(guest("guest-hostile"), dir.path().join("hostile.wasm")).expect("copy");
        std::fs::copy(guest("guest-plain"), dir.path().join("plain.wasm")).expect("copy");
        std::fs::write(dir.path().join("broken.wasm"), b"\0asm not really").expect("write");
        let fixture = Fixture { dir };
        fixture.write_config(&fixture.config(""));
        fixture
    }

    /// The config's path.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("toolhost.toml")
    }

    /// Writes `text` as the config.
    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_path(), text).expect("config written");
    }

    /// The config text, with `extra` appended.
    pub fn config(&self, extra: &str) -> String {
        format!(
            r#"[limits]
fuel = 2000000000
# Generous: the CPython component compiles slowly on a busy machine.
compile_timeout_ms = 600000

[controller]
rules = [{{ mode = "deactivate", pattern = "h_env" }}]

{examples}
{hostile}
# Written for no host in particular: each exported function is a tool.
[[modules]]
name = "plain"
path = "plain.wasm"
grants = {{ config = {{ region = "eu" }} }}

[[modules]]
name = "broken"
path = "broken.wasm"
{extra}"#,
            examples = example_modules(),
            hostile = HOSTILE_MODULES,
        )
    }

    /// `toolhost --config <this> ARGS...`
    pub fn toolhost(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .arg("--config")
            .arg(self.config_path())
            .current_dir(self.dir.path());
        command
    }

    /// The active tools, as `toolhost list --json` gives them.
    pub fn active_names(&self) -> Vec<String> {
        let out = self
            .toolhost()
            .args(["list", "--json"])
            .output()
            .expect("runs");
        let rows: Value = serde_json::from_slice(&out.stdout).expect("list --json");
        rows.as_array()
            .expect("array")
            .iter()
            .filter(|r| r["active"] == true)
            .map(|r| r["name"].as_str().expect("name").to_string())
            .collect()
    }

    /// What `toolhost call TOOL ARGS` prints for a success (without the
    /// newline).
    pub fn answer(&self, tool: &str, arguments: &Value) -> String {
        let out = self
            .toolhost()
            .args(["call", tool, &arguments.to_string()])
            .output()
            .expect("runs");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_eq!(out.status.code(), Some(0), "{tool}: {text}");
        text.strip_suffix('\n').unwrap_or(&text).to_string()
    }

    /// A call of every example tool, with the command line's answer and,
    /// for a tool that declares an `outputSchema`, the same answer as
    /// structured content (`null` for the others).
    pub fn example_calls(&self) -> Vec<Value> {
        let described = described_tools();
        example_arguments()
            .into_iter()
            .map(|(tool, arguments)| {
                let text = self.answer(tool, &arguments);
                let structured = match described.get(tool) {
                    Some(_) => serde_json::from_str(&text).expect("a JSON answer"),
                    None => Value::Null,
                };
                json!({"tool": tool, "arguments": arguments, "text": text, "structured": structured})
            })
            .collect()
    }
}

/// The tools whose `tool-info` declares a title, annotations and an
/// `outputSchema` (`text` does, through the Rust guest SDK), with what
/// `tools/list` must show of them.
pub fn described_tools() -> Value {
    let pure = json!({
        "readOnlyHint": true, "destructiveHint": false,
        "idempotentHint": true, "openWorldHint": false,
    });
    json!({
        "text_word_count": {
            "title": "Count words",
            "annotations": pure,
            "outputSchema": {"type": "object", "required": ["words", "lines", "characters", "bytes"]},
        },
        "text_replace": {
            "title": "Find and replace",
            "annotations": pure,
            "outputSchema": {"type": "object", "required": ["text", "replacements"]},
        },
        // A function of a component written for another host: its schemas
        // come from its WIT types, the record it returns is structured.
        "plain_compound": {
            "inputSchema": {"type": "object", "required": ["c"], "additionalProperties": false},
            "outputSchema": {
                "type": "object",
                "required": ["p", "sh", "col", "f", "v", "t", "bytes", "r", "nested"],
            },
        },
    })
}

/// A value of guest-plain's `compound` record, every kind of type in it.
pub fn plain_compound() -> Value {
    json!({
        "p": {"x": -1, "y": 2},
        "sh": {"name": "tri", "points": [{"x": 0, "y": 0}], "label": null},
        "col": "dark-blue",
        "f": ["read", "exec"],
        "v": {"tag": "many", "value": [{"tag": "flag", "value": true}, {"tag": "num", "value": 2.5}]},
        // Within 2^53: JavaScript clients read JSON numbers as doubles.
        "o": 4294967296u64,
        "oo": {"some": null},
        "t": [255, "two", false],
        "bytes": [0, 255],
        "r": {"tag": "err", "value": "bad"},
        "nested": [[{"name": "n", "points": [], "label": "L"}]],
    })
}

/// Arguments for every example tool.
fn example_arguments() -> Vec<(&'static str, Value)> {
    vec![
        ("calc_evaluate", json!({"expression": "2 * (3 + 4)"})),
        ("text_word_count", json!({"text": "one two  three"})),
        (
            "text_replace",
            json!({"text": "a-b-c", "pattern": "-", "replacement": "+"}),
        ),
        ("text_case", json!({"text": "hello world", "to": "title"})),
        (
            "json_query",
            json!({"document": "{\"a\": [1, 2, 3]}", "path": "$.a[1]"}),
        ),
        (
            "json_format",
            json!({"document": "{ \"a\" : 1 }", "mode": "minify"}),
        ),
        ("stats_mean", json!({"numbers": [1, 2, 3, 4]})),
        ("stats_median", json!({"numbers": [3, 1, 2]})),
        ("stats_stdev", json!({"numbers": [2, 4, 4, 4, 5, 5, 7, 9]})),
        (
            "stats_percentiles",
            json!({"numbers": [1, 2, 3, 4, 5], "percents": [50, 90]}),
        ),
        ("stats_summary", json!({"numbers": [1, 2, 3]})),
        (
            "url_parse",
            json!({"url": "https://example.com:8080/a/b?x=1#f"}),
        ),
        (
            "url_resolve",
            json!({"base": "https://example.com/a/b", "reference": "../c"}),
        ),
        (
            "url_set_params",
            json!({"url": "https://example.com/?a=1", "params": {"b": "2", "a": null}}),
        ),
        ("url_encode", json!({"text": "a b&c"})),
        ("url_decode", json!({"text": "a%20b%26c"})),
        ("hash_crc32", json!({"text": "hello"})),
        ("hash_fnv1a", json!({"text": "hello", "bits": 32})),
        ("hash_sha256", json!({"text": "hello"})),
        ("plain_compound", json!({"c": plain_compound()})),
        ("plain_text_reverse", json!({"s": "abc"})),
        ("plain_config-get", json!({"key": "region"})),
        ("plain_nothing", json!({})),
    ]
}

/// Each kind of failure, with what its `Error: ...` text says.
pub fn error_calls() -> Vec<Value> {
    vec![
        json!({"tool": "nope", "arguments": {}, "error": "unknown tool 'nope'"}),
        json!({"tool": "h_env", "arguments": {}, "error": "tool 'h_env' is deactivated"}),
        json!({"tool": "h_add", "arguments": {"a": "x"}, "error": "h_add"}),
        json!({"tool": "h_fail", "arguments": {"text": "it went wrong"}, "error": "it went wrong"}),
        json!({"tool": "h_trap", "arguments": {}, "error": "trapped"}),
        json!({"tool": "h_spin", "arguments": {}, "error": "ran out of fuel"}),
        json!({"tool": "t_spin", "arguments": {}, "error": "time limit"}),
        json!({"tool": "h_membomb", "arguments": {}, "error": "exceeded its memory limit of 16 MiB"}),
        json!({"tool": "h_big_output", "arguments": {"bytes": 100000}, "error": "4096"}),
        json!({"tool": "plain_echo", "arguments": {"text": 1},
               "error": "field 'text': expected a string, got integer 1"}),
        json!({"tool": "plain_fallible", "arguments": {"ok": false, "text": "typed no"},
               "error": "tool 'plain_fallible' failed: typed no"}),
    ]
}

/// 50 calls, each with its own answer.
pub fn concurrent_calls() -> Vec<Value> {
    (0..50)
        .map(|i| {
            json!({
                "tool": "h_add",
                "arguments": {"a": i, "b": 1000},
                "text": (i + 1000).to_string(),
            })
        })
        .collect()
}

/// The JSON plan file for a client, written into `dir`.
pub fn write_plan(dir: &Path, name: &str, plan: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(plan).expect("json")).expect("plan written");
    path
}
